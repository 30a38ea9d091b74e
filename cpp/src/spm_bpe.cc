// SentencePiece's BPE model: score-ordered merges over a linked list of symbols (see spm_bpe.h).
#include "ciyuan/spm_bpe.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"
#include "windows.h"

namespace ciyuan {

namespace {

struct Symbol {
  uint32_t start, len;  // len 0: merged into the symbol on its left
  int32_t prev, next;   // -1 at the ends
  uint32_t id;          // the piece it is (kNone: none)
  bool frozen;          // a user-defined piece: never merges
};

struct Candidate {
  float score;
  int32_t left, right;
  uint32_t size;  // bytes of the merged symbol: a changed neighbour makes the entry stale
  uint32_t id;    // the merged piece
};

// A final symbol of a long run (merge_word's windows): text[start, end) is the piece id.
struct Merged {
  uint32_t start, end, id;
};

// A thread's buffers (one thread-local lookup per word).
struct Scratch {
  std::vector<Symbol> syms;
  std::vector<Candidate> heap;
  std::vector<Merged> run, window, middle, pair;  // merge_word's windows
  // Unused pieces made by a merge -> the length of their left part (to take them apart again).
  std::vector<std::pair<std::string, uint32_t>> unused_made;
};

__attribute__((noinline)) Scratch* thread_scratch() {
  static thread_local Scratch scratch;
  return &scratch;
}

// Heap order: the highest score on top, then the leftmost.
inline bool below(const Candidate& a, const Candidate& b) {
  return a.score < b.score || (a.score == b.score && a.left > b.left);
}

inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

SpmBpeModel::SpmBpeModel(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
                         SpmModelConfig config)
    : SpmModel(std::move(pieces), std::move(scores), std::move(types), config) {
  const int64_t unk = table_.unk_id();
  auto piece_id = [&](const char* p, size_t n) {  // the piece with these bytes, or kNone
    const uint32_t id = table_.symbol_id(p, n);
    return static_cast<int64_t>(id) == unk && table_.piece(id) != std::string_view(p, n) ? SpmPieces::kNone : id;
  };
  for (uint32_t id = 0; id < table_.size(); ++id) {
    const std::string& p = table_.piece(id);
    if (table_.find_matchable(p.data(), p.size()) != id) continue;  // not matchable (or a duplicate)
    for (size_t k = utf8::lead_length(static_cast<unsigned char>(p[0])); k < p.size();
         k += utf8::lead_length(static_cast<unsigned char>(p[k]))) {
      const uint32_t a = piece_id(p.data(), k), b = piece_id(p.data() + k, p.size() - k);
      if (a != SpmPieces::kNone && b != SpmPieces::kNone) pairs_.insert(PairMap::key(a, b), PairMap::Value{0, id});
    }
  }
  for (uint32_t id = 0; id < table_.size(); ++id) has_unused_ |= table_.type(id) == PieceType::kUnused;
  window_chars_ = window_from_env(window_chars_);
}

void SpmBpeModel::emit_symbol(const char* text, uint32_t s, uint32_t e, uint32_t id, size_t first,
                              std::vector<Token>& out) const {
  if (id == SpmPieces::kNone || static_cast<int64_t>(id) == table_.unk_id()) {
    table_.unknown(text, s, e, first, out);
    return;
  }
  out.push_back(Token{id, s, e});
}

void SpmBpeModel::merge_word(const char* t, uint32_t start, uint32_t end, size_t first, std::vector<Token>& out,
                             double dropout, Rng* rng) const {
  Scratch& scratch = *thread_scratch();
  std::vector<Symbol>& syms = scratch.syms;
  std::vector<Candidate>& heap = scratch.heap;
  std::vector<std::pair<std::string, uint32_t>>& unused_made = scratch.unused_made;
  const int64_t unk = table_.unk_id();
  syms.clear();
  unused_made.clear();
  auto offer = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const Symbol& a = syms[static_cast<size_t>(l)];
    const Symbol& b = syms[static_cast<size_t>(r)];
    if (a.frozen || b.frozen) return;
    const uint32_t size = a.len + b.len;
    uint32_t id;
    if (a.id != SpmPieces::kNone && b.id != SpmPieces::kNone && static_cast<int64_t>(a.id) != unk &&
        static_cast<int64_t>(b.id) != unk) {
      const PairMap::Value* v = pairs_.find(PairMap::key(a.id, b.id));
      id = v ? v->id : SpmPieces::kNone;
    } else {
      id = table_.find_matchable(t + a.start, size);
    }
    if (id == SpmPieces::kNone) return;
    if (table_.type(id) == PieceType::kUnused) unused_made.emplace_back(std::string(t + a.start, size), a.len);
    heap.push_back(Candidate{table_.score(id), l, r, size, id});
    std::push_heap(heap.begin(), heap.end(), below);
  };
  // Final symbols; an UNUSED piece goes back to its parts (the last split recorded for its text).
  auto emit = [&](auto&& self, uint32_t s, uint32_t e, uint32_t id) -> void {
    if (id != SpmPieces::kNone && table_.type(id) == PieceType::kUnused) {
      for (size_t k = unused_made.size(); k-- > 0;) {
        const auto& u = unused_made[k];
        if (u.first.size() == e - s && u.first.compare(0, u.first.size(), t + s, e - s) == 0) {
          const uint32_t m = s + u.second;
          self(self, s, m, table_.symbol_id(t + s, m - s));
          self(self, m, e, table_.symbol_id(t + m, e - m));
          return;
        }
      }
      table_.unknown(t, s, e, first, out);  // an UNUSED character: unknown, as SentencePiece has it
      return;
    }
    emit_symbol(t, s, e, id, first, out);
  };
  // The merge loop over the symbols collected so far; the survivors stay linked from syms[0].
  auto merge_syms = [&]() {
    heap.clear();
    for (size_t i = 1; i < syms.size(); ++i) offer(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), below);
      const Candidate c = heap.back();
      heap.pop_back();
      Symbol& a = syms[static_cast<size_t>(c.left)];
      Symbol& b = syms[static_cast<size_t>(c.right)];
      if (a.len == 0 || b.len == 0 || a.len + b.len != c.size) continue;  // stale
      if (dropout > 0 && uniform01(*rng) < dropout) continue;
      a.len += b.len;
      a.id = c.id;
      a.next = b.next;
      if (b.next >= 0) syms[static_cast<size_t>(b.next)].prev = c.left;
      b.len = 0;
      offer(a.prev, c.left);
      offer(c.left, a.next);
    }
  };
  // ... then their tokens.
  auto merge_and_emit = [&]() {
    merge_syms();
    for (int32_t i = syms.empty() ? -1 : 0; i >= 0; i = syms[static_cast<size_t>(i)].next) {
      const Symbol& y = syms[static_cast<size_t>(i)];
      emit(emit, y.start, y.start + y.len, y.id);
    }
    syms.clear();
  };
  // The symbol of the character at pos (frozen when no longer piece holds it).
  auto char_symbol = [&](uint32_t pos, uint32_t limit) {
    uint32_t cp;
    const uint32_t len = static_cast<uint32_t>(utf8::decode(t + pos, t + limit, &cp));
    if (cp < 0x10000) return Symbol{pos, len, -1, -1, table_.bmp_symbol_id(cp), !table_.bmp_in_longer_piece(cp)};
    return Symbol{pos, len, -1, -1, table_.symbol_id(t + pos, len), false};
  };
  auto push_symbol = [&](Symbol y) {
    const int32_t i = static_cast<int32_t>(syms.size());
    y.prev = i - 1;
    syms.push_back(y);
    if (i > 0) syms[static_cast<size_t>(i - 1)].next = i;
  };

  // Long runs in windows. A run (symbols between frozen ones) of more than window_chars_
  // characters would hold a symbol and a heap entry or two per character at once; instead each
  // window of window_chars_ characters is merged on its own and joined to the run's tokens so
  // far where that is exact (windows.h: a merge ranks by the piece it makes, whichever two
  // symbols make it). Only where runs are split at frozen symbols (no dropout, no UNUSED pieces).
  std::vector<Merged>& run = scratch.run;
  run.clear();
  auto merge_text = [&](uint32_t s, uint32_t e, std::vector<Merged>& into) __attribute__((noinline)) {
    into.clear();
    syms.clear();
    for (uint32_t pos = s; pos < e;) {
      const Symbol y = char_symbol(pos, e);
      pos += y.len;
      push_symbol(y);
    }
    merge_syms();
    for (int32_t i = syms.empty() ? -1 : 0; i >= 0; i = syms[static_cast<size_t>(i)].next) {
      const Symbol& y = syms[static_cast<size_t>(i)];
      into.push_back(Merged{y.start, y.start + y.len, y.id});
    }
    syms.clear();
  };
  auto fits = [&](const Merged& a, const Merged& b) {
    merge_text(a.start, b.end, scratch.pair);
    const std::vector<Merged>& m = scratch.pair;
    return m.size() == 2 && m[0].end == a.end && m[0].id == a.id && m[1].id == b.id;
  };
  // The characters in syms are the window's new text.
  auto close_window = [&]() __attribute__((noinline)) {
    const uint32_t window_end = syms.back().start + syms.back().len;
    merge_text(take_back(run, 0, syms.front().start), window_end, scratch.window);
    join_window(run, 0, scratch.window, scratch.middle, merge_text, fits);
  };
  // The end of a run (a frozen symbol, or the word's end): its tokens.
  auto finish_windows = [&]() __attribute__((noinline)) {
    if (!syms.empty()) close_window();
    for (const Merged& m : run) emit(emit, m.start, m.end, m.id);
    run.clear();
  };
  auto finish_run = [&]() {
    if (!run.empty()) {
      finish_windows();
    } else if (!syms.empty()) {
      merge_and_emit();
    }
  };
  // A frozen symbol takes part in no pair, so no merge crosses it: the symbols between frozen
  // ones merge on their own and a frozen one is emitted as it is (Chinese under Llama 2: most
  // characters are in no longer piece, and the heap then holds only the few runs that can
  // merge). Not with dropout (its draws follow the heap order of the whole word) nor with
  // UNUSED pieces (their split is the last one recorded anywhere in the word).
  const bool split_at_frozen = dropout <= 0 && !has_unused_;
  const size_t window = split_at_frozen ? window_chars_ : SIZE_MAX;  // runs are cut only where split
  for (uint32_t pos = start; pos < end;) {
    const size_t user = table_.has_user_defined() ? table_.user_defined_prefix(t + pos, end - pos) : 0;
    // A character no longer piece holds never merges: frozen, no pair lookups.
    const Symbol y = user ? Symbol{pos, static_cast<uint32_t>(user), -1, -1, table_.symbol_id(t + pos, user), true}
                          : char_symbol(pos, end);
    pos += y.len;
    if (y.frozen && split_at_frozen) {
      finish_run();
      emit_symbol(t, y.start, y.start + y.len, y.id, first, out);
      continue;
    }
    push_symbol(y);
    if (syms.size() >= window) close_window();
  }
  finish_run();
}

