// A str's UTF-8 form, made from its own storage (1, 2 or 4 bytes a code point) without the GIL.
//
// PyUnicode_AsUTF8AndSize makes it under the GIL with CPython's encoder (~11 instructions a byte
// of mostly-ASCII text stored as UCS-2) and leaves the copy cached inside the str for the str's
// lifetime. Here an ASCII str is used as it is (it already is UTF-8); otherwise runs of ASCII
// are copied 16 (Latin-1) or 8 (UCS-2, UCS-4) code points a step, with SSE2 where the compiler
// targets it (every x86-64) and 8 bytes a step otherwise, and so are runs of code points of
// three UTF-8 bytes (CJK); the rest is written a code point at a time.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "block_pool.h"
#include "ciyuan/utf8.h"

namespace ciyuan_bindings {

// Where a str keeps its code points (read with the GIL held; the str must stay alive).
struct StrData {
  const void* data = nullptr;
  size_t length = 0;  // code points (kind 0: bytes)
  int kind = 0;       // 0: data is UTF-8 (an ASCII str, or a str's cached UTF-8), else bytes per code point (1, 2, 4)
};

// A growable byte buffer that is not zero-filled (std::string::resize would write every byte
// once more before the conversion writes it).
// Large buffers come from and go back to the block pool (their pages stay faulted in).
class Utf8Buffer {
 public:
  Utf8Buffer() = default;
  Utf8Buffer(const Utf8Buffer&) = delete;
  Utf8Buffer& operator=(const Utf8Buffer&) = delete;
  ~Utf8Buffer() { release(); }
  char* reserve(size_t bytes) {
    if (bytes > capacity_) {
      release();
      data_ = block_pool::take_bytes(bytes, capacity_);
    }
    return data_.get();
  }
  size_t capacity() const { return capacity_; }
  void release() {
    block_pool::give_bytes(std::move(data_), capacity_);
    capacity_ = 0;
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
};

namespace detail {

// Copies the ASCII code points at s[i..] while they last, a block at a time, up to the first
// other one (the block holding it is stored whole and p moved past its ASCII prefix only: the
// buffer has room); returns the new i.
inline size_t ascii_run(const uint8_t* s, size_t i, size_t n, char*& p) {
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16, p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    const unsigned other = static_cast<unsigned>(_mm_movemask_epi8(v));
    if (other != 0) {
      const unsigned k = static_cast<unsigned>(__builtin_ctz(other));
      p += k;
      return i + k;
    }
  }
#else
  for (; i + 8 <= n; i += 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, s + i, 8);
    if (v & 0x8080808080808080ULL) break;
    std::memcpy(p, &v, 8);
  }
#endif
  return i;
}

inline size_t ascii_run(const uint16_t* s, size_t i, size_t n, char*& p) {
#if defined(__SSE2__)
  const __m128i high = _mm_set1_epi16(static_cast<short>(0xFF80));
  for (; i + 16 <= n; i += 16, p += 16) {  // two blocks a step while both are ASCII
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 8));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(_mm_or_si128(v0, v1), high), _mm_setzero_si128())) != 0xFFFF)
      break;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(v0, v1));
  }
  for (; i + 8 <= n; i += 8, p += 8) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(v, v));
    const unsigned ascii = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, high), _mm_setzero_si128())));
    if (ascii != 0xFFFF) {
      const unsigned k = static_cast<unsigned>(__builtin_ctz(~ascii)) / 2;  // two mask bits a unit
      p += k;
      return i + k;
    }
  }
#else
  for (; i + 4 <= n; i += 4, p += 4) {
    if ((s[i] | s[i + 1] | s[i + 2] | s[i + 3]) >= 0x80) break;
    for (int k = 0; k < 4; ++k) p[k] = static_cast<char>(s[i + k]);
  }
#endif
  return i;
}

inline size_t ascii_run(const uint32_t* s, size_t i, size_t n, char*& p) {
#if defined(__SSE2__)
  const __m128i high = _mm_set1_epi32(~0x7F);
  for (; i + 8 <= n; i += 8, p += 8) {  // two blocks of 4 a step while both are ASCII
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 4));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(_mm_or_si128(v0, v1), high), _mm_setzero_si128())) != 0xFFFF)
      break;
    const __m128i units = _mm_packs_epi32(v0, v1);  // 8 x 16 bits (all below 0x80: no saturation)
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(units, units));
  }
