// Bindings of Chinese word segmentation (cpp/src/segment.cc, segment_batch.cc): conversions only.
//
//   _core.SegmentMethod   the method (fmm, bmm, bimm, dag)
//   _core.SegmentOptions  method, baseline, max_word_len: everything a segmentation call needs
//   _core.Dictionary      the word list (ciyuan.segment.Dictionary owns one)
//   _core.Segmenter       a Dictionary with its options (ciyuan.segment.Segmenter owns one)
//
// The GIL is released while the core runs; output words are built from a per-dictionary cache
// of str objects, so a word the dictionary knows costs one reference count instead of a UTF-8
// decode (that decode used to be most of the time of `cut`).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ciyuan/errors.h"
#include "ciyuan/huge_pages.h"
#include "ciyuan/segment.h"
#include "ciyuan/segment_batch.h"
#include "ciyuan/utf8.h"
#include "common.h"

#if defined(__GNUC__)
#define CIYUAN_PREFETCH(p, rw) __builtin_prefetch((p), (rw))
#else
#define CIYUAN_PREFETCH(p, rw) ((void)0)
#endif

namespace nb = nanobind;
namespace segment = ciyuan::segment;
using ciyuan_bindings::GcPause;
using ciyuan_bindings::utf8_view;
using segment::Piece;

namespace {

// The core's long steps and waits run without the GIL.
void release_gil(const std::function<void()>& step) {
  nb::gil_scoped_release release;
  step();
}

// _core.Dictionary: the core's dictionary and the str objects of its words.
class PyDictionary {
 public:
  PyDictionary() = default;
  PyDictionary(const PyDictionary&) = delete;
  PyDictionary& operator=(const PyDictionary&) = delete;
  ~PyDictionary() {
    for (PyObject* o : word_cache_) Py_XDECREF(o);
    for (PyObject* o : char_cache_) Py_XDECREF(o);
  }

  segment::Dictionary dict;

  // The current index; building it (after an edit) can take a while, so without the GIL.
  std::shared_ptr<const segment::DictionaryIndex> index() const {
    std::shared_ptr<const segment::DictionaryIndex> idx = dict.cached_index();
    if (!idx) {
      nb::gil_scoped_release release;
      idx = dict.index();
    }
    return idx;
  }

  // Sizes the caches for the current dictionary; call before word() (ids only grow).
  void prepare() {
    if (word_cache_.size() < dict.id_limit()) word_cache_.resize(dict.id_limit(), nullptr);
    if (char_cache_.empty()) char_cache_.assign(0x10000, nullptr);
  }

  // Most of the time of turning words into str objects is two cache misses per word: the
  // cache slot and the str's reference count. Fetching them some words ahead overlaps them
  // (64 and 32 words ahead measured 10% faster than 16 and 8: a word takes only a few
  // nanoseconds, less than a miss).
  void prefetch(const std::vector<Piece>& pieces, size_t i) const {
    if (i + 64 < pieces.size() && pieces[i + 64].id >= 0)
      CIYUAN_PREFETCH(&word_cache_[static_cast<size_t>(pieces[i + 64].id)], 0);
    if (i + 32 < pieces.size() && pieces[i + 32].id >= 0) {
      PyObject* o = word_cache_[static_cast<size_t>(pieces[i + 32].id)];
      if (o) CIYUAN_PREFETCH(o, 1);
    }
  }

  // A new reference to the str of piece p of `text` (after prepare()).
  PyObject* word(const char* text, const Piece& p) {
    PyObject* o;
    if (p.id >= 0) {  // the common case: a dictionary word seen before
      o = word_cache_[static_cast<size_t>(p.id)];
    } else {
      // Next most common: one CJK punctuation mark or character outside the dictionary.
      const unsigned char* s = reinterpret_cast<const unsigned char*>(text) + p.start;
      o = p.end - p.start == 3 && s[0] >= 0xE0 && s[0] < 0xF0 ? char_cache_[ciyuan::utf8::decode_three(s)] : nullptr;
    }
    if (o) {
      Py_INCREF(o);
      return o;
    }
    return slow_word(text, p);
  }

