// Large buffers kept for reuse between calls: a text's UTF-8 copy and its id vector.
//
// A buffer of megabytes fresh from the allocator is fresh from the kernel (glibc maps blocks
// this large anew and unmaps them on free), and its first write faults in every 4 KB page,
// which the kernel zeroes first: for a 2 MB text about a thousand faults, a tenth of the time
// of encoding it. Buffers given back are kept, at most kMaxKept bytes of them in all (larger
// ones are freed as before), and handed out again, so the pages are already there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ciyuan_bindings::block_pool {

// Buffers smaller than this are cheap to allocate: they are not kept.
constexpr size_t kMinKept = size_t{1} << 16;
// The most bytes kept in all (every buffer that would take the pool past it is freed).
constexpr size_t kMaxKept = size_t{64} << 20;

// An empty vector, with the capacity of a kept one when there is one.
std::vector<uint32_t> take_ids();
// Keeps `ids`' storage for a later take_ids (or frees it). Safe from any thread.
void give_ids(std::vector<uint32_t>&& ids);

// A byte buffer of at least `bytes` (its capacity in `capacity`): a kept one when one is large
// enough, else a new one.
std::unique_ptr<char[]> take_bytes(size_t bytes, size_t& capacity);
void give_bytes(std::unique_ptr<char[]> bytes, size_t capacity);

}  // namespace ciyuan_bindings::block_pool
