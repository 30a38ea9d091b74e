// Fuzz target "spm_normalizer": SentencePiece's normalizer with a charsmap from the input (a
// .model file's precompiled map is untrusted bytes). Input: one byte of options, a charsmap of up
// to 255 bytes, the rest is text (valid UTF-8). A corrupt charsmap must be refused with
// ciyuan::Error; a charsmap accepted must normalize any text with an alignment that is in range
// and never goes back.
#include <string>
#include <vector>

#include "ciyuan/errors.h"
#include "ciyuan/spm_normalizer.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t o = in.byte();
  ciyuan::SpmNormalizerOptions options;
  options.add_dummy_prefix = o & 1;
  options.remove_extra_whitespaces = o & 2;
  options.escape_whitespaces = o & 4;
  options.treat_whitespace_as_suffix = o & 8;
  options.split_by_whitespace = o & 16;
  if (o & 32) options.user_defined_symbols = {fuzz::valid_utf8(in.bytes(6)), fuzz::valid_utf8(in.bytes(6))};
  options.charsmap = in.bytes(255);
  const std::string text = fuzz::valid_utf8(in.rest());
  try {
    const ciyuan::SpmNormalizer normalizer(options);
    std::string out;
    std::vector<uint32_t> orig;
    normalizer.normalize(text, out, orig);
    // One entry per output byte plus the end, or none at all for a text of spaces only (as
    // sentencepiece's norm_to_orig).
    FUZZ_CHECK(orig.size() == out.size() + 1 || (orig.empty() && out.empty()));
    for (size_t k = 0; k < orig.size(); ++k) {
      FUZZ_CHECK(orig[k] <= text.size());
      if (k) FUZZ_CHECK(orig[k] >= orig[k - 1]);
    }
    std::string ids_only;
    normalizer.normalize(text, ids_only, nullptr);
    FUZZ_CHECK(ids_only == out);
  } catch (const ciyuan::Error&) {
    // a refused charsmap: what a corrupt file must get
  }
  return 0;
}
