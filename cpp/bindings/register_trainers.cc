// Bindings of the trainers: WordCounter (parallel word counting) and train_bpe.
// Python owns the options, defaults and files; these calls take whole buffers and release the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <type_traits>
#include <utility>
#include <vector>

#include "ciyuan/bert.h"
#include "ciyuan/bpe_trainer.h"
#include "ciyuan/errors.h"
#include "ciyuan/pretokenize.h"
#include "ciyuan/utf8.h"
#include "ciyuan/wordpiece_trainer.h"
#include "common.h"

namespace nb = nanobind;
using ciyuan::WordCounter;
using ciyuan_bindings::utf8_view;

namespace {

int parse_pattern(const std::string& name) {
  if (name.empty()) return -1;
  ciyuan::PreTokPattern p;
  if (!ciyuan::pattern_from_name(name, &p))
    throw ciyuan::Error(ciyuan::ErrorKind::kInvalidInput, "unknown native pre-tokenizer '" + name + "'");
  return static_cast<int>(p);
}

std::string_view bytes_view(const nb::bytes& b) { return std::string_view(b.c_str(), b.size()); }

// The native trainers' progress callback: it checks for Ctrl-C (which stops training) and calls
// `progress(done, total)` unless it is None. Called without the GIL.
ciyuan::TrainProgress progress_callback(nb::object& progress) {
  return [&progress](uint64_t done, uint64_t total) {
    nb::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (!progress.is_none()) progress(done, total);
  };
}

// Runs train(words, counts, done) on the counter's words with the GIL released; with `consume`
// the counter is emptied as soon as the trainer has copied them (done()). Returns the result as
// (tokens, merges, merge_counts, alphabet_size, stop_reason).
template <class Train>
nb::tuple train_on(WordCounter& counter, bool consume, Train&& train) {
  std::invoke_result_t<Train&, std::vector<std::string_view>&, std::vector<uint64_t>&, std::function<void()>&> result;
  {
    std::vector<std::string_view> words;
    std::vector<uint64_t> counts;
    nb::gil_scoped_release release;
    counter.words(&words, &counts);
    std::function<void()> done;
    if (consume) done = [&]() {
      std::vector<std::string_view>().swap(words);
      counter.clear();
    };
    result = train(words, counts, done);
  }
  nb::list tokens;
  for (const std::string& t : result.tokens) tokens.append(nb::bytes(t.data(), t.size()));
  return nb::make_tuple(tokens, result.merges, result.merge_counts, result.alphabet_size, result.stop_reason);
}

}  // namespace

