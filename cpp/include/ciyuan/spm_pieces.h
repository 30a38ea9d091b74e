// The typed piece table of the SentencePiece models (Unigram and SentencePiece BPE): pieces
// (UTF-8), float scores, types, the unknown piece, the byte pieces <0x00>..<0xFF> of byte
// fallback, and a trie (over characters) of the pieces the Unigram lattice matches from text.
//
// Which pieces match text: NORMAL, USER_DEFINED and UNUSED (the models skip UNUSED where
// SentencePiece does); CONTROL, UNKNOWN and BYTE pieces are never matched, their text may
// occur in the input as ordinary characters. Building checks what SentencePiece rejects: two
// pieces with one text, an empty piece, two unknown pieces, an unknown id outside the table,
// byte fallback without all 256 byte pieces (each a clear ModelError).
//
// Cost: building is O(total piece bytes); a lookup is one hash probe, a common-prefix walk
// one trie step per character.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/hash.h"
#include "ciyuan/trie.h"

namespace ciyuan {

// Numbered as SentencePiece's ModelProto numbers them.
enum class PieceType : uint8_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

// Options of the SentencePiece models besides their pieces.
struct SpmModelConfig {
  int64_t unk_id = -1;         // the unknown piece; -1: none (unknown text is an error without byte fallback)
  bool byte_fallback = false;  // unknown characters become their UTF-8 bytes' <0xXX> pieces
  // Spans of those byte pieces: each character's own (SentencePiece), or, as Hugging Face's
  // Unigram gives them, the whole run of consecutive unknown characters for every byte of it.
  bool byte_run_spans = false;
  // Unigram only: Hugging Face's Viterbi instead of SentencePiece's: double scores (the exact
  // ones the model was given) and double sums, every piece (span) given from 0, no re-centring,
  // an unknown character scoring (lowest score of all pieces) - 10 (see unigram.h).
  bool hf_viterbi = false;
};

// Where every segmentation of a normalized text breaks, whatever the scores: before each `▁`
// that follows another character than `▁` when no piece holds such a pair ("x▁"); after each
// `▁` followed by another character when no piece holds "▁x" (treat_whitespace_as_suffix
// models); nowhere known otherwise. Runs of `▁` (Llama 2's "▁▁▁▁" pieces) stay in one word.
enum class WordBreak : uint8_t { kNone = 0, kBeforeSpace = 1, kAfterSpace = 2 };

class SpmPieces {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  SpmPieces(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
            SpmModelConfig config);

  size_t size() const { return pieces_.size(); }
  const std::string& piece(uint32_t id) const { return pieces_[id]; }
  float score(uint32_t id) const { return scores_[id]; }
  PieceType type(uint32_t id) const { return types_[id]; }
  const std::vector<std::string>& pieces() const { return pieces_; }
  const std::vector<float>& scores() const { return scores_; }
  const std::vector<PieceType>& types() const { return types_; }
  // The bytes the decoder gets for an id: the piece's text; a byte piece's byte; "" for control.
  const std::string* id_bytes(uint32_t id) const { return id < bytes_.size() ? &bytes_[id] : nullptr; }

  int64_t unk_id() const { return unk_id_; }
  bool byte_fallback() const { return byte_fallback_; }
  uint32_t byte_id(unsigned char b) const { return byte_ids_[b]; }
  // Lowest and highest score of the NORMAL pieces (FLT_MAX / FLT_MIN without any, as
  // SentencePiece starts them).
  float min_score() const { return min_score_; }
  float max_score() const { return max_score_; }
  WordBreak word_break() const { return word_break_; }

  // The id of a matchable piece (NORMAL, USER_DEFINED, UNUSED) with these bytes, or kNone.
  uint32_t find_matchable(const char* p, size_t n) const { return matchable_.find(p, n); }
  // The id of any piece with these bytes, or kNone.
  uint32_t find_any(const char* p, size_t n) const { return all_.find(p, n); }
  // Length of the longest USER_DEFINED piece that text[pos, end) starts with, 0 if none.
  size_t user_defined_prefix(const char* p, size_t n) const;
  bool has_user_defined() const { return has_user_defined_; }

  // The trie of the lattice pieces (NORMAL, USER_DEFINED): labels are character codes
  // (char_code), values ids. One step per character: a CJK character is one likely cache miss
  // instead of three.
  const DoubleArrayTrie& trie() const { return trie_; }
  bool trie_empty() const { return trie_empty_; }
  // The number of trie labels: char_code() is below it.
  uint32_t char_code_count() const { return code_count_; }
  // The codes of the characters below U+10000 by code point, for hot loops; kFarCode sends a
  // character to char_code().
  static constexpr uint16_t kFarCode = 0xFFFF;
  const uint16_t* bmp_codes() const { return bmp_codes_.data(); }
  // The trie label of a character, 0 for a character in no lattice piece.
  uint32_t char_code(uint32_t cp) const {
    if (cp < 0x10000 && bmp_codes_[cp] != kFarCode) return bmp_codes_[cp];
    const auto it = far_codes_.find(cp);
    return it == far_codes_.end() ? 0 : it->second;
  }

