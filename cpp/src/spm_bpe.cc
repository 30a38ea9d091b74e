// SentencePiece's BPE model: score-ordered merges over a linked list of symbols (see spm_bpe.h).
#include "ciyuan/spm_bpe.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {

struct Symbol {
  uint32_t start, len;  // len 0: merged into the symbol on its left
  int32_t prev, next;   // -1 at the ends
  bool frozen;          // a user-defined piece: never merges
};

struct Candidate {
  float score;
  int32_t left, right;
  uint32_t size;  // bytes of the merged symbol: a changed neighbour makes the entry stale
};

// Heap order: the highest score on top, then the leftmost.
inline bool below(const Candidate& a, const Candidate& b) {
  return a.score < b.score || (a.score == b.score && a.left > b.left);
}

inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

SpmBpeModel::SpmBpeModel(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
                         SpmModelConfig config)
    : table_(std::move(pieces), std::move(scores), std::move(types), config),
      instance_(SpmWordCache::new_instance()) {}

void SpmBpeModel::emit_symbol(const char* text, uint32_t s, uint32_t e, size_t first, std::vector<Token>& out) const {
  const uint32_t id = table_.symbol_id(text + s, e - s);
  if (id == SpmPieces::kNone || static_cast<int64_t>(id) == table_.unk_id()) {
    table_.unknown(text, s, e, first, out);
    return;
  }
  out.push_back(Token{id, s, e});
}

void SpmBpeModel::merge_word(const char* t, uint32_t start, uint32_t end, size_t first, std::vector<Token>& out,
                             double dropout, Rng* rng) const {
  thread_local std::vector<Symbol> syms;
  thread_local std::vector<Candidate> heap;
  // Unused pieces made by a merge -> the length of their left part (to take them apart again).
  thread_local std::vector<std::pair<std::string, uint32_t>> unused_made;
  syms.clear();
  heap.clear();
  unused_made.clear();
  for (uint32_t pos = start; pos < end;) {
    const size_t user = table_.has_user_defined() ? table_.user_defined_prefix(t + pos, end - pos) : 0;
    const uint32_t len = user ? static_cast<uint32_t>(user)
                              : std::min<uint32_t>(static_cast<uint32_t>(utf8::lead_length(static_cast<unsigned char>(t[pos]))), end - pos);
    const int32_t i = static_cast<int32_t>(syms.size());
    syms.push_back(Symbol{pos, len, i - 1, -1, user != 0});
    if (i > 0) syms[static_cast<size_t>(i - 1)].next = i;
    pos += len;
  }
  auto offer = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const Symbol& a = syms[static_cast<size_t>(l)];
    const Symbol& b = syms[static_cast<size_t>(r)];
    if (a.frozen || b.frozen) return;
    const uint32_t size = a.len + b.len;
    const uint32_t id = table_.find_matchable(t + a.start, size);
    if (id == SpmPieces::kNone) return;
    if (table_.type(id) == PieceType::kUnused) unused_made.emplace_back(std::string(t + a.start, size), a.len);
    heap.push_back(Candidate{table_.score(id), l, r, size});
    std::push_heap(heap.begin(), heap.end(), below);
  };
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
    a.next = b.next;
    if (b.next >= 0) syms[static_cast<size_t>(b.next)].prev = c.left;
    b.len = 0;
    offer(a.prev, c.left);
    offer(c.left, a.next);
  }
  // Final symbols; an UNUSED piece goes back to its parts (the last split recorded for its text).
  auto emit = [&](auto&& self, uint32_t s, uint32_t e) -> void {
    const uint32_t id = table_.find_matchable(t + s, e - s);
    if (id != SpmPieces::kNone && table_.type(id) == PieceType::kUnused) {
      for (size_t k = unused_made.size(); k-- > 0;) {
        const auto& u = unused_made[k];
        if (u.first.size() == e - s && u.first.compare(0, u.first.size(), t + s, e - s) == 0) {
          self(self, s, s + u.second);
          self(self, s + u.second, e);
          return;
        }
      }
      table_.unknown(t, s, e, first, out);  // an UNUSED character: unknown, as SentencePiece has it
      return;
    }
    emit_symbol(t, s, e, first, out);
  };
  for (int32_t i = syms.empty() ? -1 : 0; i >= 0; i = syms[static_cast<size_t>(i)].next)
    emit(emit, syms[static_cast<size_t>(i)].start, syms[static_cast<size_t>(i)].start + syms[static_cast<size_t>(i)].len);
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
      uint32_t from = s;
      for (uint32_t i = 0; i + 1 < entry.count; ++i) {
        out.push_back(Token{entry.ids[i], from, s + entry.ends[i]});
        from = s + entry.ends[i];
      }
      out.push_back(Token{entry.ids[entry.count - 1], from, e});
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