void SpmBpeModel::encode_span(std::string_view text, uint32_t start, uint32_t end, size_t first,
                              std::vector<Token>& out, SpmWordCache* cache, double dropout, Rng* rng) const {
  const char* t = text.data();
  const int64_t unk = table_.unk_id();
  spm_each_word(table_.word_break(), t, start, end, [&](uint32_t s, uint32_t e) {
    const uint32_t n = e - s;
    if (!cache || n > SpmWordCache::kMaxBytes) {
      merge_word(t, s, e, first, out, dropout, rng);
      return;
    }
    bool hit;
    SpmWordCache::Entry& entry = cache->slot(t + s, n, instance_, &hit);
    if (hit) {
      SpmWordCache::replay(entry, s, e, out);
      return;
    }
    const size_t k = out.size();
    merge_word(t, s, e, first, out, 0.0, nullptr);
    const size_t count = out.size() - k;
    if (count == 0 || count > SpmWordCache::kMaxPieces) return;
    for (size_t i = k; i < out.size(); ++i)
      if (static_cast<int64_t>(out[i].id) == unk || table_.type(out[i].id) == PieceType::kByte) return;
    entry.count = static_cast<uint8_t>(count);
    for (size_t i = 0; i < count; ++i) {
      entry.ids[i] = out[k + i].id;
      if (i + 1 < count) entry.ends[i] = static_cast<uint8_t>(out[k + i].end - s);
    }
    entry.extra = 0.f;
    cache->fill(entry);
  });
}

