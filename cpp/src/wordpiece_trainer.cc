// WordPiece likelihood training (see wordpiece_trainer.h for the algorithm and its cost).
//
// Layout as in the BPE trainer: the words' symbols in one flat array of 32-bit ids (a word
// shrinks in place as it merges), each pair with the list of words that may hold it, a lazy
// max-heap of pair entries checked against the current counts when popped. In addition each
// symbol has a count and the list of the pairs it belongs to (for refreshing), and a min-heap
// by count holds the dirty symbols.
#include "ciyuan/wordpiece_trainer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "ciyuan/errors.h"
#include "ciyuan/hash.h"
#include "ciyuan/trainer_util.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {

using train_detail::append_utf8;
using train_detail::CachedPairIndex;
using train_detail::PairIndex;
using train_detail::WordList;
using u128 = unsigned __int128;

// The weighted symbol total must stay below this, so that count * count * count < 2^126.
constexpr uint64_t kMaxTotal = 1ULL << 42;

class WpTrainer {
 public:
  WpTrainer(const WordPieceTrainerConfig& c, const TrainProgress& progress, const std::function<void()>& words_done)
      : cfg_(c), progress_(progress), words_done_(words_done) {}

  WordPieceTrainerResult run(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    for (const std::string& s : cfg_.special_tokens) add_token(s, 1);
    build_alphabet(words, counts);
    result_.alphabet_size = tokens_.size();
    if (cfg_.vocab_size && tokens_.size() > cfg_.vocab_size) {
      throw Error(ErrorKind::kInvalidInput,
                  "vocab_size " + std::to_string(cfg_.vocab_size) + " is smaller than the " +
                      std::to_string(tokens_.size()) +
                      " tokens the training starts with (special tokens and both forms of each "
                      "character of the alphabet); raise vocab_size or lower limit_alphabet");
    }
    split_words(words, counts);
    if (words_done_) words_done_();
    count_pairs();
    merge_loop();
    result_.tokens = std::move(tokens_);
    return std::move(result_);
  }

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  struct Entry {
    u128 denom;      // count(a) * count(b) when pushed
    uint64_t count;  // count(ab) when pushed
    uint64_t key;    // (a << 32) | b
    uint32_t pair;
  };
  // a < b: a is the worse entry (lower score, then lower count, then greater ids).
  struct Less {
    bool operator()(const Entry& a, const Entry& b) const {
      u128 l = static_cast<u128>(a.count) * b.denom, r = static_cast<u128>(b.count) * a.denom;
      if (l != r) return l < r;
      if (a.count != b.count) return a.count < b.count;
      return a.key > b.key;
    }
  };

  // ---- tokens
  uint32_t add_token(const std::string& bytes, uint32_t length) {
    uint32_t id = token_ids_.find(bytes);
    if (id != BytesMap::kMissing) return id;
    id = static_cast<uint32_t>(tokens_.size());
    token_ids_.insert(bytes, id);
    tokens_.push_back(bytes);
    token_len_.push_back(length);
    sym_count_.push_back(0);
    sym_pairs_.emplace_back();
    dirty_.push_back(0);
    return id;
  }

  void build_alphabet(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    std::unordered_map<uint32_t, uint64_t> freq;
    for (size_t w = 0; w < words.size(); ++w) {
      const char* p = words[w].data();
      const char* end = p + words[w].size();
      uint32_t cp = 0;
      while (p < end) {
        p += utf8::decode(p, end, &cp);
        train_detail::add_count(freq[cp], counts[w]);
      }
    }
    const auto kept = train_detail::kept_alphabet(freq, cfg_.initial_alphabet, cfg_.limit_alphabet);
    std::string s;
    for (const auto& kv : kept) {
      s.clear();
      append_utf8(kv.first, s);
      char_id_[kv.first] = add_token(s, 1);
    }
    for (const auto& kv : kept) {
      s = cfg_.continuing_subword_prefix;
      append_utf8(kv.first, s);
      mid_id_[kv.first] = add_token(s, 1);
    }
  }

