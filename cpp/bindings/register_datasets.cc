// The readers of encode-dataset's inputs (ciyuan/datasets/sources.py) that run natively.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ciyuan/jsonl.h"

namespace nb = nanobind;

namespace {

// (data, ends, lines) of a block of JSON lines (ciyuan/jsonl.h), or None when a line is not
// plain: the caller then parses the block with a JSON library.
nb::object jsonl_field_strings(nb::bytes block, const std::string& field, int64_t first_line) {
  const size_t n = block.size();
  // The texts go straight into a bytes object of the block's size, cut to size at the end.
  PyObject* data = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
  if (!data) throw nb::python_error();
  nb::object owner = nb::steal(data);
  std::vector<int64_t> ends, lines;
  size_t written = 0;
  bool plain;
  {
    nb::gil_scoped_release release;  // both bytes objects are held here and not shared yet
    plain = ciyuan::jsonl_field_strings(std::string_view(block.c_str(), n), field, first_line,
                                        PyBytes_AS_STRING(data), &written, ends, lines);
  }
  if (!plain) return nb::none();
  owner.release();
  if (_PyBytes_Resize(&data, static_cast<Py_ssize_t>(written)) != 0) throw nb::python_error();  // data freed
  owner = nb::steal(data);
  nb::list end_list, line_list;
  for (const int64_t e : ends) end_list.append(e);
  for (const int64_t l : lines) line_list.append(l);
  return nb::make_tuple(owner, end_list, line_list);
}

}  // namespace

void register_datasets(nb::module_& m) {
  m.def("jsonl_field_strings", &jsonl_field_strings, nb::arg("block"), nb::arg("field"), nb::arg("first_line"),
        "(data, ends, lines) of a block of JSON lines: each non-blank line's string `field` as UTF-8, "
        "document i being data[ends[i - 1]:ends[i]], on line lines[i] (first_line + 1 for the block's "
        "first); None unless every line is a plain object holding the field once as a string "
        "(see cpp/include/ciyuan/jsonl.h).");
}
