// The BERT front end (see bert.h): option-specific ASCII tables, the normalizer alone with
// character alignments, and the pre-tokenizer alone.
#include "ciyuan/bert.h"

#include <algorithm>
#include <stdexcept>

namespace ciyuan {

// Not inlined: the hot loop then holds a plain reference instead of asking for the thread-local
// address at every use.
__attribute__((noinline)) BertScratch& thread_bert_scratch() {
  static thread_local BertScratch scratch;
  return scratch;
}

BertFrontEnd::BertFrontEnd(BertOptions options) : options_(options) {
  if (options_.strip_accents) {
    fold_mode_ = options_.lowercase ? bert::kFoldBoth : bert::kFoldStrip;
  } else {
    fold_mode_ = options_.lowercase ? bert::kFoldLower : bert::kFoldNone;
  }
  for (uint32_t b = 0; b < 128; ++b) {
    const bert::CharInfo& ci = bert::info(b);
    uint8_t f = ci.flags;
    char out = static_cast<char>(b);
    const uint32_t* outs;
    uint32_t buf[3];
    uint32_t n = fold(ci, b, buf, &outs);
    if (n != kUnchanged && (n != 1 || outs[0] >= 128))
      throw std::logic_error("BERT tables: an ASCII character folds to non-ASCII");
    if (n == 1) out = static_cast<char>(outs[0]);
    ascii_out_[b] = out;
    uint8_t of = bert::info(static_cast<unsigned char>(out)).flags;
    if (options_.clean_text && (f & bert::kRemove)) {
      ascii_action_[b] = kDrop;
    } else if ((options_.clean_text && (f & bert::kCleanSpace)) || (of & bert::kSpace)) {
      ascii_action_[b] = kSeparate;
    } else if (of & bert::kPunct) {
      ascii_action_[b] = kIsolate;
    } else {
      ascii_action_[b] = kKeep;
    }
  }
}

const uint32_t* bert::decomposition(uint32_t cp) {
  const DecompEntry* lo = kDecomp;
  const DecompEntry* hi = kDecomp + kDecompCount;
  const DecompEntry* it = std::lower_bound(lo, hi, cp, [](const DecompEntry& e, uint32_t c) { return e.cp < c; });
  if (it == hi || it->cp != cp) return nullptr;
  return &kDecompPool[it->offset];
}

void BertFrontEnd::normalized_chars(std::string_view text, size_t start, size_t end,
                                    std::vector<NormChar>& out) const {
  // Hugging Face's order: clean_text, CJK padding, NFD, canonical reordering, dropping Mn,
  // lowercase. NFD turns each character into parts, the first one "replacing" the character
  // and the others "inserted" after it; reordering a run of marks moves the parts together
  // with that role, and the spans are handed out afterwards in order, as Hugging Face's
  // alignments are: a replacing part takes the next character's span, an inserted part the
  // span of the character taken last.
  struct Item {
    uint32_t cp;
    uint8_t rank;   // combining class rank (0: a starter)
    bool inserted;  // not the first part of its character's NFD
  };
  std::vector<Item> items;
  std::vector<std::pair<uint32_t, uint32_t>> spans;  // per character after clean_text / CJK padding
  const unsigned char* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* pend = p + end;
  const bool strip = options_.strip_accents;
  bool reorder = false;
  for (const unsigned char* q = p + start; q < pend;) {
    const bert::SourceChar c = bert::next_char(q, p, pend);
    const uint32_t cp = c.cp, os = c.start, oe = c.end;
    const uint8_t f = c.info->flags;
    if (options_.clean_text && (f & bert::kRemove)) continue;
    if (options_.clean_text && (f & bert::kCleanSpace)) {
      items.push_back(Item{' ', 0, false});
      spans.emplace_back(os, oe);
      continue;
    }
    bool cjk = options_.handle_chinese_chars && (f & bert::kCjk);
    if (cjk) {
      items.push_back(Item{' ', 0, false});
      spans.emplace_back(os, oe);
    }
    const uint32_t* parts = strip && (f & bert::kCcc) ? bert::decomposition(cp) : nullptr;
    if (parts) {
      for (uint32_t k = 0; k < parts[0]; ++k)
        items.push_back(Item{parts[1 + 2 * k], static_cast<uint8_t>(parts[2 + 2 * k]), k > 0});
      reorder = true;
    } else {
      items.push_back(Item{cp, 0, false});
    }
    spans.emplace_back(os, oe);
    if (cjk) {
      items.push_back(Item{' ', 0, false});
      spans.emplace_back(os, oe);
    }
  }
  if (reorder) {
    for (size_t i = 0; i < items.size();) {
      if (!items[i].rank) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < items.size() && items[j].rank) ++j;
      std::stable_sort(items.begin() + i, items.begin() + j,
                       [](const Item& a, const Item& b) { return a.rank < b.rank; });
      i = j;
    }
  }
  size_t taken = 0;
  for (const Item& it : items) {
    std::pair<uint32_t, uint32_t> span;
    if (!it.inserted) {
      span = taken < spans.size() ? spans[taken] : std::make_pair(static_cast<uint32_t>(end), static_cast<uint32_t>(end));
      ++taken;
    } else {
      span = taken > 0 ? spans[std::min(taken, spans.size()) - 1] : std::make_pair(static_cast<uint32_t>(start), static_cast<uint32_t>(start));
    }
    const uint32_t* outs;
    uint32_t buf[3];
    uint32_t n = fold(bert::info(it.cp), it.cp, buf, &outs);
    if (n == kUnchanged) {
      out.push_back(NormChar{it.cp, span.first, span.second});
    } else {
      for (uint32_t k = 0; k < n; ++k) out.push_back(NormChar{outs[k], span.first, span.second});
    }
  }
}

void BertFrontEnd::normalize(std::string_view text, std::string& out,
                             std::vector<std::pair<uint32_t, uint32_t>>& char_spans) const {
  out.clear();
  char_spans.clear();
  std::vector<NormChar> chars;
  normalized_chars(text, 0, text.size(), chars);
  // Byte offsets of the original -> character indices.
  std::vector<uint32_t> char_at;
  utf8::char_index_of_bytes(text.data(), text.size(), char_at);
  for (const NormChar& nc : chars) {
    utf8::append(nc.cp, out);
    char_spans.push_back(utf8::char_span(char_at, nc.start, nc.end));
  }
}

void bert_split(std::string_view text, std::vector<std::pair<uint32_t, uint32_t>>& out) {
  out.clear();
  const unsigned char* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* end = p + text.size();
  size_t word = 0;
  bool in_word = false;
  for (const unsigned char* q = p; q < end;) {
    uint32_t cp;
    size_t at = static_cast<size_t>(q - p);
    size_t len = utf8::decode(q, end, &cp);
    q += len;
    uint8_t f = bert::info(cp).flags;
    if (f & (bert::kSpace | bert::kPunct)) {
      if (in_word) out.emplace_back(static_cast<uint32_t>(word), static_cast<uint32_t>(at));
      in_word = false;
      if (f & bert::kPunct) out.emplace_back(static_cast<uint32_t>(at), static_cast<uint32_t>(at + len));
      continue;
    }
    if (!in_word) {
      word = at;
      in_word = true;
    }
  }
  if (in_word) out.emplace_back(static_cast<uint32_t>(word), static_cast<uint32_t>(text.size()));
}

}  // namespace ciyuan