  // Appends the tokens of an unknown character or symbol text[s, e): the unknown piece - one
  // token with the unknown token before it if that one ends at s and is at `first` or later
  // (SentencePiece merges consecutive unknown pieces) - or, with byte fallback, its bytes'
  // pieces (each spanning all of text[s, e)). InvalidInputError when the model has neither.
  void unknown(const char* text, uint32_t s, uint32_t e, size_t first, std::vector<Token>& out) const {
    if (byte_fallback_) {
      uint32_t from = s;
      if (byte_run_spans_) {  // the byte pieces of the unknown characters just before: one run
        size_t k = out.size();
        while (k > first && out[k - 1].end == s && types_[out[k - 1].id] == PieceType::kByte) --k;
        if (k < out.size()) from = out[k].start;
        for (; k < out.size(); ++k) out[k].end = e;
      }
      for (uint32_t i = s; i < e; ++i) out.push_back(Token{byte_ids_[static_cast<unsigned char>(text[i])], from, e});
      return;
    }
    if (unk_id_ < 0) no_unknown(text + s, e - s);
    const uint32_t unk = static_cast<uint32_t>(unk_id_);
    if (out.size() > first && out.back().id == unk && out.back().end == s) {
      out.back().end = e;
      return;
    }
    out.push_back(Token{unk, s, e});
  }

  // The id SentencePiece reports for the text of a final symbol (BPE): a reserved piece
  // (CONTROL, UNKNOWN, BYTE) first, then a matchable one, else the unknown id (kNone if none).
  uint32_t symbol_id(const char* p, size_t n) const {
    uint32_t id = all_.find(p, n);
    return id != kNone ? id : (unk_id_ >= 0 ? static_cast<uint32_t>(unk_id_) : kNone);
  }

  // For a character below U+10000: the piece it is alone (symbol_id's answer), and whether
  // any longer matchable piece holds it (if not, no merge can involve it).
  uint32_t bmp_symbol_id(uint32_t cp) const { return bmp_ids_[cp]; }
  bool bmp_in_longer_piece(uint32_t cp) const { return bmp_in_longer_[cp] != 0; }

  [[noreturn]] static void no_unknown(const char* p, size_t n);

 private:
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<PieceType> types_;
  std::vector<std::string> bytes_;
  int64_t unk_id_ = -1;
  bool byte_fallback_ = false;
  bool byte_run_spans_ = false;
  uint32_t byte_ids_[256];
  float min_score_, max_score_;
  WordBreak word_break_ = WordBreak::kNone;
  BytesMap matchable_, all_;
  DoubleArrayTrie trie_;
  bool trie_empty_ = true;
  uint32_t code_count_ = 1;
  // Character codes: 16 bits by code point below U+10000 (128 KB: the table's cache lines are
  // what a CJK text touches), kFarCode sending the lookup to far_codes_ (code points above
  // U+FFFF, and codes past 16 bits in a model of more than 65534 distinct characters).
  std::vector<uint16_t> bmp_codes_;
  std::unordered_map<uint32_t, uint32_t> far_codes_;
  std::vector<uint32_t> bmp_ids_;        // by code point < 0x10000
  std::vector<uint8_t> bmp_in_longer_;   // by code point < 0x10000
  DoubleArrayTrie user_trie_;  // USER_DEFINED pieces only
  bool has_user_defined_ = false;
};

inline bool spm_space_at(const char* t, uint32_t p) {
  return t[p] == '\xE2' && t[p + 1] == '\x96' && t[p + 2] == '\x81';
}

// The first byte 0xE2 (the lead byte of U+2581) in [p, end), or end. Eight bytes a step, as
// words are a few bytes long: a memchr call per word costs more than its scan.
inline const char* find_space_lead(const char* p, const char* end) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  for (; end - p >= 8; p += 8) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    x ^= kOnes * 0xE2;  // 0xE2 bytes become zero bytes
    // The lowest zero byte is flagged exactly (a borrow only flags bytes above it).
    if (const uint64_t zero = (x - kOnes) & ~x & (kOnes * 0x80)) return p + (__builtin_ctzll(zero) >> 3);
  }
  while (p < end && *p != '\xE2') ++p;
  return p;
}

