// Chinese word segmentation: maximum matching (FMM, BMM, BiMM) and the DAG method.
// See segment.h for the algorithms and their cost.
#include "ciyuan/segment.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <memory>

#include "ciyuan/errors.h"
#include "ciyuan/hash.h"
#include "ciyuan/utf8.h"

// The hot loops below push millions of pieces; GCC otherwise leaves vector::push_back out of
// line there (a call per word).
#if defined(__GNUC__)
#define CIYUAN_FLATTEN __attribute__((flatten))
#else
#define CIYUAN_FLATTEN
#endif
#if defined(__GNUC__) && !defined(CIYUAN_NO_PREFETCH)
#define CIYUAN_PREFETCH(p) __builtin_prefetch(p)
#else
#define CIYUAN_PREFETCH(p) ((void)0)
#endif

namespace ciyuan {
namespace segment {

namespace {

// Byte length of the whitespace character at s[i] (valid UTF-8), or 0 when it is not one.
// Whitespace is Python's str.isspace() set (so it means the same here and in the Python layer):
// U+0009-000D, U+001C-0020, U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029, U+202F,
// U+205F, U+3000, tested on the bytes so that CJK text (lead bytes E4..E9) costs one comparison
// per character.
inline size_t space_len(const unsigned char* s, size_t i, size_t n) {
  const unsigned char b = s[i];
  if (b < 0x80) return ((b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x20)) ? 1 : 0;
  if (b == 0xC2) return (i + 1 < n && (s[i + 1] == 0x85 || s[i + 1] == 0xA0)) ? 2 : 0;
  if (b < 0xE1 || b > 0xE3 || i + 2 >= n) return 0;
  const unsigned char c1 = s[i + 1], c2 = s[i + 2];
  if (b == 0xE1) return (c1 == 0x9A && c2 == 0x80) ? 3 : 0;  // U+1680
  if (b == 0xE3) return (c1 == 0x80 && c2 == 0x80) ? 3 : 0;  // U+3000
  if (c1 == 0x80) return (c2 <= 0x8A || c2 == 0xA8 || c2 == 0xA9 || c2 == 0xAF) ? 3 : 0;  // U+2000..
  return (c1 == 0x81 && c2 == 0x9F) ? 3 : 0;                                              // U+205F
}

inline bool is_ascii_alnum(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// jieba's re_han_default: [\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-]. Its DAG runs inside such blocks.
inline bool is_jieba_block(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FD5) || is_ascii_alnum(c) || c == '+' || c == '#' || c == '&' || c == '.' ||
         c == '_' || c == '%' || c == '-';
}

// Segments one text. Each run of characters (between whitespace, or one jieba block) is first
// decoded into trie labels and byte offsets, once: the matching loops then read one label per
// step instead of decoding UTF-8 and looking up the label again at every word start (FMM
// reads most characters twice, BMM would also have to scan back over continuation bytes).
// Matching writes its words into a scratch array through a local pointer (no capacity check
// and no reload of vector fields after each store) and appends them in one copy. The scratch
// arrays live as long as the Matcher, so a caller segmenting many lines reuses them.
class Matcher {
 public:
  Matcher(const DictionaryIndex& index, const Options& options)
      : idx_(index),
        opt_(options),
        limit_(options.max_word_len > 0 && options.max_word_len < index.max_word_chars
                   ? static_cast<size_t>(options.max_word_len)
                   : SIZE_MAX / 2) {}

  void run(std::string_view text, std::vector<Piece>& out) {
    s_ = reinterpret_cast<const unsigned char*>(text.data());
    n_ = text.size();
    out_ = &out;
    // At most one label per byte, plus the end offset (left uninitialized: written before read).
    if (cap_ < n_ + 1) {
      cap_ = n_ + 1;
      codes_.reset(new uint32_t[cap_]);
      pos_.reset(new uint32_t[cap_]);
    }
    const size_t first = out.size();
    first_alnum_pair_ = SIZE_MAX;
    if (opt_.method == Method::kDag && !opt_.baseline) {
      jieba_blocks();
    } else {
      whitespace_runs();
    }
    if (!opt_.baseline) merge_alnum(first);
  }

