// Word counting (see word_counter.h): per-thread tables merged at the end.
#include "ciyuan/word_counter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "ciyuan/bert.h"
#include "ciyuan/errors.h"
#include "ciyuan/front_end.h"
#include "ciyuan/hash.h"
#include "ciyuan/parallel.h"
#include "ciyuan/pretokenize.h"
#include "ciyuan/spm_normalizer.h"
#include "ciyuan/utf8.h"
#include "ciyuan/word_runs.h"

namespace ciyuan {

// Where runs go and how the memory limit is shared (set_memory_limit).
struct WordCounter::Spill {
  std::string directory;
  uint64_t table_budget = 0;  // the main table's share
  uint64_t local_budget = 0;  // a batch's thread tables together
  std::mutex mu;              // the threads' tables spill concurrently
  std::vector<std::string> runs;  // written, not merged yet
  uint64_t written = 0;           // run files written in all (their names)
  size_t spilled = 0;             // runs the tables spilled

  std::string next_path() {
    std::lock_guard<std::mutex> lock(mu);
    return directory + "/run-" + std::to_string(written++) + ".bin";
  }
  void add_run(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu);
    runs.push_back(path);
    ++spilled;
  }
  ~Spill() {
    for (const std::string& p : runs) std::remove(p.c_str());
  }
};

// word bytes -> (count, first seen). Entries sit in one dense array (no empty slots) and the
// open-addressing index holds 8-byte slots (32-bit hash fingerprint, entry number + 1), so a
// million distinct words cost about 40 MB, key bytes included. Growth is explicit (doubling)
// so that the bytes a growth would add are known before it happens: under a budget the table
// spills a run instead of growing past it.
struct WordCounter::Table {
  struct Entry {
    uint64_t offset;  // of the key in `arena`
    uint64_t count;
    uint64_t first;
    uint32_t length;
    uint32_t hash;
  };
  std::vector<uint64_t> slots;  // empty once frozen (after a merge of runs): rebuilt on demand
  std::vector<Entry> entries;
  std::string arena;
  uint64_t total = 0;
  uint64_t budget = 0;  // bytes (0: no limit)
  Spill* spill = nullptr;
  size_t peak = 0;

  Table() : slots(1024, 0) {}

  std::string_view key(const Entry& e) const { return std::string_view(arena.data() + e.offset, e.length); }

  size_t memory() const {
    return slots.capacity() * sizeof(uint64_t) + entries.capacity() * sizeof(Entry) + arena.capacity();
  }

  bool needs_grow() const { return (entries.size() + 1) * 10 > slots.size() * 7; }

  // The bytes allocated on top of memory() while a new word of `n` bytes goes in (during a
  // growth the old and the new arrays both exist).
  size_t growth(size_t n) const {
    size_t extra = 0;
    if (needs_grow()) extra += slots.size() * 2 * sizeof(uint64_t);
    if (entries.size() == entries.capacity()) extra += std::max<size_t>(64, entries.capacity() * 2) * sizeof(Entry);
    if (arena.size() + n > arena.capacity()) extra += std::max({arena.capacity() * 2, arena.size() + n, size_t(4096)});
    return extra;
  }

  void place(size_t k) {
    const size_t mask = slots.size() - 1;
    size_t i = hash_u64(entries[k].hash) & mask;
    while (slots[i]) i = (i + 1) & mask;
    slots[i] = (static_cast<uint64_t>(entries[k].hash) << 32) | (k + 1);
  }

  void grow() {
    std::vector<uint64_t>(std::max<size_t>(1024, slots.size() * 2), 0).swap(slots);
    for (size_t k = 0; k < entries.size(); ++k) place(k);
  }

  // The index of a frozen table, rebuilt.
  void reindex() {
    size_t n = 1024;
    while ((entries.size() + 1) * 10 > n * 7) n *= 2;
    std::vector<uint64_t>(n, 0).swap(slots);
    for (size_t k = 0; k < entries.size(); ++k) place(k);
  }

  void add(const char* p, size_t n, uint64_t count, uint64_t first) {
    total += count;
    add_entry(p, n, count, first);
  }

  // Adds to a word's count (and its first-seen position); `total` is the caller's.
  void add_entry(const char* p, size_t n, uint64_t count, uint64_t first) {
    if (slots.empty()) reindex();
    const uint32_t h = static_cast<uint32_t>(hash_bytes(p, n) >> 32);
    const size_t mask = slots.size() - 1;
    for (size_t i = hash_u64(h) & mask;; i = (i + 1) & mask) {
      uint64_t s = slots[i];
      if (!s) break;
      if (static_cast<uint32_t>(s >> 32) != h) continue;
      Entry& e = entries[static_cast<uint32_t>(s) - 1];
      if (e.length == n && std::memcmp(arena.data() + e.offset, p, n) == 0) {
        e.count += count;
        if (first < e.first) e.first = first;
        return;
      }
    }
    // A new word.
    if (budget && !entries.empty() && memory() + growth(n) > budget) spill_run();
    if (needs_grow()) grow();
    if (entries.size() == entries.capacity()) entries.reserve(std::max<size_t>(64, entries.capacity() * 2));
    if (arena.size() + n > arena.capacity()) arena.reserve(std::max({arena.capacity() * 2, arena.size() + n, size_t(4096)}));
    entries.push_back(Entry{arena.size(), count, first, static_cast<uint32_t>(n), h});
    arena.append(p, n);
    place(entries.size() - 1);
    peak = std::max(peak, memory());
  }

