// WordPiece training with the likelihood criterion (Schuster & Nakajima 2012; BERT's WordPiece).
//
// Every word starts as its characters, the first plain and the others with the continuation
// prefix ("hug" -> h ##u ##g). Each step merges the adjacent pair (a, b) with the highest
//     score = count(ab) / (count(a) * count(b)),
// counts weighted by word frequency in the current segmentation; a + ##b -> ab, ##a + ##b -> ##ab.
//
// Incremental, like the BPE trainer: a pair -> words index, so a merge touches only the words
// holding the pair, and a lazy max-heap of scores. A merge lowers count(a) and count(b), which
// raises the score of every other pair holding a or b; instead of re-pushing all of them at
// once, a and b are marked "dirty". Any pair holding a symbol s scores at most 1 / count(s)
// (count(sz) <= count(z)), so a dirty symbol's pairs are re-pushed (refreshed) only when that
// bound reaches the best validated score - in practice only rare symbols, which have few pairs.
// The popped pair is therefore always the true maximum.
//
// Scores are compared exactly: count(ab) * count(c) * count(d) in 128-bit integers, the counts
// bounded by the corpus' weighted symbol total (< 2^42, checked). Ties: the higher count(ab),
// then the smaller (left id, right id). The result depends only on the words, their counts
// and the options - not on word order, thread count or hash order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ciyuan/merge_options.h"

namespace ciyuan {

// WordPiece's options are MergeOptions; the prefix defaults to BERT's. min_frequency: pairs
// rarer than this are never merged; max_token_length counts characters, prefix not counted.
struct WordPieceTrainerConfig : MergeOptions {
  WordPieceTrainerConfig() { continuing_subword_prefix = "##"; }
};

// tokens: the special tokens, the alphabet in code point order, the prefixed alphabet in the
// same order (both forms of every character), then merged tokens in creation order;
// merge_counts: count(ab) when each pair merged.
using WordPieceTrainerResult = MergeResult;

// Learns a WordPiece vocabulary from `words` with `counts`. `words_done`, if set, is called once
// the words have been copied (so their storage can be freed). progress as for train_bpe.
WordPieceTrainerResult train_wordpiece(const std::vector<std::string_view>& words,
                                       const std::vector<uint64_t>& counts,
                                       const WordPieceTrainerConfig& config, const TrainProgress& progress,
                                       const std::function<void()>& words_done = nullptr);

}  // namespace ciyuan
