// Unigram language model: Viterbi, n-best and sampling over the piece lattice (see unigram.h).
#include "ciyuan/unigram.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {

using Path = std::vector<std::pair<uint32_t, int32_t>>;  // (end, id), last piece first

// A uniform double in [0, 1) from the generator (the same on every platform).
inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// The index of the weight picked with probability weight / sum(weights).
size_t pick(const std::vector<double>& weights, Rng& rng) {
  double sum = 0;
  for (double w : weights) sum += w;
  double u = uniform01(rng) * sum;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (u < weights[i]) return i;
    u -= weights[i];
  }
  for (size_t i = weights.size(); i-- > 0;)
    if (weights[i] > 0) return i;
  return 0;
}

}  // namespace

UnigramModel::UnigramModel(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
                           SpmModelConfig config, std::vector<double> exact_scores)
    : SpmModel(std::move(pieces), std::move(scores), std::move(types), config), hf_(config.hf_viterbi) {
  const size_t n = table_.size();
  lattice_score_.assign(n, 0.f);
  for (uint32_t i = 0; i < n; ++i) {
    const PieceType t = table_.type(i);
    if (t == PieceType::kNormal) {
      lattice_score_[i] = table_.score(i);
    } else if (t == PieceType::kUserDefined) {
      // Observed: 0.1 per byte less 0.1, whatever the piece's score.
      lattice_score_[i] = static_cast<float>(0.1 * static_cast<double>(table_.piece(i).size()) - 0.1);
    }
  }
  unk_score_ = table_.min_score() - 10.0f;
  // How far the best score at a position can be from the total where its word starts, per
  // character: the largest |lattice score| (the unknown node's included), and 0.01 for the
  // rounding of float sums below kScoreReset (an ulp there is at most 2^-7). A word whose total
  // is further than that from kScoreReset re-centres nowhere inside (viterbi, encode_word).
  float reach = std::max(0.f, -unk_score_);
  for (uint32_t i = 0; i < n; ++i) {
    const PieceType t = table_.type(i);
    if (t != PieceType::kNormal && t != PieceType::kUserDefined) continue;
    reach = std::max(reach, std::fabs(lattice_score_[i]));
    longest_ = std::max(longest_, static_cast<uint32_t>(table_.piece(i).size()));
  }
  reach_ = static_cast<double>(reach) + 0.01;
  cache_total_limit_ = static_cast<float>(kScoreReset - reach_ * static_cast<double>(SpmWordCache::kMaxBytes) - 1.0);
  first_.assign(table_.char_code_count(), First{-1, kUnkNode, unk_score_});
  if (!table_.trie_empty()) {
    const DoubleArrayTrie& trie = table_.trie();
    for (uint32_t c = 1; c < first_.size(); ++c) {
      const int32_t node = trie.child(DoubleArrayTrie::kRoot, c);
      if (node < 0) continue;
      const int32_t id = trie.value(node);
      if (id >= 0) {
        first_[c].id = id;
        first_[c].score = lattice_score_[static_cast<size_t>(id)];
      }
      // child_bits holds a bit for each child: none means a leaf, nothing to walk.
      if (trie.data()[node].child_bits != 0) first_[c].node = node;
    }
  }
  if (hf_) {
    // Hugging Face's arithmetic: the scores as given, every piece's own (a user-defined one's
    // too), the unknown node the lowest score of all pieces less 10.
    if (exact_scores.size() != n)
      throw Error(ErrorKind::kModel, "hf_viterbi needs one exact score per piece (" + std::to_string(n) + "), got " +
                                         std::to_string(exact_scores.size()));
    score64_.assign(n, 0.0);
    double low = std::numeric_limits<double>::infinity();
    for (uint32_t i = 0; i < n; ++i) {
      low = std::min(low, exact_scores[i]);
      const PieceType t = table_.type(i);
      if (t == PieceType::kNormal || t == PieceType::kUserDefined) {
        score64_[i] = exact_scores[i];
        reach64_ = std::max(reach64_, std::fabs(exact_scores[i]));
      }
    }
    unk_score64_ = low - 10.0;
    reach64_ = std::max(reach64_, std::fabs(unk_score64_));
  }
}