 private:
  void emit(size_t a, size_t b, int32_t id) {
    out_->push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(b), id});
  }

  // The label of the character at byte i (stored at codes_[m], its offset at pos_[m]); returns
  // its byte length. Three-byte characters (all of CJK) take the short path.
  size_t put_char(size_t m, size_t i) {
    const unsigned char b = s_[i];
    pos_[m] = static_cast<uint32_t>(i);
    if (b >= 0xE0 && b < 0xF0) {
      const uint32_t cp = utf8::decode_three(s_ + i);
      const uint16_t c = idx_.bmp_code[cp];
      codes_[m] = c != DictionaryIndex::kLookAside ? c : idx_.code(cp);
      return 3;
    }
    // Single letters or digits that merge_alnum may join need two of them side by side.
    if (i < first_alnum_pair_ && i > 0 && is_ascii_alnum(b) && is_ascii_alnum(s_[i - 1])) first_alnum_pair_ = i - 1;
    size_t len;
    codes_[m] = idx_.code(utf8::decode_valid(s_ + i, &len));
    return len;
  }

  // Most of Chinese text is characters of three bytes: stores the labels of those from byte
  // i on, while their code points are in [lo, hi] and their label is not kLookAside (which
  // put_char() resolves), in a tight loop; returns the byte after them.
  size_t put_three_byte_run(size_t i, size_t& m, uint32_t lo, uint32_t hi) {
    const uint16_t* bmp_code = idx_.bmp_code.data();
    uint32_t* const codes = codes_.get();
    uint32_t* const pos = pos_.get();
    while (i < n_ && (s_[i] & 0xF0) == 0xE0) {
      const uint32_t cp = utf8::decode_three(s_ + i);
      const uint16_t c = bmp_code[cp];
      if (cp < lo || cp > hi || c == DictionaryIndex::kLookAside) break;
      codes[m] = c;
      pos[m++] = static_cast<uint32_t>(i);
      i += 3;
    }
    return i;
  }

  // Segments the labels r..m (a run that ends at byte e).
  void flush(size_t r, size_t m, size_t e) {
    if (m == r) return;
    pos_[m] = static_cast<uint32_t>(e);
    method(r, m - r);
  }

  // Maximal runs without whitespace are segmented on their own; whitespace is dropped
  // (baseline) or one word per character.
  CIYUAN_FLATTEN void whitespace_runs() {
    size_t i = 0, m = 0, r = 0;  // byte; labels stored; first label of the current run
    while (i < n_) {
      // The three-byte whitespace characters read kLookAside, so they are left to the checks below.
      i = put_three_byte_run(i, m, 0x800, 0xFFFF);
      if (i == n_) break;
      if (s_[i] < 0xE4) {  // lead bytes E4.. (CJK and beyond) are never whitespace
        const size_t len = space_len(s_, i, n_);
        if (len != 0) {
          flush(r, m, i);
          r = m;
          if (!opt_.baseline) emit(i, i + len, Piece::kSpace);
          i += len;
          continue;
        }
      }
      i += put_char(m++, i);
    }
    flush(r, m, n_);
  }

  // jieba's cut(): the DAG inside blocks of [\u4E00-\u9FD5a-zA-Z0-9+#&._%-]; every other
  // character is a word of its own, except that "\r\n" stays together.
  CIYUAN_FLATTEN void jieba_blocks() {
    size_t i = 0, m = 0, r = 0;
    while (i < n_) {
      i = put_three_byte_run(i, m, 0x4E00, 0x9FD5);  // CJK ideographs: all inside blocks
      if (i == n_) break;
      size_t len;
      const uint32_t c = utf8::decode_valid(s_ + i, &len);
      if (is_jieba_block(c)) {
        i += put_char(m++, i);
        continue;
      }
      flush(r, m, i);
      r = m;
      if (c == '\r' && i + 1 < n_ && s_[i + 1] == '\n') {
        emit(i, i + 2, Piece::kSpace);
        i += 2;
      } else {
        emit(i, i + len, space_len(s_, i, n_) != 0 ? Piece::kSpace : Piece::kOther);
        i += len;
      }
    }
    flush(r, m, n_);
  }