  // The words of `pieces` (of `text`) as a new list.
  nb::list words(std::string_view text, const std::vector<Piece>& pieces) {
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(pieces.size()));
    if (!list) throw nb::python_error();
    nb::list result = nb::steal<nb::list>(list);
    for (size_t i = 0; i < pieces.size(); ++i) {
      prefetch(pieces, i);
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), word(text.data(), pieces[i]));
    }
    return result;
  }

 private:
  PyObject* slow_word(const char* text, const Piece& p) {
    const size_t len = p.end - p.start;
    PyObject** slot = nullptr;
    if (p.id >= 0) {
      slot = &word_cache_[static_cast<size_t>(p.id)];
    } else if (len <= 3) {  // one BMP character (or a short ASCII run, not cached)
      uint32_t cp;
      const char* s = text + p.start;
      if (ciyuan::utf8::decode(s, s + len, &cp) == len) slot = &char_cache_[cp];
    }
    if (slot && *slot) {
      Py_INCREF(*slot);
      return *slot;
    }
    PyObject* o = PyUnicode_DecodeUTF8(text + p.start, static_cast<Py_ssize_t>(len), "strict");
    if (!o) throw nb::python_error();
    if (slot) {
      Py_INCREF(o);
      *slot = o;
    }
    return o;
  }

  std::vector<PyObject*> word_cache_;  // word id -> str
  std::vector<PyObject*> char_cache_;  // BMP code point -> str, for unmatched characters
};

// Character index of byte offsets asked for in increasing order (the pieces come in text
// order), in one pass over the text.
class CharCounter {
 public:
  CharCounter(std::string_view text, bool ascii) : text_(text), ascii_(ascii) {}
  size_t at(size_t byte) {
    if (ascii_) return byte;
    for (; byte_ < byte; ++byte_) chr_ += !ciyuan::utf8::is_continuation(static_cast<unsigned char>(text_[byte_]));
    return chr_;
  }

 private:
  std::string_view text_;
  bool ascii_;
  size_t byte_ = 0, chr_ = 0;
};

PyObject* py_int(size_t v) {
  PyObject* o = PyLong_FromSize_t(v);
  if (!o) throw nb::python_error();
  return o;
}

// _core.Segmenter: a dictionary (kept alive by the binding) and the options of its calls.
class PySegmenter {
 public:
  PySegmenter(PyDictionary& dictionary, const segment::Options& options) : dict_(dictionary), options_(options) {}

  const segment::Options& options() const { return options_; }

  nb::list cut(nb::handle text) {
    // A local for the dictionary: the per-word loop then keeps it in a register (a member would
    // be read again after every call into Python).
    PyDictionary& dict = dict_;
    const std::string_view t = text_view(text);
    auto idx = dict.index();
    // Every word has at least one character, so the list is made that long at once and
    // filled in place (no append calls, one reference per word), then cut to size.
    const Py_ssize_t bound = PyUnicode_GET_LENGTH(text.ptr());
    PyObject* list = PyList_New(bound);
    if (!list) throw nb::python_error();
    nb::list out = nb::steal<nb::list>(list);
    ciyuan::huge_pages::advise(reinterpret_cast<PyListObject*>(list)->ob_item,
                               static_cast<size_t>(bound) * sizeof(PyObject*));
    Py_ssize_t n = 0;
    GcPause pause;
    dict.prepare();
    segment::cut_chunked(*idx, t, options_, release_gil, [&](const std::vector<Piece>& pieces) {
      if (static_cast<size_t>(bound - n) < pieces.size()) throw std::logic_error("more words than characters");
      for (size_t i = 0; i < pieces.size(); ++i) {
        dict.prefetch(pieces, i);
        PyList_SET_ITEM(list, n++, dict.word(t.data(), pieces[i]));
      }
    });
    if (n < bound && PyList_SetSlice(list, n, bound, nullptr) != 0) throw nb::python_error();
    return out;
  }

  // (word, start, end) per word, or (start, end) without words; character offsets.
  nb::list spans(nb::handle text, bool with_words) {
    PyDictionary& dict = dict_;  // in a register, as in cut()
    const std::string_view t = text_view(text);
    auto idx = dict.index();
    nb::list result;
    GcPause pause;
    dict.prepare();
    CharCounter chars(t, ciyuan_bindings::is_ascii(text));
    segment::cut_chunked(*idx, t, options_, release_gil, [&](const std::vector<Piece>& pieces) {
      for (const Piece& p : pieces) {
        const size_t s = chars.at(p.start), e = chars.at(p.end);
        PyObject* tup = PyTuple_New(with_words ? 3 : 2);
        if (!tup) throw nb::python_error();
        nb::object owner = nb::steal(tup);
        size_t k = 0;
        if (with_words) PyTuple_SET_ITEM(tup, k++, dict.word(t.data(), p));
        PyTuple_SET_ITEM(tup, k++, py_int(s));
        PyTuple_SET_ITEM(tup, k, py_int(e));
        if (PyList_Append(result.ptr(), tup) != 0) throw nb::python_error();
      }
    });
    return result;
  }

