// The native encoder (see encoder.h): special tokens, the front end, batches over threads.
#include "ciyuan/encoder.h"

#include <algorithm>

#include "ciyuan/errors.h"
#include "ciyuan/parallel.h"
#include "ciyuan/spm_normalizer.h"

namespace ciyuan {

namespace {
std::vector<std::pair<std::string, uint32_t>> matcher_entries(const std::vector<SpecialToken>& specials) {
  std::vector<std::pair<std::string, uint32_t>> entries;
  for (size_t i = 0; i < specials.size(); ++i) entries.emplace_back(specials[i].text, static_cast<uint32_t>(i));
  return entries;
}

void check_size(std::string_view text) {
  if (text.size() >= 0xFFFFFFFFull)  // token spans are 32-bit
    throw Error(ErrorKind::kInvalidInput, "a single text must be shorter than 4 GiB; split it (e.g. by lines)");
}

// The calling thread's token buffer for ids-only encoding. Not inlined: the hot loop then holds
// a plain pointer instead of asking for the thread-local address at every use.
__attribute__((noinline)) std::vector<Token>& thread_tokens() {
  static thread_local std::vector<Token> tokens;
  return tokens;
}
}  // namespace

TokenSink::TokenSink(std::vector<uint32_t>& ids) : ids_(&ids), buffer_(&thread_tokens()) { buffer_->clear(); }

TokenSink::~TokenSink() {
  // Keep no huge buffer alive in the thread after a long text.
  if (ids_ && buffer_->capacity() > (size_t{1} << 20)) std::vector<Token>().swap(*buffer_);
}

Encoder::Encoder(std::shared_ptr<const TokenModel> model, FrontEnd front_end, std::vector<SpecialToken> specials)
    : model_(std::move(model)), front_end_(front_end), bert_(front_end.bert), specials_(std::move(specials)),
      matcher_(matcher_entries(specials_)) {
  if (!model_) throw Error(ErrorKind::kModel, "the encoder needs a model");
  if (front_end_.kind == FrontEndKind::kSentencePiece && !front_end_.spm)
    throw Error(ErrorKind::kModel, "a SentencePiece front end needs its normalizer");
  for (const SpecialToken& s : specials_) {
    if (s.text.empty()) throw Error(ErrorKind::kModel, "a special token is the empty string");
    special_by_id_.emplace_back(s.id, &s.text);
  }
  // Sorted, not indexed by id: a special id may be anything up to 2^32 - 1.
  std::sort(special_by_id_.begin(), special_by_id_.end());
}

const std::string* Encoder::id_bytes(uint32_t id) const {
  // A special token that is also in the model has the same bytes there (the Tokenizer checks).
  if (const std::string* bytes = model_->id_bytes(id)) return bytes;
  auto it = std::lower_bound(special_by_id_.begin(), special_by_id_.end(),
                             std::make_pair(id, static_cast<const std::string*>(nullptr)));
  if (it != special_by_id_.end() && it->first == id) return it->second;
  return nullptr;
}

namespace {
// SentencePiece: text[start, end) normalized, the model on the normalized text as one piece,
// each token's span mapped back to the original bytes (sentencepiece's norm_to_orig).
void encode_sentencepiece(const TokenModel& model, const SpmNormalizer& spm, std::string_view text, size_t start,
                          size_t end, std::vector<Token>& out) {
  thread_local std::string normalized;
  thread_local std::vector<uint32_t> orig;
  spm.normalize(text.substr(start, end - start), normalized, orig);
  if (normalized.empty()) return;
  const Span piece{0, static_cast<uint32_t>(normalized.size())};
  const size_t first = out.size();
  model.encode_pieces(normalized, &piece, 1, out);
  const uint32_t base = static_cast<uint32_t>(start);
  for (size_t k = first; k < out.size(); ++k) {
    out[k].start = base + orig[out[k].start];
    out[k].end = base + orig[out[k].end];
  }
  // Keep no huge buffers alive in the thread after a long text.
  if (normalized.capacity() > (size_t{1} << 22)) {
    std::string().swap(normalized);
    std::vector<uint32_t>().swap(orig);
  }
}
}  // namespace

void Encoder::encode_ordinary(std::string_view text, size_t start, size_t end, TokenSink& sink) const {
  if (start >= end) return;
  std::vector<Token>& out = sink.buffer();
  switch (front_end_.kind) {
    case FrontEndKind::kSentencePiece:
      encode_sentencepiece(*model_, *front_end_.spm, text, start, end, out);
      break;
    case FrontEndKind::kNone: {
      const Span piece{static_cast<uint32_t>(start), static_cast<uint32_t>(end)};
      model_->encode_pieces(text, &piece, 1, out);
      break;
    }
    case FrontEndKind::kBert:
      model_->encode_bert(bert_, text, start, end, out);
      break;
    case FrontEndKind::kPattern: {
      // The segment ends where the next special token starts: the scanner must see that as the
      // end of the text (tiktoken scans each segment as its own string, which matters for `$`).
      const std::string_view segment = text.substr(0, end);
      Span spans[256];
      for (size_t pos = start, n; pos < end && (n = next_pieces(front_end_.pattern, segment, pos, spans, 256)) > 0;) {
        model_->encode_pieces(text, spans, n, out);
        sink.flush();
        pos = spans[n - 1].second;
      }
      return;
    }
  }
  sink.flush();
}

void Encoder::encode(std::string_view text, const std::vector<SpecialPolicy>& policy, TokenSink& out) const {
  check_size(text);
  out.reserve(model_->expected_tokens(text.size()));
  split_at_specials(
      matcher_, specials_, policy, text, [&](size_t a, size_t b) { encode_ordinary(text, a, b, out); },
      [&](const SpecialToken& t, size_t a, size_t b) {
        out.buffer().push_back(Token{t.id, static_cast<uint32_t>(a), static_cast<uint32_t>(b)});
        out.flush();
      });
}

void Encoder::encode_spans(std::string_view text, const std::vector<Span>& spans, std::vector<Token>& out) const {
  check_size(text);
  for (const auto& [s, e] : spans) {
    if (s > e || e > text.size())
      throw Error(ErrorKind::kInvalidInput,
                  "piece span [" + std::to_string(s) + ", " + std::to_string(e) + ") is outside the text");
  }
  if (!spans.empty()) model_->encode_pieces(text, spans.data(), spans.size(), out);
}

template <class Out>
void Encoder::encode_each(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                          int threads, std::vector<Out>& out) const {
  out.assign(texts.size(), {});
  // Runs of consecutive texts per step of the shared counter: a batch of short lines would
  // otherwise bounce its cache line between cores per line; a few long texts still spread.
  const int workers = resolve_threads(threads);
  const size_t run = std::min<size_t>(16, texts.size() / (static_cast<size_t>(workers) * 8));
  for_chunks(texts.size(), threads, run, [&](size_t i) {
    TokenSink sink(out[i]);
    encode(texts[i], policy, sink);
  });
}

void Encoder::encode_batch(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                           int threads, std::vector<std::vector<Token>>& out) const {
  encode_each(texts, policy, threads, out);
}

void Encoder::encode_batch_ids(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                               int threads, std::vector<std::vector<uint32_t>>& out) const {
  encode_each(texts, policy, threads, out);
}

void Encoder::decode(const uint32_t* ids, size_t n, std::string& out) const {
  for (size_t i = 0; i < n; ++i) {
    const std::string* bytes = id_bytes(ids[i]);
    if (!bytes) {
      const size_t limit = std::max<size_t>(model_->id_limit(),
                                            special_by_id_.empty() ? 0 : special_by_id_.back().first + size_t{1});
      throw Error(ErrorKind::kUnknownId, "id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                                             " is not in the vocabulary (ids run from 0 to " +
                                             std::to_string(limit) + " - 1)");
    }
    out += *bytes;
  }
}

}  // namespace ciyuan
