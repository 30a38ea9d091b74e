// SentencePiece's normalizer (see spm_normalizer.h).
#include "ciyuan/spm_normalizer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {

constexpr char kSpaceSymbol[] = "\xE2\x96\x81";  // U+2581
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

Error corrupt(const std::string& what) {
  return Error(ErrorKind::kModel, "the precompiled charsmap (normalizer_spec.precompiled_charsmap) is corrupt: " +
                                      what + "; rebuild the model or use a named normalization rule");
}

// darts-clone's unit fields.
inline bool has_leaf(uint32_t u) { return (u >> 8) & 1; }
inline uint32_t unit_value(uint32_t u) { return u & ((1u << 31) - 1); }
inline uint32_t unit_label(uint32_t u) { return u & ((1u << 31) | 0xFFu); }
inline uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

}  // namespace

SpmNormalizer::SpmNormalizer(SpmNormalizerOptions options) : options_(std::move(options)) {
  const std::string& blob = options_.charsmap;
  if (!blob.empty()) {
    if (blob.size() <= 4) throw corrupt("it is " + std::to_string(blob.size()) + " bytes long");
    const unsigned char* b = reinterpret_cast<const unsigned char*>(blob.data());
    const uint32_t trie_size = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
    if (trie_size > blob.size() - 4)
      throw corrupt("its double array claims " + std::to_string(trie_size) + " bytes but only " +
                    std::to_string(blob.size() - 4) + " follow");
    if (trie_size % 4 != 0 || trie_size == 0)
      throw corrupt("its double array is " + std::to_string(trie_size) + " bytes, not a positive multiple of 4");
    units_.resize(trie_size / 4);
    std::memcpy(units_.data(), blob.data() + 4, trie_size);
    for (uint32_t& u : units_) {  // stored little-endian
      const unsigned char* p = reinterpret_cast<const unsigned char*>(&u);
      u = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
    }
    strings_.assign(blob.data() + 4 + trie_size, blob.size() - 4 - trie_size);
    strings_size_ = strings_.size();
    strings_.push_back('\0');  // every value below strings_size_ reads a terminated string
  }
  std::vector<std::pair<std::string, uint32_t>> user;
  for (const std::string& s : options_.user_defined_symbols) {
    if (!s.empty()) user.emplace_back(s, static_cast<uint32_t>(user.size()));
  }
  if (!user.empty()) user_ = std::make_unique<SpecialMatcher>(user);
  // A byte is plain when no rule key and no user-defined symbol starts with it: normalizing a
  // character that starts with it only copies the character (no trie walk, no symbol search).
  for (unsigned b = 1; b < 256; ++b) {
    bool plain = true;
    if (!units_.empty()) {
      const size_t node = unit_offset(units_[0]) ^ b;
      plain = !(node < units_.size() && unit_label(units_[node]) == b);
    }
    bool alone = true;  // for ASCII: no key is b alone or b + another ASCII byte
    if (!plain && b < 0x80) {
      const size_t node = unit_offset(units_[0]) ^ b;
      const uint32_t u = units_[node];
      const size_t base = node ^ unit_offset(u);
      alone = !has_leaf(u);
      for (unsigned c = 1; alone && c < 0x80; ++c) {
        const size_t child = base ^ c;
        alone = !(child < units_.size() && unit_label(units_[child]) == c);
      }
    }
    for (const auto& sym : user) {
      plain = plain && static_cast<unsigned char>(sym.first[0]) != b;
      alone = alone && static_cast<unsigned char>(sym.first[0]) != b;
    }
    plain_[b] = plain;
    if (b < 0x80) ascii_alone_[b] = alone;
  }
  for (const auto& sym : user) user_first_[static_cast<unsigned char>(sym.first[0])] = true;
  for (unsigned b = 0; b < 0x80; ++b) {
    ascii_run_[b] = b == ' ' ? 0 : plain_[b] ? 2 : ascii_alone_[b] ? 1 : 0;
    ascii_stop_[b] = ascii_run_[b] == 0;
    if (ascii_stop_[b] && b > 0x20 && b != 0x7F) stops_are_controls_ = false;
  }
  // The plain characters of the BMP beyond ASCII (2- and 3-byte UTF-8). A character is plain
  // when the walk of match_rule over its bytes dies before passing a leaf (a key ending inside
  // or at the end of the character would be matched; a walk that survives the whole character
  // may go on into a longer key, e.g. a composition) and no user-defined symbol starts with
  // its bytes or is a prefix of them.
  for (uint32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates: invalid UTF-8, never plain
    char encoded[4];
    const size_t len = utf8::encode(cp, encoded);
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(encoded);
    bool plain = true, longer = false, alone = false;
    size_t node = 0;
    if (!units_.empty()) {
      plain = false;
      node = unit_offset(units_[0]);
      for (size_t i = 0; i < len; ++i) {
        node ^= bytes[i];
        if (node >= units_.size() || unit_label(units_[node]) != bytes[i]) {
          plain = true;  // the walk dies here, no leaf before
          break;
        }
        const uint32_t u = units_[node];
        node ^= unit_offset(u);
        if (has_leaf(u)) {  // a key ends within the character: not plain
          alone = i + 1 == len && node < units_.size();
          break;
        }
        longer = i + 1 == len;   // the walk survives the character without a key
      }
    }
    bool no_symbol = true;
    for (size_t k = 0; no_symbol && k < user.size(); ++k) {
      const std::string& sym = user[k].first;
      no_symbol = std::memcmp(sym.data(), bytes, std::min(sym.size(), len)) != 0;
    }
    // 2-byte characters in a table of their own: then an overlong 3-byte form (E0 80..9F xx,
    // read as a code point below U+0800) finds its bit clear.
    if (plain && no_symbol) set_bit(cp < 0x800 ? plain2_ : plain3_, cp);
    if (longer && no_symbol) {
      set_bit(starts_longer_, cp);
      collect_second(node);
    }
    // A key that is the whole character and starts no longer key (fullwidth punctuation, most
    // compatibility characters): its replacement is kept by code point, no walk at run time.
    if (alone && no_symbol) {
      bool extends = false;
      for (unsigned l = 1; !extends && l < 256; ++l) {
        const size_t at = node ^ l;
        extends = at < units_.size() && unit_label(units_[at]) == l;
      }
      const uint32_t value = unit_value(units_[node]);
      if (!extends && value < strings_size_) {
        if (alone_rule_.empty()) alone_rule_.assign(0x10000, 0);
        alone_rule_[cp] = value + 1;
      }
    }
  }
}

