// BPE training (see bpe_trainer.h for the algorithm and its cost).
//
// Layout, chosen for memory: every word's symbols live in one flat array of 32-bit ids (a word
// shrinks in place as it merges), and each pair keeps a list of the words that may contain it
// (stale entries are skipped, and the list is dropped when the pair's count reaches zero).
// The heap is lazy: an entry is checked against the pair's current count when popped.
#include "ciyuan/bpe_trainer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <unordered_map>

#include "ciyuan/errors.h"
#include "ciyuan/bert.h"
#include "ciyuan/hash.h"
#include "ciyuan/parallel.h"
#include "ciyuan/pretokenize.h"
#include "ciyuan/trainer_util.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

// ---------------------------------------------------------------------------------------------
// WordCounter

// word bytes -> (count, first seen). Entries sit in one dense array (no empty slots) and the
// open-addressing index holds 8-byte slots (32-bit hash fingerprint, entry number + 1), so a
// million distinct words cost about 40 MB, key bytes included.
struct WordCounter::Table {
  struct Entry {
    uint64_t offset;  // of the key in `arena`
    uint64_t count;
    uint64_t first;
    uint32_t length;
    uint32_t hash;
  };
  std::vector<uint64_t> slots;
  std::vector<Entry> entries;
  std::string arena;
  uint64_t total = 0;

  Table() : slots(1024, 0) {}

  std::string_view key(const Entry& e) const { return std::string_view(arena.data() + e.offset, e.length); }

  void grow() {
    std::vector<uint64_t> bigger(slots.size() * 2, 0);
    size_t mask = bigger.size() - 1;
    for (size_t k = 0; k < entries.size(); ++k) {
      size_t i = hash_u64(entries[k].hash) & mask;
      while (bigger[i]) i = (i + 1) & mask;
      bigger[i] = (static_cast<uint64_t>(entries[k].hash) << 32) | (k + 1);
    }
    slots.swap(bigger);
  }

  void add(const char* p, size_t n, uint64_t count, uint64_t first) {
    if ((entries.size() + 1) * 10 > slots.size() * 7) grow();
    total += count;
    const uint32_t h = static_cast<uint32_t>(hash_bytes(p, n) >> 32);
    size_t mask = slots.size() - 1;
    for (size_t i = hash_u64(h) & mask;; i = (i + 1) & mask) {
      uint64_t s = slots[i];
      if (!s) {
        slots[i] = (static_cast<uint64_t>(h) << 32) | (entries.size() + 1);
        entries.push_back(Entry{arena.size(), count, first, static_cast<uint32_t>(n), h});
        arena.append(p, n);
        return;
      }
      if (static_cast<uint32_t>(s >> 32) != h) continue;
      Entry& e = entries[static_cast<uint32_t>(s) - 1];
      if (e.length == n && std::memcmp(arena.data() + e.offset, p, n) == 0) {
        e.count += count;
        if (first < e.first) e.first = first;
        return;
      }
    }
  }

  void absorb(const Table& other) {
    for (const Entry& e : other.entries) add(other.arena.data() + e.offset, e.length, e.count, e.first);
  }

  void clear() {
    std::vector<uint64_t>(1024, 0).swap(slots);
    std::vector<Entry>().swap(entries);
    std::string().swap(arena);
  }
};

WordCounter::WordCounter(int pattern) : pattern_(pattern), table_(new Table()) {}
WordCounter::WordCounter(const BertOptions& bert)
    : pattern_(-1), bert_(std::make_unique<BertFrontEnd>(bert)), table_(new Table()) {}
WordCounter::~WordCounter() { delete table_; }

size_t WordCounter::size() const { return table_->entries.size(); }
uint64_t WordCounter::total() const { return table_->total; }

