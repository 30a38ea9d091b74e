// The native result of one encode (EncodingData) and its conversions: id lists built from
// cached int objects, special-token policies, character offsets.
#pragma once

#include <nanobind/nanobind.h>
#include <structmember.h>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/unicode_tables.h"
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
constexpr uint32_t kCachedIdLimit = 1u << 21;  // ids at or above this are rare: allocate those

// The cache, covering at least ids [0, id] (id < kCachedIdLimit); entries not made yet are null.
inline std::vector<PyObject*>& id_cache(uint32_t id) {
  static std::vector<PyObject*> cache;
  if (id >= cache.size())
    cache.resize(std::max<size_t>(id + 1, std::min<size_t>(cache.size() * 2, kCachedIdLimit)), nullptr);
  return cache;
}

inline PyObject* id_object(uint32_t id) {
  if (id >= kCachedIdLimit) return PyLong_FromUnsignedLong(id);
  PyObject*& slot = id_cache(id)[id];
  if (!slot && !(slot = PyLong_FromUnsignedLong(id))) return nullptr;
  Py_INCREF(slot);
  return slot;
}

inline uint32_t id_of(const ciyuan::Token& t) { return t.id; }
inline uint32_t id_of(uint32_t id) { return id; }

// Stores in items[0, n) new references to the int objects of the ids of tokens[0, n), from
// `objects` (the id cache, already covering every one of these ids): each item is a load, an
// INCREF and a store (id_object's checks per item cost more than the item). False with a
// Python error set when an int cannot be made (the items not yet stored are untouched).
template <class T>
bool fill_cached_ids(PyObject** items, const T* tokens, size_t n, PyObject** objects) {
  // A long list's objects are scattered over the heap: start loading those a few ids ahead (and
  // the cache's entries further ahead), so that their misses overlap. A short one (a line's
  // tokens) mostly meets the frequent ids, already in cache: the prefetches would only cost.
  const bool ahead = n > 64;
  for (size_t i = 0; i < n; ++i) {
    if (ahead) {
      if (i + 32 < n) __builtin_prefetch(&objects[id_of(tokens[i + 32])]);
      if (i + 16 < n) {
        if (PyObject* next = objects[id_of(tokens[i + 16])]) __builtin_prefetch(next, 1);
      }
    }
    const uint32_t id = id_of(tokens[i]);
    PyObject* item = objects[id];
    if (!item && !(item = objects[id] = PyLong_FromUnsignedLong(id))) return false;
    Py_INCREF(item);
    items[i] = item;
  }
  return true;
}

template <class T>
uint32_t max_id_of(const T* tokens, size_t n) {
  uint32_t max_id = 0;
  for (size_t i = 0; i < n; ++i) max_id = std::max(max_id, id_of(tokens[i]));
  return max_id;
}

// head + the ids of tokens[0, n) + tail as one list (a template's special tokens around a text's
// ids; both empty: the ids alone).
template <class T>
nb::list wrapped_id_list(const std::vector<uint32_t>& head, const T* tokens, size_t n,
                         const std::vector<uint32_t>& tail) {
  const size_t nh = head.size(), nt = tail.size();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(nh + n + nt));
  if (!list) throw nb::python_error();
  PyObject** items = reinterpret_cast<PyListObject*>(list)->ob_item;
  const uint32_t max_id = std::max({max_id_of(head.data(), nh), max_id_of(tokens, n), max_id_of(tail.data(), nt)});
  bool ok = true;
  if (max_id < kCachedIdLimit) {
    PyObject** objects = id_cache(max_id).data();  // sized once for the whole list
    ok = fill_cached_ids(items, head.data(), nh, objects) && fill_cached_ids(items + nh, tokens, n, objects) &&
         fill_cached_ids(items + nh + n, tail.data(), nt, objects);
  } else {
    auto add = [&](size_t at, uint32_t id) {
      PyObject* item = ok ? id_object(id) : nullptr;
      ok = item != nullptr;
      if (ok) items[at] = item;
    };
    for (size_t i = 0; i < nh; ++i) add(i, head[i]);
    for (size_t i = 0; i < n; ++i) add(nh + i, id_of(tokens[i]));
    for (size_t i = 0; i < nt; ++i) add(nh + n + i, tail[i]);
  }
  if (!ok) {
    Py_DECREF(list);  // the items not set are null, which list_dealloc skips
    throw nb::python_error();
  }
  return nb::steal<nb::list>(list);
}