  void absorb(const Table& other) {
    total += other.total;
    for (const Entry& e : other.entries) add_entry(other.arena.data() + e.offset, e.length, e.count, e.first);
  }

  // Writes the words as a run in byte order and empties the table, keeping its storage (it
  // fills again to the same size without reallocating).
  void spill_run() {
    std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
    const std::string path = spill->next_path();
    RunWriter w(path);
    for (const Entry& e : entries) w.add(key(e), e.count, e.first);
    w.close();
    spill->add_run(path);
    entries.clear();
    arena.clear();
    std::fill(slots.begin(), slots.end(), 0);
  }

  // The words of one run, held exactly sized and without the index (which add_entry rebuilds
  // if words are added later).
  void load_run(const std::string& path) {
    RunReader r(path);
    std::vector<uint64_t>().swap(slots);
    std::vector<Entry>().swap(entries);
    std::string().swap(arena);
    entries.reserve(r.records());
    arena.reserve(r.word_bytes());
    while (r.next()) {
      std::string_view w = r.word();
      const uint32_t h = static_cast<uint32_t>(hash_bytes(w.data(), w.size()) >> 32);
      entries.push_back(Entry{arena.size(), r.count(), r.first(), static_cast<uint32_t>(w.size()), h});
      arena.append(w.data(), w.size());
    }
  }

  // Drops the index and the spare capacity: the words as load_run would hold them.
  void compact() {
    std::vector<uint64_t>().swap(slots);
    entries.shrink_to_fit();
    arena.shrink_to_fit();
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
WordCounter::~WordCounter() { delete table_; }  // before spill_, whose destructor removes leftover runs

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

// Hands the heap's free memory back to the system (glibc keeps what the counting threads freed
// in their arenas): the trainer that runs next starts from what the words really hold.
void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
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
    if (table->spill) {  // under a memory limit the threads' tables share its quarter
      locals[k]->spill = table->spill;
      locals[k]->budget = std::max<uint64_t>(1, table->spill->local_budget / parts);
    }
    fill(k, locals[k].get());
  });
  for (auto& l : locals) table->absorb(*l);
  // Under a memory limit the freed tables go back to the system after every batch: glibc keeps
  // a thread's freed memory in its arena, and when the threads contend for arenas (a busy
  // machine) it opens more of them, so the kept memory grew past the limit (a 64MB count of
  // the Chinese corpus peaked at 72 MB with two other processes on the cores).
  if (table->spill) {
    locals.clear();
    release_free_memory();
  }
}

}  // namespace

int WordCounter::max_parts() const {
  // Under a limit each thread's table gets at least 64 KiB of the quarter they share (a smaller
  // table would spill runs of a few words); a small limit therefore counts on fewer threads.
  if (!spill_) return 1 << 20;
  return static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(1 << 20, spill_->local_budget / (64 << 10))));
}

void WordCounter::add_texts(const std::vector<std::string_view>& texts, int threads) {
  const size_t n = texts.size();
  std::vector<uint64_t> base(n + 1, seen_);
  for (size_t i = 0; i < n; ++i) base[i + 1] = base[i] + texts[i].size() + 1;
  const int parts = std::max(1, std::min({resolve_threads(threads), static_cast<int>(n / 64 + 1), max_parts()}));
  count_in_parts(table_, parts, [&](size_t k, Table* t) {
    const size_t lo = n * k / parts, hi = n * (k + 1) / parts;
    for (size_t i = lo; i < hi; ++i) count_text(front_end_, bert_.get(), texts[i], base[i], t);
  });
  seen_ = base[n];
}

