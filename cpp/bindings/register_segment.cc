// Bindings of Chinese word segmentation (cpp/src/segment.cc): the dictionary (SegLexicon) and
// its segmentation calls. The GIL is released while the core runs; output words are built from
// a per-dictionary cache of str objects, so a word the dictionary knows costs one reference
// count instead of a UTF-8 decode (that decode used to be most of the time of `cut`).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ciyuan/errors.h"
#include "ciyuan/parallel.h"
#include "ciyuan/segment.h"
#include "ciyuan/utf8.h"
#include "common.h"

#if defined(__GNUC__)
#define CIYUAN_PREFETCH(p, rw) __builtin_prefetch((p), (rw))
#else
#define CIYUAN_PREFETCH(p, rw) ((void)0)
#endif

namespace nb = nanobind;
using ciyuan::Piece;
using ciyuan::SegMethod;
using ciyuan::SegOptions;
using ciyuan_bindings::utf8_view;

using ciyuan_bindings::GcPause;

namespace {

SegOptions options(int method, bool baseline, int max_word_len) {
  if (method < 0 || method > 3) throw nb::value_error("method must be 0 (fmm), 1 (bmm), 2 (bimm) or 3 (dag)");
  SegOptions o;
  o.method = static_cast<SegMethod>(method);
  o.baseline = baseline;
  o.max_word_len = max_word_len;
  return o;
}

class PyLexicon {
 public:
  ~PyLexicon() {
    for (PyObject* o : word_cache_) Py_XDECREF(o);
    for (PyObject* o : char_cache_) Py_XDECREF(o);
  }

  ciyuan::Lexicon lex;

  // Sizes the caches for the current dictionary; call before word() (ids only grow).
  void prepare() {
    if (word_cache_.size() < lex.id_limit()) word_cache_.resize(lex.id_limit(), nullptr);
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
      o = p.end - p.start == 3 && s[0] >= 0xE0 && s[0] < 0xF0
              ? char_cache_[((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu)]
              : nullptr;
    }
    if (o) {
      Py_INCREF(o);
      return o;
    }
    return slow_word(text, p);
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


 public:
  nb::list words(std::string_view text, const std::vector<Piece>& pieces) {
    prepare();
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(pieces.size()));
    if (!list) throw nb::python_error();
    nb::list result = nb::steal<nb::list>(list);
    GcPause pause;
    for (size_t i = 0; i < pieces.size(); ++i) {
      prefetch(pieces, i);
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), word(text.data(), pieces[i]));
    }
    return result;
  }

 private:
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
    for (; byte_ < byte; ++byte_) chr_ += (static_cast<unsigned char>(text_[byte_]) & 0xC0) != 0x80;
    return chr_;
  }

 private:
  std::string_view text_;
  bool ascii_;
  size_t byte_ = 0, chr_ = 0;
};

// Segments text chunk by chunk (about 128 KB each, cut after a '\n', ' ' or '\t', where the
// segmenter starts afresh anyway, so the words are those of one call) and hands each chunk's
// pieces, with offsets into the whole text, to fn with the GIL held. The pieces of a 26 MB
// text would take 80 MB; a chunk's (about 500 KB, with the segmenter's scratch arrays) stay in
// the L2 cache between being written and being turned into str objects.
template <typename Fn>
void segment_chunked(const ciyuan::SegIndex& idx, std::string_view t, const SegOptions& o, Fn&& fn) {
  constexpr size_t kChunk = 128 << 10, kShortText = 4096;
  std::vector<Piece> pieces;
  size_t a = 0;
  while (a < t.size()) {
    size_t b = t.size();
    if (t.size() - a > 2 * kChunk) {
      size_t c = a + kChunk;
      while (c < t.size() && t[c] != '\n' && t[c] != ' ' && t[c] != '\t') ++c;
      b = c < t.size() ? c + 1 : t.size();
    }
    pieces.clear();
    auto run = [&] {
      ciyuan::segment(idx, t.substr(a, b - a), o, pieces);
      for (Piece& p : pieces) {
        p.start += static_cast<uint32_t>(a);
        p.end += static_cast<uint32_t>(a);
      }
    };
    if (b - a < kShortText) {
      run();  // a short line: releasing the GIL would cost more than it frees
    } else {
      nb::gil_scoped_release release;
      run();
    }
    fn(pieces);
    a = b;
  }
}