// One thread's buffers, grown only: a word's Viterbi allocates nothing once they are large
// enough. Fetched once per encode call and passed down, since every thread_local access in a
// shared library may be a __tls_get_addr call.
struct UnigramModel::Scratch {
  template <class T>
  struct CellOf {
    T score;
    int32_t start;  // character index; -1: no candidate yet
    int32_t id;
  };
  using Cell = CellOf<float>;
  using Cell64 = CellOf<double>;
  struct MarginCell {
    double best, second;
    int32_t start;
    int32_t id;
  };
  std::vector<uint32_t> code, off;  // per character: trie code, byte offset (one more: the end)
  std::vector<Cell> cells;
  std::vector<Cell64> cells64;
  // The cells of a T Viterbi.
  template <class T>
  std::vector<CellOf<T>>& cells_of() {
    if constexpr (std::is_same_v<T, float>) {
      return cells;
    } else {
      return cells64;
    }
  }
  std::vector<MarginCell> margin_cells;
  Path path;  // the best path: (end, id), last piece first; path_len of it are valid
  size_t path_len = 0;

  // Sizes the buffers for a word of `chars` characters (grown only).
  template <class Cell>
  Cell* prepare(std::vector<Cell>& cell_buffer, uint32_t chars) {
    if (cell_buffer.size() < size_t{chars} + 1) cell_buffer.resize(size_t{chars} + 1);
    if (path.size() < size_t{chars}) path.resize(chars);
    return cell_buffer.data();
  }
  // The path ending at `chars` into path (written through a pointer: push_back would store the
  // vector's end back to memory on every node of a long CJK line).
  template <class Cell, class Each>
  void backtrack(const Cell* cells, uint32_t chars, Each&& each) {
    const uint32_t* offsets = off.data();
    std::pair<uint32_t, int32_t>* p = path.data();
    size_t k = 0;
    for (uint32_t e = chars; e > 0; e = static_cast<uint32_t>(cells[e].start)) {
      p[k++] = {offsets[e], cells[e].id};
      each(cells[e]);
    }
    path_len = k;
  }
};

UnigramModel::Scratch& UnigramModel::scratch() {
  thread_local Scratch s;
  return s;
}

uint32_t UnigramModel::decode(const char* w, uint32_t n, Scratch& s) const {
  if (s.code.size() < size_t{n} + 1) {
    s.code.resize(size_t{n} + 1);
    s.off.resize(size_t{n} + 1);
  }
  uint32_t* code = s.code.data();
  uint32_t* off = s.off.data();
  const uint16_t* bmp = table_.bmp_codes();
  const unsigned char* u = reinterpret_cast<const unsigned char*>(w);
  uint32_t k = 0;
  for (uint32_t at = 0; at < n; ++k) {
    const uint32_t b = u[at];
    uint32_t cp, len;
    off[k] = at;
    if (b < 0x80) {
      cp = b;
      len = 1;
    } else if ((b & 0xF0) == 0xE0 && n - at >= 3 && (u[at + 1] & 0xC0) == 0x80 && (u[at + 2] & 0xC0) == 0x80 &&
               (cp = utf8::decode_three(u + at)) >= 0x800 &&
               (cp < 0xD800 || cp > 0xDFFF)) {
      // A valid three-byte character (CJK), decoded here rather than by the general decoder.
      len = 3;
    } else {
      len = static_cast<uint32_t>(utf8::decode(w + at, w + n, &cp));
    }
    const uint32_t c = cp < 0x10000 ? bmp[cp] : SpmPieces::kFarCode;
    code[k] = c != SpmPieces::kFarCode ? c : table_.char_code(cp);
    at += len;
  }
  off[k] = n;
  return k;
}