void SpmNormalizer::collect_second(size_t base) {
  // The children of a node: labels probed one by one (darts-clone keeps no list of them).
  auto child = [&](size_t from, unsigned c, size_t* next) {
    const size_t at = from ^ c;
    if (at >= units_.size() || unit_label(units_[at]) != c) return false;
    *next = at ^ unit_offset(units_[at]);
    return true;
  };
  size_t b1, b2, b3;
  for (unsigned l = 1; l < 256; ++l) {  // label 0 holds a value, not a byte
    if (!child(base, l, &b1)) continue;
    if (l < 0x80) {
      set_bit(second_, l);
    } else if (l >= 0xC0 && l <= 0xDF) {
      for (unsigned c1 = 0x80; c1 < 0xC0; ++c1) {
        const unsigned char two[2] = {static_cast<unsigned char>(l), static_cast<unsigned char>(c1)};
        if (child(b1, c1, &b2)) set_bit(second_, utf8::decode_two(two));
      }
    } else if (l >= 0xE0 && l <= 0xEF) {
      for (unsigned c1 = 0x80; c1 < 0xC0; ++c1) {
        if (!child(b1, c1, &b2)) continue;
        for (unsigned c2 = 0x80; c2 < 0xC0; ++c2) {
          const unsigned char three[3] = {static_cast<unsigned char>(l), static_cast<unsigned char>(c1),
                                          static_cast<unsigned char>(c2)};
          if (child(b2, c2, &b3)) set_bit(second_, utf8::decode_three(three));
        }
      }
    }  // a 4-byte lead: beyond the BMP, where may_be_second always answers yes
  }
}

