// Segmentation in bulk (see segment_batch.h): long texts in chunks, ordered batches on worker
// threads, whole files into one buffer.
#include "ciyuan/segment_batch.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "ciyuan/errors.h"
#include "ciyuan/parallel.h"
#include "ciyuan/utf8.h"

namespace ciyuan {
namespace segment {

size_t chunk_end(std::string_view text, size_t a) {
  constexpr size_t kChunk = 128 << 10;
  if (text.size() - a <= 2 * kChunk) return text.size();
  size_t c = a + kChunk;
  while (c < text.size() && text[c] != '\n' && text[c] != ' ' && text[c] != '\t') ++c;
  return c < text.size() ? c + 1 : text.size();
}

void cut_batch(const DictionaryIndex& index, const std::vector<std::string_view>& texts, const Options& options,
               int threads, const Blocking& blocking,
               const std::function<void(size_t, const std::vector<Piece>&)>& consume) {
  const size_t n = texts.size();
  const size_t workers = std::min(static_cast<size_t>(resolve_threads(threads) - 1), n / 2);
  if (workers == 0) {
    Segmenter segmenter(index, options);
    std::vector<Piece> pieces;
    for (size_t i = 0; i < n; ++i) {
      pieces.clear();
      if (texts[i].size() < kShortText) {
        segmenter.run(texts[i], pieces);
      } else {
        run_blocking(blocking, [&] { segmenter.run(texts[i], pieces); });
      }
      consume(i, pieces);
    }
    return;
  }
  std::vector<std::vector<Piece>> pieces(n);
  std::unique_ptr<std::atomic<uint8_t>[]> ready(new std::atomic<uint8_t>[n]);  // 1: done, 2: failed
  for (size_t i = 0; i < n; ++i) ready[i].store(0, std::memory_order_relaxed);
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable done;
  std::exception_ptr error;
  auto work = [&] {
    Segmenter segmenter(index, options);
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      uint8_t state = 1;
      try {
        segmenter.run(texts[i], pieces[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        // Stop handing out work: the caller stops at the first failed text, and every text
        // before it has been handed out already (in order), so none is waited for in vain.
        next.store(n);
        state = 2;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        ready[i].store(state, std::memory_order_release);
      }
      done.notify_one();
    }
  };
  std::vector<std::thread> pool;
  // Stops and joins the workers however this function is left (consume may throw).
  struct Join {
    std::vector<std::thread>& pool;
    std::atomic<size_t>& next;
    size_t n;
    const Blocking& blocking;
    ~Join() {
      next.store(n);
      run_blocking(blocking, [this] {
        for (std::thread& t : pool) t.join();
      });
    }
  } join{pool, next, n, blocking};
  for (size_t t = 0; t < workers; ++t) pool.emplace_back(work);
  for (size_t i = 0; i < n; ++i) {
    if (ready[i].load(std::memory_order_acquire) == 0) {
      run_blocking(blocking, [&] {
        std::unique_lock<std::mutex> lock(mutex);
        done.wait(lock, [&] { return ready[i].load(std::memory_order_acquire) != 0; });
      });
    }
    if (ready[i].load(std::memory_order_acquire) == 2) {
      std::lock_guard<std::mutex> lock(mutex);
      std::rethrow_exception(error);
    }
    consume(i, pieces[i]);
    std::vector<Piece>().swap(pieces[i]);  // done with: the batch's words need not all be held at once
  }
}

void segment_lines(const DictionaryIndex& index, std::string_view text, const Options& options, int threads,
                   const std::function<char*(size_t)>& allocate) {
  // Chunks of whole lines, about 256 KB each, segmented in parallel and joined in order.
  std::vector<std::pair<size_t, size_t>> chunks;
  const size_t target = 256 * 1024;
  for (size_t a = 0; a < text.size();) {
    size_t b = std::min(text.size(), a + target);
    if (b < text.size()) {
      const size_t nl = text.find('\n', b);
      b = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    chunks.emplace_back(a, b);
    a = b;
  }
  // A chunk's output is at most twice its bytes (a space after every byte) plus a newline per
  // line: each thread writes into a buffer that large, with no bounds checks per word.
  // Each chunk is checked for valid UTF-8 by its own thread (chunks end at line ends, so a
  // character never straddles two); the first bad byte of the text is the smallest found.
  const char* const text_end = text.data() + text.size();
  std::vector<std::unique_ptr<char[]>> parts(chunks.size());
  std::vector<size_t> sizes(chunks.size(), 0);
  std::vector<size_t> bad(chunks.size(), SIZE_MAX);
  parallel_for(chunks.size(), threads, [&](size_t c) {
    std::vector<Piece> pieces;
    Segmenter seg(index, options);
    size_t a = chunks[c].first;
    const size_t end = chunks[c].second;
    const size_t valid = utf8::validate(text.data() + a, end - a);
    if (valid != end - a) {
      bad[c] = a + valid;
      return;
    }
    parts[c].reset(new char[3 * (end - a) + 16]);
    char* o = parts[c].get();
    char* w = o;
    while (a < end) {
      size_t nl = text.find('\n', a);
      if (nl == std::string_view::npos || nl >= end) nl = end;
      const std::string_view line = text.substr(a, nl - a);
      pieces.clear();
      seg.run(line, pieces);
      char* const line_start = w;
      for (const Piece& p : pieces) {
        const size_t len = p.end - p.start;
        if (p.id == Piece::kSpace) continue;  // whitespace words
        if (w != line_start) *w++ = ' ';
        const char* src = line.data() + p.start;
        // Words are short: one fixed 16-byte copy (the buffer has 16 bytes of slack) instead
        // of a call to memcpy, where the text has 16 bytes left to read.
        if (len <= 16 && src + 16 <= text_end) {
          std::memcpy(w, src, 16);
        } else {
          std::memcpy(w, src, len);
        }
        w += len;
      }
      *w++ = '\n';
      a = nl + 1;
    }
    sizes[c] = static_cast<size_t>(w - o);
  });
  const size_t first_bad = bad.empty() ? SIZE_MAX : *std::min_element(bad.begin(), bad.end());  // empty text: none
  if (first_bad != SIZE_MAX)
    throw Error(ErrorKind::kInvalidInput, "invalid UTF-8 at byte " + std::to_string(first_bad));
  size_t total = 0;
  for (size_t z : sizes) total += z;
  char* dst = allocate(total);
  if (!dst) return;
  for (size_t c = 0; c < parts.size(); ++c) {
    std::memcpy(dst, parts[c].get(), sizes[c]);
    dst += sizes[c];
  }
}

}  // namespace segment
}  // namespace ciyuan
