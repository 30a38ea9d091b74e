// Bindings of the trainers: WordCounter (parallel word counting), the trainers' config classes
// and tie rule, train_bpe and train_wordpiece (one path: train_on) and their MergeResult.
// Python owns the options' defaults and checks, and the files; these calls take whole buffers
// and release the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ciyuan/bert.h"
#include "ciyuan/bpe_trainer.h"
#include "ciyuan/errors.h"
#include "ciyuan/front_end.h"
#include "ciyuan/unigram_trainer.h"
#include "ciyuan/utf8.h"
#include "ciyuan/word_counter.h"
#include "ciyuan/wordpiece_trainer.h"
#include "common.h"

namespace nb = nanobind;
using ciyuan::WordCounter;
using ciyuan_bindings::utf8_view;

namespace {

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

// Runs `train` on the counter's words with the GIL released; with `consume` the counter is
// emptied as soon as the trainer has copied them. The one path every native trainer takes.
template <class Config, class Train>
auto train_on(WordCounter& counter, const Config& options, nb::object& progress, bool consume,
                             Train train) {
  const Config config = options;  // a copy: Python may not change it while training runs
  auto callback = progress_callback(progress);
  std::vector<std::string_view> words;
  std::vector<uint64_t> counts;
  nb::gil_scoped_release release;
  counter.words(&words, &counts);
  std::function<void()> done;
  if (consume) done = [&]() {
    std::vector<std::string_view>().swap(words);
    counter.clear();
  };
  return train(words, counts, config, callback, done);
}

// Binds `name(counter, config, progress=None, consume=False) -> the trainer's result`.
template <class Config, class Train>
void def_trainer(nb::module_& m, const char* name, Train train, const char* doc) {
  m.def(
      name,
      [train](WordCounter& counter, const Config& config, nb::object progress, bool consume) {
        return train_on(counter, config, progress, consume, train);
      },
      nb::arg("counter"), nb::arg("config"), nb::arg("progress").none() = nb::none(), nb::arg("consume") = false, doc);
}

// A config class: constructed empty (the C++ defaults), options set by name.
template <class Config>
nb::class_<Config> bind_config(nb::module_& m, const char* name, const char* doc) {
  nb::class_<Config> cls(m, name, doc);
  cls.def(nb::init<>())
      .def_rw("vocab_size", &Config::vocab_size, "Stop at this many tokens (0: no limit).")
      .def_rw("max_merges", &Config::max_merges, "Stop after this many merges.")
      .def_rw("min_frequency", &Config::min_frequency, "Pairs rarer than this are not merged.")
      .def_rw("special_tokens", &Config::special_tokens, "The first ids, in this order.")
      .def_rw("initial_alphabet", &Config::initial_alphabet, "Characters always in the alphabet.")
      .def_rw("limit_alphabet", &Config::limit_alphabet, "Keep at most this many characters (-1: all).")
      .def_rw("max_token_length", &Config::max_token_length, "Longest token in initial symbols (0: no limit).")
      .def_rw("continuing_subword_prefix", &Config::continuing_subword_prefix,
              "Marks a symbol that continues a word (\"##\"; empty: none).");
  return cls;
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
      .def(nb::init<const ciyuan::FrontEnd&>(), nb::arg("front_end"),
           "A counter of the words `front_end` cuts (the same FrontEnd the Encoder takes).")
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
      .def("set_memory_limit", &WordCounter::set_memory_limit, nb::arg("bytes"), nb::arg("directory"),
           "Spill sorted runs into `directory` (it must exist) to keep the tables within `bytes` (0: no limit).")
      .def(
          "finish",
          [](WordCounter& self) {
            nb::gil_scoped_release release;
            self.finish();
          },
          "Merge the spilled runs back into the table (exactly: counts add, first-seen positions the smallest).")
      .def(
          "merge",
          [](WordCounter& self, const WordCounter& other) {
            nb::gil_scoped_release release;
            self.merge(other);
          },
          nb::arg("other"), "Add `other`'s words as if counted after this counter's (positions shifted by clock).")
      .def(
          "dump",
          [](const WordCounter& self) {
            std::string data = self.dump();
            return nb::bytes(data.data(), data.size());
          },
          "Words, counts, first-seen positions, clock and total as bytes (load() reads them).")
      .def(
          "load", [](WordCounter& self, nb::bytes data) { self.load(bytes_view(data)); }, nb::arg("data"),
          "Fill an empty counter from dump()'s bytes.")
      .def_prop_ro("memory", &WordCounter::memory, "Bytes the main word table holds now.")
      .def_prop_ro("peak_memory", &WordCounter::peak_memory, "The most bytes the main word table held.")
      .def_prop_ro("runs", &WordCounter::runs, "Sorted runs spilled to disk so far.")
      .def_prop_ro("clock", &WordCounter::clock, "The first-seen clock: bytes (or words) consumed so far.")
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

  nb::enum_<ciyuan::TieBreak>(m, "TieBreak", "Which of several BPE pairs with the same count merges first.")
      .value("SMALLEST_IDS", ciyuan::TieBreak::kSmallestIds, "Hugging Face's rule: the smallest (left id, right id).")
      .value("GREATEST_TEXT", ciyuan::TieBreak::kGreatestText,
             "subword-nmt's rule: the greatest (left text, right text), in code point order.")
      .value("FIRST_SEEN", ciyuan::TieBreak::kFirstSeen,
             "The classic tutorials' rule: the pair seen first (word order, then position).")
      .value("FIRST_SEEN_MOVED", ciyuan::TieBreak::kFirstSeenMoved,
             "Document 000's rule: the pair seen first, where a word a merge changed moves behind all others.");

  bind_config<ciyuan::BpeTrainerConfig>(m, "BpeTrainerConfig", "The options of train_bpe.")
      .def_rw("byte_level", &ciyuan::BpeTrainerConfig::byte_level, "The initial symbols are the 256 bytes.")
      .def_rw("end_of_word_suffix", &ciyuan::BpeTrainerConfig::end_of_word_suffix,
              "Attached to a word's last character (\"</w>\").")
      .def_rw("end_of_word_symbol", &ciyuan::BpeTrainerConfig::end_of_word_symbol,
              "Or appended to each word as a separate symbol.")
      .def_rw("continuing_order", &ciyuan::BpeTrainerConfig::continuing_order,
              "Prefixed characters (\"##e\") numbered first, in this order.")
      .def_rw("tie_break", &ciyuan::BpeTrainerConfig::tie_break, "The rule for pairs with the same count.")
      .def_rw("live_vocab", &ciyuan::BpeTrainerConfig::live_vocab,
              "vocab_size counts the symbols the words still use, checked after each merge (document 000).");
  bind_config<ciyuan::WordPieceTrainerConfig>(m, "WordPieceTrainerConfig",
                                              "The options of train_wordpiece (likelihood criterion).");

  nb::class_<ciyuan::MergeResult>(m, "MergeResult", "What a native trainer learned.")
      .def_prop_ro(
          "tokens",
          [](const ciyuan::MergeResult& r) {
            nb::list tokens;
            for (const std::string& t : r.tokens) tokens.append(nb::bytes(t.data(), t.size()));
            return tokens;
          },
          "Token bytes in id order.")
      .def_ro("merges", &ciyuan::MergeResult::merges, "(left id, right id) in merge order.")
      .def_ro("merge_counts", &ciyuan::MergeResult::merge_counts, "Each merge's pair count when it merged.")
      .def_ro("alphabet_size", &ciyuan::MergeResult::alphabet_size, "Tokens before the first merge.")
      .def_ro("stop_reason", &ciyuan::MergeResult::stop_reason)
      .def_ro("live_vocab", &ciyuan::MergeResult::live_vocab,
              "With live_vocab: (id, count) of the tokens the words still use, most used first.");

  def_trainer<ciyuan::BpeTrainerConfig>(m, "train_bpe", &ciyuan::train_bpe, "Learn BPE merges from the counted words.");
  def_trainer<ciyuan::WordPieceTrainerConfig>(m, "train_wordpiece", &ciyuan::train_wordpiece,
                                              "Learn a WordPiece vocabulary (likelihood criterion) from the counted words.");

  nb::enum_<ciyuan::UnigramModelType>(m, "UnigramModelType", "What train_unigram learns.")
      .value("UNIGRAM", ciyuan::UnigramModelType::kUnigram, "A Unigram language model (EM with pruning).")
      .value("BPE", ciyuan::UnigramModelType::kBpe, "SentencePiece's BPE model type: merges, scored by merge order.");
  using UC = ciyuan::UnigramTrainerConfig;
  nb::class_<UC>(m, "UnigramTrainerConfig", "The options of train_unigram (SentencePiece's trainer flags).")
      .def(nb::init<>())
      .def_rw("model_type", &UC::model_type)
      .def_rw("vocab_size", &UC::vocab_size, "Normal pieces to learn (meta pieces not counted).")
      .def_rw("character_coverage", &UC::character_coverage)
      .def_rw("max_piece_length", &UC::max_piece_length)
      .def_rw("seed_size", &UC::seed_size)
      .def_rw("shrinking_factor", &UC::shrinking_factor)
      .def_rw("num_sub_iterations", &UC::num_sub_iterations)
      .def_rw("split_digits", &UC::split_digits)
      .def_rw("split_by_unicode_script", &UC::split_by_unicode_script)
      .def_rw("split_by_number", &UC::split_by_number)
      .def_rw("treat_whitespace_as_suffix", &UC::treat_whitespace_as_suffix)
      .def_rw("user_defined_symbols", &UC::user_defined_symbols)
      .def_rw("threads", &UC::threads);
  using UR = ciyuan::UnigramTrainerResult;
  nb::class_<UR>(m, "UnigramTrainerResult", "What train_unigram learned.")
      .def_ro("pieces", &UR::pieces, "Normal pieces, best first.")
      .def_ro("scores", &UR::scores)
      .def_ro("required_chars", &UR::required_chars, "The covered characters, most frequent first.")
      .def_ro("units", &UR::units, "Distinct units trained on.")
      .def_ro("seeds", &UR::seeds, "Seed pieces.")
      .def_ro("rounds", &UR::rounds, "EM rounds (Unigram) or merges (BPE).");
  def_trainer<UC>(m, "train_unigram", &ciyuan::train_unigram,
                  "Learn a Unigram (or SentencePiece BPE) model from the counted words.");
  m.def(
      "unigram_expected_counts",
      [](const std::vector<std::string>& words, const std::vector<uint64_t>& counts,
         const std::vector<std::string>& pieces, const std::vector<double>& scores, int threads) {
        nb::gil_scoped_release release;
        return ciyuan::unigram_steps::expected_counts(words, counts, pieces, scores, threads);
      },
      nb::arg("words"), nb::arg("counts"), nb::arg("pieces"), nb::arg("scores"), nb::arg("threads") = 0,
      "One E-step over whole words: (expected count of each piece, sum of count x log Z).");
  m.def("unigram_m_step", &ciyuan::unigram_steps::m_step, nb::arg("expected"),
        "The M-step: (indices of the pieces kept, their new log-probabilities).");
  m.def(
      "unigram_prune",
      [](const std::vector<std::string>& words, const std::vector<uint64_t>& counts,
         const std::vector<std::string>& pieces, const std::vector<double>& scores, uint64_t size, int threads) {
        nb::gil_scoped_release release;
        return ciyuan::unigram_steps::prune(words, counts, pieces, scores, size, threads);
      },
      nb::arg("words"), nb::arg("counts"), nb::arg("pieces"), nb::arg("scores"), nb::arg("size"),
      nb::arg("threads") = 0, "One pruning step over whole words: the indices of the pieces kept.");
  m.def(
      "unigram_seeds",
      [](const std::vector<std::string>& words, const std::vector<uint64_t>& counts, uint32_t max_piece_length,
         uint64_t seed_size) {
        if (max_piece_length == 0) throw ciyuan::Error(ciyuan::ErrorKind::kInvalidInput, "max_piece_length must be positive");
        nb::gil_scoped_release release;
        return ciyuan::unigram_steps::seeds(words, counts, max_piece_length, seed_size);
      },
      nb::arg("words"), nb::arg("counts"), nb::arg("max_piece_length") = 16, nb::arg("seed_size") = 1000000,
      "Seed substrings of whole words (two characters or more) with their count x length scores, best first.");

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