bool SpmNormalizer::may_be_second(const unsigned char* q, const unsigned char* end) const {
  if (q == end) return false;
  const unsigned b = q[0];
  if (b < 0x80) return bit(second_, b);
  if (b >= 0xC2 && b <= 0xDF && end - q >= 2 && (q[1] & 0xC0u) == 0x80) return bit(second_, utf8::decode_two(q));
  if (b >= 0xE0 && b <= 0xEF && end - q >= 3 && ((q[1] ^ 0x80u) | (q[2] ^ 0x80u)) < 0x40)
    return bit(second_, utf8::decode_three(q));
  return true;
}

// Inlined into normalize's loop: called once per run, i.e. about once per word of English.
__attribute__((always_inline)) inline const unsigned char* SpmNormalizer::plain_run(const unsigned char* begin,
                                                                                    const unsigned char* p,
                                                                                    const unsigned char* end,
                                                                                    const char** rep,
                                                                                    size_t* rule_len) const {
  // A character that starts a key only as part of a longer one (a letter or kana, which
  // compositions start with) still copies as itself when the walk from it finds no key; the
  // walk is done here (no user-defined symbol may start with its lead byte) so that the run
  // goes on. When it finds a key, the run ends there with the rule (not walked again).
  *rule_len = 0;
  auto no_rule = [&](const unsigned char* at) {
    if (user_first_[*at]) return false;
    *rule_len = match_rule(std::string_view(reinterpret_cast<const char*>(begin), static_cast<size_t>(end - begin)),
                           static_cast<size_t>(at - begin), rep);
    return *rule_len == 0;
  };
  while (p < end) {
    if (end - p > 8) {
      // Eight ASCII bytes and an ASCII byte after them (English, code): each of the eight is
      // plain unless ascii_run_ says 0 (a 1 is plain before an ASCII byte), so the block is
      // judged by eight table reads and no branch per byte.
      constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = kOnes * 0x80;
      uint64_t x;
      std::memcpy(&x, p, 8);
      if (!((x & kHigh) | (p[8] & 0x80u))) {
        if (stops_are_controls_) {
          // Flags the bytes below 0x21 (exact: no carry out of a byte below 0x80) and 0x7F (the
          // lowest flag exact); the byte loop below judges the first flagged byte.
          const uint64_t y = x ^ (kOnes * 0x7F);
          const uint64_t flags = (~(x + kOnes * 0x5F) | ((y - kOnes) & ~y)) & kHigh;
          if (!flags) {
            p += 8;
            continue;
          }
          p += __builtin_ctzll(flags) >> 3;
        } else {
          uint32_t stop = 0;
          for (int k = 0; k < 8; ++k) stop |= uint32_t{ascii_stop_[p[k]]} << k;
          if (stop) return p + __builtin_ctz(stop);
          p += 8;
          continue;
        }
      }
    }
    const unsigned b = p[0];
    if (b < 0x80) {
      const uint8_t c = ascii_run_[b];
      if (c == 2 || (c == 1 && (p + 1 == end || p[1] < 0x80 || no_rule(p)))) {
        ++p;
        continue;
      }
      break;
    }
    // Valid UTF-8 only, exactly as utf8::decode accepts it (anything else takes the slow path,
    // which reads malformed bytes as U+FFFD).
    if (b >= 0xE0 && b <= 0xEF) {
      if (end - p < 3 || ((p[1] ^ 0x80u) | (p[2] ^ 0x80u)) >= 0x40) break;
      const uint32_t cp = utf8::decode_three(p);
      // (Overlong forms and surrogates are invalid: their bits are clear, checked off the hot path.)
      if (!plain3(cp)) {
        if (cp < 0x800 || cp - 0xD800 < 0x800) break;
        if (const uint32_t v = alone_rule(cp)) {  // the rule of this character alone
          *rule_len = 3;
          *rep = strings_.data() + v - 1;
          break;
        }
        if (!((bit(starts_longer_, cp) && !may_be_second(p + 3, end)) || no_rule(p))) break;
      }
      p += 3;
    } else if (b >= 0xC2 && b <= 0xDF) {
      if (end - p < 2 || (p[1] & 0xC0u) != 0x80) break;
      const uint32_t cp = utf8::decode_two(p);
      if (!plain2(cp)) {
        if (const uint32_t v = alone_rule(cp)) {
          *rule_len = 2;
          *rep = strings_.data() + v - 1;
          break;
        }
        if (!((bit(starts_longer_, cp) && !may_be_second(p + 2, end)) || no_rule(p))) break;
      }
      p += 2;
    } else if (plain_[b]) {  // a 4-byte character whose lead byte starts no key and no symbol
      uint32_t cp;
      if (utf8::decode(p, end, &cp) != 4) break;
      p += 4;
    } else {
      break;
    }
  }
  return p;
}

