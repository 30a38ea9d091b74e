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
// A piece that is itself a token can be emitted whole (`ignore_merges`, tiktoken's shortcut:
// the piece's own bytes are looked up, without an end-of-word suffix, as Hugging Face does).
// Character-level models take Hugging Face's options too: a `continuing_subword_prefix` on
// every character but a piece's first (a merge (a, b) then makes a + b without b's prefix),
// `byte_fallback` (an unknown character becomes the `<0xXX>` tokens of its bytes, when all are
// in the vocabulary) and `drop_unknown` (an unknown character without an unk token is left out
// instead of being an error).
// Byte-level pieces start from whole characters where that cannot change the result (see
// build_char_first), and recent pieces are cached per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/hash.h"
#include "ciyuan/huge_pages.h"

namespace ciyuan {

struct BpeConfig {
  bool byte_level = true;          // initial symbols are bytes (else UTF-8 characters)
  bool rank_by_token = false;      // tiktoken ranking (see above) instead of merge ranks
  bool ignore_merges = false;      // a piece that is a token is emitted as is
  std::string end_of_word_suffix;  // character-level: appended to a word's last character
  std::string end_of_word_symbol;  // character-level: a word's own last symbol ("l o w </w>")
  int64_t unk_id = -1;             // id for unknown symbols; -1 = unknown symbols are an error
  bool fuse_unk = false;           // consecutive unknown symbols become one unk token
  size_t cache_capacity = 65536;   // cached pieces per thread (0 disables the cache)
  bool longest_match = false;      // encode by greedy longest prefix instead of merges
  std::string continuing_subword_prefix;  // character-level: on every character but the first
  bool byte_fallback = false;      // character-level: unknown character -> its <0xXX> byte tokens
  bool drop_unknown = false;       // an unknown symbol without unk_id is left out (not an error)
};

class BpeModel final : public TokenModel {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // `tokens[i]` is the byte string of id i (raw bytes for byte-level models); ids whose
  // `present[i]` is 0 are holes. `merges` are (left id, right id) pairs in rank order.
  BpeModel(std::vector<std::string> tokens, std::vector<uint8_t> present,
           const std::vector<std::pair<uint32_t, uint32_t>>& merges, BpeConfig config);

