// The `ciyuan._core` extension: a thin layer over the plain C++ core. Each pipeline stage
// registers its own classes; C++ errors become the exceptions of ciyuan/errors.py.
#include <nanobind/nanobind.h>

#include <cstring>

#include "ciyuan/errors.h"
#include "id_arrays.h"

namespace nb = nanobind;

void register_pre_tokenizers(nb::module_& m);
void register_models(nb::module_& m);
void register_encoder(nb::module_& m);
void register_segment(nb::module_& m);
void register_trainers(nb::module_& m);
void register_spm(nb::module_& m);
void register_datasets(nb::module_& m);

namespace {
const char* python_error_name(ciyuan::ErrorKind kind) {
  switch (kind) {
    case ciyuan::ErrorKind::kInvalidInput: return "InvalidInputError";
    case ciyuan::ErrorKind::kModel: return "ModelError";
    case ciyuan::ErrorKind::kSpecialToken: return "DisallowedSpecialTokenError";
    case ciyuan::ErrorKind::kUnknownId: return "UnknownIdError";
  }
  return "CiyuanError";
}
}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "ciyuan's native core (C++17). Use the ciyuan package, not this module.";
  // Results a script still holds in its globals at exit are freed after nanobind's own state
  // is torn down; its leak report would then name them, though nothing leaks.
  nb::set_leak_warnings(false);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ciyuan::Error& e) {
      nb::object cls = nb::module_::import_("ciyuan.errors").attr(python_error_name(e.kind()));
      // The message quotes input (a word, a token), so it may hold invalid UTF-8; PyErr_SetString
      // would then raise UnicodeDecodeError instead of the ciyuan error. Decode with U+FFFD.
      const char* what = e.what();
      PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "replace");
      if (message == nullptr) return;  // the decode's own error (out of memory) stands
      PyErr_SetObject(cls.ptr(), message);
      Py_DECREF(message);
    }
  });
  register_pre_tokenizers(m);
  register_models(m);
  register_spm(m);
  register_encoder(m);
  ciyuan_bindings::def_id_outputs(m);  // methods of the Encoder registered just above
  ciyuan_bindings::register_id_decoder(m);
  register_segment(m);
  register_trainers(m);
  register_datasets(m);
}
