// Batches of str -> lists of ids, with the work spread so that no core waits on the GIL.
//
// Encoding a batch used to be three phases, of which only the middle one ran in parallel:
// every str's UTF-8 form made under the GIL (CPython's encoder, serial: ~11 ms for 5 MB of
// Chinese), the encode on the threads, then every Python list built under the GIL (serial
// again). Here
//   - each text's UTF-8 is made by the thread that encodes it, straight from the str's own
//     storage (1, 2 or 4 bytes a code point; an ASCII str is already UTF-8 and is not copied),
//     without the GIL and without leaving a UTF-8 copy cached inside the str;
//   - the texts are encoded in runs of consecutive texts, claimed in order by the threads;
//   - the calling thread, whenever the next run in order is finished, takes the GIL and turns
//     it into Python lists while the other threads keep encoding; when none is finished it
//     encodes a run itself. So `threads` threads are busy all the time, the caller among them.
// Results do not depend on the thread count: text i is always encoded alone into slot i. An
// error (a lone surrogate, a disallowed special token) is reported for the lowest index it
// happened at, whatever the timing: runs are claimed in order and a started run is finished.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "str_utf8.h"

namespace ciyuan_bindings {

namespace nb = nanobind;

// The texts of a batch, read from the str objects themselves (strong references are held, so
// another Python thread may change the list meanwhile).
class StrBatch {
 public:
  // With the GIL held. TypeError for an item that is not a str.
  explicit StrBatch(nb::handle texts);
  ~StrBatch();  // with the GIL held
  StrBatch(const StrBatch&) = delete;
  StrBatch& operator=(const StrBatch&) = delete;

  size_t size() const { return items_.size(); }
  PyObject* object(size_t i) const { return items_[i].object; }
  // The UTF-8 form of text i, without the GIL: a view of the str's own bytes when it is ASCII,
  // else made in `scratch`. False when the text holds a lone surrogate (it has no UTF-8 form).
  bool utf8(size_t i, Utf8Buffer& scratch, std::string_view& out) const;

 private:
  struct Item {
    PyObject* object;
    StrData data;
  };
  std::vector<Item> items_;
};

// encode(i, utf8, ids) appends the ids of text i to `ids` (the ids of the texts before it in its
// run come first; it may throw, and the error reaches Python).
using EncodeIds = std::function<void(size_t index, std::string_view utf8, std::vector<uint32_t>& ids)>;

// The list [head + ids(text) + tail for each text], encoded on `threads` threads (<= 0: one
// per core) as described at the top of this file. Called with the GIL held; UnicodeEncodeError
// for a text with a lone surrogate, as str.encode() raises it.
nb::list encode_id_lists(const StrBatch& texts, int threads, const EncodeIds& encode,
                         const std::vector<uint32_t>& head, const std::vector<uint32_t>& tail);

}  // namespace ciyuan_bindings
