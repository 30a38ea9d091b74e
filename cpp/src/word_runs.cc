// Sorted runs of counted words (see word_runs.h): buffered writer and reader, k-way merge.
#include "ciyuan/word_runs.h"

#include <cstring>
#include <memory>
#include <queue>

#include "ciyuan/errors.h"

namespace ciyuan {

namespace {

constexpr char kMagic[8] = {'C', 'Y', 'R', 'U', 'N', '1', 0, 0};
// Each open run costs one buffer: small enough that a merge of many runs stays small.
constexpr size_t kBuffer = 64 << 10;

[[noreturn]] void io_error(const char* what, const std::string& path) {
  throw Error(ErrorKind::kInvalidInput,
              std::string("cannot ") + what + " the spilled word counts " + path +
                  " (is the temporary directory's disk full? choose another with spill_dir=)");
}

}  // namespace

RunWriter::RunWriter(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
  if (!f_) io_error("write", path_);
  buffer_.resize(kBuffer);
  std::setvbuf(f_, buffer_.data(), _IOFBF, buffer_.size());
  write(kMagic, sizeof kMagic);
  write(&records_, sizeof records_);  // both rewritten by close()
  write(&word_bytes_, sizeof word_bytes_);
}

RunWriter::~RunWriter() {
  if (f_) std::fclose(f_);
}

void RunWriter::write(const void* p, size_t n) {
  if (std::fwrite(p, 1, n, f_) != n) io_error("write", path_);
}

void RunWriter::add(std::string_view word, uint64_t count, uint64_t first) {
  const uint32_t n = static_cast<uint32_t>(word.size());
  write(&n, sizeof n);
  write(&count, sizeof count);
  write(&first, sizeof first);
  write(word.data(), word.size());
  ++records_;
  word_bytes_ += word.size();
}

void RunWriter::close() {
  if (!f_) return;
  bool ok = std::fseek(f_, sizeof kMagic, SEEK_SET) == 0 && std::fwrite(&records_, sizeof records_, 1, f_) == 1 &&
            std::fwrite(&word_bytes_, sizeof word_bytes_, 1, f_) == 1;
  ok = std::fclose(f_) == 0 && ok;
  f_ = nullptr;
  if (!ok) io_error("write", path_);
}

RunReader::RunReader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
  if (!f_) io_error("read", path_);
  buffer_.resize(kBuffer);
  std::setvbuf(f_, buffer_.data(), _IOFBF, buffer_.size());
  char magic[sizeof kMagic];
  read(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) io_error("read", path_);
  read(&records_, sizeof records_);
  read(&word_bytes_, sizeof word_bytes_);
  left_ = records_;
}

RunReader::~RunReader() {
  if (f_) std::fclose(f_);
}

void RunReader::read(void* p, size_t n) {
  if (std::fread(p, 1, n, f_) != n) io_error("read", path_);
}

bool RunReader::next() {
  if (left_ == 0) return false;
  --left_;
  uint32_t n;
  read(&n, sizeof n);
  read(&count_, sizeof count_);
  read(&first_, sizeof first_);
  word_.resize(n);
  if (n) read(&word_[0], n);
  return true;
}

void merge_runs(const std::vector<std::string>& paths, const std::function<void(const RunRecord&)>& emit) {
  std::vector<std::unique_ptr<RunReader>> readers;
  readers.reserve(paths.size());
  for (const std::string& p : paths) readers.emplace_back(new RunReader(p));
  // A min-heap of the readers by their current word (ties by reader, so the merge is stable).
  auto later = [&](size_t a, size_t b) {
    int c = readers[a]->word().compare(readers[b]->word());
    return c != 0 ? c > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < readers.size(); ++i)
    if (readers[i]->next()) heap.push(i);
  std::string word;
  while (!heap.empty()) {
    size_t i = heap.top();
    heap.pop();
    word.assign(readers[i]->word());
    uint64_t count = readers[i]->count(), first = readers[i]->first();
    if (readers[i]->next()) heap.push(i);
    while (!heap.empty() && readers[heap.top()]->word() == word) {
      size_t j = heap.top();
      heap.pop();
      count += readers[j]->count();
      if (readers[j]->first() < first) first = readers[j]->first();
      if (readers[j]->next()) heap.push(j);
    }
    emit(RunRecord{word, count, first});
  }
}

}  // namespace ciyuan
