// Huge pages for big memory: an allocator for the lookup tables (vocabulary slots, the per-thread
// caches), which on Linux gives an array of 1 MB or more its own 2 MB-aligned mapping, advised to
// be backed by huge pages; and advise() for a large buffer that is about to be filled.
//
// Why: encoding looks up a random slot of a 2-8 MB table for nearly every piece. With 4 KB
// pages each table spans 500-2,000 pages, more than the first-level TLB holds, and in a virtual
// machine a TLB miss walks two page tables. With 2 MB pages a table is a few TLB entries. On the
// machine of docs/benchmarks.md (transparent huge pages in "madvise" mode, the default of most
// distributions) this made English count_tokens about 5% faster, and the per-thread pair cache
// and the character table (1 and 2.3 MB) on huge pages 3-6% more on multilingual and Chinese.
//
// The advice must come before the memory is first touched, so it is given here and not to a
// finished vector. Where huge pages are off or unavailable the mapping is plain memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ciyuan {

namespace huge_pages {

constexpr size_t kPage = size_t{2} << 20;  // x86-64 and arm64 (with 4 KB base pages)

// Arrays at least this big are mapped on their own, in whole huge pages: at most half of the
// memory mapped is left unused (smaller arrays would waste more).
constexpr size_t kThreshold = kPage / 2;

inline size_t mapped_size(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// Asks the kernel to back the whole 2 MB pages inside a large buffer that is not written yet (a
// list of millions of items, a long result) with huge pages: filling it then takes a few dozen
// page faults instead of one per 4 KB, which is otherwise a tenth of the time of `lcut` on a long
// text. Advice only: nothing changes where transparent huge pages are off or unsupported.
inline void advise(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < 4 * kPage) return;  // not worth a system call
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (a < b) madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

// Under AddressSanitizer the tables stay on its heap, where it checks every access's bounds.
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(__SANITIZE_ADDRESS__)
#define CIYUAN_HUGE_PAGES 1
#endif

// `bytes` of memory aligned to `align` (at most a page); throws std::bad_alloc.
inline void* allocate(size_t bytes, size_t align) {
#if defined(CIYUAN_HUGE_PAGES)
  if (bytes >= kThreshold) {
    const size_t size = mapped_size(bytes);
    // Map a huge page more than needed and cut the ends off, so that the start is aligned.
    void* raw = mmap(nullptr, size + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    char* start = static_cast<char*>(raw);
    char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(start) + kPage - 1) & ~(kPage - 1));
    if (aligned > start) munmap(start, static_cast<size_t>(aligned - start));
    char* end = start + size + kPage;
    if (end > aligned + size) munmap(aligned + size, static_cast<size_t>(end - (aligned + size)));
    madvise(aligned, size, MADV_HUGEPAGE);  // only advice: ignored where unsupported
    return aligned;
  }
#endif
  return ::operator new(bytes, std::align_val_t(align));
}

inline void deallocate(void* p, size_t bytes, size_t align) noexcept {
#if defined(CIYUAN_HUGE_PAGES)
  if (bytes >= kThreshold) {
    munmap(p, mapped_size(bytes));
    return;
  }
#endif
  ::operator delete(p, std::align_val_t(align));
}

}  // namespace huge_pages

// std::allocator's drop-in for the tables above: std::vector<Slot, HugePageAllocator<Slot>>.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(huge_pages::allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { huge_pages::deallocate(p, n * sizeof(T), alignof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const noexcept {
    return false;
  }
};

template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace ciyuan
