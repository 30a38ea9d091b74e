// The native encode path: special tokens -> pre-tokenizer -> BPE model, over whole buffers.
// Python builds an Encoder once per Tokenizer and calls it with whole texts or batches; the
// GIL is released for the duration, and batches are spread over threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/bpe.h"
#include "ciyuan/errors.h"
#include "ciyuan/pretokenize.h"
#include "ciyuan/special.h"

namespace ciyuan {

// What to do with special-token text found in the input, per special token.
enum class SpecialPolicy : uint8_t {
  kOrdinary = 0,    // encode it like any other text
  kAllowed = 1,     // emit the special token's id
  kDisallowed = 2,  // raise DisallowedSpecialTokenError
};

struct SpecialToken {
  std::string text;
  uint32_t id;
};

// Cuts `text` at the special tokens `policy` allows (one policy per special token, in order):
// ordinary(start, end) for the text between them (possibly empty), special(token, start, end)
// for each; special-token text whose policy is kDisallowed throws DisallowedSpecialTokenError.
// Every encoder shares it.
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

// Where encoded tokens go: all of them (ids with their spans), or only their ids. The model
// always writes Tokens; for ids only they land in a small scratch buffer that stays in L1 and
// just the 4-byte ids reach the output - a third of the memory traffic, which otherwise evicts
// the vocabulary's hot entries from the cache.
class TokenSink {
 public:
  explicit TokenSink(std::vector<Token>& tokens) : tokens_(&tokens), buffer_(&tokens) {}
  explicit TokenSink(std::vector<uint32_t>& ids) : ids_(&ids), buffer_(&scratch_) {}
  TokenSink(const TokenSink&) = delete;
  TokenSink& operator=(const TokenSink&) = delete;

  std::vector<Token>& buffer() { return *buffer_; }
  void flush() {
    if (!ids_) return;
    for (const Token& t : scratch_) ids_->push_back(t.id);
    scratch_.clear();
  }
  void reserve(size_t n) {
    if (ids_) {
      ids_->reserve(ids_->size() + n);
    } else {
      tokens_->reserve(tokens_->size() + n);
    }
  }

 private:
  std::vector<Token>* tokens_ = nullptr;
  std::vector<uint32_t>* ids_ = nullptr;
  std::vector<Token> scratch_;
  std::vector<Token>* buffer_;
};

class Encoder {
 public:
  // `pattern` < 0 means no pre-tokenizer: every ordinary segment is one piece.
  Encoder(std::shared_ptr<const BpeModel> model, int pattern, std::vector<SpecialToken> specials,
          bool longest_match);

  // Encodes `text` (valid UTF-8); `policy` has one entry per special token (or is empty when
  // all are ordinary text).
  void encode(std::string_view text, const std::vector<SpecialPolicy>& policy, TokenSink& out) const;
  void encode(std::string_view text, const std::vector<SpecialPolicy>& policy, std::vector<Token>& out) const {
    TokenSink sink(out);
    encode(text, policy, sink);
  }
  // Encodes pieces chosen by the caller (a Python pre-tokenizer): [start, end) byte spans.
  // Only the ids (the fast path: spans are never stored).
  void encode_ids(std::string_view text, const std::vector<SpecialPolicy>& policy, std::vector<uint32_t>& out) const {
    TokenSink sink(out);
    encode(text, policy, sink);
  }
  void encode_spans(std::string_view text, const std::vector<std::pair<uint32_t, uint32_t>>& spans,
                    std::vector<Token>& out) const;
  // Encodes each text; `threads` <= 0 means one per core.
  void encode_batch(const std::vector<std::string_view>& texts,
                    const std::vector<SpecialPolicy>& policy, int threads,
                    std::vector<std::vector<Token>>& out) const;
  void encode_batch_ids(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                        int threads, std::vector<std::vector<uint32_t>>& out) const;

  // Raw bytes of the ids (model tokens and special tokens) appended to `out`.
  void decode(const uint32_t* ids, size_t n, std::string& out) const;
  // The byte string of one id, or nullptr if the id is unknown.
  const std::string* id_bytes(uint32_t id) const;

  const BpeModel& model() const { return *model_; }
  const std::vector<SpecialToken>& specials() const { return specials_; }

 private:
  void encode_ordinary(std::string_view text, size_t start, size_t end, TokenSink& out) const;

  std::shared_ptr<const BpeModel> model_;
  int pattern_;
  std::vector<SpecialToken> specials_;
  SpecialMatcher matcher_;
  bool longest_match_;
  std::vector<std::pair<uint32_t, const std::string*>> special_by_id_;  // (id, text), sorted by id
};

// Runs fn(i) for i in [0, n) on `threads` threads (<= 0: hardware concurrency). Exceptions
// are caught on the worker and the first one is rethrown on the caller's thread.
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace ciyuan
