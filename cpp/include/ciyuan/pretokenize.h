// Pre-tokenizer scanners: split UTF-8 text exactly as `regex.findall(PATTERN, text)` does for
// a fixed set of well-known patterns, by hand-written linear-time scanners (no regex engine).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace ciyuan {

enum class PreTokPattern {
    // GPT-2 / r50k / p50k:
    //   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    GPT2,
    // cl100k_base:
    //   '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|
    //   \s++$|\s*[\r\n]|\s+(?!\S)|\s
    CL100K,
    // o200k_base (backtracking, not possessive):
    //   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
    //   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
    //   \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
    O200K,
    // Hugging Face `Whitespace`: \w+|[^\w\s]+ (whitespace is skipped).
    WORD_PUNCT,
    // \S+ (whitespace is skipped).
    WHITESPACE,
    // Llama 3 (cl100k's first, non-possessive spelling, as Llama 3's tokenizer.json has it):
    //   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
    //   \s*[\r\n]+|\s+(?!\S)|\s+
    // It differs from CL100K only at a whitespace run that ends the text and holds a newline
    // (CL100K's \s++$ takes the whole run; here the run ends at its last newline).
    LLAMA3,
    // Qwen2 / Qwen2.5 / Qwen3: LLAMA3 with \p{N} (one digit per piece) for \p{N}{1,3}.
    QWEN2,
};

// Finds the next piece at or after `pos` in `text` (valid UTF-8; invalid bytes are treated as
// punctuation, never read out of bounds). Returns false when there are no more pieces. For
// GPT2/CL100K/O200K pieces are contiguous (start == pos); the others skip whitespace.
//
// Character classes: GPT2/CL100K/O200K use tiktoken's view of Unicode (so ids match tiktoken);
// WORD_PUNCT/WHITESPACE use the `regex` module's. See scripts/gen_unicode_tables.py.
bool next_piece(PreTokPattern p, std::string_view text, size_t pos, size_t* start, size_t* end);

// Up to `max` pieces at or after `pos`, as [start, end) byte offsets in `out`; returns how many
// (0 when there are no more). The encoder's loop: one call per batch instead of per piece.
size_t next_pieces(PreTokPattern p, std::string_view text, size_t pos, std::pair<uint32_t, uint32_t>* out,
                   size_t max);

// All pieces as [start, end) byte offsets, appended to `out` (cleared first). Throws
// std::length_error when the text is 4 GiB or longer (offsets are 32-bit).
void split_pieces(PreTokPattern p, std::string_view text, std::vector<std::pair<uint32_t, uint32_t>>& out);

// The one parser of scanner names: "gpt2" (also "r50k_base", "p50k_base"), "cl100k_base",
// "o200k_base", "wordpunct", "whitespace", "llama3", "qwen2".
bool pattern_from_name(std::string_view name, PreTokPattern* out);
// The same, throwing InvalidInputError (naming the known names) for an unknown name.
PreTokPattern parse_pattern(std::string_view name);

}  // namespace ciyuan
