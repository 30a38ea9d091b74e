// Pre-tokenizer scanners: hand-written equivalents of the gpt2 / cl100k_base / o200k_base
// split patterns and of \w+|[^\w\s]+ and \S+ (see pretokenize.h for the patterns).
//
// Each scanner decides, at a position, which alternative of the pattern the `regex` module
// would take there and where that match ends, reasoning about the backtracking once instead
// of performing it. Every decision needs at most one forward pass over a run of one class
// (letters, digits, other, whitespace) from the position, and that run is consumed or rescanned
// at most once more, so the cost is linear in the text. ASCII goes through a 128-entry table
// (runs of one class are skipped 16 bytes at a time with SSE2 where available); other code
// points through the two-stage tables of unicode_tables.cc.
//
// Semantics worth knowing (all verified against `regex` and tiktoken by the tests):
// * `\s+(?!\S)` before a non-space keeps all but the last whitespace character, which can then
//   prefix the next word (" ?\p{L}+" etc.); `\s++$` / `\s+(?!\S)` at the end take everything.
// * `\s*[\r\n]` (cl100k) and `\s*[\r\n]+` (o200k) end at the last \r or \n of the run.
// * o200k's first alternative backtracks: [Up]*[Lo]+ where Lm, Lo and marks are in both
//   classes. [Up]* takes the maximal run; if the character after it is not in [Lo], the match
//   ends just after the last character of the run that is in both classes (e.g. "中A" -> "中",
//   "A"). A mark cannot start a letter run but is both in the prefix class and in [Lo].
// * (?i) contractions use simple case folding: 'S, 'ſ (U+017F) count as 's.
#include "ciyuan/pretokenize.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "simd_config.h"
#if CIYUAN_X86_SIMD
#include <immintrin.h>
#endif

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif
#define CIYUAN_SSE2 1
#else
#define CIYUAN_SSE2 0
#endif

#include "ciyuan/bits.h"
#include "ciyuan/cpu_features.h"
#include "ciyuan/errors.h"
#include "ciyuan/unicode_tables.h"
#include "ciyuan/utf8.h"

