// Unigram LM training over counted words (see unigram_trainer.h for the algorithm).
#include "ciyuan/unigram_trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_map>

#include "ciyuan/bpe_trainer.h"
#include "ciyuan/errors.h"
#include "ciyuan/parallel.h"
#include "ciyuan/suffix_array.h"
#include "ciyuan/trie.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {

constexpr uint32_t kSpace = 0x2581;  // "▁"
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kUnknownPenalty = 10.0;    // an unknown character scores the lowest piece score minus this
constexpr double kMinExpectedCount = 0.5;   // the M-step drops pieces expected fewer times
constexpr size_t kChunks = 8;               // E-step / pruning accumulators: fixed, whatever the threads

// A coarse Unicode script of a code point, enough to keep pieces within one script: letters of
// the large scripts by block, digits apart, punctuation and symbols "common".
enum Script : int {
  kCommon = 0, kLatin, kGreek, kCyrillic, kArmenian, kHebrew, kArabic, kDevanagari, kBengali, kThai, kHangul, kHan,
  kNumber, kOther = 100,
};

bool is_digit(uint32_t c) { return (c >= '0' && c <= '9') || (c >= 0xFF10 && c <= 0xFF19); }

int script_of(uint32_t c) {
  if (is_digit(c)) return kNumber;
  if (c < 0x80) return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? kLatin : kCommon;
  if (c < 0x250) return (c == 0xAA || c == 0xBA || (c >= 0xC0 && c != 0xD7 && c != 0xF7)) ? kLatin : kCommon;
  if (c < 0x2B0) return kLatin;                       // IPA extensions
  if (c < 0x370) return c >= 0x300 ? kOther + 1 : kCommon;  // modifiers; combining marks
  if (c < 0x400) return kGreek;
  if (c < 0x530) return kCyrillic;
  if (c < 0x590) return kArmenian;
  if (c < 0x600) return kHebrew;
  if (c < 0x700 || (c >= 0x750 && c < 0x780) || (c >= 0x8A0 && c < 0x900)) return kArabic;
  if (c >= 0x900 && c < 0x980) return kDevanagari;
  if (c >= 0x980 && c < 0xA00) return kBengali;
  if (c >= 0xE00 && c < 0xE80) return kThai;
  if ((c >= 0x1100 && c < 0x1200) || (c >= 0x3130 && c < 0x3190) || (c >= 0xAC00 && c < 0xD7B0)) return kHangul;
  if (c >= 0x1E00 && c < 0x1F00) return kLatin;
  if (c >= 0x1F00 && c < 0x2000) return kGreek;
  if (c >= 0x2000 && c < 0x2E80) return kCommon;
  // Han, with Hiragana, Katakana and the prolonged sound mark counted as Han.
  if ((c >= 0x2E80 && c < 0x2FE0) || c == 0x3005 || c == 0x3007 || (c >= 0x3021 && c < 0x302A) ||
      (c >= 0x3038 && c < 0x303C) || (c >= 0x3041 && c < 0x3100) || (c >= 0x31F0 && c < 0x3200) ||
      (c >= 0x3400 && c < 0x4DC0) || (c >= 0x4E00 && c < 0xA000) || (c >= 0xF900 && c < 0xFB00) ||
      (c >= 0xFF66 && c < 0xFFA0) || (c >= 0x20000 && c < 0x40000))
    return kHan;
  if (c >= 0x3000 && c < 0x3400) return kCommon;
  if ((c >= 0xFF21 && c <= 0xFF3A) || (c >= 0xFF41 && c <= 0xFF5A)) return kLatin;
  if (c >= 0xFE30 && c < 0xFF66) return kCommon;
  if (c >= 0x1F000 && c < 0x20000) return kCommon;    // emoji and other symbols
  return kOther + 2 + static_cast<int>(c >> 7);       // other letters: by 128-character block
}

double log_add(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegInf) return a;
  return a + std::log1p(std::exp(b - a));
}

