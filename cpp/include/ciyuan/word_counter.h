// Word counting, the trainers' first pass: pre-tokenize a corpus and count each distinct piece.
//
// Text is cut by a native scanner (a PreTokPattern), by the BERT front end (BertNormalizer +
// BertPreTokenizer), or into spans the caller chose; every trainer then sees only distinct
// words with counts. Counting runs on all cores (each thread fills its own table, merged at
// the end) and memory grows with the distinct words, not with the corpus. Counts are exact and
// 64-bit; each word also keeps the position where it was first seen, so the words come out in
// an order that does not depend on the thread count or on hash order.
//
// Under a memory limit (set_memory_limit) every table checks, before it grows, that the bytes
// it holds plus the growth stay within its share of the limit; if not, it writes its words as a
// sorted run to the spill directory and starts empty (word_runs.h). finish() merges the runs
// back: counts add and the first-seen position is the smallest, so the words, counts and order
// are exactly those of counting in memory. Positions are global (the counter's clock), which
// is why a run may be written by any table at any time. The merged words are held compactly:
// the dense entries and key bytes, sized exactly, without the hash index.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ciyuan/front_end.h"

namespace ciyuan {

// Distinct words with 64-bit counts and the position where each was first seen.
class WordCounter {
 public:
  // Words as `front_end` cuts them: each text or line whole, a scanner's pieces, or the
  // normalized words of the BERT front end (BertNormalizer + BertPreTokenizer).
  explicit WordCounter(const FrontEnd& front_end);
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

  // Spill sorted runs into `directory` (which must exist) so that the tables stay within
  // `bytes` (0: no limit). Half goes to the main table, a quarter to the threads' tables of a
  // batch (at least 64 KiB each: a small limit counts on fewer threads), and file chunks are
  // read in pieces of at most bytes / 16.
  void set_memory_limit(uint64_t bytes, const std::string& directory);
  // Merges the spilled runs (if any) back into the table, held exactly sized without the index
  // (also when nothing was spilled); the counter may be added to after.
  void finish();
  // Adds `other`'s words as if they had been counted after this counter's: its first-seen
  // positions move past this counter's clock. Two counters over consecutive parts of a corpus,
  // merged, equal one counter over the whole. `other` is left unchanged.
  void merge(const WordCounter& other);
  // The words (in first-seen order), counts, clock and total as one byte string, and back
  // (into a counter with no runs pending; what it adds later is cut by its own front end).
  std::string dump() const;
  void load(std::string_view data);

  size_t memory() const;       // bytes the main table holds now
  size_t peak_memory() const;  // the most the main table held
  size_t runs() const;         // runs spilled so far
  uint64_t clock() const { return seen_; }

  size_t size() const;
  uint64_t total() const;  // sum of counts
  // The words in the order they were first seen, with their counts.
  void words(std::vector<std::string_view>* words, std::vector<uint64_t>* counts) const;

 private:
  struct Table;
  struct Spill;
  int max_parts() const;  // threads' tables a batch may use (fewer under a small limit)
  FrontEnd front_end_;
  std::unique_ptr<const BertFrontEnd> bert_;  // built from front_end_.bert for kBert only
  uint64_t seen_ = 0;  // bytes (or words) consumed so far: the "first seen" clock
  Table* table_;
  std::unique_ptr<Spill> spill_;  // set by set_memory_limit
  size_t chunk_bytes_ = 8 << 20;  // add_file's read size
  size_t runs_before_ = 0;        // runs spilled under earlier limits
};

}  // namespace ciyuan