void WordCounter::add_lines(std::string_view buffer, int threads) {
  const size_t n = buffer.size();
  const int parts =
      std::max(1, std::min({resolve_threads(threads), static_cast<int>(n / (1 << 16) + 1), max_parts()}));
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

void WordCounter::clear() {
  table_->clear();
  if (spill_) {
    for (const std::string& p : spill_->runs) std::remove(p.c_str());
    spill_->runs.clear();
  }
}

void WordCounter::set_memory_limit(uint64_t bytes, const std::string& directory) {
  if (spill_ && !spill_->runs.empty())
    throw Error(ErrorKind::kInvalidInput, "set_memory_limit: runs are pending (call finish() first)");
  if (spill_) runs_before_ += spill_->spilled;
  if (bytes == 0) {
    spill_.reset();
    table_->spill = nullptr;
    table_->budget = 0;
    chunk_bytes_ = 8 << 20;
    return;
  }
  spill_.reset(new Spill());
  spill_->directory = directory;
  spill_->table_budget = bytes / 2;
  spill_->local_budget = bytes / 4;
  table_->spill = spill_.get();
  table_->budget = spill_->table_budget;
  // A chunk and the partial line carried to the next one: at most bytes / 8 together.
  chunk_bytes_ = std::min<size_t>(8 << 20, std::max<size_t>(bytes / 16, 4096));
}

void WordCounter::finish() {
  Table& t = *table_;
  if (!spill_ || spill_->runs.empty()) {
    t.compact();
    release_free_memory();
    return;
  }
  if (!t.entries.empty()) t.spill_run();
  // At most kFanIn runs are open at once (a buffer each): more are merged in groups first.
  constexpr size_t kFanIn = 64;
  std::vector<std::string>& runs = spill_->runs;
  while (runs.size() > 1) {
    const size_t take = std::min(kFanIn, runs.size());
    std::vector<std::string> group(runs.begin(), runs.begin() + take);
    const std::string out = spill_->next_path();
    RunWriter w(out);
    merge_runs(group, [&](const RunRecord& r) { w.add(r.word, r.count, r.first); });
    w.close();
    runs.erase(runs.begin(), runs.begin() + take);
    runs.push_back(out);
    for (const std::string& p : group) std::remove(p.c_str());
  }
  t.load_run(runs[0]);
  std::remove(runs[0].c_str());
  runs.clear();
  release_free_memory();
}

void WordCounter::merge(const WordCounter& other) {
  if (&other == this) throw Error(ErrorKind::kInvalidInput, "a word counter cannot be merged into itself");
  if (other.spill_ && !other.spill_->runs.empty())
    throw Error(ErrorKind::kInvalidInput, "merge: the other counter has spilled runs (call its finish() first)");
  const Table& o = *other.table_;
  const uint64_t shift = seen_;  // its words were seen after all of ours
  for (const auto& e : o.entries) table_->add_entry(o.arena.data() + e.offset, e.length, e.count, e.first + shift);
  table_->total += o.total;
  seen_ += other.seen_;
}

namespace {

constexpr char kDumpMagic[8] = {'C', 'Y', 'W', 'C', '1', 0, 0, 0};

template <class T>
void put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads a T at `*at` of `data`, or fails with the dump's one message.
template <class T>
T take(std::string_view data, size_t* at) {
  if (data.size() - *at < sizeof(T)) throw Error(ErrorKind::kInvalidInput, "not a ciyuan word-count dump (truncated)");
  T v;
  std::memcpy(&v, data.data() + *at, sizeof v);
  *at += sizeof v;
  return v;
}

}  // namespace

std::string WordCounter::dump() const {
  if (spill_ && !spill_->runs.empty())
    throw Error(ErrorKind::kInvalidInput, "dump: runs are pending (call finish() first)");
  const Table& t = *table_;
  std::string out;
  out.reserve(32 + t.entries.size() * 20 + t.arena.size());
  out.append(kDumpMagic, sizeof kDumpMagic);
  put<uint64_t>(&out, seen_);
  put<uint64_t>(&out, t.total);
  put<uint64_t>(&out, t.entries.size());
  for (const auto& e : t.entries) {
    put<uint32_t>(&out, e.length);
    put<uint64_t>(&out, e.count);
    put<uint64_t>(&out, e.first);
    out.append(t.arena.data() + e.offset, e.length);
  }
  return out;
}

void WordCounter::load(std::string_view data) {
  if (size() != 0 || seen_ != 0) throw Error(ErrorKind::kInvalidInput, "load: the counter is not empty");
  if (data.size() < sizeof kDumpMagic || std::memcmp(data.data(), kDumpMagic, sizeof kDumpMagic) != 0)
    throw Error(ErrorKind::kInvalidInput, "not a ciyuan word-count dump (bad magic)");
  size_t at = sizeof kDumpMagic;
  const uint64_t clock = take<uint64_t>(data, &at);
  const uint64_t total = take<uint64_t>(data, &at);
  const uint64_t n = take<uint64_t>(data, &at);
  for (uint64_t k = 0; k < n; ++k) {
    const uint32_t len = take<uint32_t>(data, &at);
    const uint64_t count = take<uint64_t>(data, &at);
    const uint64_t first = take<uint64_t>(data, &at);
    if (data.size() - at < len) throw Error(ErrorKind::kInvalidInput, "not a ciyuan word-count dump (truncated)");
    table_->add_entry(data.data() + at, len, count, first);
    at += len;
  }
  if (at != data.size()) throw Error(ErrorKind::kInvalidInput, "not a ciyuan word-count dump (trailing bytes)");
  table_->total += total;
  seen_ = clock;
}

size_t WordCounter::memory() const { return table_->memory(); }
size_t WordCounter::peak_memory() const { return table_->peak; }
size_t WordCounter::runs() const { return runs_before_ + (spill_ ? spill_->spilled : 0); }

size_t WordCounter::add_file(const std::string& path, int threads, uint64_t* bad_offset, uint64_t* bad_line) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(ErrorKind::kInvalidInput, "cannot read " + path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, &std::fclose);
  const size_t kChunk = chunk_bytes_;
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