namespace ciyuan {
namespace {

using u8 = unsigned char;
using unicode::kAsciiFlags;

constexpr uint8_t kL = unicode::kLetter;
constexpr uint8_t kN = unicode::kNumber;
constexpr uint8_t kS = unicode::kSpace;
constexpr uint8_t kW = unicode::kWord;
constexpr uint8_t kUp = unicode::kO200kUpper;
constexpr uint8_t kLo = unicode::kO200kLower;
constexpr uint8_t kSLN = kS | kL | kN;

// Three-byte characters (U+0800-U+FFFF: CJK, kana, Hangul, ...) by the 64 code points that share
// their first two bytes: the flags every one of them has (all) and any of them has (any). A class
// test that holds for both holds for each character of the block - a test is either "has one of
// these flags" (then `all` decides) or "has none of them" (then `any` does) - so a run of such
// characters is skipped without decoding them. Overlong forms and surrogates never pass.
struct Block3Flags {
    uint8_t all[1024];
    uint8_t any[1024];
};

template <bool TK>
Block3Flags make_block3_flags() {
    Block3Flags t;
    for (uint32_t block = 0; block < 1024; ++block) {
        const uint32_t first = block << 6;
        uint8_t all = 0xFF, any = 0;
        if (first < 0x800 || (first >= 0xD800 && first < 0xE000)) {
            all = 0;  // not a valid three-byte character: no test passes both
            any = 0xFF;
        } else {
            for (uint32_t cp = first; cp < first + 64; ++cp) {
                const uint8_t f = TK ? unicode::tiktoken_flags(cp) : unicode::flags(cp);
                all &= f;
                any |= f;
            }
        }
        t.all[block] = all;
        t.any[block] = any;
    }
    return t;
}

// Made when the module loads (2 x 63,488 lookups): a global, not a function's static, so that
// reading it costs no initialization check in the scanning loops.
const Block3Flags kBlock3Tiktoken = make_block3_flags<true>();
const Block3Flags kBlock3Unicode = make_block3_flags<false>();

template <bool TK>
inline const Block3Flags& block3_flags() {
    return TK ? kBlock3Tiktoken : kBlock3Unicode;
}

// The block of the three-byte character at p, or -1 when p (p < e) does not start one. With 4
// bytes to read, the three bytes' forms are checked in one masked compare (the byte by byte
// checks were 38 instructions a CJK character, a tenth of o200k_base's encoding of Chinese).
inline int block3(const u8* p, const u8* e) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (e - p >= 4) {
        uint32_t w;
        std::memcpy(&w, p, 4);
        if ((w & 0xC0C0F0u) != 0x8080E0u) return -1;  // 1110xxxx 10xxxxxx 10xxxxxx
        return static_cast<int>(((w & 0x0Fu) << 6) | ((w >> 8) & 0x3Fu));
    }
#endif
    if (e - p < 3 || (p[0] & 0xF0) != 0xE0 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return -1;
    return ((p[0] & 0x0F) << 6) | (p[1] & 0x3F);
}

// Flags of the character at p (p < e) and its length. TK selects tiktoken's view of Unicode. A
// three-byte character of a block whose 64 characters share their flags (CJK ideographs, kana,
// Hangul) is not decoded.
template <bool TK>
inline uint8_t cls(const u8* p, const u8* e, size_t* len) {
    const u8 b = *p;
    if (b < 0x80) {
        *len = 1;
        return kAsciiFlags[b];
    }
    const int block = block3(p, e);
    if (block >= 0) {
        const Block3Flags& blocks = block3_flags<TK>();
        if (blocks.all[block] == blocks.any[block]) {
            *len = 3;
            return blocks.all[block];
        }
    }
    uint32_t cp;
    *len = utf8::decode(p, e, &cp);
    return TK ? unicode::tiktoken_flags(cp) : unicode::flags(cp);
}

// ASCII fast path: a character class is a flags predicate plus, with SSE2, the 16-byte mask of
// the ASCII bytes in the class (bytes >= 0x80 are never set: the slow path decodes them). Runs
// then end at a count-trailing-zeros instead of a hard-to-predict per-byte branch.
#if CIYUAN_SSE2
using V = __m128i;
inline V vload(const u8* p) { return _mm_loadu_si128(reinterpret_cast<const V*>(p)); }
inline V vset(char c) { return _mm_set1_epi8(c); }
inline V vrange(V v, char lo, char hi) {  // lo <= v <= hi (signed: bytes >= 0x80 are below)
    return _mm_and_si128(_mm_cmpgt_epi8(v, vset(static_cast<char>(lo - 1))),
                         _mm_cmplt_epi8(v, vset(static_cast<char>(hi + 1))));
}
inline V vletter(V v) { return vrange(_mm_or_si128(v, vset(0x20)), 'a', 'z'); }
inline V vdigit(V v) { return vrange(v, '0', '9'); }
inline V vspace(V v) { return _mm_or_si128(_mm_cmpeq_epi8(v, vset(' ')), vrange(v, '\t', '\r')); }
inline V vascii(V v) { return _mm_cmpgt_epi8(v, vset(-1)); }
inline uint32_t vmask(V v) { return static_cast<uint32_t>(_mm_movemask_epi8(v)); }
#define CIYUAN_MASK(expr) \
    static uint32_t mask(V v) { return vmask(expr); }
#else
#define CIYUAN_MASK(expr)
#endif

struct IsL {  // \p{L}
    static bool test(uint8_t f) { return f & kL; }
    CIYUAN_MASK(vletter(v))
};
struct IsN {  // \p{N}
    static bool test(uint8_t f) { return f & kN; }
    CIYUAN_MASK(vdigit(v))
};
struct IsLo {  // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
    static bool test(uint8_t f) { return f & kLo; }
    CIYUAN_MASK(vrange(v, 'a', 'z'))
};
struct IsOther {  // [^\s\p{L}\p{N}]
    static bool test(uint8_t f) { return !(f & kSLN); }
    CIYUAN_MASK(_mm_andnot_si128(_mm_or_si128(_mm_or_si128(vletter(v), vdigit(v)), vspace(v)), vascii(v)))
};
struct IsWord {  // \w
    static bool test(uint8_t f) { return f & kW; }
    CIYUAN_MASK(_mm_or_si128(_mm_or_si128(vletter(v), vdigit(v)), _mm_cmpeq_epi8(v, vset('_'))))
};
struct IsWordPunct {  // [^\w\s]
    static bool test(uint8_t f) { return !(f & (kW | kS)); }
    CIYUAN_MASK(_mm_andnot_si128(
        _mm_or_si128(_mm_or_si128(_mm_or_si128(vletter(v), vdigit(v)), _mm_cmpeq_epi8(v, vset('_'))), vspace(v)),
        vascii(v)))
};
struct IsSpace {  // \s
    static bool test(uint8_t f) { return f & kS; }
    CIYUAN_MASK(vspace(v))
};
struct IsNonSpace {  // \S
    static bool test(uint8_t f) { return !(f & kS); }
    CIYUAN_MASK(_mm_andnot_si128(vspace(v), vascii(v)))
};

// Skips the characters of class C; returns the first position that is not in it.
template <bool V, bool TK, class C>
inline const u8* run(const u8* p, const u8* e) {
    for (;;) {
#if CIYUAN_SSE2
        if (!V) {
            while (p < e && *p < 0x80 && C::test(kAsciiFlags[*p])) ++p;
        } else for (;;) {
            if (e - p < 16) {
                while (p < e && *p < 0x80 && C::test(kAsciiFlags[*p])) ++p;
                break;
            }
            const uint32_t m = C::mask(vload(p));
            if (m != 0xFFFF) {
                p += lowest_bit(~m);
                break;
            }
            p += 16;
        }
#else
        while (p < e && *p < 0x80 && C::test(kAsciiFlags[*p])) ++p;
#endif
        if (p >= e || *p < 0x80) return p;
        const Block3Flags& blocks = block3_flags<TK>();
        do {  // stay on the slow path while the text stays non-ASCII
            const int b = block3(p, e);
            if (b >= 0 && C::test(blocks.all[b]) && C::test(blocks.any[b])) {
                p += 3;
                continue;
            }
            size_t l;
            if (!C::test(cls<TK>(p, e, &l))) return p;
            p += l;
        } while (p < e && *p >= 0x80);
    }
}

// The contraction letter the character at p stands for (lowercase ASCII), or 0. Without CI
// only the character itself; with CI, its simple case folding (ASCII case, U+017F -> 's').
template <bool CI>
inline char contraction_letter(const u8* p, const u8* e, size_t* len) {
    u8 b = *p;
    if (b < 0x80) {
        *len = 1;
        if (CI && b >= 'A' && b <= 'Z') b |= 0x20;
        return static_cast<char>(b);
    }
    *len = 1;
    if (!CI) return 0;
    uint32_t cp;
    *len = utf8::decode(p, e, &cp);
    for (size_t i = 0; i < unicode::kContractionFoldCount; ++i)
        if (unicode::kContractionFolds[i].cp == cp) return unicode::kContractionFolds[i].letter;
    return 0;
}

// Byte length of 's 't 're 've 'm 'll 'd at p, or 0.
template <bool CI>
inline size_t contraction(const u8* p, const u8* e) {
    if (p >= e || *p != '\'' || p + 1 >= e) return 0;
    size_t l1;
    const char c1 = contraction_letter<CI>(p + 1, e, &l1);
    switch (c1) {
        case 's':
        case 't':
        case 'm':
        case 'd':
            return 1 + l1;
        case 'r':
        case 'v':
        case 'l': {
            const u8* q = p + 1 + l1;
            if (q >= e) return 0;
            size_t l2;
            const char c2 = contraction_letter<CI>(q, e, &l2);
            return c2 == (c1 == 'l' ? 'l' : 'e') ? 1 + l1 + l2 : 0;
        }
        default:
            return 0;
    }
}

// Up to three \p{N} characters (p is at one).
inline const u8* digits3(const u8* p, size_t l0, const u8* e) {
    p += l0;
    for (int i = 1; i < 3 && p < e; ++i) {
        size_t l;
        if (!(cls<true>(p, e, &l) & kN)) break;
        p += l;
    }
    return p;
}

// A whitespace run starting at p.
struct WsRun {
    const u8* end;      // first non-space position (or e)
    const u8* last;     // start of the run's last character
    const u8* nl_end;   // just after the run's last \r or \n; nullptr if none
    bool single;        // the run is one character
};

inline WsRun ws_run(const u8* p, const u8* e) {
    WsRun w{p, p, nullptr, true};
    const u8* r = p;
    size_t k = 0;
    while (r < e) {
        const u8 b = *r;
        size_t l;
        if (b < 0x80) {
            if (!(kAsciiFlags[b] & kS)) break;
            if (b == '\n' || b == '\r') w.nl_end = r + 1;
            l = 1;
        } else if (!(cls<true>(r, e, &l) & kS)) {
            break;
        }
        w.last = r;
        r += l;
        ++k;
    }
    w.end = r;
    w.single = k <= 1;
    return w;
}

// ---- gpt2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ ------------
template <bool V>
inline const u8* gpt2_end(const u8* p, const u8* e) {
    const u8 b = *p;
    if (b == '\'') {
        if (size_t c = contraction<false>(p, e)) return p + c;
    }
    size_t l;
    uint8_t f = cls<true>(p, e, &l);
    const u8* q = p + l;
    if (b == ' ' && q < e) {  // " ?X": the space joins a following non-space
        size_t l1;
        const uint8_t f1 = cls<true>(q, e, &l1);
        if (!(f1 & kS)) {
            f = f1;
            q += l1;
        }
    }
    if (f & kL) return run<V, true, IsL>(q, e);
    if (f & kN) return run<V, true, IsN>(q, e);
    if (!(f & kS)) return run<V, true, IsOther>(q, e);
    const WsRun w = ws_run(p, e);
    if (w.end == e) return e;         // \s+(?!\S) to the end
    if (!w.single) return w.last;     // \s+(?!\S) gives back the last one
    return w.end;                     // \s+ (one character)
}

// ---- cl100k_base (and its Llama 3 / Qwen2 spellings) --------------------------------------------
// kEndRun: CL100K's `\s++$` (a whitespace run that ends the text is one piece); without it
// (LLAMA3, QWEN2) `\s*[\r\n]+` ends such a run at its last newline first. The other
// differences of spelling (possessive or not) match the same. kDigits: 3, or 1 for QWEN2.
template <bool V, bool kEndRun, int kDigits>
inline const u8* cl100k_end(const u8* p, const u8* e) {
    const u8 b = *p;
    if (b == '\'') {
        if (size_t c = contraction<true>(p, e)) return p + c;
    }
    size_t l0;
    const uint8_t f0 = cls<true>(p, e, &l0);
    const u8* p1 = p + l0;
    if (f0 & kL) return run<V, true, IsL>(p1, e);  // \p{L}++
    size_t l1 = 0;
    uint8_t f1 = 0;
    if (p1 < e) f1 = cls<true>(p1, e, &l1);
    // [^\r\n\p{L}\p{N}]?+\p{L}++
    if (p1 < e && (f1 & kL) && !(f0 & kN) && b != '\r' && b != '\n') return run<V, true, IsL>(p1 + l1, e);
    if (f0 & kN) return kDigits == 1 ? p1 : digits3(p, l0, e);  // \p{N}{1,3}+ (or \p{N})
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    const u8* q = nullptr;
    if (b == ' ' && p1 < e && !(f1 & kSLN)) q = p1 + l1;
    else if (!(f0 & kSLN)) q = p1;
    if (q) {
        q = run<V, true, IsOther>(q, e);
        while (q < e && (*q == '\r' || *q == '\n')) ++q;
        return q;
    }
    const WsRun w = ws_run(p, e);
    if (kEndRun && w.end == e) return e;  // \s++$
    if (w.nl_end) return w.nl_end;    // \s*[\r\n]
    if (w.end == e) return e;         // \s+(?!\S) to the end
    if (!w.single) return w.last;     // \s+(?!\S)
    return w.end;                     // \s
}

// ---- o200k_base -------------------------------------------------------------------------------
// [Up]*[Lo]+ at q (no prefix). On success *match_end is where [Lo]+ stops; *up_end is always the
// end of the maximal [Up] run at q (what [Up]+ of the second alternative takes).
template <bool V>
inline bool o200k_core(const u8* q, const u8* e, const u8** match_end, const u8** up_end) {
    const u8* r = q;
    const u8* last_both = nullptr;  // just after the last char of the run that is also in [Lo]
    uint8_t f = 0;
    size_t l = 0;
    const Block3Flags& blocks = block3_flags<true>();
    while (r < e) {
        const int b = block3(r, e);
        if (b >= 0 && (blocks.all[b] & (kUp | kLo)) == (kUp | kLo)) {  // a CJK run: in both classes
            r += 3;
            last_both = r;
            continue;
        }
        f = cls<true>(r, e, &l);
        if (!(f & kUp)) break;
        r += l;
        if (f & kLo) last_both = r;
    }
    *up_end = r;
    if (r < e && (f & kLo)) {
        *match_end = run<V, true, IsLo>(r + l, e);
        return true;
    }
    if (last_both) {  // backtrack [Up]* to before that char; [Lo]+ takes it alone
        *match_end = last_both;
        return true;
    }
    return false;
}

// The usual English word, decided from its ASCII bytes alone: an optional prefix (ASCII, not a
// letter, digit, \r or \n), [A-Z]*, then [a-z]+ (which may go on into non-ASCII [Lo]) or
// nothing more, then a contraction. ASCII has no character in both [Up] and [Lo], so nothing
// backtracks. Returns nullptr where the general path must decide (a non-ASCII character
// right after the capitals may belong to either class).
template <bool V>
inline const u8* o200k_ascii_word(const u8* p, const u8* e) {
    const u8* q = p;
    if (static_cast<unsigned>((*p | 0x20) - 'a') >= 26u) {
        if (*p >= 0x80 || (kAsciiFlags[*p] & (kL | kN)) || *p == '\r' || *p == '\n') return nullptr;
        q = p + 1;
        if (q >= e || static_cast<unsigned>((*q | 0x20) - 'a') >= 26u) return nullptr;
    }
    const u8* r = q;
    while (r < e && static_cast<unsigned>(*r - 'A') < 26u) ++r;
    if (r < e && static_cast<unsigned>(*r - 'a') < 26u) r = run<V, true, IsLo>(r + 1, e);
    else if (r < e && *r >= 0x80) return nullptr;
    return r < e && *r == '\'' ? r + contraction<true>(r, e) : r;
}

// The general case; kept out of line so that the scanning loop, with o200k_ascii_word inlined
// into it, stays small.
template <bool V>
#if defined(__GNUC__)
__attribute__((noinline))
#endif
const u8* o200k_end_general(const u8* p, const u8* e) {
    const u8 b = *p;
    size_t l0;
    const uint8_t f0 = cls<true>(p, e, &l0);
    const u8* p1 = p + l0;
    const u8* me;
    const u8* ue;
    if (f0 & kL) {
        if (o200k_core<V>(p, e, &me, &ue)) return me + contraction<true>(me, e);
        return ue + contraction<true>(ue, e);  // [Up]+ (p is Lu/Lt)
    }
    if (!(f0 & kN) && b != '\r' && b != '\n') {  // [^\r\n\p{L}\p{N}]? can take p
        if (o200k_core<V>(p1, e, &me, &ue)) return me + contraction<true>(me, e);
        if (f0 & kLo) return p1 + contraction<true>(p1, e);  // a mark: no prefix, [Lo]+ is it
        if (ue > p1) return ue + contraction<true>(ue, e);   // prefix + [Up]+
    }
    if (f0 & kN) return digits3(p, l0, e);  // \p{N}{1,3}
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    const u8* q = nullptr;
    if (b == ' ') {
        size_t l1;
        if (p1 < e && !(cls<true>(p1, e, &l1) & kSLN)) q = p1 + l1;
    } else if (!(f0 & kSLN)) {
        q = p1;
    }
    if (q) {
        q = run<V, true, IsOther>(q, e);
        while (q < e && (*q == '\r' || *q == '\n' || *q == '/')) ++q;
        return q;
    }
    const WsRun w = ws_run(p, e);
    if (w.nl_end) return w.nl_end;    // \s*[\r\n]+
    if (w.end == e) return e;         // \s+(?!\S) at the end
    if (!w.single) return w.last;     // \s+(?!\S)
    return w.end;                     // \s+ (one character)
}

template <bool V>
inline const u8* o200k_end(const u8* p, const u8* e) {
    const u8* word = o200k_ascii_word<V>(p, e);
    return word ? word : o200k_end_general<V>(p, e);
}

// ---- \w+|[^\w\s]+ and \S+ -------------------------------------------------------------------------
template <bool V>
inline bool wordpunct_next(const u8* p, const u8* e, const u8** start, const u8** end) {
    while (p < e) {
        size_t l;
        const uint8_t f = cls<false>(p, e, &l);
        if (f & kW) {
            *start = p;
            *end = run<V, false, IsWord>(p + l, e);
            return true;
        }
        if (!(f & kS)) {
            *start = p;
            *end = run<V, false, IsWordPunct>(p + l, e);
            return true;
        }
        p += l;
    }
    return false;
}

template <bool V>
inline bool whitespace_next(const u8* p, const u8* e, const u8** start, const u8** end) {
    p = run<V, false, IsSpace>(p, e);
    if (p >= e) return false;
    *start = p;
    *end = run<V, false, IsNonSpace>(p, e);
    return true;
}

template <PreTokPattern P, bool V>
inline bool next_impl(const u8* p, const u8* e, const u8** start, const u8** end) {
    if (P == PreTokPattern::WORD_PUNCT) return wordpunct_next<V>(p, e, start, end);
    if (P == PreTokPattern::WHITESPACE) return whitespace_next<V>(p, e, start, end);
    if (p >= e) return false;
    *start = p;
    if (P == PreTokPattern::GPT2) *end = gpt2_end<V>(p, e);
    else if (P == PreTokPattern::CL100K) *end = cl100k_end<V, true, 3>(p, e);
    else if (P == PreTokPattern::LLAMA3) *end = cl100k_end<V, false, 3>(p, e);
    else if (P == PreTokPattern::QWEN2) *end = cl100k_end<V, false, 1>(p, e);
    else *end = o200k_end<V>(p, e);
    return true;
}

template <PreTokPattern P, bool V>
size_t pieces_impl(const u8* s, const u8* p, const u8* e, std::pair<uint32_t, uint32_t>* out, size_t max) {
    size_t n = 0;
    const u8* start;
    const u8* end;
    while (n < max && next_impl<P, V>(p, e, &start, &end)) {
        out[n++] = {static_cast<uint32_t>(start - s), static_cast<uint32_t>(end - s)};
        p = end;
    }
    return n;
}

// ---- block scanners (SIMD levels sse2 and up) ---------------------------------------------------
// The text is classified 32 bytes at a time into bit masks, one bit per byte, kept for a window
// of 64 bytes; pieces are taken while they start within its first 32 bytes, so there are at
// least 32 bytes of look-ahead. A piece that starts at an ASCII byte is decided with mask
// arithmetic: a run of a class ends at a count of trailing zeros. Wherever a non-ASCII byte
// could change the decision (it might be a letter, a digit, a space...), or a run reaches the
// window's last byte while the text goes on, block_step gives up (kFallback) and the exact
// scanner above decides that one piece; pieces that start at non-ASCII bytes go there directly.
// For the gpt2 / cl100k / llama3 / qwen2 / o200k patterns a faster path comes first where the
// next 32 bytes are ASCII (or Latin-1 letters and common punctuation): the whole-window path
// (window_starts below) computes the starts of all the window's pieces at once and reads them off
// with count-trailing-zeros; the per-piece path takes over where it cannot decide.
#if CIYUAN_X86_SIMD
#define CIYUAN_ALWAYS_INLINE inline __attribute__((always_inline))

using Span = std::pair<uint32_t, uint32_t>;

struct M32 {  // the classes of 32 bytes; bit k = byte k (0 for the classes a pattern needs not)
    uint32_t U, Lo, L, D, S, SP, NL, Q, SL, US, N, O, valid;
};

// The classes each pattern reads besides L, D, S, N and O (the others are never computed).
template <PreTokPattern P>
struct Needs {
    static constexpr bool kGpt2Family = P != PreTokPattern::WORD_PUNCT && P != PreTokPattern::WHITESPACE;
    static constexpr bool kCase = P == PreTokPattern::O200K;                    // U and Lo apart
    static constexpr bool kSp = kGpt2Family;                                    // ' '
    static constexpr bool kQ = kGpt2Family;                                     // '\''
    static constexpr bool kNl = kGpt2Family && P != PreTokPattern::GPT2;       // \r \n
    static constexpr bool kSl = P == PreTokPattern::O200K;                      // '/'
    static constexpr bool kUs = P == PreTokPattern::WORD_PUNCT;                 // '_'
};

// The classes of the 64 bytes at w; bit k = byte w + k. Class bits are 0 past the text. Every
// run stops at bit 63 at the latest (run_end), and when the text goes on past the window that
// bit counts as unknown (set in OP), so such a run is handed to the exact scanner (open()).
struct Win {
    uint64_t U, Lo, L, D, S, SP, NL, Q, SL, US, N, O;
    uint64_t OP;        // N, plus bit 63 when the text goes on past the window
    uint64_t WS;        // where a piece that starts there is a letter run (see word_starts)
    unsigned end_bit;   // where the text ends, when it does within bits 0..63; else 64

