#include "ciyuan/bpe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <queue>

#include "ciyuan/errors.h"

namespace ciyuan {

namespace {
// Pieces with more initial symbols than this use the heap-based merge loop.
constexpr size_t kSmallPiece = 48;
// Pieces longer than this are never cached (they are rare and would crowd out the rest).
constexpr size_t kMaxCachedBytes = 256;

// Length of the UTF-8 sequence whose lead byte is at text[i] (1 for a stray byte).
size_t utf8_char_length(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  return std::min(len, text.size() - i);
}

bool utf8_is_boundary(std::string_view text, size_t i) {
  return i >= text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
}

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}
std::atomic<uint64_t> next_instance{1};
}  // namespace


// ---------------------------------------------------------------------------------------------
// PieceCache

PieceCache::PieceCache(size_t capacity)
    : capacity_per_shard_(capacity / kShards + 1), shards_(new Shard[kShards]) {}

bool PieceCache::lookup(const char* p, size_t n, uint32_t base, std::vector<Token>& out) const {
  const Shard& s = shards_[hash_bytes(p, n) % kShards];
  std::lock_guard<std::mutex> lock(s.mutex);
  uint32_t entry = s.index.find(p, n);
  if (entry == BytesMap::kMissing) return false;
  const uint32_t* d = s.data.data() + s.entries[entry];
  uint32_t count = d[0];
  uint32_t at = base;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t len = d[2 + 2 * i];
    out.push_back(Token{d[1 + 2 * i], at, at + len});
    at += len;
  }
  return true;
}

void PieceCache::store(const char* p, size_t n, const Token* tokens, size_t count, uint32_t base) {
  (void)base;
  Shard& s = shards_[hash_bytes(p, n) % kShards];
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.entries.size() >= capacity_per_shard_) {  // full: start over (cheap, and rare)
    s.index = BytesMap();
    s.entries.clear();
    s.data.clear();
  }
  if (!s.index.insert(std::string_view(p, n), static_cast<uint32_t>(s.entries.size()))) return;
  s.entries.push_back(static_cast<uint32_t>(s.data.size()));
  s.data.push_back(static_cast<uint32_t>(count));
  for (size_t i = 0; i < count; ++i) {
    s.data.push_back(tokens[i].id);
    s.data.push_back(tokens[i].end - tokens[i].start);
  }
}

// ---------------------------------------------------------------------------------------------
// BpeModel

