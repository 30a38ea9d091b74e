// Helpers shared by the binding files: str <-> UTF-8 views without copies.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ciyuan_bindings {

namespace nb = nanobind;

// The UTF-8 form of a Python str (cached inside the str object by CPython, so no copy for ASCII).
// A str that holds lone surrogates has no UTF-8 form: that raises UnicodeEncodeError, which the
// Python layer turns into its documented replacement policy.
inline std::string_view utf8_view(nb::handle text) {
  if (!PyUnicode_Check(text.ptr())) {
    std::string message = "expected str, got " + std::string(nb::type_name(text.type()).c_str());
    throw nb::type_error(message.c_str());
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (!data) throw nb::python_error();
  return std::string_view(data, static_cast<size_t>(size));
}

// bytes, or None for a null pointer (an id outside the vocabulary).
// (std::optional, so the stub says `bytes | None`.)
inline std::optional<nb::bytes> bytes_or_none(const std::string* b) {
  if (!b) return std::nullopt;
  return nb::bytes(b->data(), b->size());
}

inline bool is_ascii(nb::handle text) {
  return PyUnicode_IS_ASCII(text.ptr());
}

// Pauses Python's garbage collector while a scope builds millions of small objects (lists of
// tuples or strings): every allocation would otherwise count towards a collection pass.
struct GcPause {
#if PY_VERSION_HEX >= 0x030A0000
  int was_enabled = PyGC_Disable();
  ~GcPause() {
    if (was_enabled) PyGC_Enable();
  }
#endif
};

}  // namespace ciyuan_bindings
