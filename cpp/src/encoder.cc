// The native encoder (see encoder.h): special tokens, the front end, batches over threads.
#include "ciyuan/encoder.h"

#include <algorithm>

#include "ciyuan/errors.h"
#include "ciyuan/parallel.h"
#include "ciyuan/spm_normalizer.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {
// The tokens of one matcher: those whose pass flags (kAddedRaw, kAddedSecond) are `pass`.
std::vector<std::pair<std::string, uint32_t>> matcher_entries(const std::vector<SpecialToken>& specials, uint8_t pass) {
  std::vector<std::pair<std::string, uint32_t>> entries;
  for (size_t i = 0; i < specials.size(); ++i)
    if ((specials[i].flags & (kAddedRaw | kAddedSecond)) == pass)
      entries.emplace_back(specials[i].text, static_cast<uint32_t>(i));
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

namespace {
// The calling thread's scratch ids for counting (TokenSink(size_t&)).
std::vector<uint32_t>& thread_count_ids() {
  static thread_local std::vector<uint32_t> ids;
  return ids;
}
}  // namespace

TokenSink::TokenSink(size_t& count) : ids_(&thread_count_ids()), buffer_(&thread_tokens()), count_(&count) {
  buffer_->clear();
  ids_->clear();
}

TokenSink::~TokenSink() {
  // Keep no huge buffer alive in the thread after a long text.
  if (ids_ && buffer_->capacity() > (size_t{1} << 20)) std::vector<Token>().swap(*buffer_);
  if (count_ && ids_->capacity() > (size_t{1} << 20)) std::vector<uint32_t>().swap(*ids_);
}

Encoder::Encoder(std::shared_ptr<const TokenModel> model, FrontEnd front_end, std::vector<SpecialToken> specials)
    : model_(std::move(model)), front_end_(front_end), bert_(front_end.bert), specials_(std::move(specials)),
      matcher_(matcher_entries(specials_, 0)),
      added_raw_(matcher_entries(specials_, kAddedRaw)),
      added_second_(matcher_entries(specials_, kAddedSecond)) {
  if (!model_) throw Error(ErrorKind::kModel, "the encoder needs a model");
  if (front_end_.kind == FrontEndKind::kSentencePiece && !front_end_.spm)
    throw Error(ErrorKind::kModel, "a SentencePiece front end needs its normalizer");
  for (const SpecialToken& s : specials_) {
    if (s.text.empty()) throw Error(ErrorKind::kModel, "a special token is the empty string");
    if ((s.flags & kAddedRaw) && (s.flags & kAddedSecond))
      throw Error(ErrorKind::kModel, "the added token '" + s.text + "' is in both passes");
    if ((s.flags & ~(kAddedRaw | kAddedSecond)) && !(s.flags & (kAddedRaw | kAddedSecond)))
      throw Error(ErrorKind::kModel, "the special token '" + s.text + "' has an added token's flags but no pass");
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

// What the encode path asks of the model, one struct per way of encoding; each has
//   pieces(text, spans, n, out)          the tokens of n pieces (spans of `text`)
//   bert(bert, text, start, end, out)    the tokens of the words the BERT front end makes.
// encode_ordinary is written once over them; the plain call inlines to the model's own calls.
namespace {
struct PlainCall {
  // Plain encoding of ids only may skip the Tokens (TokenModel::encode_pieces_ids).
  static constexpr bool kIdsPath = true;
  const TokenModel& model;
  void pieces(std::string_view text, const Span* spans, size_t n, std::vector<Token>& out) const {
    model.encode_pieces(text, spans, n, out);
  }
  void pieces_ids(std::string_view text, const Span* spans, size_t n, std::vector<uint32_t>& ids,
                  std::vector<Token>& scratch) const {
    model.encode_pieces_ids(text, spans, n, ids, scratch);
  }
  void bert(const BertFrontEnd& bert, std::string_view text, size_t start, size_t end, std::vector<Token>& out) const {
    model.encode_bert(bert, text, start, end, out);
  }
};

struct SampleCall {
  static constexpr bool kIdsPath = false;
  const TokenModel& model;
  const SampleOptions& options;
  Rng& rng;
  void pieces(std::string_view text, const Span* spans, size_t n, std::vector<Token>& out) const {
    model.sample_pieces(text, spans, n, options, rng, out);
  }
  // Each BERT word is sampled as a piece of its own.
  void bert(const BertFrontEnd& front, std::string_view text, size_t start, size_t end, std::vector<Token>& out) const {
    encode_bert_words(front, text, start, end, out, [this](const char* w, size_t n, uint32_t offset, std::vector<Token>& o) {
      const size_t first = o.size();
      const Span word{0, static_cast<uint32_t>(n)};
      model.sample_pieces(std::string_view(w, n), &word, 1, options, rng, o);
      for (size_t k = first; k < o.size(); ++k) {
        o[k].start += offset;
        o[k].end += offset;
      }
    });
  }
};

// The k best segmentations of the one piece of a text. They are written to `out` one after
// another (lengths in `lengths`), so that a front end that maps spans back to the original text
// maps them all; encode_nbest cuts them apart afterwards.
struct NbestCall {
  static constexpr bool kIdsPath = false;
  const TokenModel& model;
  size_t k;
  std::vector<size_t>& lengths;
  std::vector<float>& scores;
  mutable size_t seen = 0;  // pieces so far
  void pieces(std::string_view text, const Span* spans, size_t n, std::vector<Token>& out) const {
    seen += n;
    if (seen > 1)
      throw Error(ErrorKind::kModel, "n-best segmentations are of a text that is one piece, but the pre-tokenizer cut "
                                     "this text into several; use a tokenizer without a pre-tokenizer "
                                     "(SentencePiece's), or ask for the n best of each piece");
    std::vector<std::vector<Token>> paths;
    model.nbest_piece(text, spans[0], k, paths, scores);
    for (const std::vector<Token>& p : paths) {
      out.insert(out.end(), p.begin(), p.end());
      lengths.push_back(p.size());
    }
  }
  void bert(const BertFrontEnd&, std::string_view, size_t, size_t, std::vector<Token>&) const {
    throw Error(ErrorKind::kModel, "n-best segmentations do not run behind the BERT front end (it cuts text into words)");
  }
};
}  // namespace

namespace {
// SentencePiece: text[start, end) normalized, the model on the normalized text as one piece,
// each token's span mapped back to the original bytes (sentencepiece's norm_to_orig). With
// `ids_only` the spans are never read: neither the alignment nor the mapping is made (the
// model's own spans, within the normalized text, stay as the model needs them).
struct SpmScratch {
  std::string normalized;
  std::vector<uint32_t> orig;
};
// The calling thread's buffers. Not inlined, as thread_tokens: one thread-local lookup per call.
__attribute__((noinline)) SpmScratch& spm_scratch() {
  static thread_local SpmScratch scratch;
  return scratch;
}

template <class Call>
void encode_sentencepiece(const Call& call, const SpmNormalizer& spm, std::string_view text, size_t start, size_t end,
                          bool ids_only, std::vector<Token>& out) {
  SpmScratch& scratch = spm_scratch();
  std::string& normalized = scratch.normalized;
  std::vector<uint32_t>& orig = scratch.orig;
  spm.normalize(text.substr(start, end - start), normalized, ids_only ? nullptr : &orig);
  if (normalized.empty()) return;
  const Span piece{0, static_cast<uint32_t>(normalized.size())};
  const size_t first = out.size();
  call.pieces(normalized, &piece, 1, out);
  if (!ids_only) {
    const uint32_t base = static_cast<uint32_t>(start);
    const SpmNormalizerOptions& o = spm.options();
    // Hugging Face (hf_offsets): a token of the dummy prefix alone ends where the first
    // character does (the prefix is aligned to that character's span).
    const size_t prefix = o.hf_offsets && o.add_dummy_prefix && !o.treat_whitespace_as_suffix
                              ? (o.escape_whitespaces ? 3 : 1) : 0;
    uint32_t prefix_end = 0;
    if (prefix && normalized.size() >= prefix) {
      size_t next = prefix;
      if (next < normalized.size()) next += utf8::lead_length(static_cast<unsigned char>(normalized[next]));
      prefix_end = orig[std::min(next, normalized.size())];
    }
    // Byte-fallback tokens of one character share its span: as sentencepiece, all but the last
    // get the empty span at its start. Hugging Face gives each the whole character's span (a
    // byte token's span widened to the character it is in).
    auto is_inner = [&](size_t b) {
      return b < normalized.size() && (static_cast<unsigned char>(normalized[b]) & 0xC0) == 0x80;
    };
    for (size_t k = first; k < out.size(); ++k) {
      const bool split = !o.hf_offsets && k + 1 < out.size() && out[k + 1].start == out[k].start &&
                         out[k + 1].end == out[k].end;
      size_t s = out[k].start, e = out[k].end;
      if (o.hf_offsets) {
        while (s > 0 && is_inner(s)) --s;
        while (is_inner(e)) ++e;
      }
      out[k].start = base + orig[s];
      out[k].end = split ? out[k].start : base + (prefix && s == 0 && e <= prefix ? prefix_end : orig[e]);
    }
  }
  // Keep no huge buffers alive in the thread after a long text.
  if (normalized.capacity() > (size_t{1} << 22)) {
    std::string().swap(normalized);
    std::vector<uint32_t>().swap(orig);
  }
}
}  // namespace


template <class Call>
void Encoder::encode_ordinary(std::string_view text, size_t start, size_t end, TokenSink& sink,
                              const Call& call) const {
  if (start >= end) return;
  std::vector<Token>& out = sink.buffer();
  switch (front_end_.kind) {
    case FrontEndKind::kSentencePiece:
      encode_sentencepiece(call, *front_end_.spm, text, start, end, sink.ids_only(), out);
      break;
    case FrontEndKind::kNone: {
      const Span piece{static_cast<uint32_t>(start), static_cast<uint32_t>(end)};
      call.pieces(text, &piece, 1, out);
      break;
    }
    case FrontEndKind::kBert:
      call.bert(bert_, text, start, end, out);
      break;
    case FrontEndKind::kPattern: {
      // The segment ends where the next special token starts: the scanner must see that as the
      // end of the text (tiktoken scans each segment as its own string, which matters for `$`).
      const std::string_view segment = text.substr(0, end);
      Span spans[256];
      if constexpr (Call::kIdsPath) {
        if (std::vector<uint32_t>* ids = sink.ids()) {
          sink.flush();  // what came before (a special token) goes first
          for (size_t pos = start, n; pos < end && (n = next_pieces(front_end_.pattern, segment, pos, spans, 256)) > 0;) {
            call.pieces_ids(text, spans, n, *ids, sink.buffer());
            sink.flush();  // counting: the batch's ids are counted and dropped (else nothing to do)
            pos = spans[n - 1].second;
          }
          return;
        }
      }
      for (size_t pos = start, n; pos < end && (n = next_pieces(front_end_.pattern, segment, pos, spans, 256)) > 0;) {
        call.pieces(text, spans, n, out);
        sink.flush();
        pos = spans[n - 1].second;
      }
      return;
    }
  }
  sink.flush();
}

template <class Ordinary, class Added>
void Encoder::split_at_added_tokens(std::string_view text, size_t start, size_t end, Ordinary&& ordinary,
                                    Added&& added) const {
  if (added_raw_.empty() && added_second_.empty()) {
    ordinary(start, end);
    return;
  }
  split_at_added(
      added_raw_, specials_, text, start, end,
      [&](size_t a, size_t b) {
        if (added_second_.empty()) {
          ordinary(a, b);
        } else {
          split_at_added(added_second_, specials_, text, a, b, ordinary, added);
        }
      },
      added);
}

template <class Call>
void Encoder::encode_with(std::string_view text, const std::vector<SpecialPolicy>& policy, TokenSink& out,
                          const Call& call) const {
  check_size(text);
  out.reserve(model_->expected_tokens(text.size()));
  auto special = [&](const SpecialToken& t, size_t a, size_t b) {
    out.buffer().push_back(Token{t.id, static_cast<uint32_t>(a), static_cast<uint32_t>(b)});
    out.flush();
  };
  split_at_specials(
      matcher_, specials_, policy, text,
      [&](size_t a, size_t b) {
        split_at_added_tokens(text, a, b, [&](size_t c, size_t d) { encode_ordinary(text, c, d, out, call); },
                              special);
      },
      special);
}

void Encoder::encode(std::string_view text, const std::vector<SpecialPolicy>& policy, TokenSink& out) const {
  encode_with(text, policy, out, PlainCall{*model_});
}

void Encoder::encode_sampled(std::string_view text, const std::vector<SpecialPolicy>& policy,
                             const SampleOptions& options, uint64_t seed, TokenSink& out) const {
  Rng rng = sample_rng(seed, 0);
  encode_sampled(text, policy, options, rng, out);
}

void Encoder::encode_sampled(std::string_view text, const std::vector<SpecialPolicy>& policy,
                             const SampleOptions& options, Rng& rng, TokenSink& out) const {
  encode_with(text, policy, out, SampleCall{*model_, options, rng});
}

namespace {
void check_spans(std::string_view text, const std::vector<Span>& spans) {
  check_size(text);
  for (const auto& [s, e] : spans) {
    if (s > e || e > text.size())
      throw Error(ErrorKind::kInvalidInput,
                  "piece span [" + std::to_string(s) + ", " + std::to_string(e) + ") is outside the text");
  }
}
}  // namespace

void Encoder::encode_spans(std::string_view text, const std::vector<Span>& spans, std::vector<Token>& out) const {
  check_spans(text, spans);
  if (!spans.empty()) model_->encode_pieces(text, spans.data(), spans.size(), out);
}

void Encoder::encode_spans_sampled(std::string_view text, const std::vector<Span>& spans, const SampleOptions& options,
                                   Rng& rng, std::vector<Token>& out) const {
  check_spans(text, spans);
  if (!spans.empty()) model_->sample_pieces(text, spans.data(), spans.size(), options, rng, out);
}

namespace {
// Cuts the segmentations NbestCall wrote one after another apart; none at all (an empty text)
// is one empty segmentation.
void split_paths(std::vector<Token>& flat, const std::vector<size_t>& lengths, std::vector<std::vector<Token>>& paths,
                 std::vector<float>& scores) {
  paths.clear();
  if (lengths.empty()) {
    paths.emplace_back();
    scores.assign(1, 0.0f);
    return;
  }
  size_t at = 0;
  for (size_t len : lengths) {
    paths.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(at), flat.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
  }
}

void check_k(size_t k) {
  if (k == 0) throw Error(ErrorKind::kInvalidInput, "the number of segmentations k must be at least 1");
}
}  // namespace

void Encoder::encode_nbest(std::string_view text, const std::vector<SpecialPolicy>& policy, size_t k,
                           std::vector<std::vector<Token>>& paths, std::vector<float>& scores) const {
  check_k(k);
  check_size(text);
  std::vector<Token> flat;
  std::vector<size_t> lengths;
  scores.clear();
  TokenSink sink(flat);
  const NbestCall call{*model_, k, lengths, scores};
  auto special = [&](const SpecialToken& t, size_t, size_t) {
    throw Error(ErrorKind::kModel, "n-best segmentations are of ordinary text, and this text holds the special token '" +
                                       t.text + "'; encode its parts apart, or leave it out of allowed_special");
  };
  split_at_specials(
      matcher_, specials_, policy, text,
      [&](size_t a, size_t b) {
        split_at_added_tokens(text, a, b, [&](size_t c, size_t d) { encode_ordinary(text, c, d, sink, call); },
                              special);
      },
      special);
  split_paths(flat, lengths, paths, scores);
}

void Encoder::nbest_span(std::string_view text, Span span, size_t k, std::vector<std::vector<Token>>& paths,
                         std::vector<float>& scores) const {
  check_k(k);
  check_spans(text, {span});
  std::vector<Token> flat;
  std::vector<size_t> lengths;
  scores.clear();
  if (span.first < span.second) NbestCall{*model_, k, lengths, scores}.pieces(text, &span, 1, flat);
  split_paths(flat, lengths, paths, scores);
}

template <class Out, class EncodeOne>
void Encoder::encode_each(size_t count, int threads, std::vector<Out>& out, const EncodeOne& encode_one) const {
  out.assign(count, {});
  // Runs of consecutive texts per step of the shared counter: a batch of short lines would
  // otherwise bounce its cache line between cores per line; a few long texts still spread.
  const int workers = resolve_threads(threads);
  const size_t run = std::min<size_t>(16, count / (static_cast<size_t>(workers) * 8));
  for_chunks(count, threads, run, [&](size_t i) {
    TokenSink sink(out[i]);
    encode_one(i, sink);
  });
}

void Encoder::encode_batch(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                           int threads, std::vector<std::vector<Token>>& out) const {
  encode_each(texts.size(), threads, out, [&](size_t i, TokenSink& sink) { encode(texts[i], policy, sink); });
}

void Encoder::encode_sampled_batch(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                                   const SampleOptions& options, uint64_t seed, int threads,
                                   std::vector<std::vector<Token>>& out) const {
  encode_each(texts.size(), threads, out, [&](size_t i, TokenSink& sink) {
    Rng rng = sample_rng(seed, i);
    encode_with(texts[i], policy, sink, SampleCall{*model_, options, rng});
  });
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
