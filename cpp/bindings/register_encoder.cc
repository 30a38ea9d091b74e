// Bindings of the native encode path: the Encoder (any TokenModel behind a front end), its
// options (BertOptions, FrontEnd) and result (EncodingData), and the BERT front end alone
// (bert_normalize, bert_split) for the Python normalizer and pre-tokenizer classes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "ciyuan/bert.h"
#include "ciyuan/encoder.h"
#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"
#include "batch_ids.h"
#include "block_pool.h"
#include "common.h"
#include "encoding_data.h"

namespace nb = nanobind;
using ciyuan::BertOptions;
using ciyuan::Encoder;
using ciyuan::FrontEnd;
using ciyuan::FrontEndKind;
using ciyuan::PreTokPattern;
using ciyuan::Span;
using ciyuan::SpmNormalizerOptions;
using ciyuan::Token;
using ciyuan::TokenSink;
using ciyuan_bindings::EncodingData;
using ciyuan_bindings::StrBatch;
using ciyuan_bindings::encode_id_lists;
using ciyuan_bindings::GcPause;
using ciyuan_bindings::char_offsets;
using ciyuan_bindings::id_list;
using ciyuan_bindings::policy_from;
using ciyuan_bindings::utf8_view;
using ciyuan_bindings::wrapped_id_list;
using ciyuan_bindings::SlotClass;
using ciyuan_bindings::OffsetTrim;
using ciyuan_bindings::TokenTable;

namespace {

// Byte spans of `utf8` -> character spans.
nb::list char_spans(std::string_view utf8, bool ascii, const std::vector<Span>& spans) {
  nb::list out;
  if (ascii) {
    for (const auto& [s, e] : spans) out.append(nb::make_tuple(s, e));
    return out;
  }
  std::vector<uint32_t> char_at;
  ciyuan::utf8::char_index_of_bytes(utf8.data(), utf8.size(), char_at);
  for (const auto& [s, e] : spans) {
    const std::pair<uint32_t, uint32_t> chars = ciyuan::utf8::char_span(char_at, s, e);
    out.append(nb::make_tuple(chars.first, chars.second));
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

// Encodes a batch with the GIL released: run(views, policy, results) fills one result per text
// (tokens, or with T = uint32_t ids).
template <class T, class Run>
std::vector<std::vector<T>> run_batch(nb::handle texts, nb::bytes policy, Run&& run) {
  BatchTexts batch(texts);
  auto pol = policy_from(policy);
  std::vector<std::vector<T>> results;
  nb::gil_scoped_release release;
  run(batch.views, pol, results);
  return results;
}

// A batch's results as a list of EncodingData.
nb::list encoding_list(std::vector<std::vector<Token>> results) {
  GcPause pause;
  nb::list out;
  for (auto& r : results) {
    auto* data = new EncodingData();
    data->tokens = std::move(r);
    out.append(nb::cast(data, nb::rv_policy::take_ownership));
  }
  return out;
}

// The n best segmentations as a list of (EncodingData, score).
nb::list nbest_list(std::vector<std::vector<Token>>& paths, const std::vector<float>& scores) {
  nb::list out;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto* data = new EncodingData();
    data->tokens = std::move(paths[i]);
    out.append(nb::make_tuple(nb::cast(data, nb::rv_policy::take_ownership), scores[i]));
  }
  return out;
}

// A new EncodingData filled by fill(tokens) with the GIL released.
template <class Fill>
EncodingData* encoding_data(Fill&& fill) {
  auto* data = new EncodingData();
  try {
    nb::gil_scoped_release release;
    fill(data->tokens);
  } catch (...) {
    delete data;
    throw;
  }
  return data;
}

// One Encoding per text of a batch, made by `maker` (the Encoding class and its slots): slot 0
// gets the text's EncodingData (`data(i)`: the object and its C++ value), 1 its text, 2 its ids
// (with `head` before and `tail` after them), 3 the token count; the other slots get
// `values[k]`. The ids are made here, with the object: every caller reads them, and one pass
// costs less than a Python call per Encoding later.
template <class Data>
nb::list make_encodings(const SlotClass& maker, nb::tuple values, nb::list texts, const std::vector<uint32_t>& head,
                        const std::vector<uint32_t>& tail, Data&& data) {
  const size_t n = texts.size();
  if (values.size() != maker.size() || maker.size() < 4)
    throw nb::value_error("one value per slot (at least 4 slots)");
  std::vector<PyObject*> slots(maker.size());
  for (size_t k = 4; k < slots.size(); ++k) slots[k] = values[k].ptr();
  GcPause pause;
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(n));
  if (!out) throw nb::python_error();
  nb::list result = nb::steal<nb::list>(out);
  for (size_t i = 0; i < n; ++i) {
    auto [object, value] = data(i);
    nb::list ids = wrapped_id_list(head, value->tokens.data(), value->tokens.size(), tail);
    nb::object length = nb::steal(PyLong_FromSize_t(head.size() + value->tokens.size() + tail.size()));
    if (!length.ptr()) throw nb::python_error();
    slots[0] = object.ptr();
    slots[1] = PyList_GET_ITEM(texts.ptr(), static_cast<Py_ssize_t>(i));
    slots[2] = ids.ptr();
    slots[3] = length.ptr();
    PyObject* enc = maker.make(slots.data());
    if (!enc) throw nb::python_error();
    // Neither the Encoding nor its ids list can be part of a cycle as made (their references
    // are the tokenizer, shared batch values, the text, an EncodingData and ints), so the
    // collector need not walk them: untracked, a batch's tens of thousands of objects cost
    // later collections nothing (about a tenth of a batch of short lines otherwise). Encoding's
    // Python code tracks an Encoding again (gc_track) before anything can point back at it.
    PyObject_GC_UnTrack(enc);
    PyObject_GC_UnTrack(ids.ptr());
    PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), enc);
  }
  return result;
}

