// Bindings of the models (TokenModel and its implementations) and their config classes:
// BpeConfig + BpeModel, WordModelKind + WordPieceConfig + WordPieceModel (WordPiece, WordLevel,
// CharLevel). Python's models/ own one native model each; the Encoder takes any TokenModel.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "ciyuan/bpe.h"
#include "ciyuan/encoder.h"
#include "ciyuan/wordpiece.h"
#include "common.h"

namespace nb = nanobind;
using ciyuan::BpeConfig;
using ciyuan::BpeModel;
using ciyuan::TokenModel;
using ciyuan::WordModelKind;
using ciyuan::WordPieceConfig;
using ciyuan::WordPieceModel;
using ciyuan_bindings::utf8_view;

namespace {

// A vocabulary from Python: tokens indexed by id (None for a hole), each converted by `text_of`.
template <class TextOf>
void vocabulary(nb::list tokens, TextOf&& text_of, std::vector<std::string>& text, std::vector<uint8_t>& present) {
  text.assign(tokens.size(), std::string());
  present.assign(tokens.size(), 0);
  for (size_t i = 0; i < tokens.size(); ++i) {
    nb::handle t = tokens[i];
    if (t.is_none()) continue;
    text[i] = text_of(t);
    present[i] = 1;
  }
}

// What every model shows Python besides its constructor.
template <class M>
void def_vocabulary(nb::class_<M, TokenModel>& cls) {
  cls.def_prop_ro("id_limit", &M::id_limit)
      .def_prop_ro("vocab_size", &M::vocab_size)
      .def(
          "token_bytes",
          [](const M& self, uint32_t id) { return ciyuan_bindings::bytes_or_none(self.id_bytes(id)); },
          nb::arg("id"), "The bytes of an id, None for an id outside the vocabulary.");
}

}  // namespace

void register_models(nb::module_& m) {
  nb::class_<TokenModel>(m, "TokenModel", "What the Encoder needs from a model (BpeModel, WordPieceModel).");

  nb::class_<BpeConfig>(m, "BpeConfig", "Options of a BpeModel (see models/bpe.py for their meaning).")
      .def(nb::init<>())
      .def_rw("byte_level", &BpeConfig::byte_level)
      .def_rw("rank_by_token", &BpeConfig::rank_by_token)
      .def_rw("ignore_merges", &BpeConfig::ignore_merges)
      .def_rw("end_of_word_suffix", &BpeConfig::end_of_word_suffix)
      .def_rw("end_of_word_symbol", &BpeConfig::end_of_word_symbol)
      .def_rw("unk_id", &BpeConfig::unk_id, "-1: unknown symbols are an error")
      .def_rw("fuse_unk", &BpeConfig::fuse_unk)
      .def_rw("cache_capacity", &BpeConfig::cache_capacity)
      .def_rw("longest_match", &BpeConfig::longest_match, "greedy longest prefix instead of merges")
      .def_rw("continuing_subword_prefix", &BpeConfig::continuing_subword_prefix)
      .def_rw("byte_fallback", &BpeConfig::byte_fallback)
      .def_rw("drop_unknown", &BpeConfig::drop_unknown, "unknown symbols without unk_id are left out");

  nb::class_<BpeModel, TokenModel> bpe(m, "BpeModel");
  bpe.def(
         "__init__",
         [](BpeModel* self, nb::list tokens, std::vector<std::pair<uint32_t, uint32_t>> merges, BpeConfig config) {
           std::vector<std::string> bytes;
           std::vector<uint8_t> present;
           vocabulary(
               tokens,
               [](nb::handle t) {
                 if (!nb::isinstance<nb::bytes>(t)) throw nb::type_error("tokens must be bytes or None");
                 nb::bytes b = nb::borrow<nb::bytes>(t);
                 return std::string(b.c_str(), b.size());
               },
               bytes, present);
           new (self) BpeModel(std::move(bytes), std::move(present), merges, std::move(config));
         },
         nb::arg("tokens"), nb::arg("merges"), nb::arg("config"),
         "tokens: bytes by id (None for a hole); merges: (left id, right id) in rank order.")
      .def_prop_ro("merges", &BpeModel::merges)
      .def("token_to_id", [](const BpeModel& self, nb::bytes token) -> std::optional<uint32_t> {
        uint32_t id = self.token_to_id(std::string_view(token.c_str(), token.size()));
        if (id == BpeModel::kNone) return std::nullopt;
        return id;
      });
  def_vocabulary(bpe);

  nb::enum_<WordModelKind>(m, "WordModelKind", "What a WordPieceModel does with a word.")
      .value("WORDPIECE", WordModelKind::kWordPiece, "greedy longest-match-first subwords (BERT)")
      .value("WORDLEVEL", WordModelKind::kWordLevel, "the whole word is one token")
      .value("CHARLEVEL", WordModelKind::kCharLevel, "each character is one token");

  nb::class_<WordPieceConfig>(m, "WordPieceConfig", "Options of a WordPieceModel.")
      .def(nb::init<>())
      .def_rw("kind", &WordPieceConfig::kind)
      .def_rw("continuing_subword_prefix", &WordPieceConfig::continuing_subword_prefix)
      .def_rw("unk_id", &WordPieceConfig::unk_id, "-1: an unknown word raises InvalidInputError")
      .def_rw("max_input_chars_per_word", &WordPieceConfig::max_input_chars_per_word);

  nb::class_<WordPieceModel, TokenModel> wordpiece(m, "WordPieceModel");
  wordpiece
      .def(
          "__init__",
          [](WordPieceModel* self, nb::list tokens, WordPieceConfig config) {
            std::vector<std::string> text;
            std::vector<uint8_t> present;
            vocabulary(tokens, [](nb::handle t) { return std::string(utf8_view(t)); }, text, present);
            new (self) WordPieceModel(std::move(text), std::move(present), std::move(config));
          },
          nb::arg("tokens"), nb::arg("config"), "tokens: str by id (None for a hole).")
      .def("token_to_id", [](const WordPieceModel& self, nb::handle token) -> std::optional<uint32_t> {
        uint32_t id = self.token_to_id(utf8_view(token));
        if (id == WordPieceModel::kNone) return std::nullopt;
        return id;
      });
  def_vocabulary(wordpiece);
}