// One walk down the trie from each character over the precomputed codes; the first step is a
// read of first_, so a character in no piece (code 0, an unknown node) or in no longer piece
// (a CJK character that is a piece alone) costs one table read and no trie step.
// T = float: SentencePiece's float scores (the single character's from first_); T = double:
// hf_viterbi's exact ones (score64_), in the same order.
template <class T, class Start, class Relax>
void UnigramModel::each_edge(const uint32_t* code, uint32_t chars, Start&& start, Relax&& relax) const {
  const DoubleArrayTrie::Node* nodes = table_.trie().data();
  const First* first = first_.data();
  const T* score;
  T unk;
  if constexpr (std::is_same_v<T, float>) {
    score = lattice_score_.data();
    unk = unk_score_;
  } else {
    score = score64_.data();
    unk = unk_score64_;
  }
  for (uint32_t i = 0; i < chars; ++i) {
    start(i);
    const First f = first[code[i]];
    if constexpr (std::is_same_v<T, float>) {
      if (f.id != kUnkNode) relax(i, i + 1, f.id, f.score);
    } else {
      if (f.id != kUnkNode) relax(i, i + 1, f.id, score[f.id]);
    }
    int32_t node = f.node;
    for (uint32_t j = i + 1; node >= 0 && j < chars && code[j]; ++j) {
      node = DoubleArrayTrie::child_of(nodes, node, code[j]);
      if (node < 0) break;
      const int32_t id = nodes[node].value;
      if (id >= 0) relax(i, j + 1, id, score[static_cast<size_t>(id)]);
    }
    if (f.id == kUnkNode) relax(i, i + 1, kUnkNode, unk);
  }
}

template <class T>
T UnigramModel::viterbi(const char* w, uint32_t n, T total, Scratch& s) const {
  using Cell = Scratch::CellOf<T>;
  const uint32_t chars = decode(w, n, s);
  Cell* cells = s.prepare(s.cells_of<T>(), chars);
  cells[0] = Cell{total, 0, 0};
  for (uint32_t k = 1; k <= chars; ++k) cells[k].start = -1;
  auto relax = [cells](uint32_t i, uint32_t e, int32_t id, T score) {
    const T cand = score + cells[i].score;
    Cell& c = cells[e];
    if (c.start < 0 || cand > c.score) c = Cell{cand, static_cast<int32_t>(i), id};
  };
  if constexpr (std::is_same_v<T, double>) {
    // Hugging Face's: no re-centring.
    each_edge<double>(s.code.data(), chars, [](uint32_t) {}, relax);
    s.backtrack(cells, chars, [](const Cell&) {});
    return cells[chars].score;
  } else {
    // SentencePiece's re-centring: when the best score where the next nodes start is past
    // kScoreReset either way, it is subtracted from that position and from every position
    // already reached beyond it (at most the longest piece ahead: its bytes bound its
    // characters), and the sums go on from 0.
    const uint32_t longest = longest_;
    auto recentre = [cells, chars, longest](uint32_t i) {
      const float here = cells[i].score;
      if (!(std::fabs(here) > kScoreReset)) return;
      const uint32_t last = std::min(chars, i + longest);
      cells[i].score = 0.f;
      for (uint32_t k = i + 1; k <= last; ++k)
        if (cells[k].start >= 0) cells[k].score -= here;
    };
    // No position's score can pass kScoreReset when the total is further from it than the
    // word's characters can move a score: then no test per character (most words and lines).
    if (std::fabs(static_cast<double>(total)) + reach_ * chars + 1.0 < kScoreReset) {
      each_edge<float>(s.code.data(), chars, [](uint32_t) {}, relax);
    } else {
      each_edge<float>(s.code.data(), chars, recentre, relax);
    }
    s.backtrack(cells, chars, [](const Cell&) {});
    return cells[chars].score;
  }
}

