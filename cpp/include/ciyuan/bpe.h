// BPE model: turns one pre-tokenized piece into token ids.
//
// Two ways to rank a pair of adjacent symbols, covering every BPE file format in use:
//  - merge ranks (Hugging Face, subword-nmt, GPT-2's vocab.bpe, ciyuan's trainer): pair (a, b)
//    may merge only if it is in the merges list; its rank is its line number;
//  - token ranks (tiktoken): pair (a, b) may merge if the bytes a+b are a token; its rank is
//    that token's id.
// Either way the lowest-ranked pair merges first, the leftmost one on ties, until no pair can
// merge. Short pieces use a linear scan per merge (O(n^2), fastest for the usual n < 20); long
// pieces use a heap over a linked list (O(n log n)), so a 1 MB piece without spaces is fine.
// A piece that is itself a token can be emitted whole (`ignore_merges`, tiktoken's shortcut),
// and pieces that needed merging are cached.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/hash.h"

namespace ciyuan {

// One output token: its id and the byte span [start, end) of the input it came from.
struct Token {
  uint32_t id;
  uint32_t start;
  uint32_t end;
};

struct BpeConfig {
  bool byte_level = true;          // initial symbols are bytes (else UTF-8 characters)
  bool rank_by_token = false;      // tiktoken ranking (see above) instead of merge ranks
  bool ignore_merges = false;      // a piece that is a token is emitted as is
  std::string end_of_word_suffix;  // character-level: appended to a word's last character
  int64_t unk_id = -1;             // id for unknown symbols; -1 = unknown symbols are an error
  bool fuse_unk = false;           // consecutive unknown symbols become one unk token
  size_t cache_capacity = 1 << 18; // cached pieces (0 disables the cache)
};

// A thread-safe, bounded map from piece bytes to its encoding (pairs of id, byte length).
class PieceCache {
 public:
  explicit PieceCache(size_t capacity);
  bool lookup(const char* p, size_t n, uint32_t base, std::vector<Token>& out) const;
  void store(const char* p, size_t n, const Token* tokens, size_t count, uint32_t base);

 private:
  struct Shard {
    mutable std::mutex mutex;
    BytesMap index;                 // piece -> entry number
    std::vector<uint32_t> entries;  // entry -> offset into data (data[offset] = count)
    std::vector<uint32_t> data;     // count, then (id, length) pairs
  };
  static constexpr size_t kShards = 16;
  size_t capacity_per_shard_;
  std::unique_ptr<Shard[]> shards_;
};

class BpeModel {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // `tokens[i]` is the byte string of id i (raw bytes for byte-level models); ids whose
  // `present[i]` is 0 are holes. `merges` are (left id, right id) pairs in rank order.
  BpeModel(std::vector<std::string> tokens, std::vector<uint8_t> present,
           const std::vector<std::pair<uint32_t, uint32_t>>& merges, BpeConfig config);

  // Appends the tokens of text[start, end) (one piece) with spans relative to `text`.
  void encode_piece(std::string_view text, size_t start, size_t end, std::vector<Token>& out) const;
  // The textbook alternative: greedy longest prefix that is a token, left to right.
  void encode_piece_longest(std::string_view text, size_t start, size_t end,
                            std::vector<Token>& out) const;

  size_t id_limit() const { return tokens_.size(); }  // one past the largest id
  size_t vocab_size() const { return vocab_.size(); }
  bool has_id(uint32_t id) const { return id < tokens_.size() && present_[id]; }
  const std::string& token(uint32_t id) const { return tokens_[id]; }
  uint32_t token_to_id(std::string_view token) const { return vocab_.find(token); }
  const BpeConfig& config() const { return config_; }
  size_t merge_count() const { return merges_.size(); }
  const std::vector<std::pair<uint32_t, uint32_t>>& merges() const { return merges_; }

 private:
  struct Symbol {
    uint32_t id;
    uint32_t start;  // byte span of the input
    uint32_t end;
  };
  // A per-thread, direct-mapped cache in front of pairs_: the full table is megabytes (a cache
  // miss per lookup), while text keeps reusing a few thousand pairs.
  struct HotPairs;
  HotPairs& hot_pairs() const;
  // Rank of merging a and b (kNone if they cannot merge); sets the merged id.
  uint32_t pair_rank(HotPairs& hot, const Symbol& a, const Symbol& b, uint32_t* merged) const;
  void initial_symbols(std::string_view text, size_t start, size_t end, std::vector<Symbol>& syms,
                       bool* has_unk) const;
  void merge_small(HotPairs& hot, std::vector<Symbol>& syms) const;
  void merge_large(HotPairs& hot, std::vector<Symbol>& syms) const;
  uint32_t whole_piece_id(std::string_view text, size_t start, size_t end) const;
  [[noreturn]] void unknown_symbol(std::string_view text, size_t at, size_t len) const;

  std::vector<std::string> tokens_;
  std::vector<uint8_t> present_;
  std::vector<std::pair<uint32_t, uint32_t>> merges_;
  BpeConfig config_;
  BytesMap vocab_;
  PairMap pairs_;
  uint32_t byte_ids_[256];
  size_t max_token_bytes_ = 0;
  // A blocked Bloom filter over pairs_: most pairs looked up (e.g. two adjacent CJK
  // characters) cannot merge, and the filter says so from L2 instead of a miss in pairs_.
  std::vector<uint64_t> pair_filter_;
  uint64_t pair_filter_mask_ = 0;
  void build_pair_filter(const std::vector<uint64_t>& keys);
  bool maybe_pair(uint64_t key) const {
    uint64_t h = hash_u64(key);
    uint64_t bits = (1ULL << (h >> 58)) | (1ULL << ((h >> 52) & 63));
    return (pair_filter_[h & pair_filter_mask_] & bits) == bits;
  }
  std::unique_ptr<PieceCache> cache_;
  uint64_t instance_;  // tells the per-thread pair caches of different models apart
};

}  // namespace ciyuan
