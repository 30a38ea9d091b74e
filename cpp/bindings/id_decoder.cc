// _core.IdDecoder: ids (any integer buffer, or a list/tuple of ints) -> the tokens' bytes, one
// sequence or a batch on all cores (see id_arrays.h).
//
// The table. Encoder::id_bytes asks the model (a virtual call) and then the special tokens
// (a binary search) for every id, and appends a std::string each time. Decoding a million ids
// is instead two passes over a flat table of every id below `limit`: {offset, length} into one
// blob of all the tokens' bytes, padded so that a token of up to 16 (32) bytes is copied as one
// unaligned 16- (32-) byte move whatever its length. Pass 1 sums the lengths and checks every
// id (so an unknown id is reported before anything is written, and the output is allocated
// once, at its exact size, as the bytes object itself); pass 2 copies. Ids the table does not
// hold (holes, special tokens beyond it, tokens of 255 bytes or more) take the Encoder's own
// lookup: the same bytes, more slowly.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/errors.h"
#include "ciyuan/parallel.h"
#include "id_arrays.h"

namespace ciyuan_bindings {

namespace nb = nanobind;

namespace {

using ciyuan::Encoder;
using ciyuan::Error;
using ciyuan::ErrorKind;

constexpr size_t kPad = 32;           // bytes readable past any token's start in the blob
constexpr size_t kReleaseGilFrom = 1 << 14;  // ids: below this, releasing the GIL costs more than it frees

[[noreturn]] void unknown_id(long long id, size_t pos, size_t limit) {
  throw Error(ErrorKind::kUnknownId, "id " + std::to_string(id) + " at position " + std::to_string(pos) +
                                         " is not in the vocabulary (ids run from 0 to " + std::to_string(limit) +
                                         " - 1)");
}

// The ids of one sequence: a view of a caller's uint32 buffer, or a converted copy.
struct IdSeq {
  const uint32_t* ids = nullptr;
  size_t n = 0;
  std::vector<uint32_t> owned;
  Py_buffer view{};
  bool has_view = false;

  IdSeq() = default;
  IdSeq(const IdSeq&) = delete;
  IdSeq& operator=(const IdSeq&) = delete;
  IdSeq(IdSeq&& o) noexcept : ids(o.ids), n(o.n), owned(std::move(o.owned)), view(o.view), has_view(o.has_view) {
    if (!owned.empty()) ids = owned.data();
    o.has_view = false;
  }
  ~IdSeq() {  // with the GIL held (the sequences are dropped before returning to Python)
    if (has_view) PyBuffer_Release(&view);
  }
};

// A buffer's item type: (bytes, signed), or false for a non-integer format.
bool integer_format(const char* format, size_t itemsize, bool& is_signed) {
  if (!format) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;  // native = little-endian here
  if (format[0] == '\0' || format[1] != '\0') return false;
  const char c = format[0];
  if (!std::strchr("bBhHiIlLqQnN", c)) return false;
  is_signed = c == 'b' || c == 'h' || c == 'i' || c == 'l' || c == 'q' || c == 'n';
  return itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
}

template <class T>
void convert_items(const char* base, Py_ssize_t stride, size_t n, size_t limit, std::vector<uint32_t>& out) {
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, base + static_cast<Py_ssize_t>(i) * stride, sizeof(T));
    if constexpr (std::is_signed_v<T>) {
      if (v < 0) unknown_id(static_cast<long long>(v), i, limit);
    }
    if constexpr (sizeof(T) > 4) {
      if (static_cast<uint64_t>(v) > 0xFFFFFFFFull) unknown_id(static_cast<long long>(v), i, limit);
    }
    out[i] = static_cast<uint32_t>(v);
  }
}