template <class T>
double UnigramModel::viterbi_margin(const char* w, uint32_t n, Scratch& s) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  using Cell = Scratch::MarginCell;
  const uint32_t chars = decode(w, n, s);
  Cell* cells = s.prepare(s.margin_cells, chars);
  cells[0] = Cell{0.0, -kInf, 0, 0};
  for (uint32_t k = 1; k <= chars; ++k) cells[k] = Cell{-kInf, -kInf, -1, 0};
  each_edge<T>(s.code.data(), chars, [](uint32_t) {}, [cells](uint32_t i, uint32_t e, int32_t id, T score) {
    const double cand = cells[i].best + score;
    Cell& c = cells[e];
    if (c.start < 0) {
      c = Cell{cand, -kInf, static_cast<int32_t>(i), id};
    } else if (cand > c.best) {
      c.second = c.best;
      c.best = cand;
      c.start = static_cast<int32_t>(i);
      c.id = id;
    } else if (cand > c.second) {
      c.second = cand;
    }
  });
  double margin = kInf;
  s.backtrack(cells, chars, [&margin](const Cell& c) { margin = std::min(margin, c.best - c.second); });
  return margin;
}

void UnigramModel::emit(const char* text, uint32_t start, const std::pair<uint32_t, int32_t>* path, size_t count,
                        size_t first, std::vector<Token>& out) const {
  // At least a token per node but the merged unknown ones: one growth, not one per doubling.
  if (out.capacity() - out.size() < count) out.reserve(out.size() + std::max(count, out.size() / 2));
  uint32_t s = start;
  for (size_t i = count; i-- > 0;) {
    uint32_t e = start + path[i].first;
    if (path[i].second == kUnkNode) {
      // One unknown node per character; without byte fallback a run of them is one token (as
      // unknown() merges it), so the run takes one call.
      if (!table_.byte_fallback())
        while (i > 0 && path[i - 1].second == kUnkNode) e = start + path[--i].first;
      table_.unknown(text, s, e, first, out);
    } else {
      out.push_back(Token{static_cast<uint32_t>(path[i].second), s, e});
    }
    s = e;
  }
}

// Inlined into encode_word, its one caller: a call per word of a text costs more than the loop.
__attribute__((always_inline)) inline void UnigramModel::replay(const char* text, const SpmWordCache::Entry& entry, uint32_t start, uint32_t end,
                          size_t first, std::vector<Token>& out) const {
  uint32_t from = start;
  for (uint32_t i = 0; i < entry.count; ++i) {
    const uint32_t to = i + 1 < entry.count ? start + entry.ends[i] : end;
    if (entry.ids[i] == kCachedUnk) {
      table_.unknown(text, from, to, first, out);
    } else {
      out.push_back(Token{entry.ids[i], from, to});
    }
    from = to;
  }
}

