// WordPiece / WordLevel / CharLevel models and their encoder (see wordpiece.h).
#include "ciyuan/wordpiece.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <numeric>
#include <type_traits>

#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {
std::atomic<uint32_t> next_instance{1};
}  // namespace

WordPieceModel::WordPieceModel(std::vector<std::string> tokens, std::vector<uint8_t> present, WordPieceConfig config)
    : tokens_(std::move(tokens)), present_(std::move(present)), config_(std::move(config)) {
  instance_ = next_instance.fetch_add(1) & 0x07FFFFFFu;  // 27 bits: the cache check holds it * 32
  if (instance_ == 0) instance_ = next_instance.fetch_add(1) & 0x07FFFFFFu;
  if (present_.size() != tokens_.size()) throw Error(ErrorKind::kModel, "tokens and present differ in length");
  if (tokens_.size() >= 0x7FFFFFFFu) throw Error(ErrorKind::kModel, "too many tokens");
  std::fill(std::begin(ascii_ids_), std::end(ascii_ids_), kNone);
  bmp_ids_.assign(0x10000, kNone);
  std::vector<size_t> keyed;  // ids that go into the trie
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (!present_[i]) continue;
    const std::string& t = tokens_[i];
    if (!vocab_.insert(t, static_cast<uint32_t>(i)))
      throw Error(ErrorKind::kModel, "the token '" + t + "' has two ids: " + std::to_string(vocab_.find(t)) +
                                         " and " + std::to_string(i));
    if (t.empty()) continue;
    keyed.push_back(i);
    uint32_t cp;
    size_t len = utf8::decode(t.data(), t.data() + t.size(), &cp);
    if (len == t.size()) {
      if (cp < 128) ascii_ids_[cp] = static_cast<uint32_t>(i);
      else if (cp < 0x10000 && !(cp == utf8::kReplacement && len == 1)) bmp_ids_[cp] = static_cast<uint32_t>(i);
    }
  }
  if (config_.unk_id >= 0 && !has_id(static_cast<uint32_t>(config_.unk_id)))
    throw Error(ErrorKind::kModel, "the unknown token's id " + std::to_string(config_.unk_id) + " is not in the vocabulary");

  prefix_node_ = -1;
  if (!keyed.empty()) {
    std::sort(keyed.begin(), keyed.end(), [&](size_t a, size_t b) { return tokens_[a] < tokens_[b]; });
    std::vector<uint32_t> labels;
    std::vector<size_t> starts;
    std::vector<int32_t> values;
    for (size_t i : keyed) {
      starts.push_back(labels.size());
      for (unsigned char c : tokens_[i]) labels.push_back(static_cast<uint32_t>(c) + 1);
      values.push_back(static_cast<int32_t>(i));
    }
    starts.push_back(labels.size());
    std::vector<size_t> order(keyed.size());
    std::iota(order.begin(), order.end(), size_t{0});
    trie_.build(labels, starts, order, values, 257);
    int32_t s = DoubleArrayTrie::kRoot;
    for (unsigned char c : config_.continuing_subword_prefix) {
      s = trie_.child(s, static_cast<uint32_t>(c) + 1);
      if (s < 0) break;
    }
    prefix_node_ = s;
  }
}

void WordPieceModel::unknown(const char* w, size_t n, uint32_t start, uint32_t end, std::vector<Token>& out) const {
  if (config_.unk_id < 0) {
    // At most 64 bytes of the word, cut at a character boundary: half a UTF-8 character would
    // make the message itself invalid UTF-8 (found by fuzz/py/fuzz_models.py).
    size_t cut = std::min<size_t>(n, 64);
    while (cut < n && cut > 0 && (static_cast<unsigned char>(w[cut]) & 0xC0) == 0x80) --cut;
    std::string shown(w, cut);
    throw Error(ErrorKind::kInvalidInput,
                "'" + shown + (cut < n ? "...'" : "'") +
                    " cannot be encoded with this vocabulary and the model has no unknown token; give the model "
                    "an unk_token (e.g. \"[UNK]\") that is in its vocabulary");
  }
  out.push_back(Token{static_cast<uint32_t>(config_.unk_id), start, end});
}

void WordPieceModel::encode_word(const char* w, size_t n, uint32_t offset, std::vector<Token>& out,
                                 WordCache* cache) const {
  if (n == 0) return;
  switch (config_.kind) {
    case WordModelKind::kWordPiece:
      encode_wordpiece(w, n, offset, out, cache);
      return;
    case WordModelKind::kWordLevel: {
      uint32_t id = vocab_.find(w, n);
      if (id == kNone) {
        unknown(w, n, offset, offset + static_cast<uint32_t>(n), out);
      } else {
        out.push_back(Token{id, offset, offset + static_cast<uint32_t>(n)});
      }
      return;
    }
    case WordModelKind::kCharLevel:
      encode_chars(w, n, offset, out);
      return;
  }
}

void WordPieceModel::encode_chars(const char* w, size_t n, uint32_t offset, std::vector<Token>& out) const {
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = utf8::decode(w + i, w + n, &cp);
    uint32_t id;
    if (len == 1) {
      id = static_cast<unsigned char>(w[i]) < 128 ? ascii_ids_[static_cast<unsigned char>(w[i])] : kNone;
    } else if (cp < 0x10000) {
      id = bmp_ids_[cp];
    } else {
      id = vocab_.find(w + i, len);
    }
    uint32_t s = offset + static_cast<uint32_t>(i), e = s + static_cast<uint32_t>(len);
    if (id == kNone) {
      unknown(w + i, len, s, e, out);
    } else {
      out.push_back(Token{id, s, e});
    }
    i += len;
  }
}

