// The front end: how text (between special tokens) is cut into pieces before a model sees them.
// One typed description serves every native consumer of pieces - the Encoder in front of a
// model, and the WordCounter in front of a trainer - so the two always cut text alike. Python
// decides it once (ciyuan/front_end.py) from the tokenizer's normalizer and pre-tokenizer.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "ciyuan/bert.h"
#include "ciyuan/pretokenize.h"
#include "ciyuan/spm_normalizer.h"

namespace ciyuan {

// How an ordinary segment of text is cut into pieces.
enum class FrontEndKind : uint8_t {
  kNone = 0,     // the segment is one piece
  kPattern = 1,  // a pre-tokenizer scanner (PreTokPattern)
  kBert = 2,     // Hugging Face's BertNormalizer + BertPreTokenizer (BertOptions)
  kSentencePiece = 3,  // SentencePiece's normalizer; the normalized segment is one piece
};

struct FrontEnd {
  FrontEndKind kind = FrontEndKind::kNone;
  PreTokPattern pattern = PreTokPattern::GPT2;  // kPattern only
  BertOptions bert;                              // kBert only
  std::shared_ptr<const SpmNormalizer> spm;      // kSentencePiece only (immutable, shared)

  static FrontEnd none() { return FrontEnd{}; }
  static FrontEnd scanner(PreTokPattern p) { return FrontEnd{FrontEndKind::kPattern, p, BertOptions{}, nullptr}; }
  static FrontEnd bert_split(BertOptions o) { return FrontEnd{FrontEndKind::kBert, PreTokPattern::GPT2, o, nullptr}; }
  // Validates the options (Error(kModel) for a corrupt charsmap).
  static FrontEnd sentencepiece(SpmNormalizerOptions o) {
    return FrontEnd{FrontEndKind::kSentencePiece, PreTokPattern::GPT2, BertOptions{},
                    std::make_shared<const SpmNormalizer>(std::move(o))};
  }
};

}  // namespace ciyuan