template <class T>
void UnigramModel::encode_word(std::string_view text, uint32_t start, uint32_t end, T& total, size_t first,
                               std::vector<Token>& out, SpmWordCache* cache, Scratch& s) const {
  const char* w = text.data() + start;
  const uint32_t n = end - start;
  if (cache && n <= SpmWordCache::kMaxBytes) {
    bool hit;
    SpmWordCache::Entry& entry = cache->slot(w, n, instance_, &hit);
    if (!hit) {
      // The word's path from 0 and its smallest margin; kept even when it is not safe at this
      // total (it may be at the next, smaller one).
      const double margin = viterbi_margin<T>(w, n, s);
      const size_t len = s.path_len;
      if (len <= SpmWordCache::kMaxPieces) {
        entry.count = static_cast<uint8_t>(len);
        for (size_t i = 0; i < len; ++i) {
          const auto& p = s.path[len - 1 - i];
          entry.ids[i] = static_cast<uint32_t>(p.second);  // kUnkNode: kCachedUnk
          if (i + 1 < len) entry.ends[i] = static_cast<uint8_t>(p.first);
        }
        entry.extra = static_cast<float>(std::min(margin, 1e30));
        cache->fill(entry);
        hit = true;
      }
    }
    if constexpr (std::is_same_v<T, double>) {
      // hf_viterbi: at a total of 0 (the word starts its piece) the cached path is the double
      // Viterbi's, computed the same way; elsewhere it is when its smallest margin is far above
      // the rounding of double sums of this size (every value on the way is within
      // |total| + reach64_ * n of 0; 2^-40 of that is thousands of ulps for 16 additions).
      if (hit) {
        const double bound = (std::fabs(total) + reach64_ * n + 1.0) * 0x1.0p-40;
        if (total == 0.0 || static_cast<double>(entry.extra) > bound) {
          const double* score = score64_.data();
          double after = total;
          for (uint32_t i = 0; i < entry.count; ++i) {
            const uint32_t id = entry.ids[i];
            after = (id == kCachedUnk ? unk_score64_ : score[id]) + after;
          }
          replay(text.data(), entry, start, end, first, out);
          total = after;
          return;
        }
      }
    } else if (hit && std::fabs(total) < cache_total_limit_) {
      // A cached path comes from sums from 0: it needs a total far enough from kScoreReset
      // that no position of the word re-centres (at the word's start included: viterbi() does
      // that). The path's float total, added in SentencePiece's order; the path found without the
      // running total is the float Viterbi's when its smallest margin is far above the
      // rounding error of float sums of this size (2^-17 of them: 64 ulps).
      const float* score = lattice_score_.data();
      float after = total;
      for (uint32_t i = 0; i < entry.count; ++i) {
        const uint32_t id = entry.ids[i];
        after = (id == kCachedUnk ? unk_score_ : score[id]) + after;
      }
      const double bound =
          (std::fabs(static_cast<double>(total)) + std::fabs(static_cast<double>(after)) + 1.0) * 0x1.0p-17;
      if (entry.extra > bound) {
        replay(text.data(), entry, start, end, first, out);
        total = after;
        return;
      }
    }
  }
  total = viterbi<T>(w, n, total, s);
  emit(text.data(), start, s.path.data(), s.path_len, first, out);
}


template <class T>
void UnigramModel::encode_span_as(std::string_view text, uint32_t start, uint32_t end, T& total,
                                  std::vector<Token>& out) const {
  SpmWordCache* cache = table_.word_break() == WordBreak::kNone ? nullptr : SpmWordCache::of_thread();
  Scratch& scratch = UnigramModel::scratch();
  const size_t first = out.size();
  spm_each_word(table_.word_break(), text.data(), start, end,
                [&](uint32_t s, uint32_t e) { encode_word<T>(text, s, e, total, first, out, cache, scratch); });
}

void UnigramModel::encode_span(std::string_view text, uint32_t start, uint32_t end, float& total,
                               std::vector<Token>& out) const {
  if (hf_) {
    double exact = 0.0;  // Hugging Face's: every span from 0
    encode_span_as<double>(text, start, end, exact, out);
  } else {
    encode_span_as<float>(text, start, end, total, out);
  }
}

template <class T>
void UnigramModel::encode_pieces_as(std::string_view text, const Span* pieces, size_t n,
                                    std::vector<Token>& out) const {
  SpmWordCache* cache = table_.word_break() == WordBreak::kNone ? nullptr : SpmWordCache::of_thread();
  Scratch& scratch = UnigramModel::scratch();
  const size_t first = out.size();
  T total = 0;
  uint32_t last_end = 0xFFFFFFFFu;
  for (size_t k = 0; k < n; ++k) {
    // SentencePiece: adjacent pieces continue one Viterbi (the running total carries on), as
    // it runs one over the whole normalized text. Hugging Face: each piece (pre-token) is a
    // Viterbi of its own, from 0.
    if (std::is_same_v<T, double> || pieces[k].first != last_end) total = 0;
    last_end = pieces[k].second;
    spm_each_word(table_.word_break(), text.data(), pieces[k].first, pieces[k].second,
                  [&](uint32_t s, uint32_t e) { encode_word<T>(text, s, e, total, first, out, cache, scratch); });
  }
}

