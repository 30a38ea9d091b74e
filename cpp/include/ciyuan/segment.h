// Dictionary-based Chinese word segmentation: forward, backward and bidirectional maximum
// matching, and jieba's max-probability path over the DAG of dictionary words.
//
// Maximum matching walks a double-array trie from each word start (FMM: left to right over the
// words; BMM: right to left over a trie of the reversed words) and takes the longest
// dictionary word, or one character when none matches: O(n * L) for n characters and words of
// at most L characters, in practice one or two trie steps per character. BiMM runs both and keeps the one with
// fewer words, then fewer single-character words, then BMM's. The DAG method scores every
// path through the dictionary words of a text by the sum of log(freq / total) and takes the
// best (ties to the longer word), by dynamic programming from the right end: O(n * L) too.
//
// In practice the cost is memory, not arithmetic: each run of text is decoded to trie labels
// once (three-byte characters, most of Chinese text, in a tight loop), the root's children and
// a pair table (below) stay in cache, and the one likely cache miss per word, the trie cell of
// its second character, is prefetched 16 characters ahead for every position (any one may
// start a word; the trie's first_bases() table makes that a single small read). FMM writes
// space-separated words at 140-180 MB/s on one core of the benchmark machine.
//
// A Dictionary is the mutable word list (ids stay stable across edits); it builds an immutable
// DictionaryIndex (the two tries and the word scores) on demand, so segmentation in many
// threads never sees a half-edited dictionary. Batches (many texts, long texts in chunks, whole
// files on all cores) are in segment_batch.h.
//
// One name per concept, the same in Python, the bindings and here: ciyuan.segment.Dictionary
// owns a _core.Dictionary, which holds a segment::Dictionary; ciyuan.segment.Segmenter owns a
// _core.Segmenter (a dictionary and its Options), which runs segment::Segmenter.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ciyuan/hash.h"
#include "ciyuan/trie.h"

namespace ciyuan {
namespace segment {

enum class Method : int { kForward = 0, kBackward = 1, kBidirectional = 2, kDag = 3 };

struct Options {
  Method method = Method::kForward;
  // The bakeoff baseline: whitespace dropped, every unmatched character a word of its own,
  // no block splitting. Otherwise single ASCII letters/digits join into runs, whitespace and
  // other characters are words of their own, and the DAG method works inside jieba's blocks.
  bool baseline = false;
  int max_word_len = 0;  // in characters; <= 0: the dictionary's longest word
};

// One word of the output: [start, end) byte offsets and the dictionary id (negative: not a
// dictionary word; kSpace: a whitespace character, which the command line's output leaves out).
struct Piece {
  static constexpr int32_t kOther = -1;
  static constexpr int32_t kSpace = -2;
  uint32_t start;
  uint32_t end;
  int32_t id;
};

// The immutable search structure built from a Dictionary.
struct DictionaryIndex {
  DoubleArrayTrie forward;  // words, as character labels
  // The trie of the reversed words, for BMM and BiMM only: built on first use (FMM and DAG
  // users never pay for it).
  const DoubleArrayTrie& backward() const;
  // The forward keys (labels of word k: labels[starts[k]] .. labels[starts[k+1]]) and their ids,
  // kept to build the backward trie.
  std::vector<uint32_t> labels;
  std::vector<size_t> starts;
  std::vector<int32_t> ids;
  // Character -> trie label: 1.. by descending frequency in the dictionary, so the labels of
  // common characters are small and their nodes close together; 0 for characters in no word.
  // BMP characters read a 128 KB table (16-bit labels, kept small because every character of
  // the text reads it); others, and the rare label above 0xFFFE, a hash map. The BMP
  // whitespace characters read kLookAside too (whatever their label), so that the decoding
  // loop, which takes every other value as the label, stops at them.
  static constexpr uint16_t kLookAside = 0xFFFF;
  std::vector<uint16_t> bmp_code;
  std::unordered_map<uint32_t, uint32_t> other_code;
  uint32_t alphabet = 1;
  uint32_t code(uint32_t cp) const {
    if (cp < 0x10000) {
      const uint16_t c = bmp_code[cp];
      if (c != kLookAside) return c;
    }
    auto it = other_code.find(cp);
    return it == other_code.end() ? 0 : it->second;
  }
  // For the 1023 most frequent characters, a bit per pair (first, second character) that
  // starts a word of two or more characters (backward_pairs: last, next-to-last). Common
  // characters start hundreds of words, so the trie's own child filter cannot reject the
  // second step of a one-character match; this 128 KB table, which stays in cache, can.
  static constexpr uint32_t kPairCodes = 1024;
  std::vector<uint64_t> forward_pairs, backward_pairs;
  static bool pair_may_follow(const uint64_t* pairs, uint32_t a, uint32_t b) {
    if (a >= kPairCodes || b >= kPairCodes) return true;
    const size_t k = static_cast<size_t>(a) * kPairCodes + b;
    return (pairs[k / 64] >> (k % 64)) & 1;
  }
  std::vector<double> logp;  // per id: log(freq) - log(total); kNoEdge when not a DAG edge
  int max_word_chars = 0;
  double log_total = 0.0;
  static constexpr double kNoEdge = -1e300;

