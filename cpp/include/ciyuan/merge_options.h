// What the merge trainers (bpe_trainer.h, wordpiece_trainer.h) take and give back: their
// shared options, their result and the progress callback. The loop itself (merge_loop.h) is
// internal to the trainers' .cc files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ciyuan {

// The options every merge trainer takes.
struct MergeOptions {
  uint64_t vocab_size = 30000;                // stop when the vocabulary has this many tokens (0: no limit)
  uint64_t max_merges = ~0ULL;                // stop after this many merges
  uint64_t min_frequency = 0;                 // pairs rarer than this are never merged
  std::vector<std::string> special_tokens;    // first ids, in this order
  std::vector<std::string> initial_alphabet;  // characters always in the alphabet
  int64_t limit_alphabet = -1;                // keep at most this many characters (-1: all)
  uint64_t max_token_length = 0;              // longest token in initial symbols (0: no limit)
  // Marks a symbol that continues a word ("##"); merging a + ##b gives "ab", ##a + ##b "##ab".
  std::string continuing_subword_prefix;
};

// What a merge trainer learned.
struct MergeResult {
  std::vector<std::string> tokens;                    // id -> token bytes
  std::vector<std::pair<uint32_t, uint32_t>> merges;  // (left id, right id) in merge order
  std::vector<uint64_t> merge_counts;                 // each merge's pair count when it merged
  size_t alphabet_size = 0;                           // tokens before the first merge
  std::string stop_reason;
  // With BpeTrainerConfig::live_vocab: the tokens still used by the words at the end, with
  // their counts, most frequent first (ties: the one met first, reading the words in order).
  std::vector<std::pair<uint32_t, uint64_t>> live_vocab;
};

// progress(done, total) is called now and then (total = the merge budget); it may throw to
// cancel training.
using TrainProgress = std::function<void(uint64_t, uint64_t)>;

}  // namespace ciyuan
