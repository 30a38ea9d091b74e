// The native result of one encode (EncodingData) and its conversions: id lists built from
// cached int objects, special-token policies, character offsets.
#pragma once

#include <nanobind/nanobind.h>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/utf8.h"
#include "common.h"

namespace ciyuan_bindings {

// Ids with byte spans. Python's Encoding wraps it and turns spans into character offsets only
// when asked.
struct EncodingData {
  std::vector<ciyuan::Token> tokens;
};

// Python int objects for ids, made once and shared: a list of millions of ids then costs an
// INCREF per item instead of an allocation. Only touched with the GIL held.
inline PyObject* id_object(uint32_t id) {
  constexpr uint32_t kLimit = 1u << 21;  // ids above this are rare: allocate those
  static std::vector<PyObject*> cache;
  if (id >= kLimit) return PyLong_FromUnsignedLong(id);
  if (id >= cache.size()) cache.resize(std::max<size_t>(id + 1, std::min<size_t>(cache.size() * 2, kLimit)), nullptr);
  PyObject*& slot = cache[id];
  if (!slot && !(slot = PyLong_FromUnsignedLong(id))) return nullptr;
  Py_INCREF(slot);
  return slot;
}

inline uint32_t id_of(const ciyuan::Token& t) { return t.id; }
inline uint32_t id_of(uint32_t id) { return id; }

template <class T>
nb::list id_list(const T* tokens, size_t n) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
  if (!list) throw nb::python_error();
  for (size_t i = 0; i < n; ++i) {
    PyObject* item = id_object(id_of(tokens[i]));
    if (!item) {
      Py_DECREF(list);
      throw nb::python_error();
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return nb::steal<nb::list>(list);
}

template <class T>
nb::list id_list(const std::vector<T>& tokens) {
  return id_list(tokens.data(), tokens.size());
}

// head + ids[0, n) + tail as one list (a template's special tokens around a text's ids).
inline nb::list wrapped_id_list(const std::vector<uint32_t>& head, const uint32_t* ids, size_t n,
                                const std::vector<uint32_t>& tail) {
  if (head.empty() && tail.empty()) return id_list(ids, n);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(head.size() + n + tail.size()));
  if (!list) throw nb::python_error();
  size_t at = 0;
  auto add = [&](const uint32_t* part, size_t count) {
    for (size_t k = 0; k < count; ++k) {
      PyObject* item = id_object(part[k]);
      if (!item) {
        Py_DECREF(list);
        throw nb::python_error();
      }
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(at++), item);
    }
  };
  add(head.data(), head.size());
  add(ids, n);
  add(tail.data(), tail.size());
  return nb::steal<nb::list>(list);
}

inline nb::list wrapped_id_list(const std::vector<uint32_t>& head, const std::vector<uint32_t>& ids,
                                const std::vector<uint32_t>& tail) {
  return wrapped_id_list(head, ids.data(), ids.size(), tail);
}

inline std::vector<ciyuan::SpecialPolicy> policy_from(nb::bytes policy) {
  std::vector<ciyuan::SpecialPolicy> out(policy.size());
  const char* p = policy.c_str();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<ciyuan::SpecialPolicy>(p[i]);
  return out;
}

// Character offsets of each token: the characters that contain its first and last byte.
// The tokens' character spans in `text`, after `head` and before `tail` spans (0, 0) (the
// special tokens a template puts around a text).
inline nb::list char_offsets(const std::vector<ciyuan::Token>& tokens, nb::handle text, size_t head = 0,
                             size_t tail = 0) {
  std::string_view utf8 = utf8_view(text);
  bool ascii = is_ascii(text);
  std::vector<uint32_t> char_at;  // byte -> index of the character containing it
  if (!ascii) {
    ciyuan::utf8::char_index_of_bytes(utf8.data(), utf8.size(), char_at);
  }
  // Built with the C API: positions are the cached int objects ids use, and the collector
  // stays off while the tuples are made.
  GcPause gc;
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(head + tokens.size() + tail));
  if (!list) throw nb::python_error();
  if (head || tail) {
    PyObject* zero = PyTuple_Pack(2, id_object(0), id_object(0));
    if (!zero) {
      Py_DECREF(list);
      throw nb::python_error();
    }
    Py_DECREF(PyTuple_GET_ITEM(zero, 0));  // PyTuple_Pack took its own references
    Py_DECREF(PyTuple_GET_ITEM(zero, 1));
    PyObject_GC_UnTrack(zero);
    for (size_t i = 0; i < head + tail; ++i) {
      Py_INCREF(zero);
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i < head ? i : head + tokens.size() + (i - head)), zero);
    }
    Py_DECREF(zero);
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    const ciyuan::Token& t = tokens[i];
    size_t s = t.start, e = t.end;
    if (!ascii) {
      const std::pair<uint32_t, uint32_t> chars = ciyuan::utf8::char_span(char_at, s, e);
      s = chars.first;
      e = chars.second;
    }
    PyObject* pair = PyTuple_New(2);
    PyObject* a = pair ? id_object(static_cast<uint32_t>(s)) : nullptr;
    PyObject* b = a ? id_object(static_cast<uint32_t>(e)) : nullptr;
    if (!b) {
      Py_XDECREF(a);
      Py_XDECREF(pair);
      Py_DECREF(list);
      throw nb::python_error();
    }
    PyTuple_SET_ITEM(pair, 0, a);
    PyTuple_SET_ITEM(pair, 1, b);
    // Two ints can never form a cycle: untracked, the tuple costs later collections nothing
    // (CPython untracks such tuples itself, but only when a collection first walks them).
    PyObject_GC_UnTrack(pair);
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(head + i), pair);
  }
  return nb::steal<nb::list>(list);
}

}  // namespace ciyuan_bindings