namespace {

// Counts the normalized words the BERT front end cuts from `text`. Words are staged first: the
// fast pass may give up part way (combining marks out of canonical order), and then the whole
// text is redone by the exact pass.
template <class Table>
void count_bert_words(const BertFrontEnd& bert, std::string_view text, uint64_t base, Table* t) {
  thread_local BertScratch scratch;
  thread_local std::string staged;                                  // the words, back to back
  thread_local std::vector<std::pair<uint32_t, uint64_t>> lengths;  // (length, first seen)
  staged.clear();
  lengths.clear();
  auto on_word = [&](const BertWord& w) {
    staged.append(w.text.data(), w.text.size());
    lengths.emplace_back(static_cast<uint32_t>(w.text.size()), base + w.orig_start(0));
  };
  if (!bert.for_each_word(text, 0, text.size(), scratch, on_word)) {
    staged.clear();
    lengths.clear();
    bert.for_each_word_exact(text, 0, text.size(), scratch, on_word);
  }
  size_t at = 0;
  for (const auto& [n, first] : lengths) {
    if (n) t->add(staged.data() + at, n, 1, first);
    at += n;
  }
  if (scratch.word.capacity() > (size_t{1} << 20)) scratch = BertScratch();  // keep no huge buffers
}

// Counts the pieces of `text` into `t`; `base` + offset is the "first seen" clock.
template <class Table>
void count_text(int pattern, const BertFrontEnd* bert, std::string_view text, uint64_t base, Table* t) {
  if (bert) {
    count_bert_words(*bert, text, base, t);
    return;
  }
  if (pattern < 0) {
    if (!text.empty()) t->add(text.data(), text.size(), 1, base);
    return;
  }
  const PreTokPattern p = static_cast<PreTokPattern>(pattern);
  size_t pos = 0, start = 0, end = 0;
  while (pos < text.size() && next_piece(p, text, pos, &start, &end)) {
    if (end > start) t->add(text.data() + start, end - start, 1, base + start);
    pos = end > pos ? end : pos + 1;
  }
}

int thread_count(int threads) {
  if (threads > 0) return threads;
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

}  // namespace

void WordCounter::add_texts(const std::vector<std::string_view>& texts, int threads) {
  const size_t n = texts.size();
  std::vector<uint64_t> base(n + 1, seen_);
  for (size_t i = 0; i < n; ++i) base[i + 1] = base[i] + texts[i].size() + 1;
  int parts = std::max(1, std::min<int>(thread_count(threads), static_cast<int>(n / 64 + 1)));
  if (parts == 1) {
    for (size_t i = 0; i < n; ++i) count_text(pattern_, bert_.get(), texts[i], base[i], table_);
  } else {
    std::vector<std::unique_ptr<Table>> locals(parts);
    parallel_for(parts, parts, [&](size_t k) {
      locals[k].reset(new Table());
      size_t lo = n * k / parts, hi = n * (k + 1) / parts;
      for (size_t i = lo; i < hi; ++i) count_text(pattern_, bert_.get(), texts[i], base[i], locals[k].get());
    });
    for (auto& l : locals) table_->absorb(*l);
  }
  seen_ = base[n];
}

void WordCounter::add_lines(std::string_view buffer, int threads) {
  const size_t n = buffer.size();
  int parts = std::max(1, std::min<int>(thread_count(threads), static_cast<int>(n / (1 << 16) + 1)));
  // Cut the buffer into `parts` ranges at line ends.
  std::vector<size_t> cut(parts + 1, n);
  cut[0] = 0;
  for (int k = 1; k < parts; ++k) {
    size_t at = std::max(cut[k - 1], n * k / parts);
    const void* nl = at < n ? std::memchr(buffer.data() + at, '\n', n - at) : nullptr;
    cut[k] = nl ? static_cast<const char*>(nl) - buffer.data() + 1 : n;
  }
  auto run = [&](size_t lo, size_t hi, Table* t) {
    while (lo < hi) {
      const void* nl = std::memchr(buffer.data() + lo, '\n', hi - lo);
      size_t end = nl ? static_cast<const char*>(nl) - buffer.data() + 1 : hi;
      count_text(pattern_, bert_.get(), buffer.substr(lo, end - lo), seen_ + lo, t);
      lo = end;
    }
  };
  if (parts == 1) {
    run(0, n, table_);
  } else {
    std::vector<std::unique_ptr<Table>> locals(parts);
    parallel_for(parts, parts, [&](size_t k) {
      locals[k].reset(new Table());
      run(cut[k], cut[k + 1], locals[k].get());
    });
    for (auto& l : locals) table_->absorb(*l);
  }
  seen_ += n + 1;
}

void WordCounter::add_spans(std::string_view text, const std::vector<std::pair<uint32_t, uint32_t>>& spans) {
  for (const auto& s : spans) {
    if (s.first > s.second || s.second > text.size())
      throw Error(ErrorKind::kInvalidInput, "pre-tokenizer span out of range");
    if (s.second > s.first) table_->add(text.data() + s.first, s.second - s.first, 1, seen_ + s.first);
  }
  seen_ += text.size() + 1;
}

void WordCounter::add_word(std::string_view word, uint64_t count) {
  if (!word.empty() && count) table_->add(word.data(), word.size(), count, seen_);
  ++seen_;
}

void WordCounter::words(std::vector<std::string_view>* words, std::vector<uint64_t>* counts) const {
  std::vector<uint32_t> order(table_->entries.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto& e = table_->entries;
  // First-seen order (ties, possible when pre-counted words arrive together, by bytes).
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (e[a].first != e[b].first) return e[a].first < e[b].first;
    return table_->key(e[a]) < table_->key(e[b]);
  });
  words->clear();
  counts->clear();
  words->reserve(order.size());
  counts->reserve(order.size());
  for (uint32_t i : order) {
    words->push_back(table_->key(e[i]));
    counts->push_back(e[i].count);
  }
}

