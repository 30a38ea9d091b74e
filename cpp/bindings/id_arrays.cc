// Counting and array outputs of the Encoder (see id_arrays.h).
#include "id_arrays.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "batch_ids.h"
#include "block_pool.h"
#include "ciyuan/encoder.h"
#include "ciyuan/parallel.h"
#include "ciyuan/utf8.h"
#include "encoding_data.h"
#include "str_utf8.h"

namespace ciyuan_bindings {

namespace {

using ciyuan::Encoder;
using ciyuan::SpecialPolicy;
using ciyuan::TokenSink;

// A one-dimensional buffer that owns `values` (moved, not copied): a nanobind ndarray with no
// framework of its own (nanobind's array-API object), which Python sees as an object with the
// buffer protocol and DLPack.
template <class T>
nb::object owned_array(std::vector<T>&& values) {
  if constexpr (std::is_same_v<T, uint32_t>) {
    // A pooled vector much larger than its ids is given back and the ids copied out: an array
    // the caller keeps must not pin megabytes.
    if (values.capacity() >= block_pool::kMinKept / sizeof(T) && values.size() < values.capacity() / 2) {
      std::vector<T> exact(values.begin(), values.end());
      block_pool::give_ids(std::move(values));
      values = std::move(exact);
    }
  }
  if (values.capacity() == 0) values.reserve(1);  // a non-null pointer even when empty
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept {
    auto* v = static_cast<std::vector<T>*>(p);
    if constexpr (std::is_same_v<T, uint32_t>) block_pool::give_ids(std::move(*v));
    delete v;
  });
  const size_t shape[1] = {heap->size()};
  return nb::cast(nb::ndarray<nb::array_api, T, nb::ndim<1>, nb::c_contig>(heap->data(), 1, shape, owner));
}

// The first failure of a batch, by text index (runs are claimed in order and a started run is
// finished, so the lowest failing index is always found, whatever the timing).
class FirstError {
 public:
  void record(size_t i, std::exception_ptr error, bool surrogate) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (i < index_.load(std::memory_order_relaxed)) {
      index_.store(i, std::memory_order_relaxed);
      error_ = std::move(error);
      surrogate_ = surrogate;
    }
  }
  // No text at or after `i` needs encoding: an earlier one failed.
  bool before(size_t i) const { return index_.load(std::memory_order_relaxed) < i; }
  // With the GIL held: raises the recorded error, if any.
  template <class Batch>
  void raise(const Batch& batch) const {
    const size_t i = index_.load(std::memory_order_relaxed);
    if (i == kNone) return;
    if (surrogate_) raise_no_utf8(batch.object(i));  // CPython's own UnicodeEncodeError
    std::rethrow_exception(error_);
  }

 private:
  static constexpr size_t kNone = ~size_t{0};
  std::mutex mutex_;
  std::atomic<size_t> index_{kNone};
  std::exception_ptr error_;
  bool surrogate_ = false;
};

// Runs encode(r, i, utf8) for every text i of `batch`, in runs of `run` consecutive texts (run
// r holds texts [r * run, (r + 1) * run)), on `threads` threads with the GIL released; then
// raises the error of the lowest failing text.
template <class Batch, class Encode>
void each_text(const Batch& batch, int threads, size_t run, Encode&& encode) {
  const size_t n = batch.size();
  FirstError first;
  {
    nb::gil_scoped_release release;
    ciyuan::parallel_for((n + run - 1) / run, threads, [&](size_t r) {
      Utf8Buffer scratch;
      for (size_t i = r * run, e = std::min(n, i + run); i < e; ++i) {
        if (first.before(i)) return;
        std::string_view utf8;
        if (!batch.utf8(i, scratch, utf8)) {
          first.record(i, nullptr, true);
          return;
        }
        try {
          encode(r, i, utf8);
        } catch (...) {
          first.record(i, std::current_exception(), false);
          return;
        }
      }
    });
  }
  first.raise(batch);
}