  // Segments the n labels from r (pos_[r + n] is the run's end).
  void method(size_t r, size_t n) {
    const uint32_t* c = codes_.get() + r;
    const uint32_t* pos = pos_.get() + r;
    if (tmp_size_ < 2 * n) {
      tmp_size_ = std::max(2 * n, size_t{4096});
      tmp_.reset(new Piece[tmp_size_]);
    }
    Piece* a = tmp_.get();
    switch (opt_.method) {
      case Method::kForward: {
        out_->insert(out_->end(), a, fmm(c, pos, n, a));
        break;
      }
      case Method::kBackward: {
        out_->insert(out_->end(), bmm(c, pos, n, a + n), a + n);
        break;
      }
      case Method::kBidirectional: {
        // Forward words at a[0..), backward words at a[..2n) (written from the end).
        Piece* const f_end = fmm(c, pos, n, a);
        Piece* const b_begin = bmm(c, pos, n, a + 2 * n);
        const size_t nf = static_cast<size_t>(f_end - a), nb = static_cast<size_t>(a + 2 * n - b_begin);
        const bool take_forward = nf < nb || (nf == nb && singles(a, f_end) < singles(b_begin, a + 2 * n));
        if (take_forward) {
          out_->insert(out_->end(), a, f_end);
        } else {
          out_->insert(out_->end(), b_begin, a + 2 * n);
        }
        break;
      }
      case Method::kDag: dag(c, pos, n); break;
    }
  }

  // Starts loading the trie cell that a word beginning with labels a, b reads at its second
  // step. That read is the one cache miss of most words (the root's children stay in cache).
  // Matching asks for it every position some characters ahead (any position may start a
  // word), so the misses of the next words overlap the work on this one.
  static constexpr size_t kPrefetchDistance = 16;
  static void prefetch_second(const DoubleArrayTrie::Node* nodes, const int32_t* first_bases, uint32_t a,
                              uint32_t b) {
    CIYUAN_PREFETCH(&nodes[static_cast<size_t>(first_bases[a]) + b]);
  }

  // The longest dictionary word that starts at character k (kForward) or ends before it
  // (backward: over the trie of reversed words), with its other end inside `stop`: returns that
  // end (k + 1 or k - 1 when no word matches: one character) and stores the word's id (-1: none).
  template <bool kForward>
  static size_t longest_word(const DoubleArrayTrie::Node* nodes, const uint64_t* pairs, const uint32_t* c, size_t k,
                             size_t stop, int32_t& word_id) {
    // The labels in matching order: c[k], c[k + 1], ... forward; c[k - 1], c[k - 2], ... backward.
    auto label = [c](size_t j) { return kForward ? c[j] : c[j - 1]; };
    size_t j = kForward ? k + 1 : k - 1;
    size_t best = j;
    int32_t best_id = -1;
    int32_t node = DoubleArrayTrie::child_of(nodes, DoubleArrayTrie::kRoot, label(k));
    if (node >= 0) {
      best_id = nodes[node].value;
      // Most words are one or two characters: the pair table settles the second step of
      // common characters without touching the trie.
      if (j != stop && DictionaryIndex::pair_may_follow(pairs, label(k), label(j))) {
        while (j != stop) {
          node = DoubleArrayTrie::child_of(nodes, node, label(j));
          if (node < 0) break;
          j = kForward ? j + 1 : j - 1;
          const int32_t id = nodes[node].value;
          if (id >= 0) {
            best = j;
            best_id = id;
          }
        }
      }
    }
    word_id = best_id;
    return best;
  }

  // Forward maximum matching over n labels: from the left, the longest word (or one
  // character), repeat. Writes the words from w on; returns the end.
  CIYUAN_FLATTEN Piece* fmm(const uint32_t* c, const uint32_t* pos, size_t n, Piece* w) const {
    const DoubleArrayTrie::Node* nodes = idx_.forward.data();
    const int32_t* first_bases = idx_.forward.first_bases();
    const uint64_t* pairs = idx_.forward_pairs.data();
    size_t k = 0;
    size_t ahead = 0;  // the second cells of words starting before here are fetched
    while (k < n) {
      for (const size_t until = std::min(n - 1, k + kPrefetchDistance); ahead < until; ++ahead)
        prefetch_second(nodes, first_bases, c[ahead], c[ahead + 1]);
      int32_t id;
      const size_t end = longest_word<true>(nodes, pairs, c, k, std::min(n, k + limit_), id);
      *w++ = {pos[k], pos[end], id};
      k = end;
    }
    return w;
  }