template <class T>
nb::list id_list(const T* tokens, size_t n) {
  static const std::vector<uint32_t> none;
  return wrapped_id_list(none, tokens, n, none);
}

template <class T>
nb::list id_list(const std::vector<T>& tokens) {
  return id_list(tokens.data(), tokens.size());
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

// A new (start, end) tuple of two ints, untracked by the collector: two ints can never form a
// cycle, so the tuple costs later collections nothing (CPython untracks such tuples itself, but
// only when a collection first walks them).
inline PyObject* new_pair(uint32_t s, uint32_t e) {
  PyObject* pair = PyTuple_New(2);
  PyObject* a = pair ? id_object(s) : nullptr;
  PyObject* b = a ? id_object(e) : nullptr;
  if (!b) {
    Py_XDECREF(a);
    Py_XDECREF(pair);
    return nullptr;
  }
  PyTuple_SET_ITEM(pair, 0, a);
  PyTuple_SET_ITEM(pair, 1, b);
  PyObject_GC_UnTrack(pair);
  return pair;
}

// The (start, end) tuple of an offset, shared: tuples are immutable, and the offsets of short
// texts repeat from text to text (a token of 1 to 31 characters starting before character 2048),
// so a batch's offsets cost an INCREF per token instead of an allocation, and the collector,
// which counts allocations, is not set off by them. Made on first use (at most 64K tuples,
// ~3.5 MB, over a process's life); only touched with the GIL held.
inline PyObject* offset_pair(uint32_t s, uint32_t e) {
  constexpr uint32_t kStarts = 2048, kLengths = 32;
  if (s >= kStarts || e < s || e - s >= kLengths) return new_pair(s, e);
  static std::vector<PyObject*> cache(size_t{kStarts} * kLengths, nullptr);
  PyObject*& slot = cache[size_t{s} * kLengths + (e - s)];
  if (!slot && !(slot = new_pair(s, e))) return nullptr;
  Py_INCREF(slot);
  return slot;
}

// How many spaces a token string starts and ends with, for trimming its offsets (see OffsetTrim).
struct TokenSpaces {
  uint32_t leading = 0, trailing = 0;
};

// Hugging Face's byte-level trimming of token i's character span [s, e) (processors.ByteLevel's
// process_offsets): the start moves past the token string's leading spaces and the end before
// its trailing ones, never crossing; the first token (or one starting the text) keeps a single
// leading space with add_prefix_space, the space the pre-tokenizer added.
inline void trim_span(const TokenSpaces& spaces, size_t i, bool add_prefix_space, size_t& s, size_t& e) {
  size_t leading = spaces.leading;
  const size_t trailing = spaces.trailing;
  if (leading == 1 && add_prefix_space && (i == 0 || s == 0)) leading = 0;
  if (leading) s = std::min(s + leading, e);
  if (trailing && e >= trailing) e = std::max(e - trailing, s);
}

// Character offsets of each token: the characters that contain its first and last byte.
// The tokens' character spans in `text`, after `head` and before `tail` spans (0, 0) (the
// special tokens a template puts around a text). With `trim` (one entry per token) each span
// is then trimmed as Hugging Face's byte-level post-processors do (OffsetTrim).
inline nb::list char_offsets(const std::vector<ciyuan::Token>& tokens, nb::handle text, size_t head = 0,
                             size_t tail = 0, const TokenSpaces* trim = nullptr, bool add_prefix_space = false) {
  std::string_view utf8 = utf8_view(text);
  bool ascii = is_ascii(text);
  // byte -> index of the character containing it (one buffer per thread: no allocation per text)
  static thread_local std::vector<uint32_t> char_at;
  if (!ascii) {
    ciyuan::utf8::char_index_of_bytes(utf8.data(), utf8.size(), char_at);
  }
  // Built with the C API: positions are the cached int objects ids use, and the collector
  // stays off while the tuples are made.
  GcPause gc;
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(head + tokens.size() + tail));
  if (!list) throw nb::python_error();
  if (head || tail) {
    PyObject* zero = offset_pair(0, 0);
    if (!zero) {
      Py_DECREF(list);
      throw nb::python_error();
    }
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
    if (trim) trim_span(trim[i], i, add_prefix_space, s, e);
    PyObject* pair = offset_pair(static_cast<uint32_t>(s), static_cast<uint32_t>(e));
    if (!pair) {
      Py_DECREF(list);
      throw nb::python_error();
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(head + i), pair);
  }
  return nb::steal<nb::list>(list);
}

