// Bindings of the native encode path (Encoder) and its result (EncodingData).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <type_traits>

#include "ciyuan/errors.h"
#include "ciyuan/pipeline.h"
#include "common.h"
#include "encoding_data.h"

namespace nb = nanobind;
using ciyuan::Encoder;
using ciyuan::SpecialPolicy;
using ciyuan::Token;
using ciyuan_bindings::utf8_view;
using ciyuan_bindings::BatchTexts;
using ciyuan_bindings::EncodingData;
using ciyuan_bindings::char_offsets;
using ciyuan_bindings::id_list;
using ciyuan_bindings::wrapped_id_list;
using ciyuan_bindings::GcPause;
using ciyuan_bindings::policy_from;

namespace {

// Encodes a batch on `threads` threads with the GIL released: tokens, or with T = uint32_t ids.
template <class T>
std::vector<std::vector<T>> encode_batch(const Encoder& self, nb::handle texts, nb::bytes policy, int threads) {
  BatchTexts batch(texts);
  auto pol = policy_from(policy);
  std::vector<std::vector<T>> results;
  nb::gil_scoped_release release;
  if constexpr (std::is_same_v<T, Token>) {
    self.encode_batch(batch.views, pol, threads, results);
  } else {
    self.encode_batch_ids(batch.views, pol, threads, results);
  }
  return results;
}

}  // namespace

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

  nb::class_<Encoder>(m, "Encoder")
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
          nb::arg("model"), nb::arg("pattern"), nb::arg("specials"), nb::arg("longest_match"))
      .def(
          "encode",
          [](const Encoder& self, nb::handle text, nb::bytes policy) {
            std::string_view utf8 = utf8_view(text);
            auto pol = policy_from(policy);
            auto* data = new EncodingData();
            try {
              nb::gil_scoped_release release;
              self.encode(utf8, pol, data->tokens);
            } catch (...) {
              delete data;
              throw;
            }
            return data;
          },
          nb::arg("text"), nb::arg("policy"), nb::rv_policy::take_ownership)
      .def(
          "encode_ids",
          [](const Encoder& self, nb::handle text, nb::bytes policy) {
            std::string_view utf8 = utf8_view(text);
            auto pol = policy_from(policy);
            std::vector<uint32_t> ids;
            {
              nb::gil_scoped_release release;
              ciyuan::TokenSink sink(ids);
              self.encode(utf8, pol, sink);
            }
            return id_list(ids);
          },
          nb::arg("text"), nb::arg("policy"))
      .def(
          "encode_spans",
          [](const Encoder& self, nb::handle text, std::vector<std::pair<uint32_t, uint32_t>> spans) {
            std::string_view utf8 = utf8_view(text);
            auto* data = new EncodingData();
            try {
              nb::gil_scoped_release release;
              self.encode_spans(utf8, spans, data->tokens);
            } catch (...) {
              delete data;
              throw;
            }
            return data;
          },
          nb::arg("text"), nb::arg("spans"), nb::rv_policy::take_ownership)
      .def(
          "encode_batch",
          [](const Encoder& self, nb::handle texts, nb::bytes policy, int threads) {
            nb::list out;
            for (auto& r : encode_batch<Token>(self, texts, policy, threads)) {
              auto* data = new EncodingData();
              data->tokens = std::move(r);
              out.append(nb::cast(data, nb::rv_policy::take_ownership));
            }
            return out;
          },
          nb::arg("texts"), nb::arg("policy"), nb::arg("threads"))
      .def(
          "encode_batch_ids",
          [](const Encoder& self, nb::handle texts, nb::bytes policy, int threads, const std::vector<uint32_t>& head,
             const std::vector<uint32_t>& tail) {
            auto results = encode_batch<uint32_t>(self, texts, policy, threads);
            GcPause pause;
            nb::list out;
            for (auto& r : results) out.append(wrapped_id_list(head, r, tail));
            return out;
          },
          nb::arg("texts"), nb::arg("policy"), nb::arg("threads"), nb::arg("head") = std::vector<uint32_t>(),
          nb::arg("tail") = std::vector<uint32_t>(),
          "Ids of each text, with `head` and `tail` (a template's special tokens) around them.")
      .def(
          "decode_bytes",
          [](const Encoder& self, const std::vector<uint32_t>& ids) {
            std::string out;
            self.decode(ids.data(), ids.size(), out);
            return nb::bytes(out.data(), out.size());
          },
          nb::arg("ids"))
      .def("id_bytes", [](const Encoder& self, uint32_t id) -> nb::object {
        const std::string* b = self.id_bytes(id);
        if (!b) return nb::none();
        return nb::bytes(b->data(), b->size());
      });
}
