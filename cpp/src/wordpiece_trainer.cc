// WordPiece likelihood training (see wordpiece_trainer.h for the algorithm; the loop and its
// cost: merge_loop.h).
//
// What is WordPiece's own: both forms of every character as initial symbols, and the scoring
// rule. Each symbol has a count and the list of the pairs it belongs to (for refreshing), and
// a min-heap by count holds the dirty symbols.
#include "ciyuan/wordpiece_trainer.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "ciyuan/errors.h"
#include "ciyuan/merge_loop.h"

namespace ciyuan {

namespace {

using train_detail::char_token;
using train_detail::CharIds;
using u128 = unsigned __int128;

// The weighted symbol total must stay below this, so that count * count * count < 2^126.
constexpr uint64_t kMaxTotal = 1ULL << 42;

struct Entry {
  u128 denom;      // count(a) * count(b) when pushed
  uint64_t count;  // count(ab) when pushed
  uint64_t key;    // (a << 32) | b
  uint32_t pair;
};

struct WpTrainer : train_detail::MergeTrainer<WpTrainer, WordPieceTrainerConfig, Entry> {
  static constexpr const char* kStartTokens = "special tokens and both forms of each character of the alphabet";

  using MergeTrainer::MergeTrainer;

  // a < b: a is the worse entry (lower score, then lower count, then greater ids).
  struct Less {
    bool operator()(const Entry& a, const Entry& b) const {
      u128 l = static_cast<u128>(a.count) * b.denom, r = static_cast<u128>(b.count) * a.denom;
      if (l != r) return l < r;
      if (a.count != b.count) return a.count < b.count;
      return a.key > b.key;
    }
  };

  // ---- the initial symbols
  void on_new_token() {
    sym_count_.push_back(0);
    sym_pairs_.emplace_back();
    dirty_.push_back(0);
  }

  void build_alphabet(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    auto freq = count_chars(words, counts, [](uint32_t, bool) {}, [](uint32_t) {});
    const auto kept = train_detail::kept_alphabet(freq, cfg_.initial_alphabet, cfg_.limit_alphabet);
    for (const auto& kv : kept) char_id_.set(kv.first, add_token(char_token("", kv.first), 1));
    for (const auto& kv : kept) mid_id_.set(kv.first, add_token(char_token(cfg_.continuing_subword_prefix, kv.first), 1));
  }

  void split_words(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    size_t total = 0;
    for (auto w : words) total += w.size();
    syms_.reserve(total);
    uint64_t weighted = 0;
    for (size_t w = 0; w < words.size(); ++w) {
      if (counts[w] == 0) continue;
      const size_t start = syms_.size();
      push_chars(words[w], [&](uint32_t cp, bool first, bool) { return first ? char_id_.find(cp) : mid_id_.find(cp); });
      const uint64_t n = syms_.size() - start;
      if (n == 0) continue;
      if (counts[w] >= kMaxTotal || n > (kMaxTotal - 1 - weighted) / counts[w])  // no overflow
        throw Error(ErrorKind::kInvalidInput,
                    "the corpus is too large for exact WordPiece scores (2^42 characters or more, "
                    "counting repeats); train on a part of it");
      weighted += n * counts[w];
      for (size_t i = start; i < syms_.size(); ++i) sym_count_[syms_[i]] += counts[w];
      push_word(start, static_cast<int64_t>(counts[w]));
    }
    syms_.shrink_to_fit();
  }

  // ---- pairs and symbols
  bool tracks_offsets() const { return false; }

  void on_new_pair() { pair_listed_.push_back(0); }

  // Lists pair p with its symbols (bit 1: in the left symbol's list, bit 2: the right's).
  void on_inc(uint32_t p, uint32_t, uint32_t) {
    if (pair_listed_[p] == 3) return;
    const uint32_t a = left(pair_key_[p]), b = right(pair_key_[p]);
    if (!(pair_listed_[p] & 1)) sym_pairs_[a].push_back(p);
    if (!(pair_listed_[p] & 2) && b != a) sym_pairs_[b].push_back(p);
    pair_listed_[p] = 3;
  }

  void on_merged(uint32_t a, uint32_t b, uint32_t merged, int64_t count) {
    sym_count_[a] -= count;
    sym_count_[b] -= count;
    sym_count_[merged] += count;
  }

  // ---- the scoring rule
  bool eligible(uint32_t p) const {
    return pair_count_[p] > 0 && static_cast<uint64_t>(pair_count_[p]) >= cfg_.min_frequency;
  }

  bool pushable(uint32_t p) const { return eligible(p); }

  // Ineligible pairs never reach the top (pop_best skips them).
  const char* refuse(uint32_t) const { return nullptr; }

  Entry entry(uint32_t p) const {
    const uint64_t k = pair_key_[p];
    return Entry{static_cast<u128>(sym_count_[left(k)]) * static_cast<uint64_t>(sym_count_[right(k)]),
                 static_cast<uint64_t>(pair_count_[p]), k, p};
  }

  Less less() const { return Less{}; }

  // Every eligible pair gets one exact entry; no symbol is dirty any more.
  void build_heap() {
    MergeTrainer::build_heap();
    if (heap_.capacity() > 2 * heap_.size() + (1u << 16)) heap_.shrink_to_fit();
    std::fill(dirty_.begin(), dirty_.end(), 0);
    dirty_heap_.clear();
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
    while (!heap_.empty()) {
      const Entry e = pop_entry();
      const uint32_t p = e.pair;
      if (!eligible(p)) continue;
      const Entry cur = entry(p);
      if (cur.count != e.count || cur.denom != e.denom) {
        push_entry(cur);
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
        push_entry(e);
        continue;
      }
      return p;
    }
    return kNone;
  }

  // count(a) and count(b) fell: their other pairs' scores rose.
  void after_merge(uint32_t a, uint32_t b, uint32_t merged, bool existed) {
    mark_dirty(a);
    if (b != a) mark_dirty(b);
    // A merged token made again (a + bc after ab + c) only gains count: its pairs' entries
    // over-estimate, which is safe; a dirty one needs its bound entry updated.
    if (existed && dirty_[merged]) mark_dirty(merged);
    // Stale entries pile up (each refresh re-pushes): start afresh when they outnumber the
    // pairs, which bounds the heap's memory by a few times the pair count.
    if (heap_.size() > 2 * pair_key_.size() + (1u << 16)) build_heap();
  }

  CharIds char_id_, mid_id_;
  std::vector<int64_t> sym_count_;
  std::vector<std::vector<uint32_t>> sym_pairs_;
  std::vector<uint8_t> dirty_;
  std::vector<DirtyEntry> dirty_heap_;
  std::vector<uint8_t> pair_listed_;
};

}  // namespace

WordPieceTrainerResult train_wordpiece(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                                       const WordPieceTrainerConfig& config, const TrainProgress& progress,
                                       const std::function<void()>& words_done) {
  return train_detail::run_trainer<WpTrainer>(words, counts, config, progress, words_done);
}

}  // namespace ciyuan
