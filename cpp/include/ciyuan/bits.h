// The lowest and the highest set bit of a 32-bit word, on every compiler the core builds with.
#pragma once

#include <cstdint>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

namespace ciyuan {

// The index of the lowest set bit of x (x != 0).
inline unsigned lowest_bit(uint32_t x) {
#if defined(_MSC_VER) && !defined(__clang__)
  unsigned long i;
  _BitScanForward(&i, x);
  return static_cast<unsigned>(i);
#else
  return static_cast<unsigned>(__builtin_ctz(x));
#endif
}

// The index of the highest set bit of x (x != 0).
inline unsigned highest_bit(uint32_t x) {
#if defined(_MSC_VER) && !defined(__clang__)
  unsigned long i;
  _BitScanReverse(&i, x);
  return static_cast<unsigned>(i);
#else
  return 31u - static_cast<unsigned>(__builtin_clz(x));
#endif
}

}  // namespace ciyuan
