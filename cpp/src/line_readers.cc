// One string field of every line of a block of JSON Lines, and text lines (see line_readers.h).
#include "ciyuan/line_readers.h"

#include <cstring>

#include "ciyuan/utf8.h"
#include "simd_config.h"

#if CIYUAN_X86_SIMD
#include <emmintrin.h>
#endif

namespace ciyuan {
namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxNumber = 64;

// What bytes.strip() removes: a line of only these is blank (no document), as in the Python reader.
bool blank_byte(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool json_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Where a string's text goes: the output buffer (room checked by the caller), a key's
// std::string, or nowhere (a value that is not the field).
struct ToBuffer {
  char* at;
  void append(const unsigned char* p, size_t n) {
    std::memcpy(at, p, n);
    at += n;
  }
  void push(char c) { *at++ = c; }
};
struct ToString {
  std::string& s;
  void append(const unsigned char* p, size_t n) { s.append(reinterpret_cast<const char*>(p), n); }
  void push(char c) { s.push_back(c); }
};
struct Nowhere {
  void append(const unsigned char*, size_t) {}
  void push(char) {}
};

// The first byte at or after p (before e) that ends a run of plain string bytes: '"', '\\' or
// a control character. Sixteen bytes at a time where SSE2 is there (every x86-64 CPU).
inline const unsigned char* run_end(const unsigned char* p, const unsigned char* e) {
#if CIYUAN_X86_SIMD
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), below = _mm_set1_epi8(0x1F);
  while (e - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                      _mm_cmpeq_epi8(_mm_max_epu8(v, below), below));  // v <= 0x1F
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stop));
    if (mask) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < e && *p != '"' && *p != '\\' && *p >= 0x20) ++p;
  return p;
}

