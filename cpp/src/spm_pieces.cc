// The typed piece table of the SentencePiece models (see spm_pieces.h).
#include "ciyuan/spm_pieces.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <numeric>
#include <type_traits>

#include "ciyuan/errors.h"
#include "ciyuan/utf8.h"

namespace ciyuan {

namespace {

constexpr char kSpace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's whitespace mark

std::string byte_piece_name(unsigned b) {
  char name[8];
  std::snprintf(name, sizeof name, "<0x%02X>", b);
  return name;
}

// A double-array trie over the pieces `ids` (values: their ids), each a sequence of labels
// (`labels_of(piece, out)` appends them; in an order that sorts like the pieces' bytes).
template <class LabelsOf>
bool build_trie(const std::vector<std::string>& pieces, std::vector<uint32_t> ids, uint32_t alphabet,
                LabelsOf&& labels_of, DoubleArrayTrie& trie) {
  if (ids.empty()) return false;
  std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) { return pieces[a] < pieces[b]; });
  std::vector<uint32_t> labels;
  std::vector<size_t> starts;
  std::vector<int32_t> values;
  for (uint32_t i : ids) {
    starts.push_back(labels.size());
    labels_of(pieces[i], labels);
    values.push_back(static_cast<int32_t>(i));
  }
  starts.push_back(labels.size());
  std::vector<size_t> order(ids.size());
  std::iota(order.begin(), order.end(), size_t{0});
  trie.build(labels, starts, order, values, alphabet);
  return true;
}

void byte_labels(const std::string& piece, std::vector<uint32_t>& out) {
  for (unsigned char c : piece) out.push_back(static_cast<uint32_t>(c) + 1);
}

std::string shown(const std::string& piece) { return "'" + piece + "'"; }

}  // namespace

