// Fuzz target "bert": Hugging Face's BertNormalizer + BertPreTokenizer as the native front end
// does them. Input: one byte of options, the rest is text (made valid UTF-8: the bindings check
// it). Properties: the fast pass and the exact pass give the same words with the same original
// spans; spans lie inside the text; bert_split's spans are in order and inside the text.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ciyuan/bert.h"
#include "fuzz_input.h"

namespace {
using Word = std::tuple<std::string, uint32_t, uint32_t>;  // text, original start, original end

void collect(const ciyuan::BertWord& w, std::vector<Word>& out) {
  out.emplace_back(std::string(w.text), w.orig_start(0), w.orig_end(w.text.size()));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t o = in.byte();
  ciyuan::BertOptions options;
  options.clean_text = o & 1;
  options.handle_chinese_chars = o & 2;
  options.strip_accents = o & 4;
  options.lowercase = o & 8;
  const std::string text = fuzz::valid_utf8(in.rest());
  const ciyuan::BertFrontEnd bert(options);

  std::vector<Word> fast, exact;
  bert.each_word(
      text, 0, text.size(), [&](const ciyuan::BertWord& w) { collect(w, fast); }, [&] { fast.clear(); });
  ciyuan::BertScratch scratch;
  bert.for_each_word_exact(text, 0, text.size(), scratch, [&](const ciyuan::BertWord& w) { collect(w, exact); });
  FUZZ_CHECK(fast == exact);
  for (const auto& [w, s, e] : fast) FUZZ_CHECK(!w.empty() && s < e && e <= text.size());

  std::string normalized;
  std::vector<std::pair<uint32_t, uint32_t>> char_spans;
  bert.normalize(text, normalized, char_spans);
  for (const auto& [s, e] : char_spans) FUZZ_CHECK(s <= e && e <= text.size());

  std::vector<std::pair<uint32_t, uint32_t>> words;
  ciyuan::bert_split(text, words);
  size_t prev = 0;
  for (const auto& [s, e] : words) {
    FUZZ_CHECK(s >= prev && s < e && e <= text.size());
    prev = e;
  }
  return 0;
}
