// BPE training (see bpe_trainer.h; the loop and its cost: merge_loop.h).
//
// What is BPE's own: the initial symbols (bytes, or characters with an end-of-word suffix,
// marker or continuing-subword prefix) and the scoring rule - the highest pair count, ties
// broken by TieBreak. The heap is lazy: an entry is checked against the pair's current count
// when popped.
#include "ciyuan/bpe_trainer.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "ciyuan/errors.h"
#include "ciyuan/merge_loop.h"

namespace ciyuan {

uint32_t gpt2_printable(uint8_t b) {
  if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) return b;
  uint32_t n = 0;  // how many non-printable bytes come before b
  for (uint32_t c = 0; c < b; ++c)
    if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174)) ++n;
  return 256 + n;
}

namespace {

using train_detail::char_token;
using train_detail::CharIds;

struct Entry {
  int64_t count;
  uint64_t aux;  // kSmallestIds: the pair key; kFirstSeen: (word << 32) | offset, a lower bound
  uint32_t pair;
};

// The hooks of MergeTrainer are public: the class is local to this file.
struct BpeTrainer : train_detail::MergeTrainer<BpeTrainer, BpeTrainerConfig, Entry> {
  static constexpr const char* kStartTokens = "special tokens and the initial alphabet";

  using MergeTrainer::MergeTrainer;

  // ---- the initial symbols
  void build_alphabet(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    if (cfg_.byte_level) {
      // All 256 bytes, ordered by their printable character as Hugging Face orders them.
      std::vector<uint32_t> order(256);
      for (uint32_t b = 0; b < 256; ++b) order[b] = b;
      std::sort(order.begin(), order.end(),
                [](uint32_t a, uint32_t b) { return gpt2_printable(a) < gpt2_printable(b); });
      for (uint32_t b : order) byte_id_[b] = add_token(std::string(1, static_cast<char>(b)), 1);
      if (!cfg_.end_of_word_symbol.empty()) marker_id_ = add_token(cfg_.end_of_word_symbol, 1);
      return;
    }
    // Character frequencies (weighted by word counts); forced characters count as infinite.
    std::unordered_map<uint32_t, bool> is_last, is_mid;
    const bool prefixed = !cfg_.continuing_subword_prefix.empty();
    auto freq = count_chars(
        words, counts, [&](uint32_t cp, bool first) { if (prefixed && !first) is_mid[cp] = true; },
        [&](uint32_t cp) { is_last[cp] = true; });
    const auto kept = train_detail::kept_alphabet(freq, cfg_.initial_alphabet, cfg_.limit_alphabet);
    for (const auto& kv : kept) char_id_.set(kv.first, add_token(char_token("", kv.first), 1));
    if (prefixed) {
      // Prefixed forms of the kept characters met after a word's first character (its position
      // in the word as written, dropped characters included, as Hugging Face counts it).
      std::vector<uint32_t> mid;
      for (const auto& kv : kept)
        if (is_mid.count(kv.first)) mid.push_back(kv.first);
      std::unordered_map<std::string, uint32_t> by_form;
      for (uint32_t cp : mid) by_form.emplace(char_token(cfg_.continuing_subword_prefix, cp), cp);
      for (const std::string& form : cfg_.continuing_order) {
        auto it = by_form.find(form);
        if (it == by_form.end() || mid_id_.contains(it->second)) continue;
        mid_id_.set(it->second, add_token(form, 1));
      }
      for (uint32_t cp : mid)
        if (!mid_id_.contains(cp)) mid_id_.set(cp, add_token(char_token(cfg_.continuing_subword_prefix, cp), 1));
    }
    if (!cfg_.end_of_word_suffix.empty()) {
      for (const auto& kv : kept)
        if (is_last.count(kv.first)) last_id_.set(kv.first, add_token(char_token("", kv.first, cfg_.end_of_word_suffix), 1));
    }
    if (!cfg_.end_of_word_symbol.empty()) marker_id_ = add_token(cfg_.end_of_word_symbol, 1);
  }