  void split_words(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    size_t total = 0;
    for (auto w : words) total += w.size();
    syms_.reserve(total);
    std::vector<uint32_t> ascii(128, kNone), ascii_mid(128, kNone);
    for (const auto& kv : char_id_)
      if (kv.first < 128) ascii[kv.first] = kv.second;
    for (const auto& kv : mid_id_)
      if (kv.first < 128) ascii_mid[kv.first] = kv.second;
    uint64_t weighted = 0;
    for (size_t w = 0; w < words.size(); ++w) {
      if (counts[w] == 0) continue;
      size_t start = syms_.size();
      const char* p = words[w].data();
      const char* end = p + words[w].size();
      while (p < end) {
        uint32_t cp;
        const bool first = p == words[w].data();
        p += utf8::decode(p, end, &cp);
        uint32_t id = kNone;
        if (cp < 128) {
          id = first ? ascii[cp] : ascii_mid[cp];
        } else {
          const auto& map = first ? char_id_ : mid_id_;
          auto it = map.find(cp);
          if (it != map.end()) id = it->second;
        }
        // Characters left out of the alphabet (limit_alphabet) are dropped, as for BPE.
        if (id != kNone) syms_.push_back(id);
      }
      const uint64_t n = syms_.size() - start;
      if (n == 0) continue;
      if (counts[w] >= kMaxTotal || n > (kMaxTotal - 1 - weighted) / counts[w])  // no overflow
        throw Error(ErrorKind::kInvalidInput,
                    "the corpus is too large for exact WordPiece scores (2^42 characters or more, "
                    "counting repeats); train on a part of it");
      weighted += n * counts[w];
      for (size_t i = start; i < syms_.size(); ++i) sym_count_[syms_[i]] += counts[w];
      words_.push_back(WordInfo{start, static_cast<int64_t>(counts[w]), static_cast<uint32_t>(n), 0});
    }
    syms_.shrink_to_fit();
  }