// Calls word(start, end) for each word of text[start, end) that every segmentation keeps whole.
template <class Word>
void spm_each_word(WordBreak mode, const char* t, uint32_t start, uint32_t end, Word&& word) {
  if (mode == WordBreak::kNone) {
    word(start, end);
    return;
  }
  uint32_t ws = start;
  for (uint32_t p = start; p + 3 <= end;) {
    p = static_cast<uint32_t>(find_space_lead(t + p, t + end) - t);
    if (p == end) break;
    if (p + 3 > end || !spm_space_at(t, p)) {
      ++p;
      continue;
    }
    if (mode == WordBreak::kBeforeSpace) {
      if (p > ws && !(p >= ws + 3 && spm_space_at(t, p - 3))) {
        word(ws, p);
        ws = p;
      }
    } else if (p + 6 <= end ? !spm_space_at(t, p + 3) : p + 3 < end) {
      word(ws, p + 3);
      ws = p + 3;
    }
    p += 3;
  }
  if (ws < end) word(ws, end);
}

// The words of the process, shared by its threads: a direct-mapped table of 2^17 entries
// (8 MB, allocated on first use) from a word to what a thread's cache entry holds. Threads
// read it without locks: each slot is eight 64-bit atomics with a sequence number (a seqlock:
// odd while a writer fills it; a reader that sees it change retries as a miss). A writer that
// finds the slot being written skips it. Shared so that the threads of a batch do not each
// work out every word of a text once (on English, a cold cache is a fifth of the time).
class SharedWordTable {
 public:
  static constexpr int kSlotBits = 17;
  static SharedWordTable& get();
  // Slot of a hash (its top bits).
  size_t slot_of(uint64_t hash) const { return static_cast<size_t>(hash >> (64 - kSlotBits)); }
  // Copies slot `at` into *e when it holds the key (k0, k1, check); false otherwise.
  template <class Entry>
  bool read(size_t at, uint64_t k0, uint64_t k1, uint32_t check, Entry* e) const;
  // Publishes e (a filled entry) in slot `at`, unless another thread is writing it.
  template <class Entry>
  void write(size_t at, const Entry& e);

 private:
  SharedWordTable();
  struct alignas(64) Slot {
    std::atomic<uint64_t> w[8];  // key0, key1, check|extra, ids (4 words), seq|count|ends
  };
  Slot* slots_;
};

// A thread's cache of short words (<= 16 bytes) -> their pieces (up to 8) for the SentencePiece
// models; `extra` is the model's own per-word value (Unigram: the smallest margin of the word's
// Viterbi decisions). An id the model never gives a piece may mark something else (Unigram:
// 0xFFFFFFFE, an unknown character). `check` holds the model's instance number so models never
// see each other's entries. Two levels: 2^12 entries of the thread's own (256 KB, within the
// core's L2: a few thousand common words make most of a text) in front of the process's shared
// table (SharedWordTable), where a word missing here is looked up and where a word worked out
// here is published.
struct SpmWordCache {
  // One cache line an entry (the cache is 64-byte aligned): a lookup touches one line. Eight
  // pieces, not four: a capitalized English word in albert (lower-case pieces) is "▁", one
  // unknown node per capital and the rest; with four, 18% of the words of Gutenberg text never
  // stayed in the cache and paid for two Viterbis each time.
  struct alignas(64) Entry {
    uint64_t key[2];
    uint32_t check;  // instance * 32 + length (0: empty)
    float extra;
    uint32_t ids[8];
    uint8_t count;
    uint8_t ends[7];
  };
  static constexpr int kHotBits = 12;
  static constexpr size_t kMaxBytes = 16;
  static constexpr size_t kMaxPieces = 8;
  Entry hot[size_t{1} << kHotBits];

  // The entry for the word w[0, n) (1 <= n <= kMaxBytes) of model `instance`; *hit tells
  // whether it holds that word. After a miss the caller fills the entry (and calls fill) or
  // leaves it empty.
  Entry& slot(const char* w, size_t n, uint32_t instance, bool* hit) {
    const uint64_t k0 = load_upto8(w, n < 8 ? n : 8);
    const uint64_t k1 = n > 8 ? load_upto8(w + 8, n - 8) : 0;
    const uint32_t check = (instance << 5) | static_cast<uint32_t>(n);
    const uint64_t h = (k0 ^ (k1 * 0xD6E8FEB86659FD93ULL) ^ (n << 3)) * 0x9E3779B97F4A7C15ULL;
    Entry& near = hot[(h >> 20) & ((size_t{1} << kHotBits) - 1)];
    *hit = true;
    if (near.check == check && near.key[0] == k0 && near.key[1] == k1) return near;
    pending_slot_ = shared_->slot_of(h);
    if (shared_->read(pending_slot_, k0, k1, check, &near)) return near;
    *hit = false;
    near.key[0] = k0;
    near.key[1] = k1;
    near.check = 0;  // filled by the caller when the word fits
    pending_check_ = check;
    return near;
  }
  // Marks an entry filled by the caller after slot() missed, and publishes it to the threads.
  void fill(Entry& e) {
    e.check = pending_check_;
    shared_->write(pending_slot_, e);
  }
  // Appends the tokens of a hit for the word [start, end).
  static void replay(const Entry& e, uint32_t start, uint32_t end, std::vector<Token>& out) {
    uint32_t from = start;
    for (uint32_t i = 0; i + 1 < e.count; ++i) {
      out.push_back(Token{e.ids[i], from, start + e.ends[i]});
      from = start + e.ends[i];
    }
    out.push_back(Token{e.ids[e.count - 1], from, end});
  }