 private:
  mutable std::once_flag backward_once_;
  mutable DoubleArrayTrie backward_;
};

// One line of a dictionary file, parsed (the word is a view into the file's text).
struct DictionaryEntry {
  std::string_view word;
  int64_t freq;
  bool has_freq;
};
struct DictionaryLineError {
  size_t line;  // 1-based
  std::string message;
};

// Parses dictionary text: one word per line, or `word freq [pos]` (jieba), or `word pos`.
// Blank lines are skipped; bad lines are reported (line number and reason).
void parse_dictionary(std::string_view data, std::vector<DictionaryEntry>& entries,
                      std::vector<DictionaryLineError>& errors);

class Dictionary {
 public:
  // Adds `word` (or sets its frequency); returns its id. Words without a frequency count 1.
  int32_t add(std::string_view word, int64_t freq, bool has_freq);
  // Adds every entry (as add() does, one after another).
  void add_all(const std::vector<DictionaryEntry>& entries);
  // Room for n more words (a bulk load avoids rehashing).
  void reserve(size_t n);
  // Removes `word`; false if it was not there.
  bool remove(std::string_view word);
  // The frequency of `word`, or -1 when it is not in the dictionary.
  int64_t freq(std::string_view word) const;

  size_t size() const { return live_; }
  int64_t total() const { return total_; }
  bool has_frequencies() const { return with_freq_ > 0; }
  int max_word_chars() const;
  const std::string& word(int32_t id) const { return words_[static_cast<size_t>(id)]; }
  size_t id_limit() const { return words_.size(); }
  // The live words with their frequencies, in insertion order.
  std::vector<std::pair<std::string, int64_t>> entries() const;

  // The index of the current word list (built now if the list changed since the last call).
  std::shared_ptr<const DictionaryIndex> index() const;
  // The index if it is up to date, else null (never builds).
  std::shared_ptr<const DictionaryIndex> cached_index() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index_;
  }

 private:
  int32_t add_locked(std::string_view word, int64_t freq, bool has_freq);
  int32_t add_hashed(std::string_view word, uint64_t hash, int64_t freq, bool has_freq);  // hash_bytes(word)

  mutable std::mutex mutex_;
  std::vector<std::string> words_;
  std::vector<int64_t> freqs_;
  std::vector<uint8_t> alive_, has_freq_;
  BytesMap ids_;  // word -> id (ids are never reused, so the map only grows)
  size_t live_ = 0, with_freq_ = 0;
  int64_t total_ = 0;
  mutable std::shared_ptr<const DictionaryIndex> index_;
};

// Segments texts one after another: the scratch arrays are made once, not per text
// (for a batch of short lines they would otherwise be most of the work). One Segmenter per
// thread: run() writes its scratch arrays.
class Segmenter {
 public:
  Segmenter(const DictionaryIndex& index, const Options& options);
  ~Segmenter();
  Segmenter(const Segmenter&) = delete;
  Segmenter& operator=(const Segmenter&) = delete;
  // Appends the words of `text` (valid UTF-8, under 4 GB: offsets are 32-bit) to `out`.
  void run(std::string_view text, std::vector<Piece>& out);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace segment
}  // namespace ciyuan