BpeModel::BpeModel(std::vector<std::string> tokens, std::vector<uint8_t> present,
                   const std::vector<std::pair<uint32_t, uint32_t>>& merges, BpeConfig config)
    : tokens_(std::move(tokens)), present_(std::move(present)), merges_(merges),
      config_(std::move(config)), instance_(next_instance.fetch_add(1)) {
  if (present_.size() != tokens_.size())
    throw Error(ErrorKind::kModel, "tokens and present flags differ in length");
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (!present_[id]) continue;
    if (tokens_[id].empty())
      throw Error(ErrorKind::kModel, "token " + std::to_string(id) + " is the empty string");
    if (!vocab_.insert(tokens_[id], static_cast<uint32_t>(id))) {
      throw Error(ErrorKind::kModel, "token '" + printable(tokens_[id]) + "' appears twice (ids " +
                                         std::to_string(vocab_.find(tokens_[id])) + " and " +
                                         std::to_string(id) + ")");
    }
    max_token_bytes_ = std::max(max_token_bytes_, tokens_[id].size());
  }
  if (config_.unk_id >= 0 && !has_id(static_cast<uint32_t>(config_.unk_id)))
    throw Error(ErrorKind::kModel, "unk id " + std::to_string(config_.unk_id) + " is not in the vocabulary");
  for (int b = 0; b < 256; ++b) {
    char c = static_cast<char>(b);
    byte_ids_[b] = vocab_.find(&c, 1);
  }
  std::vector<uint64_t> pair_keys;
  if (config_.rank_by_token) {
    // tiktoken's rule - a pair merges if the two tokens joined are a token, ranked by that
    // token's id - turned into the same id-pair table as merge lists use: every way of cutting
    // a token into two tokens is a pair. Lookups then hash two ids instead of a byte string.
    for (size_t id = 0; id < tokens_.size(); ++id) {
      if (!present_[id]) continue;
      const std::string& t = tokens_[id];
      for (size_t cut = 1; cut < t.size(); ++cut) {
        uint32_t left = vocab_.find(t.data(), cut);
        if (left == BytesMap::kMissing) continue;
        uint32_t right = vocab_.find(t.data() + cut, t.size() - cut);
        if (right == BytesMap::kMissing) continue;
        pairs_.insert(PairMap::key(left, right), PairMap::Value{static_cast<uint32_t>(id), static_cast<uint32_t>(id)});
        pair_keys.push_back(PairMap::key(left, right));
      }
    }
  } else {
    for (size_t rank = 0; rank < merges_.size(); ++rank) {
      auto [left, right] = merges_[rank];
      if (!has_id(left) || !has_id(right))
        throw Error(ErrorKind::kModel, "merge " + std::to_string(rank + 1) + " refers to an id outside the vocabulary");
      std::string merged = tokens_[left];
      const std::string& r = tokens_[right];
      merged += r;
      uint32_t id = vocab_.find(merged);
      if (id == BytesMap::kMissing)
        throw Error(ErrorKind::kModel, "merge " + std::to_string(rank + 1) + " ('" + printable(tokens_[left]) +
                                           "' '" + printable(r) + "') makes '" + printable(merged) +
                                           "', which is not in the vocabulary");
      // A pair listed twice keeps its first (lowest) rank, as every BPE implementation does.
      pairs_.insert(PairMap::key(left, right), PairMap::Value{static_cast<uint32_t>(rank), id});
      pair_keys.push_back(PairMap::key(left, right));
    }
  }
  build_pair_filter(pair_keys);
  if (config_.cache_capacity) cache_.reset(new PieceCache(config_.cache_capacity));
}

void BpeModel::unknown_symbol(std::string_view text, size_t at, size_t len) const {
  throw Error(ErrorKind::kInvalidInput,
              "'" + printable(text.substr(at, len)) + "' at byte " + std::to_string(at) +
                  " has no token in the vocabulary and the model has no unknown token; "
                  "give the model an unk_token or normalize the text first");
}

void BpeModel::build_pair_filter(const std::vector<uint64_t>& keys) {
  size_t words = 64;  // 8 bits per pair, in 64-bit words
  while (words * 8 < keys.size()) words *= 2;
  pair_filter_.assign(words, 0);
  pair_filter_mask_ = words - 1;
  for (uint64_t key : keys) {
    uint64_t h = hash_u64(key);
    pair_filter_[h & pair_filter_mask_] |= (1ULL << (h >> 58)) | (1ULL << ((h >> 52) & 63));
  }
}

struct BpeModel::HotPairs {
  static constexpr int kBits = 13;  // 8K entries of 16 bytes: 128 KB, stays in L2
  struct Entry {
    uint64_t key;
    PairMap::Value value;
  };
  uint64_t owner = 0;
  Entry entries[1 << kBits];
  void reset(uint64_t new_owner) {
    owner = new_owner;
    for (Entry& e : entries) e.key = PairMap::kEmpty;
  }
};

BpeModel::HotPairs& BpeModel::hot_pairs() const {
  thread_local std::unique_ptr<HotPairs> hot;
  if (!hot) hot.reset(new HotPairs());
  if (hot->owner != instance_) hot->reset(instance_);
  return *hot;
}

inline uint32_t BpeModel::pair_rank(HotPairs& hot, const Symbol& a, const Symbol& b, uint32_t* merged) const {
  uint64_t key = PairMap::key(a.id, b.id);
  if (!maybe_pair(key)) return kNone;
  HotPairs::Entry& e = hot.entries[(key * 0x9E3779B97F4A7C15ULL) >> (64 - HotPairs::kBits)];
  if (e.key != key) {
    const PairMap::Value* v = pairs_.find(key);
    e.key = key;
    e.value = v ? *v : PairMap::Value{kNone, kNone};
  }
  *merged = e.value.id;
  return e.value.rank;
}