// Instances of a Python class with __slots__ made from C++: what `cls.__new__(cls)` followed by
// setting each named slot does, without a Python call or an attribute lookup per slot. A batch
// of Encodings is made this way (one per text). The offsets of the slots are read once from the
// class's member table (PyMemberDef, as CPython lays out __slots__).
class SlotClass {
 public:
  SlotClass(nb::handle cls, const std::vector<std::string>& names) : cls_(nb::borrow(cls)) {
    if (!PyType_Check(cls.ptr())) throw nb::type_error("SlotClass needs a class");
    type_ = reinterpret_cast<PyTypeObject*>(cls.ptr());
    for (const std::string& name : names) offsets_.push_back(find(name));
  }

  size_t size() const { return offsets_.size(); }

  // A new instance (a new reference) with values[i] in slot i; a null value leaves that slot
  // unset. Takes its own references to the values.
  PyObject* make(PyObject* const* values) const {
    PyObject* obj = type_->tp_alloc(type_, 0);
    if (!obj) return nullptr;
    char* base = reinterpret_cast<char*>(obj);
    for (size_t i = 0; i < offsets_.size(); ++i) {
      if (!values[i]) continue;
      Py_INCREF(values[i]);
      *reinterpret_cast<PyObject**>(base + offsets_[i]) = values[i];
    }
    return obj;
  }

  nb::handle cls() const { return cls_; }

  // Where slot `name` sits in an instance (TypeError when the class has no such object slot).
  Py_ssize_t offset(const std::string& name) const { return find(name); }

 private:
  Py_ssize_t find(const std::string& name) const {
    for (PyTypeObject* t = type_; t; t = t->tp_base) {
      for (const PyMemberDef* m = t->tp_members; m && m->name; ++m) {
        if (name != m->name) continue;
        if (m->type != T_OBJECT_EX || (m->flags & READONLY))
          throw nb::type_error(("slot '" + name + "' is not a writable object slot").c_str());
        return m->offset;
      }
    }
    throw nb::type_error(("the class has no slot '" + name + "'").c_str());
  }

  nb::object cls_;
  PyTypeObject* type_ = nullptr;
  std::vector<Py_ssize_t> offsets_;
};

// The token strings of ids, looked up once per id and shared: `lookup(id)` (a tokenizer's
// id_to_token) is called for an id seen first, its str kept for every later use. The lookup is
// passed to each call, not kept: its owner (the tokenizer) holds this table, and a reference
// back would be a cycle the collector cannot see. Only touched with the GIL held.
class TokenTable {
 public:
  TokenTable() = default;
  ~TokenTable() {
    for (PyObject* s : strs_) Py_XDECREF(s);
  }
  TokenTable(const TokenTable&) = delete;
  TokenTable& operator=(const TokenTable&) = delete;

