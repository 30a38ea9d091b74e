#include "block_pool.h"

#include <mutex>
#include <utility>

namespace ciyuan_bindings::block_pool {
namespace {

// A handful of buffers of each kind: one text's worth per thread of a typical machine.
constexpr size_t kMaxBuffers = 4;

struct Pool {
  std::mutex mutex;
  size_t kept = 0;  // bytes held by both lists
  std::vector<std::vector<uint32_t>> ids;
  std::vector<std::pair<std::unique_ptr<char[]>, size_t>> bytes;
};

Pool& pool() {
  // Never destroyed: a numpy array freed at interpreter exit may still give its buffer back.
  static Pool* p = new Pool();
  return *p;
}

}  // namespace

std::vector<uint32_t> take_ids() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.ids.empty()) return {};
  std::vector<uint32_t> v = std::move(p.ids.back());
  p.ids.pop_back();
  p.kept -= v.capacity() * sizeof(uint32_t);
  v.clear();
  return v;
}

void give_ids(std::vector<uint32_t>&& ids) {
  const size_t size = ids.capacity() * sizeof(uint32_t);
  if (size < kMinKept) return;
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.ids.size() >= kMaxBuffers || p.kept + size > kMaxKept) return;  // freed by the caller's vector
  p.kept += size;
  p.ids.push_back(std::move(ids));
}

std::unique_ptr<char[]> take_bytes(size_t bytes, size_t& capacity) {
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (size_t i = 0; i < p.bytes.size(); ++i) {
      if (p.bytes[i].second < bytes) continue;
      std::unique_ptr<char[]> buffer = std::move(p.bytes[i].first);
      capacity = p.bytes[i].second;
      p.kept -= capacity;
      p.bytes.erase(p.bytes.begin() + static_cast<std::ptrdiff_t>(i));
      return buffer;
    }
  }
  capacity = bytes;
  return std::unique_ptr<char[]>(new char[bytes]);
}

void give_bytes(std::unique_ptr<char[]> bytes, size_t capacity) {
  if (!bytes || capacity < kMinKept) return;
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.bytes.size() >= kMaxBuffers || p.kept + capacity > kMaxKept) return;  // freed here
  p.kept += capacity;
  p.bytes.emplace_back(std::move(bytes), capacity);
}

}  // namespace ciyuan_bindings::block_pool