uint32_t BpeModel::whole_piece_id(std::string_view text, size_t start, size_t end) const {
  if (config_.byte_level || config_.end_of_word_suffix.empty())
    return vocab_.find(text.data() + start, end - start);
  std::string word(text.substr(start, end - start));
  word += config_.end_of_word_suffix;
  return vocab_.find(word);
}

void BpeModel::initial_symbols(std::string_view text, size_t start, size_t end,
                               std::vector<Symbol>& syms, bool* has_unk) const {
  syms.clear();
  *has_unk = false;
  auto push_unknown = [&](size_t at, size_t len) {
    if (config_.unk_id < 0) unknown_symbol(text, at, len);
    *has_unk = true;
    uint32_t unk = static_cast<uint32_t>(config_.unk_id);
    if (config_.fuse_unk && !syms.empty() && syms.back().id == unk && syms.back().end == at) {
      syms.back().end = static_cast<uint32_t>(at + len);
    } else {
      syms.push_back(Symbol{unk, static_cast<uint32_t>(at), static_cast<uint32_t>(at + len)});
    }
  };
  if (config_.byte_level) {
    for (size_t i = start; i < end; ++i) {
      uint32_t id = byte_ids_[static_cast<unsigned char>(text[i])];
      if (id == BytesMap::kMissing) {
        push_unknown(i, 1);
      } else {
        syms.push_back(Symbol{id, static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)});
      }
    }
    return;
  }
  std::string last;  // the final character plus the end-of-word suffix
  for (size_t i = start; i < end;) {
    size_t len = utf8_char_length(text, i);
    if (i + len > end) len = end - i;
    uint32_t id;
    if (i + len == end && !config_.end_of_word_suffix.empty()) {
      last.assign(text.data() + i, len);
      last += config_.end_of_word_suffix;
      id = vocab_.find(last);
    } else {
      id = vocab_.find(text.data() + i, len);
    }
    if (id == BytesMap::kMissing) {
      push_unknown(i, len);
    } else {
      syms.push_back(Symbol{id, static_cast<uint32_t>(i), static_cast<uint32_t>(i + len)});
    }
    i += len;
  }
}

// O(n^2) but with tiny constants: find the best pair, merge it, rescore its two neighbours.
// Arrays stay compact (memmove) so the min-scan is a short vectorizable loop.
void BpeModel::merge_small(HotPairs& hot, std::vector<Symbol>& syms) const {
  size_t n = syms.size();
  if (n < 2) return;
  uint32_t ranks[kSmallPiece];
  uint32_t merged_ids[kSmallPiece];
  Symbol* sym = syms.data();
  for (size_t i = 0; i + 1 < n; ++i) ranks[i] = pair_rank(hot, sym[i], sym[i + 1], &merged_ids[i]);
  while (n > 1) {
    uint32_t best = kNone;
    for (size_t i = 0; i + 1 < n; ++i) best = std::min(best, ranks[i]);
    if (best == kNone) break;
    size_t at = 0;
    while (ranks[at] != best) ++at;  // the leftmost pair with the best rank
    sym[at].id = merged_ids[at];
    sym[at].end = sym[at + 1].end;
    size_t tail = n - at - 2;  // pairs right of the merged one
    std::memmove(sym + at + 1, sym + at + 2, tail * sizeof(Symbol));
    std::memmove(ranks + at + 1, ranks + at + 2, tail * sizeof(uint32_t));
    std::memmove(merged_ids + at + 1, merged_ids + at + 2, tail * sizeof(uint32_t));
    --n;
    if (at + 1 < n) ranks[at] = pair_rank(hot, sym[at], sym[at + 1], &merged_ids[at]);
    if (at > 0) ranks[at - 1] = pair_rank(hot, sym[at - 1], sym[at], &merged_ids[at - 1]);
  }
  syms.resize(n);
}

