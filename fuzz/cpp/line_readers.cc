// Fuzz target "line_readers": the native readers of lines (ciyuan/line_readers.h). Input: the first
// byte picks the reader (text lines, or JSON Lines with the field "text" or "t\u00e9"), the rest is
// the block. Properties: it never reads or writes out of bounds; when it accepts the block, the
// texts fit the room it was given, their ends rise, every text is valid UTF-8 and every line number
// is that of a line of the block, rising.
#include <string>
#include <string_view>
#include <vector>

#include "ciyuan/line_readers.h"
#include "ciyuan/utf8.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const unsigned mode = in.byte() % 3;
  const std::string field = mode == 1 ? "text" : "t\xc3\xa9";
  const std::string block(in.rest());
  // Exactly the room the contract asks for, in its own allocation: ASan sees a write past it.
  std::vector<char> out(block.size());
  std::vector<int64_t> ends, lines;
  size_t written = 0;
  const bool accepted = mode == 2 ? ciyuan::text_lines(block, 5, out.data(), &written, ends, lines)
                                   : ciyuan::jsonl_field_strings(block, field, 5, out.data(), &written, ends, lines);
  if (!accepted) return 0;
  FUZZ_CHECK(written <= block.size() && ends.size() == lines.size());
  int64_t start = 0, line = 5;
  size_t newlines = 0;
  for (const char c : block) newlines += c == '\n';
  for (size_t i = 0; i < ends.size(); ++i) {
    FUZZ_CHECK(ends[i] >= start && static_cast<size_t>(ends[i]) <= written);
    const std::string_view text(out.data() + start, static_cast<size_t>(ends[i] - start));
    FUZZ_CHECK(ciyuan::utf8::validate(text.data(), text.size()) == text.size());
    FUZZ_CHECK(lines[i] > line && static_cast<size_t>(lines[i] - 5) <= newlines + 1);
    start = ends[i];
    line = lines[i];
  }
  FUZZ_CHECK(ends.empty() ? written == 0 : static_cast<size_t>(ends.back()) == written);
  return 0;
}
