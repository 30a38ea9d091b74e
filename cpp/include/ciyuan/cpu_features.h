// Which SIMD instruction sets the pre-tokenizer scanners may use, decided once at run time.
//
// The library is compiled for the baseline of its platform (x86-64: SSE2; no -march=native).
// Faster variants of the scanners are compiled for newer instruction sets with per-function
// target attributes and only called when the CPU (and the OS, for the AVX register state)
// supports them. Every level splits text identically; the tests force each one and compare.
//
// Levels, lowest first:
//   scalar  no vector instructions at all (the byte-at-a-time scanners; the only level off x86-64)
//   sse2    64-byte windows classified with SSE2 compares (baseline x86-64)
//   sse42   the same with SSSE3 nibble lookups (CPUs with SSE4.2 and SSSE3)
//   avx2    32 bytes per instruction (AVX2 + BMI1/2)
//   avx512  AVX-512 BW/VL compares straight into mask registers
//
// The environment variable CIYUAN_SIMD (read at first use) caps the level: CIYUAN_SIMD=avx2 on
// an AVX-512 machine runs avx2. Asking for a level the CPU lacks, or an unknown name, gives the
// best level the CPU has (the variable can lower the level, never raise it past the hardware).
#pragma once

#include <string_view>

namespace ciyuan {

enum class SimdLevel : int { kScalar = 0, kSse2 = 1, kSse42 = 2, kAvx2 = 3, kAvx512 = 4 };

// The best level this CPU and this build support.
SimdLevel best_simd_level();
// The level the scanners use now: min(CIYUAN_SIMD, best), or what set_simd_level chose.
SimdLevel simd_level();
// Sets the level (capped at best_simd_level()); returns the level now in effect. For tests and
// benchmarks: not synchronised with scans running on other threads.
SimdLevel set_simd_level(SimdLevel level);

// "scalar", "sse2", "sse42", "avx2", "avx512".
std::string_view simd_level_name(SimdLevel level);
// Parses one of those names; false for anything else.
bool parse_simd_level(std::string_view name, SimdLevel* out);

}  // namespace ciyuan
