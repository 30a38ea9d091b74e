// Fuzz target "special": the special-token matcher (a trie over the special tokens' texts) against
// a plain search. Input: up to 8 tokens (length-prefixed), then the text. Properties: find()
// reports the leftmost match, and there the longest token, as a plain scan over all tokens does;
// match_at() agrees at every position.
#include <string>
#include <utility>
#include <vector>

#include "ciyuan/special.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  std::vector<std::pair<std::string, uint32_t>> tokens;
  const size_t count = in.byte() % 9;
  for (size_t i = 0; i < count; ++i) {
    std::string t = in.bytes(12);
    if (!t.empty()) tokens.emplace_back(std::move(t), static_cast<uint32_t>(tokens.size()));
  }
  const std::string text(in.rest());
  const ciyuan::SpecialMatcher matcher(tokens);

  // The longest token starting at pos (0 if none).
  auto longest_at = [&](size_t pos) {
    size_t best = 0;
    for (const auto& [t, idx] : tokens)
      if (t.size() > best && text.compare(pos, t.size(), t) == 0) best = t.size();
    return best;
  };
  for (size_t pos = 0; pos <= text.size(); ++pos) {
    uint32_t index = 0;
    const size_t len = matcher.match_at(text, pos, &index);
    FUZZ_CHECK(len == longest_at(pos));
    if (len) FUZZ_CHECK(index < tokens.size() && tokens[index].first == text.substr(pos, len));
  }
  size_t pos = 0, s, e;
  uint32_t index;
  while (matcher.find(text, pos, &s, &e, &index)) {
    FUZZ_CHECK(s >= pos && e <= text.size() && e > s);
    for (size_t q = pos; q < s; ++q) FUZZ_CHECK(longest_at(q) == 0);
    FUZZ_CHECK(e - s == longest_at(s));
    pos = e;
  }
  for (size_t q = pos; q < text.size(); ++q) FUZZ_CHECK(longest_at(q) == 0);
  return 0;
}
