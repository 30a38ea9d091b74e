// Unigram language-model training (Kudo 2018), as SentencePiece's unigram trainer does it, over
// counted words (word_counter.h) instead of whole sentences.
//
// 1. Units. Each word (normalized text, "▁" for spaces) is cut where no piece may cross:
//    around user-defined symbols, around characters outside the required set (the most
//    frequent characters covering `character_coverage` of all characters; the rest are unknown
//    and never part of a piece), between Unicode scripts (split_by_unicode_script; Hiragana and
//    Katakana count as Han; "▁" joins its neighbour), between digits and other characters
//    (split_by_number) and between digits (split_digits). Every segmentation lattice of a word
//    is the product of its units' lattices (no piece crosses a cut), so EM and pruning over
//    distinct units with summed counts compute exactly what they would over the words.
// 2. Seeds: the suffix array of all units (separated by 0) gives every substring that occurs
//    at least twice (weighted by the unit counts) as an internal node of the LCP intervals, and
//    every unit suffix of a unit counted twice or more as a leaf; score = count x length; the
//    `seed_size` best (ties: smaller text first) plus every required character (score = its
//    count) are the seed pieces, with log(score / sum of scores) as log-probabilities.
// 3. EM rounds: `num_sub_iterations` times, the E-step (forward-backward over each unit's
//    lattice, expected piece counts weighted by the unit count) and the M-step (pieces expected
//    fewer than 0.5 times are dropped; log p = digamma(count) - digamma(total), the Bayesian
//    update). Then, while more than vocab_size x 1.1 pieces remain, pruning: a piece whose best
//    segmentation is not itself goes; a single character stays; for the others the loss of
//    removing the piece is its Viterbi count x (its log-probability - that of its best
//    alternative segmentation, with the counts moved to the alternative's pieces); the pieces
//    with the smallest loss go until max(vocab_size x 1.1, shrinking_factor x size) remain.
// 4. Final: the required characters, then the pieces by score, up to `vocab_size` pieces.
//
// Cost: the suffix array O(n log 16) for n characters of distinct units; each E-step and
// pruning O(sum over units of length x pieces starting per position), in parallel over fixed
// chunks of units (chunk results are added in chunk order, so the result does not depend on
// the thread count). Memory: the distinct units, the seeds and 8 chunk accumulators.
//
// The BPE model type (model_type=bpe in SentencePiece) uses the same units and the shared merge
// loop (bpe_trainer.h) with ties broken by the smallest ids (characters by code point, then
// merged pieces in creation order).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ciyuan/merge_options.h"

namespace ciyuan {

enum class UnigramModelType { kUnigram = 0, kBpe = 1 };

struct UnigramTrainerConfig {
  UnigramModelType model_type = UnigramModelType::kUnigram;
  uint64_t vocab_size = 8000;           // normal pieces to learn (meta pieces excluded)
  double character_coverage = 0.9995;   // share of characters the required set covers
  uint32_t max_piece_length = 16;       // in characters
  uint64_t seed_size = 1000000;         // seed pieces kept from the suffix array
  double shrinking_factor = 0.75;       // pruning keeps this share of the pieces per round
  uint32_t num_sub_iterations = 2;      // EM steps per round
  bool split_digits = false;            // every digit is its own piece
  bool split_by_unicode_script = true;  // no piece mixes scripts
  bool split_by_number = true;          // no piece mixes digits and other characters
  bool treat_whitespace_as_suffix = false;  // "▁" ends a word instead of starting it
  std::vector<std::string> user_defined_symbols;  // cut out of the words, never part of a piece
  int threads = 0;                      // <= 0: one per core
};

struct UnigramTrainerResult {
  std::vector<std::string> pieces;  // normal pieces, best first (BPE: required characters last)
  std::vector<float> scores;
  std::vector<std::string> required_chars;  // the covered characters, most frequent first
  uint64_t units = 0;                       // distinct units
  uint64_t seeds = 0;                       // seed pieces
  uint32_t rounds = 0;                      // EM rounds (Unigram) or merges (BPE)
};

UnigramTrainerResult train_unigram(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                                   const UnigramTrainerConfig& config, const TrainProgress& progress,
                                   const std::function<void()>& words_done = nullptr);

// The steps one at a time, on words taken whole (no cutting into units, every character kept),
// for the tests that hold them against ciyuan.reference.unigram.
namespace unigram_steps {
// Expected count of each piece (E-step) and the objective (sum of count x log Z).
std::pair<std::vector<double>, double> expected_counts(const std::vector<std::string>& words,
                                                       const std::vector<uint64_t>& counts,
                                                       const std::vector<std::string>& pieces,
                                                       const std::vector<double>& scores, int threads);
// The M-step: (kept piece indices, their new scores).
std::pair<std::vector<uint32_t>, std::vector<double>> m_step(const std::vector<double>& expected);
// Pruning to `size` pieces: the indices of the kept pieces, in index order.
std::vector<uint32_t> prune(const std::vector<std::string>& words, const std::vector<uint64_t>& counts,
                            const std::vector<std::string>& pieces, const std::vector<double>& scores,
                            uint64_t size, int threads);
// Seed pieces with their (count x length) scores, best first; characters not included.
std::vector<std::pair<std::string, uint64_t>> seeds(const std::vector<std::string>& words,
                                                    const std::vector<uint64_t>& counts, uint32_t max_piece_length,
                                                    uint64_t seed_size);
}  // namespace unigram_steps

}  // namespace ciyuan