// digamma(x) for x > 0: the recurrence up to x >= 6, then the asymptotic series.
double digamma(double x) {
  double r = 0;
  while (x < 6) {
    r -= 1 / x;
    x += 1;
  }
  const double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

// Distinct units (code sequences over a dense alphabet 1..A) with counts.
struct Units {
  std::vector<uint32_t> codes;
  std::vector<size_t> start{0};
  std::vector<uint64_t> counts;
  size_t size() const { return counts.size(); }
  size_t length(size_t u) const { return start[u + 1] - start[u]; }
  const uint32_t* begin(size_t u) const { return codes.data() + start[u]; }
};

class UnitBuilder {
 public:
  explicit UnitBuilder(Units& units) : units_(units) {}
  void add(const std::vector<uint32_t>& unit, uint64_t count) {
    if (unit.empty() || count == 0) return;
    std::string key(reinterpret_cast<const char*>(unit.data()), unit.size() * sizeof(uint32_t));
    auto it = index_.find(key);
    if (it != index_.end()) {
      units_.counts[it->second] += count;
      return;
    }
    index_.emplace(std::move(key), units_.size());
    units_.codes.insert(units_.codes.end(), unit.begin(), unit.end());
    units_.start.push_back(units_.codes.size());
    units_.counts.push_back(count);
  }

 private:
  Units& units_;
  std::unordered_map<std::string, size_t> index_;
};

// The pieces (code sequences) with their scores and a trie over them.
struct Pieces {
  std::vector<uint32_t> codes;
  std::vector<size_t> start{0};
  std::vector<double> scores;
  DoubleArrayTrie trie;
  uint32_t alphabet = 1;
  size_t size() const { return scores.size(); }
  size_t length(size_t p) const { return start[p + 1] - start[p]; }
  void add(const uint32_t* b, size_t n, double score) {
    codes.insert(codes.end(), b, b + n);
    start.push_back(codes.size());
    scores.push_back(score);
  }
  Pieces subset(const std::vector<uint32_t>& keep) const {
    Pieces out;
    out.alphabet = alphabet;
    for (uint32_t p : keep) out.add(codes.data() + start[p], length(p), scores[p]);
    return out;
  }
  void build_trie() {
    std::vector<size_t> order(size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::lexicographical_compare(codes.begin() + start[a], codes.begin() + start[a + 1],
                                          codes.begin() + start[b], codes.begin() + start[b + 1]);
    });
    std::vector<int32_t> values(size());
    std::iota(values.begin(), values.end(), 0);
    trie = DoubleArrayTrie();
    trie.build(codes, start, order, values, alphabet);
  }
  double min_score() const {
    double m = 0;
    for (double s : scores) m = std::min(m, s);
    return m;
  }
};

struct Edge {
  uint32_t begin, end;
  int32_t piece;  // -1: the unknown character
  double score;
};

// The lattice of one unit: every piece occurrence, by start position; an unknown edge where no
// one-character piece exists.
void lattice(const Pieces& pieces, const uint32_t* unit, size_t n, uint32_t max_len, double unk_score,
             std::vector<Edge>& edges) {
  edges.clear();
  const DoubleArrayTrie::Node* nodes = pieces.trie.data();
  for (size_t s = 0; s < n; ++s) {
    int32_t node = DoubleArrayTrie::kRoot;
    bool single = false;
    for (size_t e = s; e < n && e - s < max_len; ++e) {
      node = DoubleArrayTrie::child_of(nodes, node, unit[e]);
      if (node < 0) break;
      const int32_t v = nodes[node].value;
      if (v >= 0) {
        edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(e + 1), v, pieces.scores[v]});
        if (e == s) single = true;
      }
    }
    if (!single) edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(s + 1), -1, unk_score});
  }
}

// Best path of a lattice (edges by start): the score and the pieces (-1 for unknowns), in order.
// `skip` (an edge index) is left out.
double viterbi(const std::vector<Edge>& edges, size_t n, std::vector<double>& best, std::vector<int32_t>& back,
               std::vector<int32_t>* path, size_t skip = ~size_t{0}) {
  best.assign(n + 1, kNegInf);
  back.assign(n + 1, -1);
  best[0] = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    if (i == skip) continue;
    const Edge& e = edges[i];
    if (best[e.begin] == kNegInf) continue;
    const double s = best[e.begin] + e.score;
    if (s > best[e.end]) {
      best[e.end] = s;
      back[e.end] = static_cast<int32_t>(i);
    }
  }
  if (path) {
    path->clear();
    if (best[n] != kNegInf) {
      for (size_t pos = n; pos > 0;) {
        const Edge& e = edges[static_cast<size_t>(back[pos])];
        path->push_back(e.piece);
        pos = e.begin;
      }
      std::reverse(path->begin(), path->end());
    }
  }
  return best[n];
}