    static uint64_t join(uint32_t lo, uint32_t hi) { return lo | (static_cast<uint64_t>(hi) << 32); }
    static uint64_t high(uint64_t x, uint32_t hi) { return (x >> 32) | (static_cast<uint64_t>(hi) << 32); }
    template <PreTokPattern P>
    CIYUAN_ALWAYS_INLINE void set(const M32& a, const M32& b) {
        using X = Needs<P>;
        L = join(a.L, b.L), D = join(a.D, b.D), S = join(a.S, b.S), N = join(a.N, b.N), O = join(a.O, b.O);
        U = X::kCase ? join(a.U, b.U) : 0, Lo = X::kCase ? join(a.Lo, b.Lo) : 0;
        SP = X::kSp ? join(a.SP, b.SP) : 0, NL = X::kNl ? join(a.NL, b.NL) : 0, Q = X::kQ ? join(a.Q, b.Q) : 0;
        SL = X::kSl ? join(a.SL, b.SL) : 0, US = X::kUs ? join(a.US, b.US) : 0;
    }
    template <PreTokPattern P>
    CIYUAN_ALWAYS_INLINE void slide(const M32& b) {
        using X = Needs<P>;
        L = high(L, b.L), D = high(D, b.D), S = high(S, b.S), N = high(N, b.N), O = high(O, b.O);
        if (X::kCase) U = high(U, b.U), Lo = high(Lo, b.Lo);
        if (X::kSp) SP = high(SP, b.SP);
        if (X::kNl) NL = high(NL, b.NL);
        if (X::kQ) Q = high(Q, b.Q);
        if (X::kSl) SL = high(SL, b.SL);
        if (X::kUs) US = high(US, b.US);
    }
    CIYUAN_ALWAYS_INLINE void bounds(const u8* w, const u8* e) {
        const size_t left = static_cast<size_t>(e - w);
        end_bit = left < 64 ? static_cast<unsigned>(left) : 64;
        OP = left < 64 ? N : N | (uint64_t{1} << 63);
    }
    // Whether the character at bit j (< 64) could extend a run of an ASCII class: it is
    // non-ASCII, or unknown (bit 63 while the text goes on).
    bool open(unsigned j) const { return (OP >> j) & 1; }
};

CIYUAN_ALWAYS_INLINE bool at(uint64_t m, unsigned j) { return (m >> j) & 1; }  // j < 64
// The first bit at or after i (< 64) that is not in m, or 63 (a run never goes past bit 63).
CIYUAN_ALWAYS_INLINE unsigned run_end(uint64_t m, unsigned i) {
    return static_cast<unsigned>(__builtin_ctzll((~m | (uint64_t{1} << 63)) & (~uint64_t{0} << i)));
}

constexpr int kFallback = -1;  // the exact scanner decides this piece
constexpr int kNoMore = -2;    // only whitespace is left (patterns that skip it)

// Where a piece that starts at bit k is a letter run that ends where the letters do: k is a
// letter, or a one-character prefix the pattern allows before letters and k + 1 is a letter.
// (Contractions come first in gpt2/cl100k, so an apostrophe never counts there.)
template <PreTokPattern P>
CIYUAN_ALWAYS_INLINE uint64_t word_starts(const Win& m) {
    uint64_t prefix;
    if (P == PreTokPattern::GPT2) prefix = m.SP;                          // " ?\p{L}+"
    else if (P == PreTokPattern::O200K) prefix = (m.O | m.S) & ~m.NL;     // [^\r\n\p{L}\p{N}]?
    else prefix = (m.O | m.S) & ~(m.NL | m.Q);                            // [^\r\n\p{L}\p{N}]?+
    return m.L | (prefix & (m.L >> 1));
}

// A whitespace run of ASCII spaces starting at bit i: where the patterns of the gpt2 family end
// the piece (see ws_run and its callers above). kNl: the pattern ends such a run at its last
// \r or \n (cl100k's \s*[\r\n], o200k's \s*[\r\n]+); kEndRun: cl100k's \s++$ comes first.
template <bool kNl, bool kEndRun>
CIYUAN_ALWAYS_INLINE int ws_piece(const Win& m, unsigned i) {
    const unsigned j = run_end(m.S, i);
    if (m.open(j)) return kFallback;
    if (kEndRun && j == m.end_bit) return static_cast<int>(j);
    if (kNl) {
        const uint64_t nl = m.NL & ((uint64_t{1} << j) - 1) & (~uint64_t{0} << i);
        if (nl) return 64 - __builtin_clzll(nl);
    }
    if (j == m.end_bit) return static_cast<int>(j);
    return static_cast<int>(j - i > 1 ? j - 1 : j);
}

// \p{N}{1,3} (kDigits 3) or \p{N} (1) at bit i, a digit.
template <int kDigits>
CIYUAN_ALWAYS_INLINE int digits_piece(const Win& m, unsigned i) {
    if (kDigits == 1) return static_cast<int>(i + 1);
    unsigned j = i + 1;
    if (at(m.D, j)) {
        if (at(m.D, j + 1)) return static_cast<int>(i + 3);
        ++j;
    }
    return m.open(j) ? kFallback : static_cast<int>(j);
}

// A run of class `c` from bit q, unless a non-ASCII character or the window's end may extend it.
CIYUAN_ALWAYS_INLINE int class_run(const Win& m, uint64_t c, unsigned q) {
    const unsigned j = run_end(c, q);
    return m.open(j) ? kFallback : static_cast<int>(j);
}

// ` ?[^\s\p{L}\p{N}]+` then a run of `tail` (cl100k: [\r\n]*, o200k: [\r\n/]*), or 0 if the
// piece at i is not of that kind.
CIYUAN_ALWAYS_INLINE int punct_piece(const Win& m, unsigned i, uint64_t tail) {
    const uint64_t b = uint64_t{1} << i;
    unsigned q;
    if (m.O & b) q = i + 1;
    else if ((m.SP & b) && (m.O & (b << 1))) q = i + 2;
    else return 0;
    unsigned j = run_end(m.O, q);
    if (m.open(j)) return kFallback;
    j = run_end(tail, j);
    return m.open(j) ? kFallback : static_cast<int>(j);
}

template <bool kEndRun, int kDigits>
CIYUAN_ALWAYS_INLINE int cl100k_step(const Win& m, unsigned i, const u8* w, const u8* e) {
    const uint64_t b = uint64_t{1} << i;
    if (m.D & b) return digits_piece<kDigits>(m, i);  // \p{N}{1,3}+
    if (m.Q & b) {  // '(?i:[sdmt]|ll|ve|re)
        if (const size_t c = contraction<true>(w + i, e)) return static_cast<int>(i + c);
        if (m.L & (b << 1)) return class_run(m, m.L, i + 2);  // the apostrophe as a prefix
    }
    if (!(m.NL & b) && m.open(i + 1)) return kFallback;  // a prefix before a non-ASCII letter?
    if (const int r = punct_piece(m, i, m.NL)) return r;  // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    return ws_piece<true, kEndRun>(m, i);
}

CIYUAN_ALWAYS_INLINE int gpt2_step(const Win& m, unsigned i, const u8* w, const u8* e) {
    uint64_t b = uint64_t{1} << i;
    if (m.Q & b) {
        if (const size_t c = contraction<false>(w + i, e)) return static_cast<int>(i + c);
    }
    unsigned q = i + 1;
    if (m.SP & b) {  // " ?X": the space joins a following non-space
        if (m.open(i + 1)) return kFallback;
        if (i + 1 != m.end_bit && !(m.S & (b << 1))) {
            b <<= 1;
            ++q;
        }
    }
    if (m.D & b) return class_run(m, m.D, q);
    if (m.O & b) return class_run(m, m.O, q);
    return ws_piece<false, false>(m, i);
}

CIYUAN_ALWAYS_INLINE int o200k_step(const Win& m, unsigned i) {
    const uint64_t b = uint64_t{1} << i;
    if (m.D & b) return digits_piece<3>(m, i);
    if (!(m.NL & b) && m.open(i + 1)) return kFallback;  // a prefix before a non-ASCII letter?
    if (const int r = punct_piece(m, i, m.NL | m.SL)) return r;  // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    return ws_piece<true, false>(m, i);
}

// \w+|[^\w\s]+ after skipping whitespace; *start is updated.
CIYUAN_ALWAYS_INLINE int wordpunct_step(const Win& m, unsigned* start) {
    const unsigned s = run_end(m.S, *start);
    if (s == m.end_bit) return kNoMore;
    if (m.open(s)) return kFallback;
    *start = s;
    const uint64_t word = m.L | m.D | m.US;
    if (at(word, s)) return class_run(m, word, s + 1);
    return class_run(m, m.O & ~m.US, s + 1);
}

CIYUAN_ALWAYS_INLINE int whitespace_step(const Win& m, unsigned* start) {
    const unsigned s = run_end(m.S, *start);
    if (s == m.end_bit) return kNoMore;
    if (m.open(s)) return kFallback;
    *start = s;
    return class_run(m, m.L | m.D | m.O, s + 1);
}

// Whether the piece at p is left to the exact scanner without trying the window: it starts at a
// non-ASCII character, or at an ASCII one before one (a newline in Chinese text, a quote before
// a word...), where the window would only fall back after classifying 64 bytes for nothing.
inline bool starts_slow(const u8* p, const u8* e) { return *p >= 0x80 || (p + 1 < e && p[1] >= 0x80); }

// At least one piece from p (< e) by the exact scanner, and more while they start slow: a
// stretch of Chinese text runs here as fast as the scalar level. Compiled for the baseline and
// kept out of line, so the SIMD levels call the very code the others run. Advances p.
template <PreTokPattern P>
__attribute__((noinline)) size_t slow_pieces(const u8* s, const u8*& p, const u8* e, Span* out, size_t max) {
    size_t n = 0;
    const u8* st;
    const u8* en;
    do {
        if (!next_impl<P, true>(p, e, &st, &en)) {
            p = e;
            break;
        }
        out[n++] = {static_cast<uint32_t>(st - s), static_cast<uint32_t>(en - s)};
        p = en;
    } while (n < max && p < e && starts_slow(p, e));
    return n;
}

// Whether word_starts / word_piece apply to the pattern (not to those that skip whitespace).
template <PreTokPattern P>
constexpr bool kHasWords = P != PreTokPattern::WORD_PUNCT && P != PreTokPattern::WHITESPACE;

// The piece at bit i, a word start (see word_starts): the most frequent kind, taken first.
template <PreTokPattern P>
CIYUAN_ALWAYS_INLINE int word_piece(const Win& m, unsigned i, const u8* w, const u8* e) {
    if (P != PreTokPattern::O200K) return class_run(m, m.L, i + 1);  // " ?\p{L}+", [^\r\n\p{L}\p{N}]?+\p{L}++
    // o200k: [^\r\n\p{L}\p{N}]? then [A-Z]*[a-z]+ or [A-Z]+, then a contraction maybe
    unsigned r = run_end(m.U, at(m.L, i) ? i : i + 1);
    if (m.open(r)) return kFallback;
    if (at(m.Lo, r)) {
        r = run_end(m.Lo, r + 1);
        if (m.open(r)) return kFallback;
    }
    if (at(m.Q, r)) r += static_cast<unsigned>(contraction<true>(w + r, e));
    return static_cast<int>(r);
}

// The end (bit offset from w) of the piece that starts at the ASCII byte at bit *start, or
// kFallback / kNoMore. For the patterns that skip whitespace *start moves to the piece start.
template <PreTokPattern P>
CIYUAN_ALWAYS_INLINE int block_step(const Win& m, unsigned& start, const u8* w, const u8* e) {
    switch (P) {
        case PreTokPattern::GPT2: return gpt2_step(m, start, w, e);
        case PreTokPattern::CL100K: return cl100k_step<true, 3>(m, start, w, e);
        case PreTokPattern::LLAMA3: return cl100k_step<false, 3>(m, start, w, e);
        case PreTokPattern::QWEN2: return cl100k_step<false, 1>(m, start, w, e);
        case PreTokPattern::O200K: return o200k_step(m, start);
        case PreTokPattern::WORD_PUNCT: return wordpunct_step(m, &start);
        case PreTokPattern::WHITESPACE: return whitespace_step(m, &start);
    }
    return kFallback;
}

// ---- whole-window boundary masks (gpt2, cl100k, llama3, qwen2, o200k) ----------------------------
// The per-piece steps above cost some 60 instructions a piece. For a window of ASCII text the
// boundaries of all its pieces follow from its class masks at once: the segmentation of the text
// from a piece start p is the segmentation of text[p:] (the patterns never look behind), so with
// p at bit 0 every rule below is a local one, except the two that count or look far ahead (digit
// groups, a whitespace run's last newline), which loop over their few runs. The pieces are then
// read off the mask of starts with count-trailing-zeros.
//
// The rules (ASCII; W whitespace, NL \r \n, SP ' ', O the rest of [^\s\p{L}\p{N}], Q '\''):
// * a run of O starts a piece unless a space before it takes it (` ?[^\s\p{L}\p{N}]+`); the last
//   character of a whitespace run is always a piece start (`\s+(?!\S)` gives it back) unless it
//   is a newline (`\s*[\r\n]` ends at the run's last newline; the rest of the run is one piece);
// * cl100k/o200k: a newline run right after O is eaten by the punctuation piece's [\r\n]* (o200k:
//   [\r\n/]*); a letter run takes one character before it when that is a non-newline space, or an
//   O that starts a piece alone (a run of one), except a contraction (cl100k) whose letters are
//   its own; o200k also starts a piece where a capital follows a small letter, and a contraction
//   after letters belongs to the word;
// * gpt2: a space before a run of letters, digits or O belongs to it; contractions start at an
//   apostrophe that starts a piece;
// * digits: runs (gpt2), groups of three from the run's start (cl100k, o200k) or single (qwen2).
// Only starts whose every input is known are used: those at least three bytes before the first
// non-ASCII byte (other than the Latin-1 letters and common punctuation of latin1_letter and
// common_punct3), the window's or the text's end, and not inside a whitespace run that reaches it.
template <PreTokPattern P>
constexpr bool kMaskBlocks = P == PreTokPattern::GPT2 || P == PreTokPattern::CL100K || P == PreTokPattern::LLAMA3 ||
                             P == PreTokPattern::QWEN2 || P == PreTokPattern::O200K;

CIYUAN_ALWAYS_INLINE uint64_t below(unsigned k) { return k >= 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1; }

// U+2013 U+2014 U+2018 U+2019 U+201C U+201D U+2026 (- - ' ' " " ..., bytes E2 80 xx): the
// punctuation English text is full of. The whole-window path takes each as an O character
// three bytes long instead of stopping there. p has three readable bytes.
CIYUAN_ALWAYS_INLINE bool common_punct3(const u8* p) {
    const unsigned x = static_cast<unsigned>(p[2]) - 0x93u;
    return p[0] == 0xE2 && p[1] == 0x80 && x < 20 && ((0x80663u >> x) & 1);
}

// U+00C0..U+00FF but U+00D7 and U+00F7 (bytes C3 80..BF): the letters of Western European
// languages, Lu below U+00DF and Ll from it (o200k's [Up] and [Lo] apart, none in both). The
// whole-window path takes them as letters two bytes long. b is the byte after C3.
CIYUAN_ALWAYS_INLINE bool latin1_letter(u8 b) { return (b & 0xC0) == 0x80 && b != 0x97 && b != 0xB7; }

// How many of the (up to) 32 bytes at p come before the first non-ASCII character other than
// those; 0 when fewer than 32 bytes are left.
CIYUAN_ALWAYS_INLINE unsigned ascii_ahead(const u8* p, const u8* e) {
    if (e - p < 32) return 0;
    uint32_t hi = static_cast<uint32_t>(_mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))) |
                  (static_cast<uint32_t>(_mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))) << 16);
    while (hi) {
        const unsigned i = static_cast<unsigned>(__builtin_ctz(hi));
        if (i > 29) return i;
        if (p[i] == 0xC3 && latin1_letter(p[i + 1])) hi &= ~(3u << i);
        else if (common_punct3(p + i)) hi &= ~(7u << i);
        else return i;
    }
    return 32;
}
#ifndef CIYUAN_MIN_ASCII
#define CIYUAN_MIN_ASCII 32
#endif

