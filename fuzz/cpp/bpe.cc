// Fuzz target "bpe": the native BPE encoder over a random byte-level vocabulary, against a plain
// O(n^2) merge loop. The vocabulary is the 256 bytes plus up to 24 substrings of the text, in an
// order shuffled by the input (tiktoken-style token ranks, or a merge list made by cutting each
// longer token where both halves are tokens); the front end is none or one of the scanners.
// Properties: the ids are the plain loop's, they decode to the text, the spans tile the text,
// ids-only encoding gives the same ids, and a run with special tokens allowed does not crash.
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ciyuan/bpe.h"
#include "ciyuan/encoder.h"
#include "ciyuan/errors.h"
#include "ciyuan/pretokenize.h"
#include "fuzz_input.h"

namespace {

// The textbook loop: merge the lowest-ranked adjacent pair (leftmost on ties) until none merges.
std::vector<uint32_t> plain_bpe(const std::string& piece, const std::unordered_map<std::string, uint32_t>& vocab,
                                const std::map<std::pair<uint32_t, uint32_t>, uint32_t>* merge_rank,
                                bool ignore_merges) {
  if (ignore_merges) {
    auto it = vocab.find(piece);
    if (it != vocab.end()) return {it->second};
  }
  std::vector<std::string> syms;
  for (char c : piece) syms.emplace_back(1, c);
  for (;;) {
    size_t best = syms.size();
    uint32_t best_rank = UINT32_MAX;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      uint32_t rank = UINT32_MAX;
      if (merge_rank) {
        auto it = merge_rank->find({vocab.at(syms[i]), vocab.at(syms[i + 1])});
        if (it != merge_rank->end()) rank = it->second;
      } else {
        auto it = vocab.find(syms[i] + syms[i + 1]);
        if (it != vocab.end()) rank = it->second;
      }
      if (rank < best_rank) best_rank = rank, best = i;
    }
    if (best == syms.size()) break;
    syms[best] += syms[best + 1];
    syms.erase(syms.begin() + static_cast<long>(best) + 1);
  }
  std::vector<uint32_t> ids;
  for (const auto& s : syms) ids.push_back(vocab.at(s));
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t o = in.byte();
  const uint8_t seed = in.byte();
  const size_t extra = in.byte() % 25;
  std::vector<std::pair<uint8_t, uint8_t>> cuts;  // (start, length) of each extra token in the text
  for (size_t i = 0; i < extra; ++i) cuts.emplace_back(in.byte(), in.byte());
  const std::string text = fuzz::valid_utf8(in.rest());

  // The vocabulary: every byte, then substrings of the text, shuffled into ids.
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  for (auto [s, n] : cuts) {
    if (text.empty()) break;
    const size_t start = s % text.size();
    const size_t len = 2 + n % 9;
    std::string t = text.substr(start, len);
    if (t.size() >= 2 && std::find(tokens.begin(), tokens.end(), t) == tokens.end()) tokens.push_back(std::move(t));
  }
  std::mt19937 rng(seed);
  if (o & 1) std::shuffle(tokens.begin(), tokens.end(), rng);
  std::unordered_map<std::string, uint32_t> vocab;
  for (uint32_t id = 0; id < tokens.size(); ++id) vocab[tokens[id]] = id;

  ciyuan::BpeConfig config;
  config.byte_level = true;
  config.rank_by_token = o & 2;
  config.ignore_merges = o & 4;
  config.cache_capacity = (o & 8) ? 0 : 64;
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> merge_rank;
  if (!config.rank_by_token) {
    for (const std::string& t : tokens) {
      if (t.size() < 2) continue;
      const size_t cut = 1 + rng() % (t.size() - 1);
      auto l = vocab.find(t.substr(0, cut)), r = vocab.find(t.substr(cut));
      if (l == vocab.end() || r == vocab.end()) continue;
      merges.emplace_back(l->second, r->second);
      merge_rank.emplace(std::make_pair(l->second, r->second), static_cast<uint32_t>(merges.size() - 1));
    }
  }
  auto model = std::make_shared<const ciyuan::BpeModel>(tokens, std::vector<uint8_t>(tokens.size(), 1), merges,
                                                        config);

