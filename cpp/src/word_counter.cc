// Word counting (see word_counter.h): per-thread tables merged at the end.
#include "ciyuan/word_counter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "ciyuan/bert.h"
#include "ciyuan/errors.h"
#include "ciyuan/front_end.h"
#include "ciyuan/hash.h"
#include "ciyuan/parallel.h"
#include "ciyuan/pretokenize.h"
#include "ciyuan/spm_normalizer.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

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

WordCounter::WordCounter(const FrontEnd& front_end)
    : front_end_(front_end),
      bert_(front_end.kind == FrontEndKind::kBert ? std::make_unique<BertFrontEnd>(front_end.bert) : nullptr),
      table_(new Table()) {}
WordCounter::~WordCounter() { delete table_; }

size_t WordCounter::size() const { return table_->entries.size(); }
uint64_t WordCounter::total() const { return table_->total; }

namespace {

// Counts the normalized words the BERT front end cuts from `text`. Words are staged first: the
// fast pass may give up part way (combining marks out of canonical order), and then the whole
// text is redone by the exact pass.
template <class Table>
void count_bert_words(const BertFrontEnd& bert, std::string_view text, uint64_t base, Table* t) {
  thread_local std::string staged;                                  // the words, back to back
  thread_local std::vector<std::pair<uint32_t, uint64_t>> lengths;  // (length, first seen)
  staged.clear();
  lengths.clear();
  auto on_word = [&](const BertWord& w) {
    staged.append(w.text.data(), w.text.size());
    lengths.emplace_back(static_cast<uint32_t>(w.text.size()), base + w.orig_start(0));
  };
  bert.each_word(text, 0, text.size(), on_word, [&] {
    staged.clear();
    lengths.clear();
  });
  size_t at = 0;
  for (const auto& [n, first] : lengths) {
    if (n) t->add(staged.data() + at, n, 1, first);
    at += n;
  }
}

// Counts the words of one line normalized by SentencePiece's normalizer (the line's '\n' left
// out, as sentencepiece reads lines): whitespace words, or the whole sentence.
template <class Table>
void count_spm_words(const SpmNormalizer& spm, std::string_view text, uint64_t base, Table* t) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  thread_local std::string normalized;
  thread_local std::vector<uint32_t> orig;
  spm.normalize(text, normalized, orig);
  if (normalized.empty()) return;
  if (!spm.options().split_by_whitespace) {
    t->add(normalized.data(), normalized.size(), 1, base);
    return;
  }
  spm_split_words(normalized, spm.options().treat_whitespace_as_suffix, [&](size_t s, size_t e) {
    t->add(normalized.data() + s, e - s, 1, base + orig[s]);
  });
}

// Counts the pieces `front_end` cuts from `text` into `t` (`bert`: built for kBert);
// `base` + offset is the "first seen" clock.
template <class Table>
void count_text(const FrontEnd& front_end, const BertFrontEnd* bert, std::string_view text, uint64_t base,
                Table* t) {
  switch (front_end.kind) {
    case FrontEndKind::kNone:
      if (!text.empty()) t->add(text.data(), text.size(), 1, base);
      return;
    case FrontEndKind::kBert:
      count_bert_words(*bert, text, base, t);
      return;
    case FrontEndKind::kSentencePiece:
      count_spm_words(*front_end.spm, text, base, t);
      return;
    case FrontEndKind::kPattern: {
      size_t pos = 0, start = 0, end = 0;
      while (pos < text.size() && next_piece(front_end.pattern, text, pos, &start, &end)) {
        if (end > start) t->add(text.data() + start, end - start, 1, base + start);
        pos = end > pos ? end : pos + 1;
      }
      return;
    }
  }
}

// Runs fill(k, table) for the parts k of a batch: straight into `table` when there is one part,
// else each part into a table of its own on its own thread, absorbed in part order (counts
// and first-seen positions add up the same either way).
template <class Table, class Fill>
void count_in_parts(Table* table, int parts, const Fill& fill) {
  if (parts == 1) {
    fill(0, table);
    return;
  }
  std::vector<std::unique_ptr<Table>> locals(parts);
  parallel_for(parts, parts, [&](size_t k) {
    locals[k].reset(new Table());
    fill(k, locals[k].get());
  });
  for (auto& l : locals) table->absorb(*l);
}

}  // namespace

void WordCounter::add_texts(const std::vector<std::string_view>& texts, int threads) {
  const size_t n = texts.size();
  std::vector<uint64_t> base(n + 1, seen_);
  for (size_t i = 0; i < n; ++i) base[i + 1] = base[i] + texts[i].size() + 1;
  const int parts = std::max(1, std::min<int>(resolve_threads(threads), static_cast<int>(n / 64 + 1)));
  count_in_parts(table_, parts, [&](size_t k, Table* t) {
    const size_t lo = n * k / parts, hi = n * (k + 1) / parts;
    for (size_t i = lo; i < hi; ++i) count_text(front_end_, bert_.get(), texts[i], base[i], t);
  });
  seen_ = base[n];
}

void WordCounter::add_lines(std::string_view buffer, int threads) {
  const size_t n = buffer.size();
  const int parts = std::max(1, std::min<int>(resolve_threads(threads), static_cast<int>(n / (1 << 16) + 1)));
  // Cut the buffer into `parts` ranges at line ends.
  std::vector<size_t> cut(parts + 1, n);
  cut[0] = 0;
  for (int k = 1; k < parts; ++k) {
    size_t at = std::max(cut[k - 1], n * k / parts);
    const void* nl = at < n ? std::memchr(buffer.data() + at, '\n', n - at) : nullptr;
    cut[k] = nl ? static_cast<const char*>(nl) - buffer.data() + 1 : n;
  }
  count_in_parts(table_, parts, [&](size_t k, Table* t) {
    for (size_t lo = cut[k], hi = cut[k + 1]; lo < hi;) {
      const void* nl = std::memchr(buffer.data() + lo, '\n', hi - lo);
      const size_t end = nl ? static_cast<const char*>(nl) - buffer.data() + 1 : hi;
      count_text(front_end_, bert_.get(), buffer.substr(lo, end - lo), seen_ + lo, t);
      lo = end;
    }
  });
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

}  // namespace ciyuan
