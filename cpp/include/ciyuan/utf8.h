// Small UTF-8 helpers: decode one code point, validate a buffer, encode.
//
// decode() is strict (rejects overlong forms, surrogates and values above U+10FFFF) and never
// reads past `end`, so scanners stay in bounds even when handed invalid text: an invalid or
// truncated sequence decodes as U+FFFD with length 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace ciyuan {
namespace utf8 {

constexpr uint32_t kReplacement = 0xFFFD;

// Decodes the code point starting at p (requires p < end); stores it in *cp and returns its
// length in bytes (1..4).
inline size_t decode(const unsigned char* p, const unsigned char* end, uint32_t* cp) {
    const unsigned b0 = p[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    const size_t avail = static_cast<size_t>(end - p);
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        if (avail >= 2 && (p[1] & 0xC0) == 0x80) {
            *cp = ((b0 & 0x1Fu) << 6) | (p[1] & 0x3Fu);
            return 2;
        }
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (avail >= 3 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
            const uint32_t c = ((b0 & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
            if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF)) {
                *cp = c;
                return 3;
            }
        }
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (avail >= 4 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) {
            const uint32_t c = ((b0 & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
                               (p[3] & 0x3Fu);
            if (c >= 0x10000 && c <= 0x10FFFF) {
                *cp = c;
                return 4;
            }
        }
    }
    *cp = kReplacement;
    return 1;
}

inline size_t decode(const char* p, const char* end, uint32_t* cp) {
    return decode(reinterpret_cast<const unsigned char*>(p), reinterpret_cast<const unsigned char*>(end), cp);
}

// Returns the offset of the first byte that does not start a valid UTF-8 sequence, or n when
// the whole buffer is valid.
inline size_t validate(const char* data, size_t n) {
    const unsigned char* s = reinterpret_cast<const unsigned char*>(data);
    const unsigned char* end = s + n;
    const unsigned char* p = s;
    while (p < end) {
        // ASCII fast path, 8 bytes at a time.
        while (static_cast<size_t>(end - p) >= 8) {
            uint64_t w;
            std::memcpy(&w, p, 8);
            if (w & 0x8080808080808080ull) break;
            p += 8;
        }
        // CJK text: three-byte characters whose lead byte allows any continuation bytes
        // (E1..EC, EE, EF: not the overlong E0 or the surrogates' ED), without decoding.
        while (end - p >= 3 && p[0] >= 0xE1 && p[0] <= 0xEF && p[0] != 0xED &&
               ((p[1] ^ 0x80u) | (p[2] ^ 0x80u)) < 0x40) {
            p += 3;
        }
        if (p >= end) break;
        if (*p < 0x80) {  // ASCII after a longer character: back to the 8-byte loop (going on
            ++p;          // a byte at a time here checked the rest of a line of English after
            continue;     // one curly quote byte by byte: gutenberg_100mb.txt 2.8x slower)
        }
        uint32_t cp;
        const size_t len = decode(p, end, &cp);
        if (cp == kReplacement && len == 1) return static_cast<size_t>(p - s);
        p += len;
    }
    return n;
}

// Number of bytes encode() writes for cp (0 when cp is a surrogate or above U+10FFFF).
inline size_t encoded_length(uint32_t cp) {
    if (cp < 0x80) return 1;
    if (cp < 0x800) return 2;
    if (cp < 0x10000) return (cp >= 0xD800 && cp <= 0xDFFF) ? 0 : 3;
    return cp <= 0x10FFFF ? 4 : 0;
}

// Writes the UTF-8 form of cp to out (room for 4 bytes); returns the byte count, 0 for a
// surrogate or a value above U+10FFFF (nothing written).
inline size_t encode(uint32_t cp, char* out) {
    switch (encoded_length(cp)) {
        case 1:
            out[0] = static_cast<char>(cp);
            return 1;
        case 2:
            out[0] = static_cast<char>(0xC0 | (cp >> 6));
            out[1] = static_cast<char>(0x80 | (cp & 0x3F));
            return 2;
        case 3:
            out[0] = static_cast<char>(0xE0 | (cp >> 12));
            out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out[2] = static_cast<char>(0x80 | (cp & 0x3F));
            return 3;
        case 4:
            out[0] = static_cast<char>(0xF0 | (cp >> 18));
            out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out[3] = static_cast<char>(0x80 | (cp & 0x3F));
            return 4;
        default:
            return 0;
    }
}

// Whether c is a continuation byte (10xxxxxx), i.e. not the first byte of a character.
inline bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the sequence the lead byte c announces (1 for ASCII and for a stray byte); the
// bytes after it are not checked.
inline size_t lead_length(unsigned char c) { return c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; }

// out[i] = the index of the character that holds byte i of data[0, n), and out[n] = the number
// of characters: byte spans -> character spans.
inline void char_index_of_bytes(const char* data, size_t n, std::vector<uint32_t>& out) {
    out.resize(n + 1);
    uint32_t c = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0 && !is_continuation(static_cast<unsigned char>(data[i]))) ++c;
        out[i] = c;
    }
    out[n] = n == 0 ? 0 : c + 1;
}

// The character span of the byte span [s, e) (s <= e), by the table char_index_of_bytes()
// made: from the character holding byte s to the one holding byte e - 1; an empty span stays
// empty, at byte s's character.
inline std::pair<uint32_t, uint32_t> char_span(const std::vector<uint32_t>& char_at, size_t s, size_t e) {
    return {char_at[s], e > s ? char_at[e - 1] + 1 : char_at[s]};
}

// -- Text already validated (validate() above, or a Python str's UTF-8 form): no checks -----

// The code point of the three-byte sequence at p (lead byte E0..EF), as the hot loops of CJK
// text read it: most Chinese characters are three bytes.
inline uint32_t decode_three(const unsigned char* p) {
    return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
}

// The code point of the two-byte sequence at p (lead byte C2..DF).
inline uint32_t decode_two(const unsigned char* p) { return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu); }

// The code point at p of valid UTF-8; stores its length in *len.
inline uint32_t decode_valid(const unsigned char* p, size_t* len) {
    const unsigned b = p[0];
    if (b < 0x80) {
        *len = 1;
        return b;
    }
    if (b < 0xE0) {
        *len = 2;
        return decode_two(p);
    }
    if (b < 0xF0) {
        *len = 3;
        return decode_three(p);
    }
    *len = 4;
    return ((b & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
}

// Appends the UTF-8 form of cp to `out` (a std::string, or any type with append(const char*,
// size_t)); appends nothing for a surrogate or a value above U+10FFFF.
template <class String>
inline void append(uint32_t cp, String& out) {
    char bytes[4];
    out.append(bytes, encode(cp, bytes));
}

}  // namespace utf8
}  // namespace ciyuan