size_t max_length(const Pieces& pieces) {
  size_t m = 1;
  for (size_t p = 0; p < pieces.size(); ++p) m = std::max(m, pieces.length(p));
  return m;
}

// E-step: expected counts of the pieces and sum of count x log Z over the units.
double e_step(const Units& units, const Pieces& pieces, int threads, std::vector<double>& expected) {
  const uint32_t max_len = static_cast<uint32_t>(max_length(pieces));
  const double unk = pieces.min_score() - kUnknownPenalty;
  std::vector<std::vector<double>> acc(kChunks);
  std::vector<double> objective(kChunks, 0.0);
  const size_t n = units.size();
  parallel_for(kChunks, threads, [&](size_t c) {
    std::vector<double>& out = acc[c];
    out.assign(pieces.size(), 0.0);
    std::vector<Edge> edges;
    std::vector<double> alpha, beta;
    double obj = 0;
    for (size_t u = n * c / kChunks, end = n * (c + 1) / kChunks; u < end; ++u) {
      const size_t len = units.length(u);
      lattice(pieces, units.begin(u), len, max_len, unk, edges);
      alpha.assign(len + 1, kNegInf);
      beta.assign(len + 1, kNegInf);
      alpha[0] = 0;
      for (const Edge& e : edges) alpha[e.end] = log_add(alpha[e.end], alpha[e.begin] + e.score);
      beta[len] = 0;
      for (size_t i = edges.size(); i-- > 0;) {
        const Edge& e = edges[i];
        beta[e.begin] = log_add(beta[e.begin], e.score + beta[e.end]);
      }
      const double z = alpha[len];
      const double w = static_cast<double>(units.counts[u]);
      obj += w * z;
      for (const Edge& e : edges)
        if (e.piece >= 0) out[static_cast<size_t>(e.piece)] += w * std::exp(alpha[e.begin] + e.score + beta[e.end] - z);
    }
    objective[c] = obj;
  });
  expected.assign(pieces.size(), 0.0);
  double obj = 0;
  for (size_t c = 0; c < kChunks; ++c) {  // in chunk order: the same sums on any thread count
    for (size_t p = 0; p < pieces.size(); ++p) expected[p] += acc[c][p];
    obj += objective[c];
  }
  return obj;
}

// M-step: pieces expected at least kMinExpectedCount times, log p = digamma(count) - digamma(total).
std::pair<std::vector<uint32_t>, std::vector<double>> m_step_of(const std::vector<double>& expected) {
  std::vector<uint32_t> keep;
  double total = 0;
  for (size_t p = 0; p < expected.size(); ++p)
    if (expected[p] >= kMinExpectedCount) {
      keep.push_back(static_cast<uint32_t>(p));
      total += expected[p];
    }
  std::vector<double> scores;
  const double log_total = digamma(total);
  for (uint32_t p : keep) scores.push_back(digamma(expected[p]) - log_total);
  return {keep, scores};
}

Pieces em_step(const Units& units, const Pieces& pieces, int threads) {
  std::vector<double> expected;
  e_step(units, pieces, threads, expected);
  auto [keep, scores] = m_step_of(expected);
  Pieces out = pieces.subset(keep);
  out.scores = scores;
  out.build_trie();
  return out;
}