  // Backward maximum matching: the mirror image, over the trie of reversed words. Writes the
  // words backwards, ending at w; returns their start.
  CIYUAN_FLATTEN Piece* bmm(const uint32_t* c, const uint32_t* pos, size_t n, Piece* w) const {
    const DoubleArrayTrie& trie = idx_.backward();
    const DoubleArrayTrie::Node* nodes = trie.data();
    const int32_t* first_bases = trie.first_bases();
    const uint64_t* pairs = idx_.backward_pairs.data();
    size_t k = n;  // the word ends before character k
    size_t behind = n;  // the second cells of words ending after here are fetched
    while (k > 0) {
      for (const size_t until = k > kPrefetchDistance + 1 ? k - kPrefetchDistance : 1; behind > until; --behind)
        prefetch_second(nodes, first_bases, c[behind - 1], c[behind - 2]);
      int32_t id;
      const size_t start = longest_word<false>(nodes, pairs, c, k, k > limit_ ? k - limit_ : 0, id);
      *--w = {pos[start], pos[k], id};
      k = start;
    }
    return w;
  }

  size_t singles(const Piece* p, const Piece* end) const {
    size_t k = 0;
    for (; p < end; ++p) k += (p->end - p->start) == utf8::lead_length(s_[p->start]);
    return k;
  }

  // jieba's max-probability path: route[k] = max over words w = text[k:x] of
  // logp(w) + route[x], ties to the larger x; a character with no word is a word of its own
  // with log(1) - log(total), exactly as jieba computes it.
  CIYUAN_FLATTEN void dag(const uint32_t* c, const uint32_t* pos, size_t n) {
    const DoubleArrayTrie::Node* nodes = idx_.forward.data();
    const int32_t* first_bases = idx_.forward.first_bases();
    const uint64_t* pairs = idx_.forward_pairs.data();
    const double* logp = idx_.logp.data();
    route_.resize(n + 1);
    next_.resize(n);
    ids_.resize(n);
    double* route = route_.data();
    route[n] = 0.0;
    const double fallback = 0.0 - idx_.log_total;
    for (size_t k = n; k-- > 0;) {
      // Every position starts a walk here: fetch the one four positions on.
      if (k >= 4) prefetch_second(nodes, first_bases, c[k - 4], c[k - 3]);
      size_t best_x = 0;
      double best = 0.0;
      int32_t best_id = -1;
      const size_t stop = std::min(n, k + limit_);
      int32_t node = DoubleArrayTrie::kRoot;
      for (size_t x = k; x < stop;) {
        if (x == k + 1 && !DictionaryIndex::pair_may_follow(pairs, c[k], c[x])) break;
        node = DoubleArrayTrie::child_of(nodes, node, c[x]);
        if (node < 0) break;
        ++x;
        const int32_t id = nodes[node].value;
        if (id >= 0) {
          const double lp = logp[id];
          if (lp != DictionaryIndex::kNoEdge) {
            const double v = lp + route[x];
            if (best_x == 0 || v >= best) {  // x grows, so >= sends ties to the longer word
              best = v;
              best_x = x;
              best_id = id;
            }
          }
        }
      }
      if (best_x == 0) {
        best = fallback + route[k + 1];
        best_x = k + 1;
      }
      route[k] = best;
      next_[k] = static_cast<uint32_t>(best_x);
      ids_[k] = best_id;
    }
    for (size_t k = 0; k < n; k = next_[k]) emit(pos[k], pos[next_[k]], ids_[k]);
  }