  // A new reference to the token of `id` (nullptr with a Python error set when lookup fails).
  PyObject* token(nb::handle lookup, uint32_t id) {
    if (id < strs_.size() && strs_[id]) {
      Py_INCREF(strs_[id]);
      return strs_[id];
    }
    PyObject* key = id_object(id);
    if (!key) return nullptr;
    PyObject* s = PyObject_CallOneArg(lookup.ptr(), key);
    Py_DECREF(key);
    if (!s) return nullptr;
    if (id < kLimit) {
      if (id >= strs_.size()) strs_.resize(std::max<size_t>(id + 1, std::min<size_t>(strs_.size() * 2, kLimit)), nullptr);
      Py_INCREF(s);
      strs_[id] = s;
    }
    return s;
  }

  // head + the tokens of `tokens[0, n)` + tail, as one list of str.
  template <class T>
  nb::list tokens(nb::handle lookup, nb::handle head, const T* tokens, size_t n, nb::handle tail) {
    const size_t nh = static_cast<size_t>(PyList_GET_SIZE(head.ptr())), nt = static_cast<size_t>(PyList_GET_SIZE(tail.ptr()));
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(nh + n + nt));
    if (!list) throw nb::python_error();
    for (size_t i = 0; i < nh; ++i) {
      PyObject* h = PyList_GET_ITEM(head.ptr(), static_cast<Py_ssize_t>(i));
      Py_INCREF(h);
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), h);
    }
    for (size_t i = 0; i < nt; ++i) {
      PyObject* t = PyList_GET_ITEM(tail.ptr(), static_cast<Py_ssize_t>(i));
      Py_INCREF(t);
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(nh + n + i), t);
    }
    for (size_t i = 0; i < n; ++i) {
      PyObject* s = token(lookup, id_of(tokens[i]));
      if (!s) {
        Py_DECREF(list);  // the items not yet set are NULL, which the list's deallocation skips
        throw nb::python_error();
      }
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(nh + i), s);
    }
    return nb::steal<nb::list>(list);
  }

 private:
  static constexpr uint32_t kLimit = 1u << 22;  // ids above this are looked up every time
  std::vector<PyObject*> strs_;
};

// Hugging Face's byte-level offset trimming (processors.ByteLevel and RobertaProcessing with
// trim_offsets) for a batch's Encodings: each token's span loses the spaces its token string
// starts and ends with (trim_span). For most tokens the string depends on the id alone, so its
// spaces are counted once per id (from the tokenizer's TokenTable) and kept. Two kinds of token
// are the text they matched instead (Encoding._native_tokens): an added token with lstrip or
// rstrip (`matched_ids`) when its span is whitespace around its content, and the unknown token of
// a model that names it by its text (`text_unk`); their spaces are counted in the text.
// Only touched with the GIL held.
class OffsetTrim {
 public:
  OffsetTrim(nb::handle table, bool add_prefix_space, const std::vector<uint32_t>& matched_ids, int64_t text_unk)
      : table_(nb::borrow(table)), add_prefix_space_(add_prefix_space), matched_ids_(matched_ids),
        text_unk_(text_unk) {
    if (!nb::isinstance<TokenTable>(table)) throw nb::type_error("OffsetTrim needs the tokenizer's TokenTable");
    std::sort(matched_ids_.begin(), matched_ids_.end());
  }

  bool add_prefix_space() const { return add_prefix_space_; }

  // Whether a code point is one Hugging Face trims: GPT-2's printable space (U+0120) or a
  // White_Space character (Rust's char::is_whitespace).
  static bool is_space(uint32_t c) { return c == 0x120 || is_white_space(c); }
  // White_Space: the `regex` module's \s (which _native_tokens strips a match of), from the
  // generated Unicode tables.
  static bool is_white_space(uint32_t c) { return (ciyuan::unicode::flags(c) & ciyuan::unicode::kSpace) != 0; }