// Pruning: the indices of the pieces kept (at most `size` unless they cannot go), in order.
std::vector<uint32_t> prune_pieces(const Units& units, const Pieces& pieces, uint64_t size, int threads) {
  const size_t np = pieces.size();
  const uint32_t max_len = static_cast<uint32_t>(max_length(pieces));
  const double unk = pieces.min_score() - kUnknownPenalty;
  // 1. Each piece's best segmentation other than itself.
  enum : uint8_t { kRemovable = 0, kAlways = 1, kHasAlternative = 2 };
  std::vector<uint8_t> kind(np);
  std::vector<std::vector<int32_t>> alternative(np);
  for_chunks(np, threads, 256, [&](size_t p) {
    thread_local std::vector<Edge> edges;
    thread_local std::vector<double> best;
    thread_local std::vector<int32_t> back;
    const size_t len = pieces.length(p);
    if (len == 1) {
      kind[p] = kAlways;
      return;
    }
    lattice(pieces, pieces.codes.data() + pieces.start[p], len, max_len, unk, edges);
    size_t self = ~size_t{0};
    for (size_t i = 0; i < edges.size(); ++i)
      if (edges[i].piece == static_cast<int32_t>(p)) self = i;
    std::vector<int32_t> path;
    const double alt = viterbi(edges, len, best, back, &path, self);
    if (alt > pieces.scores[p]) {
      kind[p] = kRemovable;  // the piece is not its own best segmentation: never used
    } else {
      kind[p] = kHasAlternative;
      alternative[p] = std::move(path);
    }
  });
  // 2. Viterbi counts over the units (integers: exact on any thread count).
  std::vector<std::vector<uint64_t>> acc(kChunks);
  const size_t n = units.size();
  parallel_for(kChunks, threads, [&](size_t c) {
    acc[c].assign(np, 0);
    std::vector<Edge> edges;
    std::vector<double> best;
    std::vector<int32_t> back, path;
    for (size_t u = n * c / kChunks, end = n * (c + 1) / kChunks; u < end; ++u) {
      lattice(pieces, units.begin(u), units.length(u), max_len, unk, edges);
      viterbi(edges, units.length(u), best, back, &path);
      for (int32_t q : path)
        if (q >= 0) acc[c][static_cast<size_t>(q)] += units.counts[u];
    }
  });
  std::vector<uint64_t> freq(np, 0);
  for (size_t c = 0; c < kChunks; ++c)
    for (size_t p = 0; p < np; ++p) freq[p] += acc[c][p];
  const double sum = static_cast<double>(std::accumulate(freq.begin(), freq.end(), uint64_t{0}));
  const double log_sum = std::log(sum);
  // 3. The loss of removing each piece.
  std::vector<uint32_t> kept;
  std::vector<std::pair<double, uint32_t>> candidates;
  for (size_t p = 0; p < np; ++p) {
    if (kind[p] == kAlways) {
      kept.push_back(static_cast<uint32_t>(p));
      continue;
    }
    if (kind[p] == kRemovable || freq[p] == 0) continue;
    const double f = static_cast<double>(freq[p]);
    const double logprob = std::log(f) - log_sum;
    const std::vector<int32_t>& alt = alternative[p];
    const double log_sum_alt = std::log(sum + f * static_cast<double>(alt.size() - 1));
    double logprob_alt = 0;
    for (int32_t q : alt) {
      const double fq = q >= 0 ? static_cast<double>(freq[static_cast<size_t>(q)]) : 0.0;
      logprob_alt += std::log(fq + f) - log_sum_alt;
    }
    candidates.emplace_back(f * (logprob - logprob_alt), static_cast<uint32_t>(p));
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& c : candidates) {
    if (kept.size() >= size) break;
    kept.push_back(c.second);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

// Code points <-> dense codes.
struct Alphabet {
  std::unordered_map<uint32_t, uint32_t> code;  // code point -> 1..A
  std::vector<uint32_t> point{0};               // code -> code point
  uint32_t add(uint32_t cp) {
    auto it = code.find(cp);
    if (it != code.end()) return it->second;
    const uint32_t c = static_cast<uint32_t>(point.size());
    code.emplace(cp, c);
    point.push_back(cp);
    return c;
  }
  uint32_t find(uint32_t cp) const {
    auto it = code.find(cp);
    return it == code.end() ? 0 : it->second;
  }
  std::string text(const uint32_t* b, size_t n) const {
    std::string s;
    for (size_t i = 0; i < n; ++i) utf8::append(point[b[i]], s);
    return s;
  }
};

std::vector<uint32_t> decode_all(std::string_view w) {
  std::vector<uint32_t> out;
  const char* p = w.data();
  const char* end = p + w.size();
  while (p < end) {
    uint32_t cp;
    p += utf8::decode(p, end, &cp);
    out.push_back(cp);
  }
  return out;
}

// Seeds from the suffix array of the units: (score, sa index, length) of every candidate.
std::vector<std::pair<size_t, size_t>> seed_substrings(const Units& units, uint32_t alphabet, uint32_t max_len,
                                                       uint64_t seed_size, std::vector<uint64_t>* scores_out,
                                                       std::vector<uint32_t>* text_out) {
  std::vector<uint32_t>& text = *text_out;
  text.clear();
  std::vector<uint64_t> weight;
  text.reserve(units.codes.size() + units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    text.insert(text.end(), units.begin(u), units.begin(u) + units.length(u));
    text.push_back(0);
  }
  const size_t n = text.size();
  // Each position's unit count (0 for the separators).
  weight.assign(n, 0);
  for (size_t u = 0, pos = 0; u < units.size(); ++u) {
    for (size_t i = 0; i < units.length(u); ++i) weight[pos + i] = units.counts[u];
    pos += units.length(u) + 1;
  }
  const uint32_t depth = max_len + 1;  // exact for every interval no deeper than max_len
  std::vector<uint32_t> sa = suffix_array(text, alphabet, depth);
  std::vector<uint32_t> lcp = lcp_array(text, sa, 0, depth);
  std::vector<uint64_t> prefix(n + 1, 0);  // prefix sums of weights in sa order
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weight[sa[i]];
  // Candidates: (count x length, sa index of an occurrence, length).
  struct Candidate {
    uint64_t score;
    size_t at;
    uint32_t len;
  };
  std::vector<Candidate> cands;
  // Internal nodes: the LCP intervals, bottom-up with a stack of (depth, left bound).
  std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};
  auto report = [&](uint32_t d, size_t lb, size_t rb) {
    if (d < 2 || d > max_len) return;
    cands.push_back({(prefix[rb + 1] - prefix[lb]) * d, lb, d});
  };
  for (size_t i = 1; i <= n; ++i) {
    const uint32_t h = i < n ? lcp[i] : 0;
    size_t lb = i - 1;
    while (h < stack.back().first) {
      const auto top = stack.back();
      stack.pop_back();
      report(top.first, top.second, i - 1);
      lb = top.second;
    }
    if (h > stack.back().first) stack.emplace_back(h, lb);
  }
  // Leaves: a suffix of a unit counted twice or more, when longer than what it shares.
  std::vector<uint32_t> to_sep(n, 0);  // symbols up to the next separator
  for (size_t i = n; i-- > 0;) to_sep[i] = text[i] == 0 ? 0 : (i + 1 < n ? to_sep[i + 1] : 0) + 1;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t len = to_sep[sa[i]];
    if (len < 2 || len > max_len || weight[sa[i]] < 2) continue;
    const uint32_t shared = std::max(lcp[i], i + 1 < n ? lcp[i + 1] : 0u);
    if (len > shared) cands.push_back({weight[sa[i]] * len, i, len});
  }
  auto better = [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score > b.score : a.at != b.at ? a.at < b.at : a.len < b.len;
  };
  if (cands.size() > seed_size) {
    std::nth_element(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(seed_size), cands.end(), better);
    cands.resize(seed_size);
  }
  std::sort(cands.begin(), cands.end(), better);
  std::vector<std::pair<size_t, size_t>> out;  // (text position, length)
  scores_out->clear();
  for (const Candidate& c : cands) {
    out.emplace_back(sa[c.at], c.len);
    scores_out->push_back(c.score);
  }
  return out;
}

