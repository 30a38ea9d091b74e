// Fuzz target "pretokenize": every pre-tokenizer scanner on any bytes (the scanners promise never
// to read out of bounds, invalid UTF-8 included). Input: one byte picks the pattern, the rest is
// the text. Properties: pieces are non-empty, in order and inside the text; the contiguous
// patterns cover the text exactly; next_piece and next_pieces find the pieces split_pieces finds;
// every SIMD level this CPU has (the block scanners) finds the scalar scanner's pieces.
#include <utility>
#include <vector>

#include "ciyuan/cpu_features.h"
#include "ciyuan/pretokenize.h"
#include "fuzz_input.h"

using ciyuan::PreTokPattern;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  static const PreTokPattern kPatterns[] = {PreTokPattern::GPT2,       PreTokPattern::CL100K, PreTokPattern::O200K,
                                            PreTokPattern::WORD_PUNCT, PreTokPattern::WHITESPACE,
                                            PreTokPattern::LLAMA3,     PreTokPattern::QWEN2};
  const PreTokPattern p = kPatterns[in.byte() % 7];
  // Copied to a buffer of its own size, so ASan sees a read one past the text's end.
  const std::string_view rest = in.rest();
  std::vector<char> buf(rest.begin(), rest.end());
  const std::string_view text(buf.data(), buf.size());

  std::vector<std::pair<uint32_t, uint32_t>> pieces;
  ciyuan::split_pieces(p, text, pieces);
  const bool contiguous = p != PreTokPattern::WORD_PUNCT && p != PreTokPattern::WHITESPACE;
  size_t prev = 0;
  for (const auto& [s, e] : pieces) {
    FUZZ_CHECK(s < e && e <= text.size());
    FUZZ_CHECK(contiguous ? s == prev : s >= prev);
    prev = e;
  }
  if (contiguous) FUZZ_CHECK(prev == text.size());

  // One piece at a time.
  size_t pos = 0, k = 0, s, e;
  while (ciyuan::next_piece(p, text, pos, &s, &e)) {
    FUZZ_CHECK(k < pieces.size() && pieces[k].first == s && pieces[k].second == e);
    ++k;
    pos = e;
  }
  FUZZ_CHECK(k == pieces.size());

  // In batches of a size the input does not choose (3: several calls even for short texts).
  std::pair<uint32_t, uint32_t> batch[3];
  pos = 0, k = 0;
  while (size_t n = ciyuan::next_pieces(p, text, pos, batch, 3)) {
    for (size_t i = 0; i < n; ++i, ++k) FUZZ_CHECK(k < pieces.size() && pieces[k] == batch[i]);
    pos = batch[n - 1].second;
  }
  FUZZ_CHECK(k == pieces.size());

  // The same pieces at every SIMD level up to the best (the process-wide level is put back).
  const ciyuan::SimdLevel was = ciyuan::simd_level();
  for (int level = 0; level <= static_cast<int>(ciyuan::best_simd_level()); ++level) {
    ciyuan::set_simd_level(static_cast<ciyuan::SimdLevel>(level));
    std::vector<std::pair<uint32_t, uint32_t>> at_level;
    ciyuan::split_pieces(p, text, at_level);
    FUZZ_CHECK(at_level == pieces);
  }
  ciyuan::set_simd_level(was);
  return 0;
}
