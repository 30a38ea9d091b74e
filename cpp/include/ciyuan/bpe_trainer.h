// BPE training: count the words of a corpus, then learn merges.
//
// 1. WordCounter: pre-tokenize text (a native scanner, or spans chosen by the caller) and count
//    each distinct piece, on all cores; memory grows with the distinct words, not the corpus.
// 2. train_bpe: split each word into initial symbols (characters or bytes), count every
//    adjacent pair (weighted by the word's count), then repeat: take the most frequent pair
//    from a lazy max-heap, merge it in the words that contain it (found through an index from
//    each pair to its words), and update only the counts of the pairs around each merge.
//    Cost: O(words' symbols) to start, then per merge O(total length of the words touched +
//    log heap); never a full recount.
//
// Counts are exact and 64-bit, so the result depends only on the corpus and the options (not
// on thread count or hash order); equal counts are broken by a documented rule (TieBreak).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ciyuan {

class BertFrontEnd;
struct BertOptions;

// Which of several pairs with the same count merges first.
enum class TieBreak {
  kSmallestIds = 0,  // Hugging Face's rule: smallest (left id, right id)
  kGreatestText = 1, // subword-nmt's rule: greatest (left text, right text), code point order
  kFirstSeen = 2,    // the classic tutorials' rule: the pair seen first (word order, then position)
};

// Distinct words with 64-bit counts and the position where each was first seen.
class WordCounter {
 public:
  // `pattern` is a PreTokPattern, or -1 for none (each text or line is one word).
  explicit WordCounter(int pattern);
  // Words cut by the BERT front end (BertNormalizer + BertPreTokenizer): normalized words.
  explicit WordCounter(const BertOptions& bert);
  ~WordCounter();
  WordCounter(const WordCounter&) = delete;
  WordCounter& operator=(const WordCounter&) = delete;

  // Each text is pre-tokenized on its own; texts are shared among `threads` threads
  // (<= 0: one per core). Texts must be valid UTF-8 (the caller checks).
  void add_texts(const std::vector<std::string_view>& texts, int threads);
  // `buffer` holds whole lines; each line (with its '\n') is pre-tokenized on its own, as the
  // trainers of Hugging Face and subword-nmt read files.
  void add_lines(std::string_view buffer, int threads);
  // Pieces chosen by the caller: [start, end) byte spans of `text`.
  void add_spans(std::string_view text, const std::vector<std::pair<uint32_t, uint32_t>>& spans);
  // A pre-counted word.
  void add_word(std::string_view word, uint64_t count);
  // Reads a UTF-8 file in chunks of whole lines and counts them as add_lines does. Returns 0 and
  // sets the byte offset and line (1-based) of the first invalid UTF-8 byte if there is one.
  size_t add_file(const std::string& path, int threads, uint64_t* bad_offset, uint64_t* bad_line);
  // Frees the words (after training has copied them).
  void clear();

  size_t size() const;
  uint64_t total() const;  // sum of counts
  // The words in the order they were first seen, with their counts.
  void words(std::vector<std::string_view>* words, std::vector<uint64_t>* counts) const;

 private:
  struct Table;
  int pattern_;
  std::unique_ptr<const BertFrontEnd> bert_;  // set: words come from the BERT front end
  uint64_t seen_ = 0;  // bytes (or words) consumed so far: the "first seen" clock
  Table* table_;
};

struct BpeTrainerConfig {
  uint64_t vocab_size = 30000;               // stop when the vocabulary has this many tokens (0: no limit)
  uint64_t max_merges = ~0ULL;                // stop after this many merges
  uint64_t min_frequency = 0;                 // stop when the best pair is rarer than this
  std::vector<std::string> special_tokens;    // first ids, in this order
  bool byte_level = false;                    // initial symbols are the 256 bytes
  std::vector<std::string> initial_alphabet;  // characters always in the alphabet
  int64_t limit_alphabet = -1;                // keep at most this many characters (-1: all)
  uint64_t max_token_length = 0;              // longest token in characters / bytes (0: no limit)
  std::string end_of_word_suffix;             // attached to a word's last character ("</w>")
  std::string end_of_word_symbol;             // or a separate last symbol ("l o w </w>")
  // Hugging Face's WordPiece-style BPE: every character but a word's first carries this prefix
  // ("hug" -> h ##u ##g), and merging a + ##b gives "ab" (the right part's prefix is dropped).
  // The prefixed characters get ids after the plain alphabet, in code point order, except
  // those listed in `continuing_order` (prefixed forms such as "##e"), which come first in that
  // order: a way to reproduce the numbering of another trainer's run. Character-level only,
  // without an end-of-word suffix or symbol.
  std::string continuing_subword_prefix;
  std::vector<std::string> continuing_order;
  TieBreak tie_break = TieBreak::kSmallestIds;
};

struct BpeTrainerResult {
  std::vector<std::string> tokens;                    // id -> token bytes
  std::vector<std::pair<uint32_t, uint32_t>> merges;  // (left id, right id) in merge order
  std::vector<uint64_t> merge_counts;                 // each merge's pair count when it merged
  size_t alphabet_size = 0;                           // specials + alphabet (+ marker variants)
  std::string stop_reason;
};

// progress(done, total) is called now and then (total = the merge budget); it may throw to
// cancel training.
using TrainProgress = std::function<void(uint64_t, uint64_t)>;

// Learns merges from `words` with `counts` (words in first-seen order). `words_done`, if set,
// is called once the words have been copied into the trainer (so their storage can be freed).
BpeTrainerResult train_bpe(const std::vector<std::string_view>& words,
                           const std::vector<uint64_t>& counts, const BpeTrainerConfig& config,
                           const TrainProgress& progress,
                           const std::function<void()>& words_done = nullptr);

// GPT-2's printable character for each byte, as a code point (bytes_to_unicode()).
uint32_t gpt2_printable(uint8_t byte);

}  // namespace ciyuan
