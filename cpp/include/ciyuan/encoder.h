// The native encode path, one for every model: special tokens -> front end -> model.
//
//   text ─ split_at_specials ─┬─ special token ──────────────────────────────▶ its id
//                             └─ ordinary segment ─ front end ─ TokenModel ──▶ Tokens
//
// The model interface (TokenModel) is small, so that a model family plugs in by implementing
// four functions (and optionally a fifth):
//   encode_pieces  the tokens of a BATCH of pieces (byte spans of the text; up to 256 per call
//                  from the scanner): one virtual call per batch, never per token, so the
//                  model keeps its own tight loop (BPE prefetches the whole batch first);
//   encode_bert    the tokens of the words the BERT front end makes of one segment; a model
//                  implements it with encode_bert_words below and its own (inlined) word
//                  function "encode one word at an offset";
//   id_limit       one past the largest id;
//   id_bytes       the bytes of an id (nullptr for a hole);
//   expected_tokens  (optional: a default exists) how many tokens to make room for before
//                  encoding a text of so many bytes;
//   sample_pieces, nbest_piece  (optional: the defaults throw ModelError) subword regularization:
//                  a sampled segmentation of each piece, and the k best of one piece.
// BpeModel (bpe.h) and WordPieceModel (wordpiece.h: WordPiece, WordLevel, CharLevel) implement
// it; Unigram is next.
//
// The front end cuts an ordinary segment into pieces: none (the segment is one piece), a
// pre-tokenizer scanner (pretokenize.h), or the BERT normalizer + pre-tokenizer (bert.h).
//
// Python builds an Encoder once per Tokenizer and calls it with whole texts or batches; the
// bindings release the GIL for the duration, and batches are spread over threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ciyuan/bert.h"
#include "ciyuan/errors.h"
#include "ciyuan/front_end.h"
#include "ciyuan/hash.h"
#include "ciyuan/pretokenize.h"
#include "ciyuan/special.h"
#include "ciyuan/unicode_tables.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

// One output token: its id and the byte span [start, end) of the input it came from.
struct Token {
  uint32_t id;
  uint32_t start;
  uint32_t end;
};

// A piece: the byte span [first, second) of a text.
using Span = std::pair<uint32_t, uint32_t>;

// How a segmentation is sampled (subword regularization).
struct SampleOptions {
  float alpha = 0.1f;       // Unigram: smoothing (inverse temperature); BPE: dropout probability
  int32_t nbest_size = -1;  // Unigram: 1 = Viterbi, <= 0 = all segmentations, k > 1 = one of the k best; BPE: ignored
};
using Rng = std::mt19937_64;

// What the Encoder needs from a model (see the top of this file).
class TokenModel {
 public:
  virtual ~TokenModel() = default;

  // Appends the tokens of the n pieces text[pieces[k].first, pieces[k].second), in order, with
  // spans relative to `text`.
  virtual void encode_pieces(std::string_view text, const Span* pieces, size_t n, std::vector<Token>& out) const = 0;
  // The same, ids only, appended to `ids` (encode_ids' path: a model may skip making Tokens).
  // The default encodes into `scratch` (the thread's token buffer) and copies the ids.
  virtual void encode_pieces_ids(std::string_view text, const Span* pieces, size_t n, std::vector<uint32_t>& ids,
                                 std::vector<Token>& scratch) const {
    scratch.clear();
    encode_pieces(text, pieces, n, scratch);
    for (const Token& t : scratch) ids.push_back(t.id);
    scratch.clear();
  }
  // Appends the tokens of the words `bert` makes of text[start, end), spans relative to `text`.
  virtual void encode_bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                           std::vector<Token>& out) const = 0;
  virtual size_t id_limit() const = 0;
  // The bytes of an id (UTF-8 text for models over characters), nullptr for a hole.
  virtual const std::string* id_bytes(uint32_t id) const = 0;
  // Tokens to make room for before encoding `bytes` bytes (growing a vector copies it again
  // and again; reserved but untouched memory costs no RSS).
  virtual size_t expected_tokens(size_t bytes) const { return bytes / 2 + 16; }
  // Like encode_pieces, but each piece's segmentation is sampled (SampleOptions).
  virtual void sample_pieces(std::string_view text, const Span* pieces, size_t n, const SampleOptions& options,
                             Rng& rng, std::vector<Token>& out) const {
    (void)text, (void)pieces, (void)n, (void)options, (void)rng, (void)out;
    throw Error(ErrorKind::kModel, "this model does not sample segmentations");
  }
  // The k best segmentations of text[piece.first, piece.second), best first, with their scores.
  virtual void nbest_piece(std::string_view text, Span piece, size_t k, std::vector<std::vector<Token>>& paths,
                           std::vector<float>& scores) const {
    (void)text, (void)piece, (void)k, (void)paths, (void)scores;
    throw Error(ErrorKind::kModel, "this model has no n-best segmentations (only Unigram models do)");
  }
};