  // Single ASCII letters and digits next to each other become one word (jieba's rule).
  void merge_alnum(size_t first) {
    // Most Chinese text has no two ASCII letters or digits side by side: nothing to look at.
    if (first_alnum_pair_ == SIZE_MAX) return;
    std::vector<Piece>& out = *out_;
    // Find the first pair to join, from the first piece that can be part of one.
    const size_t n = out.size();
    auto single_alnum = [this](const Piece& p) { return p.end - p.start == 1 && is_ascii_alnum(s_[p.start]); };
    const auto from = std::lower_bound(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), first_alnum_pair_,
                                       [](const Piece& p, size_t at) { return p.start < at; });
    size_t r = std::max(first + 1, static_cast<size_t>(from - out.begin()));
    while (r < n && !(single_alnum(out[r]) && single_alnum(out[r - 1]))) ++r;
    if (r >= n) return;
    size_t w = r;  // out[w - 1] is the last piece kept; out[r] joins it
    bool prev_alnum = true;
    for (; r < n; ++r) {
      const Piece p = out[r];
      const bool alnum = single_alnum(p);
      if (alnum && prev_alnum) {
        out[w - 1].end = p.end;
        out[w - 1].id = Piece::kOther;
        continue;
      }
      out[w++] = p;
      prev_alnum = alnum;
    }
    out.resize(w);
  }

  const DictionaryIndex& idx_;
  Options opt_;
  size_t limit_;  // the longest word to match, in characters
  const unsigned char* s_ = nullptr;
  size_t n_ = 0;
  std::vector<Piece>* out_ = nullptr;
  std::unique_ptr<uint32_t[]> codes_, pos_;  // labels and byte offsets of the text's characters
  size_t cap_ = 0;
  size_t first_alnum_pair_ = SIZE_MAX;  // byte offset of the text's first two adjacent [A-Za-z0-9]
  std::unique_ptr<Piece[]> tmp_;       // words of the current run (2 per character: BiMM)
  size_t tmp_size_ = 0;
  std::vector<uint32_t> next_;
  std::vector<double> route_;
  std::vector<int32_t> ids_;
};

bool is_ascii_space_tab(char c) { return c == ' ' || c == '\t'; }

bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool all_letters(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

}  // namespace

class Segmenter::Impl : public Matcher {
 public:
  using Matcher::Matcher;
};

Segmenter::Segmenter(const DictionaryIndex& index, const Options& options) : impl_(new Impl(index, options)) {}
Segmenter::~Segmenter() = default;

void Segmenter::run(std::string_view text, std::vector<Piece>& out) {
  if (text.size() >= UINT32_MAX)
    throw Error(ErrorKind::kInvalidInput, "text too long to segment in one call (4 GB); split it into lines");
  // Words average about two characters: reserving avoids most regrowth of a large output.
  out.reserve(out.size() + text.size() / 5 + 16);
  impl_->run(text, out);
}

void parse_dictionary(std::string_view data, std::vector<DictionaryEntry>& entries, std::vector<DictionaryLineError>& errors) {
  size_t pos = 0, line_no = 0;
  entries.reserve(entries.size() + static_cast<size_t>(std::count(data.begin(), data.end(), '\n')) + 1);
  // Valid files (nearly all) are checked in one pass; only a bad one is checked line by line,
  // for the line numbers.
  const bool valid = utf8::validate(data.data(), data.size()) == data.size();
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) nl = data.size();
    std::string_view line = data.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line_no == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    // Surrounding ASCII whitespace (and the '\r' of CRLF files) is not part of the entry.
    while (!line.empty() && is_ascii_space(line.back())) line.remove_suffix(1);
    while (!line.empty() && is_ascii_space(line.front())) line.remove_prefix(1);
    if (line.empty()) continue;
    const size_t bad = valid ? line.size() : utf8::validate(line.data(), line.size());
    if (bad != line.size()) {
      errors.push_back({line_no, "invalid UTF-8 at byte " + std::to_string(bad) + " of the line"});
      continue;
    }
    // Up to three fields (a fourth only tells that there are too many).
    std::string_view fields[4];
    size_t nfields = 0;
    for (size_t i = 0; i < line.size() && nfields < 4;) {
      while (i < line.size() && is_ascii_space_tab(line[i])) ++i;
      size_t j = i;
      while (j < line.size() && !is_ascii_space_tab(line[j])) ++j;
      if (j > i) fields[nfields++] = line.substr(i, j - i);
      i = j;
    }
    DictionaryEntry e{fields[0], 1, false};
    if (nfields > 3) {
      size_t count = 0;  // all of them, for the message
      for (size_t i = 0; i < line.size(); ++i)
        count += !is_ascii_space_tab(line[i]) && (i == 0 || is_ascii_space_tab(line[i - 1]));
      errors.push_back({line_no, "expected 'word', 'word freq' or 'word freq tag', got " + std::to_string(count) +
                                     " fields (words cannot contain spaces)"});
      continue;
    }
    if (nfields >= 2) {
      if (all_digits(fields[1])) {
        if (fields[1].size() > 15) {
          errors.push_back({line_no, "frequency " + std::string(fields[1]) + " is too large"});
          continue;
        }
        int64_t f = 0;
        for (char c : fields[1]) f = f * 10 + (c - '0');  // all digits, at most 15 of them
        e.freq = f;
        e.has_freq = true;
      } else if (!(nfields == 2 && all_letters(fields[1]))) {
        errors.push_back({line_no, "frequency must be a non-negative integer, got '" + std::string(fields[1]) +
                                       "' (expected 'word', 'word freq' or 'word freq tag')"});
        continue;
      }
    }
    entries.push_back(e);
  }
}

