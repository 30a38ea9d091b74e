// Internal: whether this build compiles the x86-64 SIMD scanner variants (GCC or Clang on
// x86-64, where per-function target attributes and __builtin_cpu_supports exist).
#pragma once

#if (defined(__x86_64__) || defined(__amd64__)) && (defined(__GNUC__) || defined(__clang__))
#define CIYUAN_X86_SIMD 1
#else
#define CIYUAN_X86_SIMD 0
#endif
