// Shared pieces of the native trainers (BPE, WordPiece): the alphabet, the per-pair word lists
// and the pair index (merge_loop.h builds the shared merge loop on them). Internal: not part of
// the public C++ interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ciyuan/hash.h"
#include "ciyuan/utf8.h"

namespace ciyuan {
namespace train_detail {

// f += c for the character counts, stopping at the largest count instead of wrapping around.
inline void add_count(uint64_t& f, uint64_t c) { f = f + c < f ? ~uint64_t{0} : f + c; }

// The training alphabet from the characters' counts: the characters of `initial_alphabet`
// forced in (as if infinitely frequent), then, when limit_alphabet >= 0, only that many of the
// most frequent (ties to the smaller code point); sorted by code point.
inline std::vector<std::pair<uint32_t, uint64_t>> kept_alphabet(std::unordered_map<uint32_t, uint64_t>& freq,
                                                                const std::vector<std::string>& initial_alphabet,
                                                                int64_t limit_alphabet) {
  for (const std::string& s : initial_alphabet) {
    uint32_t cp;
    if (s.empty()) continue;
    utf8::decode(s.data(), s.data() + s.size(), &cp);
    freq[cp] = ~uint64_t{0};
  }
  std::vector<std::pair<uint32_t, uint64_t>> kept(freq.begin(), freq.end());
  if (limit_alphabet >= 0 && kept.size() > static_cast<size_t>(limit_alphabet)) {
    std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    kept.resize(static_cast<size_t>(limit_alphabet));
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

// The token two tokens make: a + b without b's continuing-subword prefix (a + ##b -> ab,
// ##a + ##b -> ##ab; no prefix: a + b).
inline std::string join_tokens(const std::string& a, const std::string& b, const std::string& prefix) {
  if (!prefix.empty() && b.compare(0, prefix.size(), prefix) == 0) return a + b.substr(prefix.size());
  return a + b;
}

// How many merges a trainer may make at most (for its progress bar): `max_merges`, and no more
// than the vocabulary has room for.
inline uint64_t merge_budget(uint64_t vocab_size, uint64_t max_merges, size_t tokens) {
  return vocab_size ? std::min<uint64_t>(max_merges, vocab_size - tokens) : max_merges;
}

// Why training stops before the next merge - the vocabulary or the merges have reached their
// limit - or null to go on.
inline const char* limit_reached(uint64_t vocab_size, uint64_t max_merges, size_t tokens, size_t merges) {
  if (vocab_size && tokens >= vocab_size) return "vocab_size reached";
  if (merges >= max_merges) return "max_merges reached";
  return nullptr;
}

// The words that may hold a pair: most pairs are in one or two words, so those stay inline
// (16 bytes, no allocation); longer lists grow on the heap.
class WordList {
 public:
  WordList() { local_[0] = local_[1] = 0; }
  WordList(const WordList&) = delete;
  WordList& operator=(const WordList&) = delete;
  WordList(WordList&& o) noexcept : size_(o.size_), cap_(o.cap_) {
    std::memcpy(local_, o.local_, sizeof local_);
    o.size_ = 0;
    o.cap_ = 2;
  }
  ~WordList() {
    if (cap_ > 2) delete[] heap_;
  }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint32_t* data() const { return cap_ > 2 ? heap_ : local_; }
  uint32_t back() const { return data()[size_ - 1]; }
  void push_back(uint32_t w) {
    if (size_ == cap_) {
      uint32_t cap = cap_ * 2;
      uint32_t* bigger = new uint32_t[cap];
      std::memcpy(bigger, data(), size_ * sizeof(uint32_t));
      if (cap_ > 2) delete[] heap_;
      heap_ = bigger;
      cap_ = cap;
    }
    (cap_ > 2 ? heap_ : local_)[size_++] = w;
  }
  void release() {
    if (cap_ > 2) delete[] heap_;
    size_ = 0;
    cap_ = 2;
  }
  // Moves the contents into `out` (cleared first) and empties this list.
  void take(std::vector<uint32_t>& out) {
    out.assign(data(), data() + size_);
    release();
  }

 private:
  union {
    uint32_t* heap_;
    uint32_t local_[2];
  };
  uint32_t size_ = 0;
  uint32_t cap_ = 2;
};

// Pair key -> pair index. Slots are 8 bytes (32-bit fingerprint, index + 1); the key itself is
// checked in the caller's key array. Half the size of a key/value table at the same load.
class PairIndex {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  PairIndex() : slots_(1 << 12, 0) {}

  uint32_t find(uint64_t key, const std::vector<uint64_t>& keys) const {
    uint64_t h = hash_u64(key);
    uint32_t fp = static_cast<uint32_t>(h >> 32);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint64_t s = slots_[i];
      if (!s) return kNone;
      if (static_cast<uint32_t>(s >> 32) == fp && keys[static_cast<uint32_t>(s) - 1] == key)
        return static_cast<uint32_t>(s) - 1;
    }
  }

  // `key` must be absent; `keys[idx] == key`.
  void insert(uint64_t key, uint32_t idx, const std::vector<uint64_t>& keys) {
    if ((used_ + 1) * 10 > slots_.size() * 7) grow(keys);
    place(key, idx);
    ++used_;
  }

 private:
  void place(uint64_t key, uint32_t idx) {
    uint64_t h = hash_u64(key);
    size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    while (slots_[i]) i = (i + 1) & mask;
    slots_[i] = ((h >> 32) << 32) | (static_cast<uint64_t>(idx) + 1);
  }
  void grow(const std::vector<uint64_t>& keys) {
    std::vector<uint64_t> old(slots_.size() * 2, 0);
    old.swap(slots_);
    for (uint64_t s : old)
      if (s) place(keys[static_cast<uint32_t>(s) - 1], static_cast<uint32_t>(s) - 1);
  }
  std::vector<uint64_t> slots_;
  size_t used_ = 0;
};

// PairIndex with a small direct-mapped cache in front: a merge keeps meeting the same few
// neighbour pairs, and the cache saves most of the big index's cache misses. Pair indices
// never change, so entries never go stale.
class CachedPairIndex {
 public:
  CachedPairIndex() { std::fill(std::begin(cache_key_), std::end(cache_key_), ~0ULL); }

  uint32_t find(uint64_t key, const std::vector<uint64_t>& keys) {
    const size_t slot = (key * 0x9E3779B97F4A7C15ULL) >> (64 - kCacheBits);
    if (cache_key_[slot] == key) return cache_idx_[slot];
    const uint32_t idx = index_.find(key, keys);
    if (idx != PairIndex::kNone) {
      cache_key_[slot] = key;
      cache_idx_[slot] = idx;
    }
    return idx;
  }
  // `key` must be absent; `keys[idx] == key`.
  void insert(uint64_t key, uint32_t idx, const std::vector<uint64_t>& keys) { index_.insert(key, idx, keys); }

 private:
  static constexpr size_t kCacheBits = 14;
  uint64_t cache_key_[1 << kCacheBits];
  uint32_t cache_idx_[1 << kCacheBits];
  PairIndex index_;
};

}  // namespace train_detail
}  // namespace ciyuan
