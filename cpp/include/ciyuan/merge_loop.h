// The merge loop the BPE and WordPiece trainers share.
//
// Both trainers learn a vocabulary the same way: every word starts as its initial symbols, all
// in one flat array of 32-bit ids (a word shrinks in place as it merges); every adjacent pair
// is counted once (weighted by the word's count); then each step takes the best pair from a
// lazy max-heap, merges it in the words that may hold it (each pair keeps the list of those
// words; stale entries are skipped, and the list is dropped when the pair's count reaches
// zero) and updates only the counts of the pairs around each merge - never a full recount.
// Cost: O(words' symbols) to start, then per merge O(total length of the words touched + log
// heap).
//
// What differs is the scoring rule - which pair is best - and the initial symbols. So
// MergeTrainer is a template over its trainer (CRTP): the trainer's scoring, heap and hooks
// are inlined into the loop, with no per-pair virtual call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ciyuan/errors.h"
#include "ciyuan/hash.h"
#include "ciyuan/merge_options.h"
#include "ciyuan/trainer_util.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace train_detail {

// Code point -> initial symbol id, with a direct table for ASCII (most characters of most
// corpora), so splitting the words rarely hashes.
class CharIds {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  CharIds() { std::fill(std::begin(ascii_), std::end(ascii_), kNone); }
  void set(uint32_t cp, uint32_t id) {
    if (cp < 128) {
      ascii_[cp] = id;
    } else {
      other_[cp] = id;
    }
  }
  uint32_t find(uint32_t cp) const {
    if (cp < 128) return ascii_[cp];
    auto it = other_.find(cp);
    return it == other_.end() ? kNone : it->second;
  }
  bool contains(uint32_t cp) const { return find(cp) != kNone; }

 private:
  uint32_t ascii_[128];
  std::unordered_map<uint32_t, uint32_t> other_;
};

// The text of a one-character token: prefix + the character + suffix.
inline std::string char_token(const std::string& prefix, uint32_t cp, const std::string& suffix = std::string()) {
  std::string s = prefix;
  utf8::append(cp, s);
  return s + suffix;
}

// The shared trainer, over its options `Config` (a MergeOptions) and its heap entries `Entry`
// (what the scoring rule compares). Derived (the trainer) provides:
//   static constexpr const char* kStartTokens;   what the first tokens are (for an error message)
//   void build_alphabet(words, counts);           the alphabet's tokens (after the special tokens)
//   void split_words(words, counts);              each word's initial symbols (push_word)
//   Entry entry(uint32_t p) const;  Less less() const;   pair p's heap entry now, and their order
//   bool pushable(uint32_t p) const;              whether pair p belongs in the heap
//   uint32_t pop_best();                          the pair to merge next, kNone when none is left
//   const char* refuse(uint32_t p) const;         a reason to stop instead of merging p, or null
//   bool tracks_offsets() const;                  whether on_inc needs the pair's symbol offset
// and may hide the hooks below (no-ops, or the usual vocabulary-size rule).
template <class Derived, class Config, class Entry>
class MergeTrainer {
 public:
  MergeTrainer(const Config& config, const TrainProgress& progress, const std::function<void()>& words_done)
      : cfg_(config), progress_(progress), words_done_(words_done) {}

  MergeResult run(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    for (const std::string& s : cfg_.special_tokens) add_token(s, 1);
    self().build_alphabet(words, counts);
    result_.alphabet_size = tokens_.size();
    if (cfg_.vocab_size && tokens_.size() > cfg_.vocab_size && !self().vocab_may_shrink()) {
      throw Error(ErrorKind::kInvalidInput, "vocab_size " + std::to_string(cfg_.vocab_size) + " is smaller than the " +
                                                std::to_string(tokens_.size()) + " tokens the training starts with (" +
                                                Derived::kStartTokens + "); raise vocab_size or lower limit_alphabet");
    }
    self().split_words(words, counts);
    if (words_done_) words_done_();  // the caller may free the words now
    count_pairs();
    merge_loop();
    self().finish();
    result_.tokens = std::move(tokens_);
    return std::move(result_);
  }

 protected:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  struct WordInfo {  // one cache line fetch per word visited
    uint64_t off;    // of its symbols in syms_
    int64_t count;
    uint32_t len;    // symbols left
    uint32_t stamp;  // the last merge step that visited it
  };

