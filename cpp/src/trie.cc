// Double-array trie construction (see trie.h for the layout and its cost).
#include "ciyuan/trie.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "ciyuan/errors.h"

namespace ciyuan {

namespace {
constexpr DoubleArrayTrie::Node kFree{0, -1, -1, 0};
}  // namespace

void DoubleArrayTrie::reserve_cells(size_t n) {
  if (n > static_cast<size_t>(INT32_MAX))
    throw Error(ErrorKind::kModel, "dictionary too large for the double-array trie (2^31 cells)");
  const size_t old = nodes_.size();
  if (old >= n) return;
  size_t grown = std::max(n, old + old / 2);
  if (grown > static_cast<size_t>(INT32_MAX)) grown = n;
  nodes_.resize(grown, kFree);
  free_bits_.resize((grown + 63) / 64, 0);
  free_blocks_.resize((free_bits_.size() + 63) / 64, 0);
  for (size_t t = old; t < grown; ++t) {
    free_bits_[t / 64] |= uint64_t{1} << (t % 64);
    free_blocks_[t / 4096] |= uint64_t{1} << ((t / 64) % 64);
  }
}

void DoubleArrayTrie::use_cell(size_t t) {
  uint64_t& w = free_bits_[t / 64];
  w &= ~(uint64_t{1} << (t % 64));
  if (w == 0) free_blocks_[t / 4096] &= ~(uint64_t{1} << ((t / 64) % 64));
}

// The first free cell at or after t (nodes_.size() when there is none). Two bitmap levels:
// cells, and 64-cell words that have a free cell, so a full region is skipped 4096 at a time.
size_t DoubleArrayTrie::next_free(size_t t) const {
  size_t w = t / 64;
  if (w >= free_bits_.size()) return nodes_.size();
  const uint64_t bits = free_bits_[w] & (~uint64_t{0} << (t % 64));
  if (bits) return std::min(nodes_.size(), w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
  ++w;
  size_t b = w / 64;
  if (b >= free_blocks_.size()) return nodes_.size();
  uint64_t blocks = (w % 64) ? free_blocks_[b] & (~uint64_t{0} << (w % 64)) : free_blocks_[b];
  while (blocks == 0) {
    if (++b >= free_blocks_.size()) return nodes_.size();
    blocks = free_blocks_[b];
  }
  w = b * 64 + static_cast<size_t>(__builtin_ctzll(blocks));
  return std::min(nodes_.size(), w * 64 + static_cast<size_t>(__builtin_ctzll(free_bits_[w])));
}

// The smallest base (from a start position) at which every label of a sibling set (sorted
// ascending) lands on a free cell, trying only free cells (a bitmap skips the used ones). A
// single child fits in any free cell, so those fill the holes; sets of several children start
// after the region where such a search last needed many tries (Darts' "next check position").
int32_t DoubleArrayTrie::find_base(const std::vector<uint32_t>& labels) {
  const bool single = labels.size() == 1;
  first_free_ = next_free(first_free_);
  size_t pos = next_free(std::max<size_t>(single ? first_free_ : std::max(first_free_, multi_from_), labels[0] + 1));
  size_t tries = 0;
  for (;; pos = next_free(pos + 1)) {
    if (pos >= nodes_.size()) reserve_cells(pos + alphabet_ + 1);
    const size_t base = pos - labels[0];
    if (base + alphabet_ + 1 > nodes_.size()) reserve_cells(base + alphabet_ + 1);  // rarely: no call
    bool fits = true;
    for (size_t k = 1; k < labels.size(); ++k) {
      if (nodes_[base + labels[k]].check != -1) {
        fits = false;
        break;
      }
    }
    if (fits) {
      if (!single && tries > 16) multi_from_ = pos;
      return static_cast<int32_t>(base);
    }
    ++tries;
  }
}

void DoubleArrayTrie::build(const std::vector<uint32_t>& keys, const std::vector<size_t>& starts,
                            const std::vector<size_t>& order, const std::vector<int32_t>& values, uint32_t alphabet) {
  alphabet_ = std::max<uint32_t>(alphabet, 1);
  nodes_.clear();
  free_bits_.clear();
  free_blocks_.clear();
  first_free_ = multi_from_ = 1;
  // About one cell per key label, plus room past the last base: reserving it up front saves
  // the copies of a growing array.
  nodes_.reserve(keys.size() + keys.size() / 8 + 2 * static_cast<size_t>(alphabet_) + 1024);
  reserve_cells(1024 + alphabet_);
  use_cell(0);
  nodes_[0].check = -2;
  size_t max_base = 0;
  auto key_len = [&](size_t k) { return starts[k + 1] - starts[k]; };
  auto label_at = [&](size_t k, size_t depth) { return keys[starts[k] + depth]; };

  struct Task {
    int32_t node;
    size_t lo, hi, depth;
  };
  // Depth first, smallest label first: with labels by character frequency, the subtrees of
  // common characters (the ones most walks visit) are laid out first, close together. A stack
  // keeps the work list small (a breadth-first queue would hold every node).
  std::vector<Task> stack;
  if (!order.empty()) stack.push_back({kRoot, 0, order.size(), 0});
  std::vector<uint32_t> labels, sorted;
  std::vector<std::pair<size_t, size_t>> ranges;
  while (!stack.empty()) {
    const Task task = stack.back();
    stack.pop_back();
    size_t i = task.lo;
    // The key that ends here (if any) comes first in its range.
    if (key_len(order[i]) == task.depth) {
      nodes_[static_cast<size_t>(task.node)].value = values[order[i]];
      ++i;
    }
    labels.clear();
    ranges.clear();
    while (i < task.hi) {
      const uint32_t c = label_at(order[i], task.depth);
      size_t j = i + 1;
      while (j < task.hi && label_at(order[j], task.depth) == c) ++j;
      labels.push_back(c);
      ranges.emplace_back(i, j);
      i = j;
    }
    if (labels.empty()) continue;
    sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    const int32_t base = find_base(sorted);
    max_base = std::max(max_base, static_cast<size_t>(base));
    nodes_[static_cast<size_t>(task.node)].base = base;
    for (size_t k = 0; k < labels.size(); ++k) {
      const size_t t = static_cast<size_t>(base) + labels[k];
      use_cell(t);
      nodes_[t].check = task.node;
      nodes_[t].value = -1;
      nodes_[static_cast<size_t>(task.node)].child_bits |= uint32_t{1} << (labels[k] & 31);
    }
    for (size_t k = labels.size(); k-- > 0;) {
      stack.push_back({static_cast<int32_t>(static_cast<size_t>(base) + labels[k]), ranges[k].first,
                       ranges[k].second, task.depth + 1});
    }
  }
  size_t used = 1;
  for (size_t t = nodes_.size(); t-- > 0;) {
    if (nodes_[t].check != -1) {
      used = t + 1;
      break;
    }
  }
  nodes_.resize(std::max(used, max_base + 1) + alphabet_, kFree);
  nodes_.shrink_to_fit();
  first_bases_.assign(alphabet_, 0);
  for (uint32_t c = 1; c < alphabet_; ++c) {
    const size_t t = static_cast<size_t>(nodes_[kRoot].base) + c;
    if (nodes_[t].check == kRoot) first_bases_[c] = nodes_[t].base;
  }
  std::vector<uint64_t>().swap(free_bits_);
  std::vector<uint64_t>().swap(free_blocks_);
}

}  // namespace ciyuan