// The units of the words: cut around unknown characters, user symbols, script changes, digits.
struct Prepared {
  Alphabet alphabet;
  Units units;
  std::vector<uint32_t> required;         // code points, most frequent first
  std::vector<uint64_t> required_counts;
};

Prepared prepare(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                 const UnigramTrainerConfig& config, const std::function<void()>& words_done) {
  Prepared out;
  // Characters by count; the required ones cover character_coverage of all.
  std::unordered_map<uint32_t, uint64_t> chars;
  std::vector<std::vector<uint32_t>> symbols;
  for (const std::string& s : config.user_defined_symbols)
    if (!s.empty()) symbols.push_back(decode_all(s));
  std::sort(symbols.begin(), symbols.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::vector<std::vector<uint32_t>> decoded(words.size());
  // Decode once; remove user symbols (longest first) by marking their characters with 0.
  for (size_t w = 0; w < words.size(); ++w) {
    std::vector<uint32_t>& cps = decoded[w];
    cps = decode_all(words[w]);
    if (!symbols.empty()) {
      for (size_t i = 0; i < cps.size();) {
        size_t matched = 0;
        for (const auto& sym : symbols)
          if (sym.size() <= cps.size() - i && std::equal(sym.begin(), sym.end(), cps.begin() + static_cast<std::ptrdiff_t>(i))) {
            matched = sym.size();
            break;
          }
        if (matched) {
          std::fill(cps.begin() + static_cast<std::ptrdiff_t>(i), cps.begin() + static_cast<std::ptrdiff_t>(i + matched), 0u);
          i += matched;
        } else {
          ++i;
        }
      }
    }
    for (uint32_t c : cps)
      if (c) chars[c] += counts[w];
  }
  if (words_done) words_done();
  std::vector<std::pair<uint32_t, uint64_t>> by_count(chars.begin(), chars.end());
  std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  long double all = 0;
  for (const auto& kv : by_count) all += kv.second;
  long double covered = 0;
  for (const auto& kv : by_count) {
    if (all > 0 && covered / all >= config.character_coverage) break;
    covered += kv.second;
    out.required.push_back(kv.first);
    out.required_counts.push_back(kv.second);
    out.alphabet.add(kv.first);
  }
  // Cut into units.
  const bool suffix = config.treat_whitespace_as_suffix;
  UnitBuilder builder(out.units);
  std::vector<uint32_t> unit;
  for (size_t w = 0; w < decoded.size(); ++w) {
    const std::vector<uint32_t>& cps = decoded[w];
    unit.clear();
    uint32_t prev = 0;  // the previous character of the unit other than "▁" (0: none)
    for (uint32_t c : cps) {
      const uint32_t code = c ? out.alphabet.find(c) : 0;
      if (code == 0) {  // a user symbol or an unknown character: a cut, the character left out
        builder.add(unit, counts[w]);
        unit.clear();
        prev = 0;
        continue;
      }
      if (c == kSpace) {
        if (suffix) {  // "▁" ends a unit
          unit.push_back(code);
          builder.add(unit, counts[w]);
        } else {       // "▁" starts one, and the next character joins it whatever its script
          builder.add(unit, counts[w]);
          unit.assign(1, code);
        }
        if (suffix) unit.clear();
        prev = 0;
        continue;
      }
      if (prev != 0) {
        bool cut;
        if (config.split_digits && (is_digit(c) || is_digit(prev))) {
          cut = true;
        } else {
          const int a = script_of(prev), b = script_of(c);
          const bool na = a == kNumber, nb = b == kNumber;
          if (na != nb) cut = config.split_by_number;
          else cut = !na && config.split_by_unicode_script && a != b;
        }
        if (cut) {
          builder.add(unit, counts[w]);
          unit.clear();
        }
      }
      unit.push_back(code);
      prev = c;
    }
    builder.add(unit, counts[w]);
  }
  return out;
}

void check_config(const UnigramTrainerConfig& config) {
  if (config.vocab_size == 0) throw Error(ErrorKind::kInvalidInput, "vocab_size must be positive");
  if (!(config.character_coverage > 0 && config.character_coverage <= 1))
    throw Error(ErrorKind::kInvalidInput, "character_coverage must be in (0, 1]");
  if (config.max_piece_length == 0 || config.max_piece_length > 512)
    throw Error(ErrorKind::kInvalidInput, "max_piece_length must be in [1, 512]");
  if (!(config.shrinking_factor > 0 && config.shrinking_factor < 1))
    throw Error(ErrorKind::kInvalidInput, "shrinking_factor must be in (0, 1)");
  if (config.num_sub_iterations == 0) throw Error(ErrorKind::kInvalidInput, "num_sub_iterations must be positive");
}

UnigramTrainerResult train_bpe_type(Prepared& prep, const UnigramTrainerConfig& config, const TrainProgress& progress) {
  UnigramTrainerResult result;
  result.units = prep.units.size();
  if (config.vocab_size < prep.required.size())
    throw Error(ErrorKind::kInvalidInput,
                "vocab_size " + std::to_string(config.vocab_size) + " is smaller than the " +
                    std::to_string(prep.required.size()) + " required characters: raise it or lower character_coverage");
  std::vector<std::string> texts(prep.units.size());
  std::vector<std::string_view> views(prep.units.size());
  for (size_t u = 0; u < prep.units.size(); ++u) {
    texts[u] = prep.alphabet.text(prep.units.begin(u), prep.units.length(u));
    views[u] = texts[u];
  }
  BpeTrainerConfig bpe;
  bpe.vocab_size = config.vocab_size;
  bpe.max_token_length = config.max_piece_length;
  bpe.tie_break = TieBreak::kSmallestIds;
  for (uint32_t cp : prep.required) {
    std::string s;
    utf8::append(cp, s);
    bpe.initial_alphabet.push_back(s);
  }
  MergeResult merged = train_bpe(views, prep.units.counts, bpe, progress);
  float score = 0;
  for (size_t m = merged.alphabet_size; m < merged.tokens.size(); ++m) {
    result.pieces.push_back(merged.tokens[m]);
    result.scores.push_back(-score);
    score += 1;
  }
  for (uint32_t cp : prep.required) {
    std::string s;
    utf8::append(cp, s);
    result.pieces.push_back(s);
    result.scores.push_back(-score);
    score += 1;
    result.required_chars.push_back(s);
  }
  result.rounds = static_cast<uint32_t>(merged.merges.size());
  return result;
}

}  // namespace

