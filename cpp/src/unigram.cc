// Unigram language model: Viterbi, n-best and sampling over the piece lattice (see unigram.h).
#include "ciyuan/unigram.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {

using Path = std::vector<std::pair<uint32_t, int32_t>>;  // (end, id), last piece first

inline uint32_t byte_label(char c) { return static_cast<uint32_t>(static_cast<unsigned char>(c)) + 1; }

inline uint32_t char_len(const char* w, uint32_t s, uint32_t n) {
  return std::min<uint32_t>(static_cast<uint32_t>(utf8::lead_length(static_cast<unsigned char>(w[s]))), n - s);
}

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
                           SpmModelConfig config)
    : table_(std::move(pieces), std::move(scores), std::move(types), config) {
  const size_t n = table_.size();
  lattice_score_.assign(n, 0.f);
  in_lattice_.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const PieceType t = table_.type(i);
    if (t == PieceType::kNormal) {
      lattice_score_[i] = table_.score(i);
      in_lattice_[i] = 1;
    } else if (t == PieceType::kUserDefined) {
      // Observed: 0.1 per byte less 0.1, whatever the piece's score.
      lattice_score_[i] = static_cast<float>(0.1 * static_cast<double>(table_.piece(i).size()) - 0.1);
      in_lattice_[i] = 1;
    }
  }
  unk_score_ = table_.min_score() - 10.0f;
  instance_ = SpmWordCache::new_instance();
}

float UnigramModel::viterbi(const char* w, uint32_t n, float total, Path& path) const {
  struct Cell {
    float score;
    int32_t start;  // -1: no candidate yet
    int32_t id;
  };
  thread_local std::vector<Cell> cells;
  cells.assign(n + 1, Cell{0.f, -1, 0});
  cells[0] = Cell{total, 0, 0};
  const DoubleArrayTrie::Node* nodes = table_.trie_empty() ? nullptr : table_.trie().data();
  for (uint32_t s = 0; s < n;) {
    const float base = cells[s].score;
    const uint32_t mblen = char_len(w, s, n);
    bool single = false;
    int32_t node = nodes ? DoubleArrayTrie::kRoot : -1;
    for (uint32_t k = s; node >= 0 && k < n; ++k) {
      node = DoubleArrayTrie::child_of(nodes, node, byte_label(w[k]));
      if (node < 0) break;
      const int32_t id = nodes[node].value;
      if (id < 0 || !in_lattice_[static_cast<size_t>(id)]) continue;
      const float cand = lattice_score_[static_cast<size_t>(id)] + base;
      Cell& c = cells[k + 1];
      if (c.start < 0 || cand > c.score) c = Cell{cand, static_cast<int32_t>(s), id};
      single |= k + 1 - s == mblen;
    }
    if (!single) {
      Cell& c = cells[s + mblen];
      const float cand = unk_score_ + base;
      if (c.start < 0 || cand > c.score) c = Cell{cand, static_cast<int32_t>(s), kUnkNode};
    }
    s += mblen;
  }
  path.clear();
  for (uint32_t e = n; e > 0; e = static_cast<uint32_t>(cells[e].start)) path.emplace_back(e, cells[e].id);
  return cells[n].score;
}

double UnigramModel::viterbi_margin(const char* w, uint32_t n, Path& path) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  struct Cell {
    double best, second;
    int32_t start;
    int32_t id;
  };
  thread_local std::vector<Cell> cells;
  cells.assign(n + 1, Cell{-kInf, -kInf, -1, 0});
  cells[0] = Cell{0.0, -kInf, 0, 0};
  auto offer = [](Cell& c, double cand, uint32_t s, int32_t id) {
    if (c.start < 0) {
      c = Cell{cand, -kInf, static_cast<int32_t>(s), id};
    } else if (cand > c.best) {
      c.second = c.best;
      c.best = cand;
      c.start = static_cast<int32_t>(s);
      c.id = id;
    } else if (cand > c.second) {
      c.second = cand;
    }
  };
  const DoubleArrayTrie::Node* nodes = table_.trie_empty() ? nullptr : table_.trie().data();
  for (uint32_t s = 0; s < n;) {
    const double base = cells[s].best;
    const uint32_t mblen = char_len(w, s, n);
    bool single = false;
    int32_t node = nodes ? DoubleArrayTrie::kRoot : -1;
    for (uint32_t k = s; node >= 0 && k < n; ++k) {
      node = DoubleArrayTrie::child_of(nodes, node, byte_label(w[k]));
      if (node < 0) break;
      const int32_t id = nodes[node].value;
      if (id < 0 || !in_lattice_[static_cast<size_t>(id)]) continue;
      offer(cells[k + 1], base + lattice_score_[static_cast<size_t>(id)], s, id);
      single |= k + 1 - s == mblen;
    }
    if (!single) offer(cells[s + mblen], base + unk_score_, s, kUnkNode);
    s += mblen;
  }
  path.clear();
  double margin = kInf;
  for (uint32_t e = n; e > 0; e = static_cast<uint32_t>(cells[e].start)) {
    path.emplace_back(e, cells[e].id);
    margin = std::min(margin, cells[e].best - cells[e].second);
  }
  return margin;
}