void WordPieceModel::encode_wordpiece(const char* w, size_t n, uint32_t offset, std::vector<Token>& out,
                                      WordCache* cache) const {
  const uint32_t end = offset + static_cast<uint32_t>(n);
  // Shortcut: a one-character word (CJK, punctuation) that is a token, by a table read.
  unsigned char b0 = static_cast<unsigned char>(w[0]);
  uint32_t one = kNone;
  if (n == 1) {
    one = b0 < 128 ? ascii_ids_[b0] : kNone;
  } else if ((n == 2 && b0 >= 0xC0 && b0 < 0xE0) || (n == 3 && b0 >= 0xE0 && b0 < 0xF0)) {
    uint32_t cp;
    utf8::decode(w, w + n, &cp);
    one = bmp_ids_[cp];
  }
  if (one != kNone && config_.max_input_chars_per_word >= 1) {
    out.push_back(Token{one, offset, end});
    return;
  }
  if (!cache || n > WordCache::kMaxBytes) {
    encode_wordpiece_uncached(w, n, offset, out);
    return;
  }
  // The word's tokens depend on its bytes only: cache them.
  uint64_t k0 = load_upto8(w, n < 8 ? n : 8);  // exact (zero-padded) for up to 8 bytes
  uint64_t k1 = n > 8 ? load_upto8(w + 8, n - 8) : 0;
  uint32_t check = (instance_ << 5) | static_cast<uint32_t>(n);
  WordCache::Entry& e = cache->entries[((k0 ^ (k1 * 0xBF58476D1CE4E5B9ULL) ^ n) * 0x9E3779B97F4A7C15ULL) >> 51];
  if (e.check == check && e.key[0] == k0 && e.key[1] == k1) {
    uint32_t start = offset;
    for (uint32_t i = 0; i + 1 < e.count; ++i) {
      out.push_back(Token{e.ids[i], start, offset + e.ends[i]});
      start = offset + e.ends[i];
    }
    out.push_back(Token{e.ids[e.count - 1], start, end});
    return;
  }
  const size_t first = out.size();
  encode_wordpiece_uncached(w, n, offset, out);
  const size_t count = out.size() - first;
  if (count == 0 || count > 4) return;
  e.key[0] = k0;
  e.key[1] = k1;
  e.check = check;
  e.count = static_cast<uint8_t>(count);
  for (size_t i = 0; i < count; ++i) {
    e.ids[i] = out[first + i].id;
    if (i + 1 < count) e.ends[i] = static_cast<uint8_t>(out[first + i].end - offset);
  }
}

void WordPieceModel::encode_wordpiece_uncached(const char* w, size_t n, uint32_t offset,
                                               std::vector<Token>& out) const {
  const uint32_t end = offset + static_cast<uint32_t>(n);
  if (n > config_.max_input_chars_per_word) {
    // Characters, not bytes, count (bytes >= characters, so short words skip this).
    uint64_t chars = 0;
    for (size_t i = 0; i < n; ++i) chars += !utf8::is_continuation(static_cast<unsigned char>(w[i]));
    if (chars > config_.max_input_chars_per_word) {
      unknown(w, n, offset, end, out);
      return;
    }
  }
  // A word that is a token: one hash lookup.
  uint32_t whole = vocab_.find(w, n);
  if (whole != kNone) {
    out.push_back(Token{whole, offset, end});
    return;
  }
  // Greedy longest match, one trie walk per token.
  const size_t first = out.size();
  const DoubleArrayTrie::Node* nodes = trie_.data();
  for (size_t pos = 0; pos < n;) {
    int32_t s = pos == 0 ? (nodes ? DoubleArrayTrie::kRoot : -1) : prefix_node_;
    int32_t best = -1;
    size_t best_end = 0;
    for (size_t j = pos; s >= 0 && j < n; ++j) {
      s = DoubleArrayTrie::child_of(nodes, s, static_cast<uint32_t>(static_cast<unsigned char>(w[j])) + 1);
      if (s < 0) break;
      int32_t v = nodes[s].value;
      if (v >= 0) {
        best = v;
        best_end = j + 1;
      }
    }
    if (best < 0) {
      out.resize(first);
      unknown(w, n, offset, end, out);
      return;
    }
    out.push_back(Token{static_cast<uint32_t>(best), offset + static_cast<uint32_t>(pos),
                        offset + static_cast<uint32_t>(best_end)});
    pos = best_end;
  }
}

// -- the TokenModel side -----------------------------------------------------------------------

namespace {
struct FreeCache {
  void operator()(WordCache* c) const { std::free(c); }
};

// The calling thread's word cache. Not inlined: the hot loop then holds a plain pointer
// instead of asking for the thread-local address (__tls_get_addr) at every use.
__attribute__((noinline)) WordCache* thread_word_cache() {
  static_assert(std::is_trivially_default_constructible<WordCache>::value, "WordCache must be plain data");
  static thread_local std::unique_ptr<WordCache, FreeCache> cache;
  if (!cache) {
    void* memory = std::calloc(1, sizeof(WordCache));
    if (!memory) throw std::bad_alloc();
    cache.reset(new (memory) WordCache);  // default-initialized: stays all zero (empty)
  }
  return cache.get();
}
}  // namespace

void WordPieceModel::encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const {
  WordCache* cache = thread_word_cache();
  for (size_t k = 0; k < n; ++k)
    encode_word(text.data() + pieces[k].first, pieces[k].second - pieces[k].first, pieces[k].first, out, cache);
}

void WordPieceModel::encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                                 std::vector<Token>& out) const {
  WordCache* cache = thread_word_cache();
  encode_bert_words(bert, text, start, end, out, [this, cache](const char* w, size_t n, uint32_t offset,
                                                               std::vector<Token>& o) {
    encode_word(w, n, offset, o, cache);
  });
}

}  // namespace ciyuan