void WordCounter::clear() { table_->clear(); }

size_t WordCounter::add_file(const std::string& path, int threads, uint64_t* bad_offset, uint64_t* bad_line) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(ErrorKind::kInvalidInput, "cannot read " + path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, &std::fclose);
  constexpr size_t kChunk = 8 << 20;
  std::string buf;
  uint64_t offset = 0, line = 1;  // of buf[0] in the file
  for (;;) {
    size_t keep = buf.size();
    buf.resize(keep + kChunk);
    size_t got = std::fread(&buf[keep], 1, kChunk, f);
    buf.resize(keep + got);
    if (got == 0 && std::ferror(f)) throw Error(ErrorKind::kInvalidInput, "error reading " + path);
    const bool eof = got == 0;
    size_t cut = buf.size();
    if (!eof) {
      size_t nl = buf.rfind('\n');
      if (nl == std::string::npos) continue;  // a very long line: read on
      cut = nl + 1;
    }
    std::string_view chunk(buf.data(), cut);
    size_t bad = utf8::validate(chunk.data(), chunk.size());
    if (bad != chunk.size()) {
      *bad_offset = offset + bad;
      *bad_line = line + static_cast<uint64_t>(std::count(chunk.begin(), chunk.begin() + bad, '\n'));
      return 0;
    }
    if (!chunk.empty()) add_lines(chunk, threads);
    line += static_cast<uint64_t>(std::count(chunk.begin(), chunk.end(), '\n'));
    offset += cut;
    buf.erase(0, cut);
    if (eof) break;
  }
  return 1;
}

// ---------------------------------------------------------------------------------------------
// The merge loop

uint32_t gpt2_printable(uint8_t b) {
  if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) return b;
  uint32_t n = 0;  // how many non-printable bytes come before b
  for (uint32_t c = 0; c < b; ++c)
    if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174)) ++n;
  return 256 + n;
}

namespace {

using train_detail::append_utf8;
using train_detail::CachedPairIndex;
using train_detail::PairIndex;
using train_detail::WordList;

class Trainer {
 public:
  Trainer(const BpeTrainerConfig& c, const TrainProgress& progress, const std::function<void()>& words_done)
      : cfg_(c), progress_(progress), words_done_(words_done) {}

  BpeTrainerResult run(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    for (const std::string& s : cfg_.special_tokens) add_token(s, 1);
    build_alphabet(words, counts);
    result_.alphabet_size = tokens_.size();
    if (cfg_.vocab_size && tokens_.size() > cfg_.vocab_size) {
      throw Error(ErrorKind::kInvalidInput,
                  "vocab_size " + std::to_string(cfg_.vocab_size) + " is smaller than the " +
                      std::to_string(tokens_.size()) +
                      " tokens the training starts with (special tokens and the initial alphabet); "
                      "raise vocab_size or lower limit_alphabet");
    }
    split_words(words, counts);
    if (words_done_) words_done_();  // the caller may free the words now
    count_pairs();
    merge_loop();
    result_.tokens = std::move(tokens_);
    return std::move(result_);
  }

 private:
  struct Entry {
    int64_t count;
    uint64_t aux;  // kSmallestIds: the pair key; kFirstSeen: (word << 32) | offset, a lower bound
    uint32_t pair;
  };