// Segments texts[i] for every i and hands each one's words to fn(i, pieces), in order, on the
// calling thread (which holds the GIL: fn builds Python objects). With more than one thread,
// threads - 1 workers segment ahead while the caller turns finished texts into lists, so both
// halves of the work run at once; the caller waits (without the GIL) only when it catches up.
template <typename Fn>
void segment_pipelined(const ciyuan::SegIndex& idx, const SegOptions& o, const std::vector<std::string_view>& texts,
                       int threads, Fn&& fn) {
  const size_t n = texts.size();
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const size_t workers = std::min(static_cast<size_t>(threads - 1), n / 2);
  if (workers == 0) {
    ciyuan::SegmentWorker worker(idx, o);
    std::vector<Piece> pieces;
    for (size_t i = 0; i < n; ++i) {
      pieces.clear();
      if (texts[i].size() < 4096) {
        worker.run(texts[i], pieces);  // a short text: releasing the GIL would cost more than it frees
      } else {
        nb::gil_scoped_release release;
        worker.run(texts[i], pieces);
      }
      fn(i, pieces);
    }
    return;
  }
  std::vector<std::vector<Piece>> pieces(n);
  std::unique_ptr<std::atomic<uint8_t>[]> ready(new std::atomic<uint8_t>[n]);  // 1: done, 2: failed
  for (size_t i = 0; i < n; ++i) ready[i].store(0, std::memory_order_relaxed);
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable done;
  std::exception_ptr error;
  auto work = [&] {
    ciyuan::SegmentWorker worker(idx, o);
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      uint8_t state = 1;
      try {
        worker.run(texts[i], pieces[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        state = 2;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        ready[i].store(state, std::memory_order_release);
      }
      done.notify_one();
    }
  };
  std::vector<std::thread> pool;
  // Stops and joins the workers however this function is left (fn may raise).
  struct Join {
    std::vector<std::thread>& pool;
    std::atomic<size_t>& next;
    size_t n;
    ~Join() {
      next.store(n);
      nb::gil_scoped_release release;
      for (std::thread& t : pool) t.join();
    }
  } join{pool, next, n};
  for (size_t t = 0; t < workers; ++t) pool.emplace_back(work);
  for (size_t i = 0; i < n; ++i) {
    if (ready[i].load(std::memory_order_acquire) == 0) {
      nb::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return ready[i].load(std::memory_order_acquire) != 0; });
    }
    if (ready[i].load(std::memory_order_acquire) == 2) {
      std::lock_guard<std::mutex> lock(mutex);
      std::rethrow_exception(error);
    }
    fn(i, pieces[i]);
    std::vector<Piece>().swap(pieces[i]);  // done with: the batch's words need not all be held at once
  }
}

PyObject* py_int(size_t v) {
  PyObject* o = PyLong_FromSize_t(v);
  if (!o) throw nb::python_error();
  return o;
}

}  // namespace