// Texts per run: one run on one thread (no bookkeeping), else a dozen runs per thread, so
// that uneven texts still spread.
size_t run_length(size_t n, int threads) {
  const size_t workers = static_cast<size_t>(ciyuan::resolve_threads(threads));
  if (workers <= 1) return std::max<size_t>(n, 1);
  return std::clamp<size_t>(n / (workers * 12), 1, 4096);
}

// One text through the encoder with `sink`, the UTF-8 made without the GIL; UnicodeEncodeError
// (raised by the caller's retry policy) for a lone surrogate.
template <class Sink>
void encode_one(const Encoder& self, nb::handle text, nb::bytes policy, Sink& sink) {
  const StrData data = checked_str_data(text);
  const auto pol = policy_from(policy);
  bool has_utf8 = false;
  {
    nb::gil_scoped_release release;
    Utf8Buffer buffer;
    std::string_view utf8;
    has_utf8 = str_utf8(data, buffer, utf8);
    if (has_utf8) self.encode(utf8, pol, sink);
  }
  if (!has_utf8) raise_no_utf8(text);
}

size_t count_tokens(const Encoder& self, nb::handle text, nb::bytes policy) {
  size_t count = 0;
  TokenSink sink(count);
  encode_one(self, text, policy, sink);
  return count;
}

nb::list count_tokens_batch(const Encoder& self, nb::handle texts, nb::bytes policy, int threads) {
  const StrBatch batch(texts);
  const auto pol = policy_from(policy);
  std::vector<size_t> counts(batch.size(), 0);
  each_text(batch, threads, run_length(batch.size(), threads), [&](size_t, size_t i, std::string_view utf8) {
    TokenSink sink(counts[i]);
    self.encode(utf8, pol, sink);
  });
  nb::list out;
  for (size_t c : counts) out.append(c);
  return out;
}

nb::object encode_ids_array(const Encoder& self, nb::handle text, nb::bytes policy) {
  std::vector<uint32_t> ids = block_pool::take_ids();
  {
    TokenSink sink(ids);
    encode_one(self, text, policy, sink);
  }
  return owned_array(std::move(ids));
}

// Documents given as one UTF-8 buffer and each one's end in it (encode-dataset's line readers
// make them without a str per document): the batch interface each_text reads.
class Utf8Docs {
 public:
  Utf8Docs(nb::bytes data, const std::vector<int64_t>& ends) : data_(data), ends_(ends) {
    int64_t start = 0;
    for (const int64_t end : ends_) {
      if (end < start || end > static_cast<int64_t>(data_.size()))
        throw nb::value_error("the document ends must rise and stay within the data");
      start = end;
    }
    const size_t bad = ciyuan::utf8::validate(data_.c_str(), data_.size());
    if (bad != data_.size())
      throw nb::value_error(("the documents are not valid UTF-8 (at byte " + std::to_string(bad) + ")").c_str());
  }
  size_t size() const { return ends_.size(); }
  bool utf8(size_t i, Utf8Buffer&, std::string_view& out) const {
    const int64_t start = i ? ends_[i - 1] : 0;
    out = std::string_view(data_.c_str() + start, static_cast<size_t>(ends_[i] - start));
    return true;
  }
  nb::handle object(size_t) const { return nb::none(); }  // never asked: utf8() cannot fail

 private:
  nb::bytes data_;
  const std::vector<int64_t>& ends_;
};