// The mask of piece starts of the window (bit 0, a piece start, included) and in *lim the last
// bit up to which they are exact (< 1 when none is).
template <PreTokPattern P>
CIYUAN_ALWAYS_INLINE uint64_t window_starts(const Win& m, const u8* w, const u8* e, int* lim) {
    constexpr bool kGpt2 = P == PreTokPattern::GPT2;
    constexpr bool kO200k = P == PreTokPattern::O200K;
    // The non-ASCII characters the window takes (see latin1_letter, common_punct3), up to the
    // first it does not.
    uint64_t unknown = m.N, O = m.O, L = m.L, Up = m.U, Lw = m.Lo, lead3 = 0;
    while (unknown) {
        const unsigned i = static_cast<unsigned>(__builtin_ctzll(unknown));
        if (i > 61) break;
        if (w[i] == 0xC3 && i + 2 <= m.end_bit && latin1_letter(w[i + 1])) {
            const uint64_t two = uint64_t{3} << i;
            L |= two;
            if (w[i + 1] < 0x9F) Up |= two;
            else Lw |= two;
            unknown &= ~two;
        } else if (i + 3 <= m.end_bit && common_punct3(w + i)) {
            lead3 |= uint64_t{1} << i;
            O |= uint64_t{7} << i;
            unknown &= ~(uint64_t{7} << i);
        } else {
            break;
        }
    }
    if (m.end_bit < 64) unknown |= ~uint64_t{0} << m.end_bit;
    const unsigned u = unknown ? static_cast<unsigned>(__builtin_ctzll(unknown)) : 64;
    int l = static_cast<int>(u < 63 ? u : 63) - 3;  // at most 60: a contraction there ends by bit 63
    const uint64_t W = m.S;
    if (u > 0 && ((W >> (u - 1)) & 1)) {  // a whitespace run reaches the unknown: its end is unknown
        const uint64_t nonw = ~W & below(u);
        const int r = nonw ? 64 - __builtin_clzll(nonw) : 0;
        if (r < l) l = r;
    }
    *lim = l;
    if (l < 1) return 0;
    const uint64_t D = m.D, SP = m.SP, Q = m.Q;
    const uint64_t one_char_before_letter = (L >> 1) | (lead3 & (L >> 3));  // O of one character, then L
    uint64_t starts = 1;
    if (kGpt2) {
        const uint64_t os = O & ~(O << 1) & ~(SP << 1);
        uint64_t ct = 0, ct_end = 0;
        for (uint64_t c = Q & os & (L >> 1) & below(61); c; c &= c - 1) {
            const unsigned i = static_cast<unsigned>(__builtin_ctzll(c));
            if (const size_t len = contraction<false>(w + i, e)) {
                ct |= uint64_t{1} << i;
                ct_end |= uint64_t{1} << (i + len);  // i <= 60 (later ones are past *lim anyway)
            }
        }
        const uint64_t lst = L & ~(L << 1) & ~((SP | ct) << 1);
        const uint64_t dst = D & ~(D << 1) & ~(SP << 1);
        starts |= lst | dst | os | ct_end | (W & ~(W << 1)) | (W & (~W >> 1));
        return starts;
    }
    const uint64_t NL = m.NL;
    const uint64_t tail = kO200k ? NL | m.SL : NL;
    const uint64_t eaten = ((tail + (NL & (O << 1))) ^ tail) & tail;  // the [\r\n]* after punctuation
    if (kO200k && (eaten & m.SL)) {  // a '/' eaten after a newline splits an O run: not handled here
        const int k = __builtin_ctzll(eaten & m.SL);
        if (k < *lim) *lim = k;
        if (k < 1) return 0;
    }
    const uint64_t wn = W & ~NL;
    const uint64_t os = O & ~(O << 1) & ~(SP << 1) & ~eaten;
    const uint64_t wpw = wn & (L >> 1);
    const uint64_t wp = W & ~eaten;
    starts |= (wp & ~(wp << 1)) | (wn & (~W >> 1));
    // After a whitespace run's last newline, when more of the run follows.
    for (uint64_t x = NL & wp; x;) {
        const unsigned i = static_cast<unsigned>(__builtin_ctzll(x));
        const uint64_t after = ~W & (~uint64_t{0} << i);
        if (!after) break;
        const unsigned k = static_cast<unsigned>(__builtin_ctzll(after));
        const uint64_t seg = x & below(k);
        const unsigned n = 63u - static_cast<unsigned>(__builtin_clzll(seg));
        if (n + 1 < k) starts |= uint64_t{1} << (n + 1);
        x &= ~below(k);
    }
    if (P == PreTokPattern::QWEN2) {
        starts |= D;
    } else {
        uint64_t g = D & ~(D << 1);
        const uint64_t d3 = D & (D << 1) & (D << 2);
        starts |= g;
        while ((g = (g << 3) & d3)) starts |= g;
    }
    if (kO200k) {
        uint64_t suf = 0, ct_end = 0, inside = 0;
        for (uint64_t c = Q & (L << 1) & (L >> 1) & below(61); c; c &= c - 1) {
            const unsigned i = static_cast<unsigned>(__builtin_ctzll(c));
            if ((ct_end >> i) & 1) continue;  // right after a contraction: a new piece (a prefix)
            if (const size_t len = contraction<true>(w + i, e)) {
                suf |= uint64_t{1} << i;
                ct_end |= uint64_t{1} << (i + len);
                inside |= (uint64_t{1} << (i + len)) - (uint64_t{2} << i);
            }
        }
        const uint64_t osx = os & ~suf;
        const uint64_t wpo = osx & one_char_before_letter;
        const uint64_t lst = (L & ~(L << 1) & ~(((wpo & ~lead3) | wpw | suf) << 1) & ~((wpo & lead3) << 3)) |
                             (Up & (Lw << 1) & ~inside);
        starts |= lst | wpo | wpw | osx | ct_end;
    } else {
        uint64_t ct = 0, ct_end = 0;
        for (uint64_t c = Q & os & (L >> 1) & below(61); c; c &= c - 1) {
            const unsigned i = static_cast<unsigned>(__builtin_ctzll(c));
            if (const size_t len = contraction<true>(w + i, e)) {
                ct |= uint64_t{1} << i;
                ct_end |= uint64_t{1} << (i + len);
            }
        }
        const uint64_t wpo = os & one_char_before_letter & ~ct;
        const uint64_t lst = L & ~(L << 1) & ~(((wpo & ~lead3) | wpw | ct) << 1) & ~((wpo & lead3) << 3);
        starts |= lst | wpw | os | ct_end;
    }
    return starts;
}

