// Unigram language model (SentencePiece's "unigram" model type): a normalized text (spaces
// already `▁`) is cut into the pieces whose scores (log probabilities) sum highest.
//
// The lattice, as SentencePiece builds it: from each character, every NORMAL or USER_DEFINED
// piece the text starts with (a walk down the trie of those pieces, one step per character);
// UNUSED, CONTROL, UNKNOWN and BYTE pieces never enter. A NORMAL piece scores its score; a
// USER_DEFINED piece 0.1 * (its length in bytes) - 0.1, whatever its score field. Where no
// piece of exactly one character starts, an unknown node of one character scores (lowest
// NORMAL score) - 10. Viterbi accumulates in float from left to right; a candidate replaces a
// node's best only when strictly greater, so on ties the candidate whose last piece starts
// first (the longest last piece) wins. Before the nodes from a character, when the best score
// there is below -100000 or above 100000, SentencePiece (0.2.x) re-centres: that score is
// subtracted from it (making it 0) and from every later position already reached, so on long
// texts the float sums restart near 0 and round differently from one uninterrupted sum.
// Consecutive unknown characters come out as one unknown token; with byte fallback an unknown
// character is its UTF-8 bytes' <0xXX> pieces instead.
//
// Speed: when every segmentation breaks at known places (spm_pieces.h: WordBreak), each word
// is its own small Viterbi, and words of up to 16 bytes are cached (SpmWordCache; up to 8 nodes,
// unknown ones included) with the smallest score margin of their decisions; a cached word is
// reused only when that margin is far above float rounding at the running total and the
// total is far enough from the re-centring threshold that no node of the word can pass it, so
// the result is always what one float Viterbi over the whole text gives. A Viterbi decodes the
// word's characters to trie codes once, then walks from each character in one pass; the first
// step is a table by code (first_), so a character in no piece or only in a piece alone (most
// CJK text) costs no trie step. Cost: O(n * L) trie steps for n characters (L the longest
// piece in characters), O(1) per cached word; no allocation per token or word.
//
// Hugging Face's Unigram (SpmModelConfig::hf_viterbi, the models read from tokenizer.json)
// differs in its arithmetic only: scores and sums in double (the scores as given, not rounded
// to float), each piece it is given (a pre-token) from 0 whatever is adjacent, no re-centring,
// the unknown node scoring (lowest score of ALL pieces) - 10, a USER_DEFINED piece its own
// score. Relaxation order and the strict tie rule are the same. Words still split at WordBreak
// (no piece crosses one, so the best score there is every later path's prefix, carried in
// double exactly as one Viterbi over the piece has it); a cached word is reused as is when it
// starts its piece (sums from 0: the cached path IS the Viterbi's) and otherwise when its
// margin is far above double rounding at the running total.
//
// n-best: the k best paths by a k-best list per position (O(n * L * k log k)); sampling:
// forward-filtering backward-sampling over all paths with scores scaled by alpha
// (nbest_size <= 0), one of the k best with probability proportional to exp(alpha * score)
// (k > 1), or Viterbi (1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/spm_pieces.h"

namespace ciyuan {

class UnigramModel final : public SpmModel {
 public:
  // `exact_scores` (by id, as given; only with config.hf_viterbi, where it is required): the
  // double scores Hugging Face's Viterbi adds; `scores` are they rounded to float.
  UnigramModel(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
               SpmModelConfig config, std::vector<double> exact_scores = {});

  // Appends the Viterbi tokens of text[start, end) with spans relative to `text`; `total` is
  // the running path score before it (updated), as one Viterbi over a longer text has it.
  void encode_span(std::string_view text, uint32_t start, uint32_t end, float& total, std::vector<Token>& out) const;

  void encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const override;
  void encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                   std::vector<Token>& out) const override;
  void sample_pieces(std::string_view text, const Span* pieces, size_t n, const SampleOptions& options, Rng& rng,
                     std::vector<Token>& out) const override;
  void nbest_piece(std::string_view text, Span piece, size_t k, std::vector<std::vector<Token>>& paths,
                   std::vector<float>& scores) const override;

  float unk_score() const { return unk_score_; }
  bool hf_viterbi() const { return hf_; }