int32_t Dictionary::add(std::string_view word, int64_t freq, bool has_freq) {
  std::lock_guard<std::mutex> lock(mutex_);
  return add_locked(word, freq, has_freq);
}

void Dictionary::add_all(const std::vector<DictionaryEntry>& entries) {
  std::lock_guard<std::mutex> lock(mutex_);  // once, not per word
  ids_.reserve(words_.size() + entries.size());
  words_.reserve(words_.size() + entries.size());
  freqs_.reserve(words_.size() + entries.size());
  alive_.reserve(words_.size() + entries.size());
  has_freq_.reserve(words_.size() + entries.size());
  // The hash table is far larger than the caches and each word lands in a random slot: hash
  // all words first and fetch the slot of the word 16 ahead, so the misses overlap.
  constexpr size_t kAhead = 16;
  std::vector<uint64_t> hashes(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) hashes[i] = hash_bytes(entries[i].word.data(), entries[i].word.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + kAhead < entries.size()) ids_.prefetch(hashes[i + kAhead]);
    add_hashed(entries[i].word, hashes[i], entries[i].freq, entries[i].has_freq);
  }
}

int32_t Dictionary::add_locked(std::string_view word, int64_t freq, bool has_freq) {
  return add_hashed(word, hash_bytes(word.data(), word.size()), freq, has_freq);
}

int32_t Dictionary::add_hashed(std::string_view word, uint64_t h, int64_t freq, bool has_freq) {
  if (word.empty()) throw Error(ErrorKind::kInvalidInput, "a dictionary word cannot be empty");
  if (freq < 0) throw Error(ErrorKind::kInvalidInput, "a word frequency cannot be negative");
  if (!has_freq) freq = 1;
  const uint32_t found = ids_.find_hashed(word.data(), word.size(), h);
  int32_t id;
  if (found != BytesMap::kMissing) {
    id = static_cast<int32_t>(found);
    const size_t k = found;
    if (alive_[k]) {
      total_ -= freqs_[k];
      with_freq_ -= has_freq_[k];
    } else {
      alive_[k] = 1;
      ++live_;
    }
    freqs_[k] = freq;
    has_freq_[k] = has_freq;
  } else {
    if (words_.size() >= static_cast<size_t>(INT32_MAX))
      throw Error(ErrorKind::kModel, "too many dictionary words");
    id = static_cast<int32_t>(words_.size());
    words_.emplace_back(word);
    freqs_.push_back(freq);
    alive_.push_back(1);
    has_freq_.push_back(has_freq);
    ids_.insert_absent(word, h, static_cast<uint32_t>(id));
    ++live_;
  }
  total_ += freq;
  with_freq_ += has_freq;
  index_.reset();
  return id;
}

void Dictionary::reserve(size_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  ids_.reserve(words_.size() + n);
  words_.reserve(words_.size() + n);
  freqs_.reserve(words_.size() + n);
  alive_.reserve(words_.size() + n);
  has_freq_.reserve(words_.size() + n);
}