// The Encodings of a list of EncodingData (see make_encodings).
nb::list native_encodings(const SlotClass& maker, nb::tuple values, nb::list datas, nb::list texts,
                          const std::vector<uint32_t>& head, const std::vector<uint32_t>& tail) {
  if (texts.size() != datas.size()) throw nb::value_error("native_encodings: datas and texts differ in length");
  return make_encodings(maker, values, texts, head, tail, [&](size_t i) {
    nb::handle h = datas[i];
    nb::object item = nb::borrow(h);
    const EncodingData* value = &nb::cast<const EncodingData&>(item);
    return std::make_pair(std::move(item), value);
  });
}

// Encodes a batch (GIL released) and makes its Encodings at once: each text's tokens move into
// an EncodingData held inside its Python object (no second allocation, no list of them).
nb::list encode_batch_encodings(const Encoder& self, nb::list texts, nb::bytes policy, int threads,
                                const SlotClass& maker, nb::tuple values, const std::vector<uint32_t>& head,
                                const std::vector<uint32_t>& tail) {
  std::vector<std::vector<Token>> results = run_batch<Token>(texts, policy, [&](const auto& views, const auto& pol,
                                                                                auto& r) {
    self.encode_batch(views, pol, threads, r);
  });
  nb::handle type = nb::type<EncodingData>();
  return make_encodings(maker, values, texts, head, tail, [&](size_t i) {
    nb::object object = nb::inst_alloc(type);
    EncodingData* value = new (nb::inst_ptr<EncodingData>(object)) EncodingData();
    value->tokens = std::move(results[i]);
    nb::inst_mark_ready(object);
    return std::make_pair(std::move(object), static_cast<const EncodingData*>(value));
  });
}

// A field getter of a class with __slots__ (Encoding's ids, offsets, tokens and masks), called
// by CPython with no Python frame: it returns the slot's value when it holds one; for a mask
// field of a native result (slot `_native` set) it makes the mask list here; otherwise it calls
// `fallback` (the Python getter), which handles every other case. The Python getter stays the
// one definition of the field: this only answers the common cases sooner.
struct FieldGetter {
  nb::object cls;
  Py_ssize_t slot = 0, native = 0, wrap = 0, length = 0, text = 0, tokenizer = 0;
  int kind = 0;           // 0: any field, 1: a mask field, 2: offsets
  int mask_default = 0;   // a mask's value for a model's own tokens when nothing wraps them
  nb::object field;       // the field's name (the key of the wrap's `masks`)
  nb::object fallback;
  nb::object masks_name = nb::str("masks"), before_name = nb::str("before"), after_name = nb::str("after"),
             trim_name = nb::str("trim"), lookup_name = nb::str("id_to_token");
  // The last wrap read (a batch's Encodings share one) and what was read of it: masks[field]
  // (mask fields) or its before/after counts and its OffsetTrim (offsets; None when the offsets
  // are not trimmed). NativeWrap never changes once made.
  nb::object last_wrap, last_parts, last_trim;
  size_t last_before = 0, last_after = 0;
};

PyObject* slot_at(PyObject* obj, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
}

// head + [value] * (n - len(head) - len(tail)) + tail (all borrowed; head and tail are lists).
// The middle is one object n times: its count is raised once, and the stores are a plain fill.
PyObject* mask_list(PyObject* head, PyObject* value, PyObject* tail, Py_ssize_t n) {
  const Py_ssize_t nh = PyList_GET_SIZE(head), nt = PyList_GET_SIZE(tail);
  if (nh + nt > n) {
    PyErr_SetString(PyExc_RuntimeError, "an Encoding shorter than the tokens around it");
    return nullptr;
  }
  PyObject* list = PyList_New(n);
  if (!list) return nullptr;
  PyObject** items = reinterpret_cast<PyListObject*>(list)->ob_item;
  for (Py_ssize_t i = 0; i < nh; ++i) {
    items[i] = PyList_GET_ITEM(head, i);
    Py_INCREF(items[i]);
  }
  const Py_ssize_t middle = n - nh - nt;
  std::fill(items + nh, items + nh + middle, value);
  Py_SET_REFCNT(value, Py_REFCNT(value) + middle);
  for (Py_ssize_t i = 0; i < nt; ++i) {
    items[nh + middle + i] = PyList_GET_ITEM(tail, i);
    Py_INCREF(items[nh + middle + i]);
  }
  return list;
}

// A mask of a native result, or nullptr with no error set when the Python getter must decide.
PyObject* native_mask(FieldGetter& g, PyObject* obj, PyObject* wrap, Py_ssize_t n) {
  if (wrap == Py_None) {
    PyObject* fill = ciyuan_bindings::id_object(static_cast<uint32_t>(g.mask_default));
    if (!fill) return nullptr;
    PyObject* empty = PyList_New(0);
    PyObject* list = empty ? mask_list(empty, fill, empty, n) : nullptr;
    Py_XDECREF(empty);
    Py_DECREF(fill);
    return list;
  }
  // The wrap's parts of this field, kept for the last wrap seen: a batch's Encodings share one
  // wrap, so the attribute and dict lookups are made once per batch, not per Encoding and field.
  // (The wrap is held, so a new wrap can never be mistaken for it at the same address.)
  if (wrap != g.last_wrap.ptr()) {
    PyObject* masks = PyObject_GetAttr(wrap, g.masks_name.ptr());
    if (!masks) return nullptr;
    PyObject* parts = PyDict_Check(masks) ? PyDict_GetItemWithError(masks, g.field.ptr()) : nullptr;
    const bool usable = parts && PyTuple_Check(parts) && PyTuple_GET_SIZE(parts) == 3 &&
                        PyList_Check(PyTuple_GET_ITEM(parts, 0)) && PyList_Check(PyTuple_GET_ITEM(parts, 2));
    nb::object kept = usable ? nb::borrow(parts) : nb::object();
    Py_DECREF(masks);
    if (!usable) return nullptr;  // the Python getter decides (or reports the error set)
    g.last_parts = std::move(kept);
    g.last_wrap = nb::borrow(wrap);
  }
  PyObject* parts = g.last_parts.ptr();
  (void)obj;
  return mask_list(PyTuple_GET_ITEM(parts, 0), PyTuple_GET_ITEM(parts, 1), PyTuple_GET_ITEM(parts, 2), n);
}

