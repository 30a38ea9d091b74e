// Suffix array and LCP array over a sequence of integer symbols (prefix doubling).
//
// suffix_array: the start positions of all suffixes of `text`, in lexicographic order of the
// suffixes, built by prefix doubling (Manber-Myers): rank the suffixes by their first 1, 2, 4,
// ... symbols, each round a stable two-pass radix sort of (rank of the first half, rank of the
// second half). Cost: O(n) per round and at most log2(n) rounds, O(n log n) in all, and 4
// arrays of n 32-bit words. `max_depth` > 0 stops once the order by the first `max_depth`
// symbols is known (suffixes equal that far stay in text order): what seed extraction needs
// when no piece is longer than max_depth, in log2(max_depth) rounds.
//
// lcp_array: lcp[i] = length of the longest common prefix of suffixes sa[i-1] and sa[i]
// (lcp[0] = 0), where the symbol `separator` never matches, not even itself: a common prefix
// never crosses one. Kasai's algorithm, O(n) for a complete suffix array; with `max_depth` the
// prefixes are compared directly up to max_depth symbols (O(n max_depth)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ciyuan {

// Symbols must be < alphabet. Positions are 32-bit: text.size() < 2^32 - 1.
std::vector<uint32_t> suffix_array(const std::vector<uint32_t>& text, uint32_t alphabet, uint32_t max_depth = 0);

std::vector<uint32_t> lcp_array(const std::vector<uint32_t>& text, const std::vector<uint32_t>& sa,
                                uint32_t separator, uint32_t max_depth = 0);

}  // namespace ciyuan
