// Flat open-addressing hash tables for the hot paths: byte string -> id (vocabularies, the
// piece cache) and 64-bit key -> value (BPE merge pairs). std::unordered_map allocates a node
// per entry and hashes byte-at-a-time; these keep keys in one arena and probe linearly.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/huge_pages.h"

namespace ciyuan {

// The first min(n, 8) bytes at p as a little-endian integer, without reading past p + n and
// without a call to memcpy: overlapping fixed-size loads cover every length.
inline uint64_t load_upto8(const char* p, size_t n) {
  if (n >= 8) {
    uint64_t k;
    std::memcpy(&k, p, 8);
    return k;
  }
  if (n >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    return lo | (static_cast<uint64_t>(hi) << (8 * (n - 4)));
  }
  if (n == 0) return 0;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  return u[0] | (static_cast<uint64_t>(u[n / 2]) << (8 * (n / 2))) | (static_cast<uint64_t>(u[n - 1]) << (8 * (n - 1)));
}

namespace hash_detail {
constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
inline uint64_t start(size_t n) { return 0x243F6A8885A308D3ULL ^ (n * kMul); }
inline uint64_t step(uint64_t h, uint64_t k) { return (h ^ (k * kMul)) * 0xBF58476D1CE4E5B9ULL; }
inline uint64_t finish(uint64_t h) {
  h ^= h >> 29;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 32;
  return h;
}
}  // namespace hash_detail

// load_upto8(p, n) for 1 <= n <= 8 without a branch on n (piece lengths vary at random, so
// branching on them is a misprediction every few pieces): one 8-byte load, masked, where 8
// bytes may be read at p (that is, before `limit`).
inline uint64_t load_short(const char* p, size_t n, const char* limit) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (limit - p >= 8) {
    uint64_t k;
    std::memcpy(&k, p, 8);
    return k & (~uint64_t{0} >> (64 - 8 * n));
  }
#else
  (void)limit;
#endif
  return load_upto8(p, n);
}

// A fast 64-bit hash of a byte string (8 bytes per step, murmur-style finaliser).
// From 8 bytes on, the last step reads the last 8 bytes (overlapping the step before when n is
// not a multiple of 8): no branches on the length of the tail.
inline uint64_t hash_bytes(const char* p, size_t n) {
  using namespace hash_detail;
  uint64_t h = start(n);
  if (n < 8) return finish(n ? step(h, load_upto8(p, n)) : h);
  const char* last = p + n - 8;
  for (;; p += 8) {
    if (p > last) p = last;
    uint64_t k;
    std::memcpy(&k, p, 8);
    h = step(h, k);
    h ^= h >> 31;
    if (p == last) return finish(h);
  }
}

inline uint64_t hash_u64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return x;
}

// Maps byte strings to uint32 values. Insert-only; keys live in one arena. A slot is 16 bytes:
// a key's first 8 bytes, a check word (24 bits of hash, 8 of length) and the value, so short
// keys (most words) are found without touching anything else, and a 200k-token vocabulary
// takes 8 MB. Where the arena copy of a longer key is sits in a side array read only then.
class BytesMap {
 public:
  static constexpr uint32_t kMissing = 0xFFFFFFFFu;

  BytesMap() { rehash(16); }

  size_t size() const { return count_; }

  // Room for n keys in all (a bulk load then never rehashes), the table at most
  // max_load_percent full from now on (75 unless set: a big vocabulary that is looked up
  // rarely may trade a probe or two for half the memory).
  void reserve(size_t n, unsigned max_load_percent = 75) {
    max_load_percent_ = max_load_percent;
    size_t slots = slots_.size();
    while (n * 100 > slots * max_load_percent_) slots *= 2;
    if (slots != slots_.size()) rehash(slots);
  }

  // Inserts key -> value; returns false (and keeps the old value) when the key is present.
  bool insert(std::string_view key, uint32_t value) {
    const uint64_t h = hash_bytes(key.data(), key.size());
    if (find_hashed(key.data(), key.size(), h) != kMissing) return false;
    place(key, h, value);
    return true;
  }

