// Bindings of the WordPiece family: WordPieceModel (WordPiece / WordLevel / CharLevel),
// WordPieceEncoder (same methods and results as Encoder), and the BERT front end alone
// (bert_normalize, bert_split) for the Python normalizer and pre-tokenizer classes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>


#include "ciyuan/bert.h"
#include "ciyuan/errors.h"
#include "ciyuan/wordpiece.h"
#include "common.h"
#include "encoding_data.h"

namespace nb = nanobind;
using ciyuan::BertOptions;
using ciyuan::WordPieceEncoder;
using ciyuan::WordPieceModel;
using ciyuan_bindings::utf8_view;

namespace {

// (clean_text, handle_chinese_chars, strip_accents, lowercase); strip_accents None follows
// lowercase, as in Hugging Face.
BertOptions bert_options(nb::handle options) {
  nb::tuple t = nb::borrow<nb::tuple>(options);
  if (!nb::isinstance<nb::tuple>(options) || t.size() != 4)
    throw nb::type_error("BERT options must be a tuple (clean_text, handle_chinese_chars, strip_accents, lowercase)");
  BertOptions o;
  o.clean_text = nb::cast<bool>(t[0]);
  o.handle_chinese_chars = nb::cast<bool>(t[1]);
  o.lowercase = nb::cast<bool>(t[3]);
  o.strip_accents = t[2].is_none() ? o.lowercase : nb::cast<bool>(t[2]);
  return o;
}

// Byte spans of `utf8` -> character spans.
nb::list char_spans(std::string_view utf8, bool ascii, const std::vector<std::pair<uint32_t, uint32_t>>& spans) {
  nb::list out;
  if (ascii) {
    for (const auto& [s, e] : spans) out.append(nb::make_tuple(s, e));
    return out;
  }
  std::vector<uint32_t> char_at(utf8.size() + 1);
  uint32_t c = 0;
  for (size_t i = 0; i < utf8.size(); ++i) {
    char_at[i] = c;
    if (i + 1 < utf8.size() && (static_cast<unsigned char>(utf8[i + 1]) & 0xC0) != 0x80) ++c;
  }
  char_at[utf8.size()] = utf8.empty() ? 0 : c + 1;
  for (const auto& [s, e] : spans) out.append(nb::make_tuple(char_at[s], e == s ? char_at[s] : char_at[e - 1] + 1));
  return out;
}

}  // namespace

void register_wordpiece(nb::module_& m) {
  nb::class_<WordPieceModel>(m, "WordPieceModel")
      .def(
          "__init__",
          [](WordPieceModel* self, nb::list tokens, std::string kind, std::string prefix, int64_t unk_id,
             uint64_t max_input_chars_per_word) {
            ciyuan::WordPieceConfig config;
            if (kind == "wordpiece") {
              config.kind = ciyuan::WordModelKind::kWordPiece;
            } else if (kind == "wordlevel") {
              config.kind = ciyuan::WordModelKind::kWordLevel;
            } else if (kind == "charlevel") {
              config.kind = ciyuan::WordModelKind::kCharLevel;
            } else {
              throw nb::value_error("kind must be 'wordpiece', 'wordlevel' or 'charlevel'");
            }
            config.continuing_subword_prefix = std::move(prefix);
            config.unk_id = unk_id;
            config.max_input_chars_per_word = max_input_chars_per_word;
            std::vector<std::string> text(tokens.size());
            std::vector<uint8_t> present(tokens.size(), 0);
            for (size_t i = 0; i < tokens.size(); ++i) {
              nb::handle t = tokens[i];
              if (t.is_none()) continue;
              text[i] = std::string(utf8_view(t));
              present[i] = 1;
            }
            new (self) WordPieceModel(std::move(text), std::move(present), std::move(config));
          },
          nb::arg("tokens"), nb::arg("kind"), nb::arg("continuing_subword_prefix"), nb::arg("unk_id"),
          nb::arg("max_input_chars_per_word"))
      .def_prop_ro("id_limit", &WordPieceModel::id_limit)
      .def_prop_ro("vocab_size", &WordPieceModel::vocab_size)
      .def("token_bytes",
           [](const WordPieceModel& self, uint32_t id) -> nb::object {
             if (!self.has_id(id)) return nb::none();
             const std::string& t = self.token(id);
             return nb::bytes(t.data(), t.size());
           })
      .def("token_to_id", [](const WordPieceModel& self, nb::handle token) -> std::optional<uint32_t> {
        uint32_t id = self.token_to_id(utf8_view(token));
        if (id == WordPieceModel::kNone) return std::nullopt;
        return id;
      });

  nb::class_<WordPieceEncoder> encoder(m, "WordPieceEncoder");
  encoder
      .def(
          "__init__",
          [](WordPieceEncoder* self, std::shared_ptr<WordPieceModel> model, std::string pattern,
             std::vector<std::pair<std::string, uint32_t>> specials, nb::object bert) {
            int p = -1;
            std::optional<BertOptions> options;
            if (!bert.is_none()) options = bert_options(bert);
            if (!pattern.empty() && !options) {
              ciyuan::PreTokPattern parsed;
              if (!ciyuan::pattern_from_name(pattern, &parsed))
                throw nb::value_error(("unknown native pre-tokenizer pattern '" + pattern + "'").c_str());
              p = static_cast<int>(parsed);
            }
            std::vector<ciyuan::SpecialToken> sp;
            for (auto& [text, id] : specials) sp.push_back(ciyuan::SpecialToken{std::move(text), id});
            new (self) WordPieceEncoder(std::move(model), p, std::move(sp), options ? &*options : nullptr);
          },
          nb::arg("model"), nb::arg("pattern"), nb::arg("specials"), nb::arg("bert") = nb::none());
  ciyuan_bindings::def_encoder_methods(encoder);

  m.def(
      "bert_normalize",
      [](nb::handle text, nb::handle options) {
        std::string_view utf8 = utf8_view(text);
        ciyuan::BertFrontEnd front(bert_options(options));
        std::string out;
        std::vector<std::pair<uint32_t, uint32_t>> spans;
        {
          nb::gil_scoped_release release;
          front.normalize(utf8, out, spans);
        }
        nb::list span_list;
        for (const auto& [s, e] : spans) span_list.append(nb::make_tuple(s, e));
        return nb::make_tuple(nb::str(out.data(), out.size()), span_list);
      },
      nb::arg("text"), nb::arg("options"),
      "Hugging Face's BertNormalizer: (normalized text, original character span of each normalized character).");
  m.def(
      "bert_split",
      [](nb::handle text) {
        std::string_view utf8 = utf8_view(text);
        std::vector<std::pair<uint32_t, uint32_t>> spans;
        ciyuan::bert_split(utf8, spans);
        return char_spans(utf8, ciyuan_bindings::is_ascii(text), spans);
      },
      nb::arg("text"), "Hugging Face's BertPreTokenizer: character spans [start, end) of the words.");
  m.attr("BERT_TABLES_SOURCE") = nb::str(ciyuan::bert::kTablesSource);
}
