#include "ciyuan/special.h"

#include <cstring>

namespace ciyuan {

SpecialMatcher::SpecialMatcher(const std::vector<std::pair<std::string, uint32_t>>& tokens) {
  nodes_.emplace_back();
  for (const auto& [text, index] : tokens) {
    if (text.empty()) continue;
    can_start_[static_cast<unsigned char>(text[0])] = true;
    uint32_t node = 0;
    for (unsigned char c : text) {
      uint32_t child = 0xFFFFFFFFu;
      for (const auto& [byte, next] : nodes_[node].children)
        if (byte == c) child = next;
      if (child == 0xFFFFFFFFu) {
        child = static_cast<uint32_t>(nodes_.size());
        nodes_[node].children.emplace_back(c, child);
        nodes_.emplace_back();  // may reallocate: index nodes_ afresh below
      }
      node = child;
    }
    nodes_[node].index = index;
  }
  int starts = 0;
  for (int b = 0; b < 256; ++b)
    if (can_start_[b]) ++starts, only_start_ = b;
  if (starts != 1) only_start_ = -1;
}

bool SpecialMatcher::find(std::string_view text, size_t pos, size_t* start, size_t* end,
                          uint32_t* index) const {
  if (empty()) return false;
  for (size_t i = pos; i < text.size(); ++i) {
    if (only_start_ >= 0) {  // e.g. every OpenAI special token starts with '<': jump with memchr
      const void* hit = std::memchr(text.data() + i, only_start_, text.size() - i);
      if (!hit) return false;
      i = static_cast<const char*>(hit) - text.data();
    } else if (!can_start_[static_cast<unsigned char>(text[i])]) {
      continue;
    }
    if (const size_t n = match_at(text, i, index)) {
      *start = i;
      *end = i + n;
      return true;
    }
  }
  return false;
}

size_t SpecialMatcher::match_at(std::string_view text, size_t pos, uint32_t* index) const {
  uint32_t node = 0, found = 0xFFFFFFFFu;
  size_t found_end = 0;
  for (size_t j = pos; j < text.size(); ++j) {
    unsigned char c = static_cast<unsigned char>(text[j]);
    uint32_t child = 0xFFFFFFFFu;
    for (const auto& [byte, next] : nodes_[node].children)
      if (byte == c) {
        child = next;
        break;
      }
    if (child == 0xFFFFFFFFu) break;
    node = child;
    if (nodes_[node].index != 0xFFFFFFFFu) {
      found = nodes_[node].index;
      found_end = j + 1;
    }
  }
  if (found == 0xFFFFFFFFu) return 0;
  *index = found;
  return found_end - pos;
}

}  // namespace ciyuan
