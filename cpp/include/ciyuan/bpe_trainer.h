// BPE training: learn merges from counted words (word_counter.h counts them).
//
// Split each word into initial symbols (characters or bytes), count every adjacent pair
// (weighted by the word's count), then repeat: take the most frequent pair, merge it in the
// words that contain it and update only the counts of the pairs around each merge (the shared
// incremental loop of merge_loop.h, with its cost). Counts are exact and 64-bit, so the
// result depends only on the words and the options (not on thread count or hash order);
// equal counts are broken by a documented rule (TieBreak).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/merge_options.h"

namespace ciyuan {

// Which of several pairs with the same count merges first.
enum class TieBreak {
  kSmallestIds = 0,  // Hugging Face's rule: smallest (left id, right id)
  kGreatestText = 1, // subword-nmt's rule: greatest (left text, right text), code point order
  kFirstSeen = 2,    // the classic tutorials' rule: the pair seen first (word order, then position)
  // As kFirstSeen, but a word that a merge changes moves behind all the others (in the order
  // the changed words had): document 000 re-inserts each merged word at the end of its dict.
  kFirstSeenMoved = 3,
};

// BPE's options beyond MergeOptions. min_frequency: stop when the best pair is rarer than
// this; max_token_length counts characters, or bytes with byte_level.
struct BpeTrainerConfig : MergeOptions {
  bool byte_level = false;                    // initial symbols are the 256 bytes
  std::string end_of_word_suffix;             // attached to a word's last character ("</w>")
  std::string end_of_word_symbol;             // or a separate last symbol ("l o w </w>")
  // With continuing_subword_prefix, Hugging Face's WordPiece-style BPE: every character but a
  // word's first carries the prefix ("hug" -> h ##u ##g). The prefixed characters get ids
  // after the plain alphabet, in code point order, except those listed in `continuing_order`
  // (prefixed forms such as "##e"), which come first in that order: a way to reproduce the
  // numbering of another trainer's run. Character-level only, without an end-of-word suffix
  // or symbol.
  std::vector<std::string> continuing_order;
  TieBreak tie_break = TieBreak::kSmallestIds;
  // Document 000's vocabulary: vocab_size counts the symbols the words still use (a merge may
  // add one, none, or remove one - document 001's +1/0/-1), checked after each merge, so at
  // least one merge is made even when the alphabet alone is larger; an empty word is its
  // end-of-word symbol alone. The result lists those symbols (MergeResult::live_vocab).
  bool live_vocab = false;
};

using BpeTrainerResult = MergeResult;

// Learns merges from `words` with `counts` (words in first-seen order). `words_done`, if set,
// is called once the words have been copied into the trainer (so their storage can be freed).
BpeTrainerResult train_bpe(const std::vector<std::string_view>& words,
                           const std::vector<uint64_t>& counts, const BpeTrainerConfig& config,
                           const TrainProgress& progress,
                           const std::function<void()>& words_done = nullptr);

// GPT-2's printable character for each byte, as a code point (bytes_to_unicode()).
uint32_t gpt2_printable(uint8_t byte);

}  // namespace ciyuan
