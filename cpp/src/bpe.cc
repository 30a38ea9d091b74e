#include "ciyuan/bpe.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <queue>

#include "ciyuan/bits.h"
#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"
#include "windows.h"

namespace ciyuan {

namespace {
// Pieces with more initial symbols than this use the heap-based merge loop.
constexpr size_t kSmallPiece = 48;
// The piece cache keeps pieces of up to this many bytes, and up to kMaxCachedTokens of their
// tokens inline in its entries; a piece of more tokens (gpt2's indentation: a space each) keeps
// them in a record of the thread's long-piece table (LongIds), up to one token a byte.
constexpr size_t kMaxCachedBytes = 24;
constexpr size_t kMaxCachedTokens = 6;
constexpr size_t kMaxLongTokens = kMaxCachedBytes;
// Piece-cache slots for pieces with non-ASCII bytes (see ThreadCache).
constexpr size_t kOtherPieceSlots = 8192;

// Whether the n bytes at p are all ASCII, eight at a time.
// From 8 bytes on, the tail is read as the last 8 bytes (overlapping), without a branch on its
// length.
bool is_ascii(const char* p, size_t n) {
  if (n < 8) return (load_upto8(p, n) & 0x8080808080808080ULL) == 0;
  uint64_t high, w;
  std::memcpy(&high, p + n - 8, 8);
  for (size_t i = 0; i + 8 < n; i += 8) {
    std::memcpy(&w, p + i, 8);
    high |= w;
  }
  return (high & 0x8080808080808080ULL) == 0;
}

// Whether the n bytes at a and b are equal, eight at a time (n is at most kMaxCachedBytes: no
// call to memcmp).
bool same_bytes(const char* a, const char* b, size_t n) {
  if (n < 8) return load_upto8(a, n) == load_upto8(b, n);
  uint64_t x, y;
  std::memcpy(&x, a + n - 8, 8);
  std::memcpy(&y, b + n - 8, 8);
  uint64_t diff = x ^ y;
  for (size_t i = 0; i + 8 < n; i += 8) {
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    diff |= x ^ y;
  }
  return diff == 0;
}

// Length of the UTF-8 sequence whose lead byte is at text[i] (1 for a stray byte).
size_t utf8_char_length(std::string_view text, size_t i) {
  return std::min(utf8::lead_length(static_cast<unsigned char>(text[i])), text.size() - i);
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

std::atomic<uint64_t> next_instance{1};  // numbers the models for the per-thread caches
}  // namespace

// ---------------------------------------------------------------------------------------------
// BpeModel

BpeModel::BpeModel(std::vector<std::string> tokens, std::vector<uint8_t> present,
                   const std::vector<std::pair<uint32_t, uint32_t>>& merges, BpeConfig config)
    : tokens_(std::move(tokens)), present_(std::move(present)), merges_(merges),
      config_(std::move(config)), instance_(next_instance.fetch_add(1)) {
  if (present_.size() != tokens_.size())
    throw Error(ErrorKind::kModel, "tokens and present flags differ in length");
  if (config_.cache_capacity) {
    piece_slots_ = 1;
    while (piece_slots_ < std::min<size_t>(config_.cache_capacity, 1 << 17)) piece_slots_ *= 2;
  }
  // Whole-token lookups that reach vocab_ are few once short_tokens_ and the piece cache answer
  // the hot ones: 80% full keeps a 200,000-token vocabulary in 4 MB of slots instead of 8.
  vocab_.reserve(static_cast<size_t>(std::count_if(present_.begin(), present_.end(), [](uint8_t p) { return p != 0; })), 80);
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
  if (!config_.end_of_word_symbol.empty()) {
    if (config_.byte_level || !config_.end_of_word_suffix.empty())
      throw Error(ErrorKind::kModel, "end_of_word_symbol is for character-level models without an end_of_word_suffix");
    end_of_word_id_ = vocab_.find(config_.end_of_word_symbol);
    // Longest match (document 000's tokenize) treats the marker as one more unit of the word: a
    // vocabulary without it (every marker merged away in training) gives the unknown token.
    if (end_of_word_id_ == BytesMap::kMissing && !config_.longest_match)
      throw Error(ErrorKind::kModel, "end_of_word_symbol '" + printable(config_.end_of_word_symbol) +
                                         "' is not in the vocabulary");
  }
  size_t long_tokens = 0;
  for (size_t id = 0; id < tokens_.size(); ++id) long_tokens += present_[id] && tokens_[id].size() > 8;
  size_t words = 8;  // 8 bits per long token, in 64-bit words
  while (words * 8 < long_tokens) words *= 2;
  long_token_filter_.assign(words, 0);
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (!present_[id] || tokens_[id].size() <= 8) continue;
    uint64_t h = hash_bytes(tokens_[id].data(), tokens_[id].size());
    long_token_filter_[(h >> 20) & (words - 1)] |= (1ULL << (h >> 58)) | (1ULL << ((h >> 52) & 63));
  }
  if (config_.unk_id >= 0 && !has_id(static_cast<uint32_t>(config_.unk_id)))
    throw Error(ErrorKind::kModel, "unk id " + std::to_string(config_.unk_id) + " is not in the vocabulary");
  for (int b = 0; b < 256; ++b) {
    char c = static_cast<char>(b);
    byte_ids_[b] = vocab_.find(&c, 1);
    char name[8];  // Hugging Face's and SentencePiece's name of a byte token: <0x0A>
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    fallback_ids_[b] = vocab_.find(name, 6);
  }
  const std::string& prefix = config_.continuing_subword_prefix;
  if (config_.byte_level && !prefix.empty())
    throw Error(ErrorKind::kModel, "continuing_subword_prefix applies to character-level models, not byte-level ones");
  if (config_.longest_match && (!prefix.empty() || config_.byte_fallback))
    throw Error(ErrorKind::kModel, "continuing_subword_prefix and byte_fallback apply to merges, not to longest match");
  if (!config_.end_of_word_symbol.empty() && (!prefix.empty() || config_.byte_fallback))
    throw Error(ErrorKind::kModel, "end_of_word_symbol does not combine with continuing_subword_prefix or byte_fallback");
  if (config_.byte_level && config_.byte_fallback) {
    // A byte-level vocabulary that has every byte never falls back; one that lacks some would
    // fall back on the UTF-8 of the byte's printable character (Hugging Face), which ciyuan
    // does not reproduce.
    for (int b = 0; b < 256; ++b)
      if (byte_ids_[b] == BytesMap::kMissing)
        throw Error(ErrorKind::kModel, "byte_fallback on a byte-level vocabulary that lacks the byte " +
                                           std::to_string(b) + " is not supported; add the byte's token");
  }
  // ignore_merges looks a piece up as its own bytes (Hugging Face: the pre-token itself, an
  // end_of_word_suffix not added); only ciyuan's separate end-of-word symbol joins the lookup.
  simple_whole_ = config_.byte_level || config_.end_of_word_symbol.empty();
  short_whole_ = config_.ignore_merges && simple_whole_;
  // tiktoken ranks with the short-token table: pairs are ranked by looking up their joined bytes
  // (JoinedRank), and pairs_ - every cut of every token, 8-32 MB - is never built. Byte-level
  // symbols only: their bytes are the text's (no word-end suffix added to a token's).
  rank_by_bytes_ = config_.rank_by_token && short_whole_ && config_.byte_level && config_.end_of_word_suffix.empty();
  std::vector<uint64_t> pair_keys;
  std::vector<uint32_t> pair_ids;  // with rank_by_bytes_: the token each of pair_keys makes
  bool one_maker_per_token = true;
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
        if (rank_by_bytes_) {
          pair_ids.push_back(static_cast<uint32_t>(id));
        } else {
          pairs_.insert(PairMap::key(left, right), PairMap::Value{static_cast<uint32_t>(id), static_cast<uint32_t>(id)});
        }
        pair_keys.push_back(PairMap::key(left, right));
      }
    }
  } else {
    // The token each merge makes, and whether some token is made by two different pairs.
    std::vector<uint64_t> made_by(config_.byte_level ? tokens_.size() : 0, ~uint64_t{0});
    for (size_t rank = 0; rank < merges_.size(); ++rank) {
      auto [left, right] = merges_[rank];
      if (!has_id(left) || !has_id(right))
        throw Error(ErrorKind::kModel, "merge " + std::to_string(rank + 1) + " refers to an id outside the vocabulary");
      std::string merged = tokens_[left];
      const std::string& r = tokens_[right];
      // With a continuing prefix the right token carries it ("##b") and the merged one does
      // not repeat it: a + b without its first prefix-length bytes, as Hugging Face builds it.
      if (r.size() < prefix.size())
        throw Error(ErrorKind::kModel, "merge " + std::to_string(rank + 1) + ": '" + printable(r) +
                                           "' is shorter than the continuing_subword_prefix");
      merged.append(r, prefix.size(), std::string::npos);
      uint32_t id = vocab_.find(merged);
      if (id == BytesMap::kMissing)
        throw Error(ErrorKind::kModel, "merge " + std::to_string(rank + 1) + " ('" + printable(tokens_[left]) +
                                           "' '" + printable(r) + "') makes '" + printable(merged) +
                                           "', which is not in the vocabulary");
      // A pair listed twice keeps its first (lowest) rank, as every BPE implementation does.
      pairs_.insert(PairMap::key(left, right), PairMap::Value{static_cast<uint32_t>(rank), id});
      pair_keys.push_back(PairMap::key(left, right));
      if (!made_by.empty()) {
        if (made_by[id] != ~uint64_t{0} && made_by[id] != PairMap::key(left, right)) one_maker_per_token = false;
        made_by[id] = PairMap::key(left, right);
      }
    }
  }
  // Windows (encode_piece_windowed) rest on a property of BPE whose merges rank a token the same
  // whichever pair makes it: tiktoken's rule, or a merge list that makes each token once. Then
  // a sequence of tokens is the encoding of its text exactly when each two neighbours are the
  // encoding of their own bytes (see there). Byte-level only, with every byte a token: symbols
  // start as bytes and nothing is unknown.
  bool every_byte = true;
  for (int b = 0; b < 256; ++b) every_byte = every_byte && byte_ids_[b] != BytesMap::kMissing;
  bit_merge_ = rank_by_bytes_ && every_byte;
  if (config_.byte_level && every_byte && prefix.empty() && config_.end_of_word_suffix.empty() &&
      !config_.longest_match && (config_.rank_by_token || one_maker_per_token)) {
    window_bytes_ = window_from_env(size_t{1} << 16);
  }
  if (short_whole_) {
    size_t count = 0;
    for (size_t id = 0; id < tokens_.size(); ++id) count += present_[id] && tokens_[id].size() - 1 < kShortPiece;
    short_tokens_ = ShortKeyMap(count);
    for (size_t id = 0; id < tokens_.size(); ++id) {
      const std::string& t = tokens_[id];
      // A string listed under two ids is found as the one vocab_ keeps.
      if (present_[id] && t.size() - 1 < kShortPiece && vocab_.find(t) == id)
        short_tokens_.insert(load_upto8(t.data(), t.size()), t.size(), static_cast<uint32_t>(id));
    }
  }
  if (rank_by_bytes_) {
    two_byte_ids_.assign(1 << 16, kNone);
    for (size_t id = 0; id < tokens_.size(); ++id) {
      const std::string& t = tokens_[id];
      if (present_[id] && t.size() == 2 && vocab_.find(t) == id)
        two_byte_ids_[(static_cast<unsigned char>(t[0]) << 8) | static_cast<unsigned char>(t[1])] = static_cast<uint32_t>(id);
    }
  }
  build_pair_filter(pair_keys);
  if (config_.byte_level) build_char_first(pair_keys, pair_ids);
}

