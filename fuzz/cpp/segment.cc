// Fuzz target "segment": the Chinese word segmenter with a dictionary parsed from the input.
// Input: one byte of options, a dictionary file of up to 255 bytes (parse_dictionary: bad lines
// are reported, never a crash), the rest is the text (valid UTF-8). Properties, for every method:
// the words are in order, non-empty and inside the text, and with the default options they cover
// it exactly (the baseline drops whitespace, so there they only stay in order).
#include <string>
#include <vector>

#include "ciyuan/segment.h"
#include "fuzz_input.h"

namespace sg = ciyuan::segment;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t o = in.byte();
  const std::string file = in.bytes(255);
  const std::string text = fuzz::valid_utf8(in.rest());

  std::vector<sg::DictionaryEntry> entries;
  std::vector<sg::DictionaryLineError> errors;
  sg::parse_dictionary(file, entries, errors);
  for (const auto& e : errors) FUZZ_CHECK(e.line >= 1 && !e.message.empty());
  sg::Dictionary dict;
  for (const auto& e : entries) {
    const std::string word = fuzz::valid_utf8(e.word);  // the Python reader checks UTF-8 first
    if (!word.empty()) dict.add(word, e.freq, e.has_freq);
  }
  if ((o & 64) && !entries.empty()) dict.remove(fuzz::valid_utf8(entries[0].word));
  const auto index = dict.index();

  sg::Options options;
  options.method = static_cast<sg::Method>(o & 3);
  options.baseline = o & 4;
  options.max_word_len = (o >> 3) & 7;  // 0: the dictionary's longest word
  sg::Segmenter segmenter(*index, options);
  std::vector<sg::Piece> pieces;
  segmenter.run(text, pieces);
  size_t prev = 0;
  for (const auto& p : pieces) {
    FUZZ_CHECK(p.start < p.end && p.end <= text.size());
    FUZZ_CHECK(options.baseline ? p.start >= prev : p.start == prev);
    prev = p.end;
  }
  if (!options.baseline) FUZZ_CHECK(prev == text.size());
  return 0;
}