  // insert() of a key that find_hashed(key, h) just did not find (h = its hash_bytes), so a
  // bulk load hashes each key once.
  void insert_absent(std::string_view key, uint64_t h, uint32_t value) { place(key, h, value); }

  uint32_t find(const char* p, size_t n) const { return find_hashed(p, n, hash_bytes(p, n)); }
  // find() for a caller that already has hash_bytes(p, n).
  uint32_t find_hashed(const char* p, size_t n, uint64_t h) const {
    uint64_t prefix = load_upto8(p, n);
    uint32_t check = check_of(h, n);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kMissing) return kMissing;
      if (s.check == check && s.prefix == prefix &&
          (n <= 8 || (keys_[i].length == n && std::memcmp(arena_.data() + keys_[i].offset + 8, p + 8, n - 8) == 0)))
        return s.value;
    }
  }
  uint32_t find(std::string_view key) const { return find(key.data(), key.size()); }
  // Starts loading the slot a lookup with hash h reads first.
  void prefetch(uint64_t h) const {
#if defined(__GNUC__)
    __builtin_prefetch(&slots_[h & mask_]);
#else
    (void)h;
#endif
  }

 private:
  struct Slot {
    uint64_t prefix = 0;
    uint32_t check = 0;
    uint32_t value = kMissing;
  };
  struct Key {
    uint32_t offset = 0;
    uint32_t length = 0;
  };
  void place(std::string_view key, uint64_t h, uint32_t value) {
    if ((count_ + 1) * 100 > slots_.size() * max_load_percent_) rehash(slots_.size() * 2);
    size_t i = h & mask_;
    while (slots_[i].value != kMissing) i = (i + 1) & mask_;
    slots_[i] = Slot{load_upto8(key.data(), key.size()), check_of(h, key.size()), value};
    keys_[i] = Key{static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size())};
    arena_.append(key.data(), key.size());
    ++count_;
  }
  static uint32_t check_of(uint64_t h, size_t n) {
    return static_cast<uint32_t>((h >> 40) << 8) | static_cast<uint32_t>(n < 255 ? n : 255);
  }
  void rehash(size_t n) {
    HugeVector<Slot> old_slots;
    HugeVector<Key> old_keys;
    old_slots.swap(slots_);
    old_keys.swap(keys_);
    slots_.assign(n, Slot{});
    keys_.assign(n, Key{});
    mask_ = n - 1;
    for (size_t j = 0; j < old_slots.size(); ++j) {
      if (old_slots[j].value == kMissing) continue;
      size_t i = hash_bytes(arena_.data() + old_keys[j].offset, old_keys[j].length) & mask_;
      while (slots_[i].value != kMissing) i = (i + 1) & mask_;
      slots_[i] = old_slots[j];
      keys_[i] = old_keys[j];
    }
  }

  HugeVector<Slot> slots_;
  HugeVector<Key> keys_;
  unsigned max_load_percent_ = 75;
  size_t mask_ = 0;
  std::string arena_;
  size_t count_ = 0;
};

// Maps uint64 keys to a pair of uint32 values (merge pairs -> (rank, new id)). Key and value
// share one 16-byte slot so that a probe touches one cache line.
class PairMap {
 public:
  struct Value {
    uint32_t rank;
    uint32_t id;
  };
  static constexpr uint64_t kEmpty = ~0ULL;

  PairMap() { rehash(16); }
  size_t size() const { return count_; }

  static uint64_t key(uint32_t left, uint32_t right) {
    return (static_cast<uint64_t>(left) << 32) | right;
  }

  bool insert(uint64_t k, Value v) {
    if ((count_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    size_t mask = slots_.size() - 1;
    for (size_t i = hash_u64(k) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == kEmpty) {
        slots_[i] = Slot{k, v};
        ++count_;
        return true;
      }
      if (slots_[i].key == k) return false;
    }
  }

  const Value* find(uint64_t k) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash_u64(k) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == k) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }

 private:
  struct Slot {
    uint64_t key;
    Value value;
  };
  void rehash(size_t n) {
    HugeVector<Slot> old;
    old.swap(slots_);
    slots_.assign(n, Slot{kEmpty, Value{0, 0}});
    count_ = 0;
    for (const Slot& s : old)
      if (s.key != kEmpty) insert(s.key, s.value);
  }

  HugeVector<Slot> slots_;
  size_t count_ = 0;
};