void BpeModel::unknown_symbol(std::string_view text, size_t at, size_t len) const {
  throw Error(ErrorKind::kInvalidInput,
              "'" + printable(text.substr(at, len)) + "' at byte " + std::to_string(at) +
                  " has no token in the vocabulary and the model has no unknown token; "
                  "give the model an unk_token or normalize the text first");
}

void BpeModel::push_unknown(std::string_view text, size_t at, size_t len, std::vector<Token>& out) const {
  if (config_.unk_id < 0) {
    if (config_.drop_unknown) return;
    unknown_symbol(text, at, len);
  }
  const uint32_t unk = static_cast<uint32_t>(config_.unk_id);
  if (config_.fuse_unk && !out.empty() && out.back().id == unk && out.back().end == at) {
    out.back().end = static_cast<uint32_t>(at + len);
  } else {
    out.push_back(Token{unk, static_cast<uint32_t>(at), static_cast<uint32_t>(at + len)});
  }
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

// A piece and its tokens in the piece cache. One cache line: a hit (or a miss) costs one
// memory access.
struct alignas(64) BpeModel::PieceEntry {
  uint64_t hash;  // hash | 1 of the piece; 0 marks an empty entry
  uint8_t length;
  uint8_t count;
  uint8_t token_length[kMaxCachedTokens];
  char bytes[kMaxCachedBytes];
  uint32_t ids[kMaxCachedTokens];
};

// The tokens of a cached piece of more than kMaxCachedTokens tokens; its entry's ids[0] says
// which record. Records are handed out in turn, so a record may since have gone to another
// entry: it holds for the entry it names as its owner.
struct alignas(64) BpeModel::LongIds {
  const PieceEntry* owner;
  uint32_t ids[kMaxLongTokens];
  uint8_t token_length[kMaxLongTokens];
};

// Where a piece lives in the piece cache (slot nullptr: it is not cached, being too long or the
// cache off), and whether it is there now; if so, its tokens (in its entry or a LongIds).
struct BpeModel::PiecePlace {
  PieceEntry* slot = nullptr;
  uint64_t* other_hash = nullptr;  // the slot's entry in other_hashes, for non-ASCII pieces
  bool hit = false;
  size_t count = 0;
  const uint32_t* ids = nullptr;
  const uint8_t* token_length = nullptr;
};

// Two short pieces (1 to 8 bytes, keyed as in the short-token table) that are not tokens,
// with their ids: a set of the short-piece cache, one cache line. Way 0 holds the newer one.
// A piece of more than kMaxIds ids (gpt2's indentation, a run of odd marks) is kept with the
// count kInPieceCache instead: its ids are in the piece cache.
struct alignas(64) BpeModel::ShortPieceSet {
  static constexpr size_t kMaxIds = 5;
  static constexpr uint8_t kInPieceCache = 0xFF;
  uint64_t key[2];
  uint32_t ids[2][kMaxIds];
  uint8_t length[2];  // 0: the way is empty
  uint8_t count[2];

  // The ids of (key, n), with their count, or nullptr.
  const uint32_t* find(uint64_t k, size_t n, size_t* n_ids) const {
    for (int way = 0; way < 2; ++way) {
      if (key[way] == k && length[way] == n) {
        *n_ids = count[way];
        return ids[way];
      }
    }
    return nullptr;
  }
  // (key, n) -> ids[0, c) in way 0 (c > kMaxIds: kInPieceCache); the older way 0 moves to
  // way 1.
  void insert(uint64_t k, size_t n, const Token* from, size_t c) {
    key[1] = key[0];
    length[1] = length[0];
    count[1] = count[0];
    std::memcpy(ids[1], ids[0], sizeof ids[0]);
    key[0] = k;
    length[0] = static_cast<uint8_t>(n);
    if (c > kMaxIds) {
      count[0] = kInPieceCache;
      return;
    }
    count[0] = static_cast<uint8_t>(c);
    for (size_t i = 0; i < c; ++i) ids[0][i] = from[i].id;
  }
};

struct BpeModel::ThreadCache {
  static_assert(sizeof(PieceEntry) == 64, "a piece cache entry fills one cache line");
  static_assert(sizeof(ShortPieceSet) == 64, "a short-piece set fills one cache line");
  static_assert(sizeof(LongIds) == 128, "a long-piece record fills two cache lines");
  // 32K sets of two (2 MB, one huge page): the short pieces that are not tokens (5% of English
  // pieces, as " Tom's" or "),") were looked up in the 4 MB piece cache, a miss to L3 or
  // memory each, where they also evicted long pieces. (16K sets measured 2-5% slower.)
  static constexpr int kShortSetBits = 15;
  HugeVector<ShortPieceSet> short_pieces;
  ShortPieceSet& short_set(uint64_t key, size_t n) {
    return short_pieces[((key + n) * 0xD6E8FEB86659FD93ULL) >> (64 - kShortSetBits)];
  }
  // 64K pairs of 16 bytes (1 MB): the merges of 10 MB of English ask for tens of thousands of
  // different pairs; with 8K entries three lookups in four went on to the full table, which
  // for o200k_base's cuts would be 32 MB (a miss all the way to memory; tiktoken-ranked
  // models now look a pair up as its joined bytes instead, see JoinedRank).
  static constexpr int kPairBits = 16;
  struct PairEntry {
    uint64_t key;
    PairMap::Value value;
  };
  uint64_t owner = 0;
  HugeVector<PairEntry> pairs = HugeVector<PairEntry>(size_t{1} << kPairBits);
  // Pieces of ASCII text (words of languages written with spaces) repeat: they get a large
  // cache. Other pieces - a CJK piece is a whole clause - rarely do: they get a small one
  // (storing them in a large one would sweep megabytes through the CPU caches), with the
  // entries' hashes also in a 64 KB array of their own, so that a miss, the usual outcome,
  // reads that array and not an entry.
  HugeVector<PieceEntry> pieces;
  HugeVector<PieceEntry> other_pieces;
  std::vector<uint64_t> other_hashes;
  // 16K records of 128 bytes (2 MB): the tokens of cached pieces of more than kMaxCachedTokens
  // tokens, handed out in turn (next_long). gpt2 has no tokens of several spaces: each line of
  // Python code indented by eight began a piece of eight tokens, merged anew every time.
  static constexpr int kLongBits = 14;
  HugeVector<LongIds> long_ids;
  size_t next_long = 0;
  std::vector<Symbol> symbols;      // encode_piece_merging's work space
  std::vector<Symbol> symbol_room;  // char_first_symbols' (only grows: never zero-filled again)
  std::vector<uint32_t> id_room;    // encode_pieces_ids' output before it is appended (the same)

  // The slot an ASCII piece with hash_bytes `hash` would take (the others' table is small).
  void prefetch(uint64_t hash) const {
#if defined(__GNUC__)
    if (!pieces.empty()) __builtin_prefetch(&pieces[hash & (pieces.size() - 1)]);
#else
    (void)hash;
#endif
  }

  // Where the piece p[0, n) with hash_bytes `hash` lives in the piece cache, and whether it
  // is there now.
  PiecePlace place(const char* p, size_t n, uint64_t hash) {
    PiecePlace at;
    if (pieces.empty() || n > kMaxCachedBytes) return at;
    if (is_ascii(p, n)) {
      at.slot = &pieces[hash & (pieces.size() - 1)];
    } else {
      const size_t index = hash & (other_pieces.size() - 1);
      at.other_hash = &other_hashes[index];
      at.slot = &other_pieces[index];
      if (*at.other_hash != (hash | 1)) return at;  // the usual outcome, settled without the entry
    }
    at.hit = at.slot->hash == (hash | 1) && at.slot->length == n && same_bytes(at.slot->bytes, p, n);
    if (at.hit) {
      const PieceEntry& e = *at.slot;
      at.count = e.count;
      if (e.count <= kMaxCachedTokens) {
        at.ids = e.ids;
        at.token_length = e.token_length;
      } else {
        const LongIds& record = long_ids[e.ids[0]];
        at.hit = record.owner == &e;  // or the record went to another piece since
        at.ids = record.ids;
        at.token_length = record.token_length;
      }
    }
    return at;
  }

  // Remembers the piece p[0, n) with hash_bytes `hash` and its `count` tokens at `at` (no-op
  // without a slot, or for more than kMaxLongTokens tokens).
  void store(const PiecePlace& at, uint64_t hash, const char* p, size_t n, const Token* tokens, size_t count) {
    PieceEntry* slot = at.slot;
    if (!slot || count > kMaxLongTokens) return;
    slot->hash = hash | 1;
    if (at.other_hash) *at.other_hash = hash | 1;
    slot->length = static_cast<uint8_t>(n);
    slot->count = static_cast<uint8_t>(count);
    std::memcpy(slot->bytes, p, n);
    uint32_t* ids = slot->ids;
    uint8_t* lengths = slot->token_length;
    if (count > kMaxCachedTokens) {
      const size_t r = next_long++ & (long_ids.size() - 1);
      LongIds& record = long_ids[r];
      record.owner = slot;
      slot->ids[0] = static_cast<uint32_t>(r);
      ids = record.ids;
      lengths = record.token_length;
    }
    for (size_t k = 0; k < count; ++k) {
      ids[k] = tokens[k].id;
      lengths[k] = static_cast<uint8_t>(tokens[k].end - tokens[k].start);
    }
  }

  void reset(uint64_t new_owner, size_t piece_slots) {
    owner = new_owner;
    for (PairEntry& e : pairs) e.key = PairMap::kEmpty;
    pieces.assign(piece_slots, PieceEntry{});
    short_pieces.assign(piece_slots ? size_t{1} << kShortSetBits : 0, ShortPieceSet{});
    other_pieces.assign(std::min(piece_slots, kOtherPieceSlots), PieceEntry{});
    other_hashes.assign(other_pieces.size(), 0);
    long_ids.assign(piece_slots ? size_t{1} << kLongBits : 0, LongIds{});
    next_long = 0;
  }
};

// Each thread keeps caches for the last few models it used, so that alternating between two
// tokenizers does not wipe them on every call.
BpeModel::ThreadCache& BpeModel::thread_cache() const {
  constexpr size_t kModels = 4;
  thread_local std::unique_ptr<ThreadCache> caches[kModels];
  thread_local size_t victim = 0;
  for (auto& c : caches)
    if (c && c->owner == instance_) return *c;
  std::unique_ptr<ThreadCache>& c = caches[victim++ % kModels];
  if (!c) c.reset(new ThreadCache());
  c->reset(instance_, piece_slots_);
  return *c;
}

// Lookups go to the small per-thread table (in L2), the Bloom filter (most pairs that are not
// in the table cannot merge at all) and the full table. Which of the first two goes first only
// changes the cost: ASCII text mostly asks for pairs that exist (the per-thread table answers),
// CJK text mostly for pairs across characters that do not (the filter answers).
inline uint32_t BpeModel::pair_rank(ThreadCache& cache, const Symbol& a, const Symbol& b, uint32_t* merged,
                                    bool filter_first, const char* text, const char* limit) const {
  uint64_t key = PairMap::key(a.id, b.id);
  if (filter_first && !maybe_pair(key)) return kNone;
  ThreadCache::PairEntry& e = cache.pairs[(key * 0x9E3779B97F4A7C15ULL) >> (64 - ThreadCache::kPairBits)];
  if (e.key != key) {
    if (!filter_first && !maybe_pair(key)) return kNone;
    e.key = key;
    e.value = pair_value(key, text + a.start, b.end - a.start, limit);
  }
  *merged = e.value.id;
  return e.value.rank;
}

uint32_t BpeModel::whole_piece_id(std::string_view text, size_t start, size_t end) const {
  const std::string& marker = config_.end_of_word_symbol;
  if (config_.byte_level || marker.empty()) return vocab_.find(text.data() + start, end - start);
  std::string word(text.substr(start, end - start));
  word += marker;
  return vocab_.find(word);
}

void BpeModel::initial_symbols(std::string_view text, size_t start, size_t end,
                               std::vector<Symbol>& syms, bool* has_unk) const {
  syms.clear();
  *has_unk = false;
  auto push_unknown = [&](size_t at, size_t len) {
    *has_unk = true;
    this->push_unknown(text, at, len, syms);
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
  if (!config_.continuing_subword_prefix.empty() || config_.byte_fallback || config_.drop_unknown) {
    initial_symbols_hf(text, start, end, syms, has_unk);
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
  // The separate end-of-word symbol covers no input: an empty span at the word's end.
  if (end_of_word_id_ != kNone)
    syms.push_back(Symbol{end_of_word_id_, static_cast<uint32_t>(end), static_cast<uint32_t>(end)});
}

// Hugging Face's initial word (BPE::merge_word), for character-level models with its options.
// Each character is looked up with the continuing prefix (not the first) and the end-of-word
// suffix (the last); an unknown one becomes its "<0xXX>" byte tokens (byte_fallback, when all
// exist), else the unknown token (kept pending, so that fuse_unk can extend it: a character that
// falls back to bytes does not end the pending run, as in Hugging Face), else nothing
// (drop_unknown). Spans follow Hugging Face too: each symbol starts where the previous one ended
// (a byte token is one byte; a dropped character takes no room), clipped to the piece.
void BpeModel::initial_symbols_hf(std::string_view text, size_t start, size_t end,
                                  std::vector<Symbol>& syms, bool* has_unk) const {
  const std::string& prefix = config_.continuing_subword_prefix;
  const std::string& suffix = config_.end_of_word_suffix;
  size_t pos = start;      // where the next symbol starts
  size_t pending = 0;      // bytes of the pending unknown token (0: none)
  auto add = [&](uint32_t id, size_t len) {
    const size_t a = std::min(pos, end), b = std::min(pos + len, end);
    syms.push_back(Symbol{id, static_cast<uint32_t>(a), static_cast<uint32_t>(b)});
    pos += len;
  };
  auto flush = [&] {
    if (pending) add(static_cast<uint32_t>(config_.unk_id), pending);
    pending = 0;
  };
  std::string s;
  for (size_t i = start; i < end;) {
    size_t len = utf8_char_length(text, i);
    if (i + len > end) len = end - i;
    const bool last = i + len == end;
    uint32_t id;
    if (i == start && !(last && !suffix.empty())) {
      id = vocab_.find(text.data() + i, len);
      s.assign(text.data() + i, len);
    } else {
      s.assign(i == start ? std::string() : prefix);
      s.append(text.data() + i, len);
      if (last) s += suffix;
      id = vocab_.find(s);
    }
    i += len;
    if (id != BytesMap::kMissing) {
      flush();
      add(id, len);
      continue;
    }
    if (config_.byte_fallback) {
      bool all = true;
      for (unsigned char c : s) all = all && fallback_ids_[c] != BytesMap::kMissing;
      if (all) {
        for (unsigned char c : s) add(fallback_ids_[c], 1);
        continue;
      }
    }
    *has_unk = true;
    if (config_.unk_id < 0) {
      if (!config_.drop_unknown) unknown_symbol(text, i - len, len);
      continue;
    }
    if (pending && !config_.fuse_unk) flush();
    pending += len;
  }
  flush();
}

// Where merges get a pair's rank (kNone: the pair cannot merge) and merged id. PairRank asks
// pairs_ through the thread's pair cache. JoinedRank reads tiktoken's rule directly: the rank
// is the id of the pair's joined bytes, text[a.start, b.end). A join of at most 8 bytes is one
// short_tokens_ lookup, in the lines the whole-piece lookups keep in cache; a longer one is
// first asked of the long-token filter. (pairs_ is not even built then.)
struct BpeModel::PairRank {
  const BpeModel& model;
  ThreadCache& cache;
  bool filter_first;
  const char* base;   // the text the symbols' spans are of
  const char* limit;  // its end
  uint32_t operator()(const Symbol& a, const Symbol& b, uint32_t* merged) const {
    return model.pair_rank(cache, a, b, merged, filter_first, base, limit);
  }
};

struct BpeModel::JoinedRank {
  const BpeModel& model;
  const char* base;
  const char* limit;
  uint32_t operator()(const Symbol& a, const Symbol& b, uint32_t* merged) const {
    *merged = model.joined_id(base + a.start, b.end - a.start, limit);
    return *merged;
  }
};

// A pair's entry in the per-thread cache, on a miss there (out of line: pair_rank stays small
// enough to inline): from pairs_, or without it the id of the joined bytes p[0, n).
PairMap::Value BpeModel::pair_value(uint64_t key, const char* p, size_t n, const char* limit) const {
  if (rank_by_bytes_) {
    const uint32_t id = joined_id(p, n, limit);
    return PairMap::Value{id, id};
  }
  const PairMap::Value* v = pairs_.find(key);
  return v ? *v : PairMap::Value{kNone, kNone};
}

// The id of the token p[0, n) (kNone if none), for JoinedRank: short_tokens_ for up to 8 bytes,
// else the long-token filter before vocab_.
inline uint32_t BpeModel::joined_id(const char* p, size_t n, const char* limit) const {
  static_assert(kNone == BytesMap::kMissing && kNone == ShortKeyMap::kMissing, "one 'none' for every lookup");
  if (n == 2) return two_byte_ids_[(static_cast<unsigned char>(p[0]) << 8) | static_cast<unsigned char>(p[1])];
  if (n <= kShortPiece) return short_token_id(p, n, limit);
  const uint64_t hash = hash_bytes(p, n);
  return maybe_long_token(hash) ? vocab_.find_hashed(p, n, hash) : BytesMap::kMissing;
}

// An ASCII piece's pairs mostly exist and their joined bytes are common short tokens:
// JoinedRank. A piece with other characters (a CJK clause) asks mostly for pairs that cannot
// merge, over and over: the Bloom filter and the per-thread pair cache (which remembers a
// "cannot") answer those, and JoinedRank only fills the cache.
template <class F>
void BpeModel::with_rank(ThreadCache& cache, std::string_view text, bool non_ascii, const F& f) const {
  const char* base = text.data();
  const char* limit = base + text.size();
  if (rank_by_bytes_ && !non_ascii) {
    f(JoinedRank{*this, base, limit});
  } else {
    f(PairRank{*this, cache, non_ascii, base, limit});
  }
}

// O(n^2) but with tiny constants: find the best pair, merge it, rescore its two neighbours.
// Arrays stay compact (memmove) so the min-scan is a short vectorizable loop.
// rank(a, b, &merged) is the rank of merging a and b (kNone: they cannot), merged its id.
template <class Rank>
void BpeModel::merge_small(std::vector<Symbol>& syms, const Rank& rank) const {
  size_t n = syms.size();
  if (n < 2) return;
  uint32_t ranks[kSmallPiece];
  uint32_t merged_ids[kSmallPiece];
  Symbol* sym = syms.data();
  for (size_t i = 0; i + 1 < n; ++i) ranks[i] = rank(sym[i], sym[i + 1], &merged_ids[i]);
  while (n > 1) {
    uint32_t best = kNone;
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; ++i) {  // the leftmost pair with the best rank
      if (ranks[i] < best) {
        best = ranks[i];
        at = i;
      }
    }
    if (best == kNone) break;
    sym[at].id = merged_ids[at];
    sym[at].end = sym[at + 1].end;
    // Close the gap: a short tail (a word's) in one loop over the three arrays, where three
    // calls to memmove would cost more than the moves; a long one (a CJK clause's) by memmove.
    const size_t tail = n - at - 2;  // pairs right of the merged one
    if (tail <= 8) {
      for (size_t i = at + 1; i + 1 < n; ++i) {
        sym[i] = sym[i + 1];
        ranks[i] = ranks[i + 1];
        merged_ids[i] = merged_ids[i + 1];
      }
    } else {
      std::memmove(sym + at + 1, sym + at + 2, tail * sizeof(Symbol));
      std::memmove(ranks + at + 1, ranks + at + 2, tail * sizeof(uint32_t));
      std::memmove(merged_ids + at + 1, merged_ids + at + 2, tail * sizeof(uint32_t));
    }
    --n;
    if (at + 1 < n) ranks[at] = rank(sym[at], sym[at + 1], &merged_ids[at]);
    if (at > 0) ranks[at - 1] = rank(sym[at - 1], sym[at], &merged_ids[at - 1]);
  }
  syms.resize(n);
}

namespace {
// Whether p[0, n) (n <= 16; `limit`: how far p may be read) holds the lead byte of a character of
// three or four bytes (CJK, most symbols): those pieces start as whole characters instead
// (char_first_symbols), a third of the symbols. A byte >= 0xE0 has its top three bits set.
inline bool has_wide_char(const char* p, size_t n, const char* limit) {
  const uint64_t lo = load_short(p, n < 8 ? n : 8, limit);
  const uint64_t hi = n > 8 ? load_short(p + 8, n - 8, limit) : 0;
  const uint64_t top3 = (lo & (lo << 1) & (lo << 2)) | (hi & (hi << 1) & (hi << 2));
  return (top3 & 0x8080808080808080ULL) != 0;
}
}  // namespace

// Most pieces that are not a token and not in the piece cache are rare words of 5 to 12 bytes.
// merge_small spent ~1,250 instructions and ~17 mispredicted branches on each (callgrind, English):
// symbols moved after every merge, a min-scan whose branch follows the data. Here a symbol is a
// bit in `starts` (bit i: a symbol starts at byte i) and the pair starting at each symbol waits in
// best[i] as (rank << 8 | i), so one branch-free min over W words finds the best pair, leftmost
// on ties as tiktoken. A merge clears the right symbol's bit and looks up the two pairs it
// changed (their joined bytes, JoinedRank). Exact for any bytes: every byte is a token.
template <unsigned W>
void BpeModel::merge_bits(std::string_view text, size_t start, size_t end, std::vector<Token>& out) const {
  static_assert(W <= 16, "positions, bit sets and the shifted rank fit their types");
  constexpr uint64_t kNoPair = uint64_t{kNone} << 8;  // this or above: the pair cannot merge
  const char* p = text.data() + start;
  const char* limit = text.data() + text.size();
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  const unsigned n = static_cast<unsigned>(end - start);  // 1 <= n <= W
  uint32_t id[W];
  uint64_t best[W];
  for (unsigned i = 0; i < W; ++i) best[i] = ~uint64_t{0};
  for (unsigned i = 0; i < n; ++i) id[i] = byte_ids_[u[i]];
  for (unsigned i = 0; i + 1 < n; ++i) best[i] = (uint64_t{two_byte_ids_[(u[i] << 8) | u[i + 1]]} << 8) | i;
  // The joins the merges will look up are rare tokens, out of cache, each found only after the
  // merge before it: a chain of memory misses. Every join of 3 to 8 bytes that could come up
  // has its slot prefetched first, so that the misses overlap.
  {
    const ShortKeyMap::View table(short_tokens_);
    for (unsigned i = 0; i + 2 < n; ++i) {
      const uint64_t word = load_short(p + i, n - i < 8 ? n - i : 8, limit);
      for (unsigned len = 3; len <= 8 && i + len <= n; ++len) {
        const uint64_t key = word & (~uint64_t{0} >> (64 - 8 * len));
        table.prefetch(table.index(key, len));
      }
    }
  }
  const uint32_t past = uint32_t{1} << n;  // a sentinel start at the piece's end
  uint32_t starts = past - 1;
  for (;;) {
    uint64_t m = best[0];
    for (unsigned i = 1; i < W; ++i) m = best[i] < m ? best[i] : m;
    if (m >= kNoPair) break;
    const unsigned s = static_cast<unsigned>(m & 0xFF);
    id[s] = static_cast<uint32_t>(m >> 8);
    const uint32_t above = starts & ~((uint32_t{2} << s) - 1);  // the starts after s
    const uint32_t right = above & (0u - above);                // the symbol merged into s
    starts &= ~right;
    best[lowest_bit(right)] = ~uint64_t{0};
    const uint32_t rest = (above & ~right) | past;
    const unsigned next = lowest_bit(rest);  // where s now ends
    if (next < n) {
      const unsigned next_end = lowest_bit(rest & (rest - 1));
      best[s] = (uint64_t{joined_id(p + s, next_end - s, limit)} << 8) | s;
    } else {
      best[s] = ~uint64_t{0};
    }
    if (s > 0) {
      const unsigned prev = highest_bit(starts & ((uint32_t{1} << s) - 1));
      best[prev] = (uint64_t{joined_id(p + prev, next - prev, limit)} << 8) | prev;
    }
  }
  for (uint32_t b = starts; b; b &= b - 1) {
    const unsigned s = lowest_bit(b);
    const unsigned e = lowest_bit((b & (b - 1)) | past);
    out.push_back(Token{id[s], static_cast<uint32_t>(start + s), static_cast<uint32_t>(start + e)});
  }
}

// O(n log n): a min-heap of candidate merges keyed by (rank, position) over a linked list of
// symbols. Entries go stale when a neighbour merges; they are checked and skipped when popped.
// Because positions are the original index of a symbol's first part, ties still go leftmost.
template <class Rank>
void BpeModel::merge_large(std::vector<Symbol>& syms, const Rank& rank_of) const {
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
    uint32_t rank = rank_of(syms[left], syms[right], &merged);
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

// BPE-dropout (see bpe.h): merge_large's heap of candidates, with a draw for every entry popped.
// (A copy of merge_large's loop, not a template shared with it: sharing one cost plain GPT-2
// encoding 1.4% more instructions under cachegrind, and merge_large is the plain hot path.)
// With probability p the entry is set aside; otherwise the entries set aside go back on the heap,
// and the entry merges if it still applies (a popped entry may be outdated by an earlier merge of
// a neighbour: it still draws, and when kept it still puts the set-aside entries back - Hugging
// Face's queue does the same, and its distribution of segmentations is this one). The piece is
// done when the heap is empty. Expected pops per kept entry are 1 / (1 - p), so the loop is
// O(n log n) for any p < 1 (p = 1: every entry is set aside once).
template <class Rank>
void BpeModel::merge_dropout(std::vector<Symbol>& syms, uint64_t threshold, Rng& rng, const Rank& rank_of) const {
  const size_t n = syms.size();
  if (n < 2) return;
  std::vector<uint32_t> next(n), prev(n);
  std::vector<uint8_t> alive(n, 1);
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint32_t>(i + 1);
    prev[i] = static_cast<uint32_t>(i) - 1;  // kNone for i == 0
  }
  struct Candidate {
    uint32_t rank, left, right_id, left_id, merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  std::vector<Candidate> skipped;
  auto consider = [&](uint32_t left) {
    const uint32_t right = next[left];
    if (right >= n) return;
    uint32_t merged;
    const uint32_t rank = rank_of(syms[left], syms[right], &merged);
    if (rank != kNone) heap.push(Candidate{rank, left, syms[right].id, syms[left].id, merged});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if ((rng() >> 11) < threshold) {  // skipped
      skipped.push_back(c);
      continue;
    }
    for (const Candidate& s : skipped) heap.push(s);
    skipped.clear();
    const uint32_t right = next[c.left];
    if (!alive[c.left] || right >= n || syms[c.left].id != c.left_id || syms[right].id != c.right_id) continue;
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

void BpeModel::sample_pieces(std::string_view text, const Span* pieces, size_t n, const SampleOptions& options,
                             Rng& rng, std::vector<Token>& out) const {
  const float p = options.alpha;
  if (!(p >= 0.0f && p <= 1.0f))  // NaN too
    throw Error(ErrorKind::kInvalidInput,
                "the BPE-dropout probability (alpha) must be between 0 and 1, not " + std::to_string(p));
  if (config_.longest_match)
    throw Error(ErrorKind::kModel, "BPE-dropout skips merges, and this BPE model encodes by longest match "
                                   "(encode_mode='longest_match'), without merges; use encode_mode='merges'");
  if (p == 0.0f) return encode_pieces(text, pieces, n, out);
  // p * 2^53 (p = 1: every 53-bit draw is below it).
  const uint64_t threshold = static_cast<uint64_t>(static_cast<double>(p) * 9007199254740992.0);
  ThreadCache& cache = thread_cache();
  std::vector<Symbol> syms;
  for (size_t k = 0; k < n; ++k) {
    if (pieces[k].first >= pieces[k].second) continue;
    bool has_unk = false;
    initial_symbols(text, pieces[k].first, pieces[k].second, syms, &has_unk);
    with_rank(cache, text, false, [&](const auto& rank) { merge_dropout(syms, threshold, rng, rank); });
    for (const Symbol& s : syms) out.push_back(Token{s.id, s.start, s.end});
  }
}

// Character-first encoding of byte-level pieces.
//
// Byte-level BPE spends most of its merges on CJK text re-assembling each 3-byte character.
// Instead, a character may start as its own (precomputed) encoding - a third as many symbols -
// whenever that cannot change the result: when no merge across either of its boundaries can
// happen before its inner merges are done. The lowest-rank-first loop always has one of the
// character's inner pairs available (rank <= its highest inner rank M) until the character is
// complete, so a crossing merge comes first only if its rank is below M. A merge across
// boundary B makes a token holding the two bytes that straddle B; crossing_rank_ keeps, per
// such byte pair, the lowest rank of a merge that might come early: (a) one whose token holds
// a character beside the junction only in part (it can form while that character is
// incomplete), and (b) one joining whole characters that ranks below an inner merge of one of
// them (pre-completing that character would let this merge win a neighbour it would lose in
// plain BPE). A character starts pre-encoded iff at both its boundaries crossing_rank_ > M;
// otherwise it starts as bytes, exactly as plain BPE. Cost: one table lookup per boundary.
void BpeModel::build_char_first(const std::vector<uint64_t>& pair_keys, const std::vector<uint32_t>& pair_ids) {
  for (int b = 0; b < 256; ++b)
    if (byte_ids_[b] == BytesMap::kMissing) return;  // unknown bytes: keep the plain path
  char_bmp_.assign(0x10000, CharEncoding{0, 0, {0, 0, 0, 0}, {0, 0, 0, 0}});
  // The pair table itself, not the thread's caches: building a model should not make 5.6 MB of
  // caches on the loading thread (a load's peak memory is the model's and the caller's data).
  auto rank_of = [this](const Symbol& a, const Symbol& b, uint32_t* merged) {
    if (rank_by_bytes_) {  // the bytes of a character's parts: at most 4
      *merged = vocab_.find(tokens_[a.id] + tokens_[b.id]);
      return *merged;
    }
    const PairMap::Value* v = pairs_.find(PairMap::key(a.id, b.id));
    *merged = v ? v->id : kNone;
    return v ? v->rank : kNone;
  };
  std::vector<Symbol> syms;
  // The encoding of one character on its own, and the highest rank merged on the way.
  auto add_char = [&](uint32_t cp) {
    char bytes[4];
    size_t len = utf8::encode(cp, bytes);
    syms.clear();
    for (size_t k = 0; k < len; ++k)
      syms.push_back(Symbol{byte_ids_[static_cast<unsigned char>(bytes[k])], static_cast<uint32_t>(k),
                            static_cast<uint32_t>(k + 1)});
    CharEncoding enc{0, 0, {0, 0, 0, 0}, {0, 0, 0, 0}};
    while (syms.size() > 1) {
      uint32_t best = kNone, merged = 0, m;
      size_t at = 0;
      for (size_t k = 0; k + 1 < syms.size(); ++k) {
        uint32_t r = rank_of(syms[k], syms[k + 1], &m);
        if (r < best) best = r, at = k, merged = m;
      }
      if (best == kNone) break;
      enc.max_rank_plus_one = std::max(enc.max_rank_plus_one, best + 1);
      syms[at].id = merged;
      syms[at].end = syms[at + 1].end;
      syms.erase(syms.begin() + at + 1);
    }
    enc.count = static_cast<uint32_t>(syms.size());
    for (size_t k = 0; k < syms.size(); ++k) {
      enc.ids[k] = syms[k].id;
      enc.lengths[k] = static_cast<uint8_t>(syms[k].end - syms[k].start);
    }
    if (cp < 0x10000) {
      char_bmp_[cp] = enc;
    } else {
      char_index_astral_.insert(cp, PairMap::Value{static_cast<uint32_t>(char_astral_.size()), 0});
      char_astral_.push_back(enc);
    }
  };
  // Every multi-byte character of the Basic Multilingual Plane, and any other that a token holds.
  for (uint32_t cp = 0x80; cp < 0x10000; ++cp)
    if (cp < 0xD800 || cp > 0xDFFF) add_char(cp);
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (!present_[id]) continue;
    const std::string& t = tokens_[id];
    for (size_t i = 0; i < t.size();) {
      uint32_t cp;
      size_t len = utf8::decode(t.data() + i, t.data() + t.size(), &cp);
      if (len == 4 && !char_encoding(cp)) add_char(cp);
      i += len;
    }
  }
  auto inner_rank = [&](const std::string& t, size_t from, size_t len) -> uint32_t {
    if (len == 1) return 0;  // ASCII: nothing merges inside
    uint32_t cp;
    utf8::decode(t.data() + from, t.data() + t.size(), &cp);
    const CharEncoding* e = char_encoding(cp);
    return e ? e->max_rank_plus_one : kNone;
  };
  crossing_rank_.assign(1 << 16, kNone);
  for (size_t i = 0; i < pair_keys.size(); ++i) {
    const uint64_t key = pair_keys[i];
    const PairMap::Value joined{rank_by_bytes_ ? pair_ids[i] : kNone, rank_by_bytes_ ? pair_ids[i] : kNone};
    const PairMap::Value* v = rank_by_bytes_ ? &joined : pairs_.find(key);
    if (!v) continue;
    const std::string& t = tokens_[v->id];
    size_t j = tokens_[static_cast<uint32_t>(key >> 32)].size();  // the junction
    unsigned char right = static_cast<unsigned char>(t[j]);
    if (utf8::is_continuation(right)) continue;  // inside a character: an inner merge
    // The characters on either side of the junction, and whether the token holds them whole.
    size_t k = j - 1;
    while (k > 0 && utf8::is_continuation(static_cast<unsigned char>(t[k]))) --k;
    uint32_t cp;
    size_t left_len = utf8::decode(t.data() + k, t.data() + t.size(), &cp);
    bool left_whole = cp != utf8::kReplacement && k + left_len == j;
    size_t right_len = utf8::decode(t.data() + j, t.data() + t.size(), &cp);
    bool right_whole = cp != utf8::kReplacement;
    uint32_t& slot = crossing_rank_[(static_cast<unsigned char>(t[j - 1]) << 8) | right];
    bool early = !left_whole || !right_whole;
    if (!early) {
      uint32_t inner = std::max(inner_rank(t, k, left_len), inner_rank(t, j, right_len));
      early = v->rank < inner;  // (b): it outranks an inner merge of its characters
    }
    if (early) slot = std::min(slot, v->rank);
  }
  char_first_ = true;
}

inline const BpeModel::CharEncoding* BpeModel::char_encoding(uint32_t cp) const {
  if (cp < 0x10000) {
    const CharEncoding& e = char_bmp_[cp];
    return e.count ? &e : nullptr;
  }
  const PairMap::Value* v = char_index_astral_.find(cp);
  return v ? &char_astral_[v->rank] : nullptr;
}

// The initial symbols of a byte-level piece: each multi-byte character whose two boundaries
// cannot be crossed before it is complete starts as its own encoding, the rest as bytes.
bool BpeModel::char_first_symbols(std::string_view text, size_t start, size_t end, std::vector<Symbol>& syms,
                                  std::vector<Symbol>& room) const {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(text.data());
  // At most a symbol per byte, written by index into `room`, which only grows (push_back was an
  // out-of-line call here, 6.5% of o200k_base's instructions on Chinese; resizing syms itself
  // would zero-fill it for every piece, 5.9%), then copied to syms in one go.
  if (room.size() < end - start) room.resize(end - start);
  Symbol* out = room.data();
  if (is_ascii(text.data() + start, end - start)) {  // a word of English or code: a symbol per byte
    for (size_t i = start; i < end; ++i)
      out[i - start] = Symbol{byte_ids_[u[i]], static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)};
    syms.assign(out, out + (end - start));
    return false;
  }
  bool non_ascii = false;
  size_t count = 0;
  // The crossing rank of the boundary before the current character (none at the start).
  uint32_t left_crossing = kNone;
  for (size_t i = start; i < end;) {
    unsigned char lead = u[i];
    const CharEncoding* e = nullptr;
    size_t len = 1;
    if (lead >= 0x80) {
      non_ascii = true;
      // Text from a Python str is valid UTF-8; still never read past the piece.
      len = utf8::lead_length(lead);
      if (len == 1 || i + len > end) {
        len = 1;
      } else {
        e = char_encoding(utf8::decode_valid(u + i, &len));
      }
    }
    size_t next = i + len;
    uint32_t right_crossing = next < end ? crossing_rank_[(u[next - 1] << 8) | u[next]] : kNone;
    if (e && left_crossing >= e->max_rank_plus_one && right_crossing >= e->max_rank_plus_one) {
      uint32_t at = static_cast<uint32_t>(i);
      for (uint32_t k = 0; k < e->count; ++k) {
        out[count++] = Symbol{e->ids[k], at, at + e->lengths[k]};
        at += e->lengths[k];
      }
    } else {
      for (size_t k = i; k < next; ++k)
        out[count++] = Symbol{byte_ids_[u[k]], static_cast<uint32_t>(k), static_cast<uint32_t>(k + 1)};
    }
    left_crossing = right_crossing;
    i = next;
  }
  syms.assign(out, out + count);
  return non_ascii;
}

void BpeModel::prefetch_pieces(std::string_view text, const std::pair<uint32_t, uint32_t>* pieces, size_t n) const {
#if defined(__GNUC__)
  if (!short_whole_) return;  // the lookups below are those of tiktoken-style encoding
  const ThreadCache& cache = thread_cache();
  const char* limit = text.data() + text.size();
  for (size_t k = 0; k < n; ++k) {
    const char* p = text.data() + pieces[k].first;
    const size_t len = pieces[k].second - pieces[k].first;
    // Only pieces of ASCII text: CJK text's pieces are few and long, its short ones (punctuation,
    // common characters) have their vocabulary slots in cache, and the non-ASCII pieces' cache
    // starts with a 64 KB array that is in cache too.
    if (len - 1 < kShortPiece) {
      const uint64_t key = load_short(p, len, limit);
      if ((key & 0x8080808080808080ULL) == 0) short_tokens_.prefetch(short_tokens_.index(key, len));
    } else if (len <= kMaxCachedBytes && !cache.pieces.empty() && is_ascii(p, len)) {
      __builtin_prefetch(&cache.pieces[hash_bytes(p, len) & (cache.pieces.size() - 1)]);
    }
  }
#else
  (void)text, (void)pieces, (void)n;
#endif
}

void BpeModel::encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const {
  if (config_.longest_match) {
    for (size_t k = 0; k < n; ++k) encode_piece_longest(text, pieces[k].first, pieces[k].second, out);
    return;
  }
  if (n > 1) prefetch_pieces(text, pieces, n);
  ThreadCache* cache = nullptr;  // asked for once, by the first piece that needs it
  const char* limit = text.data() + text.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t start = pieces[k].first, end = pieces[k].second, len = end - start;
    if (short_whole_ && len - 1 < kShortPiece) {
      const uint32_t id = short_token_id(text.data() + start, len, limit);
      if (id != ShortKeyMap::kMissing) {
        out.push_back(Token{id, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
        continue;
      }
    }
    if (!cache) cache = &thread_cache();
    encode_piece_merging(*cache, text, start, end, out);
  }
}

namespace {
// A batch of pieces' lookup keys (see encode_pieces_ids).
struct BatchKeys {
  static constexpr size_t kSize = 64;
  // lens[k] of a piece that is not short: no slot has this length, so it is never at home.
  static constexpr uint8_t kNotShort = 0xFF;
  uint64_t keys[kSize];   // a short piece's bytes, a long one's hash_bytes
  uint32_t where[kSize];  // a short piece's slot in the short-token table
  uint8_t lens[kSize];    // a short piece's length, kNotShort for the others
  uint8_t longs[kSize];   // which pieces are not short (the first long_count)
  size_t long_count;
};

// The low `len` bytes of a little-endian word, for 0 <= len <= 8: one load instead of a shift
// by a variable count.
constexpr uint64_t kLowBytes[9] = {0,
                                   0xFFULL,
                                   0xFFFFULL,
                                   0xFFFFFFULL,
                                   0xFFFFFFFFULL,
                                   0xFFFFFFFFFFULL,
                                   0xFFFFFFFFFFFFULL,
                                   0xFFFFFFFFFFFFFFULL,
                                   ~0ULL};

// The first pass over a batch of m pieces: each short piece's key and slot (prefetched), and the
// long pieces noted in `longs` (a long piece gets key 0 and is never at home: its length is
// kNotShort). kWholeWords: every piece can be read as 8 bytes (all but the text's last ones),
// so a key is one load and a mask, without a branch per piece. Its own function, called once
// per batch, so that its loop keeps everything in registers (inside encode_pieces_ids the
// compiler spilled).
template <bool kWholeWords>
__attribute__((noinline)) void short_keys(const char* base, const Span* batch, size_t m, ShortKeyMap::View table,
                                          BatchKeys& b) {
  size_t long_count = 0;
  for (size_t k = 0; k < m; ++k) {
    const size_t start = batch[k].first, len = batch[k].second - start;
    const bool is_short = len - 1 < 8;
    uint64_t key;
    if constexpr (kWholeWords) {
      uint64_t word;
      std::memcpy(&word, base + start, 8);
      key = word & kLowBytes[is_short ? len : 0];
    } else {
      key = is_short ? load_upto8(base + start, len) : 0;
    }
    const size_t slot = table.index(key, len);
    table.prefetch(slot);
    b.keys[k] = key;
    b.where[k] = static_cast<uint32_t>(slot);
    b.lens[k] = is_short ? static_cast<uint8_t>(len) : BatchKeys::kNotShort;
    b.longs[long_count] = static_cast<uint8_t>(k);
    long_count += !is_short;
  }
  b.long_count = long_count;
}

// The ids of pieces k, k + 1, ... of the batch while they are at home, written to out; returns
// the first piece that is not (or m).
__attribute__((noinline)) size_t home_run(ShortKeyMap::View table, const BatchKeys& b, size_t k, size_t m,
                                          uint32_t* out) {
  uint32_t* o = out;
  for (; k < m; ++k) {
    uint32_t id;
    if (!table.at_home(b.where[k], b.keys[k], b.lens[k], &id)) break;
    *o++ = id;
  }
  return k;
}
}  // namespace

// Two passes over each batch of pieces: the first reads every piece's key (a short piece's
// bytes, a longer one's hash) and prefetches the slot it will look up, the second looks them
// up. The tables are megabytes, out of cache whenever other work ran in between, so a lookup
// is a miss to L3 or memory; issued together, the misses overlap instead of waiting in turn.
// Most pieces of most text are short tokens found in the first slot probed (at_home): that
// case comes first in the second pass.
void BpeModel::encode_pieces_ids(std::string_view text, const Span* pieces, size_t n, std::vector<uint32_t>& ids,
                                 std::vector<Token>& scratch) const {
  if (!short_whole_ || config_.longest_match) return TokenModel::encode_pieces_ids(text, pieces, n, ids, scratch);
  static_assert(kShortPiece == 8 && kLookupBatch == BatchKeys::kSize, "a short piece is read as one 8-byte word");
  constexpr uint8_t kNotShort = BatchKeys::kNotShort;
  ThreadCache* cache = &thread_cache();
  // The most ids the thread's id room is grown to hold.
  constexpr size_t kIdRoomLimit = size_t{1} << 16;
  const char* base = text.data();
  const ShortKeyMap::View table(short_tokens_);
  // A piece starting before this can be read as 8 bytes at once (none in a text shorter than 8
  // bytes: its pieces are read byte by byte).
  const size_t safe_below = text.size() >= 8 ? text.size() - 7 : 0;
  BatchKeys b;
  // The ids are written into the thread's id room, which only grows, and appended to `ids` at
  // the end in one copy: making room in `ids` itself zero-filled it first (2% of the
  // instructions on English). The room holds an id per piece (more pieces than kIdRoomLimit are
  // done in parts), and grows for a piece of several tokens.
  if (n > kIdRoomLimit) {
    for (size_t at = 0; at < n; at += kIdRoomLimit)
      encode_pieces_ids(text, pieces + at, std::min(kIdRoomLimit, n - at), ids, scratch);
    return;
  }
  std::vector<uint32_t>& room = cache->id_room;
  if (room.size() < n) room.resize(n);
  uint32_t* out = room.data();
  size_t w = 0;
  for (size_t done = 0; done < n; done += kLookupBatch) {
    const Span* batch = pieces + done;
    const size_t m = std::min(kLookupBatch, n - done);
    if (batch[m - 1].first < safe_below) {
      short_keys<true>(base, batch, m, table, b);
    } else {  // the text's last pieces: read byte by byte
      short_keys<false>(base, batch, m, table, b);
    }
    // The pieces that are not short: their hash, and their slot in the piece cache prefetched.
    for (size_t j = 0; j < b.long_count; ++j) {
      const size_t k = b.longs[j];
      const size_t start = batch[k].first, len = batch[k].second - start;
      b.keys[k] = hash_bytes(base + start, len);
      if (len <= kMaxCachedBytes) cache->prefetch(b.keys[k]);
    }
    for (size_t k = 0; k < m; ++k) {
      // Most pieces are short tokens found in the first slot probed: a run of them at a time
      // (a long piece, as most CJK ones, is never at home).
      if (b.lens[k] != kNotShort) {
        const size_t stop = home_run(table, b, k, m, out + w);
        w += stop - k;
        k = stop;
        if (k == m) break;
      }
      const size_t start = batch[k].first, end = batch[k].second, len = end - start;
      ShortPieceSet* set = nullptr;  // the set of a short piece that is not in it (yet)
      if (b.lens[k] != kNotShort) {
        const uint32_t id = short_tokens_.find(b.keys[k], len, b.where[k]);
        if (id != ShortKeyMap::kMissing) {
          out[w++] = id;
          continue;
        }
        if (!cache->short_pieces.empty()) {
          ShortPieceSet* in = &cache->short_set(b.keys[k], len);
          size_t count;
          const uint32_t* from = in->find(b.keys[k], len, &count);
          if (!from || count != ShortPieceSet::kInPieceCache) {
            // With the room too small the general way below makes room.
            if (from && w + count + (n - done - k - 1) <= room.size()) {
              for (size_t t = 0; t < count; ++t) out[w + t] = from[t];
              w += count;
              continue;
            }
            set = in;
          }
        }
      }
      // A piece seen before: its ids from the piece cache, without making Tokens. (A short piece
      // not in its set is merged at once: the piece cache would seldom have it, and asking
      // costs a miss to memory.)
      const uint64_t hash = b.lens[k] == kNotShort ? b.keys[k] : set ? 0 : hash_bytes(base + start, len);
      const PiecePlace place = set ? PiecePlace{} : cache->place(base + start, len, hash);
      if (!place.hit) {
        scratch.clear();
        encode_piece_uncached(*cache, text, start, end, hash, place, scratch);
      }
      const size_t count = place.hit ? place.count : scratch.size();
      // A piece of more than kMaxIds ids is marked in its set: the next time it is looked up in
      // the piece cache, which encode_piece_uncached fills.
      if (set) set->insert(b.keys[k], len, scratch.data(), count);
      const size_t need = w + count + (n - done - k - 1);  // with an id for each piece left
      if (need > room.size()) {
        if (need > kIdRoomLimit) {
          // A piece of very many tokens (a long run merged in windows): the room is emptied
          // into `ids` and the piece's ids go there directly, so that the room, which the
          // thread keeps, stays small. The rest of the pieces fit: the room holds n ids.
          ids.insert(ids.end(), out, out + w);
          w = 0;
          if (place.hit) {
            ids.insert(ids.end(), place.ids, place.ids + count);
          } else {
            for (const Token& t : scratch) ids.push_back(t.id);
          }
          continue;
        }
        room.resize(std::max(need, 2 * room.size()));
        out = room.data();
      }
      if (place.hit) {
        for (size_t t = 0; t < count; ++t) out[w++] = place.ids[t];
      } else {
        for (const Token& t : scratch) out[w++] = t.id;
      }
    }
  }
  ids.insert(ids.end(), out, out + w);
  scratch.clear();
}

void BpeModel::encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                           std::vector<Token>& out) const {
  encode_bert_words(bert, text, start, end, out, [this](const char* w, size_t n, uint32_t offset, std::vector<Token>& o) {
    const size_t first = o.size();
    const std::string_view word(w, n);
    if (config_.longest_match) {
      encode_piece_longest(word, 0, n, o);
    } else {
      encode_piece(word, 0, n, o);
    }
    for (size_t k = first; k < o.size(); ++k) {
      o[k].start += offset;
      o[k].end += offset;
    }
  });
}

void BpeModel::encode_piece_merging(std::string_view text, size_t start, size_t end,
                                    std::vector<Token>& out) const {
  encode_piece_merging(thread_cache(), text, start, end, out);
}

void BpeModel::encode_piece_merging(ThreadCache& cache, std::string_view text, size_t start, size_t end,
                                    std::vector<Token>& out) const {
  if (start >= end) return;
  const size_t n = end - start;
  const char* p = text.data() + start;
  // Which lookup goes first only changes the cost: short pieces are mostly whole tokens (whose
  // vocabulary slots stay warm; encode_piece has asked already where it can), long ones rarely
  // are (a memory miss in a megabyte table), so long ones ask the per-thread cache first.
  if (config_.ignore_merges && n <= kShortPiece && !short_whole_) {  // a marked word end: not the bytes alone
    const uint32_t id = whole_piece_id(text, start, end);
    if (id != BytesMap::kMissing) {
      out.push_back(Token{id, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
      return;
    }
  }
  const uint64_t hash = hash_bytes(p, n);
  const PiecePlace place = cache.place(p, n, hash);
  if (place.hit) {
    uint32_t at = static_cast<uint32_t>(start);
    for (size_t k = 0; k < place.count; ++k) {
      out.push_back(Token{place.ids[k], at, at + place.token_length[k]});
      at += place.token_length[k];
    }
    return;
  }
  encode_piece_uncached(cache, text, start, end, hash, place, out);
}

void BpeModel::encode_piece_uncached(ThreadCache& cache, std::string_view text, size_t start, size_t end,
                                     uint64_t hash, const PiecePlace& place, std::vector<Token>& out) const {
  const size_t n = end - start;
  const char* p = text.data() + start;
  const bool whole_first = n <= kShortPiece;
  auto emit_whole = [&](uint32_t id) {
    out.push_back(Token{id, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
  };
  // A piece's tokens go into its cache slot (their lengths: their spans are made anew).
  auto remember = [&](const Symbol* tokens, size_t count) { cache.store(place, hash, p, n, tokens, count); };
  if (config_.ignore_merges && !whole_first && (!simple_whole_ || maybe_long_token(hash))) {
    uint32_t id = simple_whole_ ? vocab_.find_hashed(p, n, hash) : whole_piece_id(text, start, end);
    if (id != BytesMap::kMissing) {
      // Cached too: the next time it is one cache line, not a vocabulary slot and its key's bytes.
      emit_whole(id);
      return remember(&out.back(), 1);
    }
  }

  if (window_bytes_ && n > 2 * window_bytes_) return encode_piece_windowed(cache, text, start, end, out);
  const size_t first = out.size();
  if (!merge_span(cache, text, start, end, out)) remember(out.data() + first, out.size() - first);
}

// Flattened (everything it calls inlined, push_back included): as a plain function it cost
// English count_tokens 3.7% more instructions (186.7M against 180.0M, callgrind). Not under
// AddressSanitizer: instrumenting the flattened function took GCC over 20 minutes.
#if defined(__SANITIZE_ADDRESS__)
#define CIYUAN_FLATTEN
#else
#define CIYUAN_FLATTEN __attribute__((flatten))
#endif
CIYUAN_FLATTEN bool BpeModel::merge_span(ThreadCache& cache, std::string_view text, size_t start, size_t end,
                                         std::vector<Token>& out) const {
  if (bit_merge_ && end - start <= 16 && !has_wide_char(text.data() + start, end - start, text.data() + text.size())) {
    if (end - start <= 8) {
      merge_bits<8>(text, start, end, out);
    } else {
      merge_bits<16>(text, start, end, out);
    }
    return false;
  }
  std::vector<Symbol>& syms = cache.symbols;
  bool has_unk = false;
  bool filter_first = true;
  if (char_first_) {
    filter_first = char_first_symbols(text, start, end, syms, cache.symbol_room);
  } else {
    initial_symbols(text, start, end, syms, &has_unk);
  }
  with_rank(cache, text, filter_first, [&](const auto& rank) {
    if (syms.size() <= kSmallPiece) {
      merge_small(syms, rank);
    } else {
      merge_large(syms, rank);
    }
  });
  // An element loop, not out.insert(range): for the few symbols of a piece, vector's range insert
  // costs 6% more instructions per MB of English (measured with cachegrind).
  for (const Symbol& s : syms) out.push_back(Token{s.id, s.start, s.end});
  return has_unk;
}

// A piece of megabytes (a text without spaces, one letter repeated) would need some 40 bytes
// of symbols, links and heap entries per byte in one merge loop. Instead it is merged in windows
// of window_bytes_, each on its own, joined where that is exact (windows.h says why it is).
// Cold: seldom run, and kept out of the inliner's budget for the hot path.
__attribute__((cold)) void BpeModel::encode_piece_windowed(ThreadCache& cache, std::string_view text, size_t start,
                                                           size_t end, std::vector<Token>& out) const {
  const size_t first = out.size();  // the piece's tokens start here
  const auto* u = reinterpret_cast<const unsigned char*>(text.data());
  std::vector<Token> window, middle, pair;
  auto merge = [&](size_t s, size_t e, std::vector<Token>& into) {
    into.clear();
    merge_span(cache, text, s, e, into);
  };
  auto fits = [&](const Token& a, const Token& b) {
    merge(a.start, b.end, pair);
    return pair.size() == 2 && pair[0].id == a.id && pair[0].end == a.end && pair[1].id == b.id;
  };
  for (size_t pos = start; pos < end;) {
    size_t stop = std::min(end, pos + window_bytes_);
    // A seam between a character's bytes would only cost char_first_symbols its shortcut.
    for (int k = 0; k < 3 && stop < end && utf8::is_continuation(u[stop]); ++k) ++stop;
    merge(take_back(out, first, static_cast<uint32_t>(pos)), stop, window);
    join_window(out, first, window, middle, merge, fits);
    pos = stop;
  }
}

void BpeModel::encode_piece_longest(std::string_view text, size_t start, size_t end,
                                    std::vector<Token>& out) const {
  const std::string& suffix = config_.byte_level ? std::string() : config_.end_of_word_suffix;
  const std::string& symbol = config_.byte_level ? std::string() : config_.end_of_word_symbol;
  const std::string& marker = suffix.empty() ? symbol : suffix;
  std::string candidate;
  bool marker_taken = false;  // a separate end-of-word symbol joined into the last token
  size_t i = start;
  while (i < end) {
    size_t limit = std::min(end, i + max_token_bytes_);
    uint32_t found = kNone;
    size_t found_end = i;
    // Try the longest candidate first; on character models only whole characters.
    for (size_t j = limit; j > i; --j) {
      if (!config_.byte_level && j < end && utf8::is_continuation(static_cast<unsigned char>(text[j]))) continue;
      uint32_t id = BytesMap::kMissing;
      if (j == end && !marker.empty()) {
        candidate.assign(text.data() + i, j - i);
        candidate += marker;
        id = vocab_.find(candidate);  // the word's end with its marker is longest of all
        if (id != BytesMap::kMissing) marker_taken = !symbol.empty();
      }
      if (id == BytesMap::kMissing && (j < end || suffix.empty())) id = vocab_.find(text.data() + i, j - i);
      if (id != BytesMap::kMissing) {
        found = id;
        found_end = j;
        break;
      }
    }
    if (found == kNone) {
      size_t len = config_.byte_level ? 1 : std::min(end - i, utf8_char_length(text, i));
      push_unknown(text, i, len, out);
      i += len;
      continue;
    }
    out.push_back(Token{found, static_cast<uint32_t>(i), static_cast<uint32_t>(found_end)});
    i = found_end;
  }
  if (!symbol.empty() && !marker_taken && start < end) {
    if (end_of_word_id_ != kNone) {
      out.push_back(Token{end_of_word_id_, static_cast<uint32_t>(end), static_cast<uint32_t>(end)});
    } else {
      push_unknown(text, end, 0, out);  // the marker alone is not a token
    }
  }
}

}  // namespace ciyuan