  // ---- pairs
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
    pair_listed_.push_back(0);
    return idx;
  }

  static uint32_t left(uint64_t key) { return static_cast<uint32_t>(key >> 32); }
  static uint32_t right(uint64_t key) { return static_cast<uint32_t>(key); }
  static uint64_t make_key(uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 32) | b; }

  bool too_long(uint32_t a, uint32_t b) const {
    return cfg_.max_token_length && token_len_[a] + token_len_[b] > cfg_.max_token_length;
  }

  void touch(uint32_t p) {
    if (pair_stamp_[p] != step_) {
      pair_stamp_[p] = step_;
      touched_.push_back(p);
    }
  }

  // Lists pair p with its symbols (bit 1: in the left symbol's list, bit 2: the right's).
  void list_pair(uint32_t p) {
    if (pair_listed_[p] == 3) return;
    const uint32_t a = left(pair_key_[p]), b = right(pair_key_[p]);
    if (!(pair_listed_[p] & 1)) sym_pairs_[a].push_back(p);
    if (!(pair_listed_[p] & 2) && b != a) sym_pairs_[b].push_back(p);
    pair_listed_[p] = 3;
  }

  void inc(uint32_t a, uint32_t b, uint32_t w) {
    if (too_long(a, b)) return;
    uint32_t p = pair_index(make_key(a, b));
    pair_count_[p] += words_[w].count;
    WordList& ws = pair_words_[p];
    if (ws.empty() || ws.back() != w) ws.push_back(w);
    list_pair(p);
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

  bool eligible(uint32_t p) const {
    return pair_count_[p] > 0 && static_cast<uint64_t>(pair_count_[p]) >= cfg_.min_frequency;
  }

  Entry entry(uint32_t p) const {
    const uint64_t k = pair_key_[p];
    return Entry{static_cast<u128>(sym_count_[left(k)]) * static_cast<uint64_t>(sym_count_[right(k)]),
                 static_cast<uint64_t>(pair_count_[p]), k, p};
  }

  void push(uint32_t p) {
    heap_.push_back(entry(p));
    std::push_heap(heap_.begin(), heap_.end(), Less{});
  }

  // Every eligible pair gets one exact entry; no symbol is dirty any more.
  void rebuild_heap() {
    heap_.clear();
    for (uint32_t p = 0; p < pair_key_.size(); ++p)
      if (eligible(p)) heap_.push_back(entry(p));
    std::make_heap(heap_.begin(), heap_.end(), Less{});
    if (heap_.capacity() > 2 * heap_.size() + (1u << 16)) heap_.shrink_to_fit();
    std::fill(dirty_.begin(), dirty_.end(), 0);
    dirty_heap_.clear();
  }

  void count_pairs() {
    step_ = 1;
    for (uint32_t w = 0; w < words_.size(); ++w) {
      const uint32_t* s = syms_.data() + words_[w].off;
      for (uint32_t i = 0; i + 1 < words_[w].len; ++i) inc(s[i], s[i + 1], w);
    }
    touched_.clear();
    increased_.clear();
    rebuild_heap();
  }

  // ---- dirty symbols: min-heap by count (an entry is current when its count is the symbol's)
  using DirtyEntry = std::pair<int64_t, uint32_t>;
  struct DirtyGreater {
    bool operator()(const DirtyEntry& a, const DirtyEntry& b) const { return a > b; }
  };

  void mark_dirty(uint32_t s) {
    dirty_[s] = 1;
    dirty_heap_.emplace_back(sym_count_[s], s);
    std::push_heap(dirty_heap_.begin(), dirty_heap_.end(), DirtyGreater{});
  }

  // Re-pushes every eligible pair of symbol s with its current score; drops dead pairs from
  // its list (they are listed again if they come back).
  void refresh(uint32_t s) {
    dirty_[s] = 0;
    std::vector<uint32_t>& list = sym_pairs_[s];
    size_t j = 0;
    for (uint32_t p : list) {
      if (pair_count_[p] <= 0) {
        pair_listed_[p] &= left(pair_key_[p]) == s ? ~1u : ~2u;
        if (left(pair_key_[p]) == s && right(pair_key_[p]) == s) pair_listed_[p] = 0;
        continue;
      }
      list[j++] = p;
      if (eligible(p)) push(p);
    }
    list.resize(j);
    if (list.capacity() > 2 * j + 8) list.shrink_to_fit();
  }

  // Pops the best pair: an entry that is current, and that no dirty symbol's pairs can beat.
  uint32_t pop_best() {
    Less less;
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), less);
      Entry e = heap_.back();
      heap_.pop_back();
      const uint32_t p = e.pair;
      if (!eligible(p)) continue;
      Entry cur = entry(p);
      if (cur.count != e.count || cur.denom != e.denom) {
        heap_.push_back(cur);
        std::push_heap(heap_.begin(), heap_.end(), less);
        continue;
      }
      // e's score is exact. A pair holding a dirty symbol s scores at most 1 / count(s):
      // refresh the dirty symbols whose bound reaches e's score, then look again.
      bool refreshed = false;
      while (!dirty_heap_.empty()) {
        const DirtyEntry d = dirty_heap_.front();
        const uint32_t s = d.second;
        if (!dirty_[s] || d.first != sym_count_[s] || sym_count_[s] <= 0) {
          std::pop_heap(dirty_heap_.begin(), dirty_heap_.end(), DirtyGreater{});
          dirty_heap_.pop_back();
          if (dirty_[s] && sym_count_[s] <= 0) dirty_[s] = 0;  // no pairs left
          continue;
        }
        if (static_cast<u128>(e.count) * static_cast<uint64_t>(sym_count_[s]) > e.denom) break;
        std::pop_heap(dirty_heap_.begin(), dirty_heap_.end(), DirtyGreater{});
        dirty_heap_.pop_back();
        refresh(s);
        refreshed = true;
      }
      if (refreshed) {
        heap_.push_back(e);
        std::push_heap(heap_.begin(), heap_.end(), less);
        continue;
      }
      return p;
    }
    return kNone;
  }

  // Merges every (a, b) of word w into `merged`, left to right, updating pair and symbol counts.
  void merge_word(uint32_t w, uint32_t p, uint32_t a, uint32_t b, uint32_t merged) {
    uint32_t* s = syms_.data() + words_[w].off;
    const uint32_t n = words_[w].len;
    const int64_t count = words_[w].count;
    uint32_t i = 0;
    while (i + 1 < n && !(s[i] == a && s[i + 1] == b)) ++i;
    if (i + 1 >= n) return;  // a stale entry: the word no longer holds the pair
    uint32_t j = i;
    while (i < n) {
      if (i + 1 < n && s[i] == a && s[i + 1] == b) {
        if (j > 0) {
          dec(s[j - 1], a, w);
          inc(s[j - 1], merged, w);
        }
        dec_pair(p, w);
        if (i + 2 < n) {
          dec(b, s[i + 2], w);
          inc(merged, s[i + 2], w);
        }
        sym_count_[a] -= count;
        sym_count_[b] -= count;
        sym_count_[merged] += count;
        s[j] = merged;
        i += 2;
      } else {
        s[j] = s[i];
        ++i;
      }
      ++j;
    }
    words_[w].len = j;
  }

  std::string join(const std::string& a, const std::string& b) const {
    return train_detail::join_tokens(a, b, cfg_.continuing_subword_prefix);
  }

  void merge_loop() {
    const uint64_t budget = train_detail::merge_budget(cfg_.vocab_size, cfg_.max_merges, tokens_.size());
    uint64_t report_every = std::max<uint64_t>(1, std::min<uint64_t>(budget, 1ULL << 40) / 200);
    if (progress_) progress_(0, budget);
    std::vector<uint32_t> words;
    result_.stop_reason = "no pair left to merge";
    for (;;) {
      if (const char* limit = train_detail::limit_reached(cfg_.vocab_size, cfg_.max_merges, tokens_.size(),
                                                          result_.merges.size())) {
        result_.stop_reason = limit;
        break;
      }
      const uint32_t p = pop_best();
      if (p == kNone) break;
      const uint32_t a = left(pair_key_[p]), b = right(pair_key_[p]);
      const size_t tokens_before = tokens_.size();
      const uint32_t merged = add_token(join(tokens_[a], tokens_[b]), token_len_[a] + token_len_[b]);
      const bool existed = merged < tokens_before;
      result_.merges.emplace_back(a, b);
      result_.merge_counts.push_back(static_cast<uint64_t>(pair_count_[p]));

      ++step_;
      pair_words_[p].take(words);
      const size_t listed = words.size();
      for (size_t k = 0; k < listed; ++k) {
        if (k + 32 < listed) __builtin_prefetch(&words_[words[k + 32]]);
        if (k + 16 < listed) __builtin_prefetch(syms_.data() + words_[words[k + 16]].off);
        const uint32_t w = words[k];
        if (words_[w].stamp == step_) continue;  // listed twice
        words_[w].stamp = step_;
        merge_word(w, p, a, b, merged);
      }
      words.clear();
      words.shrink_to_fit();
      for (uint32_t q : increased_)
        if (pair_stamp_[q] == step_) {
          pair_stamp_[q] = step_ - 1;  // push each pair once
          if (eligible(q)) push(q);
        }
      for (uint32_t q : touched_)
        if (pair_count_[q] <= 0) pair_words_[q].release();
      touched_.clear();
      increased_.clear();
      // count(a) and count(b) fell: their other pairs' scores rose.
      mark_dirty(a);
      if (b != a) mark_dirty(b);
      // A merged token made again (a + bc after ab + c) only gains count: its pairs' entries
      // over-estimate, which is safe; a dirty one needs its bound entry updated.
      if (existed && dirty_[merged]) mark_dirty(merged);
      // Stale entries pile up (each refresh re-pushes): start afresh when they outnumber the
      // pairs, which bounds the heap's memory by a few times the pair count.
      if (heap_.size() > 2 * pair_key_.size() + (1u << 16)) rebuild_heap();
      if (progress_ && result_.merges.size() % report_every == 0) progress_(result_.merges.size(), budget);
    }
    if (progress_) progress_(result_.merges.size(), budget);
  }

  const WordPieceTrainerConfig& cfg_;
  const TrainProgress& progress_;
  const std::function<void()>& words_done_;
  WordPieceTrainerResult result_;

  std::vector<std::string> tokens_;
  std::vector<uint32_t> token_len_;
  BytesMap token_ids_;
  std::unordered_map<uint32_t, uint32_t> char_id_, mid_id_;
  std::vector<int64_t> sym_count_;
  std::vector<std::vector<uint32_t>> sym_pairs_;
  std::vector<uint8_t> dirty_;
  std::vector<DirtyEntry> dirty_heap_;

  std::vector<uint32_t> syms_;
  struct WordInfo {
    uint64_t off;
    int64_t count;
    uint32_t len;
    uint32_t stamp;
  };
  std::vector<WordInfo> words_;

  CachedPairIndex pair_index_;
  std::vector<uint64_t> pair_key_;
  std::vector<int64_t> pair_count_;
  std::vector<WordList> pair_words_;
  std::vector<uint32_t> pair_stamp_;
  std::vector<uint8_t> pair_listed_;
  std::vector<uint32_t> touched_, increased_;
  std::vector<Entry> heap_;
  uint32_t step_ = 0;
};

}  // namespace

WordPieceTrainerResult train_wordpiece(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                                       const WordPieceTrainerConfig& config, const TrainProgress& progress,
                                       const std::function<void()>& words_done) {
  if (words.size() != counts.size()) throw Error(ErrorKind::kInvalidInput, "words and counts differ in length");
  if (words.size() >= 0xFFFFFFFFu) throw Error(ErrorKind::kInvalidInput, "too many distinct words (4 billion or more)");
  auto t = std::make_unique<WpTrainer>(config, progress, words_done);
  return t->run(words, counts);
}

}  // namespace ciyuan