  Derived& self() { return static_cast<Derived&>(*this); }

  // ---- hooks (Derived hides the ones it needs)
  void on_new_token() {}
  void on_new_pair() {}
  void on_inc(uint32_t /*p*/, uint32_t /*w*/, uint32_t /*offset*/) {}
  void on_merged(uint32_t /*a*/, uint32_t /*b*/, uint32_t /*merged*/, int64_t /*count*/) {}
  void after_merge(uint32_t /*a*/, uint32_t /*b*/, uint32_t /*merged*/, bool /*existed*/) {}
  void on_word_changed(uint32_t /*w*/) {}  // a merge is about to change word w
  void finish() {}                          // after the last merge, before the result is returned
  // The vocabulary size vocab_size is compared with before each merge, and the most merges
  // that can fit (for the progress bar).
  bool vocab_may_shrink() const { return false; }
  uint64_t vocab_now() const { return tokens_.size(); }
  uint64_t merge_limit() const { return merge_budget(cfg_.vocab_size, cfg_.max_merges, tokens_.size()); }

  // ---- tokens
  uint32_t add_token(const std::string& bytes, uint32_t length) {
    uint32_t id = token_ids_.find(bytes);
    if (id != BytesMap::kMissing) return id;
    id = static_cast<uint32_t>(tokens_.size());
    token_ids_.insert(bytes, id);
    tokens_.push_back(bytes);
    token_len_.push_back(length);
    self().on_new_token();
    return id;
  }

  // The characters of the words with their counts (weighted by the words' counts);
  // on_char(cp, first) also sees whether a character starts its word, and on_last(cp) each
  // word's last character.
  template <class OnChar, class OnLast>
  static std::unordered_map<uint32_t, uint64_t> count_chars(const std::vector<std::string_view>& words,
                                                            const std::vector<uint64_t>& counts, OnChar&& on_char,
                                                            OnLast&& on_last) {
    std::unordered_map<uint32_t, uint64_t> freq;
    for (size_t w = 0; w < words.size(); ++w) {
      const char* p = words[w].data();
      const char* end = p + words[w].size();
      uint32_t cp = 0;
      while (p < end) {
        const bool first = p == words[w].data();
        p += utf8::decode(p, end, &cp);
        on_char(cp, first);
        add_count(freq[cp], counts[w]);
      }
      if (!words[w].empty()) on_last(cp);
    }
    return freq;
  }

  // Appends the symbols of a word's characters: id_of(cp, first, last), where kNone (a
  // character left out of the alphabet by limit_alphabet) is dropped, as Hugging Face does.
  template <class IdOf>
  void push_chars(std::string_view word, IdOf&& id_of) {
    const char* p = word.data();
    const char* end = p + word.size();
    while (p < end) {
      uint32_t cp;
      const bool first = p == word.data();
      p += utf8::decode(p, end, &cp);
      const uint32_t id = id_of(cp, first, p == end);
      if (id != kNone) syms_.push_back(id);
    }
  }

  // The word whose symbols start at syms_[start] (none: the word is left out).
  void push_word(size_t start, int64_t count) {
    if (syms_.size() == start) return;
    words_.push_back(WordInfo{start, count, static_cast<uint32_t>(syms_.size() - start), 0});
  }