void register_segment(nb::module_& m) {
  nb::class_<PyLexicon>(m, "SegLexicon", "A Chinese word segmentation dictionary (native part of ciyuan.segment.Dictionary).")
      .def(nb::init<>())
      .def(
          "load",
          [](PyLexicon& self, nb::bytes data, bool strict) {
            std::vector<ciyuan::DictEntry> entries;
            std::vector<ciyuan::DictLineError> errors;
            {
              nb::gil_scoped_release release;
              ciyuan::parse_dictionary(std::string_view(data.c_str(), data.size()), entries, errors);
              if (!strict || errors.empty()) {
                self.lex.add_all(entries);
              }
            }
            nb::list out;
            for (const auto& e : errors) out.append(nb::make_tuple(e.line, e.message));
            return out;
          },
          nb::arg("data"), nb::arg("strict"),
          "Parse dictionary text and add its words (all, or none when strict and a line is bad).\n"
          "Returns the bad lines as (line_number, reason).")
      .def("add",
           [](PyLexicon& self, nb::handle word, int64_t freq, bool has_freq) {
             return self.lex.add(utf8_view(word), freq, has_freq);
           })
      .def("remove", [](PyLexicon& self, nb::handle word) { return self.lex.remove(utf8_view(word)); })
      .def("freq", [](const PyLexicon& self, nb::handle word) { return self.lex.freq(utf8_view(word)); })
      .def("__len__", [](const PyLexicon& self) { return self.lex.size(); })
      .def_prop_ro("total", [](const PyLexicon& self) { return self.lex.total(); })
      .def_prop_ro("has_frequencies", [](const PyLexicon& self) { return self.lex.has_frequencies(); })
      .def_prop_ro("max_word_chars",
                   [](const PyLexicon& self) {
                     nb::gil_scoped_release release;
                     return self.lex.max_word_chars();
                   })
      .def(
          "build",
          [](const PyLexicon& self, bool backward) {
            nb::gil_scoped_release release;
            auto idx = self.lex.index();
            return idx->forward.memory_bytes() + (backward ? idx->backward().memory_bytes() : 0);
          },
          nb::arg("backward") = false,
          "Build the search index now (it is otherwise built by the first segmentation after a\n"
          "change), with the backward trie (BMM, BiMM) too if asked; returns its size in bytes.")
      .def("entries",
           [](const PyLexicon& self) {
             nb::list out;
             for (const auto& e : self.lex.entries())
               out.append(nb::make_tuple(nb::str(e.first.data(), e.first.size()), e.second));
             return out;
           })
      .def(
          "cut",
          [](PyLexicon& self, nb::handle text, int method, bool baseline, int max_word_len) {
            const SegOptions o = options(method, baseline, max_word_len);
            const std::string_view t = utf8_view(text);
            if (t.size() >= UINT32_MAX) throw nb::value_error("text too long to segment in one call (4 GB)");
            // Building the index (after an edit) can take a while: without the GIL.
            std::shared_ptr<const ciyuan::SegIndex> idx = self.lex.cached_index();
            if (!idx) {
              nb::gil_scoped_release release;
              idx = self.lex.index();
            }
            // Every word has at least one character, so the list is made that long at once and
            // filled in place (no append calls, one reference per word), then cut to size.
            const Py_ssize_t bound = PyUnicode_GET_LENGTH(text.ptr());
            PyObject* list = PyList_New(bound);
            if (!list) throw nb::python_error();
            nb::list out = nb::steal<nb::list>(list);
            ciyuan_bindings::advise_huge_pages(reinterpret_cast<PyListObject*>(list)->ob_item,
                                               static_cast<size_t>(bound) * sizeof(PyObject*));
            Py_ssize_t n = 0;
            GcPause pause;
            self.prepare();
            segment_chunked(*idx, t, o, [&](const std::vector<Piece>& pieces) {
              if (static_cast<size_t>(bound - n) < pieces.size()) throw std::logic_error("more words than characters");
              for (size_t i = 0; i < pieces.size(); ++i) {
                self.prefetch(pieces, i);
                PyList_SET_ITEM(list, n++, self.word(t.data(), pieces[i]));
              }
            });
            if (n < bound && PyList_SetSlice(list, n, bound, nullptr) != 0) throw nb::python_error();
            return out;
          },
          nb::arg("text"), nb::arg("method"), nb::arg("baseline"), nb::arg("max_word_len"),
          "The words of text.")
      .def(
          "cut_spans",
          [](PyLexicon& self, nb::handle text, int method, bool baseline, int max_word_len, bool with_words) {
            const SegOptions o = options(method, baseline, max_word_len);
            const std::string_view t = utf8_view(text);
            if (t.size() >= UINT32_MAX) throw nb::value_error("text too long to segment in one call (4 GB)");
            std::shared_ptr<const ciyuan::SegIndex> idx;
            {
              nb::gil_scoped_release release;
              idx = self.lex.index();
            }
            nb::list result;
            GcPause pause;
            self.prepare();
            CharCounter chars(t, ciyuan_bindings::is_ascii(text));
            segment_chunked(*idx, t, o, [&](const std::vector<Piece>& pieces) {
              for (const Piece& p : pieces) {
                const size_t s = chars.at(p.start), e = chars.at(p.end);
                PyObject* tup = PyTuple_New(with_words ? 3 : 2);
                if (!tup) throw nb::python_error();
                nb::object owner = nb::steal(tup);
                size_t k = 0;
                if (with_words) PyTuple_SET_ITEM(tup, k++, self.word(t.data(), p));
                PyTuple_SET_ITEM(tup, k++, py_int(s));
                PyTuple_SET_ITEM(tup, k, py_int(e));
                if (PyList_Append(result.ptr(), tup) != 0) throw nb::python_error();
              }
            });
            return result;
          },
          nb::arg("text"), nb::arg("method"), nb::arg("baseline"), nb::arg("max_word_len"), nb::arg("with_words"),
          "The words of text as (word, start, end), or (start, end) without words; character offsets.")
      .def(
          "cut_batch",
          [](PyLexicon& self, nb::handle texts, int method, bool baseline, int max_word_len, int threads) {
            const SegOptions o = options(method, baseline, max_word_len);
            std::vector<nb::object> owners;
            std::vector<std::string_view> views;
            for (nb::handle t : texts) {
              owners.push_back(nb::borrow(t));
              views.push_back(utf8_view(t));
            }
            std::shared_ptr<const ciyuan::SegIndex> idx;
            {
              nb::gil_scoped_release release;
              idx = self.lex.index();
            }
            nb::list out;
            GcPause pause;
            self.prepare();
            segment_pipelined(*idx, o, views, threads, [&](size_t i, const std::vector<Piece>& pieces) {
              out.append(self.words(views[i], pieces));
            });
            return out;
          },
          nb::arg("texts"), nb::arg("method"), nb::arg("baseline"), nb::arg("max_word_len"), nb::arg("threads"),
          "The words of each text; texts are segmented on threads - 1 threads (<= 0: all cores)\n"
          "while this one turns the finished ones into lists, in order.")
      .def(
          "segment_lines",
          [](PyLexicon& self, nb::bytes data, int method, bool baseline, int max_word_len, int threads) {
            const SegOptions o = options(method, baseline, max_word_len);
            const std::string_view t(data.c_str(), data.size());
            // The output is written straight into the bytes object returned (no second copy).
            PyObject* result = nullptr;
            {
              nb::gil_scoped_release release;  // invalid UTF-8 is found (in parallel) by segment_lines
              auto idx = self.lex.index();
              ciyuan::segment_lines(*idx, t, o, threads, [&result](size_t n) -> char* {
                nb::gil_scoped_acquire acquire;
                result = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
                if (!result) return nullptr;
                ciyuan_bindings::advise_huge_pages(PyBytes_AS_STRING(result), n);
                return PyBytes_AS_STRING(result);
              });
            }
            if (!result) throw nb::python_error();
            return nb::steal<nb::bytes>(result);
          },
          nb::arg("data"), nb::arg("method"), nb::arg("baseline"), nb::arg("max_word_len"), nb::arg("threads"),
          "Segment every line of UTF-8 data; the words separated by spaces, one line per input line.");
}