// Byte strings of 1 to 8 bytes -> ids, for the hottest lookup of encoding: a piece of text that
// is a whole short token (most pieces of most text). The key is the string as a little-endian
// integer (load_short) with its length; the slot index is one multiply of the two, against
// hash_bytes' four, and a slot is 16 bytes, so a hit reads one cache line. A BytesMap still
// answers every other lookup; this one only holds the short keys, at most two thirds full (a
// 200,000-token vocabulary's 148,000 short tokens in 4 MB).
class ShortKeyMap {
 public:
  static constexpr uint32_t kMissing = 0xFFFFFFFFu;

  // Room for n keys (the table is sized once; inserting more than n is an error of the caller).
  // At most half full: a lookup that misses (a short piece that is not a token, most joins a
  // merge asks for) walks on to an empty slot, ~3.6 slots at 60% full, ~1.5 at 30%, and more
  // keys are in their first slot. The tiktoken vocabularies were 57-61% full at up to 2/3, 28-30%
  // now: English 4-10% faster, o200k_base on multilingual text 5-10% (both builds at once, one
  // per core), for 1 MB more memory with cl100k_base and 4 MB with o200k_base.
  explicit ShortKeyMap(size_t n = 0) {
    size_t slots = 16;
    while (slots < 2 * n) slots *= 2;
    slots_.assign(slots, Slot{});
    shift_ = 64;
    for (size_t s = slots; s > 1; s >>= 1) --shift_;
    mask_ = slots - 1;
  }
  // key -> value for a key of 1 <= n <= 8 bytes read as load_upto8; the first value of a key stays.
  void insert(uint64_t key, size_t n, uint32_t value) {
    for (size_t i = index(key, n);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kMissing) {
        s = Slot{key, static_cast<uint32_t>(n), value};
        return;
      }
      if (s.key == key && s.length == n) return;
    }
  }
  // Where the lookup of (key, n) starts: for prefetch() and find() of a batch.
  size_t index(uint64_t key, size_t n) const { return ((key + n) * 0x9E3779B97F4A7C15ULL) >> shift_; }
  void prefetch(size_t i) const {
#if defined(__GNUC__)
    __builtin_prefetch(&slots_[i]);
#else
    (void)i;
#endif
  }
  uint32_t find(uint64_t key, size_t n, size_t i) const {
    for (;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key && s.length == n) return s.value;
      if (s.value == kMissing) return kMissing;
    }
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t length = 0;  // 0: empty (no key has length 0)
    uint32_t value = kMissing;
  };

 public:
  // The table's fields as locals, for a hot loop: held in registers, not read again through
  // `this` after every store (the compiler cannot tell that a store to a uint32_t array leaves
  // shift_ alone).
  class View {
   public:
    explicit View(const ShortKeyMap& m) : slots_(m.slots_.data()), shift_(m.shift_) {}
    size_t index(uint64_t key, size_t n) const { return ((key + n) * 0x9E3779B97F4A7C15ULL) >> shift_; }
    void prefetch(size_t i) const {
#if defined(__GNUC__)
      __builtin_prefetch(slots_ + i);
#else
      (void)i;
#endif
    }
    // Whether the key's own slot (the first one probed) holds it, and its value if so: the
    // answer for most lookups; find() walks on from there.
    bool at_home(size_t i, uint64_t key, size_t n, uint32_t* value) const {
      const Slot& s = slots_[i];
      *value = s.value;
      return (s.key == key) & (s.length == n);
    }

   private:
    const Slot* slots_;
    unsigned shift_;
  };
  HugeVector<Slot> slots_;
  unsigned shift_ = 60;
  size_t mask_ = 15;
};

}  // namespace ciyuan
