// Batches of str -> lists of ids (see batch_ids.h).
#include "batch_ids.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "ciyuan/parallel.h"
#include "common.h"
#include "encoding_data.h"

namespace ciyuan_bindings {

StrBatch::StrBatch(nb::handle texts) {
  nb::object seq = nb::steal(PySequence_Fast(texts.ptr(), "expected a list of str"));
  if (!seq.is_valid()) throw nb::python_error();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  PyObject** objects = PySequence_Fast_ITEMS(seq.ptr());
  items_.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* t = objects[i];
    if (!PyUnicode_Check(t)) {
      std::string message = "expected str, got " + std::string(nb::type_name(nb::handle(t).type()).c_str());
      throw nb::type_error(message.c_str());
    }
    const StrData data = str_data(t);
    Py_INCREF(t);
    items_.push_back(Item{t, data});
  }
}

StrBatch::~StrBatch() {
  for (const Item& item : items_) Py_DECREF(item.object);
}

bool StrBatch::utf8(size_t i, Utf8Buffer& scratch, std::string_view& out) const {
  return str_utf8(items_[i].data, scratch, out);
}

namespace {

// What the threads of one batch share.
class Pipeline {
 public:
  Pipeline(const StrBatch& texts, const EncodeIds& encode, size_t run)
      : texts_(texts), encode_(encode), run_(run), runs_((texts.size() + run - 1) / run),
        done_(new std::atomic<uint8_t>[runs_]), run_ids_(runs_), ends_(texts.size()) {
    for (size_t r = 0; r < runs_; ++r) done_[r].store(0, std::memory_order_relaxed);
  }

  size_t runs() const { return runs_; }
  bool stopped() const { return stop_.load(std::memory_order_acquire); }
  bool done(size_t r) const { return done_[r].load(std::memory_order_acquire) != 0; }
  // The ids of run r, text after text; text i's end in them (its start: the previous text's end).
  std::vector<uint32_t>& run_ids(size_t r) { return run_ids_[r]; }
  size_t end_of(size_t i) const { return ends_[i]; }
  size_t run_begin(size_t r) const { return r * run_; }
  size_t run_end(size_t r) const { return std::min(texts_.size(), (r + 1) * run_); }

  // Claims and encodes the next run; false when none is left (or an error stopped the batch).
  bool encode_next(Utf8Buffer& scratch) {
    if (stopped()) return false;
    const size_t r = next_.fetch_add(1, std::memory_order_relaxed);
    if (r >= runs_) return false;
    // One vector for the run's texts (each appends its ids): an allocation per run, not per text.
    std::vector<uint32_t>& ids = run_ids_[r];
    for (size_t i = run_begin(r), e = run_end(r); i < e; ++i) {
      std::string_view utf8;
      if (!texts_.utf8(i, scratch, utf8)) {
        fail(i, nullptr, true);
        break;
      }
      try {
        encode_(i, utf8, ids);
        ends_[i] = ids.size();
      } catch (...) {
        fail(i, std::current_exception(), false);
        break;
      }
    }
    // Keep no huge scratch alive after a long text.
    if (scratch.capacity() > (size_t{1} << 22)) scratch.release();
    done_[r].store(1, std::memory_order_release);
    {
      std::lock_guard<std::mutex> lock(mutex_);  // no wake-up lost between the waiter's check and its sleep
    }
    wake_.notify_all();
    return true;
  }

