// Sorted runs of counted words on disk: what WordCounter spills under a memory limit.
//
// A run is a file of (word, count, first seen) records in increasing byte order of the words,
// each word once. Merging runs is exact whatever the order they were written in: counts add
// and the first-seen position is the smallest, so k runs merged give the table one pass in
// memory would have built. The merge streams: one buffered reader per run and a heap of their
// current words, so memory is the readers' buffers, never the runs.
//
// Record layout (little-endian, as the machine writes it; runs never leave the process's
// temporary directory): uint32 length, uint64 count, uint64 first, then the word's bytes.
// A file starts with an 8-byte magic, the uint64 number of records and the uint64 sum of
// the words' lengths (so a reader can size its storage exactly).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ciyuan {

// One record of a run.
struct RunRecord {
  std::string_view word;
  uint64_t count;
  uint64_t first;
};

// Writes one run; records must come in increasing word order (the caller sorts).
class RunWriter {
 public:
  explicit RunWriter(const std::string& path);
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  void add(std::string_view word, uint64_t count, uint64_t first);
  // Writes the record count into the header and closes the file (throws on a write error).
  void close();
  uint64_t records() const { return records_; }
  uint64_t word_bytes() const { return word_bytes_; }

 private:
  void write(const void* p, size_t n);
  std::string path_;
  std::FILE* f_;
  std::vector<char> buffer_;
  uint64_t records_ = 0;
  uint64_t word_bytes_ = 0;
};

// Reads a run record by record.
class RunReader {
 public:
  explicit RunReader(const std::string& path);
  ~RunReader();
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  // The next record into word()/count()/first(); false at the end.
  bool next();
  std::string_view word() const { return word_; }
  uint64_t count() const { return count_; }
  uint64_t first() const { return first_; }
  uint64_t records() const { return records_; }
  uint64_t word_bytes() const { return word_bytes_; }

 private:
  void read(void* p, size_t n);
  std::string path_;
  std::FILE* f_;
  std::vector<char> buffer_;
  uint64_t records_ = 0, word_bytes_ = 0, left_ = 0;
  std::string word_;
  uint64_t count_ = 0, first_ = 0;
};

// Merges runs (each in word order) into one stream in word order: each distinct word once, its
// counts summed and its smallest first-seen position. `emit` is called per word.
void merge_runs(const std::vector<std::string>& paths, const std::function<void(const RunRecord&)>& emit);

}  // namespace ciyuan
