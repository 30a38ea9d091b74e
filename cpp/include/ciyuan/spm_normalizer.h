// SentencePiece's normalizer: a precompiled character map, then the whitespace rules.
//
// The character map is the blob a .model file stores (normalizer_spec.precompiled_charsmap):
//   uint32 little-endian  size in bytes of the double array
//   the double array      darts-clone units (32-bit): bit 8 has_leaf, bit 9 offset scale,
//                         bits 10-31 offset, low byte the label (bit 31 too: set on value
//                         units, whose low 31 bits are the value); child on byte c of the node
//                         at p is at p ^ offset(p) ^ c
//   the strings           NUL-terminated normalized strings; a key's value is an offset here.
// At each position the longest key of the map that prefixes the rest of the text is replaced
// by its string; with no key, one UTF-8 character is copied (a malformed byte becomes U+FFFD,
// consuming one byte). User-defined symbols are matched first and copied unnormalized. Then
// whitespace: leading, trailing and repeated spaces dropped (remove_extra_whitespaces), spaces
// written as U+2581 (escape_whitespaces), one U+2581 added in front (add_dummy_prefix) or at
// the end (treat_whitespace_as_suffix).
//
// One pass over the text, O(bytes x longest key); no allocation per character. Most text needs
// no rule at all, so the pass copies runs: a maximal run of characters that normalize to
// themselves (and no space) is appended with one copy. Most such characters are plain - no rule
// key and no user-defined symbol starts with them - which is a table lookup: for ASCII per byte
// (a letter is plain when the next byte is ASCII too: letters start composition rules), for the
// rest of the BMP one bit per code point, set at construction where the trie walk over the
// character's bytes dies before passing a key (so no key, however long, starts with the
// character). A character that starts keys only as part of longer ones (kana, letters before
// a combining mark) stays in the run without a walk when the next character is never the
// second of a key (bit tables made from the map), and is walked otherwise; a character that is
// a key alone and starts no longer one (fullwidth punctuation) finds its replacement in a table
// by code point. Only where a
// key matches, at a space, or where a user-defined symbol may start (by its first byte; then
// matched anchored there) does the run end. The alignment, when asked for, gives for each
// normalized byte (and one past the end) the original byte it came from, as sentencepiece's
// norm_to_orig does; callers that want token ids only skip it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/special.h"

namespace ciyuan {

// The options of SentencePiece's normalizer (normalizer_spec + treat_whitespace_as_suffix).
struct SpmNormalizerOptions {
  std::string charsmap;  // the precompiled map; empty: no character rules (identity)
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
  bool treat_whitespace_as_suffix = false;
  // Training only (WordCounter): cut the normalized sentence into whitespace words; false keeps
  // each sentence whole.
  bool split_by_whitespace = true;
  std::vector<std::string> user_defined_symbols;  // copied unnormalized (longest match first)
  // Offsets as Hugging Face's Prepend("▁") + Replace(" ", "▁") give them (its Llama 2 files),
  // not as sentencepiece: the dummy prefix is aligned to the first character's span, and every
  // byte-fallback token of a character keeps the character's span (encode_sentencepiece).
  bool hf_offsets = false;
};

class SpmNormalizer {
 public:
  // Validates the charsmap: Error(kModel) when it is truncated or inconsistent.
  explicit SpmNormalizer(SpmNormalizerOptions options);

  // Normalizes `in` into `out` (replaced) and sets orig[k] = the byte of `in` that normalized
  // byte k came from, with orig.size() == out.size() + 1 (the last entry: the end of what was
  // consumed). With orig == nullptr the alignment is not made (ids-only encoding needs none).
  void normalize(std::string_view in, std::string& out, std::vector<uint32_t>* orig) const;
  void normalize(std::string_view in, std::string& out, std::vector<uint32_t>& orig) const {
    normalize(in, out, &orig);
  }

  // The replacement of the longest rule at in[pos..]: sets *rep (NUL-terminated, may be empty)
  // and returns the bytes consumed, or 0 when no rule matches.
  size_t match_rule(std::string_view in, size_t pos, const char** rep) const;

  const SpmNormalizerOptions& options() const { return options_; }

