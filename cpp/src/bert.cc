// The BERT front end (see bert.h): option-specific ASCII tables, the normalizer alone with
// character alignments, and the pre-tokenizer alone.
#include "ciyuan/bert.h"

#include <stdexcept>

namespace ciyuan {

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
    uint32_t n = fold(ci, &outs);
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

void BertFrontEnd::normalize(std::string_view text, std::string& out,
                             std::vector<std::pair<uint32_t, uint32_t>>& char_spans) const {
  out.clear();
  char_spans.clear();
  const unsigned char* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* end = p + text.size();
  uint32_t index = 0;  // character index in the original
  auto put = [&](uint32_t cp) {
    char buf[4];
    out.append(buf, utf8::encode(cp, buf));
    char_spans.emplace_back(index, index + 1);
  };
  for (const unsigned char* q = p; q < end; ++index) {
    uint32_t cp;
    q += utf8::decode(q, end, &cp);
    const bert::CharInfo& ci = bert::info(cp);
    uint8_t f = ci.flags;
    if (options_.clean_text && (f & bert::kRemove)) continue;
    if (options_.clean_text && (f & bert::kCleanSpace)) {
      put(' ');
      continue;
    }
    bool cjk = options_.handle_chinese_chars && (f & bert::kCjk);
    if (cjk) put(' ');
    const uint32_t* outs;
    uint32_t n = fold(ci, &outs);
    if (n == kUnchanged) {
      put(cp);
    } else {
      for (uint32_t k = 0; k < n; ++k) put(outs[k]);
    }
    if (cjk) put(' ');
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
