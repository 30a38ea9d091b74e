// Bindings of the native encode path (Encoder) and its result (EncodingData).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "ciyuan/errors.h"
#include "ciyuan/pipeline.h"
#include "common.h"
#include "encoding_data.h"

namespace nb = nanobind;
using ciyuan::Encoder;
using ciyuan::Token;
using ciyuan_bindings::EncodingData;
using ciyuan_bindings::char_offsets;
using ciyuan_bindings::id_list;
using ciyuan_bindings::wrapped_id_list;


void register_pipeline(nb::module_& m) {
  nb::class_<EncodingData>(m, "EncodingData")
      .def("__len__", [](const EncodingData& d) { return d.tokens.size(); })
      .def_prop_ro("ids", [](const EncodingData& d) { return id_list(d.tokens); })
      .def(
          "wrapped_ids",
          [](const EncodingData& d, const std::vector<uint32_t>& head, const std::vector<uint32_t>& tail) {
            std::vector<uint32_t> ids(d.tokens.size());
            for (size_t i = 0; i < ids.size(); ++i) ids[i] = d.tokens[i].id;
            return wrapped_id_list(head, ids, tail);
          },
          nb::arg("head"), nb::arg("tail"), "The ids with `head` before and `tail` after them.")
      .def_prop_ro("byte_spans",
                   [](const EncodingData& d) {
                     nb::list out;
                     for (const Token& t : d.tokens) out.append(nb::make_tuple(t.start, t.end));
                     return out;
                   })
      .def(
          "char_offsets",
          [](const EncodingData& d, nb::handle text, size_t head, size_t tail) {
            return char_offsets(d.tokens, text, head, tail);
          },
          nb::arg("text"), nb::arg("head") = 0, nb::arg("tail") = 0,
          "Character spans in `text`, after `head` and before `tail` spans (0, 0).");

  nb::class_<Encoder> encoder(m, "Encoder");
  encoder
      .def(
          "__init__",
          [](Encoder* self, std::shared_ptr<ciyuan::BpeModel> model, std::string pattern,
             std::vector<std::pair<std::string, uint32_t>> specials, bool longest_match) {
            int p = -1;
            if (!pattern.empty()) {
              ciyuan::PreTokPattern parsed;
              if (!ciyuan::pattern_from_name(pattern, &parsed))
                throw nb::value_error(("unknown native pre-tokenizer pattern '" + pattern + "'").c_str());
              p = static_cast<int>(parsed);
            }
            std::vector<ciyuan::SpecialToken> sp;
            for (auto& [text, id] : specials) sp.push_back(ciyuan::SpecialToken{std::move(text), id});
            new (self) Encoder(std::move(model), p, std::move(sp), longest_match);
          },
          nb::arg("model"), nb::arg("pattern"), nb::arg("specials"), nb::arg("longest_match"));
  ciyuan_bindings::def_encoder_methods(encoder);
}