void UnigramModel::encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const {
  if (hf_) {
    encode_pieces_as<double>(text, pieces, n, out);
  } else {
    encode_pieces_as<float>(text, pieces, n, out);
  }
}

void UnigramModel::encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                               std::vector<Token>& out) const {
  encode_bert_words(bert, text, start, end, out, [this](const char* w, size_t n, uint32_t offset, std::vector<Token>& o) {
    const size_t k = o.size();
    float total = 0.f;
    encode_span(std::string_view(w, n), 0, static_cast<uint32_t>(n), total, o);
    for (size_t i = k; i < o.size(); ++i) {
      o[i].start += offset;
      o[i].end += offset;
    }
  });
}

// -- lattice, n-best, sampling -----------------------------------------------------------------

void UnigramModel::lattice(std::string_view text, uint32_t start, uint32_t end, std::vector<Edge>& edges) const {
  edges.clear();
  Scratch& s = scratch();
  const uint32_t chars = decode(text.data() + start, end - start, s);
  const uint32_t* off = s.off.data();
  auto add = [&](uint32_t i, uint32_t j, int32_t id, double score) {
    edges.push_back(Edge{start + off[i], start + off[j], id, score});
  };
  if (hf_) {
    each_edge<double>(s.code.data(), chars, [](uint32_t) {}, add);
  } else {
    each_edge<float>(s.code.data(), chars, [](uint32_t) {}, add);
  }
}

void UnigramModel::emit_path(std::string_view text, const std::vector<Edge>& path, std::vector<Token>& out) const {
  const size_t first = out.size();
  for (const Edge& e : path) {
    if (e.id == kUnkNode) {
      table_.unknown(text.data(), e.start, e.end, first, out);
    } else {
      out.push_back(Token{static_cast<uint32_t>(e.id), e.start, e.end});
    }
  }
}

void UnigramModel::nbest_piece(std::string_view text, Span piece, size_t k, std::vector<std::vector<Token>>& paths,
                               std::vector<float>& scores) const {
  paths.clear();
  scores.clear();
  if (k == 0) return;
  const uint32_t start = piece.first, end = piece.second;
  if (start >= end) {
    paths.emplace_back();
    scores.push_back(0.f);
    return;
  }
  std::vector<Edge> edges;
  lattice(text, start, end, edges);
  // The k best partial paths ending at each position: (score, edge, rank of its predecessor).
  struct Hyp {
    double score;
    int32_t edge;
    int32_t prev;
  };
  const uint32_t n = end - start;
  std::vector<std::vector<Hyp>> best(n + 1);
  std::vector<uint8_t> done(n + 1, 0);
  best[0].push_back(Hyp{0.0, -1, -1});
  auto finish = [&](uint32_t pos) {
    if (done[pos]) return;
    done[pos] = 1;
    std::vector<Hyp>& h = best[pos];
    std::stable_sort(h.begin(), h.end(), [](const Hyp& a, const Hyp& b) { return a.score > b.score; });
    if (h.size() > k) h.resize(k);
  };
  for (size_t i = 0; i < edges.size(); ++i) {
    const Edge& e = edges[i];
    const uint32_t s = e.start - start;
    finish(s);
    std::vector<Hyp>& into = best[e.end - start];
    for (size_t r = 0; r < best[s].size(); ++r)
      into.push_back(Hyp{best[s][r].score + e.score, static_cast<int32_t>(i), static_cast<int32_t>(r)});
    if (into.size() > 4 * k + 64) {  // keep memory bounded: the k best so far
      std::stable_sort(into.begin(), into.end(), [](const Hyp& a, const Hyp& b) { return a.score > b.score; });
      into.resize(k);
    }
  }
  finish(n);
  std::vector<Edge> path;
  for (size_t r = 0; r < best[n].size(); ++r) {
    path.clear();
    uint32_t pos = n;
    int32_t rank = static_cast<int32_t>(r);
    while (pos > 0) {
      const Hyp& h = best[pos][static_cast<size_t>(rank)];
      const Edge& e = edges[static_cast<size_t>(h.edge)];
      path.push_back(e);
      rank = h.prev;
      pos = e.start - start;
    }
    std::reverse(path.begin(), path.end());
    paths.emplace_back();
    emit_path(text, path, paths.back());
    scores.push_back(static_cast<float>(best[n][r].score));
  }
}