// Emits the pieces of the window whose ends are exact, up to `room` of them; returns the bit
// where the last one ends (0 when there is none: the caller takes the per-piece path).
template <PreTokPattern P>
CIYUAN_ALWAYS_INLINE unsigned window_pieces(const Win& m, const u8* w, const u8* e, uint32_t base, Span* out,
                                            size_t room, size_t* n) {
    int lim;
    uint64_t starts = window_starts<P>(m, w, e, &lim);
    if (lim < 1) return 0;
    starts &= below(static_cast<unsigned>(lim) + 1);
    starts &= ~uint64_t{1};
    if (!starts) return 0;
    if (room < 64) {  // keep the first `room` starts
        for (int extra = __builtin_popcountll(starts) - static_cast<int>(room); extra > 0; --extra)
            starts &= ~(uint64_t{1} << (63 - __builtin_clzll(starts)));
    }
    const unsigned end = 63u - static_cast<unsigned>(__builtin_clzll(starts));
    const size_t count = static_cast<size_t>(__builtin_popcountll(starts));
    // Each piece ends where the next starts: out[k].second and out[k + 1].first are one value.
    static_assert(sizeof(Span) == 8, "Span is two uint32_t");
    out[0].first = base;
    char* o = reinterpret_cast<char*>(out) + 4;
    auto put = [&](size_t k) {
        const uint32_t b = base + static_cast<uint32_t>(__builtin_ctzll(starts));
        std::memcpy(o + 8 * k, &b, 4);
        std::memcpy(o + 8 * k + 4, &b, 4);
        starts &= starts - 1;
    };
    if (room >= count + 4) {  // four at a time, branch-free; stores past the last land in unused room
        starts |= uint64_t{7} << 61;  // what those read (bits 61..63 are never starts: lim <= 60)
        for (size_t k = 0; k < count; k += 4) {
            put(k);
            put(k + 1);
            put(k + 2);
            put(k + 3);
        }
    } else {  // out[count] may not exist: the last piece's end alone
        for (size_t k = 0; k + 1 < count; ++k) put(k);
        out[count - 1].second = base + end;
    }
    *n += count;
    return end;
}
#endif  // CIYUAN_X86_SIMD

}  // namespace