  // The spaces of each of tokens[0, n) (spans of `utf8`) into `out`; false with a Python error set
  // when a lookup failed.
  bool spaces(nb::handle lookup, const ciyuan::Token* tokens, size_t n, std::string_view utf8,
              std::vector<TokenSpaces>& out) {
    out.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const ciyuan::Token& t = tokens[i];
      const uint32_t id = t.id;
      if (id < counts_.size() && counts_[id] < kUnknown) {
        out[i] = unpack(counts_[id]);
        continue;
      }
      if (t.start > t.end || t.end > utf8.size()) {
        PyErr_SetString(PyExc_RuntimeError, "a token's span is outside its text");
        return false;
      }
      const std::string_view span = utf8.substr(t.start, t.end - t.start);
      if (static_cast<int64_t>(id) == text_unk_) {
        out[i] = count(span);
        continue;
      }
      nb::object token = nb::steal(nb::inst_ptr<TokenTable>(table_)->token(lookup, id));
      if (!token.ptr()) return false;
      Py_ssize_t size = 0;
      const char* bytes = PyUnicode_Check(token.ptr()) ? PyUnicode_AsUTF8AndSize(token.ptr(), &size) : nullptr;
      if (!bytes) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a token is not a str");
        return false;
      }
      const std::string_view own(bytes, static_cast<size_t>(size));
      if (std::binary_search(matched_ids_.begin(), matched_ids_.end(), id)) {
        // The text it matched when that is whitespace around its content, else its own string.
        out[i] = count(strip_white_space(span) == own ? span : own);
        continue;
      }
      out[i] = count(own);
      if (id < kLimit) {
        if (id >= counts_.size()) counts_.resize(std::max<size_t>(id + 1, std::min<size_t>(counts_.size() * 2, kLimit)), kUnknown);
        counts_[id] = pack(out[i]);
      }
    }
    return true;
  }

 private:
  static constexpr uint32_t kUnknown = 0xFFFFFFFFu, kLimit = 1u << 22;
  static uint32_t pack(TokenSpaces s) {  // (counts past 0x7FFF are kept per token, never here)
    return s.leading > 0x7FFF || s.trailing > 0xFFFF ? kUnknown : s.leading << 16 | s.trailing;
  }
  static TokenSpaces unpack(uint32_t packed) { return TokenSpaces{packed >> 16, packed & 0xFFFF}; }

  // The code point before `end` in s and how many bytes it takes (a byte that is not part of a
  // whole character - a span may cut one - is U+FFFD, one byte).
  static uint32_t last_char(std::string_view s, size_t end, size_t& len) {
    size_t at = end - 1;
    while (at > 0 && end - at < 4 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
    uint32_t cp = 0;
    if (ciyuan::utf8::decode(s.data() + at, s.data() + end, &cp) != end - at) {
      len = 1;
      return ciyuan::utf8::kReplacement;
    }
    len = end - at;
    return cp;
  }
  static uint32_t first_char(std::string_view s, size_t at, size_t& len) {
    uint32_t cp = 0;
    len = ciyuan::utf8::decode(s.data() + at, s.data() + s.size(), &cp);
    return cp;
  }
  // The leading and trailing characters of s that trim_span takes (never overlapping).
  static TokenSpaces count(std::string_view s) {
    TokenSpaces out;
    size_t at = 0, len = 0;
    while (at < s.size() && is_space(first_char(s, at, len))) {
      at += len;
      ++out.leading;
    }
    size_t end = s.size();
    while (end > 0 && is_space(last_char(s, end, len))) {
      end -= len;
      ++out.trailing;
    }
    return out;
  }
  static std::string_view strip_white_space(std::string_view s) {
    size_t at = 0, end = s.size(), len = 0;
    while (at < end && is_white_space(first_char(s, at, len))) at += len;
    while (end > at && is_white_space(last_char(s, end, len))) end -= len;
    return s.substr(at, end - at);
  }

  nb::object table_;
  bool add_prefix_space_;
  std::vector<uint32_t> matched_ids_;  // sorted
  int64_t text_unk_;
  std::vector<uint32_t> counts_;  // by id: leading << 16 | trailing, kUnknown when not counted
};

}  // namespace ciyuan_bindings