// The ids of a buffer-protocol object (with the GIL held), into `seq`. A C-contiguous uint32
// buffer is read in place; any other integer type or stride is converted (checked: no negative
// id, none beyond 32 bits). False for a buffer of Python objects (numpy's dtype=object), which
// the caller reads as a sequence.
bool ids_from_buffer(PyObject* obj, size_t limit, IdSeq& seq) {
  if (PyObject_GetBuffer(obj, &seq.view, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
  seq.has_view = true;
  const Py_buffer& v = seq.view;
  if (v.format && std::strcmp(v.format, "O") == 0) {
    PyBuffer_Release(&seq.view);
    seq.has_view = false;
    return false;
  }
  bool is_signed = false;
  if (!integer_format(v.format, static_cast<size_t>(v.itemsize), is_signed)) {
    throw nb::type_error(("ids must be integers; got a buffer of items of format '" +
                          std::string(v.format ? v.format : "B") +
                          "' (convert it first, e.g. numpy's .astype('uint32'))").c_str());
  }
  if (v.ndim != 1) {
    throw Error(ErrorKind::kInvalidInput, "ids must be a one-dimensional sequence; got a buffer of " +
                                              std::to_string(v.ndim) + " dimensions (flatten it, or decode each row)");
  }
  const size_t n = static_cast<size_t>(v.shape[0]);
  const Py_ssize_t stride = v.strides ? v.strides[0] : v.itemsize;
  const char* base = static_cast<const char*>(v.buf);
  seq.n = n;
  if (v.itemsize == 4 && !is_signed && stride == 4) {
    seq.ids = reinterpret_cast<const uint32_t*>(base);  // the common case: read in place
    return true;
  }
  switch (v.itemsize * (is_signed ? -1 : 1)) {
    case 1: convert_items<uint8_t>(base, stride, n, limit, seq.owned); break;
    case -1: convert_items<int8_t>(base, stride, n, limit, seq.owned); break;
    case 2: convert_items<uint16_t>(base, stride, n, limit, seq.owned); break;
    case -2: convert_items<int16_t>(base, stride, n, limit, seq.owned); break;
    case 4: convert_items<uint32_t>(base, stride, n, limit, seq.owned); break;
    case -4: convert_items<int32_t>(base, stride, n, limit, seq.owned); break;
    case 8: convert_items<uint64_t>(base, stride, n, limit, seq.owned); break;
    default: convert_items<int64_t>(base, stride, n, limit, seq.owned); break;
  }
  seq.ids = seq.owned.data();
  PyBuffer_Release(&seq.view);  // converted: the buffer is no longer read
  seq.has_view = false;
  return true;
}

// One item of a list of ints, slowly: bool and non-integers are refused (TypeError), anything
// with __index__ (numpy's integer scalars) is read.
uint32_t slow_id(PyObject* o, size_t pos, size_t limit) {
  if (PyBool_Check(o) || !PyIndex_Check(o)) {
    nb::str r = nb::repr(nb::handle(o));
    throw nb::type_error(("ids must be integers; position " + std::to_string(pos) + " holds " + r.c_str()).c_str());
  }
  nb::object index = nb::steal(PyNumber_Index(o));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow != 0) {
    throw Error(ErrorKind::kUnknownId, "id " + std::string(nb::repr(index).c_str()) + " at position " +
                                           std::to_string(pos) + " is not in the vocabulary");
  }
  if (v < 0 || v > 0xFFFFFFFFll) unknown_id(v, pos, limit);
  return static_cast<uint32_t>(v);
}

// The ids of a list or tuple of ints (with the GIL held). A small exact int is read from the
// object's own digits: no call per item.
IdSeq ids_from_items(PyObject* const* items, size_t n, size_t limit) {
  IdSeq seq;
  seq.owned.resize(n);
  uint32_t* out = seq.owned.data();
  for (size_t i = 0; i < n; ++i) {
    PyObject* o = items[i];
    if (PyLong_CheckExact(o)) {
#if PY_VERSION_HEX >= 0x030C0000
      if (PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(o))) {
        const Py_ssize_t v = PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(o));
        if (v < 0 || static_cast<uint64_t>(v) > 0xFFFFFFFFull) unknown_id(v, i, limit);
        out[i] = static_cast<uint32_t>(v);
        continue;
      }
#else
      const Py_ssize_t size = Py_SIZE(o);
      if (size == 0 || size == 1) {
        out[i] = size == 0 ? 0u : static_cast<uint32_t>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]);
        continue;
      }
#endif
    }
    out[i] = slow_id(o, i, limit);
  }
  seq.n = n;
  seq.ids = out;
  return seq;
}

