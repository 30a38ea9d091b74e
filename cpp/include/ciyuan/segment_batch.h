// Segmentation in bulk: one long text in chunks, a batch of texts on several threads in
// order, and every line of a file into one output buffer (the command line's path).
//
// The single calls of segment.h are enough for a short text; these add what a large input
// needs: output handed over chunk by chunk (so a 26 MB text's pieces never exist at once),
// worker threads that segment ahead of a consumer that must run on the calling thread (the
// bindings turn words into Python objects there, under the GIL), and results that never depend
// on the thread count.
//
// The caller may hold a lock that other threads need (Python's GIL): every step that runs long
// or waits goes through `Blocking`, which the bindings implement by releasing the GIL around
// it. The steps are whole chunks and whole texts, never single words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/errors.h"
#include "ciyuan/segment.h"

namespace ciyuan {
namespace segment {

// Runs `step` (a long computation, or a wait for other threads). The default runs it as is; the
// bindings release the GIL around it.
using Blocking = std::function<void(const std::function<void()>& step)>;

// Runs step inside blocking (or as is when blocking is empty).
inline void run_blocking(const Blocking& blocking, const std::function<void()>& step) {
  if (blocking) {
    blocking(step);
  } else {
    step();
  }
}

// Below this many bytes a text (or chunk) is segmented without `blocking`: releasing and
// taking back the GIL would cost more than it frees.
constexpr size_t kShortText = 4096;

// The end of the chunk of `text` that starts at byte a: the whole rest when it is short, else
// about 128 KB, cut after a '\n', ' ' or '\t' (where segmentation starts afresh anyway, so the
// words of the chunks are those of one run() over the whole text).
size_t chunk_end(std::string_view text, size_t a);

// Segments `text` (valid UTF-8) chunk by chunk and hands each chunk's pieces, with offsets into
// the whole text, to consume(pieces) on the calling thread. The pieces of a 26 MB text would
// take 80 MB; a chunk's (about 500 KB, with the segmenter's scratch arrays) stay in the L2 cache
// between being written and being consumed. Chunks of a long text are segmented inside
// `blocking`. A template, so that the consumer's per-word loop (the bindings build a str per
// word) is compiled in place, with its counters in registers. A text of 4 GiB or more throws
// Error(kInvalidInput): piece offsets are 32-bit.
template <typename Consume>
void cut_chunked(const DictionaryIndex& index, std::string_view text, const Options& options,
                 const Blocking& blocking, Consume&& consume) {
  if (text.size() >= UINT32_MAX) throw Error(ErrorKind::kInvalidInput, "text too long to segment in one call (4 GB)");
  Segmenter segmenter(index, options);
  std::vector<Piece> pieces;
  for (size_t a = 0; a < text.size();) {
    const size_t b = chunk_end(text, a);
    pieces.clear();
    auto run = [&] {
      segmenter.run(text.substr(a, b - a), pieces);
      for (Piece& p : pieces) {
        p.start += static_cast<uint32_t>(a);
        p.end += static_cast<uint32_t>(a);
      }
    };
    if (b - a < kShortText) {
      run();
    } else {
      run_blocking(blocking, run);
    }
    consume(static_cast<const std::vector<Piece>&>(pieces));
    a = b;
  }
}

// Segments texts[i] for every i and hands each one's words to consume(i, pieces), in order, on
// the calling thread. With threads > 1 (<= 0: all cores), threads - 1 workers segment ahead while
// the caller consumes, so both halves of the work run at once; the caller waits (inside
// `blocking`) only when it catches up. An exception of a worker, or of consume, stops the batch
// and is rethrown here once the workers have stopped.
void cut_batch(const DictionaryIndex& index, const std::vector<std::string_view>& texts, const Options& options,
               int threads, const Blocking& blocking,
               const std::function<void(size_t, const std::vector<Piece>&)>& consume);

// Segments every line of `text` (lines end with '\n', a '\r' before it is whitespace) and writes
// the words separated by one space, one line per input line (each ended by '\n'); whitespace
// words are left out. Lines are spread over `threads` threads (<= 0: all cores); the output does
// not depend on the thread count. Invalid UTF-8 throws Error(kInvalidInput) naming the first bad
// byte. The output is written into allocate(n): a buffer of the output's n bytes that the
// caller owns (so it can be built in place, e.g. in a Python bytes object; null stops).
void segment_lines(const DictionaryIndex& index, std::string_view text, const Options& options, int threads,
                   const std::function<char*(size_t)>& allocate);

}  // namespace segment
}  // namespace ciyuan