void register_trainers(nb::module_& m) {
  m.def(
      "utf8_error_offset",
      [](nb::bytes data) {
        std::string_view v = bytes_view(data);
        return ciyuan::utf8::validate(v.data(), v.size());
      },
      nb::arg("data"), "Offset of the first byte that is not valid UTF-8 (len(data) when all is valid).");

  nb::class_<WordCounter>(m, "WordCounter")
      .def("__init__", [](WordCounter* self, const std::string& pattern) { new (self) WordCounter(parse_pattern(pattern)); },
           nb::arg("pattern"))
      .def_static(
          "bert",
          [](bool clean_text, bool handle_chinese_chars, bool strip_accents, bool lowercase) {
            ciyuan::BertOptions options;
            options.clean_text = clean_text;
            options.handle_chinese_chars = handle_chinese_chars;
            options.strip_accents = strip_accents;
            options.lowercase = lowercase;
            return new WordCounter(options);
          },
          nb::arg("clean_text"), nb::arg("handle_chinese_chars"), nb::arg("strip_accents"), nb::arg("lowercase"),
          nb::rv_policy::take_ownership,
          "A counter of the words the native BERT front end (BertNormalizer + BertPreTokenizer) cuts.")
      .def(
          "add_texts",
          [](WordCounter& self, nb::list texts, int threads) {
            std::vector<std::string_view> views;
            views.reserve(texts.size());
            for (nb::handle t : texts) views.push_back(utf8_view(t));  // the list keeps them alive
            nb::gil_scoped_release release;
            self.add_texts(views, threads);
          },
          nb::arg("texts"), nb::arg("threads"))
      .def(
          "add_lines",
          [](WordCounter& self, nb::bytes buffer, int threads) {
            std::string_view v = bytes_view(buffer);
            nb::gil_scoped_release release;
            self.add_lines(v, threads);
          },
          nb::arg("buffer"), nb::arg("threads"))
      .def(
          "add_spans",
          [](WordCounter& self, nb::str text, const std::vector<std::pair<uint32_t, uint32_t>>& spans) {
            self.add_spans(utf8_view(text), spans);
          },
          nb::arg("text"), nb::arg("spans"))
      .def(
          "add_words",
          [](WordCounter& self, nb::list words, const std::vector<uint64_t>& counts) {
            if (words.size() != counts.size()) throw nb::value_error("words and counts differ in length");
            for (size_t i = 0; i < counts.size(); ++i) self.add_word(utf8_view(words[i]), counts[i]);
          },
          nb::arg("words"), nb::arg("counts"))
      .def(
          "add_file",
          [](WordCounter& self, const std::string& path, int threads) {
            uint64_t offset = 0, line = 0;
            size_t ok;
            {
              nb::gil_scoped_release release;
              ok = self.add_file(path, threads, &offset, &line);
            }
            return nb::make_tuple(ok != 0, offset, line);
          },
          nb::arg("path"), nb::arg("threads"),
          "Count a UTF-8 file line by line; returns (ok, offset, line) of the first invalid byte.")
      .def("clear", &WordCounter::clear)
      .def("__len__", &WordCounter::size)
      .def_prop_ro("total", &WordCounter::total)
      .def("words", [](const WordCounter& self) {
        std::vector<std::string_view> words;
        std::vector<uint64_t> counts;
        self.words(&words, &counts);
        nb::list out;
        for (size_t i = 0; i < words.size(); ++i)
          out.append(nb::make_tuple(nb::bytes(words[i].data(), words[i].size()), counts[i]));
        return out;
      });

  m.def(
      "train_bpe",
      [](WordCounter& counter, uint64_t vocab_size, uint64_t max_merges, uint64_t min_frequency,
         std::vector<std::string> special_tokens, bool byte_level, std::vector<std::string> initial_alphabet,
         int64_t limit_alphabet, uint64_t max_token_length, std::string end_of_word_suffix,
         std::string end_of_word_symbol, int tie_break, nb::object progress, bool consume,
         std::string continuing_subword_prefix, std::vector<std::string> continuing_order) {
        ciyuan::BpeTrainerConfig config;
        config.vocab_size = vocab_size;
        config.max_merges = max_merges;
        config.min_frequency = min_frequency;
        config.special_tokens = std::move(special_tokens);
        config.byte_level = byte_level;
        config.initial_alphabet = std::move(initial_alphabet);
        config.limit_alphabet = limit_alphabet;
        config.max_token_length = max_token_length;
        config.end_of_word_suffix = std::move(end_of_word_suffix);
        config.end_of_word_symbol = std::move(end_of_word_symbol);
        config.continuing_subword_prefix = std::move(continuing_subword_prefix);
        config.continuing_order = std::move(continuing_order);
        if (tie_break < 0 || tie_break > 2) throw nb::value_error("tie_break must be 0, 1 or 2");
        config.tie_break = static_cast<ciyuan::TieBreak>(tie_break);
        auto callback = progress_callback(progress);
        return train_on(counter, consume, [&](auto& words, auto& counts, auto& done) {
          return ciyuan::train_bpe(words, counts, config, callback, done);
        });
      },
      nb::arg("counter"), nb::arg("vocab_size"), nb::arg("max_merges"), nb::arg("min_frequency"),
      nb::arg("special_tokens"), nb::arg("byte_level"), nb::arg("initial_alphabet"), nb::arg("limit_alphabet"),
      nb::arg("max_token_length"), nb::arg("end_of_word_suffix"), nb::arg("end_of_word_symbol"),
      nb::arg("tie_break"), nb::arg("progress").none(), nb::arg("consume") = false,
      nb::arg("continuing_subword_prefix") = "", nb::arg("continuing_order") = std::vector<std::string>(),
      "Learn BPE merges from the counted words; returns (tokens, merges, merge_counts, alphabet_size, stop_reason).");

  m.def(
      "train_wordpiece",
      [](WordCounter& counter, uint64_t vocab_size, uint64_t max_merges, uint64_t min_frequency,
         std::vector<std::string> special_tokens, std::vector<std::string> initial_alphabet, int64_t limit_alphabet,
         uint64_t max_token_length, std::string continuing_subword_prefix, nb::object progress, bool consume) {
        ciyuan::WordPieceTrainerConfig config;
        config.vocab_size = vocab_size;
        config.max_merges = max_merges;
        config.min_frequency = min_frequency;
        config.special_tokens = std::move(special_tokens);
        config.initial_alphabet = std::move(initial_alphabet);
        config.limit_alphabet = limit_alphabet;
        config.max_token_length = max_token_length;
        config.continuing_subword_prefix = std::move(continuing_subword_prefix);
        auto callback = progress_callback(progress);
        return train_on(counter, consume, [&](auto& words, auto& counts, auto& done) {
          return ciyuan::train_wordpiece(words, counts, config, callback, done);
        });
      },
      nb::arg("counter"), nb::arg("vocab_size"), nb::arg("max_merges"), nb::arg("min_frequency"),
      nb::arg("special_tokens"), nb::arg("initial_alphabet"), nb::arg("limit_alphabet"), nb::arg("max_token_length"),
      nb::arg("continuing_subword_prefix"), nb::arg("progress").none(), nb::arg("consume") = false,
      "Learn a WordPiece vocabulary (likelihood criterion) from the counted words; returns (tokens, merges, "
      "merge_counts, alphabet_size, stop_reason).");

  m.def(
      "count_chars",
      [](nb::bytes data) {
        std::string_view v = bytes_view(data);
        if (ciyuan::utf8::validate(v.data(), v.size()) != v.size())
          throw ciyuan::Error(ciyuan::ErrorKind::kInvalidInput, "count_chars: the text is not valid UTF-8");
        std::vector<std::pair<uint32_t, uint64_t>> out;
        {
          nb::gil_scoped_release release;
          uint64_t ascii[128] = {};
          std::unordered_map<uint32_t, uint64_t> other;
          const char* p = v.data();
          const char* end = p + v.size();
          while (p < end) {
            if (static_cast<unsigned char>(*p) < 0x80) {
              ++ascii[static_cast<unsigned char>(*p++)];
              continue;
            }
            uint32_t cp;
            p += ciyuan::utf8::decode(p, end, &cp);
            ++other[cp];
          }
          for (uint32_t c = 0; c < 128; ++c)
            if (ascii[c]) out.emplace_back(c, ascii[c]);
          for (const auto& kv : other) out.emplace_back(kv.first, kv.second);
        }
        return out;
      },
      nb::arg("data"), "Count the characters of UTF-8 text: [(code point, count)], in no particular order.");
}
