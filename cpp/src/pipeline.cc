#include "ciyuan/pipeline.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "ciyuan/errors.h"

namespace ciyuan {

namespace {
std::vector<std::pair<std::string, uint32_t>> matcher_entries(const std::vector<SpecialToken>& specials) {
  std::vector<std::pair<std::string, uint32_t>> entries;
  for (size_t i = 0; i < specials.size(); ++i)
    entries.emplace_back(specials[i].text, static_cast<uint32_t>(i));
  return entries;
}
}  // namespace

Encoder::Encoder(std::shared_ptr<const BpeModel> model, int pattern, std::vector<SpecialToken> specials,
                 bool longest_match)
    : model_(std::move(model)), pattern_(pattern), specials_(std::move(specials)),
      matcher_(matcher_entries(specials_)), longest_match_(longest_match) {
  for (const SpecialToken& s : specials_) {
    if (s.text.empty()) throw Error(ErrorKind::kModel, "a special token is the empty string");
    special_by_id_.emplace_back(s.id, &s.text);
  }
  // Sorted, not indexed by id: a special id may be anything up to 2^32 - 1.
  std::sort(special_by_id_.begin(), special_by_id_.end());
}

const std::string* Encoder::id_bytes(uint32_t id) const {
  // A special token that is also in the model has the same bytes there (the Tokenizer checks).
  if (model_->has_id(id)) return &model_->token(id);
  auto it = std::lower_bound(special_by_id_.begin(), special_by_id_.end(), std::make_pair(id, (const std::string*)nullptr));
  if (it != special_by_id_.end() && it->first == id) return it->second;
  return nullptr;
}

void Encoder::encode_ordinary(std::string_view text, size_t start, size_t end, TokenSink& sink) const {
  if (start >= end) return;
  std::vector<Token>& out = sink.buffer();
  auto piece = [&](size_t s, size_t e) {
    if (longest_match_) {
      model_->encode_piece_longest(text, s, e, out);
    } else {
      model_->encode_piece(text, s, e, out);
    }
  };
  if (pattern_ < 0) {
    piece(start, end);
    sink.flush();
    return;
  }
  // The segment ends where the next special token starts: the scanner must see that as the
  // end of the text (tiktoken scans each segment as its own string, which matters for `$`).
  std::string_view segment = text.substr(0, end);
  PreTokPattern p = static_cast<PreTokPattern>(pattern_);
  std::pair<uint32_t, uint32_t> spans[256];
  for (size_t pos = start, n; pos < end && (n = next_pieces(p, segment, pos, spans, 256)) > 0;) {
    if (!longest_match_) model_->prefetch_pieces(text, spans, n);
    for (size_t k = 0; k < n; ++k) piece(spans[k].first, spans[k].second);
    sink.flush();
    pos = spans[n - 1].second;
  }
}

void Encoder::encode(std::string_view text, const std::vector<SpecialPolicy>& policy, TokenSink& out) const {
  if (text.size() >= 0xFFFFFFFFull)  // token spans are 32-bit
    throw Error(ErrorKind::kInvalidInput, "a single text must be shorter than 4 GiB; split it (e.g. by lines)");
  // Room for the usual number of tokens up front (a token per 2 bytes covers CJK text): growing
  // the vector would copy it again and again. Reserved but untouched memory costs no RSS.
  out.reserve(text.size() / 2 + 16);
  split_at_specials(
      matcher_, specials_, policy, text, [&](size_t a, size_t b) { encode_ordinary(text, a, b, out); },
      [&](const SpecialToken& t, size_t a, size_t b) {
        out.buffer().push_back(Token{t.id, static_cast<uint32_t>(a), static_cast<uint32_t>(b)});
        out.flush();
      });
}

void Encoder::encode_spans(std::string_view text, const std::vector<std::pair<uint32_t, uint32_t>>& spans,
                           std::vector<Token>& out) const {
  if (text.size() >= 0xFFFFFFFFull)
    throw Error(ErrorKind::kInvalidInput, "a single text must be shorter than 4 GiB; split it (e.g. by lines)");
  for (const auto& [s, e] : spans) {
    if (s > e || e > text.size())
      throw Error(ErrorKind::kInvalidInput, "piece span [" + std::to_string(s) + ", " +
                                                std::to_string(e) + ") is outside the text");
    if (longest_match_) {
      model_->encode_piece_longest(text, s, e, out);
    } else {
      model_->encode_piece(text, s, e, out);
    }
  }
}

void Encoder::encode_batch(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                           int threads, std::vector<std::vector<Token>>& out) const {
  out.assign(texts.size(), {});
  parallel_for(texts.size(), threads, [&](size_t i) { encode(texts[i], policy, out[i]); });
}

void Encoder::encode_batch_ids(const std::vector<std::string_view>& texts, const std::vector<SpecialPolicy>& policy,
                               int threads, std::vector<std::vector<uint32_t>>& out) const {
  out.assign(texts.size(), {});
  parallel_for(texts.size(), threads, [&](size_t i) {
    TokenSink sink(out[i]);
    encode(texts[i], policy, sink);
  });
}

void Encoder::decode(const uint32_t* ids, size_t n, std::string& out) const {
  for (size_t i = 0; i < n; ++i) {
    const std::string* bytes = id_bytes(ids[i]);
    if (!bytes)
      throw Error(ErrorKind::kUnknownId, "id " + std::to_string(ids[i]) + " at position " +
                                             std::to_string(i) + " is not in the vocabulary (ids run from 0 to " +
                                             std::to_string(std::max<size_t>(model_->id_limit(),
                                                                     special_by_id_.empty() ? 0 : special_by_id_.back().first + size_t{1})) +
                                             " - 1)");
    out += *bytes;
  }
}

void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (static_cast<size_t>(threads) > n) threads = static_cast<int>(n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(n);  // stop handing out work
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ciyuan