// The BERT front end feeding a model's word function: encode_word(w, n, offset, out) appends
// the tokens of the word w[0, n) with spans relative to w plus `offset`. Words that are not a
// verbatim copy of the original text get their spans mapped back to it. Templated, so the word
// function is inlined: no call per word.
template <class EncodeWord>
void encode_bert_words(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end,
                       std::vector<Token>& out, EncodeWord&& encode_word) {
  auto on_word = [&](const BertWord& w) {
    if (!w.starts) {
      encode_word(w.text.data(), w.text.size(), w.base, out);
      return;
    }
    size_t k = out.size();
    encode_word(w.text.data(), w.text.size(), 0, out);
    for (; k < out.size(); ++k) {
      out[k].start = w.orig_start(out[k].start);
      out[k].end = w.orig_end(out[k].end);
    }
  };
  const size_t first = out.size();
  bert.each_word(text, start, end, on_word, [&] { out.resize(first); });
}

// What to do with special-token text found in the input, per special token.
enum class SpecialPolicy : uint8_t {
  kOrdinary = 0,    // encode it like any other text
  kAllowed = 1,     // emit the special token's id
  kDisallowed = 2,  // raise DisallowedSpecialTokenError
};

struct SpecialToken {
  std::string text;
  uint32_t id;
  uint8_t flags = 0;  // kAdded* below; 0 for a special token found by policy
};

// A Hugging Face added token (flags of SpecialToken) is found in every call, whatever the
// policy, after the special tokens have cut the text: first the tokens of kAddedRaw in each
// segment between special tokens, then those of kAddedSecond in each stretch between those (HF's
// non-normalized, then normalized added tokens; the second pass runs on the same bytes, so only
// without a normalizer). kAddedSingleWord: a match with a word character (\w) just before or
// after it in its stretch is passed over; kAddedLstrip / kAddedRstrip: the token takes the
// whitespace (\s) before it (back to the previous token) / after it.
enum : uint8_t {
  kAddedRaw = 1,
  kAddedSecond = 2,
  kAddedLstrip = 4,
  kAddedRstrip = 8,
  kAddedSingleWord = 16,
};

// Cuts `text` at the special tokens `policy` allows (one policy per special token, in order):
// ordinary(start, end) for the text between them (possibly empty), special(token, start, end)
// for each; special-token text whose policy is kDisallowed throws DisallowedSpecialTokenError.
template <class Ordinary, class Special>
void split_at_specials(const SpecialMatcher& matcher, const std::vector<SpecialToken>& specials,
                       const std::vector<SpecialPolicy>& policy, std::string_view text, Ordinary&& ordinary,
                       Special&& special) {
  bool any = false;
  for (SpecialPolicy p : policy) any |= p != SpecialPolicy::kOrdinary;
  if (!any || matcher.empty()) {
    ordinary(size_t{0}, text.size());
    return;
  }
  size_t pos = 0, seg = 0, s, e;
  uint32_t index;
  while (matcher.find(text, pos, &s, &e, &index)) {
    const SpecialPolicy p = index < policy.size() ? policy[index] : SpecialPolicy::kOrdinary;
    if (p == SpecialPolicy::kOrdinary) {
      pos = s + 1;
      continue;
    }
    if (p == SpecialPolicy::kDisallowed) {
      const std::string& name = specials[index].text;
      throw Error(ErrorKind::kSpecialToken,
                  "the text contains the special token '" + name + "' at byte " + std::to_string(s) +
                      "; pass allowed_special={'" + name + "'} to encode it as a special token, or "
                      "disallowed_special=() to encode it as ordinary text");
    }
    ordinary(seg, s);
    special(specials[index], s, e);
    pos = seg = e;
  }
  ordinary(seg, text.size());
}

