// Python bindings of the pre-tokenizer scanners (cpp/src/pretokenize.cc).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ciyuan/cpu_features.h"
#include "ciyuan/pretokenize.h"
#include "common.h"
#include "ciyuan/utf8.h"

namespace nb = nanobind;

using ciyuan_bindings::GcPause;

namespace {

nb::list scan(ciyuan::PreTokPattern pattern, std::string_view text) {
    std::vector<std::pair<uint32_t, uint32_t>> spans;
    {
        nb::gil_scoped_release release;
        ciyuan::split_pieces(pattern, text, spans);
    }
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(spans.size()));
    if (!list) throw nb::python_error();
    nb::list result = nb::steal<nb::list>(list);
    // Millions of fresh tuples would trigger the cyclic GC over and over (a third of the time
    // here); they cannot form cycles, so pause it while filling the list.
    GcPause pause;
    for (size_t i = 0; i < spans.size(); ++i) {
        PyObject* tup = PyTuple_New(2);
        if (!tup) throw nb::python_error();
        PyList_SetItem(list, static_cast<Py_ssize_t>(i), tup);  // steals tup
        PyObject* a = PyLong_FromUnsignedLong(spans[i].first);
        PyObject* b = a ? PyLong_FromUnsignedLong(spans[i].second) : nullptr;
        if (!b) {
            Py_XDECREF(a);
            throw nb::python_error();
        }
        PyTuple_SetItem(tup, 0, a);
        PyTuple_SetItem(tup, 1, b);
    }
    return result;
}

}  // namespace

void register_pre_tokenizers(nb::module_& m) {
    m.def(
        "split_pieces",
        [](std::string_view pattern, nb::str text) {
            const ciyuan::PreTokPattern p = ciyuan::parse_pattern(pattern);
            Py_ssize_t n = 0;
            const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &n);  // UnicodeEncodeError on lone surrogates
            if (!data) throw nb::python_error();
            return scan(p, std::string_view(data, static_cast<size_t>(n)));
        },
        nb::arg("pattern"), nb::arg("text"),
        "Split text as regex.findall(PATTERN, text) does for a named pre-tokenizer pattern\n"
        "('gpt2', 'cl100k_base', 'o200k_base', 'wordpunct', 'whitespace').\n\n"
        "Returns the pieces as [start, end) byte offsets into text.encode('utf-8').");
    m.def(
        "split_pieces",
        [](std::string_view pattern, nb::bytes text) {
            const ciyuan::PreTokPattern p = ciyuan::parse_pattern(pattern);
            const std::string_view sv(text.c_str(), text.size());
            const size_t bad = ciyuan::utf8::validate(sv.data(), sv.size());
            if (bad != sv.size())
                throw nb::value_error(("invalid UTF-8 at byte offset " + std::to_string(bad)).c_str());
            return scan(p, sv);
        },
        nb::arg("pattern"), nb::arg("text"),
        "The same over UTF-8 bytes; raises ValueError naming the offset of the first invalid byte.");
    m.def(
        "_count_pieces",
        [](std::string_view pattern, nb::bytes text, int repeats) {
            const ciyuan::PreTokPattern p = ciyuan::parse_pattern(pattern);
            const std::string_view sv(text.c_str(), text.size());
            const size_t bad = ciyuan::utf8::validate(sv.data(), sv.size());
            if (bad != sv.size())
                throw nb::value_error(("invalid UTF-8 at byte offset " + std::to_string(bad)).c_str());
            nb::gil_scoped_release release;
            size_t count = 0;
            std::pair<uint32_t, uint32_t> spans[256];  // the encoder's batches
            for (int r = 0; r < repeats; ++r) {
                count = 0;
                for (size_t pos = 0, n; pos < sv.size() && (n = ciyuan::next_pieces(p, sv, pos, spans, 256)) > 0;) {
                    count += n;
                    pos = spans[n - 1].second;
                }
            }
            return count;
        },
        nb::arg("pattern"), nb::arg("text"), nb::arg("repeats") = 1,
        "For benchmarks: how many pieces the scanner finds in text (UTF-8 bytes), scanning it\n"
        "`repeats` times in batches of 256 as the encoder does, without building Python objects.");
    m.def(
        "simd_level", [] { return std::string(ciyuan::simd_level_name(ciyuan::simd_level())); },
        "The SIMD level the pre-tokenizer scanners use: 'scalar', 'sse2', 'sse42', 'avx2' or 'avx512'\n"
        "(the best the CPU supports, capped by the environment variable CIYUAN_SIMD at first use).");
    m.def(
        "best_simd_level", [] { return std::string(ciyuan::simd_level_name(ciyuan::best_simd_level())); },
        "The best SIMD level this CPU and build support (see simd_level).");
    m.def(
        "_set_simd_level",
        [](std::string_view name) {
            ciyuan::SimdLevel level;
            if (!ciyuan::parse_simd_level(name, &level))
                throw nb::value_error(("unknown SIMD level '" + std::string(name) +
                                       "'; expected 'scalar', 'sse2', 'sse42', 'avx2' or 'avx512'")
                                          .c_str());
            return std::string(ciyuan::simd_level_name(ciyuan::set_simd_level(level)));
        },
        nb::arg("name"),
        "For tests and benchmarks: make the scanners use a SIMD level (capped at best_simd_level()),\n"
        "for every thread; returns the level now in effect. Do not call while other threads encode.");
}