void UnigramModel::sample_pieces(std::string_view text, const Span* pieces, size_t n, const SampleOptions& options,
                                 Rng& rng, std::vector<Token>& out) const {
  if (options.nbest_size == 1) {
    encode_pieces(text, pieces, n, out);
    return;
  }
  const double theta = options.alpha;
  std::vector<Edge> edges, path;
  std::vector<double> weights;
  std::vector<std::vector<Token>> paths;
  std::vector<float> scores;
  for (size_t p = 0; p < n; ++p) {
    const uint32_t start = pieces[p].first, end = pieces[p].second;
    if (start >= end) continue;
    if (options.nbest_size > 1) {
      nbest_piece(text, pieces[p], static_cast<size_t>(options.nbest_size), paths, scores);
      // Probability proportional to exp(theta * score), against the largest exponent.
      double hi = -std::numeric_limits<double>::infinity();
      for (float s : scores) hi = std::max(hi, theta * s);
      weights.clear();
      for (float s : scores) weights.push_back(std::exp(theta * s - hi));
      const std::vector<Token>& chosen = paths[pick(weights, rng)];
      out.insert(out.end(), chosen.begin(), chosen.end());
      continue;
    }
    // Forward filtering: alpha[pos] = log sum over paths to pos of exp(theta * score).
    lattice(text, start, end, edges);
    const uint32_t len = end - start;
    std::vector<double> alpha(len + 1, -std::numeric_limits<double>::infinity());
    alpha[0] = 0.0;
    for (const Edge& e : edges) {
      const double a = alpha[e.start - start] + theta * e.score;
      double& into = alpha[e.end - start];
      if (into == -std::numeric_limits<double>::infinity()) {
        into = a;
      } else {
        const double hi = std::max(into, a);
        into = hi + std::log1p(std::exp(std::min(into, a) - hi));
      }
    }
    // Edges by end position, for the backward pass.
    std::vector<uint32_t> by_end(edges.size()), first_at(len + 2, 0);
    for (const Edge& e : edges) ++first_at[e.end - start + 1];
    for (uint32_t i = 1; i <= len + 1; ++i) first_at[i] += first_at[i - 1];
    {
      std::vector<uint32_t> fill(first_at.begin(), first_at.end() - 1);
      for (uint32_t i = 0; i < edges.size(); ++i) by_end[fill[edges[i].end - start]++] = i;
    }
    // Backward sampling: from the end, an edge into the current position with probability
    // exp(alpha[its start] + theta * score - alpha[position]).
    path.clear();
    for (uint32_t pos = len; pos > 0;) {
      weights.clear();
      for (uint32_t j = first_at[pos]; j < first_at[pos + 1]; ++j) {
        const Edge& e = edges[by_end[j]];
        weights.push_back(std::exp(alpha[e.start - start] + theta * e.score - alpha[pos]));
      }
      const Edge& e = edges[by_end[first_at[pos] + pick(weights, rng)]];
      path.push_back(e);
      pos = e.start - start;
    }
    std::reverse(path.begin(), path.end());
    emit_path(text, path, out);
  }
}

}  // namespace ciyuan