// Cuts text[from, to) at the added tokens `matcher` finds there, by Hugging Face's rules (see
// kAddedRaw): ordinary(start, end) for the text before each token and after the last (also when
// empty and no token was found), added(token, start, end) for each. The search goes on after
// each match as found (its end before rstrip), as HF's does (so a token whose text starts with
// whitespace may be found inside the whitespace an rstrip took, and their spans overlap, as in
// HF).
template <class Ordinary, class Added>
void split_at_added(const SpecialMatcher& matcher, const std::vector<SpecialToken>& specials, std::string_view text,
                    size_t from, size_t to, Ordinary&& ordinary, Added&& added) {
  const std::string_view view = text.substr(0, to);
  const char* data = text.data();
  auto flags_at = [&](size_t i) {  // the character at byte i (< to)
    uint32_t cp;
    utf8::decode(data + i, data + to, &cp);
    return unicode::flags(cp);
  };
  auto before = [&](size_t i) {  // the start of the character ending at byte i (> from)
    do --i;
    while (i > from && utf8::is_continuation(static_cast<unsigned char>(data[i])));
    return i;
  };
  size_t pos = from, at = from, s, e;
  bool none = true;
  uint32_t index;
  while (pos < to && matcher.find(view, pos, &s, &e, &index)) {
    pos = e;
    const SpecialToken& token = specials[index];
    if ((token.flags & kAddedSingleWord) &&
        ((s > from && (flags_at(before(s)) & unicode::kWord)) || (e < to && (flags_at(e) & unicode::kWord))))
      continue;
    if (token.flags & kAddedLstrip) {
      while (s > at && (flags_at(before(s)) & unicode::kSpace)) s = before(s);
    }
    if (token.flags & kAddedRstrip) {
      while (e < to && (flags_at(e) & unicode::kSpace)) e += utf8::lead_length(static_cast<unsigned char>(data[e]));
    }
    if (at < s) ordinary(at, s);
    added(token, s, e);
    at = e;
    none = false;
  }
  if (at < to || none) ordinary(at, to);
}

// Where encoded tokens go: all of them (ids with their spans), or only their ids. The model
// always writes Tokens; for ids only they land in the thread's scratch buffer, which stays in
// cache, and just the 4-byte ids reach the output - a third of the memory traffic, which
// otherwise evicts the vocabulary's hot entries from the cache.
class TokenSink {
 public:
  explicit TokenSink(std::vector<Token>& tokens) : tokens_(&tokens), buffer_(&tokens) {}
  explicit TokenSink(std::vector<uint32_t>& ids);
  // Counting only (count_tokens): tokens land in the thread's scratch buffers as for ids only
  // (ids() is a scratch vector, so the models' ids path runs), and each flush adds how many
  // there are to `count` and drops them; no list of a text's ids is ever kept.
  explicit TokenSink(size_t& count);
  ~TokenSink();
  TokenSink(const TokenSink&) = delete;
  TokenSink& operator=(const TokenSink&) = delete;

  std::vector<Token>& buffer() { return *buffer_; }
  // The ids-only output (nullptr when whole tokens are kept): a front end may append to it
  // directly, after flush().
  std::vector<uint32_t>* ids() { return ids_; }
  // Only the ids are kept: a front end may leave the tokens' spans unmapped (e.g. not align
  // normalized text with the original).
  bool ids_only() const { return ids_ != nullptr; }
  void flush() {
    if (count_) {
      *count_ += buffer_->size() + ids_->size();
      buffer_->clear();
      ids_->clear();
      return;
    }
    if (!ids_) return;
    // Exactly the room needed on the first flush (a short text's ids in one allocation, no
    // slack), doubling after that (a long text's vector is not copied again and again).
    const size_t need = ids_->size() + buffer_->size();
    if (need > ids_->capacity()) ids_->reserve(std::max(need, 2 * ids_->capacity()));
    for (const Token& t : *buffer_) ids_->push_back(t.id);
    buffer_->clear();
  }
  // Room for about n more tokens. With ids only, just for long texts: a batch of short lines
  // would otherwise keep the estimate's slack (2-3x the ids) in every line's vector.
  void reserve(size_t n) {
    if (count_) return;
    if (!ids_) {
      tokens_->reserve(tokens_->size() + n);
    } else if (n >= kReserveIdsFrom) {
      ids_->reserve(ids_->size() + n);
    }
  }

 private:
  static constexpr size_t kReserveIdsFrom = size_t{1} << 12;

  std::vector<Token>* tokens_ = nullptr;
  std::vector<uint32_t>* ids_ = nullptr;
  std::vector<Token>* buffer_;
  size_t* count_ = nullptr;
};

// The random generator of item `index` of a sampled batch encoded with `seed` (a single text is
// item 0): each item's draws depend on (seed, index) alone.
inline Rng sample_rng(uint64_t seed, uint64_t index) {
  return Rng(hash_u64(seed ^ hash_u64(index + 0x9E3779B97F4A7C15ULL)));
}

class Encoder {
 public:
  Encoder(std::shared_ptr<const TokenModel> model, FrontEnd front_end, std::vector<SpecialToken> specials);