  // ---- tokens
  uint32_t add_token(const std::string& bytes, uint32_t length) {
    uint32_t id = token_ids_.find(bytes);
    if (id != BytesMap::kMissing) return id;
    id = static_cast<uint32_t>(tokens_.size());
    token_ids_.insert(bytes, id);
    tokens_.push_back(bytes);
    token_len_.push_back(length);
    return id;
  }

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
    std::unordered_map<uint32_t, uint64_t> freq;
    std::unordered_map<uint32_t, bool> is_last, is_mid;
    const bool prefixed = !cfg_.continuing_subword_prefix.empty();
    for (size_t w = 0; w < words.size(); ++w) {
      const char* p = words[w].data();
      const char* end = p + words[w].size();
      uint32_t cp = 0;
      while (p < end) {
        const bool first = p == words[w].data();
        p += utf8::decode(p, end, &cp);
        if (prefixed && !first) is_mid[cp] = true;
        train_detail::add_count(freq[cp], counts[w]);
      }
      if (!words[w].empty()) is_last[cp] = true;
    }
    const auto kept = train_detail::kept_alphabet(freq, cfg_.initial_alphabet, cfg_.limit_alphabet);
    std::string s;
    for (const auto& kv : kept) {
      s.clear();
      append_utf8(kv.first, s);
      char_id_[kv.first] = add_token(s, 1);
    }
    if (!cfg_.continuing_subword_prefix.empty()) {
      // Prefixed forms of the kept characters met after a word's first character (its position
      // in the word as written, dropped characters included, as Hugging Face counts it).
      std::vector<uint32_t> mid;
      for (const auto& kv : kept)
        if (is_mid.count(kv.first)) mid.push_back(kv.first);
      std::unordered_map<std::string, uint32_t> by_form;
      for (uint32_t cp : mid) {
        s = cfg_.continuing_subword_prefix;
        append_utf8(cp, s);
        by_form.emplace(s, cp);
      }
      for (const std::string& form : cfg_.continuing_order) {
        auto it = by_form.find(form);
        if (it == by_form.end() || mid_id_.count(it->second)) continue;
        mid_id_[it->second] = add_token(form, 1);
      }
      for (uint32_t cp : mid) {
        if (mid_id_.count(cp)) continue;
        s = cfg_.continuing_subword_prefix;
        append_utf8(cp, s);
        mid_id_[cp] = add_token(s, 1);
      }
    }
    if (!cfg_.end_of_word_suffix.empty()) {
      for (const auto& kv : kept) {
        if (!is_last.count(kv.first)) continue;
        s.clear();
        append_utf8(kv.first, s);
        s += cfg_.end_of_word_suffix;
        last_id_[kv.first] = add_token(s, 1);
      }
    }
    if (!cfg_.end_of_word_symbol.empty()) marker_id_ = add_token(cfg_.end_of_word_symbol, 1);
  }

