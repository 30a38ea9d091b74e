// Prefix doubling with radix sorts, and Kasai's LCP (see suffix_array.h).
#include "ciyuan/suffix_array.h"

#include <algorithm>

#include "ciyuan/errors.h"

namespace ciyuan {

std::vector<uint32_t> suffix_array(const std::vector<uint32_t>& text, uint32_t alphabet, uint32_t max_depth) {
  const size_t n = text.size();
  if (n >= 0xFFFFFFFFu) throw Error(ErrorKind::kInvalidInput, "suffix_array: the text is longer than 2^32 - 2 symbols");
  std::vector<uint32_t> sa(n), rank(n), tmp(n), count;
  if (n == 0) return sa;
  // Round 0: counting sort by the first symbol; rank = 1 + number of smaller symbols' classes.
  count.assign(static_cast<size_t>(alphabet) + 1, 0);
  for (uint32_t c : text) {
    if (c >= alphabet) throw Error(ErrorKind::kInvalidInput, "suffix_array: a symbol is not below the alphabet size");
    ++count[c + 1];
  }
  for (size_t c = 1; c < count.size(); ++c) count[c] += count[c - 1];
  for (size_t i = 0; i < n; ++i) sa[count[text[i]]++] = static_cast<uint32_t>(i);
  // rank: classes numbered 1.. in sorted order (0 = "past the end", smaller than every class)
  uint32_t classes = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || text[sa[i]] != text[sa[i - 1]]) ++classes;
    rank[sa[i]] = classes;
  }
  for (size_t k = 1; classes < n && (max_depth == 0 || k < max_depth); k *= 2) {
    // Sort by (rank[i], rank[i + k]) with two stable counting sorts: by the second key, then
    // by the first. Suffixes with i + k >= n have second key 0 and come first, in text order.
    auto second = [&](size_t i) -> uint32_t { return i + k < n ? rank[i + k] : 0; };
    count.assign(static_cast<size_t>(classes) + 2, 0);
    for (size_t i = 0; i < n; ++i) ++count[second(i) + 1];
    for (size_t c = 1; c < count.size(); ++c) count[c] += count[c - 1];
    for (size_t i = 0; i < n; ++i) tmp[count[second(i)]++] = static_cast<uint32_t>(i);
    count.assign(static_cast<size_t>(classes) + 2, 0);
    for (size_t i = 0; i < n; ++i) ++count[rank[i] + 1];
    for (size_t c = 1; c < count.size(); ++c) count[c] += count[c - 1];
    for (size_t j = 0; j < n; ++j) {
      const uint32_t i = tmp[j];
      sa[count[rank[i]]++] = i;
    }
    // New classes: equal when both keys are equal.
    uint32_t next = 0;
    for (size_t j = 0; j < n; ++j) {
      const uint32_t i = sa[j];
      if (j == 0) {
        next = 1;
      } else {
        const uint32_t p = sa[j - 1];
        if (rank[i] != rank[p] || second(i) != second(p)) ++next;
      }
      tmp[i] = next;
    }
    rank.swap(tmp);
    classes = next;
  }
  return sa;
}

std::vector<uint32_t> lcp_array(const std::vector<uint32_t>& text, const std::vector<uint32_t>& sa,
                                uint32_t separator, uint32_t max_depth) {
  const size_t n = text.size();
  std::vector<uint32_t> lcp(n, 0);
  auto common = [&](size_t a, size_t b, size_t h, size_t limit) {
    while (h < limit && a + h < n && b + h < n && text[a + h] == text[b + h] && text[a + h] != separator) ++h;
    return h;
  };
  if (max_depth > 0) {
    for (size_t i = 1; i < n; ++i) lcp[i] = static_cast<uint32_t>(common(sa[i - 1], sa[i], 0, max_depth));
    return lcp;
  }
  // Kasai: walking the suffixes in text order, the LCP with the previous suffix in sa order
  // drops by at most one from one position to the next.
  std::vector<uint32_t> inverse(n);
  for (size_t i = 0; i < n; ++i) inverse[sa[i]] = static_cast<uint32_t>(i);
  size_t h = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t r = inverse[i];
    if (r == 0) {
      h = 0;
      continue;
    }
    h = common(sa[r - 1], i, h, n);
    lcp[r] = static_cast<uint32_t>(h);
    if (h > 0) --h;
  }
  return lcp;
}

}  // namespace ciyuan
