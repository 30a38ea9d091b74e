// Bindings of the SentencePiece models: PieceType, SpmModelConfig, UnigramModel and SpmBpeModel
// (TokenModels, owned by models.Unigram and models.SentencePieceBPE), with n-best and sampling
// entry points on the model alone (the Encoder's own plumbing is separate).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ciyuan/encoder.h"
#include "ciyuan/spm_bpe.h"
#include "ciyuan/spm_pieces.h"
#include "ciyuan/unigram.h"
#include "common.h"

namespace nb = nanobind;
using ciyuan::PieceType;
using ciyuan::SpmBpeModel;
using ciyuan::SpmModelConfig;
using ciyuan::Token;
using ciyuan::TokenModel;
using ciyuan::UnigramModel;
using ciyuan_bindings::utf8_view;

namespace {

using TokenTuples = std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>;

TokenTuples tuples(const std::vector<Token>& tokens) {
  TokenTuples out;
  out.reserve(tokens.size());
  for (const Token& t : tokens) out.emplace_back(t.id, t.start, t.end);
  return out;
}

// pieces (str), scores (float), types (PieceType) from Python, checked for length. The scores
// come as the doubles Python holds: rounded to float for the model's table (as a float
// argument would be), kept as they are for a Unigram with Hugging Face's Viterbi.
template <class M>
void construct(M* self, nb::list pieces, std::vector<double> scores, std::vector<PieceType> types,
               SpmModelConfig config) {
  std::vector<std::string> text;
  text.reserve(pieces.size());
  for (nb::handle p : pieces) text.emplace_back(utf8_view(p));
  std::vector<float> rounded(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) rounded[i] = static_cast<float>(scores[i]);
  if constexpr (std::is_same_v<M, UnigramModel>) {
    if (config.hf_viterbi) {
      new (self) M(std::move(text), std::move(rounded), std::move(types), config, std::move(scores));
      return;
    }
  }
  new (self) M(std::move(text), std::move(rounded), std::move(types), config);
}

template <class M>
void def_spm_model(nb::class_<M, TokenModel>& cls) {
  cls.def(
         "__init__",
         [](M* self, nb::list pieces, std::vector<double> scores, std::vector<PieceType> types, SpmModelConfig config) {
           construct(self, pieces, std::move(scores), std::move(types), config);
         },
         nb::arg("pieces"), nb::arg("scores"), nb::arg("types"), nb::arg("config"),
         "pieces: str by id; scores: float by id; types: PieceType by id.")
      .def_prop_ro("id_limit", &M::id_limit)
      .def_prop_ro("vocab_size", &M::vocab_size)
      .def(
          "token_bytes",
          [](const M& self, uint32_t id) { return ciyuan_bindings::bytes_or_none(self.id_bytes(id)); },
          nb::arg("id"), "The bytes of an id (a byte piece's byte, b'' for control), None outside the model.")
      .def(
          "encode_tokens",
          [](const M& self, nb::handle text) {
            std::string_view t = utf8_view(text);
            std::vector<Token> out;
            {
              nb::gil_scoped_release release;
              const ciyuan::Span whole{0, static_cast<uint32_t>(t.size())};
              self.encode_pieces(t, &whole, 1, out);
            }
            return tuples(out);
          },
          nb::arg("text"), "(id, start byte, end byte) of a normalized text (spaces already U+2581).")
      .def(
          "sample",
          [](const M& self, nb::handle text, float alpha, int32_t nbest_size, uint64_t seed) {
            std::string_view t = utf8_view(text);
            std::vector<Token> out;
            {
              nb::gil_scoped_release release;
              ciyuan::SampleOptions options;
              options.alpha = alpha;
              options.nbest_size = nbest_size;
              ciyuan::Rng rng(seed);
              const ciyuan::Span whole{0, static_cast<uint32_t>(t.size())};
              self.sample_pieces(t, &whole, 1, options, rng, out);
            }
            return tuples(out);
          },
          nb::arg("text"), nb::arg("alpha"), nb::arg("nbest_size"), nb::arg("seed"),
          "One sampled segmentation of a normalized text, as encode_tokens.");
}

}  // namespace

void register_spm(nb::module_& m) {
  nb::enum_<PieceType>(m, "PieceType", "A SentencePiece piece's type (numbered as in ModelProto).")
      .value("NORMAL", PieceType::kNormal)
      .value("UNKNOWN", PieceType::kUnknown)
      .value("CONTROL", PieceType::kControl)
      .value("USER_DEFINED", PieceType::kUserDefined)
      .value("UNUSED", PieceType::kUnused)
      .value("BYTE", PieceType::kByte);

  nb::class_<SpmModelConfig>(m, "SpmModelConfig", "Options of UnigramModel and SpmBpeModel.")
      .def(nb::init<>())
      .def_rw("unk_id", &SpmModelConfig::unk_id, "-1: no unknown piece")
      .def_rw("byte_fallback", &SpmModelConfig::byte_fallback)
      .def_rw("byte_run_spans", &SpmModelConfig::byte_run_spans,
              "byte pieces span their whole run of unknown characters (Hugging Face's Unigram)")
      .def_rw("hf_viterbi", &SpmModelConfig::hf_viterbi,
              "Unigram: Hugging Face's Viterbi (double scores and sums, each piece from 0, no re-centring)");

  nb::class_<UnigramModel, TokenModel> unigram(m, "UnigramModel");
  def_spm_model(unigram);
  unigram.def_prop_ro("unk_score", &UnigramModel::unk_score)
      .def_prop_ro("hf_viterbi", &UnigramModel::hf_viterbi)
      .def(
          "nbest",
          [](const UnigramModel& self, nb::handle text, size_t k) {
            std::string_view t = utf8_view(text);
            std::vector<std::vector<Token>> paths;
            std::vector<float> scores;
            {
              nb::gil_scoped_release release;
              self.nbest_piece(t, ciyuan::Span{0, static_cast<uint32_t>(t.size())}, k, paths, scores);
            }
            std::vector<std::pair<TokenTuples, float>> out;
            for (size_t i = 0; i < paths.size(); ++i) out.emplace_back(tuples(paths[i]), scores[i]);
            return out;
          },
          nb::arg("text"), nb::arg("k"), "The k best segmentations of a normalized text with their scores.");

  nb::class_<SpmBpeModel, TokenModel> bpe(m, "SpmBpeModel");
  def_spm_model(bpe);
}