#else
  (void)s, (void)n, (void)p;
#endif
  return i;
}

#if defined(__SSE2__)
// The UTF-8 of 4 code points of three bytes each (in 32-bit lanes), stored 3 bytes apart: each is
// made in its lane and stored as 4 bytes, so the last store writes one byte past the 12 (the
// buffer has room for it; the next write covers it).
inline void store_three_byte_lanes(__m128i c, char*& p) {
  const __m128i low6 = _mm_set1_epi32(0x3F);
  __m128i w = _mm_or_si128(_mm_srli_epi32(c, 12), _mm_set1_epi32(0x8080E0));  // 1110xxxx 10xxxxxx 10xxxxxx
  w = _mm_or_si128(w, _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(c, 6), low6), 8));
  w = _mm_or_si128(w, _mm_slli_epi32(_mm_and_si128(c, low6), 16));
  for (int k = 0; k < 4; ++k) {
    const uint32_t word = static_cast<uint32_t>(_mm_cvtsi128_si32(w));
    std::memcpy(p, &word, 4);
    p += 3;
    w = _mm_srli_si128(w, 4);
  }
}
#endif

// Copies the code points at s[i..] that take three bytes in UTF-8 (U+0800..U+FFFF, no
// surrogate: CJK, kana, Hangul, most punctuation of those scripts), 8 a step while a whole
// block is such, up to the first block that is not; returns the new i.
inline size_t three_byte_run(const uint16_t* s, size_t i, size_t n, char*& p) {
#if defined(__SSE2__)
  const __m128i flip = _mm_set1_epi16(static_cast<short>(0x8000));  // unsigned order as signed
  const __m128i below_800 = _mm_set1_epi16(static_cast<short>(0x07FF ^ 0x8000));
  const __m128i surrogate_bits = _mm_set1_epi16(static_cast<short>(0xF800));
  const __m128i surrogate = _mm_set1_epi16(static_cast<short>(0xD800));
  for (; i + 8 <= n; i += 8) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i wide = _mm_cmpgt_epi16(_mm_xor_si128(v, flip), below_800);  // >= U+0800
    const __m128i sur = _mm_cmpeq_epi16(_mm_and_si128(v, surrogate_bits), surrogate);
    if (_mm_movemask_epi8(_mm_andnot_si128(sur, wide)) != 0xFFFF) break;
    store_three_byte_lanes(_mm_unpacklo_epi16(v, _mm_setzero_si128()), p);
    store_three_byte_lanes(_mm_unpackhi_epi16(v, _mm_setzero_si128()), p);
  }
#else
  (void)s, (void)n, (void)p;
#endif
  return i;
}

// The same for a UCS-4 str (a text with an emoji or another character beyond the BMP is stored
// so whole), 4 code points a step.
inline size_t three_byte_run(const uint32_t* s, size_t i, size_t n, char*& p) {
#if defined(__SSE2__)
  const __m128i below_800 = _mm_set1_epi32(0x07FF);
  const __m128i bmp_end = _mm_set1_epi32(0x10000);
  const __m128i surrogate_bits = _mm_set1_epi32(0xF800);
  const __m128i surrogate = _mm_set1_epi32(0xD800);
  for (; i + 4 <= n; i += 4) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));  // code points < 2^31
    const __m128i in_range = _mm_and_si128(_mm_cmpgt_epi32(c, below_800), _mm_cmplt_epi32(c, bmp_end));
    const __m128i sur = _mm_cmpeq_epi32(_mm_and_si128(c, surrogate_bits), surrogate);
    if (_mm_movemask_epi8(_mm_andnot_si128(sur, in_range)) != 0xFFFF) break;
    store_three_byte_lanes(c, p);
  }
#else
  (void)s, (void)n, (void)p;
#endif
  return i;
}