bool Dictionary::remove(std::string_view word) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t k = ids_.find(word);
  if (k == BytesMap::kMissing || !alive_[k]) return false;
  alive_[k] = 0;
  --live_;
  total_ -= freqs_[k];
  with_freq_ -= has_freq_[k];
  index_.reset();
  return true;
}

int64_t Dictionary::freq(std::string_view word) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t k = ids_.find(word);
  if (k == BytesMap::kMissing || !alive_[k]) return -1;
  return freqs_[k];
}

int Dictionary::max_word_chars() const { return index()->max_word_chars; }

std::vector<std::pair<std::string, int64_t>> Dictionary::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(live_);
  for (size_t k = 0; k < words_.size(); ++k)
    if (alive_[k]) out.emplace_back(words_[k], freqs_[k]);
  return out;
}

const DoubleArrayTrie& DictionaryIndex::backward() const {
  std::call_once(backward_once_, [this] {
    // Every key reversed, ordered by its reversed labels.
    std::vector<uint32_t> rev(labels.size());
    for (size_t k = 0; k + 1 < starts.size(); ++k) {
      const size_t a = starts[k], b = starts[k + 1];
      for (size_t i = a; i < b; ++i) rev[i] = labels[a + b - 1 - i];
    }
    // Sorted by the first two labels packed in one integer (labels are >= 1, so a one-label
    // key, padded with 0, comes first), then on a tie by the whole keys.
    std::vector<std::pair<uint64_t, size_t>> keyed(ids.size());
    for (size_t k = 0; k < keyed.size(); ++k) {
      const size_t a = starts[k], b = starts[k + 1];
      keyed[k] = {(static_cast<uint64_t>(rev[a]) << 32) | (b - a > 1 ? rev[a + 1] : 0u), k};
    }
    std::sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
      if (x.first != y.first) return x.first < y.first;
      return std::lexicographical_compare(rev.begin() + static_cast<std::ptrdiff_t>(starts[x.second]),
                                          rev.begin() + static_cast<std::ptrdiff_t>(starts[x.second + 1]),
                                          rev.begin() + static_cast<std::ptrdiff_t>(starts[y.second]),
                                          rev.begin() + static_cast<std::ptrdiff_t>(starts[y.second + 1]));
    });
    std::vector<size_t> order(ids.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = keyed[k].second;
    backward_.build(rev, starts, order, ids, alphabet);
  });
  return backward_;
}