int hex_digit(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// A recursive-descent check of one line (already known to be valid UTF-8), keeping only the
// field's string. Every method returns false for anything not plain (see line_readers.h).
class Line {
 public:
  Line(const char* p, const char* e)
      : p_(reinterpret_cast<const unsigned char*>(p)), e_(reinterpret_cast<const unsigned char*>(e)) {}

  // The line is one object holding `field` once, as a string: its text written at out.at.
  bool field_of_object(std::string_view field, ToBuffer& out, std::string& key) {
    space();
    if (!take('{')) return false;
    bool found = false;
    space();
    if (take('}')) return false;  // {}: no field
    for (;;) {
      space();
      if (peek() != '"') return false;
      key.clear();
      ToString to_key{key};
      if (!string(to_key)) return false;  // keys compared decoded: "te\u0078t" is "text"
      space();
      if (!take(':')) return false;
      space();
      if (key == field) {
        if (found || peek() != '"' || !string(out)) return false;
        found = true;
      } else if (!value(1)) {
        return false;
      }
      space();
      if (take(',')) continue;
      if (take('}')) break;
      return false;
    }
    space();
    return found && p_ == e_;
  }

 private:
  int peek() const { return p_ < e_ ? *p_ : -1; }
  bool take(unsigned char c) {
    if (p_ < e_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void space() {
    while (p_ < e_ && json_space(*p_)) ++p_;
  }

  // The string at p_ (its opening quote), decoded into `to`.
  template <class Sink>
  bool string(Sink& to) {
    ++p_;
    for (;;) {
      const unsigned char* run = p_;
      p_ = run_end(p_, e_);
      to.append(run, static_cast<size_t>(p_ - run));
      if (p_ >= e_ || *p_ < 0x20) return false;  // unterminated, or a raw control character
      if (*p_++ == '"') return true;
      if (p_ >= e_) return false;
      char plain;
      switch (*p_++) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp) || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;  // a low surrogate alone
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high one: its low one must follow
            uint32_t low;
            if (!take('\\') || !take('u') || !hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          unsigned char buf[4];
          to.append(buf, utf8::encode(cp, reinterpret_cast<char*>(buf)));
          continue;
        }
        default:
          return false;
      }
      to.push(plain);
    }
  }
  bool hex4(uint32_t* cp) {
    if (e_ - p_ < 4) return false;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int d = hex_digit(p_[k]);
      if (d < 0) return false;
      v = (v << 4) | static_cast<uint32_t>(d);
    }
    p_ += 4;
    *cp = v;
    return true;
  }
  bool digits() {
    const unsigned char* start = p_;
    while (p_ < e_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ > start;
  }
  // -?(0|[1-9][0-9]*)(.[0-9]+)?, at most kMaxNumber characters; an exponent is not plain (a
  // JSON library may read 1e999 as an error).
  bool number() {
    const unsigned char* start = p_;
    take('-');
    if (take('0')) {
      if (peek() >= '0' && peek() <= '9') return false;  // a leading zero
    } else if (!digits()) {
      return false;
    }
    if (take('.') && !digits()) return false;
    if (peek() == 'e' || peek() == 'E') return false;
    return static_cast<size_t>(p_ - start) <= kMaxNumber;
  }
  bool word(const char* w, size_t n) {
    if (static_cast<size_t>(e_ - p_) < n || std::memcmp(p_, w, n) != 0) return false;
    p_ += n;
    return true;
  }
  // Any value, checked and skipped; `depth`: the containers it is inside.
  bool value(int depth) {
    switch (peek()) {
      case '"': {
        Nowhere skip;
        return string(skip);
      }
      case '{': return container(depth, '}', true);
      case '[': return container(depth, ']', false);
      case 't': return word("true", 4);
      case 'f': return word("false", 5);
      case 'n': return word("null", 4);
      default: return number();
    }
  }
  bool container(int depth, unsigned char close, bool keyed) {
    if (depth >= kMaxDepth) return false;
    ++p_;
    space();
    if (take(close)) return true;
    for (;;) {
      space();
      if (keyed) {
        Nowhere skip;
        if (peek() != '"' || !string(skip)) return false;
        space();
        if (!take(':')) return false;
        space();
      }
      if (!value(depth + 1)) return false;
      space();
      if (take(',')) continue;
      return take(close);
    }
  }

  const unsigned char* p_;
  const unsigned char* e_;
};

// Calls line(start, end, ended, number) for each line block[start, end) of a block that is valid
// UTF-8 (ended: a '\n' follows it; number: first_line + 1 for the first); false when the block
// is not valid UTF-8 or `line` returns false.
template <class Line>
bool each_line(std::string_view block, int64_t first_line, const Line& line) {
  if (utf8::validate(block.data(), block.size()) != block.size()) return false;
  int64_t number = first_line;
  for (size_t start = 0; start < block.size();) {
    const void* nl = std::memchr(block.data() + start, '\n', block.size() - start);
    const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - block.data()) : block.size();
    if (!line(start, end, nl != nullptr, ++number)) return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool jsonl_field_strings(std::string_view block, std::string_view field, int64_t first_line, char* out,
                         size_t* written, std::vector<int64_t>& ends, std::vector<int64_t>& lines) {
  // Invalid UTF-8 anywhere makes the line invalid JSON: each_line checks the whole block at once.
  std::string key;
  ToBuffer to{out};
  const bool plain = each_line(block, first_line, [&](size_t start, size_t end, bool, int64_t number) {
    size_t k = start;
    while (k < end && blank_byte(static_cast<unsigned char>(block[k]))) ++k;
    if (k == end) return true;  // a blank line: no document
    Line line(block.data() + start, block.data() + end);
    if (!line.field_of_object(field, to, key)) return false;
    ends.push_back(static_cast<int64_t>(to.at - out));
    lines.push_back(number);
    return true;
  });
  *written = static_cast<size_t>(to.at - out);
  return plain;
}

bool text_lines(std::string_view block, int64_t first_line, char* out, size_t* written, std::vector<int64_t>& ends,
                std::vector<int64_t>& lines) {
  char* at = out;
  const bool valid = each_line(block, first_line, [&](size_t start, size_t end, bool ended, int64_t number) {
    if (ended && end > start && block[end - 1] == '\r') --end;  // "\r\n": the '\r' goes with the line break
    if (end > start) {
      std::memcpy(at, block.data() + start, end - start);
      at += end - start;
      ends.push_back(static_cast<int64_t>(at - out));
      lines.push_back(number);
    }
    return true;
  });
  *written = static_cast<size_t>(at - out);
  return valid;
}

}  // namespace ciyuan