// Code points -> UTF-8 with CPython's strict rules: false at a lone surrogate (no UTF-8 form).
template <class Unit>
bool units_to_utf8(const Unit* s, size_t n, Utf8Buffer& buffer, std::string_view& out) {
  // + 1: three_byte_run's last store reaches a byte past what it writes.
  char* const begin = buffer.reserve(n * (sizeof(Unit) == 1 ? 2 : sizeof(Unit) == 2 ? 3 : 4) + 1);
  char* p = begin;
  size_t i = 0;
  while (i < n) {
    i = ascii_run(s, i, n, p);
    // A curly quote in English is followed by ASCII: no block of three-byte code points to try.
    if constexpr (sizeof(Unit) > 1)
      if (i + 1 < n && s[i + 1] >= 0x800) i = three_byte_run(s, i, n, p);
    // Other code points one at a time (up to a block of them), until an ASCII one: then try a
    // block of ASCII again (English with curly quotes goes back to blocks right after a quote).
    for (const size_t stop = i + 16 < n ? i + 16 : n; i < stop; ++i) {
      const uint32_t c = s[i];
      if (c < 0x80) {
        *p++ = static_cast<char>(c);
        ++i;
        break;
      } else if (c < 0x800) {
        p[0] = static_cast<char>(0xC0 | (c >> 6));
        p[1] = static_cast<char>(0x80 | (c & 0x3F));
        p += 2;
      } else if (c < 0x10000 && (c < 0xD800 || c > 0xDFFF)) {
        p[0] = static_cast<char>(0xE0 | (c >> 12));
        p[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        p[2] = static_cast<char>(0x80 | (c & 0x3F));
        p += 3;
      } else {
        const size_t len = ciyuan::utf8::encode(c, p);  // 0: a surrogate
        if (!len) return false;
        p += len;
      }
    }
  }
  out = std::string_view(begin, static_cast<size_t>(p - begin));
  return true;
}

}  // namespace detail

// With the GIL held; `text` must be a str (checked by the caller).
inline StrData str_data(PyObject* text) {
#if PY_VERSION_HEX < 0x030C0000
  if (PyUnicode_READY(text) < 0) throw nanobind::python_error();  // a legacy str gets its compact form
#endif
  if (PyUnicode_IS_ASCII(text)) return StrData{PyUnicode_DATA(text), static_cast<size_t>(PyUnicode_GET_LENGTH(text)), 0};
  // A str whose UTF-8 form CPython made already (PyUnicode_AsUTF8AndSize keeps it inside the str:
  // another library, or str-taking C code, asked for it before) is read there, not converted again.
  if (PyUnicode_IS_COMPACT(text)) {
    const auto* compact = reinterpret_cast<const PyCompactUnicodeObject*>(text);
    if (compact->utf8) return StrData{compact->utf8, static_cast<size_t>(compact->utf8_length), 0};
  }
  return StrData{PyUnicode_DATA(text), static_cast<size_t>(PyUnicode_GET_LENGTH(text)),
                 static_cast<int>(PyUnicode_KIND(text))};
}

// str_data of `text` after checking that it is a str (TypeError "expected str, got X").
inline StrData checked_str_data(nanobind::handle text) {
  if (!PyUnicode_Check(text.ptr())) {
    std::string message = "expected str, got " + std::string(nanobind::type_name(text.type()).c_str());
    throw nanobind::type_error(message.c_str());
  }
  return str_data(text.ptr());
}

// With the GIL held, for a str that str_utf8 refused: raises the UnicodeEncodeError that
// str.encode() raises for it.
[[noreturn]] inline void raise_no_utf8(nanobind::handle text) {
  Py_ssize_t size = 0;
  if (!PyUnicode_AsUTF8AndSize(text.ptr(), &size)) throw nanobind::python_error();
  throw nanobind::value_error("the text has no UTF-8 form");
}

// The UTF-8 form of a str (no GIL needed): a view of its own bytes when it is ASCII, else made
// in `buffer`. False when the text holds a lone surrogate.
inline bool str_utf8(const StrData& t, Utf8Buffer& buffer, std::string_view& out) {
  switch (t.kind) {
    case 0:
      out = std::string_view(static_cast<const char*>(t.data), t.length);
      return true;
    case 1:
      return detail::units_to_utf8(static_cast<const uint8_t*>(t.data), t.length, buffer, out);
    case 2:
      return detail::units_to_utf8(static_cast<const uint16_t*>(t.data), t.length, buffer, out);
    default:
      return detail::units_to_utf8(static_cast<const uint32_t*>(t.data), t.length, buffer, out);
  }
}

}  // namespace ciyuan_bindings