 private:
  // The end of the run of characters that normalize to themselves (no space) starting at p, in
  // the text [begin, end) (see the top of this file). When the run ends at a rule, its length
  // and replacement are *rule_len and *rep (as match_rule); otherwise *rule_len is 0.
  const unsigned char* plain_run(const unsigned char* begin, const unsigned char* p, const unsigned char* end,
                                 const char** rep, size_t* rule_len) const;
  bool plain2(uint32_t cp) const { return (plain2_[cp >> 6] >> (cp & 63)) & 1; }
  bool plain3(uint32_t cp) const { return (plain3_[cp >> 6] >> (cp & 63)) & 1; }
  static bool bit(const uint64_t* bits, uint32_t cp) { return (bits[cp >> 6] >> (cp & 63)) & 1; }
  static void set_bit(uint64_t* bits, uint32_t cp) { bits[cp >> 6] |= uint64_t{1} << (cp & 63); }
  // Whether the character at q (or the end) can be the second character of a key; true
  // whenever unsure (a character beyond the BMP, malformed bytes).
  bool may_be_second(const unsigned char* q, const unsigned char* end) const;
  // Collects into second_ the characters that follow the first character of a key, from the
  // trie node (base) reached after that character.
  void collect_second(size_t base);

  SpmNormalizerOptions options_;
  std::vector<uint32_t> units_;  // the double array (copied: aligned)
  std::string strings_;          // the normalized strings (+ a guard NUL)
  size_t strings_size_ = 0;      // without the guard
  std::unique_ptr<SpecialMatcher> user_;
  bool user_first_[256] = {};     // the first bytes of the user-defined symbols
  bool plain_[256] = {};          // see the constructor (byte 0 is never plain: NUL rules)
  bool ascii_alone_[128] = {};    // the same, for an ASCII byte followed by an ASCII byte
  // Per ASCII byte, in a run: 2 always plain, 1 plain when the next byte is ASCII or the end,
  // 0 not (' ' is 0: spaces go through the whitespace rules).
  uint8_t ascii_run_[128] = {};
  uint8_t ascii_stop_[128] = {};  // 1 where ascii_run_ is 0: the bytes that end a run of ASCII
  bool stops_are_controls_ = true;  // every ASCII stop is below 0x21 or 0x7F (tested 8 at a time)
  // One bit per code point: set when the character is plain (see the constructor). plain2_
  // holds U+0080..U+07FF (2-byte UTF-8), plain3_ U+0800..U+FFFF (3-byte; the bits below U+0800
  // and those of the surrogates, which are invalid UTF-8, stay clear).
  uint64_t plain2_[32] = {};
  uint64_t plain3_[1024] = {};
  // A character that only starts longer keys (no key is the character alone, no user symbol
  // starts with it: kana and letters, which compositions start with) is itself when the next
  // character is never the second character of a key (a combining mark usually is): then no
  // trie walk. starts_longer_ marks the first kind (BMP, beyond ASCII), second_ the second
  // (the BMP; a second character beyond it is never ruled out: may_be_second).
  uint64_t starts_longer_[1024] = {};
  uint64_t second_[1024] = {};
  // By code point (BMP beyond ASCII; empty when there is none): 1 + the offset of the
  // replacement of a key that is exactly the character and starts no longer key, else 0.
  std::vector<uint32_t> alone_rule_;
  uint32_t alone_rule(uint32_t cp) const { return alone_rule_.empty() ? 0 : alone_rule_[cp]; }
};

// The whitespace words of a normalized sentence, as sentencepiece's trainer cuts them: a word
// starts at each U+2581 (or, with `suffix`, ends after each U+2581). Calls on_word(start, end).
template <class OnWord>
void spm_split_words(std::string_view text, bool suffix, OnWord&& on_word) {
  static constexpr char kSpace[] = "\xE2\x96\x81";
  auto is_space = [&](size_t i) { return text.compare(i, 3, kSpace, 3) == 0; };
  auto char_len = [&](size_t i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return n < text.size() - i ? n : text.size() - i;
  };
  size_t start = 0;
  if (suffix) {
    for (size_t i = 0; i < text.size();) {
      const bool ws = is_space(i);
      i += char_len(i);
      if (ws && i < text.size()) {
        on_word(start, i);
        start = i;
      }
    }
  } else {
    for (size_t i = 0; i < text.size();) {
      if (i > start && is_space(i)) {
        on_word(start, i);
        start = i;
      }
      i += char_len(i);
    }
  }
  if (start < text.size()) on_word(start, text.size());
}

}  // namespace ciyuan