  void split_words(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts) {
    size_t total = 0;
    for (auto w : words) total += w.size() + (marker_id_ != kNone);
    syms_.reserve(total);
    std::vector<uint32_t> ascii(128, kNone), ascii_mid(128, kNone);
    for (const auto& kv : char_id_)
      if (kv.first < 128) ascii[kv.first] = kv.second;
    for (const auto& kv : mid_id_)
      if (kv.first < 128) ascii_mid[kv.first] = kv.second;
    const bool prefixed = !cfg_.continuing_subword_prefix.empty();
    for (size_t w = 0; w < words.size(); ++w) {
      size_t start = syms_.size();
      const char* p = words[w].data();
      const char* end = p + words[w].size();
      if (cfg_.byte_level) {
        for (; p < end; ++p) syms_.push_back(byte_id_[static_cast<unsigned char>(*p)]);
      } else {
        while (p < end) {
          uint32_t cp;
          const bool first = p == words[w].data();
          p += utf8::decode(p, end, &cp);
          uint32_t id = kNone;
          if (prefixed && !first) {
            if (cp < 128) {
              id = ascii_mid[cp];
            } else {
              auto it = mid_id_.find(cp);
              if (it != mid_id_.end()) id = it->second;
            }
          } else if (p == end && !cfg_.end_of_word_suffix.empty()) {
            auto it = last_id_.find(cp);
            if (it != last_id_.end()) id = it->second;
          } else if (cp < 128) {
            id = ascii[cp];
          } else {
            auto it = char_id_.find(cp);
            if (it != char_id_.end()) id = it->second;
          }
          // Characters left out of the alphabet (limit_alphabet) are dropped, as Hugging Face does.
          if (id != kNone) syms_.push_back(id);
        }
      }
      if (marker_id_ != kNone && syms_.size() > start) syms_.push_back(marker_id_);
      if (syms_.size() == start) continue;
      words_.push_back(WordInfo{start, static_cast<int64_t>(std::min<uint64_t>(counts[w], INT64_MAX)),
                                static_cast<uint32_t>(syms_.size() - start), 0});
    }
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
    if (first_mode_) pair_first_.push_back(~0ULL);
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

  void inc(uint32_t a, uint32_t b, uint32_t w, uint32_t offset) {
    if (too_long(a, b)) return;
    uint32_t p = pair_index(PairMap::key(a, b));
    pair_count_[p] += words_[w].count;
    WordList& ws = pair_words_[p];
    if (ws.empty() || ws.back() != w) ws.push_back(w);
    if (first_mode_) {
      uint64_t first = (static_cast<uint64_t>(w) << 32) | offset;
      if (first < pair_first_[p]) pair_first_[p] = first;
    }
    touch(p);
    increased_.push_back(p);
  }

  void dec(uint32_t a, uint32_t b, uint32_t w) {
    if (too_long(a, b)) return;
    dec_pair(find_pair(PairMap::key(a, b)), w);
  }

  void dec_pair(uint32_t p, uint32_t w) {
    pair_count_[p] -= words_[w].count;
    touch(p);
  }

  void count_pairs() {
    step_ = 1;
    for (uint32_t w = 0; w < words_.size(); ++w) {
      const uint32_t* s = syms_.data() + words_[w].off;
      uint32_t off = 0;
      for (uint32_t i = 0; i + 1 < words_[w].len; ++i) {
        inc(s[i], s[i + 1], w, off);
        off += token_len_[s[i]];
      }
    }
    heap_.reserve(pair_key_.size());
    for (uint32_t p = 0; p < pair_key_.size(); ++p)
      if (pair_count_[p] > 0) heap_.push_back(entry(p));
    std::make_heap(heap_.begin(), heap_.end(), Less{this});
    touched_.clear();
    increased_.clear();
  }

  struct Less {
    const Trainer* t;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.count != b.count) return a.count < b.count;
      switch (t->cfg_.tie_break) {
        case TieBreak::kSmallestIds:
        case TieBreak::kFirstSeen: return a.aux > b.aux;
        case TieBreak::kGreatestText: {
          uint64_t ak = t->pair_key_[a.pair], bk = t->pair_key_[b.pair];
          int c = t->tokens_[ak >> 32].compare(t->tokens_[bk >> 32]);
          if (c != 0) return c < 0;
          return t->tokens_[ak & 0xFFFFFFFFu] < t->tokens_[bk & 0xFFFFFFFFu];
        }
      }
      return false;
    }
  };

  Entry entry(uint32_t p) const {
    return Entry{pair_count_[p], first_mode_ ? pair_first_[p] : pair_key_[p], p};
  }

  void push(uint32_t p) {
    heap_.push_back(entry(p));
    std::push_heap(heap_.begin(), heap_.end(), Less{this});
  }

  // The exact first occurrence of pair p: (word << 32) | symbol offset.
  uint64_t exact_first(uint32_t p) {
    uint32_t a = static_cast<uint32_t>(pair_key_[p] >> 32), b = static_cast<uint32_t>(pair_key_[p]);
    uint64_t best = ~0ULL;
    const WordList& list = pair_words_[p];
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
    Less less{this};
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), less);
      Entry e = heap_.back();
      heap_.pop_back();
      uint32_t p = e.pair;
      int64_t cur = pair_count_[p];
      if (cur <= 0) continue;
      if (e.count != cur) {
        push(p);
        continue;
      }
      if (cfg_.tie_break == TieBreak::kFirstSeen) {
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

  // Merges every (a, b) of word w into `merged`, left to right, updating the pair counts.
  // `kFirst`: also track symbol offsets (only the first-seen tie rule needs them).
  template <bool kFirst>
  void merge_word(uint32_t w, uint32_t p, uint32_t a, uint32_t b, uint32_t merged) {
    uint32_t* s = syms_.data() + words_[w].off;
    const uint32_t n = words_[w].len;
    uint32_t i = 0;
    while (i + 1 < n && !(s[i] == a && s[i + 1] == b)) ++i;
    if (i + 1 >= n) return;  // a stale entry: the word no longer holds the pair
    uint32_t j = i;          // write position (s[0, i) is unchanged)
    uint32_t off = 0;        // symbol offset of s[j]
    uint32_t prev_off = 0;   // symbol offset of s[j - 1]
    if (kFirst) {
      for (uint32_t k = 0; k < i; ++k) off += token_len_[s[k]];
      if (j > 0) prev_off = off - token_len_[s[j - 1]];
    }
    const bool check_length = cfg_.max_token_length != 0;
    while (i < n) {
      if (i + 1 < n && s[i] == a && s[i + 1] == b) {
        // Occurrences are taken left to right, and the left neighbour is the already-merged
        // symbol, so overlapping runs ("a a a") are counted exactly.
        if (j > 0) {
          dec(s[j - 1], a, w);
          inc(s[j - 1], merged, w, prev_off);
        }
        if (check_length) {
          dec(a, b, w);
        } else {
          dec_pair(p, w);
        }
        if (i + 2 < n) {
          dec(b, s[i + 2], w);
          inc(merged, s[i + 2], w, off);
        }
        s[j] = merged;
        i += 2;
      } else {
        s[j] = s[i];
        ++i;
      }
      if (kFirst) {
        prev_off = off;
        off += token_len_[s[j]];
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
      uint32_t p = pop_best();
      if (p == kNone) break;
      if (static_cast<uint64_t>(pair_count_[p]) < cfg_.min_frequency) {
        result_.stop_reason = "no pair occurs min_frequency times";
        break;
      }
      const uint32_t a = static_cast<uint32_t>(pair_key_[p] >> 32), b = static_cast<uint32_t>(pair_key_[p]);
      const uint32_t merged = add_token(join(tokens_[a], tokens_[b]), token_len_[a] + token_len_[b]);
      result_.merges.emplace_back(a, b);
      result_.merge_counts.push_back(static_cast<uint64_t>(pair_count_[p]));

      ++step_;
      pair_words_[p].take(words);
      const size_t listed = words.size();
      for (size_t k = 0; k < listed; ++k) {
        // The words are scattered in memory: fetch ahead (their info, then their symbols).
        if (k + 32 < listed) __builtin_prefetch(&words_[words[k + 32]]);
        if (k + 16 < listed) __builtin_prefetch(syms_.data() + words_[words[k + 16]].off);
        const uint32_t w = words[k];
        if (words_[w].stamp == step_) continue;  // listed twice
        words_[w].stamp = step_;
        if (first_mode_) {
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
          if (pair_count_[q] > 0) push(q);
        }
      for (uint32_t q : touched_)
        if (pair_count_[q] <= 0) pair_words_[q].release();  // nothing left to find
      touched_.clear();
      increased_.clear();
      if (progress_ && result_.merges.size() % report_every == 0) progress_(result_.merges.size(), budget);
    }
    if (progress_) progress_(result_.merges.size(), budget);
  }

  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  const BpeTrainerConfig& cfg_;
  const TrainProgress& progress_;
  const std::function<void()>& words_done_;
  BpeTrainerResult result_;

  std::vector<std::string> tokens_;
  std::vector<uint32_t> token_len_;  // in initial symbols (characters or bytes)
  BytesMap token_ids_;
  uint32_t byte_id_[256] = {};
  std::unordered_map<uint32_t, uint32_t> char_id_, last_id_, mid_id_;
  uint32_t marker_id_ = kNone;

  std::vector<uint32_t> syms_;
  struct WordInfo {  // one cache line fetch per word visited
    uint64_t off;     // of its symbols in syms_
    int64_t count;
    uint32_t len;     // symbols left
    uint32_t stamp;   // the last merge step that visited it
  };
  std::vector<WordInfo> words_;

  const bool first_mode_ = cfg_.tie_break == TieBreak::kFirstSeen;
  CachedPairIndex pair_index_;
  std::vector<uint64_t> pair_key_;
  std::vector<int64_t> pair_count_;
  std::vector<WordList> pair_words_;
  std::vector<uint32_t> pair_stamp_;
  std::vector<uint64_t> pair_first_;
  std::vector<uint32_t> touched_, increased_;
  std::vector<Entry> heap_;
  uint32_t step_ = 0;
};

}  // namespace

BpeTrainerResult train_bpe(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                           const BpeTrainerConfig& config, const TrainProgress& progress,
                           const std::function<void()>& words_done) {
  if (words.size() != counts.size()) throw Error(ErrorKind::kInvalidInput, "words and counts differ in length");
  if (words.size() >= 0xFFFFFFFFu) throw Error(ErrorKind::kInvalidInput, "too many distinct words (4 billion or more)");
  auto t = std::make_unique<Trainer>(config, progress, words_done);  // ~200 KB: not on the stack
  return t->run(words, counts);
}

}  // namespace ciyuan
