// WordPiece, WordLevel and CharLevel models (one TokenModel for the three; see encoder.h for
// the encode path around them).
//
// WordPiece (Hugging Face semantics): each word is split greedily, longest token first, from
// left to right; pieces after the first carry the continuing-subword prefix ("##"). If some
// position has no token at all, or the word has more than max_input_chars_per_word
// characters, the whole word becomes one unknown token spanning the word.
// The longest match at a position is one walk down a byte trie of the vocabulary (the
// continuation walk starts at the node of the prefix), so a word of n bytes costs at most
// n * L trie steps, L the longest token in bytes - linear in the word for a given vocabulary,
// never Hugging Face's shrink-and-rehash loop. The common cases are shortcuts: a word that is
// a token is one hash lookup; a one-character word (CJK) is one array read.
//
// WordLevel: the whole word is a token, else unknown. CharLevel: each character is a token,
// else unknown (one unknown token per character).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/hash.h"
#include "ciyuan/trie.h"

namespace ciyuan {

enum class WordModelKind : uint8_t { kWordPiece = 0, kWordLevel = 1, kCharLevel = 2 };

struct WordPieceConfig {
  WordModelKind kind = WordModelKind::kWordPiece;
  std::string continuing_subword_prefix = "##";
  int64_t unk_id = -1;                    // -1: an unknown word raises InvalidInputError
  uint64_t max_input_chars_per_word = 100;
};

// A thread's cache of recent short words (<= 16 bytes) -> their tokens (up to 4). English text
// keeps reusing a few thousand words, and this 320 KB table stays in L2 while the vocabulary's
// hash table and trie (megabytes) do not. Entries carry the model's instance number, so models
// never see each other's entries.
struct WordCache {
  // No initializers: a cache is made from zeroed memory (calloc: the pages cost nothing until
  // used), and all-zero is the empty state.
  struct Entry {
    uint64_t key[2];   // the word's bytes, zero-padded
    uint32_t check;    // instance * 32 + length (0: empty)
    uint8_t count;     // tokens
    uint8_t ends[3];   // where the first count - 1 tokens end (the last ends the word)
    uint32_t ids[4];
  };
  static constexpr size_t kSlots = 8192;
  static constexpr size_t kMaxBytes = 16;
  Entry entries[kSlots];
};

class WordPieceModel final : public TokenModel {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // `tokens[i]` is the UTF-8 text of id i; ids whose `present[i]` is 0 are holes.
  WordPieceModel(std::vector<std::string> tokens, std::vector<uint8_t> present, WordPieceConfig config);

  // Appends the tokens of the word w[0, n) with spans [start, end) relative to w plus `offset`.
  // `cache` (optional) is the calling thread's word cache.
  void encode_word(const char* w, size_t n, uint32_t offset, std::vector<Token>& out,
                   WordCache* cache = nullptr) const;

  // TokenModel: each piece (or BERT word) is one word, with the thread's word cache.
  void encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const override;
  void encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                   std::vector<Token>& out) const override;
  const std::string* id_bytes(uint32_t id) const override { return has_id(id) ? &tokens_[id] : nullptr; }
  size_t expected_tokens(size_t bytes) const override { return bytes / 3 + 16; }

  size_t id_limit() const override { return tokens_.size(); }
  size_t vocab_size() const { return vocab_.size(); }
  bool has_id(uint32_t id) const { return id < tokens_.size() && present_[id]; }
  uint32_t token_to_id(std::string_view token) const { return vocab_.find(token); }
  const WordPieceConfig& config() const { return config_; }

 private:
  void encode_wordpiece(const char* w, size_t n, uint32_t offset, std::vector<Token>& out, WordCache* cache) const;
  void encode_wordpiece_uncached(const char* w, size_t n, uint32_t offset, std::vector<Token>& out) const;
  void encode_chars(const char* w, size_t n, uint32_t offset, std::vector<Token>& out) const;
  void unknown(const char* w, size_t n, uint32_t start, uint32_t end, std::vector<Token>& out) const;
  uint32_t char_id(const char* p, size_t len) const {
    if (len == 1) return ascii_ids_[static_cast<unsigned char>(*p)];
    return vocab_.find(p, len);
  }

  std::vector<std::string> tokens_;
  std::vector<uint8_t> present_;
  WordPieceConfig config_;
  BytesMap vocab_;
  DoubleArrayTrie trie_;   // over token bytes (label = byte + 1)
  int32_t prefix_node_;    // trie node of the continuing-subword prefix, or -1
  uint32_t ascii_ids_[128];
  std::vector<uint32_t> bmp_ids_;  // one-character tokens by code point < 0x10000 (kNone: none)
  uint32_t instance_;              // tells models apart in the per-thread word caches
};

}  // namespace ciyuan