void UnigramModel::emit(const char* text, uint32_t start, const std::pair<uint32_t, int32_t>* path, size_t count,
                        size_t first, std::vector<Token>& out) const {
  uint32_t s = start;
  for (size_t i = count; i-- > 0;) {
    const uint32_t e = start + path[i].first;
    if (path[i].second == kUnkNode) {
      // One unknown node per character.
      table_.unknown(text, s, e, first, out);
    } else {
      out.push_back(Token{static_cast<uint32_t>(path[i].second), s, e});
    }
    s = e;
  }
}

void UnigramModel::encode_word(std::string_view text, uint32_t start, uint32_t end, float& total, size_t first,
                               std::vector<Token>& out, SpmWordCache* cache) const {
  thread_local Path path;
  const char* w = text.data() + start;
  const uint32_t n = end - start;
  // A path found without the running total is the float Viterbi's when its smallest margin
  // is far above the rounding error of float sums of this size (2^-17 of them: 64 ulps).
  auto replay = [&](const uint32_t* ids, size_t count) {
    float t = total;
    for (size_t i = 0; i < count; ++i) t = lattice_score_[ids[i]] + t;
    return t;
  };
  auto safe = [&](double margin, float after) {
    return margin > (std::fabs(static_cast<double>(total)) + std::fabs(static_cast<double>(after)) + 1.0) * 0x1.0p-17;
  };
  if (cache && n <= SpmWordCache::kMaxBytes) {
    bool hit;
    SpmWordCache::Entry& entry = cache->slot(w, n, instance_, &hit);
    if (hit) {
      const float after = replay(entry.ids, entry.count);
      if (safe(entry.extra, after)) {
        uint32_t s = start;
        for (uint32_t i = 0; i + 1 < entry.count; ++i) {
          out.push_back(Token{entry.ids[i], s, start + entry.ends[i]});
          s = start + entry.ends[i];
        }
        out.push_back(Token{entry.ids[entry.count - 1], s, end});
        total = after;
        return;
      }
    } else {
      const double margin = viterbi_margin(w, n, path);
      bool known = path.size() <= SpmWordCache::kMaxPieces;
      for (const auto& p : path) known &= p.second != kUnkNode;
      if (known) {
        entry.count = static_cast<uint8_t>(path.size());
        for (size_t i = 0; i < path.size(); ++i) {
          const auto& p = path[path.size() - 1 - i];
          entry.ids[i] = static_cast<uint32_t>(p.second);
          if (i + 1 < path.size()) entry.ends[i] = static_cast<uint8_t>(p.first);
        }
        entry.extra = static_cast<float>(std::min(margin, 1e30));
        cache->fill(entry);
        const float after = replay(entry.ids, entry.count);
        if (safe(margin, after)) {
          emit(text.data(), start, path.data(), path.size(), first, out);
          total = after;
          return;
        }
      }
    }
  }
  total = viterbi(w, n, total, path);
  emit(text.data(), start, path.data(), path.size(), first, out);
}

void UnigramModel::encode_span(std::string_view text, uint32_t start, uint32_t end, float& total,
                               std::vector<Token>& out) const {
  SpmWordCache* cache = table_.word_break() == WordBreak::kNone ? nullptr : SpmWordCache::of_thread();
  const size_t first = out.size();
  spm_each_word(table_.word_break(), text.data(), start, end,
            [&](uint32_t s, uint32_t e) { encode_word(text, s, e, total, first, out, cache); });
}

void UnigramModel::encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const {
  SpmWordCache* cache = table_.word_break() == WordBreak::kNone ? nullptr : SpmWordCache::of_thread();
  const size_t first = out.size();
  float total = 0.f;
  uint32_t last_end = 0xFFFFFFFFu;
  for (size_t k = 0; k < n; ++k) {
    // Adjacent pieces continue one Viterbi (the running total carries on), as SentencePiece
    // runs one over the whole normalized text.
    if (pieces[k].first != last_end) total = 0.f;
    last_end = pieces[k].second;
    spm_each_word(table_.word_break(), text.data(), pieces[k].first, pieces[k].second,
              [&](uint32_t s, uint32_t e) { encode_word(text, s, e, total, first, out, cache); });
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
  const char* t = text.data();
  const DoubleArrayTrie::Node* nodes = table_.trie_empty() ? nullptr : table_.trie().data();
  for (uint32_t s = start; s < end;) {
    const uint32_t mblen = char_len(t, s, end);
    bool single = false;
    int32_t node = nodes ? DoubleArrayTrie::kRoot : -1;
    for (uint32_t k = s; node >= 0 && k < end; ++k) {
      node = DoubleArrayTrie::child_of(nodes, node, byte_label(t[k]));
      if (node < 0) break;
      const int32_t id = nodes[node].value;
      if (id < 0 || !in_lattice_[static_cast<size_t>(id)]) continue;
      edges.push_back(Edge{s, k + 1, id, lattice_score_[static_cast<size_t>(id)]});
      single |= k + 1 - s == mblen;
    }
    if (!single) edges.push_back(Edge{s, s + mblen, kUnkNode, unk_score_});
    s += mblen;
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
