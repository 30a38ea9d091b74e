// Bindings of the models: BpeModel.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ciyuan/bpe.h"

namespace nb = nanobind;
using ciyuan::BpeConfig;
using ciyuan::BpeModel;

void register_models(nb::module_& m) {
  nb::class_<BpeModel>(m, "BpeModel")
      .def(
          "__init__",
          [](BpeModel* self, nb::list tokens, std::vector<std::pair<uint32_t, uint32_t>> merges,
             bool byte_level, bool rank_by_token, bool ignore_merges, std::string end_of_word_suffix,
             std::string end_of_word_symbol, int64_t unk_id, bool fuse_unk, size_t cache_capacity) {
            std::vector<std::string> bytes(tokens.size());
            std::vector<uint8_t> present(tokens.size(), 0);
            for (size_t i = 0; i < tokens.size(); ++i) {
              nb::handle t = tokens[i];
              if (t.is_none()) continue;
              if (!nb::isinstance<nb::bytes>(t)) throw nb::type_error("tokens must be bytes or None");
              nb::bytes b = nb::borrow<nb::bytes>(t);
              bytes[i].assign(b.c_str(), b.size());
              present[i] = 1;
            }
            BpeConfig config;
            config.byte_level = byte_level;
            config.rank_by_token = rank_by_token;
            config.ignore_merges = ignore_merges;
            config.end_of_word_suffix = std::move(end_of_word_suffix);
            config.end_of_word_symbol = std::move(end_of_word_symbol);
            config.unk_id = unk_id;
            config.fuse_unk = fuse_unk;
            config.cache_capacity = cache_capacity;
            new (self) BpeModel(std::move(bytes), std::move(present), merges, std::move(config));
          },
          nb::arg("tokens"), nb::arg("merges"), nb::arg("byte_level"), nb::arg("rank_by_token"),
          nb::arg("ignore_merges"), nb::arg("end_of_word_suffix"), nb::arg("end_of_word_symbol"), nb::arg("unk_id"),
          nb::arg("fuse_unk"), nb::arg("cache_capacity"))
      .def_prop_ro("id_limit", &BpeModel::id_limit)
      .def_prop_ro("vocab_size", &BpeModel::vocab_size)
      .def_prop_ro("merges", &BpeModel::merges)
      .def("token_bytes",
           [](const BpeModel& self, uint32_t id) -> nb::object {
             if (!self.has_id(id)) return nb::none();
             const std::string& t = self.token(id);
             return nb::bytes(t.data(), t.size());
           })
      .def("token_to_id", [](const BpeModel& self, nb::bytes token) -> std::optional<uint32_t> {
        uint32_t id = self.token_to_id(std::string_view(token.c_str(), token.size()));
        if (id == BpeModel::kNone) return std::nullopt;
        return id;
      });
}