// The character offsets of a native result (kept in the slot, as the Python getter does), or
// nullptr with no error set when the Python getter must decide.
PyObject* native_offsets(FieldGetter& g, PyObject* obj, PyObject* native, PyObject* wrap) {
  PyObject* text = slot_at(obj, g.text);
  if (!text || !PyUnicode_Check(text) || !nb::isinstance<EncodingData>(native)) return nullptr;
  size_t before = 0, after = 0;
  if (wrap != Py_None) {
    if (wrap != g.last_wrap.ptr()) {  // read once per wrap (per batch), as native_mask does
      nb::object b = nb::steal(PyObject_GetAttr(wrap, g.before_name.ptr()));
      nb::object a = b.ptr() ? nb::steal(PyObject_GetAttr(wrap, g.after_name.ptr())) : nb::object();
      nb::object t = a.ptr() ? nb::steal(PyObject_GetAttr(wrap, g.trim_name.ptr())) : nb::object();
      if (!t.ptr()) return nullptr;
      const size_t nb_before = PyLong_AsSize_t(b.ptr()), nb_after = PyLong_AsSize_t(a.ptr());
      if (PyErr_Occurred()) return nullptr;
      if (!t.is_none() && !nb::isinstance<ciyuan_bindings::OffsetTrim>(t)) return nullptr;  // Python decides
      g.last_before = nb_before;
      g.last_after = nb_after;
      g.last_trim = std::move(t);
      g.last_wrap = nb::borrow(wrap);
    }
    before = g.last_before;
    after = g.last_after;
  }
  try {
    const EncodingData& data = *nb::inst_ptr<EncodingData>(native);
    // (Not a buffer kept in g: a lookup runs Python code, which may read another offsets field;
    // and the result and its text are held, in case that code changes this Encoding's slots.)
    nb::object keep_native = nb::borrow(native), keep_text = nb::borrow(text);
    std::vector<ciyuan_bindings::TokenSpaces> spaces;
    const ciyuan_bindings::TokenSpaces* trim = nullptr;
    bool add_prefix_space = false;
    if (wrap != Py_None && !g.last_trim.is_none()) {
      auto& trimmer = *nb::inst_ptr<ciyuan_bindings::OffsetTrim>(g.last_trim);
      PyObject* tokenizer = slot_at(obj, g.tokenizer);
      if (!tokenizer) return nullptr;
      nb::object lookup = nb::steal(PyObject_GetAttr(tokenizer, g.lookup_name.ptr()));
      if (!lookup.ptr()) return nullptr;
      if (!trimmer.spaces(lookup, data.tokens.data(), data.tokens.size(), ciyuan_bindings::utf8_view(text), spaces))
        return nullptr;
      trim = spaces.data();
      add_prefix_space = trimmer.add_prefix_space();
    }
    nb::list offsets = ciyuan_bindings::char_offsets(data.tokens, text, before, after, trim, add_prefix_space);
    // Kept by an untracked Encoding (a batch's), it is left untracked too, as its ids list: a
    // list of (int, int) tuples holds nothing that can lead back to it.
    if (!PyObject_GC_IsTracked(obj)) PyObject_GC_UnTrack(offsets.ptr());
    PyObject*& slot = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + g.slot);
    PyObject* old = slot;
    slot = offsets.inc_ref().ptr();
    Py_XDECREF(old);
    return offsets.release().ptr();
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyObject* field_get(PyObject* self, PyObject* obj) {
  FieldGetter& g = *nb::inst_ptr<FieldGetter>(self);
  if (!PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(g.cls.ptr())))
    return PyObject_CallOneArg(g.fallback.ptr(), obj);
  PyObject* value = slot_at(obj, g.slot);
  if (value && value != Py_None) {
    Py_INCREF(value);
    return value;
  }
  if (g.kind != 0) {
    PyObject* native = slot_at(obj, g.native);
    PyObject* length = slot_at(obj, g.length);
    PyObject* wrap = slot_at(obj, g.wrap);
    if (native && native != Py_None && length && PyLong_CheckExact(length) && wrap) {
      const Py_ssize_t n = PyLong_AsSsize_t(length);
      if (n < 0 && PyErr_Occurred()) return nullptr;
      PyObject* out = n < 0 ? nullptr : g.kind == 1 ? native_mask(g, obj, wrap, n) : native_offsets(g, obj, native, wrap);
      if (out || PyErr_Occurred()) return out;
    }
  }
  return PyObject_CallOneArg(g.fallback.ptr(), obj);
}

PyMethodDef field_get_def = {"field_get", field_get, METH_O, "A field of an object (see _core.field_getter)."};

// The getter (a builtin function of one argument) of field `slot` of maker's class.
nb::object field_getter(const SlotClass& maker, const std::string& slot, nb::object fallback, int kind,
                        int mask_default, const std::string& field) {
  if (kind < 0 || kind > 2) throw nb::value_error("field_getter: kind is 0 (any), 1 (a mask) or 2 (offsets)");
  auto* g = new FieldGetter();
  g->cls = nb::borrow(maker.cls());
  g->fallback = std::move(fallback);
  g->kind = kind;
  g->mask_default = mask_default;
  g->field = nb::str(field.c_str());
  try {
    g->slot = maker.offset(slot);
    if (kind != 0) {
      g->native = maker.offset("_native");
      g->wrap = maker.offset("_wrap");
      g->length = maker.offset("_length");
      g->text = maker.offset("_text");
      g->tokenizer = maker.offset("_tokenizer");
    }
  } catch (...) {
    delete g;
    throw;
  }
  nb::object owner = nb::cast(g, nb::rv_policy::take_ownership);
  PyObject* fn = PyCFunction_NewEx(&field_get_def, owner.ptr(), nullptr);
  if (!fn) throw nb::python_error();
  return nb::steal(fn);
}