// The ids of any sequence (with the GIL held).
IdSeq ids_of(nb::handle obj, size_t limit) {
  PyObject* o = obj.ptr();
  if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
    return ids_from_items(PySequence_Fast_ITEMS(o), static_cast<size_t>(PySequence_Fast_GET_SIZE(o)), limit);
  }
  if (PyObject_CheckBuffer(o)) {
    IdSeq seq;
    if (ids_from_buffer(o, limit, seq)) return seq;
  }
  if (PyUnicode_Check(o)) throw nb::type_error("ids must be a sequence of integers, not a str");
  nb::object seq = nb::steal(PySequence_Fast(o, "ids must be a sequence of integers"));
  if (!seq.is_valid()) throw nb::python_error();
  return ids_from_items(PySequence_Fast_ITEMS(seq.ptr()), static_cast<size_t>(PySequence_Fast_GET_SIZE(seq.ptr())),
                        limit);
}

class IdDecoder {
 public:
  // Tokens: whatever encoder.id_bytes gives. The table covers ids [0, table_limit); `limit`
  // (one past the largest id, special tokens included) is what error messages name; `skip`
  // are the ids decode leaves out when asked (special tokens).
  IdDecoder(nb::object encoder, size_t table_limit, size_t limit, std::vector<uint32_t> skip)
      : owner_(std::move(encoder)), encoder_(nb::cast<const Encoder&>(owner_)), limit_(limit), skip_(std::move(skip)) {
    std::sort(skip_.begin(), skip_.end());
    entries_.resize(table_limit);
    size_t bytes = 0;
    for (size_t id = 0; id < table_limit; ++id) {
      const std::string* b = encoder_.id_bytes(static_cast<uint32_t>(id));
      if (b && b->size() < kSlow) bytes += b->size();
    }
    blob_.reserve(bytes + kPad);
    for (size_t id = 0; id < table_limit; ++id) {
      const std::string* b = encoder_.id_bytes(static_cast<uint32_t>(id));
      if (!b || b->size() >= kSlow) {
        entries_[id] = Entry{0, kSlow};
        continue;
      }
      entries_[id] = Entry{static_cast<uint32_t>(blob_.size()), static_cast<uint32_t>(b->size())};
      blob_ += *b;
    }
    blob_.append(kPad, '\0');
    lengths_.resize(table_limit);
    for (size_t id = 0; id < table_limit; ++id) {
      lengths_[id] = static_cast<uint8_t>(std::min<uint32_t>(entries_[id].length, kSlowLength));
    }
    skip_bits_.assign((table_limit + 63) / 64, 0);
    for (uint32_t id : skip_) {
      if (id < table_limit) skip_bits_[id / 64] |= uint64_t{1} << (id % 64);
    }
  }

  size_t table_size() const { return entries_.size(); }