size_t SpmNormalizer::match_rule(std::string_view in, size_t pos, const char** rep) const {
  if (units_.empty()) return 0;
  const uint32_t* units = units_.data();
  const size_t n_units = units_.size();
  size_t node = unit_offset(units[0]);  // the root is unit 0
  size_t longest = 0;
  uint32_t value = 0;
  for (size_t i = pos; i < in.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    node ^= c;
    if (node >= n_units) break;
    const uint32_t u = units[node];
    if (unit_label(u) != c) break;
    node ^= unit_offset(u);
    if (has_leaf(u)) {
      if (node >= n_units) throw corrupt("a value unit lies outside the double array");
      longest = i + 1 - pos;
      value = unit_value(units[node]);
    }
  }
  if (!longest) return 0;
  if (value >= strings_size_)
    throw corrupt("a rule points at byte " + std::to_string(value) + " of " + std::to_string(strings_size_) +
                  " bytes of normalized strings");
  *rep = strings_.data() + value;
  return longest;
}

void SpmNormalizer::normalize(std::string_view in, std::string& out, std::vector<uint32_t>* orig) const {
  out.clear();
  if (orig) orig->clear();
  const SpmNormalizerOptions& o = options_;
  // One step of normalization at `pos`: sets the replacement and returns the bytes consumed.
  auto prefix = [&](size_t pos, const char** rep, size_t* rep_len) -> size_t {
    const unsigned char lead = static_cast<unsigned char>(in[pos]);
    if (lead < 0x80 && (plain_[lead] || (ascii_alone_[lead] && (pos + 1 == in.size() ||
                                                                  static_cast<unsigned char>(in[pos + 1]) < 0x80)))) {
      // Most text: no rule or symbol starts here, or (letters, which start composition rules
      // such as "A" + U+0300) none starts with this byte followed by another ASCII byte.
      *rep = in.data() + pos;
      *rep_len = 1;
      return 1;
    }
    if (user_first_[lead]) {  // the longest user-defined symbol here, if any
      uint32_t index;
      if (const size_t n = user_->match_at(in, pos, &index)) {
        *rep = in.data() + pos;
        *rep_len = n;
        return n;
      }
    }
    if (!plain_[lead]) {
      if (const size_t n = match_rule(in, pos, rep)) {
        *rep_len = std::strlen(*rep);
        return n;
      }
    }
    uint32_t cp;
    const size_t n = utf8::decode(in.data() + pos, in.data() + in.size(), &cp);
    if (cp == utf8::kReplacement && n == 1) {  // malformed: U+FFFD for one byte
      *rep = kReplacement;
      *rep_len = 3;
      return 1;
    }
    *rep = in.data() + pos;
    *rep_len = n;
    return n;
  };

  size_t pos = 0;
  const char* rep;
  size_t rep_len;
  if (o.remove_extra_whitespaces) {  // leading spaces
    while (pos < in.size()) {
      const size_t n = prefix(pos, &rep, &rep_len);
      if (!(rep_len == 1 && rep[0] == ' ')) break;
      pos += n;
    }
  }
  if (pos >= in.size()) return;  // all spaces: nothing (sentencepiece's norm_to_orig is empty too)

  // The output is written through pointers into `out` and `orig` (which grow together: one
  // entry per byte) sized ahead and grown when a step needs more room, and cut to length at
  // the end: an append per run or space would cost a call and a capacity check each.
  size_t len = 0;
  char* w = nullptr;
  uint32_t* ow = nullptr;
  auto room = [&](size_t n) {
    if (len + n <= out.size()) return;
    const size_t size = std::max(out.size() * 2, len + n);
    out.resize(size);
    w = &out[0];
    if (orig) {
      orig->resize(size);
      ow = orig->data();
    }
  };
  room((in.size() - pos) + (in.size() - pos) / 2 + 8);
  uint32_t consumed = static_cast<uint32_t>(pos);  // == pos (as 32 bits: check_size)
  const size_t space_len = o.escape_whitespaces ? 3 : 1;
  const char* const space = o.escape_whitespaces ? kSpaceSymbol : " ";
  auto add_space = [&]() {  // room for space_len bytes made
    if (space_len == 3) {  // written byte by byte: a memcpy of a length unknown here is a call
      w[len] = space[0];
      w[len + 1] = space[1];
      w[len + 2] = space[2];
    } else {
      w[len] = ' ';
    }
    if (orig) std::fill_n(ow + len, space_len, consumed);
    len += space_len;
  };
  if (!o.treat_whitespace_as_suffix && o.add_dummy_prefix) {
    room(space_len);
    add_space();
  }
  // An input ' ' that is only itself (no rule or symbol starts there): written here, not
  // through prefix().
  const bool space_plain = plain_[' '];
  const bool space_alone = ascii_alone_[' '];
  const unsigned char* const data = reinterpret_cast<const unsigned char*>(in.data());
  const unsigned char* const data_end = data + in.size();
  bool prev_space = o.remove_extra_whitespaces;
  while (pos < in.size()) {
    // A run of plain characters: copied as is, and no space, so nothing to collapse or escape.
    size_t n;  // the bytes of `in` consumed by the next step, after the run
    const size_t run_end = static_cast<size_t>(plain_run(data, data + pos, data_end, &rep, &n) - data);
    if (run_end > pos) {
      const size_t run = run_end - pos;
      if (run <= 16 && len + 16 <= out.size() && data_end - (data + pos) >= 16) {
        // A word: two 8-byte moves (the bytes past the run are overwritten later or cut).
        std::memcpy(w + len, data + pos, 8);
        std::memcpy(w + len + 8, data + pos + 8, 8);
      } else {
        room(run);
        std::memcpy(w + len, data + pos, run);
      }
      if (orig) {  // each byte maps to the start of its character
        uint32_t* to = ow + len;
        uint32_t at = consumed;
        for (size_t k = pos; k < run_end; ++k) {
          if ((data[k] & 0xC0u) != 0x80) at = static_cast<uint32_t>(k);
          *to++ = at;
        }
      }
      len += run;
      prev_space = false;
      consumed = static_cast<uint32_t>(run_end);
      pos = run_end;
      if (pos == in.size()) break;
    }
    if (n) {  // the run ended at a rule: its replacement is *rep
      rep_len = std::strlen(rep);
    } else if (data[pos] == ' ' && (space_plain || (space_alone && (pos + 1 == in.size() || data[pos + 1] < 0x80)))) {
      if (!prev_space) {
        room(space_len);
        add_space();
      }
      prev_space = o.remove_extra_whitespaces;  // a space is collapsed only with that option
      consumed = static_cast<uint32_t>(++pos);
      continue;
    } else {
      n = prefix(pos, &rep, &rep_len);
    }
    const char* s = rep;
    size_t rlen = rep_len;
    if (prev_space) {
      while (rlen && *s == ' ') ++s, --rlen;
    }
    if (rlen) {
      room(rlen * space_len);
      for (size_t k = 0; k < rlen; ++k) {
        if (o.escape_whitespaces && s[k] == ' ') {
          std::memcpy(w + len, kSpaceSymbol, 3);
          if (orig) std::fill_n(ow + len, 3, consumed);
          len += 3;
        } else {
          w[len] = s[k];
          if (orig) ow[len] = consumed;
          ++len;
        }
      }
      prev_space = s[rlen - 1] == ' ';
    }
    consumed += static_cast<uint32_t>(n);
    pos += n;
    if (!o.remove_extra_whitespaces) prev_space = false;
  }
  if (o.remove_extra_whitespaces) {  // trailing spaces
    while (len >= space_len && std::memcmp(w + len - space_len, space, space_len) == 0) {
      len -= space_len;
      if (orig) consumed = ow[len];
    }
  }
  if (o.treat_whitespace_as_suffix && o.add_dummy_prefix) {
    room(space_len);
    add_space();
  }
  out.resize(len);
  if (orig) {
    orig->resize(len);
    orig->push_back(consumed);
  }
}

}  // namespace ciyuan
