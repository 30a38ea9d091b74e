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

// Where a pair occurs first: its word's place in the word order, then the symbol offset there.
struct Place {
  uint64_t order;
  uint32_t offset;
  bool operator<(const Place& o) const { return order != o.order ? order < o.order : offset < o.offset; }
  bool operator!=(const Place& o) const { return order != o.order || offset != o.offset; }
};
constexpr Place kNowhere{~0ULL, ~0u};

// A heap entry: 24 bytes (the place's fields inline).
struct Entry {
  int64_t count;
  uint64_t order;   // kSmallestIds: the pair key; first seen: Place::order, a lower bound
  uint32_t offset;  // first seen: Place::offset
  uint32_t pair;
  Place place() const { return Place{order, offset}; }
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
      if (marker_id_ != kNone && (syms_.size() > start || live_mode_)) syms_.push_back(marker_id_);
      push_word(start, static_cast<int64_t>(std::min<uint64_t>(counts[w], INT64_MAX)));
    }
    if (first_mode_) {  // the words' places in the word order (kFirstSeenMoved changes them)
      order_.resize(words_.size());
      for (uint32_t w = 0; w < words_.size(); ++w) order_[w] = w;
      next_order_ = words_.size();
    }
    if (live_mode_) {
      for (const WordInfo& info : words_)
        for (uint32_t i = 0; i < info.len; ++i) add_use(syms_[info.off + i], info.count);
    }
  }

  // ---- document 000's vocabulary (live_vocab): the symbols the words still use
  void on_new_token() {
    if (live_mode_) token_uses_.push_back(0);
  }

  void add_use(uint32_t t, int64_t count) {
    const bool was_live = token_uses_[t] > 0;
    token_uses_[t] += count;
    live_symbols_ += static_cast<int64_t>(token_uses_[t] > 0) - static_cast<int64_t>(was_live);
  }

  void on_merged(uint32_t a, uint32_t b, uint32_t merged, int64_t count) {
    if (!live_mode_) return;
    add_use(a, -count);
    add_use(b, -count);
    add_use(merged, count);
  }

  bool vocab_may_shrink() const { return live_mode_; }

  // Document 000 compares the vocabulary with vocab_size after each merge, not before the first.
  uint64_t vocab_now() const {
    if (!live_mode_) return tokens_.size();
    return result_.merges.empty() ? 0 : static_cast<uint64_t>(live_symbols_);
  }

  uint64_t merge_limit() const {
    return live_mode_ ? cfg_.max_merges : train_detail::merge_budget(cfg_.vocab_size, cfg_.max_merges, tokens_.size());
  }

  // The symbols in use, most used first; ties to the one met first reading the words in their
  // order (and each word from the left), as document 000 lists its vocabulary.
  void finish() {
    if (!live_mode_) return;
    std::vector<uint32_t> by_order(words_.size());
    for (uint32_t w = 0; w < words_.size(); ++w) by_order[w] = w;
    if (moved_mode_)  // otherwise the words never move
      std::sort(by_order.begin(), by_order.end(), [&](uint32_t x, uint32_t y) { return order_[x] < order_[y]; });
    std::vector<uint64_t> first_met(tokens_.size(), ~0ULL);
    uint64_t position = 0;
    for (uint32_t w : by_order)
      for (uint32_t i = 0; i < words_[w].len; ++i) {
        uint64_t& f = first_met[syms_[words_[w].off + i]];
        if (f == ~0ULL) f = position;
        ++position;
      }
    auto& live = result_.live_vocab;
    for (uint32_t t = 0; t < tokens_.size(); ++t)
      if (token_uses_[t] > 0) live.emplace_back(t, static_cast<uint64_t>(token_uses_[t]));
    std::sort(live.begin(), live.end(), [&](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : first_met[x.first] < first_met[y.first];
    });
  }

  // ---- the scoring rule
  bool tracks_offsets() const { return first_mode_; }

  void on_new_pair() {
    if (first_mode_) pair_first_.push_back(kNowhere);
  }

  void on_inc(uint32_t p, uint32_t w, uint32_t offset) {
    if (first_mode_) pair_first_[p] = std::min(pair_first_[p], Place{order_[w], offset});
  }

  // kFirstSeenMoved: the words this merge changed move behind all others, keeping their order.
  // A pair's first place only moves later, so the heap's entries stay lower bounds.
  void on_word_changed(uint32_t w) {
    if (moved_mode_) changed_.push_back(w);
  }

  void after_merge(uint32_t /*a*/, uint32_t /*b*/, uint32_t /*merged*/, bool /*existed*/) {
    if (moved_mode_ && !changed_.empty()) move_changed_words();
  }

  // Out of line: inlined, its sort would make the merge loop too big for the compiler to
  // inline the heap's push (+1% instructions in training with the other tie rules).
  [[gnu::noinline]] void move_changed_words() {
    std::sort(changed_.begin(), changed_.end(), [&](uint32_t x, uint32_t y) { return order_[x] < order_[y]; });
    for (uint32_t w : changed_) order_[w] = next_order_++;
    changed_.clear();
  }

  struct Less {
    const BpeTrainer* t;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.count != b.count) return a.count < b.count;
      // The smallest pair key (kSmallestIds, offsets 0) or the first place.
      if (!t->by_text_) return b.place() < a.place();
      uint64_t ak = t->pair_key_[a.pair], bk = t->pair_key_[b.pair];
      int c = t->tokens_[left(ak)].compare(t->tokens_[left(bk)]);
      if (c != 0) return c < 0;
      return t->tokens_[right(ak)] < t->tokens_[right(bk)];
    }
  };

  Less less() const { return Less{this}; }

  Entry entry(uint32_t p) const {
    const Place place = first_mode_ ? pair_first_[p] : Place{pair_key_[p], 0};
    return Entry{pair_count_[p], place.order, place.offset, p};
  }

  bool pushable(uint32_t p) const { return pair_count_[p] > 0; }

  const char* refuse(uint32_t p) const {
    return static_cast<uint64_t>(pair_count_[p]) < cfg_.min_frequency ? "no pair occurs min_frequency times" : nullptr;
  }

  // Where pair p occurs first, exactly.
  Place exact_first(uint32_t p) {
    const uint32_t a = left(pair_key_[p]), b = right(pair_key_[p]);
    Place best = kNowhere;
    const train_detail::WordList& list = pair_words_[p];
    for (uint32_t k = 0; k < list.size(); ++k) {
      uint32_t w = list.data()[k];
      if (best.order <= order_[w]) continue;
      const uint32_t* s = syms_.data() + words_[w].off;
      uint32_t off = 0;
      for (uint32_t i = 0; i + 1 < words_[w].len; ++i) {
        if (s[i] == a && s[i + 1] == b) {
          best = Place{order_[w], off};
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
        const Place exact = exact_first(p);
        if (exact != e.place()) {
          pair_first_[p] = exact;
          push(p);
          continue;
        }
      }
      return p;
    }
    return kNone;
  }

  const bool by_text_ = cfg_.tie_break == TieBreak::kGreatestText;
  const bool live_mode_ = cfg_.live_vocab;
  const bool moved_mode_ = cfg_.tie_break == TieBreak::kFirstSeenMoved;
  const bool first_mode_ = cfg_.tie_break == TieBreak::kFirstSeen || moved_mode_;
  uint32_t byte_id_[256] = {};
  CharIds char_id_, last_id_, mid_id_;
  uint32_t marker_id_ = kNone;
  std::vector<Place> pair_first_;
  std::vector<uint64_t> order_;     // each word's place in the word order
  uint64_t next_order_ = 0;
  std::vector<uint32_t> changed_;   // the words the current merge changed (kFirstSeenMoved)
  std::vector<int64_t> token_uses_; // live_vocab: how often the words use each token
  int64_t live_symbols_ = 0;        // live_vocab: the tokens used at least once
};

}  // namespace

BpeTrainerResult train_bpe(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                           const BpeTrainerConfig& config, const TrainProgress& progress,
                           const std::function<void()>& words_done) {
  return train_detail::run_trainer<BpeTrainer>(words, counts, config, progress, words_done);
}

}  // namespace ciyuan