  // Appends the tokens of text[start, end) (one piece) with spans relative to `text`.
  void encode_piece(std::string_view text, size_t start, size_t end, std::vector<Token>& out) const {
    // Most pieces of most text are short tokens; with tiktoken's shortcut they are one inlined
    // lookup, without the call and the set-up the merging path needs.
    const size_t n = end - start;
    if (short_whole_ && n - 1 < kShortPiece) {  // 1 <= n <= kShortPiece
      const uint32_t id = short_token_id(text.data() + start, n, text.data() + text.size());
      if (id != ShortKeyMap::kMissing) {
        out.push_back(Token{id, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
        return;
      }
    }
    encode_piece_merging(text, start, end, out);
  }
  // The id of the piece p[0, len) (1 <= len <= kShortPiece, short_whole_) when it is a token,
  // else ShortKeyMap::kMissing; `limit` is how far the buffer at p may be read.
  uint32_t short_token_id(const char* p, size_t len, const char* limit) const {
    const uint64_t key = load_short(p, len, limit);
    return short_tokens_.find(key, len, short_tokens_.index(key, len));
  }
  // Starts loading what encode_piece will read first for each of n pieces [first, second):
  // called for a batch of pieces before they are encoded, so that their memory misses overlap
  // instead of following one another.
  void prefetch_pieces(std::string_view text, const std::pair<uint32_t, uint32_t>* pieces, size_t n) const;
  // The textbook alternative: greedy longest prefix that is a token, left to right.
  void encode_piece_longest(std::string_view text, size_t start, size_t end,
                            std::vector<Token>& out) const;

  // TokenModel: pieces by merges (or longest match, per the config), a batch at a time.
  void encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const override;
  // Ids only: with tiktoken's shortcut, a piece that is a short token costs one lookup in
  // short_tokens_ and its id goes straight to `ids`; the other pieces are encoded into
  // `scratch`. Batches of kLookupBatch pieces: their slots are prefetched first (see bpe.cc).
  void encode_pieces_ids(std::string_view text, const Span* pieces, size_t n, std::vector<uint32_t>& ids,
                         std::vector<Token>& scratch) const override;
  void encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                   std::vector<Token>& out) const override;
  const std::string* id_bytes(uint32_t id) const override { return has_id(id) ? &tokens_[id] : nullptr; }
  // BPE-dropout (Provilkov et al., 2019) with the distribution of Hugging Face's
  // BPE(dropout=p): options.alpha is the probability p that a candidate merge is skipped when it
  // comes up (see merge_dropout in bpe.cc). p = 0 is plain encoding, p = 1 leaves the initial
  // symbols (bytes or characters). The whole-piece shortcut (ignore_merges) and the piece cache
  // are not used while sampling, as in Hugging Face; plain encoding is untouched.
  void sample_pieces(std::string_view text, const Span* pieces, size_t n, const SampleOptions& options, Rng& rng,
                     std::vector<Token>& out) const override;

  size_t id_limit() const override { return tokens_.size(); }  // one past the largest id
  size_t vocab_size() const { return vocab_.size(); }
  bool has_id(uint32_t id) const { return id < tokens_.size() && present_[id]; }
  uint32_t token_to_id(std::string_view token) const { return vocab_.find(token); }
  const BpeConfig& config() const { return config_; }
  size_t merge_count() const { return merges_.size(); }
  const std::vector<std::pair<uint32_t, uint32_t>>& merges() const { return merges_; }

 private:
  using Symbol = Token;  // a symbol while merging: its id and byte span of the input
  // Pieces up to this many bytes are looked up whole before anything else (ignore_merges).
  static constexpr size_t kShortPiece = 8;
  // Pieces whose lookups encode_pieces_ids prefetches together.
  static constexpr size_t kLookupBatch = 64;
  // The rest of encode_piece: a piece that short_whole_ did not settle.
  void encode_piece_merging(std::string_view text, size_t start, size_t end, std::vector<Token>& out) const;
  // The same with the calling thread's caches at hand (a batch asks for them once).
  struct ThreadCache;
  void encode_piece_merging(ThreadCache& cache, std::string_view text, size_t start, size_t end,
                            std::vector<Token>& out) const;
  // The rest of it for a piece not in the piece cache: `hash` is its hash_bytes, `place` where
  // its tokens will be remembered.
  struct PieceEntry;
  struct PiecePlace;
  struct LongIds;
  struct ShortPieceSet;
  void encode_piece_uncached(ThreadCache& cache, std::string_view text, size_t start, size_t end, uint64_t hash,
                             const PiecePlace& place, std::vector<Token>& out) const;
  // The merges of text[start, end) as one piece, appended to out; returns whether a symbol was
  // unknown (not remembered in the piece cache then).
  bool merge_span(ThreadCache& cache, std::string_view text, size_t start, size_t end, std::vector<Token>& out) const;
  // A piece of more than 2 * window_bytes_ bytes, merged window by window with the seams
  // checked (see bpe.cc): memory bounded by a window, not by the piece.
  void encode_piece_windowed(ThreadCache& cache, std::string_view text, size_t start, size_t end,
                             std::vector<Token>& out) const;
  // Per-thread caches (no locks): recent pair lookups in front of pairs_ (which is megabytes,
  // a memory miss per lookup, while text keeps reusing thousands of pairs), and recent pieces
  // with their tokens.
  ThreadCache& thread_cache() const;
  // Rank of merging a and b (kNone if they cannot merge); sets the merged id. `filter_first`:
  // ask the Bloom filter before the per-thread table (best when most pairs cannot merge).
  // Without pairs_ (rank_by_bytes_) a pair missing from the cache is looked up as its joined
  // bytes, text[a.start, b.end) (`limit`: the text's end).
  uint32_t pair_rank(ThreadCache& cache, const Symbol& a, const Symbol& b, uint32_t* merged,
                     bool filter_first, const char* text, const char* limit) const;
  uint32_t joined_id(const char* p, size_t n, const char* limit) const;
  __attribute__((noinline)) PairMap::Value pair_value(uint64_t key, const char* p, size_t n, const char* limit) const;
  void initial_symbols(std::string_view text, size_t start, size_t end, std::vector<Symbol>& syms,
                       bool* has_unk) const;
  void initial_symbols_hf(std::string_view text, size_t start, size_t end, std::vector<Symbol>& syms,
                          bool* has_unk) const;
  // The two ways merges rank a pair (see bpe.cc), and a call of f with the one this model uses
  // (symbols are spans of `text`).
  struct PairRank;
  struct JoinedRank;
  template <class F>
  void with_rank(ThreadCache& cache, std::string_view text, bool non_ascii, const F& f) const;
  template <class Rank>
  void merge_small(std::vector<Symbol>& syms, const Rank& rank) const;
  // tiktoken's rule on a piece of at most W bytes (bit_merge_), its symbols a bit set of start
  // positions: no symbol array to close gaps in, and a branch-free scan for the best pair.
  template <unsigned W>
  void merge_bits(std::string_view text, size_t start, size_t end, std::vector<Token>& out) const;
  template <class Rank>
  void merge_large(std::vector<Symbol>& syms, const Rank& rank) const;
  // The merge loop of sample_pieces: a pair is skipped when rng() >> 11 < threshold (p * 2^53).
  template <class Rank>
  void merge_dropout(std::vector<Symbol>& syms, uint64_t threshold, Rng& rng, const Rank& rank) const;
  uint32_t whole_piece_id(std::string_view text, size_t start, size_t end) const;
  // Returns whether the piece holds a non-ASCII character.
  bool char_first_symbols(std::string_view text, size_t start, size_t end, std::vector<Symbol>& syms,
                          std::vector<Symbol>& room) const;
  // pair_ids: with rank_by_bytes_ (no pairs_), the token each of pair_keys makes.
  void build_char_first(const std::vector<uint64_t>& pair_keys, const std::vector<uint32_t>& pair_ids);
  [[noreturn]] void unknown_symbol(std::string_view text, size_t at, size_t len) const;
  // Appends the unknown token for text[at, at + len) (fused with an unknown token just before
  // it, with fuse_unk), or throws when the model has none.
  void push_unknown(std::string_view text, size_t at, size_t len, std::vector<Token>& out) const;

  std::vector<std::string> tokens_;
  std::vector<uint8_t> present_;
  std::vector<std::pair<uint32_t, uint32_t>> merges_;
  BpeConfig config_;
  BytesMap vocab_;
  ShortKeyMap short_tokens_;  // the tokens of 1 to kShortPiece bytes, when short_whole_
  PairMap pairs_;
  uint32_t byte_ids_[256];
  uint32_t fallback_ids_[256];  // id of "<0xXX>" per byte (kNone when absent), for byte_fallback
  uint32_t end_of_word_id_ = kNone;  // the id of end_of_word_symbol, if set
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
  // Character-first encoding (byte-level models; see build_char_first): each multi-byte
  // character's own encoding, and per straddling byte pair the lowest rank of a merge that could
  // cross a character boundary before the characters are complete.
  struct CharEncoding {
    uint32_t max_rank_plus_one;  // highest rank merged inside the character, + 1 (0: none)
    uint32_t count;              // tokens the character encodes to on its own (1..4)
    uint32_t ids[4];
    uint8_t lengths[4];          // their lengths in bytes
  };
  bool simple_whole_ = false;  // a whole piece is looked up as its bytes (no word-end marker)
  bool short_whole_ = false;   // encode_piece settles short pieces that are tokens inline
  bool char_first_ = false;
  bool rank_by_bytes_ = false;  // rank_by_token with short_tokens_: JoinedRank, no pairs_
  bool bit_merge_ = false;      // rank_by_bytes_ with every byte a token: merge_bits for short pieces
  // Long pieces may be merged in windows of window_bytes_ (0: never; see encode_piece_windowed).
  size_t window_bytes_ = 0;
  HugeVector<CharEncoding> char_bmp_;         // by code point < 0x10000 (count 0: none)
  std::vector<CharEncoding> char_astral_;     // the other planes' characters found in tokens,
  PairMap char_index_astral_;                 // by code point -> {index into char_astral_, 0}
  std::vector<uint32_t> crossing_rank_;   // [last byte of left char][first byte of right char]
  // With rank_by_bytes_: [first byte][second byte] -> the id of that two-byte token (kNone:
  // none). A piece's first merges all join two bytes: one load each instead of a hash lookup.
  std::vector<uint32_t> two_byte_ids_;
  const CharEncoding* char_encoding(uint32_t cp) const;
  size_t piece_slots_ = 0;  // per-thread piece cache size (a power of two, or 0)
  // A Bloom filter over the tokens longer than 8 bytes: a long piece (a CJK clause, a rare
  // word) is rarely a token, and the filter says so without a memory miss in vocab_.
  std::vector<uint64_t> long_token_filter_;
  bool maybe_long_token(uint64_t hash) const {
    uint64_t bits = (1ULL << (hash >> 58)) | (1ULL << ((hash >> 52) & 63));
    return (long_token_filter_[(hash >> 20) & (long_token_filter_.size() - 1)] & bits) == bits;
  }
  uint64_t instance_;       // tells the per-thread caches of different models apart
};

}  // namespace ciyuan
