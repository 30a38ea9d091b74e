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

namespace nb = nanobind;
using ciyuan::Encoder;
using ciyuan::SpecialPolicy;
using ciyuan::Token;
using ciyuan_bindings::utf8_view;

namespace {

// The native result of one encode: ids with byte spans. Python's Encoding wraps it and turns
// spans into character offsets only when asked.
struct EncodingData {
  std::vector<Token> tokens;
};

// Python int objects for ids, made once and shared: a list of millions of ids then costs an
// INCREF per item instead of an allocation. Only touched with the GIL held.
PyObject* id_object(uint32_t id) {
  constexpr uint32_t kLimit = 1u << 21;  // ids above this are rare: allocate those
  static std::vector<PyObject*> cache;
  if (id >= kLimit) return PyLong_FromUnsignedLong(id);
  if (id >= cache.size()) cache.resize(std::max<size_t>(id + 1, std::min<size_t>(cache.size() * 2, kLimit)), nullptr);
  PyObject*& slot = cache[id];
  if (!slot && !(slot = PyLong_FromUnsignedLong(id))) return nullptr;
  Py_INCREF(slot);
  return slot;
}

uint32_t id_of(const Token& t) { return t.id; }
uint32_t id_of(uint32_t id) { return id; }

template <class T>
nb::list id_list(const std::vector<T>& tokens) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(tokens.size()));
  if (!list) throw nb::python_error();
  for (size_t i = 0; i < tokens.size(); ++i) {
    PyObject* item = id_object(id_of(tokens[i]));
    if (!item) {
      Py_DECREF(list);
      throw nb::python_error();
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return nb::steal<nb::list>(list);
}

std::vector<SpecialPolicy> policy_from(nb::bytes policy) {
  std::vector<SpecialPolicy> out(policy.size());
  const char* p = policy.c_str();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<SpecialPolicy>(p[i]);
  return out;
}

// Character offsets of each token: the characters that contain its first and last byte.
nb::list char_offsets(const std::vector<Token>& tokens, nb::handle text) {
  std::string_view utf8 = utf8_view(text);
  bool ascii = ciyuan_bindings::is_ascii(text);
  std::vector<uint32_t> char_at;  // byte -> index of the character containing it
  if (!ascii) {
    char_at.resize(utf8.size() + 1);
    uint32_t c = 0;
    for (size_t i = 0; i < utf8.size(); ++i) {
      if ((static_cast<unsigned char>(utf8[i]) & 0xC0) != 0x80 && i > 0) ++c;
      char_at[i] = c;
    }
    char_at[utf8.size()] = utf8.empty() ? 0 : c + 1;
  }
  nb::list out;
  for (const Token& t : tokens) {
    size_t s = t.start, e = t.end;
    if (!ascii) {
      s = char_at[s];
      e = e > t.start ? char_at[e - 1] + 1 : s;
    }
    out.append(nb::make_tuple(s, e));
  }
  return out;
}

// Keeps every str of a batch alive (and its UTF-8 view valid) while the GIL is released.
struct BatchTexts {
  std::vector<nb::object> owners;
  std::vector<std::string_view> views;
  explicit BatchTexts(nb::handle texts) {
    for (nb::handle t : texts) {
      owners.push_back(nb::borrow(t));
      views.push_back(utf8_view(t));
    }
  }
};

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
      .def_prop_ro("byte_spans",
                   [](const EncodingData& d) {
                     nb::list out;
                     for (const Token& t : d.tokens) out.append(nb::make_tuple(t.start, t.end));
                     return out;
                   })
      .def("char_offsets", [](const EncodingData& d, nb::handle text) { return char_offsets(d.tokens, text); });

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
          [](const Encoder& self, nb::handle texts, nb::bytes policy, int threads) {
            nb::list out;
            for (auto& r : encode_batch<uint32_t>(self, texts, policy, threads)) out.append(id_list(r));
            return out;
          },
          nb::arg("texts"), nb::arg("policy"), nb::arg("threads"))
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