  nb::list cut_batch(nb::handle texts, int threads) {
    std::vector<nb::object> owners;  // keeps the texts (and their UTF-8 forms) alive
    std::vector<std::string_view> views;
    for (nb::handle t : texts) {
      owners.push_back(nb::borrow(t));
      views.push_back(utf8_view(t));
    }
    auto idx = dict_.index();
    nb::list out;
    GcPause pause;
    dict_.prepare();
    segment::cut_batch(*idx, views, options_, threads, release_gil, [&](size_t i, const std::vector<Piece>& pieces) {
      out.append(dict_.words(views[i], pieces));
    });
    return out;
  }

  nb::bytes segment_lines(nb::bytes data, int threads) {
    const std::string_view t(data.c_str(), data.size());
    // The output is written straight into the bytes object returned (no second copy).
    PyObject* result = nullptr;
    {
      nb::gil_scoped_release release;  // invalid UTF-8 is found (in parallel) by segment_lines
      auto idx = dict_.dict.index();
      segment::segment_lines(*idx, t, options_, threads, [&result](size_t n) -> char* {
        nb::gil_scoped_acquire acquire;
        result = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
        if (!result) return nullptr;
        ciyuan::huge_pages::advise(PyBytes_AS_STRING(result), n);
        return PyBytes_AS_STRING(result);
      });
    }
    if (!result) throw nb::python_error();
    return nb::steal<nb::bytes>(result);
  }

 private:
  // cut_chunked checks the size too; checked here first because cut() sizes its list by the
  // text before segmenting, and this raises a plain ValueError.
  static std::string_view text_view(nb::handle text) {
    const std::string_view t = utf8_view(text);
    if (t.size() >= UINT32_MAX) throw nb::value_error("text too long to segment in one call (4 GB)");
    return t;
  }

  PyDictionary& dict_;
  segment::Options options_;
};

}  // namespace

