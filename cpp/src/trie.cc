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
  // One spare word, so that free_window() can always read the word after a cell's.
  free_bits_.resize((grown + 63) / 64 + 1, 0);
  free_blocks_.resize((free_bits_.size() + 63) / 64, 0);
  size_t t = old;
  for (; t < grown && t % 64 != 0; ++t) free_bits_[t / 64] |= uint64_t{1} << (t % 64);
  for (; t + 64 <= grown; t += 64) free_bits_[t / 64] = ~uint64_t{0};
  for (; t < grown; ++t) free_bits_[t / 64] |= uint64_t{1} << (t % 64);
  for (size_t w = old / 64; w < (grown + 63) / 64; ++w) free_blocks_[w / 64] |= uint64_t{1} << (w % 64);
}

// Bit k: cell t + k is free (cells past the array read as used).
uint64_t DoubleArrayTrie::free_window(size_t t) const {
  const size_t w = t / 64, r = t % 64;
  if (w + 1 >= free_bits_.size()) return 0;
  return r == 0 ? free_bits_[w] : (free_bits_[w] >> r) | (free_bits_[w + 1] << (64 - r));
}

void DoubleArrayTrie::use_cell(size_t t) {
  uint64_t& w = free_bits_[t / 64];
  w &= ~(uint64_t{1} << (t % 64));
  if (w == 0) free_blocks_[t / 4096] &= ~(uint64_t{1} << ((t / 64) % 64));
}

// The first free cell at or after t (nodes_.size() when there is none), or `limit` when that
// comes first (the search stops there). Two bitmap levels: cells, and 64-cell words that have a
// free cell, so a full region is skipped 4096 at a time.
size_t DoubleArrayTrie::next_free(size_t t, size_t limit) const {
  const size_t none = std::min(nodes_.size(), limit);
  size_t w = t / 64;
  if (w >= free_bits_.size()) return none;
  const uint64_t bits = free_bits_[w] & (~uint64_t{0} << (t % 64));
  if (bits) return std::min(none, w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
  ++w;
  size_t b = w / 64;
  if (b >= free_blocks_.size()) return none;
  uint64_t blocks = (w % 64) ? free_blocks_[b] & (~uint64_t{0} << (w % 64)) : free_blocks_[b];
  while (blocks == 0) {
    if (++b >= free_blocks_.size() || b * 4096 >= limit) return none;
    blocks = free_blocks_[b];
  }
  w = b * 64 + static_cast<size_t>(__builtin_ctzll(blocks));
  return std::min(none, w * 64 + static_cast<size_t>(__builtin_ctzll(free_bits_[w])));
}

// The smallest base (from a start position) at which every label of a sibling set (sorted
// ascending) lands on a free cell. A single child fits in any free cell, so those fill the
// holes, found through the bitmap of free cells. A set of several children tests 64 bases at
// once: the AND of the free-cell windows at base + label over its labels has a bit for every
// base that fits. Such sets start after the region where a search last needed many steps
// (Darts' "next check position"), so a large set does not rescan the full front each time.
int32_t DoubleArrayTrie::find_base(const std::vector<uint32_t>& labels) {
  first_free_ = next_free(first_free_);
  if (labels.size() == 1) {
    // A free cell below the alphabet's size takes only smaller labels, so some stay free all
    // along and first_free_ stays below them; a search from there crossed every cell used
    // since (a long key, a chain of single children, made the build quadratic). Any free cell
    // from alphabet_ on takes any label: those searches start at single_from_, the first free
    // one there when last looked. Same cell as a search from `start`, without the crossing.
    const size_t start = std::max<size_t>(first_free_, labels[0] + 1);
    const size_t from = std::max<size_t>(single_from_, alphabet_);
    size_t pos;
    if (start > from) {
      pos = next_free(start);
    } else if (start >= alphabet_ || (pos = next_free(start, alphabet_)) >= alphabet_) {
      pos = single_from_ = next_free(from);
    }
    if (pos + alphabet_ + 1 > nodes_.size()) reserve_cells(pos + alphabet_ + 1);
    return static_cast<int32_t>(pos - labels[0]);
  }
  size_t base = std::max<size_t>(std::max(first_free_, multi_from_), labels[0] + 1) - labels[0];
  for (size_t steps = 0;; base += 64, ++steps) {
    if (base + labels.back() + 128 > nodes_.size()) reserve_cells(base + labels.back() + 128 + alphabet_);
    uint64_t fits = ~uint64_t{0};
    for (size_t k = 0; k < labels.size() && fits; ++k) fits &= free_window(base + labels[k]);
    if (fits) {
      const size_t found = base + static_cast<size_t>(__builtin_ctzll(fits));
      if (steps > kMultiSteps) multi_from_ = found + labels[0];
      if (found + alphabet_ + 1 > nodes_.size()) reserve_cells(found + alphabet_ + 1);
      return static_cast<int32_t>(found);
    }
  }
}

void DoubleArrayTrie::build(const std::vector<uint32_t>& keys, const std::vector<size_t>& starts,
                            const std::vector<size_t>& order, const std::vector<int32_t>& values, uint32_t alphabet) {
  alphabet_ = std::max<uint32_t>(alphabet, 1);
  nodes_.clear();
  free_bits_.clear();
  free_blocks_.clear();
  first_free_ = multi_from_ = 1;
  single_from_ = 0;
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