// O(n log n): a min-heap of candidate merges keyed by (rank, position) over a linked list of
// symbols. Entries go stale when a neighbour merges; they are checked and skipped when popped.
// Because positions are the original index of a symbol's first part, ties still go leftmost.
void BpeModel::merge_large(HotPairs& hot, std::vector<Symbol>& syms) const {
  size_t n = syms.size();
  std::vector<uint32_t> next(n), prev(n);
  std::vector<uint8_t> alive(n, 1);
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint32_t>(i + 1);
    prev[i] = static_cast<uint32_t>(i) - 1;  // kNone for i == 0
  }
  struct Candidate {
    uint32_t rank, left, right_id, left_id, merged;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto consider = [&](uint32_t left) {
    uint32_t right = next[left];
    if (right >= n) return;
    uint32_t merged;
    uint32_t rank = pair_rank(hot, syms[left], syms[right], &merged);
    if (rank != kNone) heap.push(Candidate{rank, left, syms[right].id, syms[left].id, merged});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    uint32_t right = next[c.left];
    // Stale if the left symbol died or changed, or its right neighbour changed.
    if (!alive[c.left] || right >= n || syms[c.left].id != c.left_id || syms[right].id != c.right_id)
      continue;
    syms[c.left].id = c.merged;
    syms[c.left].end = syms[right].end;
    alive[right] = 0;
    next[c.left] = next[right];
    if (next[right] < n) prev[next[right]] = c.left;
    consider(c.left);
    if (prev[c.left] != kNone) consider(prev[c.left]);
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i = next[i]) syms[k++] = syms[i];
  syms.resize(k);
}

void BpeModel::encode_piece(std::string_view text, size_t start, size_t end,
                            std::vector<Token>& out) const {
  if (start >= end) return;
  if (config_.ignore_merges) {
    uint32_t id = whole_piece_id(text, start, end);
    if (id != BytesMap::kMissing) {
      out.push_back(Token{id, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
      return;
    }
  }
  const char* p = text.data() + start;
  size_t n = end - start;
  bool cacheable = cache_ && n <= kMaxCachedBytes;
  if (cacheable && cache_->lookup(p, n, static_cast<uint32_t>(start), out)) return;

  thread_local std::vector<Symbol> syms;
  bool has_unk;
  initial_symbols(text, start, end, syms, &has_unk);
  HotPairs& hot = hot_pairs();
  if (syms.size() <= kSmallPiece) {
    merge_small(hot, syms);
  } else {
    merge_large(hot, syms);
  }
  size_t first = out.size();
  for (const Symbol& s : syms) out.push_back(Token{s.id, s.start, s.end});
  if (cacheable && !has_unk) cache_->store(p, n, out.data() + first, syms.size(), 0);
}

void BpeModel::encode_piece_longest(std::string_view text, size_t start, size_t end,
                                    std::vector<Token>& out) const {
  const std::string& suffix = config_.byte_level ? std::string() : config_.end_of_word_suffix;
  std::string candidate;
  size_t i = start;
  while (i < end) {
    size_t limit = std::min(end, i + max_token_bytes_);
    uint32_t found = kNone;
    size_t found_end = i;
    // Try the longest candidate first; on character models only whole characters.
    for (size_t j = limit; j > i; --j) {
      if (!config_.byte_level && j < end && !utf8_is_boundary(text, j)) continue;
      uint32_t id;
      if (j == end && !suffix.empty()) {
        candidate.assign(text.data() + i, j - i);
        candidate += suffix;
        id = vocab_.find(candidate);
      } else {
        id = vocab_.find(text.data() + i, j - i);
      }
      if (id != BytesMap::kMissing) {
        found = id;
        found_end = j;
        break;
      }
    }
    if (found == kNone) {
      size_t len = config_.byte_level ? 1 : std::min(end - i, utf8_char_length(text, i));
      if (config_.unk_id < 0) unknown_symbol(text, i, len);
      uint32_t unk = static_cast<uint32_t>(config_.unk_id);
      if (config_.fuse_unk && !out.empty() && out.back().id == unk && out.back().end == i) {
        out.back().end = static_cast<uint32_t>(i + len);
      } else {
        out.push_back(Token{unk, static_cast<uint32_t>(i), static_cast<uint32_t>(i + len)});
      }
      i += len;
      continue;
    }
    out.push_back(Token{found, static_cast<uint32_t>(i), static_cast<uint32_t>(found_end)});
    i = found_end;
  }
}

}  // namespace ciyuan