  nb::bytes decode_bytes(nb::handle ids, bool skip) const {
    IdSeq seq = ids_of(ids, limit_);
    const size_t total = run_pass(seq, skip, [&](IdSeq& s, bool sk) { return length(s, sk); });
    nb::bytes out = nb::steal<nb::bytes>(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(total)));
    if (!out.is_valid()) throw nb::python_error();
    char* dst = PyBytes_AS_STRING(out.ptr());
    run_pass(seq, skip, [&](IdSeq& s, bool sk) { return copy(s, sk, dst, total); });
    return out;
  }

  nb::list decode_bytes_batch(nb::handle batch, bool skip, int threads) const {
    nb::object items = nb::steal(PySequence_Fast(batch.ptr(), "expected a sequence of id sequences"));
    if (!items.is_valid()) throw nb::python_error();
    const size_t n = static_cast<size_t>(PySequence_Fast_GET_SIZE(items.ptr()));
    PyObject** objects = PySequence_Fast_ITEMS(items.ptr());
    std::vector<IdSeq> seqs;
    seqs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      try {
        seqs.push_back(ids_of(objects[i], limit_));
      } catch (const Error& e) {
        throw Error(e.kind(), std::string("sequence ") + std::to_string(i) + ": " + e.what());
      }
    }
    std::vector<size_t> lengths(n);
    std::vector<std::exception_ptr> errors(n);
    each(n, threads, seqs, [&](size_t i) {
      try {
        lengths[i] = length(seqs[i], skip);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
    for (size_t i = 0; i < n; ++i) {
      if (!errors[i]) continue;
      try {
        std::rethrow_exception(errors[i]);
      } catch (const Error& e) {
        throw Error(e.kind(), std::string("sequence ") + std::to_string(i) + ": " + e.what());
      }
    }
    nb::list out = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(n)));
    if (!out.is_valid()) throw nb::python_error();
    std::vector<char*> dsts(n);
    for (size_t i = 0; i < n; ++i) {
      PyObject* b = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(lengths[i]));
      if (!b) throw nb::python_error();
      PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), b);
      dsts[i] = PyBytes_AS_STRING(b);
    }
    each(n, threads, seqs, [&](size_t i) {
      try {
        copy(seqs[i], skip, dsts[i], lengths[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
    for (size_t i = 0; i < n; ++i) {
      if (errors[i]) std::rethrow_exception(errors[i]);
    }
    return out;
  }

  // The ids as a list of ints (checked as decode checks them), for decoders that read tokens
  // one by one.
  nb::list id_list(nb::handle ids) const {
    IdSeq seq = ids_of(ids, limit_);
    nb::list out = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(seq.n)));
    if (!out.is_valid()) throw nb::python_error();
    for (size_t i = 0; i < seq.n; ++i) {
      PyObject* v = PyLong_FromUnsignedLong(seq.ids[i]);
      if (!v) throw nb::python_error();
      PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), v);
    }
    return out;
  }

 private:
  static constexpr uint32_t kSlow = 255;  // length of an id the table does not hold (and the longest it does + 1)
  static constexpr uint32_t kSlowLength = 255;  // the same in lengths_
  struct Entry {
    uint32_t offset;
    uint32_t length;
  };

  // One pass over a single sequence, the GIL released when it is long.
  template <class Pass>
  size_t run_pass(IdSeq& seq, bool skip, Pass&& pass) const {
    if (seq.n < kReleaseGilFrom) return pass(seq, skip);
    nb::gil_scoped_release release;
    return pass(seq, skip);
  }

  // fn(i) for each sequence, on threads with the GIL released when there is enough work.
  template <class Fn>
  void each(size_t n, int threads, const std::vector<IdSeq>& seqs, Fn&& fn) const {
    size_t ids = 0;
    for (const IdSeq& s : seqs) ids += s.n;
    if (ids < kReleaseGilFrom || n < 2) {
      for (size_t i = 0; i < n; ++i) fn(i);
      return;
    }
    nb::gil_scoped_release release;
    // Runs of consecutive sequences, a dozen per thread: short sequences do not bounce the
    // shared counter between cores for each.
    const size_t workers = static_cast<size_t>(ciyuan::resolve_threads(threads));
    const size_t run = std::clamp<size_t>(n / (workers * 12), 1, 1024);
    ciyuan::for_chunks(n, threads, run, fn);
  }

  // The bytes of an id the table does not hold, or the unknown-id error.
  const std::string& slow_bytes(uint32_t id, size_t pos) const {
    const std::string* b = encoder_.id_bytes(id);
    if (!b) unknown_id(id, pos, limit_);
    return *b;
  }
  bool skipped(uint32_t id) const {
    if (id < entries_.size()) return (skip_bits_[id / 64] >> (id % 64)) & 1;
    return std::binary_search(skip_.begin(), skip_.end(), id);
  }

  // Pass 1: the decoded length (every id checked). It reads the byte-per-id lengths_, an eighth
  // of the entries' size, which stays in the L2 cache where the entries (and the blob) do not.
  size_t length(const IdSeq& seq, bool skip) const {
    return skip ? length_of<true>(seq.ids, seq.n) : length_of<false>(seq.ids, seq.n);
  }
  template <bool Skip>
  size_t length_of(const uint32_t* ids, size_t n) const {
    const uint8_t* lengths = lengths_.data();
    const size_t limit = lengths_.size();
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t id = ids[i];
      if (Skip && skipped(id)) continue;
      const uint32_t len = id < limit ? lengths[id] : kSlowLength;
      total += len != kSlowLength ? len : slow_length(id, i);
    }
    return total;
  }
  // Kept out of the loops: the hot loop then holds its values in registers across the call.
  __attribute__((noinline)) size_t slow_length(uint32_t id, size_t pos) const { return slow_bytes(id, pos).size(); }

  // Pass 2: the bytes into dst[0, total). (The ids are read again: should another thread have
  // changed a writable buffer meanwhile, nothing is written past the end.)
  size_t copy(const IdSeq& seq, bool skip, char* dst, size_t total) const {
    const size_t pos = skip ? copy_of<true>(seq.ids, seq.n, dst, total) : copy_of<false>(seq.ids, seq.n, dst, total);
    if (pos != total) changed();
    return pos;
  }
  template <bool Skip>
  size_t copy_of(const uint32_t* ids, size_t n, char* dst, size_t total) const {
    const Entry* table = entries_.data();
    const char* blob = blob_.data();
    const size_t limit = entries_.size();
    // Below this output position a token of the table may be moved 16 or 32 bytes at once.
    const size_t wide_below = total >= kPad ? total - kPad + 1 : 0;
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t id = ids[i];
      if (Skip && skipped(id)) continue;
      const Entry e = id < limit ? table[id] : Entry{0, kSlow};
      if (e.length != kSlow && pos < wide_below) {
        // Unaligned fixed-size moves: no call, no branch on the exact length (the blob's
        // padding makes reading past the token safe; the next token overwrites the excess).
        const char* src = blob + e.offset;
        std::memcpy(dst + pos, src, 16);
        if (e.length > 16) {
          std::memcpy(dst + pos + 16, src + 16, 16);
          if (e.length > 32) std::memcpy(dst + pos + 32, src + 32, e.length - 32);
        }
        pos += e.length;
        continue;
      }
      pos = copy_exact(id, i, e, dst, pos, total);
    }
    return pos;
  }
  // One token copied byte for byte: near the end of the output, or not in the table.
  __attribute__((noinline)) size_t copy_exact(uint32_t id, size_t i, Entry e, char* dst, size_t pos,
                                              size_t total) const {
    const char* src;
    size_t len;
    if (e.length != kSlow) {
      src = blob_.data() + e.offset;
      len = e.length;
    } else {
      const std::string& b = slow_bytes(id, i);
      src = b.data();
      len = b.size();
    }
    if (len > total - pos) changed();
    std::memcpy(dst + pos, src, len);
    return pos + len;
  }
  [[noreturn]] static void changed() {
    throw Error(ErrorKind::kInvalidInput, "the ids changed while they were decoded");
  }

  nb::object owner_;  // keeps the Encoder alive
  const Encoder& encoder_;
  size_t limit_;
  std::vector<uint32_t> skip_;
  std::vector<Entry> entries_;
  std::vector<uint8_t> lengths_;  // entries_[id].length as a byte (kSlowLength: not in the table)
  std::vector<uint64_t> skip_bits_;
  std::string blob_;
};

}  // namespace