// A data descriptor over a field getter (what `property(getter, fset, None, doc)` is, without
// property's call of the getter: reading the field then goes straight from the attribute lookup
// to field_get, a fifth of the cost of reading a mask of a batch's Encoding). Setting calls
// `fset(obj, value)`; deleting is refused, as a property without a deleter refuses it.
struct FieldDescr {
  PyObject_HEAD
  PyObject* fget;  // a builtin made by field_getter (its self is the FieldGetter)
  PyObject* fset;  // the Python setter, or None
  PyObject* doc;
};

PyObject* field_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  auto* d = reinterpret_cast<FieldDescr*>(self);
  if (!obj) {  // read on the class: the descriptor itself
    Py_INCREF(self);
    return self;
  }
  return field_get(PyCFunction_GET_SELF(d->fget), obj);
}

int field_descr_set(PyObject* self, PyObject* obj, PyObject* value) {
  auto* d = reinterpret_cast<FieldDescr*>(self);
  if (!value || d->fset == Py_None) {
    PyErr_SetString(PyExc_AttributeError, value ? "can't set attribute" : "can't delete attribute");
    return -1;
  }
  PyObject* args[2] = {obj, value};
  PyObject* r = PyObject_Vectorcall(d->fset, args, 2, nullptr);
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}

int field_descr_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* d = reinterpret_cast<FieldDescr*>(self);
  Py_VISIT(d->fget);
  Py_VISIT(d->fset);
  Py_VISIT(d->doc);
  Py_VISIT(Py_TYPE(self));  // a heap type: its instances hold it
  return 0;
}

int field_descr_clear(PyObject* self) {
  auto* d = reinterpret_cast<FieldDescr*>(self);
  Py_CLEAR(d->fget);
  Py_CLEAR(d->fset);
  Py_CLEAR(d->doc);
  return 0;
}