  // Appends the tokens of `text` (valid UTF-8); `policy` has one entry per special token (or is
  // empty when all are ordinary text).
  void encode(std::string_view text, const std::vector<SpecialPolicy>& policy, TokenSink& out) const;
  void encode(std::string_view text, const std::vector<SpecialPolicy>& policy, std::vector<Token>& out) const {
    TokenSink sink(out);
    encode(text, policy, sink);
  }
  // The same, ids only (the fast path: spans are never stored).
  void encode_ids(std::string_view text, const std::vector<SpecialPolicy>& policy, std::vector<uint32_t>& out) const {
    TokenSink sink(out);
    encode(text, policy, sink);
  }
  // The model alone on pieces chosen by the caller (a Python pre-tokenizer): [start, end) byte
  // spans of `text`.
  void encode_spans(std::string_view text, const std::vector<Span>& spans, std::vector<Token>& out) const;
  // Encodes each text; `threads` <= 0 means one per core. (Batches of ids only are scheduled by
  // the bindings, which overlap encoding with building the Python lists: encode_ids per text.)
  void encode_batch(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                    int threads, std::vector<std::vector<Token>>& out) const;

  // Subword regularization: like encode, but the model samples each piece's segmentation
  // (TokenModel::sample_pieces) with the generator sample_rng(seed, 0).
  void encode_sampled(std::string_view text, const std::vector<SpecialPolicy>& policy, const SampleOptions& options,
                      uint64_t seed, TokenSink& out) const;
  void encode_sampled(std::string_view text, const std::vector<SpecialPolicy>& policy, const SampleOptions& options,
                      uint64_t seed, std::vector<Token>& out) const {
    TokenSink sink(out);
    encode_sampled(text, policy, options, seed, sink);
  }
  // The same with the caller's generator (e.g. sample_rng(seed, i) for text i of a batch).
  void encode_sampled(std::string_view text, const std::vector<SpecialPolicy>& policy, const SampleOptions& options,
                      Rng& rng, TokenSink& out) const;
  // Batches: text i is sampled with sample_rng(seed, i), so the thread count never changes a result.
  void encode_sampled_batch(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                            const SampleOptions& options, uint64_t seed, int threads,
                            std::vector<std::vector<Token>>& out) const;
  // encode_spans, sampled with `rng` (the caller's: one generator for all the pieces of a text).
  void encode_spans_sampled(std::string_view text, const std::vector<Span>& spans, const SampleOptions& options,
                            Rng& rng, std::vector<Token>& out) const;
  // The k best segmentations of `text`, best first, with their scores (TokenModel::nbest_piece).
  // The text must make one piece (the front end cuts it no further) and hold no special token
  // that `policy` allows; otherwise ModelError. An empty text has one empty segmentation.
  void encode_nbest(std::string_view text, const std::vector<SpecialPolicy>& policy, size_t k,
                    std::vector<std::vector<Token>>& paths, std::vector<float>& scores) const;
  // The same for one piece chosen by the caller (a Python front end).
  void nbest_span(std::string_view text, Span span, size_t k, std::vector<std::vector<Token>>& paths,
                  std::vector<float>& scores) const;

  // Raw bytes of the ids (model tokens and special tokens) appended to `out`.
  void decode(const uint32_t* ids, size_t n, std::string& out) const;
  // The byte string of one id, or nullptr if the id is unknown.
  const std::string* id_bytes(uint32_t id) const;

  const FrontEnd& front_end() const { return front_end_; }

 private:
  // The encode path with `call` standing for the model (see ModelCall in encoder.cc): plain,
  // sampled and n-best encoding differ only in what they ask of the model.
  template <class Call>
  void encode_with(std::string_view text, const std::vector<SpecialPolicy>& policy, TokenSink& out,
                   const Call& call) const;
  // One ordinary segment text[start, end) through the front end, then `call`.
  template <class Call>
  void encode_ordinary(std::string_view text, size_t start, size_t end, TokenSink& out, const Call& call) const;
  // encode_one(i, sink) for each of `count` texts on `threads` threads, into out[i].
  template <class Out, class EncodeOne>
  void encode_each(size_t count, int threads, std::vector<Out>& out, const EncodeOne& encode_one) const;

  std::shared_ptr<const TokenModel> model_;
  FrontEnd front_end_;
  BertFrontEnd bert_;  // built from front_end_.bert whatever the kind (cheap); used for kBert only
  // Cuts text[start, end) (between special tokens) at the added tokens (kAddedRaw, then
  // kAddedSecond): ordinary(a, b) for the text between them, added(token, a, b) for each.
  template <class Ordinary, class Added>
  void split_at_added_tokens(std::string_view text, size_t start, size_t end, Ordinary&& ordinary,
                             Added&& added) const;

  std::vector<SpecialToken> specials_;
  SpecialMatcher matcher_;      // the special tokens (by policy)
  SpecialMatcher added_raw_;    // the added tokens of kAddedRaw
  SpecialMatcher added_second_; // and of kAddedSecond
  std::vector<std::pair<uint32_t, const std::string*>> special_by_id_;  // (id, text), sorted by id
};

}  // namespace ciyuan