// (flat ids, offsets): text i's ids (with `head` before and `tail` after them) are
// flat[offsets[i]:offsets[i + 1]].
template <class Batch>
nb::tuple batch_ids_array(const Encoder& self, const Batch& batch, nb::bytes policy, int threads,
                          const std::vector<uint32_t>& head, const std::vector<uint32_t>& tail) {
  const auto pol = policy_from(policy);
  const size_t n = batch.size();
  const size_t run = run_length(n, threads);
  const size_t runs = (n + run - 1) / run;
  // Each run writes its texts' ids into a vector of its own (one allocation per run), and each
  // text's end in it; the runs are then laid end to end.
  std::vector<std::vector<uint32_t>> run_ids(runs);
  std::vector<int64_t> offsets(n + 1, 0);
  each_text(batch, threads, run, [&](size_t r, size_t i, std::string_view utf8) {
    std::vector<uint32_t>& ids = run_ids[r];
    ids.insert(ids.end(), head.begin(), head.end());
    self.encode_ids(utf8, pol, ids);
    ids.insert(ids.end(), tail.begin(), tail.end());
    offsets[i + 1] = static_cast<int64_t>(ids.size());
  });
  // Offsets so far are ends within each run: add the runs' starts.
  size_t total = 0;
  for (size_t r = 0; r < runs; ++r) {
    for (size_t i = r * run, e = std::min(n, i + run); i < e; ++i) offsets[i + 1] += static_cast<int64_t>(total);
    total += run_ids[r].size();
  }
  std::vector<uint32_t> flat;
  if (runs == 1) {
    flat = std::move(run_ids[0]);  // one thread: the run's vector is the result
  } else {
    nb::gil_scoped_release release;
    flat.resize(total);
    size_t at = 0;
    for (std::vector<uint32_t>& ids : run_ids) {
      if (!ids.empty()) std::memcpy(flat.data() + at, ids.data(), ids.size() * sizeof(uint32_t));
      at += ids.size();
      std::vector<uint32_t>().swap(ids);  // lower peak memory
    }
  }
  return nb::make_tuple(owned_array(std::move(flat)), owned_array(std::move(offsets)));
}

nb::tuple encode_batch_ids_array(const Encoder& self, nb::handle texts, nb::bytes policy, int threads,
                                 const std::vector<uint32_t>& head, const std::vector<uint32_t>& tail) {
  return batch_ids_array(self, StrBatch(texts), policy, threads, head, tail);
}

nb::tuple encode_utf8_batch_ids_array(const Encoder& self, nb::bytes data, const std::vector<int64_t>& ends,
                                      nb::bytes policy, int threads, const std::vector<uint32_t>& head,
                                      const std::vector<uint32_t>& tail) {
  return batch_ids_array(self, Utf8Docs(data, ends), policy, threads, head, tail);
}

}  // namespace

void def_id_outputs(nb::module_& m) {
  nb::object cls = m.attr("Encoder");
  nb::cpp_function_def(&count_tokens, nb::scope(cls), nb::name("count_tokens"), nb::is_method(), nb::arg("text"),
                       nb::arg("policy"),
                       "How many ids encode_ids would give, without storing them.");
  nb::cpp_function_def(&count_tokens_batch, nb::scope(cls), nb::name("count_tokens_batch"), nb::is_method(),
                       nb::arg("texts"), nb::arg("policy"), nb::arg("threads"),
                       "count_tokens of each text, on `threads` threads (<= 0: one per core).");
  nb::cpp_function_def(&encode_ids_array, nb::scope(cls), nb::name("encode_ids_array"), nb::is_method(),
                       nb::arg("text"), nb::arg("policy"),
                       "encode_ids as a one-dimensional uint32 buffer (buffer protocol, DLPack) owning the ids.");
  nb::cpp_function_def(&encode_batch_ids_array, nb::scope(cls), nb::name("encode_batch_ids_array"), nb::is_method(),
                       nb::arg("texts"), nb::arg("policy"), nb::arg("threads"),
                       nb::arg("head") = std::vector<uint32_t>(), nb::arg("tail") = std::vector<uint32_t>(),
                       "(flat uint32 ids, int64 offsets of len(texts) + 1): text i's ids, with `head` and "
                       "`tail` around them, are flat[offsets[i]:offsets[i + 1]].");
  nb::cpp_function_def(&encode_utf8_batch_ids_array, nb::scope(cls), nb::name("encode_utf8_batch_ids_array"),
                       nb::is_method(), nb::arg("data"), nb::arg("ends"), nb::arg("policy"), nb::arg("threads"),
                       nb::arg("head") = std::vector<uint32_t>(), nb::arg("tail") = std::vector<uint32_t>(),
                       "encode_batch_ids_array of documents given as one UTF-8 buffer: document i is "
                       "data[ends[i - 1]:ends[i]] (from 0 for the first); ValueError for invalid UTF-8.");
}

}  // namespace ciyuan_bindings