  // The calling thread's cache (one per thread, used by all SentencePiece models).
  static SpmWordCache* of_thread();
  // A fresh instance number for a model.
  static uint32_t new_instance();

 private:
  SharedWordTable* shared_;  // SharedWordTable::get(), kept: a function-local static costs a guard check a call
  uint32_t pending_check_;
  size_t pending_slot_;
};

template <class Entry>
bool SharedWordTable::read(size_t at, uint64_t k0, uint64_t k1, uint32_t check, Entry* e) const {
  const Slot& s = slots_[at];
  const uint64_t last = s.w[7].load(std::memory_order_acquire);
  if (last & (uint64_t{1} << 32)) return false;  // being written
  if (s.w[0].load(std::memory_order_relaxed) != k0 || s.w[1].load(std::memory_order_relaxed) != k1) return false;
  const uint64_t head = s.w[2].load(std::memory_order_relaxed);
  if (static_cast<uint32_t>(head >> 32) != check) return false;
  uint64_t ids[4];
  for (int i = 0; i < 4; ++i) ids[i] = s.w[3 + i].load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s.w[7].load(std::memory_order_relaxed) != last) return false;  // changed meanwhile
  e->key[0] = k0;
  e->key[1] = k1;
  e->check = check;
  const uint32_t extra = static_cast<uint32_t>(head);
  std::memcpy(&e->extra, &extra, 4);
  for (int i = 0; i < 4; ++i) {
    e->ids[2 * i] = static_cast<uint32_t>(ids[i]);
    e->ids[2 * i + 1] = static_cast<uint32_t>(ids[i] >> 32);
  }
  // The low 32 bits: count (4 bits) and seven ends (4 bits each: words are <= 16 bytes).
  e->count = static_cast<uint8_t>(last & 15);
  for (int i = 0; i < 7; ++i) e->ends[i] = static_cast<uint8_t>((last >> (4 + 4 * i)) & 15);
  return true;
}

template <class Entry>
void SharedWordTable::write(size_t at, const Entry& e) {
  Slot& s = slots_[at];
  uint64_t last = s.w[7].load(std::memory_order_relaxed);
  if (last & (uint64_t{1} << 32)) return;  // another writer is at it
  // Sequence (bits 32-63, odd while written) one up: claimed, or another thread was first.
  const uint64_t seq = last >> 32;
  if (!s.w[7].compare_exchange_strong(last, ((seq + 1) << 32) | (last & 0xFFFFFFFFu), std::memory_order_relaxed))
    return;
  std::atomic_thread_fence(std::memory_order_release);
  uint32_t extra;
  std::memcpy(&extra, &e.extra, 4);
  s.w[0].store(e.key[0], std::memory_order_relaxed);
  s.w[1].store(e.key[1], std::memory_order_relaxed);
  s.w[2].store((uint64_t{e.check} << 32) | extra, std::memory_order_relaxed);
  for (int i = 0; i < 4; ++i)
    s.w[3 + i].store(uint64_t{e.ids[2 * i]} | (uint64_t{e.ids[2 * i + 1]} << 32), std::memory_order_relaxed);
  uint64_t low = e.count & 15u;
  for (int i = 0; i < 7; ++i) low |= uint64_t{static_cast<uint8_t>(e.ends[i] & 15u)} << (4 + 4 * i);
  s.w[7].store(((seq + 2) << 32) | low, std::memory_order_release);
}

// What the two SentencePiece models share: the piece table and the TokenModel accessors over
// it (UnigramModel in unigram.h, SpmBpeModel in spm_bpe.h).
class SpmModel : public TokenModel {
 public:
  const SpmPieces& table() const { return table_; }
  size_t id_limit() const override { return table_.size(); }
  const std::string* id_bytes(uint32_t id) const override { return table_.id_bytes(id); }
  size_t expected_tokens(size_t bytes) const override { return bytes / 3 + 16; }
  size_t vocab_size() const { return table_.size(); }

 protected:
  SpmModel(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
           SpmModelConfig config)
      : table_(std::move(pieces), std::move(scores), std::move(types), config),
        instance_(SpmWordCache::new_instance()) {}

  SpmPieces table_;
  uint32_t instance_;  // tells models apart in the word cache
};

}  // namespace ciyuan
