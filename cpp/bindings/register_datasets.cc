// The readers of encode-dataset's inputs (ciyuan/datasets/sources.py) that run natively.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ciyuan/line_readers.h"

namespace nb = nanobind;

namespace {

// (data, ends, lines) of `block` read by `read` (data written into a bytes object of the block's
// size, cut to size at the end), or None when `read` refuses the block.
template <class Read>
nb::object read_block(nb::bytes block, const Read& read) {
  const size_t n = block.size();
  PyObject* data = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
  if (!data) throw nb::python_error();
  nb::object owner = nb::steal(data);
  std::vector<int64_t> ends, lines;
  size_t written = 0;
  bool done;
  {
    nb::gil_scoped_release release;  // both bytes objects are held here and not shared yet
    done = read(std::string_view(block.c_str(), n), PyBytes_AS_STRING(data), &written, ends, lines);
  }
  if (!done) return nb::none();
  owner.release();
  if (_PyBytes_Resize(&data, static_cast<Py_ssize_t>(written)) != 0) throw nb::python_error();  // data freed
  owner = nb::steal(data);
  nb::list end_list, line_list;
  for (const int64_t e : ends) end_list.append(e);
  for (const int64_t l : lines) line_list.append(l);
  return nb::make_tuple(owner, end_list, line_list);
}

nb::object jsonl_field_strings(nb::bytes block, const std::string& field, int64_t first_line) {
  return read_block(block, [&](std::string_view b, char* out, size_t* written, std::vector<int64_t>& ends,
                               std::vector<int64_t>& lines) {
    return ciyuan::jsonl_field_strings(b, field, first_line, out, written, ends, lines);
  });
}

nb::object text_lines(nb::bytes block, int64_t first_line) {
  return read_block(block, [&](std::string_view b, char* out, size_t* written, std::vector<int64_t>& ends,
                               std::vector<int64_t>& lines) {
    return ciyuan::text_lines(b, first_line, out, written, ends, lines);
  });
}

}  // namespace

void register_datasets(nb::module_& m) {
  m.def("jsonl_field_strings", &jsonl_field_strings, nb::arg("block"), nb::arg("field"), nb::arg("first_line"),
        "(data, ends, lines) of a block of JSON lines: each non-blank line's string `field` as UTF-8, "
        "document i being data[ends[i - 1]:ends[i]], on line lines[i] (first_line + 1 for the block's "
        "first); None unless every line is a plain object holding the field once as a string "
        "(see cpp/include/ciyuan/line_readers.h).");
  m.def("text_lines", &text_lines, nb::arg("block"), nb::arg("first_line"),
        "(data, ends, lines) of a block of text, a document per non-empty line (a \\r before the line "
        "break dropped), as jsonl_field_strings gives them; None when the block is not valid UTF-8.");
}