UnigramTrainerResult train_unigram(const std::vector<std::string_view>& words, const std::vector<uint64_t>& counts,
                                   const UnigramTrainerConfig& config, const TrainProgress& progress,
                                   const std::function<void()>& words_done) {
  check_config(config);
  Prepared prep = prepare(words, counts, config, words_done);
  if (prep.required.empty()) throw Error(ErrorKind::kInvalidInput, "the corpus has no characters to train on");
  if (config.model_type == UnigramModelType::kBpe) return train_bpe_type(prep, config, progress);
  UnigramTrainerResult result;
  const Units& units = prep.units;
  result.units = units.size();
  const uint32_t alphabet = static_cast<uint32_t>(prep.alphabet.point.size());
  // Seeds: the required characters (score: their count), then the frequent substrings.
  Pieces pieces;
  pieces.alphabet = alphabet;
  {
    std::vector<uint64_t> seed_scores;
    std::vector<uint32_t> text;
    const uint64_t room = config.seed_size > prep.required.size() ? config.seed_size - prep.required.size() : 0;
    auto subs = seed_substrings(units, alphabet, config.max_piece_length, room, &seed_scores, &text);
    double total = 0;
    for (uint64_t c : prep.required_counts) total += static_cast<double>(c);
    for (uint64_t s : seed_scores) total += static_cast<double>(s);
    const double log_total = std::log(total);
    for (size_t i = 0; i < prep.required.size(); ++i) {
      const uint32_t code = prep.alphabet.find(prep.required[i]);
      pieces.add(&code, 1, std::log(static_cast<double>(prep.required_counts[i])) - log_total);
    }
    for (size_t i = 0; i < subs.size(); ++i)
      pieces.add(text.data() + subs[i].first, subs[i].second, std::log(static_cast<double>(seed_scores[i])) - log_total);
  }
  pieces.build_trie();
  result.seeds = pieces.size();
  const uint64_t desired = config.vocab_size + config.vocab_size / 10;  // vocab_size x 1.1
  // Rounds: log(desired / seeds) / log(shrinking) of them, roughly, for the progress bar.
  auto expected_rounds = [&](size_t size) {
    uint64_t r = 1;
    for (double s = static_cast<double>(size); s > static_cast<double>(desired); s *= config.shrinking_factor) ++r;
    return r;
  };
  const uint64_t total_rounds = expected_rounds(pieces.size());
  uint32_t round = 0;
  for (;; ++round) {
    if (progress) progress(round, std::max<uint64_t>(total_rounds, round + 1));
    for (uint32_t it = 0; it < config.num_sub_iterations; ++it) pieces = em_step(units, pieces, config.threads);
    if (pieces.size() <= desired) break;
    const uint64_t target = std::max<uint64_t>(desired, static_cast<uint64_t>(config.shrinking_factor * static_cast<double>(pieces.size())));
    std::vector<uint32_t> keep = prune_pieces(units, pieces, target, config.threads);
    pieces = pieces.subset(keep);
    pieces.build_trie();
  }
  result.rounds = round + 1;
  // Final: the required characters always, then the best pieces, up to vocab_size.
  std::unordered_map<uint32_t, size_t> single;  // code -> piece index of one-character pieces
  for (size_t p = 0; p < pieces.size(); ++p)
    if (pieces.length(p) == 1) single[pieces.codes[pieces.start[p]]] = p;
  std::vector<std::pair<double, std::string>> final_pieces;
  std::vector<bool> taken(pieces.size(), false);
  double penalty = pieces.min_score();
  for (uint32_t cp : prep.required) {
    const uint32_t code = prep.alphabet.find(cp);
    auto it = single.find(code);
    double score;
    if (it != single.end()) {
      score = pieces.scores[it->second];
      taken[it->second] = true;
    } else {
      penalty -= 1e-4;
      score = penalty;
    }
    std::string s;
    utf8::append(cp, s);
    final_pieces.emplace_back(score, s);
    result.required_chars.push_back(s);
  }
  if (final_pieces.size() > config.vocab_size)
    throw Error(ErrorKind::kInvalidInput,
                "vocab_size " + std::to_string(config.vocab_size) + " is smaller than the " +
                    std::to_string(final_pieces.size()) + " required characters: raise it or lower character_coverage");
  std::vector<size_t> order(pieces.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pieces.scores[a] > pieces.scores[b]; });
  for (size_t p : order) {
    if (final_pieces.size() >= config.vocab_size) break;
    if (taken[p]) continue;
    final_pieces.emplace_back(pieces.scores[p], prep.alphabet.text(pieces.codes.data() + pieces.start[p], pieces.length(p)));
  }
  std::stable_sort(final_pieces.begin(), final_pieces.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& fp : final_pieces) {
    result.pieces.push_back(std::move(fp.second));
    result.scores.push_back(static_cast<float>(fp.first));
  }
  if (progress) progress(result.rounds, result.rounds);
  return result;
}

