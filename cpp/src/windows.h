// Long pieces merged window by window (BpeModel::encode_piece_windowed, SpmBpeModel::merge_word).
//
// When a merge's rank depends only on the token it makes (tiktoken's ranks, a merges list that
// makes each token once, SentencePiece's scores), a list of tokens is the encoding of its text
// exactly when each two neighbours are the encoding of their own text: no merge of the whole
// crosses a seam whose two tokens merge to themselves (the property github/rust-gems' bpe crate
// builds on). So the tokens so far (`out`, the encoding of the text before the window) and a
// window's tokens are joined where the seam's two tokens fit; where they do not, the k tokens on
// each side of the seam are merged again as one span, k = 1, 2, 4..., until the span fits the
// tokens beside it on both sides (k reaching both ends always does). Real seams settle at
// k = 1 or 2, so the work stays linear and the memory a window's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace ciyuan {

// The window size to use: `fallback`, or CIYUAN_BPE_WINDOW's value when set (read when a model is
// made; tests set a small window to put many seams in short texts).
inline size_t window_from_env(size_t fallback) {
  const char* env = std::getenv("CIYUAN_BPE_WINDOW");
  return env ? static_cast<size_t>(std::max<long>(1, std::atol(env))) : fallback;
}

// A window starts this many tokens back: a seam inside a token's text would start the window's
// tokens out of step with out's (one letter repeated: every later token off by a letter), to be
// mended at each seam at the cost of a window.
constexpr size_t kTokensTakenBack = 8;

// Takes out's last few tokens back (those after `first`, where the piece's tokens begin); returns
// where the next window's text starts (`pos` when none are left to take).
template <class Tok>
uint32_t take_back(std::vector<Tok>& out, size_t first, uint32_t pos) {
  if (out.size() <= first) return pos;
  const size_t back = std::min(kTokensTakenBack, out.size() - first);
  const uint32_t from = out[out.size() - back].start;
  out.resize(out.size() - back);
  return from;
}

// Appends a window's tokens to out's (a piece's tokens from `first`), mending the seam.
// merge(s, e, into) sets `into` to the tokens of text[s, e); fits(a, b) says whether two adjacent
// tokens are the tokens of their own text. Tokens have `start` and `end`.
template <class Tok, class Merge, class Fits>
void join_window(std::vector<Tok>& out, size_t first, const std::vector<Tok>& window, std::vector<Tok>& middle,
                 const Merge& merge, const Fits& fits) {
  size_t kept_from = 0;  // the window's tokens before this one were merged again with out's
  if (out.size() > first && !fits(out.back(), window.front())) {
    for (size_t k = 1;; k *= 2) {
      const size_t left = std::min(k, out.size() - first), right = std::min(k, window.size());
      merge(out[out.size() - left].start, window[right - 1].end, middle);
      const bool left_ok = left == out.size() - first || fits(out[out.size() - left - 1], middle.front());
      const bool right_ok = right == window.size() || fits(middle.back(), window[right]);
      if (left_ok && right_ok) {
        out.resize(out.size() - left);
        out.insert(out.end(), middle.begin(), middle.end());
        kept_from = right;
        break;
      }
    }
  }
  out.insert(out.end(), window.begin() + static_cast<std::ptrdiff_t>(kept_from), window.end());
}

}  // namespace ciyuan