void field_descr_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  field_descr_clear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyMemberDef field_descr_members[] = {
    {"fget", T_OBJECT, offsetof(FieldDescr, fget), READONLY, "The getter (a builtin, see field_getter)."},
    {"fset", T_OBJECT, offsetof(FieldDescr, fset), READONLY, "The setter, or None."},
    {"__doc__", T_OBJECT, offsetof(FieldDescr, doc), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot field_descr_slots[] = {
    {Py_tp_descr_get, reinterpret_cast<void*>(field_descr_get)},
    {Py_tp_descr_set, reinterpret_cast<void*>(field_descr_set)},
    {Py_tp_traverse, reinterpret_cast<void*>(field_descr_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(field_descr_clear)},
    {Py_tp_dealloc, reinterpret_cast<void*>(field_descr_dealloc)},
    {Py_tp_members, field_descr_members},
    {0, nullptr},
};

PyType_Spec field_descr_spec = {"ciyuan._core.FieldDescriptor", sizeof(FieldDescr), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, field_descr_slots};

// A FieldDescriptor over `getter` (made by field_getter), with setter `fset` (or None) and `doc`.
nb::object field_descriptor(nb::handle getter, nb::handle fset, nb::handle doc) {
  if (!PyCFunction_Check(getter.ptr()) || PyCFunction_GET_FUNCTION(getter.ptr()) != field_get)
    throw nb::type_error("field_descriptor needs a getter made by field_getter");
  static PyObject* type = PyType_FromSpec(&field_descr_spec);  // made once, kept for the process
  if (!type) throw nb::python_error();
  // (PyObject_GC_New takes the instance's reference to its heap type, released in dealloc.)
  auto* d = PyObject_GC_New(FieldDescr, reinterpret_cast<PyTypeObject*>(type));
  if (!d) throw nb::python_error();
  d->fget = getter.inc_ref().ptr();
  d->fset = fset.inc_ref().ptr();
  d->doc = doc.inc_ref().ptr();
  PyObject_GC_Track(d);
  return nb::steal(reinterpret_cast<PyObject*>(d));
}

void register_encoding_data(nb::module_& m) {
  nb::class_<FieldGetter>(m, "FieldGetter", "What a getter made by field_getter holds.");
  m.def("field_getter", &field_getter, nb::arg("maker"), nb::arg("slot"), nb::arg("fallback"), nb::arg("kind") = 0,
        nb::arg("mask_default") = 0, nb::arg("field") = "",
        "A getter of one argument for a field of maker's class: the slot's value when set (not None); over a "
        "native result (slot _native set), with kind 1 a mask (wrap.masks[field]: head + [value] * ... + tail, "
        "or [mask_default] * _length with no wrap), with kind 2 the character offsets (kept in the slot); "
        "else fallback(obj).");
  m.def("field_descriptor", &field_descriptor, nb::arg("getter"), nb::arg("fset").none(), nb::arg("doc").none(),
        "property(getter, fset, None, doc) for a getter made by field_getter, reading the field without "
        "property's call of the getter.");
  m.def(
      "gc_track",
      [](nb::handle obj) {
        // What PyObject_GC_Track does, but a no-op for an object already tracked or of a type
        // the collector does not know (CPython aborts on tracking twice).
        PyObject* o = obj.ptr();
        if (PyObject_IS_GC(o) && !PyObject_GC_IsTracked(o)) PyObject_GC_Track(o);
      },
      nb::arg("obj"),
      "Track `obj` by the cyclic garbage collector again (a batch's Encodings are made untracked; "
      "Encoding calls this before it is changed). Nothing for an object already tracked.");
  nb::class_<SlotClass>(m, "SlotClass",
                        "Makes instances of a class with __slots__ from native code (a batch's Encodings).")
      .def(nb::init<nb::handle, const std::vector<std::string>&>(), nb::arg("cls"), nb::arg("slots"),
           "TypeError unless every name is a writable slot of `cls`.")
      .def_prop_ro("cls", [](const SlotClass& c) { return nb::borrow(c.cls()); });
  nb::class_<TokenTable>(m, "TokenTable",
                         "Token strings by id, each looked up once (through the lookup passed to each call).")
      .def(nb::init<>())
      .def(
          "strings",
          [](TokenTable& table, nb::handle lookup, const std::vector<uint32_t>& ids) {
            nb::list none;
            return table.tokens(lookup, none, ids.data(), ids.size(), none);
          },
          nb::arg("lookup"), nb::arg("ids"), "[lookup(id) for id in ids], each id's string looked up once and kept.");
  nb::class_<OffsetTrim>(m, "OffsetTrim",
                         "Hugging Face's byte-level offset trimming for a NativeWrap's Encodings: each token's spaces "
                         "counted once per id from `table` (the tokenizer's TokenTable), or in the text for "
                         "`matched_ids` (lstrip/rstrip added tokens) and `text_unk` (-1: none), whose token is the "
                         "text they matched.")
      .def(nb::init<nb::handle, bool, const std::vector<uint32_t>&, int64_t>(), nb::arg("table"),
           nb::arg("add_prefix_space"), nb::arg("matched_ids"), nb::arg("text_unk"))
      .def_prop_ro("add_prefix_space", &OffsetTrim::add_prefix_space);
  m.def("native_encodings", &native_encodings, nb::arg("maker"), nb::arg("values"), nb::arg("datas"),
        nb::arg("texts"), nb::arg("head"), nb::arg("tail"),
        "One object of maker's class per EncodingData: slots (data, text, head + ids + tail, length, "
        "values[4:]...).");

  nb::class_<EncodingData>(m, "EncodingData", "The ids and byte spans of one encoded text.")
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
      .def(
          "tokens",
          [](const EncodingData& d, TokenTable& table, nb::handle lookup, nb::list head, nb::list tail) {
            return table.tokens(lookup, head, d.tokens.data(), d.tokens.size(), tail);
          },
          nb::arg("table"), nb::arg("lookup"), nb::arg("head"), nb::arg("tail"),
          "head + the token string of each id (`lookup(id)` once per id, then `table`'s) + tail.")
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
}

void register_front_end(nb::module_& m) {
  nb::class_<BertOptions>(m, "BertOptions", "Hugging Face's BertNormalizer options (strip_accents resolved).")
      .def(nb::init<>())
      .def(
          "__init__",
          [](BertOptions* self, bool clean_text, bool handle_chinese_chars, bool strip_accents, bool lowercase) {
            new (self) BertOptions{clean_text, handle_chinese_chars, strip_accents, lowercase};
          },
          nb::kw_only(), nb::arg("clean_text"), nb::arg("handle_chinese_chars"), nb::arg("strip_accents"),
          nb::arg("lowercase"))
      .def_rw("clean_text", &BertOptions::clean_text)
      .def_rw("handle_chinese_chars", &BertOptions::handle_chinese_chars)
      .def_rw("strip_accents", &BertOptions::strip_accents)
      .def_rw("lowercase", &BertOptions::lowercase)
      // Takes any object (False for a non-BertOptions), as object.__eq__ does.
      .def("__eq__",
           [](const BertOptions& a, nb::handle other) {
             if (!nb::isinstance<BertOptions>(other)) return false;
             const BertOptions& b = nb::cast<const BertOptions&>(other);
             return a.clean_text == b.clean_text && a.handle_chinese_chars == b.handle_chinese_chars &&
                    a.strip_accents == b.strip_accents && a.lowercase == b.lowercase;
           },
           nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__repr__", [](const BertOptions& o) {
        auto flag = [](bool b) { return b ? "True" : "False"; };
        return std::string("BertOptions(clean_text=") + flag(o.clean_text) +
               ", handle_chinese_chars=" + flag(o.handle_chinese_chars) + ", strip_accents=" + flag(o.strip_accents) +
               ", lowercase=" + flag(o.lowercase) + ")";
      });

  nb::enum_<PreTokPattern>(m, "PreTokPattern", "The pre-tokenizer scanners of the native core.")
      .value("GPT2", PreTokPattern::GPT2)
      .value("CL100K", PreTokPattern::CL100K)
      .value("O200K", PreTokPattern::O200K)
      .value("WORD_PUNCT", PreTokPattern::WORD_PUNCT)
      .value("WHITESPACE", PreTokPattern::WHITESPACE)
      .value("LLAMA3", PreTokPattern::LLAMA3)
      .value("QWEN2", PreTokPattern::QWEN2);
  m.def("parse_pattern", [](std::string name) { return ciyuan::parse_pattern(name); }, nb::arg("name"),
        "The scanner of a pattern name ('gpt2', 'r50k_base', 'p50k_base', 'cl100k_base', 'o200k_base', "
        "'wordpunct', 'whitespace'); InvalidInputError for any other.");

  nb::enum_<FrontEndKind>(m, "FrontEndKind", "How the Encoder cuts text into pieces.")
      .value("NONE", FrontEndKind::kNone, "each segment between special tokens is one piece")
      .value("PATTERN", FrontEndKind::kPattern, "a pre-tokenizer scanner")
      .value("BERT", FrontEndKind::kBert, "BertNormalizer + BertPreTokenizer")
      .value("SENTENCEPIECE", FrontEndKind::kSentencePiece,
             "SentencePiece's normalizer; each normalized segment is one piece");

  nb::class_<SpmNormalizerOptions>(m, "SpmNormalizerOptions",
                                   "SentencePiece's normalizer options (normalizer_spec + treat_whitespace_as_suffix).")
      .def(nb::init<>())
      .def_prop_rw(
          "charsmap", [](const SpmNormalizerOptions& o) { return nb::bytes(o.charsmap.data(), o.charsmap.size()); },
          [](SpmNormalizerOptions& o, nb::bytes b) { o.charsmap.assign(b.c_str(), b.size()); },
          "The precompiled character map (b'' for none).")
      .def_rw("add_dummy_prefix", &SpmNormalizerOptions::add_dummy_prefix)
      .def_rw("remove_extra_whitespaces", &SpmNormalizerOptions::remove_extra_whitespaces)
      .def_rw("escape_whitespaces", &SpmNormalizerOptions::escape_whitespaces)
      .def_rw("treat_whitespace_as_suffix", &SpmNormalizerOptions::treat_whitespace_as_suffix)
      .def_rw("split_by_whitespace", &SpmNormalizerOptions::split_by_whitespace,
              "Training only: cut each normalized sentence into whitespace words.")
      .def_rw("user_defined_symbols", &SpmNormalizerOptions::user_defined_symbols)
      .def_rw("hf_offsets", &SpmNormalizerOptions::hf_offsets,
              "Offsets as Hugging Face's Prepend + Replace normalizers align them (dummy prefix: the first "
              "character's span; byte-fallback tokens: the whole character's), not sentencepiece's.");

  nb::class_<FrontEnd>(m, "FrontEnd", "The Encoder's front end: build it with none(), scanner() or bert().")
      .def_static("none", &FrontEnd::none)
      .def_static("scanner", &FrontEnd::scanner, nb::arg("pattern"))
      .def_static("bert", &FrontEnd::bert_split, nb::arg("options"))
      .def_static(
          "sentencepiece", [](const SpmNormalizerOptions& o) { return FrontEnd::sentencepiece(o); },
          nb::arg("options"), "SentencePiece's normalizer (ModelError for a corrupt charsmap).")
      .def_ro("kind", &FrontEnd::kind)
      .def_prop_ro("sentencepiece_options",
                   [](const FrontEnd& f) -> std::optional<SpmNormalizerOptions> {
                     if (f.kind != FrontEndKind::kSentencePiece) return std::nullopt;
                     return f.spm->options();
                   }, "The options of a SENTENCEPIECE front end, else None.")
      .def_prop_ro("pattern",
                   [](const FrontEnd& f) -> std::optional<ciyuan::PreTokPattern> {
                     if (f.kind != FrontEndKind::kPattern) return std::nullopt;
                     return f.pattern;
                   }, "The scanner of a PATTERN front end, else None.")
      .def_prop_ro("bert_options",
                   [](const FrontEnd& f) -> std::optional<BertOptions> {
                     if (f.kind != FrontEndKind::kBert) return std::nullopt;
                     return f.bert;
                   }, "The options of a BERT front end, else None.")
      .def("__repr__", [](const FrontEnd& f) {
        switch (f.kind) {
          case FrontEndKind::kPattern:
            return std::string("FrontEnd.scanner(") + nb::repr(nb::cast(f.pattern)).c_str() + ")";
          case FrontEndKind::kBert:
            return std::string("FrontEnd.bert(") + nb::repr(nb::cast(f.bert)).c_str() + ")";
          case FrontEndKind::kSentencePiece:
            return std::string("FrontEnd.sentencepiece(...)");
          default:
            return std::string("FrontEnd.none()");
        }
      });

  m.def(
      "bert_normalize",
      [](nb::handle text, const BertOptions& options) {
        std::string_view utf8 = utf8_view(text);
        ciyuan::BertFrontEnd front(options);
        std::string out;
        std::vector<Span> spans;
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
        std::vector<Span> spans;
        ciyuan::bert_split(utf8, spans);
        return char_spans(utf8, ciyuan_bindings::is_ascii(text), spans);
      },
      nb::arg("text"), "Hugging Face's BertPreTokenizer: character spans [start, end) of the words.");
  m.def(
      "spm_normalize",
      [](nb::handle text, const FrontEnd& front_end) {
        if (front_end.kind != FrontEndKind::kSentencePiece)
          throw ciyuan::Error(ciyuan::ErrorKind::kInvalidInput, "spm_normalize needs a SENTENCEPIECE front end");
        std::string_view utf8 = utf8_view(text);
        std::string out;
        std::vector<uint32_t> orig;
        {
          nb::gil_scoped_release release;
          front_end.spm->normalize(utf8, out, orig);
        }
        // Each normalized character -> (original character at its first byte, at the next
        // character's first byte): token spans then map exactly as sentencepiece's norm_to_orig.
        std::vector<uint32_t> char_at;
        ciyuan::utf8::char_index_of_bytes(utf8.data(), utf8.size(), char_at);
        auto chars = [&](uint32_t b) -> uint32_t {
          return b >= char_at.size() ? static_cast<uint32_t>(char_at.empty() ? 0 : char_at.back() + 1) : char_at[b];
        };
        nb::list spans;
        for (size_t k = 0; k < out.size();) {
          size_t next = k + 1;
          while (next < out.size() && ciyuan::utf8::is_continuation(static_cast<unsigned char>(out[next]))) ++next;
          spans.append(nb::make_tuple(chars(orig[k]), chars(orig[next])));
          k = next;
        }
        return nb::make_tuple(nb::str(out.data(), out.size()), spans);
      },
      nb::arg("text"), nb::arg("front_end"),
      "SentencePiece's normalizer: (normalized text, original character span of each normalized character).");
  m.attr("BERT_TABLES_SOURCE") = nb::str(ciyuan::bert::kTablesSource);
  // Encoder's flags of a Hugging Face added token (ciyuan/encoder.h).
  m.attr("ADDED_RAW") = nb::int_(static_cast<int>(ciyuan::kAddedRaw));
  m.attr("ADDED_SECOND") = nb::int_(static_cast<int>(ciyuan::kAddedSecond));
  m.attr("ADDED_LSTRIP") = nb::int_(static_cast<int>(ciyuan::kAddedLstrip));
  m.attr("ADDED_RSTRIP") = nb::int_(static_cast<int>(ciyuan::kAddedRstrip));
  m.attr("ADDED_SINGLE_WORD") = nb::int_(static_cast<int>(ciyuan::kAddedSingleWord));
}

}  // namespace

void register_encoder(nb::module_& m) {
  register_encoding_data(m);
  register_front_end(m);

  nb::class_<ciyuan::SampleOptions>(m, "SampleOptions",
                                    "How a segmentation is sampled (subword regularization); see Tokenizer.encode.")
      .def(nb::init<>())
      .def(
          "__init__",
          [](ciyuan::SampleOptions* self, float alpha, int32_t nbest_size) {
            new (self) ciyuan::SampleOptions{alpha, nbest_size};
          },
          nb::kw_only(), nb::arg("alpha"), nb::arg("nbest_size") = -1)
      .def_rw("alpha", &ciyuan::SampleOptions::alpha,
              "Unigram: smoothing (inverse temperature); BPE: dropout probability")
      .def_rw("nbest_size", &ciyuan::SampleOptions::nbest_size,
              "Unigram: 1 = Viterbi, <= 0 = all segmentations, k > 1 = one of the k best; BPE: ignored")
      .def("__repr__", [](const ciyuan::SampleOptions& o) {
        return "SampleOptions(alpha=" + std::string(nb::repr(nb::cast(o.alpha)).c_str()) +
               ", nbest_size=" + std::to_string(o.nbest_size) + ")";
      });

  nb::class_<ciyuan::Rng>(m, "SampleRng",
                          "The random generator of text `index` of a batch sampled with `seed` (a single text is "
                          "text 0): what encode_sampled_batch uses for that text.")
      .def(
          "__init__", [](ciyuan::Rng* self, uint64_t seed, uint64_t index) { new (self) ciyuan::Rng(ciyuan::sample_rng(seed, index)); },
          nb::arg("seed"), nb::arg("index") = 0);

  nb::class_<Encoder>(m, "Encoder", "Special tokens -> front end -> model, over whole texts and batches.")
      .def(
          "__init__",
          [](Encoder* self, std::shared_ptr<ciyuan::TokenModel> model, const FrontEnd& front_end,
             std::vector<std::pair<std::string, uint32_t>> specials, const std::vector<uint8_t>& flags) {
            if (!flags.empty() && flags.size() != specials.size())
              throw nb::value_error("flags must have one entry per special token, or none");
            std::vector<ciyuan::SpecialToken> sp;
            for (size_t i = 0; i < specials.size(); ++i)
              sp.push_back(ciyuan::SpecialToken{std::move(specials[i].first), specials[i].second,
                                                flags.empty() ? uint8_t{0} : flags[i]});
            new (self) Encoder(std::move(model), front_end, std::move(sp));
          },
          nb::arg("model"), nb::arg("front_end"), nb::arg("specials"), nb::arg("flags") = std::vector<uint8_t>{},
          "specials: (text, id) of each special token; policies passed to the encode calls follow this order.\n"
          "flags: none, or one per special token: 0 for a special token found by policy, or a Hugging Face\n"
          "added token found in every call: ADDED_RAW (1) or ADDED_SECOND (2, the second pass), plus\n"
          "ADDED_LSTRIP (4), ADDED_RSTRIP (8), ADDED_SINGLE_WORD (16).")
      .def_prop_ro("front_end", &Encoder::front_end)
      .def(
          "encode",
          [](const Encoder& self, nb::handle text, nb::bytes policy) {
            std::string_view utf8 = utf8_view(text);
            auto pol = policy_from(policy);
            return encoding_data([&](std::vector<Token>& out) { self.encode(utf8, pol, out); });
          },
          nb::arg("text"), nb::arg("policy"), nb::rv_policy::take_ownership)
      .def(
          "encode_ids",
          [](const Encoder& self, nb::handle text, nb::bytes policy) {
            // The UTF-8 is made here, without the GIL, not by CPython's encoder (str_utf8.h).
            const ciyuan_bindings::StrData data = ciyuan_bindings::checked_str_data(text);
            auto pol = policy_from(policy);
            std::vector<uint32_t> ids = ciyuan_bindings::block_pool::take_ids();
            bool has_utf8 = false;
            {
              nb::gil_scoped_release release;
              ciyuan_bindings::Utf8Buffer buffer;
              std::string_view utf8;
              has_utf8 = ciyuan_bindings::str_utf8(data, buffer, utf8);
              if (has_utf8) self.encode_ids(utf8, pol, ids);
            }
            if (!has_utf8) ciyuan_bindings::raise_no_utf8(text);
            nb::list list = id_list(ids);
            ciyuan_bindings::block_pool::give_ids(std::move(ids));
            return list;
          },
          nb::arg("text"), nb::arg("policy"))
      .def(
          "encode_spans",
          [](const Encoder& self, nb::handle text, std::vector<Span> spans) {
            std::string_view utf8 = utf8_view(text);
            return encoding_data([&](std::vector<Token>& out) { self.encode_spans(utf8, spans, out); });
          },
          nb::arg("text"), nb::arg("spans"), nb::rv_policy::take_ownership)
      .def(
          "encode_batch",
          [](const Encoder& self, nb::handle texts, nb::bytes policy, int threads) {
            return encoding_list(run_batch<Token>(texts, policy, [&](const auto& views, const auto& pol, auto& r) {
              self.encode_batch(views, pol, threads, r);
            }));
          },
          nb::arg("texts"), nb::arg("policy"), nb::arg("threads"))
      .def("encode_batch_encodings", &encode_batch_encodings, nb::arg("texts"), nb::arg("policy"), nb::arg("threads"),
           nb::arg("maker"), nb::arg("values"), nb::arg("head"), nb::arg("tail"),
           "encode_batch, each text's result made into an object of maker's class at once (see native_encodings).")
      .def(
          "encode_batch_ids",
          [](const Encoder& self, nb::handle texts, nb::bytes policy, int threads, const std::vector<uint32_t>& head,
             const std::vector<uint32_t>& tail) {
            const StrBatch batch(texts);
            const auto pol = policy_from(policy);
            return encode_id_lists(batch, threads, [&](size_t, std::string_view utf8, std::vector<uint32_t>& ids) {
              self.encode_ids(utf8, pol, ids);
            }, head, tail);
          },
          nb::arg("texts"), nb::arg("policy"), nb::arg("threads"), nb::arg("head") = std::vector<uint32_t>(),
          nb::arg("tail") = std::vector<uint32_t>(),
          "Ids of each text, with `head` and `tail` (a template's special tokens) around them.")
      .def(
          "encode_sampled",
          [](const Encoder& self, nb::handle text, nb::bytes policy, const ciyuan::SampleOptions& options,
             ciyuan::Rng& rng) {
            std::string_view utf8 = utf8_view(text);
            auto pol = policy_from(policy);
            return encoding_data([&](std::vector<Token>& out) {
              TokenSink sink(out);
              self.encode_sampled(utf8, pol, options, rng, sink);
            });
          },
          nb::arg("text"), nb::arg("policy"), nb::arg("options"), nb::arg("rng"), nb::rv_policy::take_ownership,
          "encode, each piece's segmentation sampled with `rng`.")
      .def(
          "encode_sampled_ids",
          [](const Encoder& self, nb::handle text, nb::bytes policy, const ciyuan::SampleOptions& options,
             ciyuan::Rng& rng) {
            std::string_view utf8 = utf8_view(text);
            auto pol = policy_from(policy);
            std::vector<uint32_t> ids;
            {
              nb::gil_scoped_release release;
              TokenSink sink(ids);
              self.encode_sampled(utf8, pol, options, rng, sink);
            }
            return id_list(ids);
          },
          nb::arg("text"), nb::arg("policy"), nb::arg("options"), nb::arg("rng"))
      .def(
          "encode_sampled_batch",
          [](const Encoder& self, nb::handle texts, nb::bytes policy, const ciyuan::SampleOptions& options,
             uint64_t seed, int threads) {
            return encoding_list(run_batch<Token>(texts, policy, [&](const auto& views, const auto& pol, auto& r) {
              self.encode_sampled_batch(views, pol, options, seed, threads, r);
            }));
          },
          nb::arg("texts"), nb::arg("policy"), nb::arg("options"), nb::arg("seed"), nb::arg("threads"),
          "Text i is sampled with the generator of (seed, i): the thread count never changes a result.")
      .def(
          "encode_sampled_batch_ids",
          [](const Encoder& self, nb::handle texts, nb::bytes policy, const ciyuan::SampleOptions& options,
             uint64_t seed, int threads, const std::vector<uint32_t>& head, const std::vector<uint32_t>& tail) {
            const StrBatch batch(texts);
            const auto pol = policy_from(policy);
            return encode_id_lists(batch, threads, [&](size_t i, std::string_view utf8, std::vector<uint32_t>& ids) {
              TokenSink sink(ids);
              ciyuan::Rng rng = ciyuan::sample_rng(seed, i);
              self.encode_sampled(utf8, pol, options, rng, sink);
            }, head, tail);
          },
          nb::arg("texts"), nb::arg("policy"), nb::arg("options"), nb::arg("seed"), nb::arg("threads"),
          nb::arg("head") = std::vector<uint32_t>(), nb::arg("tail") = std::vector<uint32_t>())
      .def(
          "encode_spans_sampled",
          [](const Encoder& self, nb::handle text, std::vector<Span> spans, const ciyuan::SampleOptions& options,
             ciyuan::Rng& rng) {
            std::string_view utf8 = utf8_view(text);
            return encoding_data(
                [&](std::vector<Token>& out) { self.encode_spans_sampled(utf8, spans, options, rng, out); });
          },
          nb::arg("text"), nb::arg("spans"), nb::arg("options"), nb::arg("rng"), nb::rv_policy::take_ownership)
      .def(
          "encode_nbest",
          [](const Encoder& self, nb::handle text, nb::bytes policy, size_t k) {
            std::string_view utf8 = utf8_view(text);
            auto pol = policy_from(policy);
            std::vector<std::vector<Token>> paths;
            std::vector<float> scores;
            {
              nb::gil_scoped_release release;
              self.encode_nbest(utf8, pol, k, paths, scores);
            }
            return nbest_list(paths, scores);
          },
          nb::arg("text"), nb::arg("policy"), nb::arg("k"),
          "The k best segmentations of a text that is one piece: [(EncodingData, score)], best first.")
      .def(
          "nbest_span",
          [](const Encoder& self, nb::handle text, Span span, size_t k) {
            std::string_view utf8 = utf8_view(text);
            std::vector<std::vector<Token>> paths;
            std::vector<float> scores;
            {
              nb::gil_scoped_release release;
              self.nbest_span(utf8, span, k, paths, scores);
            }
            return nbest_list(paths, scores);
          },
          nb::arg("text"), nb::arg("span"), nb::arg("k"), "encode_nbest of the one piece text[span] (byte span).")
      .def(
          "decode_bytes",
          [](const Encoder& self, const std::vector<uint32_t>& ids) {
            std::string out;
            self.decode(ids.data(), ids.size(), out);
            return nb::bytes(out.data(), out.size());
          },
          nb::arg("ids"))
      .def(
          "id_bytes",
          [](const Encoder& self, uint32_t id) { return ciyuan_bindings::bytes_or_none(self.id_bytes(id)); },
          nb::arg("id"));
}