void register_segment(nb::module_& m) {
  nb::enum_<segment::Method>(m, "SegmentMethod", "A segmentation method (see ciyuan.segment.Segmenter).")
      .value("fmm", segment::Method::kForward, "forward maximum matching")
      .value("bmm", segment::Method::kBackward, "backward maximum matching")
      .value("bimm", segment::Method::kBidirectional, "bidirectional maximum matching")
      .value("dag", segment::Method::kDag, "jieba's max-probability path over the word DAG");

  nb::class_<segment::Options>(m, "SegmentOptions", "The options of a segmentation call.")
      .def(
          "__init__",
          [](segment::Options* self, segment::Method method, bool baseline, int max_word_len) {
            new (self) segment::Options{method, baseline, max_word_len};
          },
          nb::kw_only(), nb::arg("method") = segment::Method::kForward, nb::arg("baseline") = false,
          nb::arg("max_word_len") = 0)
      .def_rw("method", &segment::Options::method)
      .def_rw("baseline", &segment::Options::baseline,
              "The SIGHAN bakeoff baseline: whitespace dropped, every unmatched character a word.")
      .def_rw("max_word_len", &segment::Options::max_word_len,
              "The longest word to match, in characters (0: the dictionary's longest word).");

  nb::class_<PyDictionary>(m, "Dictionary", "A Chinese word segmentation dictionary (owned by ciyuan.segment.Dictionary).")
      .def(nb::init<>())
      .def(
          "load",
          [](PyDictionary& self, nb::bytes data, bool strict) {
            std::vector<segment::DictionaryEntry> entries;
            std::vector<segment::DictionaryLineError> errors;
            {
              nb::gil_scoped_release release;
              segment::parse_dictionary(std::string_view(data.c_str(), data.size()), entries, errors);
              if (!strict || errors.empty()) self.dict.add_all(entries);
            }
            nb::list out;
            for (const auto& e : errors) out.append(nb::make_tuple(e.line, e.message));
            return out;
          },
          nb::arg("data"), nb::arg("strict"),
          nb::sig("def load(self, data: bytes, strict: bool) -> list[tuple[int, str]]"),
          "Parse dictionary text and add its words (all, or none when strict and a line is bad).\n"
          "Returns the bad lines as (line_number, reason).")
      .def(
          "add",
          [](PyDictionary& self, nb::handle word, std::optional<int64_t> freq) {
            return self.dict.add(utf8_view(word), freq.value_or(1), freq.has_value());
          },
          nb::arg("word"), nb::arg("freq").none() = nb::none(),
          nb::sig("def add(self, word: str, freq: int | None = None) -> int"),
          "Add word (or set its frequency); None counts 1 and is no frequency. Returns its id.")
      .def(
          "remove", [](PyDictionary& self, nb::handle word) { return self.dict.remove(utf8_view(word)); },
          nb::sig("def remove(self, word: str) -> bool"), "Remove word; whether it was there.")
      .def(
          "freq", [](const PyDictionary& self, nb::handle word) { return self.dict.freq(utf8_view(word)); },
          nb::sig("def freq(self, word: str) -> int"), "The frequency of word, or -1 when it is not in the dictionary.")
      .def("__len__", [](const PyDictionary& self) { return self.dict.size(); })
      .def_prop_ro("total", [](const PyDictionary& self) { return self.dict.total(); })
      .def_prop_ro("has_frequencies", [](const PyDictionary& self) { return self.dict.has_frequencies(); })
      .def_prop_ro("max_word_chars",
                   [](const PyDictionary& self) {
                     nb::gil_scoped_release release;
                     return self.dict.max_word_chars();
                   })
      .def(
          "build",
          [](const PyDictionary& self, bool backward) {
            nb::gil_scoped_release release;
            auto idx = self.dict.index();
            return idx->forward.memory_bytes() + (backward ? idx->backward().memory_bytes() : 0);
          },
          nb::arg("backward") = false,
          "Build the search index now (it is otherwise built by the first segmentation after a\n"
          "change), with the backward trie (BMM, BiMM) too if asked; returns its size in bytes.")
      .def(
          "entries",
          [](const PyDictionary& self) {
            nb::list out;
            for (const auto& e : self.dict.entries())
              out.append(nb::make_tuple(nb::str(e.first.data(), e.first.size()), e.second));
            return out;
          },
          nb::sig("def entries(self) -> list[tuple[str, int]]"), "(word, freq) for every word, in insertion order.");

  nb::class_<PySegmenter>(m, "Segmenter", "A dictionary and the options of its segmentation calls (owned by "
                                          "ciyuan.segment.Segmenter).")
      .def(nb::init<PyDictionary&, const segment::Options&>(), nb::arg("dictionary"), nb::arg("options"),
           nb::keep_alive<1, 2>())
      // A copy, not a live reference: the workers of a call read the options without the GIL.
      .def_prop_ro("options", [](const PySegmenter& self) { return self.options(); })
      .def("cut", &PySegmenter::cut, nb::arg("text"), nb::sig("def cut(self, text: str) -> list[str]"),
           "The words of text.")
      .def(
          "tokenize", [](PySegmenter& self, nb::handle text) { return self.spans(text, true); }, nb::arg("text"),
          nb::sig("def tokenize(self, text: str) -> list[tuple[str, int, int]]"),
          "(word, start, end) for each word of text; character offsets.")
      .def(
          "spans", [](PySegmenter& self, nb::handle text) { return self.spans(text, false); }, nb::arg("text"),
          nb::sig("def spans(self, text: str) -> list[tuple[int, int]]"),
          "(start, end) for each word of text; character offsets.")
      .def("cut_batch", &PySegmenter::cut_batch, nb::arg("texts"), nb::arg("threads"),
           nb::sig("def cut_batch(self, texts: collections.abc.Iterable[str], threads: int) -> list[list[str]]"),
           "The words of each text; texts are segmented on threads - 1 threads (<= 0: all cores)\n"
           "while this one turns the finished ones into lists, in order.")
      .def("segment_lines", &PySegmenter::segment_lines, nb::arg("data"), nb::arg("threads"),
           "Segment every line of UTF-8 data; the words separated by spaces, one line per input line.");
}