  // Sleeps until run r is done or the batch stopped.
  void wait_for(size_t r) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return done(r) || stopped(); });
  }

  // Records an error of text i (the lowest index wins) and stops handing out runs.
  void fail(size_t i, std::exception_ptr error, bool surrogate) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (i < error_index_) {
        error_index_ = i;
        error_ = std::move(error);
        surrogate_ = surrogate;
      }
    }
    stop_.store(true, std::memory_order_release);
    wake_.notify_all();
  }

  // Stops handing out runs (the caller failed to build a list).
  void stop() {
    stop_.store(true, std::memory_order_release);
    wake_.notify_all();
  }

  // With the GIL held, after every thread has finished: raises the recorded error, if any.
  void raise_error() const {
    if (error_index_ == kNoError) return;
    if (surrogate_) {
      Py_ssize_t size;
      // CPython's own UnicodeEncodeError (with the position of the surrogate).
      if (!PyUnicode_AsUTF8AndSize(texts_.object(error_index_), &size)) throw nb::python_error();
      throw nb::value_error("a text holds a lone surrogate");  // not reached: the encoder agrees with CPython
    }
    std::rethrow_exception(error_);
  }

 private:
  static constexpr size_t kNoError = ~size_t{0};

  const StrBatch& texts_;
  const EncodeIds& encode_;
  const size_t run_, runs_;
  std::unique_ptr<std::atomic<uint8_t>[]> done_;
  std::vector<std::vector<uint32_t>> run_ids_;
  std::vector<size_t> ends_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  size_t error_index_ = kNoError;
  std::exception_ptr error_;
  bool surrogate_ = false;
};

}  // namespace

nb::list encode_id_lists(const StrBatch& texts, int threads, const EncodeIds& encode,
                         const std::vector<uint32_t>& head, const std::vector<uint32_t>& tail) {
  const size_t n = texts.size();
  PyObject* raw = PyList_New(static_cast<Py_ssize_t>(n));
  if (!raw) throw nb::python_error();
  nb::list out = nb::steal<nb::list>(raw);
  if (n == 0) return out;
  const size_t workers = std::min(static_cast<size_t>(ciyuan::resolve_threads(threads)), n);
  // Runs small enough that the caller can turn finished ones into lists while the others
  // encode (dozens per thread), large enough that claiming one is rare next to encoding it.
  // One thread has no one to overlap with: one run, so that building the lists (which touches
  // an int object per distinct id) does not evict the model's tables between runs.
  const size_t run = workers == 1 ? n : std::clamp<size_t>(n / (workers * 32), 1, 64);
  Pipeline pipe(texts, encode, run);
  GcPause pause;  // millions of small lists: no collection passes meanwhile
  std::exception_ptr list_error;  // a failure to build a list (MemoryError), raised after the join

  PyThreadState* saved = PyEval_SaveThread();
  // The helpers encode; this thread encodes too and turns finished runs into lists (with the
  // GIL, taken only for that).
  const auto helper = [&pipe] {
    Utf8Buffer scratch;
    while (pipe.encode_next(scratch)) {
    }
  };
  const auto caller = [&] {
    Utf8Buffer scratch;
    size_t listed = 0;  // runs turned into lists, in order
    while (listed < pipe.runs() && !pipe.stopped()) {
      if (pipe.done(listed)) {
        PyEval_RestoreThread(saved);
        try {
          for (; listed < pipe.runs() && pipe.done(listed) && !pipe.stopped(); ++listed) {
            std::vector<uint32_t>& ids = pipe.run_ids(listed);
            size_t from = 0;
            for (size_t i = pipe.run_begin(listed), e = pipe.run_end(listed); i < e; ++i) {
              const size_t to = pipe.end_of(i);
              PyList_SET_ITEM(raw, static_cast<Py_ssize_t>(i),
                              wrapped_id_list(head, ids.data() + from, to - from, tail).release().ptr());
              from = to;
            }
            std::vector<uint32_t>().swap(ids);  // freed as soon as listed: lower peak memory
          }
        } catch (...) {
          list_error = std::current_exception();
          pipe.stop();
        }
        saved = PyEval_SaveThread();
      } else if (!pipe.encode_next(scratch)) {
        pipe.wait_for(listed);
      }
    }
  };
  ciyuan::run_with_helpers(static_cast<int>(workers) - 1, helper, caller);
  PyEval_RestoreThread(saved);
  if (list_error) std::rethrow_exception(list_error);
  pipe.raise_error();
  return out;
}

}  // namespace ciyuan_bindings
