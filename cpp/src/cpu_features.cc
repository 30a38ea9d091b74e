// Run-time choice of the scanners' SIMD level (see cpu_features.h).
#include "ciyuan/cpu_features.h"

#include <atomic>
#include <cstdlib>

#include "simd_config.h"

namespace ciyuan {
namespace {

SimdLevel detect() {
#if CIYUAN_X86_SIMD
    // __builtin_cpu_supports consults cpuid and, for the AVX families, xgetbv (whether the OS
    // saves the wider registers), so a feature reported here is safe to use.
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
        __builtin_cpu_supports("bmi2"))
        return SimdLevel::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))
        return SimdLevel::kAvx2;
    if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("ssse3")) return SimdLevel::kSse42;
    return SimdLevel::kSse2;
#else
    return SimdLevel::kScalar;
#endif
}

SimdLevel from_environment(SimdLevel best) {
    const char* env = std::getenv("CIYUAN_SIMD");
    SimdLevel asked;
    if (!env || !parse_simd_level(env, &asked)) return best;
    return asked < best ? asked : best;
}

constexpr int kUnset = -1;
std::atomic<int> g_level{kUnset};

}  // namespace

SimdLevel best_simd_level() {
    static const SimdLevel best = detect();
    return best;
}

SimdLevel simd_level() {
    int v = g_level.load(std::memory_order_relaxed);
    if (v == kUnset) {
        v = static_cast<int>(from_environment(best_simd_level()));
        int expected = kUnset;  // a concurrent first use computes the same value
        g_level.compare_exchange_strong(expected, v, std::memory_order_relaxed);
        v = g_level.load(std::memory_order_relaxed);
    }
    return static_cast<SimdLevel>(v);
}

SimdLevel set_simd_level(SimdLevel level) {
    const SimdLevel best = best_simd_level();
    const SimdLevel now = level < best ? level : best;
    g_level.store(static_cast<int>(now), std::memory_order_relaxed);
    return now;
}

namespace {
constexpr std::string_view kNames[] = {"scalar", "sse2", "sse42", "avx2", "avx512"};
}

std::string_view simd_level_name(SimdLevel level) { return kNames[static_cast<int>(level)]; }

bool parse_simd_level(std::string_view name, SimdLevel* out) {
    for (int i = 0; i < 5; ++i) {
        if (kNames[i] == name) {
            *out = static_cast<SimdLevel>(i);
            return true;
        }
    }
    return false;
}

}  // namespace ciyuan