  static const ciyuan::PreTokPattern kPatterns[] = {
      ciyuan::PreTokPattern::GPT2,       ciyuan::PreTokPattern::CL100K, ciyuan::PreTokPattern::O200K,
      ciyuan::PreTokPattern::WORD_PUNCT, ciyuan::PreTokPattern::WHITESPACE, ciyuan::PreTokPattern::LLAMA3,
      ciyuan::PreTokPattern::QWEN2};
  const bool scanner = o & 16;
  const ciyuan::PreTokPattern pattern = kPatterns[(o >> 5) % 7];
  const ciyuan::FrontEnd front = scanner ? ciyuan::FrontEnd::scanner(pattern) : ciyuan::FrontEnd::none();

  // Two special tokens: substrings of the text (so they are found), with ids past the vocabulary.
  std::vector<ciyuan::SpecialToken> specials;
  if (!text.empty()) {
    specials.push_back({fuzz::valid_utf8(text.substr(seed % text.size(), 1 + seed % 5)), uint32_t(tokens.size())});
    specials.push_back({"<|end|>", uint32_t(tokens.size() + 1)});
    if (specials[0].text.empty() || specials[0].text == specials[1].text) specials.erase(specials.begin());
  }
  const ciyuan::Encoder encoder(model, front, specials);

  // The plain loop's ids, piece by piece.
  std::vector<std::pair<uint32_t, uint32_t>> pieces;
  if (scanner) {
    ciyuan::split_pieces(pattern, text, pieces);
  } else if (!text.empty()) {
    pieces.emplace_back(0, static_cast<uint32_t>(text.size()));
  }
  std::vector<uint32_t> expected;
  for (auto [s, e] : pieces) {
    auto ids = plain_bpe(text.substr(s, e - s), vocab, config.rank_by_token ? nullptr : &merge_rank,
                         config.ignore_merges);
    expected.insert(expected.end(), ids.begin(), ids.end());
  }

  const std::vector<ciyuan::SpecialPolicy> ordinary;  // every special token is ordinary text
  std::vector<ciyuan::Token> out;
  encoder.encode(text, ordinary, out);
  std::vector<uint32_t> got;
  for (const auto& t : out) got.push_back(t.id);
  FUZZ_CHECK(got == expected);
  std::vector<uint32_t> ids_only;
  encoder.encode_ids(text, ordinary, ids_only);
  FUZZ_CHECK(ids_only == expected);
  std::string decoded;
  encoder.decode(got.data(), got.size(), decoded);
  if (!(scanner && (pattern == ciyuan::PreTokPattern::WORD_PUNCT || pattern == ciyuan::PreTokPattern::WHITESPACE))) {
    FUZZ_CHECK(decoded == text);  // the scanners that skip whitespace drop it
    size_t prev = 0;
    for (const auto& t : out) {
      FUZZ_CHECK(t.start == prev && t.end > t.start);
      prev = t.end;
    }
    FUZZ_CHECK(prev == text.size());
  }

  // Special tokens allowed: cut at them, no crash; disallowed: the error, never a crash.
  out.clear();
  encoder.encode(text, std::vector<ciyuan::SpecialPolicy>(specials.size(), ciyuan::SpecialPolicy::kAllowed), out);
  for (const auto& t : out) FUZZ_CHECK(t.end <= text.size());
  try {
    encoder.encode(text, std::vector<ciyuan::SpecialPolicy>(specials.size(), ciyuan::SpecialPolicy::kDisallowed), out);
  } catch (const ciyuan::Error&) {
  }
  // Ids past the vocabulary decode to an error, not a read out of bounds.
  const uint32_t odd[] = {uint32_t(tokens.size() + 2), 0xFFFFFFFFu, 0};
  try {
    encoder.decode(odd, 3, decoded);
  } catch (const ciyuan::Error&) {
  }
  return 0;
}
