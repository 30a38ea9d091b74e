// Finds special-token text (e.g. "<|endoftext|>") in ordinary input: leftmost match, longest on
// ties, over a byte trie. Only positions whose byte can start a special token are tried, so text
// without such bytes costs one table lookup per byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ciyuan {

class SpecialMatcher {
 public:
  // `tokens` are (text, index) pairs; `index` is what find() reports.
  explicit SpecialMatcher(const std::vector<std::pair<std::string, uint32_t>>& tokens);

  bool empty() const { return nodes_.size() <= 1; }
  // The first special token at or after `pos`: sets [*start, *end) and its index.
  bool find(std::string_view text, size_t pos, size_t* start, size_t* end, uint32_t* index) const;
  // The longest special token starting exactly at `pos`: its length (and *index), or 0.
  size_t match_at(std::string_view text, size_t pos, uint32_t* index) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, uint32_t>> children;  // byte -> node
    uint32_t index = 0xFFFFFFFFu;                              // token ending here
  };
  bool can_start_[256] = {};
  int only_start_ = -1;  // the first byte of every special token, when they share one
  std::vector<Node> nodes_;
};

}  // namespace ciyuan