// One copy of the block scanner per SIMD level (see pretokenize_block.inc).
#if CIYUAN_X86_SIMD
namespace block_sse2 {
namespace {
#define CIYUAN_BLOCK_LEVEL 1
#include "pretokenize_block.inc"
#undef CIYUAN_BLOCK_LEVEL
}  // namespace
}  // namespace block_sse2

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("sse4.2,ssse3,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("sse4.2,ssse3,popcnt")
#endif
namespace block_sse42 {
namespace {
#define CIYUAN_BLOCK_LEVEL 2
#include "pretokenize_block.inc"
#undef CIYUAN_BLOCK_LEVEL
}  // namespace
}  // namespace block_sse42
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,bmi,bmi2,popcnt,lzcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,popcnt,lzcnt")
#endif
namespace block_avx2 {
namespace {
#define CIYUAN_BLOCK_LEVEL 3
#include "pretokenize_block.inc"
#undef CIYUAN_BLOCK_LEVEL
}  // namespace
}  // namespace block_avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx2,bmi,bmi2,popcnt,lzcnt"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx2,bmi,bmi2,popcnt,lzcnt")
#endif
namespace block_avx512 {
namespace {
#define CIYUAN_BLOCK_LEVEL 4
#include "pretokenize_block.inc"
#undef CIYUAN_BLOCK_LEVEL
}  // namespace
}  // namespace block_avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // CIYUAN_X86_SIMD

namespace {

// Up to `max` pieces from p at the current SIMD level.
size_t pieces_at_level(PreTokPattern pat, const u8* s, const u8* p, const u8* e, Span* out, size_t max) {
    switch (simd_level()) {
#if CIYUAN_X86_SIMD
        case SimdLevel::kAvx512: return block_avx512::pieces(pat, s, p, e, out, max);
        case SimdLevel::kAvx2: return block_avx2::pieces(pat, s, p, e, out, max);
        case SimdLevel::kSse42: return block_sse42::pieces(pat, s, p, e, out, max);
        case SimdLevel::kSse2: return block_sse2::pieces(pat, s, p, e, out, max);
#endif
        default: break;
    }
    switch (pat) {
        case PreTokPattern::GPT2: return pieces_impl<PreTokPattern::GPT2, false>(s, p, e, out, max);
        case PreTokPattern::CL100K: return pieces_impl<PreTokPattern::CL100K, false>(s, p, e, out, max);
        case PreTokPattern::O200K: return pieces_impl<PreTokPattern::O200K, false>(s, p, e, out, max);
        case PreTokPattern::WORD_PUNCT: return pieces_impl<PreTokPattern::WORD_PUNCT, false>(s, p, e, out, max);
        case PreTokPattern::WHITESPACE: return pieces_impl<PreTokPattern::WHITESPACE, false>(s, p, e, out, max);
        case PreTokPattern::LLAMA3: return pieces_impl<PreTokPattern::LLAMA3, false>(s, p, e, out, max);
        case PreTokPattern::QWEN2: return pieces_impl<PreTokPattern::QWEN2, false>(s, p, e, out, max);
    }
    return 0;
}

}  // namespace

size_t next_pieces(PreTokPattern p, std::string_view text, size_t pos, std::pair<uint32_t, uint32_t>* out,
                   size_t max) {
    if (pos >= text.size()) return 0;
    const u8* s = reinterpret_cast<const u8*>(text.data());
    return pieces_at_level(p, s, s + pos, s + text.size(), out, max);
}

bool next_piece(PreTokPattern p, std::string_view text, size_t pos, size_t* start, size_t* end) {
    if (pos >= text.size()) return false;
    const u8* s = reinterpret_cast<const u8*>(text.data());
    const u8* e = s + text.size();
    const u8* b;
    const u8* en;
    bool ok = false;
    switch (p) {
        case PreTokPattern::GPT2: ok = next_impl<PreTokPattern::GPT2, true>(s + pos, e, &b, &en); break;
        case PreTokPattern::CL100K: ok = next_impl<PreTokPattern::CL100K, true>(s + pos, e, &b, &en); break;
        case PreTokPattern::O200K: ok = next_impl<PreTokPattern::O200K, true>(s + pos, e, &b, &en); break;
        case PreTokPattern::WORD_PUNCT: ok = next_impl<PreTokPattern::WORD_PUNCT, true>(s + pos, e, &b, &en); break;
        case PreTokPattern::WHITESPACE: ok = next_impl<PreTokPattern::WHITESPACE, true>(s + pos, e, &b, &en); break;
        case PreTokPattern::LLAMA3: ok = next_impl<PreTokPattern::LLAMA3, true>(s + pos, e, &b, &en); break;
        case PreTokPattern::QWEN2: ok = next_impl<PreTokPattern::QWEN2, true>(s + pos, e, &b, &en); break;
    }
    if (!ok) return false;
    *start = static_cast<size_t>(b - s);
    *end = static_cast<size_t>(en - s);
    return true;
}

void split_pieces(PreTokPattern p, std::string_view text, std::vector<std::pair<uint32_t, uint32_t>>& out) {
    out.clear();
    if (text.size() > UINT32_MAX) throw std::length_error("split_pieces: text of 4 GiB or more");
    const u8* s = reinterpret_cast<const u8*>(text.data());
    const u8* e = s + text.size();
    out.reserve(text.size() / 4 + 16);
    constexpr size_t kBatch = 256;
    size_t pos = 0;
    for (;;) {
        const size_t n0 = out.size();
        out.resize(n0 + kBatch);
        const size_t n = pos < text.size() ? pieces_at_level(p, s, s + pos, e, out.data() + n0, kBatch) : 0;
        out.resize(n0 + n);
        if (n == 0) break;
        pos = out.back().second;
    }
}

namespace {
const struct {
    std::string_view name;
    PreTokPattern pattern;
} kPatternNames[] = {
    {"gpt2", PreTokPattern::GPT2},
    {"r50k_base", PreTokPattern::GPT2},
    {"p50k_base", PreTokPattern::GPT2},
    {"cl100k_base", PreTokPattern::CL100K},
    {"o200k_base", PreTokPattern::O200K},
    {"wordpunct", PreTokPattern::WORD_PUNCT},
    {"whitespace", PreTokPattern::WHITESPACE},
    {"llama3", PreTokPattern::LLAMA3},
    {"qwen2", PreTokPattern::QWEN2},
};
}  // namespace

bool pattern_from_name(std::string_view name, PreTokPattern* out) {
    for (const auto& n : kPatternNames) {
        if (n.name == name) {
            *out = n.pattern;
            return true;
        }
    }
    return false;
}

PreTokPattern parse_pattern(std::string_view name) {
    PreTokPattern p;
    if (pattern_from_name(name, &p)) return p;
    std::string known;
    for (const auto& n : kPatternNames) known += (known.empty() ? "'" : ", '") + std::string(n.name) + "'";
    throw Error(ErrorKind::kInvalidInput,
                "unknown pre-tokenizer pattern '" + std::string(name) + "'; expected one of " + known);
}

}  // namespace ciyuan