namespace unigram_steps {

namespace {
// Words and pieces over one alphabet (every character kept, words whole).
struct Plain {
  Alphabet alphabet;
  Units units;
  Pieces pieces;
};

Plain plain(const std::vector<std::string>& words, const std::vector<uint64_t>& counts,
            const std::vector<std::string>& pieces, const std::vector<double>& scores) {
  if (words.size() != counts.size() || pieces.size() != scores.size())
    throw Error(ErrorKind::kInvalidInput, "words/counts or pieces/scores differ in length");
  Plain out;
  for (size_t w = 0; w < words.size(); ++w) {
    std::vector<uint32_t> codes;
    for (uint32_t cp : decode_all(words[w])) codes.push_back(out.alphabet.add(cp));
    if (codes.empty()) continue;
    out.units.codes.insert(out.units.codes.end(), codes.begin(), codes.end());
    out.units.start.push_back(out.units.codes.size());
    out.units.counts.push_back(counts[w]);
  }
  std::unordered_map<std::string, bool> seen;
  for (size_t p = 0; p < pieces.size(); ++p) {
    if (pieces[p].empty()) throw Error(ErrorKind::kInvalidInput, "a piece is empty");
    if (!seen.emplace(pieces[p], true).second) throw Error(ErrorKind::kInvalidInput, "a piece is listed twice");
    std::vector<uint32_t> codes;
    for (uint32_t cp : decode_all(pieces[p])) codes.push_back(out.alphabet.add(cp));
    out.pieces.add(codes.data(), codes.size(), scores[p]);
  }
  out.pieces.alphabet = static_cast<uint32_t>(out.alphabet.point.size());
  if (out.pieces.size()) out.pieces.build_trie();
  return out;
}
}  // namespace

std::pair<std::vector<double>, double> expected_counts(const std::vector<std::string>& words,
                                                       const std::vector<uint64_t>& counts,
                                                       const std::vector<std::string>& pieces,
                                                       const std::vector<double>& scores, int threads) {
  Plain p = plain(words, counts, pieces, scores);
  std::vector<double> expected;
  const double obj = e_step(p.units, p.pieces, threads, expected);
  return {expected, obj};
}

std::pair<std::vector<uint32_t>, std::vector<double>> m_step(const std::vector<double>& expected) {
  return m_step_of(expected);
}

std::vector<uint32_t> prune(const std::vector<std::string>& words, const std::vector<uint64_t>& counts,
                            const std::vector<std::string>& pieces, const std::vector<double>& scores, uint64_t size,
                            int threads) {
  Plain p = plain(words, counts, pieces, scores);
  return prune_pieces(p.units, p.pieces, size, threads);
}

std::vector<std::pair<std::string, uint64_t>> seeds(const std::vector<std::string>& words,
                                                    const std::vector<uint64_t>& counts, uint32_t max_piece_length,
                                                    uint64_t seed_size) {
  Plain p = plain(words, counts, {}, {});
  std::vector<uint64_t> scores;
  std::vector<uint32_t> text;
  auto subs = seed_substrings(p.units, static_cast<uint32_t>(p.alphabet.point.size()), max_piece_length, seed_size,
                              &scores, &text);
  std::vector<std::pair<std::string, uint64_t>> out;
  for (size_t i = 0; i < subs.size(); ++i)
    out.emplace_back(p.alphabet.text(text.data() + subs[i].first, subs[i].second), scores[i]);
  return out;
}

}  // namespace unigram_steps

}  // namespace ciyuan
