// A static double-array trie (Aoe's double array, built like Darts from a sorted key list)
// over sequences of small integer labels: here, characters mapped to dense codes.
//
// Node s has a child on label c when nodes[base(s) + c].check == s, so one transition is one
// array read and no hashing; the node keeps base, check, the value and a 32-bit filter of its
// children's labels together (16 bytes), so a transition touches one cache line and most
// failing transitions touch none. Labels are characters rather than UTF-8 bytes because a
// transition is a likely cache miss: one per character instead of three for CJK text.
// Building is O(total key length) plus a first-fit search for each sibling set over a bitmap
// of the free cells (64 candidate bases at a time): about 0.1 s for 350k Chinese words. The
// trie is immutable: a changed word list builds a new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ciyuan {

class DoubleArrayTrie {
 public:
  struct Node {
    int32_t base;         // children at base + label; 0 for a leaf
    int32_t check;        // parent index; -1 for a free cell, -2 for the root
    int32_t value;        // id of the key ending here, or -1
    uint32_t child_bits;  // bit (label % 32) of every child: most failed steps stop here
  };

  static constexpr int32_t kRoot = 0;

  // Builds the trie of the keys in `order`. Key k is labels[starts[k]] .. labels[starts[k+1]];
  // `order` lists the keys so that keys with a common prefix are together and a key comes
  // before its extensions (any lexicographic order of the characters does); keys are unique
  // and non-empty; labels are in [1, alphabet); values[k] is stored for key k.
  void build(const std::vector<uint32_t>& labels, const std::vector<size_t>& starts,
             const std::vector<size_t>& order, const std::vector<int32_t>& values, uint32_t alphabet);

  // The child of node s on label c (c < alphabet), or -1. Never reads out of bounds: the array
  // is padded past the largest base by the alphabet size.
  int32_t child(int32_t s, uint32_t c) const {
    // The walk just read node s, so its child bits are in cache; the child's cell usually is
    // not, and most steps of maximum matching fail (at a word's end).
    const Node& n = nodes_[static_cast<size_t>(s)];
    if (!((n.child_bits >> (c & 31)) & 1)) return -1;
    const size_t t = static_cast<size_t>(n.base) + c;
    return nodes_[t].check == s ? static_cast<int32_t>(t) : -1;
  }
  int32_t value(int32_t s) const { return nodes_[static_cast<size_t>(s)].value; }
  // The raw array, for hot loops that keep it in a register (see child_of).
  const Node* data() const { return nodes_.data(); }
  static int32_t child_of(const Node* nodes, int32_t s, uint32_t c) {
    const Node& n = nodes[s];
    if (!((n.child_bits >> (c & 31)) & 1)) return -1;
    const size_t t = static_cast<size_t>(n.base) + c;
    return nodes[t].check == s ? static_cast<int32_t>(t) : -1;
  }

  // Per label c: the base of the root's child on c (its children are at that base plus their
  // label), or 0 when the root has no such child (then base + label is some low cell, never a
  // child of it). One small table read gives the address of a key's second cell, so that cell
  // can be prefetched without first reading the root's child.
  const int32_t* first_bases() const { return first_bases_.data(); }

  size_t node_count() const { return nodes_.size(); }
  size_t memory_bytes() const {
    return nodes_.capacity() * sizeof(Node) + first_bases_.capacity() * sizeof(int32_t);
  }

 private:
  int32_t find_base(const std::vector<uint32_t>& labels);
  void reserve_cells(size_t n);
  void use_cell(size_t t);
  size_t next_free(size_t t, size_t limit = SIZE_MAX) const;
  uint64_t free_window(size_t t) const;
  // A search for a set of several children that needed more than this many steps of 64 bases
  // moves the start of later such searches past the region it crossed.
  static constexpr size_t kMultiSteps = 4;

  std::vector<Node> nodes_;
  std::vector<int32_t> first_bases_;
  std::vector<uint64_t> free_bits_;    // bit t: cell t is free (build only)
  std::vector<uint64_t> free_blocks_;  // bit w: free_bits_[w] != 0
  size_t first_free_ = 1;            // no free cell below this one
  size_t multi_from_ = 1;
  size_t single_from_ = 0;           // no free cell in [alphabet_, single_from_)
  uint32_t alphabet_ = 1;
};

}  // namespace ciyuan