  void split_words(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    size_t total = 0;
    for (auto w : words) total += w.size() + (marker_id_ != kNone);
    syms_.reserve(total);
    const bool prefixed = !cfg_.continuing_subword_prefix.empty();
    const bool suffixed = !cfg_.end_of_word_suffix.empty();
    for (size_t w = 0; w < words.size(); ++w) {
      const size_t start = syms_.size();
      if (cfg_.byte_level) {
        for (char c : words[w]) syms_.push_back(byte_id_[static_cast<unsigned char>(c)]);
      } else {
        push_chars(words[w], [&](uint32_t cp, bool first, bool last) {
          if (prefixed && !first) return mid_id_.find(cp);
          if (last && suffixed) return last_id_.find(cp);
          return char_id_.find(cp);
        });
      }
      if (marker_id_ != kNone && syms_.size() > start) syms_.push_back(marker_id_);
      push_word(start, static_cast<int64_t>(std::min<uint64_t>(counts[w], INT64_MAX)));
    }
  }

  // ---- the scoring rule
  bool tracks_offsets() const { return first_mode_; }

  void on_new_pair() {
    if (first_mode_) pair_first_.push_back(~0ULL);
  }

  void on_inc(uint32_t p, uint32_t w, uint32_t offset) {
    if (first_mode_) {
      uint64_t first = (static_cast<uint64_t>(w) << 32) | offset;
      if (first < pair_first_[p]) pair_first_[p] = first;
    }
  }

  struct Less {
    const BpeTrainer* t;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.count != b.count) return a.count < b.count;
      switch (t->cfg_.tie_break) {
        case TieBreak::kSmallestIds:
        case TieBreak::kFirstSeen: return a.aux > b.aux;
        case TieBreak::kGreatestText: {
          uint64_t ak = t->pair_key_[a.pair], bk = t->pair_key_[b.pair];
          int c = t->tokens_[left(ak)].compare(t->tokens_[left(bk)]);
          if (c != 0) return c < 0;
          return t->tokens_[right(ak)] < t->tokens_[right(bk)];
        }
      }
      return false;
    }
  };

  Less less() const { return Less{this}; }

  Entry entry(uint32_t p) const { return Entry{pair_count_[p], first_mode_ ? pair_first_[p] : pair_key_[p], p}; }

  bool pushable(uint32_t p) const { return pair_count_[p] > 0; }

  const char* refuse(uint32_t p) const {
    return static_cast<uint64_t>(pair_count_[p]) < cfg_.min_frequency ? "no pair occurs min_frequency times" : nullptr;
  }

  // The exact first occurrence of pair p: (word << 32) | symbol offset.
  uint64_t exact_first(uint32_t p) {
    const uint32_t a = left(pair_key_[p]), b = right(pair_key_[p]);
    uint64_t best = ~0ULL;
    const train_detail::WordList& list = pair_words_[p];
    for (uint32_t k = 0; k < list.size(); ++k) {
      uint32_t w = list.data()[k];
      if ((static_cast<uint64_t>(w) << 32) >= best) continue;
      const uint32_t* s = syms_.data() + words_[w].off;
      uint32_t off = 0;
      for (uint32_t i = 0; i + 1 < words_[w].len; ++i) {
        if (s[i] == a && s[i + 1] == b) {
          best = (static_cast<uint64_t>(w) << 32) | off;
          break;
        }
        off += token_len_[s[i]];
      }
    }
    return best;
  }

  // Pops the best pair whose entry is current; kNone when none is left.
  uint32_t pop_best() {
    while (!heap_.empty()) {
      const Entry e = pop_entry();
      const uint32_t p = e.pair;
      int64_t cur = pair_count_[p];
      if (cur <= 0) continue;
      if (e.count != cur) {
        push(p);
        continue;
      }
      if (first_mode_) {
        uint64_t exact = exact_first(p);
        if (exact != e.aux) {
          pair_first_[p] = exact;
          push(p);
          continue;
        }
      }
      return p;
    }
    return kNone;
  }

  const bool first_mode_ = cfg_.tie_break == TieBreak::kFirstSeen;
  uint32_t byte_id_[256] = {};
  CharIds char_id_, last_id_, mid_id_;
  uint32_t marker_id_ = kNone;
  std::vector<uint64_t> pair_first_;
};

}  // namespace

BpeTrainerResult train_bpe(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                           const BpeTrainerConfig& config, const TrainProgress& progress,
                           const std::function<void()>& words_done) {
  return train_detail::run_trainer<BpeTrainer>(words, counts, config, progress, words_done);
}

}  // namespace ciyuan