std::shared_ptr<const DictionaryIndex> Dictionary::index() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (index_) return index_;
  auto idx = std::make_shared<DictionaryIndex>();
  std::vector<int32_t> order;
  order.reserve(live_);
  for (size_t k = 0; k < words_.size(); ++k)
    if (alive_[k]) order.push_back(static_cast<int32_t>(k));
  // Characters get labels by descending frequency (ties by code point, for determinism).
  std::vector<uint32_t> bmp_count(0x10000, 0);
  std::unordered_map<uint32_t, uint32_t> other_count;  // beyond the BMP: rare
  std::vector<uint32_t> cps;  // all words' code points, then their labels
  std::vector<size_t> starts(order.size() + 1, 0);
  size_t bytes = 0;
  for (int32_t id : order) bytes += words_[static_cast<size_t>(id)].size();
  cps.reserve(bytes / 2);
  for (size_t k = 0; k < order.size(); ++k) {
    const std::string& w = words_[static_cast<size_t>(order[k])];
    const unsigned char* p = reinterpret_cast<const unsigned char*>(w.data());
    for (size_t i = 0, len; i < w.size(); i += len) {
      const uint32_t cp = utf8::decode_valid(p + i, &len);
      cps.push_back(cp);
      if (cp < 0x10000) {
        ++bmp_count[cp];
      } else {
        ++other_count[cp];
      }
    }
    starts[k + 1] = cps.size();
  }
  std::vector<std::pair<uint32_t, uint32_t>> by_count;
  for (uint32_t cp = 0; cp < 0x10000; ++cp)
    if (bmp_count[cp]) by_count.emplace_back(bmp_count[cp], cp);
  for (const auto& kv : other_count) by_count.emplace_back(kv.second, kv.first);
  std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  idx->bmp_code.assign(0x10000, 0);
  // The three-byte whitespace characters, as space_len() defines them (leads E1..E3 only).
  for (uint32_t cp = 0x1000; cp < 0x4000; ++cp) {
    char b[4];
    const size_t len = utf8::encode(cp, b);
    if (space_len(reinterpret_cast<const unsigned char*>(b), 0, len) != 0) idx->bmp_code[cp] = DictionaryIndex::kLookAside;
  }
  for (size_t r = 0; r < by_count.size(); ++r) {
    const uint32_t cp = by_count[r].second, code = static_cast<uint32_t>(r + 1);
    if (cp < 0x10000 && code < DictionaryIndex::kLookAside && idx->bmp_code[cp] != DictionaryIndex::kLookAside) {
      idx->bmp_code[cp] = static_cast<uint16_t>(code);
    } else {
      if (cp < 0x10000) idx->bmp_code[cp] = DictionaryIndex::kLookAside;
      idx->other_code.emplace(cp, code);
    }
  }
  idx->alphabet = static_cast<uint32_t>(by_count.size() + 1);

  // Any order that groups common prefixes works: sort by code points (UTF-8 byte order is code
  // point order, and short strings compare without leaving the vector), then map to labels.
  // The sort compares each word's first 8 bytes as one big-endian integer (zero-padded) and only
  // then, on a tie, the whole words: most comparisons stay inside the key array.
  auto word_of = [&](size_t k) -> const std::string& { return words_[static_cast<size_t>(order[k])]; };
  std::vector<std::pair<uint64_t, size_t>> keyed(order.size());
  for (size_t k = 0; k < keyed.size(); ++k) {
    const std::string& w = word_of(k);
    uint64_t prefix = 0;
    for (size_t i = 0; i < 8; ++i) prefix = (prefix << 8) | (i < w.size() ? static_cast<unsigned char>(w[i]) : 0u);
    keyed[k] = {prefix, k};
  }
  std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return word_of(a.second) < word_of(b.second);
  });
  std::vector<size_t> korder(order.size());
  for (size_t k = 0; k < korder.size(); ++k) korder[k] = keyed[k].second;
  for (uint32_t& c : cps) c = idx->code(c);
  idx->forward.build(cps, starts, korder, order, idx->alphabet);

  // Which pairs of common characters start (end) a word of two or more characters.
  idx->forward_pairs.assign(DictionaryIndex::kPairCodes * DictionaryIndex::kPairCodes / 64, 0);
  idx->backward_pairs.assign(DictionaryIndex::kPairCodes * DictionaryIndex::kPairCodes / 64, 0);
  auto set_pair = [](std::vector<uint64_t>& bits, uint32_t a, uint32_t b) {
    if (a < DictionaryIndex::kPairCodes && b < DictionaryIndex::kPairCodes) {
      const size_t k = static_cast<size_t>(a) * DictionaryIndex::kPairCodes + b;
      bits[k / 64] |= uint64_t{1} << (k % 64);
    }
  };
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t a = starts[k], b = starts[k + 1];
    if (b - a < 2) continue;
    set_pair(idx->forward_pairs, cps[a], cps[a + 1]);
    set_pair(idx->backward_pairs, cps[b - 1], cps[b - 2]);
  }
  idx->labels = std::move(cps);
  idx->starts = std::move(starts);
  idx->ids = order;

  // jieba: log(freq) - log(total); words of frequency 0 are no DAG edges.
  idx->log_total = total_ > 0 ? std::log(static_cast<double>(total_)) : 0.0;
  idx->logp.assign(words_.size(), DictionaryIndex::kNoEdge);
  size_t max_chars = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t id = static_cast<size_t>(order[k]);
    if (freqs_[id] > 0) idx->logp[id] = std::log(static_cast<double>(freqs_[id])) - idx->log_total;
    max_chars = std::max(max_chars, idx->starts[k + 1] - idx->starts[k]);
  }
  idx->max_word_chars = static_cast<int>(max_chars);
  index_ = idx;
  return index_;
}

}  // namespace segment
}  // namespace ciyuan