  // ---- pairs
  static uint32_t left(uint64_t key) { return static_cast<uint32_t>(key >> 32); }
  static uint32_t right(uint64_t key) { return static_cast<uint32_t>(key); }
  static uint64_t make_key(uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 32) | b; }

  uint32_t find_pair(uint64_t key) { return pair_index_.find(key, pair_key_); }

  uint32_t pair_index(uint64_t key) {
    uint32_t idx = find_pair(key);
    if (idx != PairIndex::kNone) return idx;
    idx = static_cast<uint32_t>(pair_key_.size());
    pair_key_.push_back(key);
    pair_index_.insert(key, idx, pair_key_);
    pair_count_.push_back(0);
    pair_words_.emplace_back();
    pair_stamp_.push_back(0);
    self().on_new_pair();
    return idx;
  }

  bool too_long(uint32_t a, uint32_t b) const {
    return cfg_.max_token_length && token_len_[a] + token_len_[b] > cfg_.max_token_length;
  }

  void touch(uint32_t p) {
    if (pair_stamp_[p] != step_) {
      pair_stamp_[p] = step_;
      touched_.push_back(p);
    }
  }

  // Word w holds (a, b) once more, at symbol offset `offset` (tracked only if the trainer asks).
  void inc(uint32_t a, uint32_t b, uint32_t w, uint32_t offset) {
    if (too_long(a, b)) return;
    uint32_t p = pair_index(make_key(a, b));
    pair_count_[p] += words_[w].count;
    WordList& ws = pair_words_[p];
    if (ws.empty() || ws.back() != w) ws.push_back(w);
    self().on_inc(p, w, offset);
    touch(p);
    increased_.push_back(p);
  }

  void dec(uint32_t a, uint32_t b, uint32_t w) {
    if (too_long(a, b)) return;
    dec_pair(find_pair(make_key(a, b)), w);
  }

  void dec_pair(uint32_t p, uint32_t w) {
    pair_count_[p] -= words_[w].count;
    touch(p);
  }

  void count_pairs() {
    step_ = 1;
    const bool offsets = self().tracks_offsets();
    for (uint32_t w = 0; w < words_.size(); ++w) {
      const uint32_t* s = syms_.data() + words_[w].off;
      uint32_t off = 0;
      for (uint32_t i = 0; i + 1 < words_[w].len; ++i) {
        inc(s[i], s[i + 1], w, off);
        if (offsets) off += token_len_[s[i]];
      }
    }
    touched_.clear();
    increased_.clear();
    self().build_heap();
  }

  // ---- the heap: a lazy max-heap of entries, checked against the pairs' current state when
  // popped (pop_best), so a pair whose count changed is re-pushed rather than updated in place.
  void push(uint32_t p) { push_entry(self().entry(p)); }

  // std::push_heap's sift-up, written out: as a call it is not inlined into the merge loop,
  // which cost 1% more instructions in training.
  void push_entry(const Entry& e) {
    const auto less = self().less();
    size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!less(heap_[parent], e)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  Entry pop_entry() {
    std::pop_heap(heap_.begin(), heap_.end(), self().less());
    const Entry e = heap_.back();
    heap_.pop_back();
    return e;
  }

  // One entry for every pair that belongs in the heap.
  void build_heap() {
    heap_.clear();
    heap_.reserve(pair_key_.size());
    for (uint32_t p = 0; p < pair_key_.size(); ++p)
      if (self().pushable(p)) heap_.push_back(self().entry(p));
    std::make_heap(heap_.begin(), heap_.end(), self().less());
  }

  // ---- merging
  // Merges every (a, b) of word w into `merged`, left to right, updating the pair counts.
  // kOffsets: also track symbol offsets (for trainers that need where a pair first occurs).
  template <bool kOffsets>
  void merge_word(uint32_t w, uint32_t p, uint32_t a, uint32_t b, uint32_t merged) {
    uint32_t* s = syms_.data() + words_[w].off;
    const uint32_t n = words_[w].len;
    const int64_t count = words_[w].count;
    uint32_t i = 0;
    while (i + 1 < n && !(s[i] == a && s[i + 1] == b)) ++i;
    if (i + 1 >= n) return;  // a stale entry: the word no longer holds the pair
    self().on_word_changed(w);
    uint32_t j = i;          // write position (s[0, i) is unchanged)
    uint32_t off = 0;        // symbol offset of s[j]
    uint32_t prev_off = 0;   // symbol offset of s[j - 1]
    if (kOffsets) {
      for (uint32_t k = 0; k < i; ++k) off += token_len_[s[k]];
      if (j > 0) prev_off = off - token_len_[s[j - 1]];
    }
    while (i < n) {
      if (i + 1 < n && s[i] == a && s[i + 1] == b) {
        // Occurrences are taken left to right, and the left neighbour is the already-merged
        // symbol, so overlapping runs ("a a a") are counted exactly.
        if (j > 0) {
          dec(s[j - 1], a, w);
          inc(s[j - 1], merged, w, prev_off);
        }
        dec_pair(p, w);
        if (i + 2 < n) {
          dec(b, s[i + 2], w);
          inc(merged, s[i + 2], w, off);
        }
        self().on_merged(a, b, merged, count);
        s[j] = merged;
        i += 2;
      } else {
        s[j] = s[i];
        ++i;
      }
      if (kOffsets) {
        prev_off = off;
        off += token_len_[s[j]];
      }
      ++j;
    }
    words_[w].len = j;
  }

  void merge_loop() {
    const uint64_t budget = self().merge_limit();
    const uint64_t report_every = std::max<uint64_t>(1, std::min<uint64_t>(budget, 1ULL << 40) / 200);
    if (progress_) progress_(0, budget);
    std::vector<uint32_t> words;
    result_.stop_reason = "no pair left to merge";
    for (;;) {
      if (const char* limit = limit_reached(cfg_.vocab_size, cfg_.max_merges, self().vocab_now(), result_.merges.size())) {
        result_.stop_reason = limit;
        break;
      }
      const uint32_t p = self().pop_best();
      if (p == kNone) break;
      if (const char* reason = self().refuse(p)) {
        result_.stop_reason = reason;
        break;
      }
      const uint32_t a = left(pair_key_[p]), b = right(pair_key_[p]);
      const size_t tokens_before = tokens_.size();
      const uint32_t merged = add_token(join_tokens(tokens_[a], tokens_[b], cfg_.continuing_subword_prefix),
                                        token_len_[a] + token_len_[b]);
      result_.merges.emplace_back(a, b);
      result_.merge_counts.push_back(static_cast<uint64_t>(pair_count_[p]));

      ++step_;
      pair_words_[p].take(words);
      const size_t listed = words.size();
      const bool offsets = self().tracks_offsets();
      for (size_t k = 0; k < listed; ++k) {
        // The words are scattered in memory: fetch ahead (their info, then their symbols).
        if (k + 32 < listed) __builtin_prefetch(&words_[words[k + 32]]);
        if (k + 16 < listed) __builtin_prefetch(syms_.data() + words_[words[k + 16]].off);
        const uint32_t w = words[k];
        if (words_[w].stamp == step_) continue;  // listed twice
        words_[w].stamp = step_;
        if (offsets) {
          merge_word<true>(w, p, a, b, merged);
        } else {
          merge_word<false>(w, p, a, b, merged);
        }
      }
      words.clear();
      words.shrink_to_fit();
      for (uint32_t q : increased_)
        if (pair_stamp_[q] == step_) {
          pair_stamp_[q] = step_ - 1;  // push each pair once
          if (self().pushable(q)) push(q);
        }
      for (uint32_t q : touched_)
        if (pair_count_[q] <= 0) pair_words_[q].release();  // nothing left to find
      touched_.clear();
      increased_.clear();
      self().after_merge(a, b, merged, merged < tokens_before);
      if (progress_ && result_.merges.size() % report_every == 0) progress_(result_.merges.size(), budget);
    }
    if (progress_) progress_(result_.merges.size(), budget);
  }

  const Config& cfg_;
  const TrainProgress& progress_;
  const std::function<void()>& words_done_;
  MergeResult result_;

  std::vector<std::string> tokens_;
  std::vector<uint32_t> token_len_;  // in initial symbols (characters or bytes)
  BytesMap token_ids_;

  std::vector<uint32_t> syms_;
  std::vector<WordInfo> words_;

  CachedPairIndex pair_index_;
  std::vector<uint64_t> pair_key_;
  std::vector<int64_t> pair_count_;
  std::vector<WordList> pair_words_;
  std::vector<uint32_t> pair_stamp_;
  std::vector<uint32_t> touched_, increased_;
  std::vector<Entry> heap_;
  uint32_t step_ = 0;
};

// The checks both trainers' entry points make, then run(): a trainer is ~200 KB (its pair
// index cache), so it lives on the heap.
template <class Trainer, class Config>
MergeResult run_trainer(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                        const Config& config, const TrainProgress& progress, const std::function<void()>& words_done) {
  if (words.size() != counts.size()) throw Error(ErrorKind::kInvalidInput, "words and counts differ in length");
  if (words.size() >= 0xFFFFFFFFu) throw Error(ErrorKind::kInvalidInput, "too many distinct words (4 billion or more)");
  auto t = std::make_unique<Trainer>(config, progress, words_done);
  return t->run(words, counts);
}

}  // namespace train_detail
}  // namespace ciyuan