SpmPieces::SpmPieces(std::vector<std::string> pieces, std::vector<float> scores, std::vector<PieceType> types,
                     SpmModelConfig config)
    : pieces_(std::move(pieces)), scores_(std::move(scores)), types_(std::move(types)) {
  const size_t n = pieces_.size();
  if (n == 0) throw Error(ErrorKind::kModel, "the model has no pieces");
  if (n >= 0x7FFFFFFFu) throw Error(ErrorKind::kModel, "too many pieces");
  if (scores_.size() != n || types_.size() != n)
    throw Error(ErrorKind::kModel, "pieces, scores and types differ in length (" + std::to_string(n) + ", " +
                                       std::to_string(scores_.size()) + ", " + std::to_string(types_.size()) + ")");
  unk_id_ = config.unk_id;
  byte_fallback_ = config.byte_fallback;
  byte_run_spans_ = config.byte_run_spans;
  if (unk_id_ >= static_cast<int64_t>(n) || unk_id_ < -1)
    throw Error(ErrorKind::kModel, "the unknown piece's id " + std::to_string(unk_id_) + " is outside the pieces (0.." +
                                       std::to_string(n - 1) + ")");
  min_score_ = FLT_MAX;
  max_score_ = FLT_MIN;
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), kNone);
  bytes_.resize(n);
  matchable_.reserve(n);
  all_.reserve(n);
  std::vector<uint32_t> matchable, user;
  bool space_inside_first = false, space_inside_last = false;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string& p = pieces_[i];
    const PieceType t = types_[i];
    if (p.empty()) throw Error(ErrorKind::kModel, "piece " + std::to_string(i) + " is empty");
    if (utf8::validate(p.data(), p.size()) != p.size())
      throw Error(ErrorKind::kModel, "piece " + std::to_string(i) + " is not valid UTF-8");
    if (static_cast<uint8_t>(t) < 1 || static_cast<uint8_t>(t) > 6)
      throw Error(ErrorKind::kModel, "piece " + std::to_string(i) + " " + shown(p) + " has an unknown type " +
                                         std::to_string(static_cast<int>(t)) + " (1..6)");
    if (!all_.insert(p, i))
      throw Error(ErrorKind::kModel, "the piece " + shown(p) + " has two ids: " + std::to_string(all_.find(p)) +
                                         " and " + std::to_string(i) + "; each piece must occur once");
    switch (t) {
      case PieceType::kNormal:
        min_score_ = std::min(min_score_, scores_[i]);
        max_score_ = std::max(max_score_, scores_[i]);
        [[fallthrough]];
      case PieceType::kUserDefined:
      case PieceType::kUnused:
        matchable_.insert(p, i);
        matchable.push_back(i);
        if (t == PieceType::kUserDefined) user.push_back(i);
        bytes_[i] = p;
        // A piece holding "x▁" (x not ▁) could span a break before a word; "▁x" one after a word.
        for (size_t at = p.find(kSpace); at != std::string::npos; at = p.find(kSpace, at + 1)) {
          const bool space_before = at >= 3 && p.compare(at - 3, 3, kSpace) == 0;
          const bool space_after = at + 6 <= p.size() && p.compare(at + 3, 3, kSpace) == 0;
          if (at != 0 && !space_before) space_inside_first = true;
          if (at + 3 != p.size() && !space_after) space_inside_last = true;
        }
        break;
      case PieceType::kUnknown:
        if (unk_id_ >= 0 && unk_id_ != static_cast<int64_t>(i))
          throw Error(ErrorKind::kModel, "piece " + std::to_string(i) + " " + shown(p) +
                                             " is typed UNKNOWN but the unknown piece is id " + std::to_string(unk_id_) +
                                             "; a model has one unknown piece");
        unk_id_ = i;
        bytes_[i] = p;
        break;
      case PieceType::kControl:
        break;  // decodes to nothing
      case PieceType::kByte: {
        unsigned b = 0;
        const bool ok = p.size() == 6 && p.compare(0, 3, "<0x") == 0 && p[5] == '>' &&
                        std::isxdigit(static_cast<unsigned char>(p[3])) && std::isxdigit(static_cast<unsigned char>(p[4]));
        if (ok) b = static_cast<unsigned>(std::strtoul(p.substr(3, 2).c_str(), nullptr, 16));
        if (!ok || byte_piece_name(b) != p)
          throw Error(ErrorKind::kModel, "piece " + std::to_string(i) + " " + shown(p) +
                                             " is typed BYTE but is not named <0xXX> (two upper-case hex digits)");
        byte_ids_[b] = i;
        bytes_[i] = std::string(1, static_cast<char>(b));
        break;
      }
    }
  }
  if (unk_id_ >= 0 && types_[static_cast<size_t>(unk_id_)] != PieceType::kUnknown)
    throw Error(ErrorKind::kModel, "the unknown piece (id " + std::to_string(unk_id_) + ", " +
                                       shown(pieces_[static_cast<size_t>(unk_id_)]) + ") must be typed UNKNOWN");
  if (byte_fallback_) {
    for (unsigned b = 0; b < 256; ++b)
      if (byte_ids_[b] == kNone)
        throw Error(ErrorKind::kModel, "byte fallback needs the 256 byte pieces <0x00>..<0xFF> typed BYTE; " +
                                           byte_piece_name(b) + " is missing");
  }
  bmp_ids_.assign(0x10000, unk_id_ >= 0 ? static_cast<uint32_t>(unk_id_) : kNone);
  bmp_in_longer_.assign(0x10000, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const std::string& p = pieces_[i];
    uint32_t cp;
    const size_t first = utf8::decode(p.data(), p.data() + p.size(), &cp);
    if (first == p.size()) {
      if (cp < 0x10000) bmp_ids_[cp] = i;
      continue;
    }
    if (matchable_.find(p) == BytesMap::kMissing) continue;
    for (size_t at = 0; at < p.size();) {
      const size_t len = utf8::decode(p.data() + at, p.data() + p.size(), &cp);
      if (cp < 0x10000) bmp_in_longer_[cp] = 1;
      at += len;
    }
  }
  word_break_ = !space_inside_first  ? WordBreak::kBeforeSpace
                : !space_inside_last ? WordBreak::kAfterSpace
                                     : WordBreak::kNone;
  // The lattice trie: NORMAL and USER_DEFINED pieces over character codes (1.. in code point
  // order, so the pieces' byte order is their label order).
  std::vector<uint32_t> lattice, cps;
  for (uint32_t i : matchable)
    if (types_[i] != PieceType::kUnused) lattice.push_back(i);
  for (uint32_t i : lattice) {
    const std::string& p = pieces_[i];
    for (size_t at = 0; at < p.size();) {
      uint32_t cp;
      at += utf8::decode(p.data() + at, p.data() + p.size(), &cp);
      cps.push_back(cp);
    }
  }
  std::sort(cps.begin(), cps.end());
  cps.erase(std::unique(cps.begin(), cps.end()), cps.end());
  bmp_codes_.assign(0x10000, 0);
  code_count_ = static_cast<uint32_t>(cps.size() + 1);
  for (size_t k = 0; k < cps.size(); ++k) {
    const uint32_t code = static_cast<uint32_t>(k + 1);
    if (cps[k] < 0x10000) bmp_codes_[cps[k]] = code < kFarCode ? static_cast<uint16_t>(code) : kFarCode;
    if (cps[k] >= 0x10000 || code >= kFarCode) far_codes_.emplace(cps[k], code);
  }
  auto char_labels = [this](const std::string& piece, std::vector<uint32_t>& out) {
    for (size_t at = 0; at < piece.size();) {
      uint32_t cp;
      at += utf8::decode(piece.data() + at, piece.data() + piece.size(), &cp);
      out.push_back(char_code(cp));
    }
  };
  trie_empty_ = !build_trie(pieces_, lattice, static_cast<uint32_t>(cps.size() + 1), char_labels, trie_);
  has_user_defined_ = build_trie(pieces_, user, 257, byte_labels, user_trie_);
}