void SpmBpeModel::encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const {
  SpmWordCache* cache = table_.word_break() == WordBreak::kNone ? nullptr : SpmWordCache::of_thread();
  const size_t first = out.size();
  for (size_t k = 0; k < n; ++k) encode_span(text, pieces[k].first, pieces[k].second, first, out, cache, 0.0, nullptr);
}

void SpmBpeModel::sample_pieces(std::string_view text, const Span* pieces, size_t n, const SampleOptions& options,
                                Rng& rng, std::vector<Token>& out) const {
  const size_t first = out.size();
  const double dropout = options.alpha;
  for (size_t k = 0; k < n; ++k) encode_span(text, pieces[k].first, pieces[k].second, first, out, nullptr, dropout, &rng);
}

void SpmBpeModel::encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                              std::vector<Token>& out) const {
  encode_bert_words(bert, text, start, end, out, [this](const char* w, size_t n, uint32_t offset, std::vector<Token>& o) {
    const size_t k = o.size();
    encode_span(std::string_view(w, n), 0, static_cast<uint32_t>(n), k, o, nullptr, 0.0, nullptr);
    for (size_t i = k; i < o.size(); ++i) {
      o[i].start += offset;
      o[i].end += offset;
    }
  });
}

}  // namespace ciyuan
