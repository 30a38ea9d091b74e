// SentencePiece's BPE model (model_type=bpe, as in Llama 2): a normalized text (spaces already
// `▁`) starts as symbols - a USER_DEFINED piece the text starts with (the longest) is one
// frozen symbol, anything else one character - and the adjacent pair whose concatenation is a
// NORMAL, USER_DEFINED or UNUSED piece with the highest score merges, the leftmost on ties,
// until no pair is a piece. Frozen symbols never merge. A final symbol that is an UNUSED piece
// goes back to the two symbols it was made of (recursively). A symbol that is no piece is the
// unknown piece; consecutive unknown symbols are one unknown token, and with byte fallback an
// unknown symbol is its UTF-8 bytes' <0xXX> pieces.
//
// Sampling is BPE-dropout: each merge the loop would make is skipped with probability alpha.
//
// Cost: O(m log m) for a word of m symbols (a binary heap of candidate pairs over a linked
// list of symbols, stale entries skipped when popped; pairs found by id in a table of all
// splits of the pieces; a word is cut at its frozen symbols, which no merge crosses); words
// of up to 16 bytes are cached (spm_pieces.h: SpmWordCache) when every segmentation breaks at
// `▁` (WordBreak). No allocation per token: the symbol list and the heap are per-thread
// buffers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/hash.h"
#include "ciyuan/spm_pieces.h"

namespace ciyuan {

class SpmBpeModel final : public SpmModel {
 public:
  SpmBpeModel(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
              SpmModelConfig config);

  void encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const override;
  void encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                   std::vector<Token>& out) const override;
  // BPE-dropout with probability options.alpha (nbest_size is ignored).
  void sample_pieces(std::string_view text, const Span* pieces, size_t n, const SampleOptions& options, Rng& rng,
                     std::vector<Token>& out) const override;

 private:
  // Appends the tokens of text[start, end); `dropout` > 0 skips merges at random.
  void encode_span(std::string_view text, uint32_t start, uint32_t end, size_t first, std::vector<Token>& out,
                   SpmWordCache* cache, double dropout, Rng* rng) const;
  void merge_word(const char* text, uint32_t start, uint32_t end, size_t first, std::vector<Token>& out,
                  double dropout, Rng* rng) const;
  // Appends a final symbol text[s, e) that is the piece `id` (kNone: no piece).
  void emit_symbol(const char* text, uint32_t s, uint32_t e, uint32_t id, size_t first, std::vector<Token>& out) const;

  // (left id, right id) -> the matchable piece that is their concatenation (PairMap's `id`;
  // `rank` unused), for every split of every matchable piece into two pieces: the merge loop
  // looks pairs up by id instead of hashing their bytes. Symbols that are no piece (unknown
  // characters share the unknown id) still go by bytes.
  PairMap pairs_;
  bool has_unused_ = false;  // any UNUSED piece (merge_word then keeps each word whole)
  // A run of more characters than this is merged window by window (see merge_word).
  size_t window_chars_ = size_t{1} << 16;
};

}  // namespace ciyuan
