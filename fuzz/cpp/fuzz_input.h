// Helpers shared by the libFuzzer harnesses: a reader that carves typed values out of the fuzzer's
// bytes (so a harness's input is one flat byte string that the corpus can store), and a UTF-8
// filter for the entry points whose contract is "valid UTF-8" (the bindings check it before they
// call the core, so feeding them invalid bytes would test nothing the user can reach).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fuzz {

// Reads values front to back; past the end every read gives zeros / empty strings, so any byte
// string is a valid input (the fuzzer never wastes time on inputs the harness rejects).
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  bool flag() { return byte() & 1; }
  uint32_t u16() { return byte() | (uint32_t{byte()} << 8); }
  // A length-prefixed string of at most `max` bytes (the prefix is one byte, taken modulo max+1).
  std::string bytes(size_t max) {
    size_t n = byte() % (max + 1);
    if (n > remaining()) n = remaining();
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  // Everything not read yet.
  std::string_view rest() {
    std::string_view s(reinterpret_cast<const char*>(p_), remaining());
    p_ = end_;
    return s;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// The valid UTF-8 sequences of `s` in order, invalid bytes dropped (so the result is valid UTF-8:
// no overlongs, no surrogates, nothing past U+10FFFF).
inline std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = n != 0 && i + n <= s.size();
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; ok && k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d >> 6) == 2;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (ok) {
      static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      ++i;
    }
  }
  return out;
}

// A broken property: report it the way a sanitizer would, so the fuzzer saves the input.
[[noreturn]] inline void fail(const char* what) {
  __builtin_fprintf(stderr, "property broken: %s\n", what);
  std::abort();
}
#define FUZZ_CHECK(cond)                      \
  do {                                        \
    if (!(cond)) ::fuzz::fail(#cond);         \
  } while (0)

}  // namespace fuzz
