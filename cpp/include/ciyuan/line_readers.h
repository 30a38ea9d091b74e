// encode-dataset's readers of a document per line: JSON Lines (one string field of every line's
// object) and text lines, straight into one UTF-8 buffer per block. A corpus is mostly long
// lines, and making a Python dict and str of every line only to hand the str's bytes to the
// encoder cost more time than encoding them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ciyuan {

// The documents of a block of JSON lines (split at '\n'; the last line may lack one): for each
// line that is not blank (only the bytes bytes.strip() removes: space, \t, \n, \r, \v, \f),
// the string value of `field` in the line's JSON object, written to `out` as UTF-8 (room for
// block.size() bytes: a string's text is never longer than its JSON form), its end there
// appended to `ends` and its line number (first_line + 1 for the block's first line) to
// `lines`; *written: the bytes written in all.
//
// Returns false (the outputs then in any state) unless every line is plain: a JSON object,
// strictly valid (RFC 8259, UTF-8, nesting depth <= 64) with `field` exactly once and a string,
// no escaped lone surrogate, no number with an exponent or longer than 64 characters. The
// caller then reads the block another way (a JSON library), which takes a repeated key or a
// huge number as it does and names the bad line; what this accepts, such a library reads to
// the same text.
bool jsonl_field_strings(std::string_view block, std::string_view field, int64_t first_line, char* out,
                         size_t* written, std::vector<int64_t>& ends, std::vector<int64_t>& lines);

// The documents of a block of text lines, a document per non-empty line (split at '\n'; a line
// ended by "\r\n" loses the '\r', a last line without '\n' keeps it): written to `out` (room for
// block.size() bytes), ends, line numbers and *written as jsonl_field_strings gives them. False
// when the block is not valid UTF-8 (the caller then reads it line by line, naming the bad one).
bool text_lines(std::string_view block, int64_t first_line, char* out, size_t* written, std::vector<int64_t>& ends,
                std::vector<int64_t>& lines);

}  // namespace ciyuan