void register_id_decoder(nb::module_& m) {
  nb::class_<IdDecoder>(m, "IdDecoder",
                        "The bytes of ids, read from lists, tuples or any integer buffer (numpy arrays, "
                        "array.array, memoryview) without a Python int per id; batches on all cores.")
      .def(nb::init<nb::object, size_t, size_t, std::vector<uint32_t>>(), nb::arg("encoder"),
           nb::arg("table_limit"), nb::arg("limit"), nb::arg("skip") = std::vector<uint32_t>(),
           "A table of encoder.id_bytes for ids below `table_limit`; `limit` (one past the largest id) is "
           "named by errors; `skip` are the ids left out with skip=True.")
      .def_prop_ro("table_size", &IdDecoder::table_size)
      .def("decode_bytes", &IdDecoder::decode_bytes, nb::arg("ids"), nb::arg("skip") = false,
           "The tokens' bytes joined; UnknownIdError (naming the position) for an id outside the vocabulary, "
           "TypeError for items that are not integers.")
      .def("decode_bytes_batch", &IdDecoder::decode_bytes_batch, nb::arg("batch"), nb::arg("skip") = false,
           nb::arg("threads") = 0, "decode_bytes of each sequence, on `threads` threads (<= 0: one per core).")
      .def("id_list", &IdDecoder::id_list, nb::arg("ids"), "The ids as a list of int, checked as decode_bytes checks them.");
}

}  // namespace ciyuan_bindings