size_t SpmPieces::user_defined_prefix(const char* p, size_t n) const {
  if (!has_user_defined_) return 0;
  const DoubleArrayTrie::Node* nodes = user_trie_.data();
  int32_t s = DoubleArrayTrie::kRoot;
  size_t best = 0;
  for (size_t j = 0; j < n; ++j) {
    s = DoubleArrayTrie::child_of(nodes, s, static_cast<uint32_t>(static_cast<unsigned char>(p[j])) + 1);
    if (s < 0) break;
    if (nodes[s].value >= 0) best = j + 1;
  }
  return best;
}

void SpmPieces::no_unknown(const char* p, size_t n) {
  throw Error(ErrorKind::kInvalidInput, "'" + std::string(p, n) +
                                            "' is not in the model's pieces and the model has no unknown piece; give "
                                            "the model an unk_id (or byte_fallback with the <0xXX> pieces)");
}

namespace {
// calloc'd memory (zero pages, touched as used) with room to align it to 64 bytes.
struct AlignedMemory {
  void* raw = nullptr;
  void* at = nullptr;
  explicit AlignedMemory(size_t bytes) {
    raw = std::calloc(1, bytes + 64);
    if (!raw) throw std::bad_alloc();
    at = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + 63) & ~uintptr_t{63});
  }
  ~AlignedMemory() { std::free(raw); }
  AlignedMemory(const AlignedMemory&) = delete;
  AlignedMemory& operator=(const AlignedMemory&) = delete;
};
std::atomic<uint32_t> next_instance{1};
}  // namespace

SharedWordTable::SharedWordTable() {
  // All-zero slots are empty (check 0 is no model's), and zero bytes are the atomics' zero.
  static_assert(std::is_trivially_default_constructible<std::atomic<uint64_t>>::value, "zeroed atomics");
  static_assert(sizeof(Slot) == 64, "a slot is one cache line");
  static AlignedMemory memory(sizeof(Slot) << kSlotBits);
  slots_ = static_cast<Slot*>(memory.at);
}

SharedWordTable& SharedWordTable::get() {
  static SharedWordTable table;  // thread-safe first use
  return table;
}

SpmWordCache* SpmWordCache::of_thread() {
  static_assert(std::is_trivially_default_constructible<SpmWordCache>::value, "SpmWordCache must be plain data");
  static_assert(sizeof(Entry) == 64, "an entry is one cache line");
  static thread_local std::unique_ptr<AlignedMemory> memory;
  if (!memory) {
    memory = std::make_unique<AlignedMemory>(sizeof(SpmWordCache));
    new (memory->at) SpmWordCache;
    static_cast<SpmWordCache*>(memory->at)->shared_ = &SharedWordTable::get();
  }
  return static_cast<SpmWordCache*>(memory->at);
}

uint32_t SpmWordCache::new_instance() {
  uint32_t i = next_instance.fetch_add(1) & 0x07FFFFFFu;
  if (i == 0) i = next_instance.fetch_add(1) & 0x07FFFFFFu;
  return i;
}

}  // namespace ciyuan