  // One edge of the lattice: the piece `id` (kUnkNode: an unknown character) over [start, end).
  struct Edge {
    uint32_t start, end;
    int32_t id;
    double score;  // the float score (SentencePiece) or the exact one (hf_viterbi)
  };
  static constexpr int32_t kUnkNode = -2;
  // Every edge of the lattice of text[start, end), by start (positions relative to `text`).
  void lattice(std::string_view text, uint32_t start, uint32_t end, std::vector<Edge>& edges) const;

 private:
  struct Scratch;  // a thread's buffers for the Viterbi (unigram.cc)
  static Scratch& scratch();
  // By trie code, what a piece's first character decides: the piece of that character alone
  // (kUnkNode: none, an unknown node) with its lattice score, and the trie node of the
  // character to walk on from (-1: no longer piece starts with it, no walk at all).
  struct First {
    int32_t node;
    int32_t id;
    float score;
  };
  // Decodes w[0, n) into the scratch's trie codes and byte offsets; returns the characters.
  uint32_t decode(const char* w, uint32_t n, Scratch& s) const;
  // Calls relax(i, j, id, score) for each node of the lattice of the characters code[0, chars)
  // over characters [i, j), by start i and then end j (an unknown node last at its start), and
  // start(i) before the nodes from character i.
  // T: float (SentencePiece's scores) or double (hf_viterbi's exact scores).
  template <class T, class Start, class Relax>
  void each_edge(const uint32_t* code, uint32_t chars, Start&& start, Relax&& relax) const;
  // Float Viterbi over w[0, n) from `total`, SentencePiece's arithmetic; the path goes to the
  // scratch's path as (end, id) pairs, last piece first.
  // T = double: hf_viterbi's double Viterbi (no re-centring).
  template <class T>
  T viterbi(const char* w, uint32_t n, T total, Scratch& s) const;
  // Viterbi of w[0, n) from 0 in double (of the T scores), with the smallest margin between the
  // best and the second best candidate at each node of the best path (infinity if there is no
  // choice). For T = double it is exactly viterbi<double> from 0, path and all.
  template <class T>
  double viterbi_margin(const char* w, uint32_t n, Scratch& s) const;
  template <class T>
  void encode_word(std::string_view text, uint32_t start, uint32_t end, T& total, size_t first,
                   std::vector<Token>& out, SpmWordCache* cache, Scratch& s) const;
  template <class T>
  void encode_span_as(std::string_view text, uint32_t start, uint32_t end, T& total, std::vector<Token>& out) const;
  template <class T>
  void encode_pieces_as(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const;
  // An unknown node in a word cache entry (kUnkNode as stored there; no piece has this id).
  static constexpr uint32_t kCachedUnk = static_cast<uint32_t>(kUnkNode);
  // Appends the tokens of a cached word [start, end), as emit() would.
  void replay(const char* text, const SpmWordCache::Entry& entry, uint32_t start, uint32_t end, size_t first,
              std::vector<Token>& out) const;
  // Appends the path (last piece first, as viterbi() leaves it) of the word at `start`.
  void emit(const char* text, uint32_t start, const std::pair<uint32_t, int32_t>* path, size_t count, size_t first,
            std::vector<Token>& out) const;
  void emit_path(std::string_view text, const std::vector<Edge>& path, std::vector<Token>& out) const;
  float piece_score(int32_t id) const { return id == kUnkNode ? unk_score_ : lattice_score_[static_cast<size_t>(id)]; }

  std::vector<float> lattice_score_;  // per id: its score in the lattice (NORMAL, USER_DEFINED)
  std::vector<First> first_;          // per trie code (code 0: in no piece)
  float unk_score_;
  bool hf_ = false;                   // SpmModelConfig::hf_viterbi
  std::vector<double> score64_;       // hf_: per id, its exact lattice score
  double unk_score64_ = 0;            // hf_: the unknown node's
  double reach64_ = 0;                // hf_: the largest |lattice score|, the unknown one's included
  uint32_t longest_ = 1;              // the longest lattice piece, in bytes (>= its characters)
  double reach_;                      // the most a character moves a score (constructor)
  float cache_total_limit_;           // |running total| below which a cached word is safe

  // SentencePiece (0.2.x) re-centres its running scores when the one where the next nodes
  // start is past this either way (see viterbi).
  static constexpr float kScoreReset = 100000.0f;
};

}  // namespace ciyuan
