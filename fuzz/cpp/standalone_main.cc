// The regression driver: runs a libFuzzer harness (LLVMFuzzerTestOneInput) once on every file
// named on the command line or found (recursively) in a named directory, without libFuzzer, so
// the corpus replays under GCC's sanitizers where clang's libFuzzer is not installed (CI).
#include <algorithm>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sanitizer/common_interface_defs.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
std::string current;  // the input being run, named when a sanitizer stops the process
void name_input() { std::fprintf(stderr, "\n== the failing input: %s\n", current.c_str()); }
// A broken property (fuzz::fail) or an uncaught exception ends in abort(), which is no
// sanitizer report: name the input there too.
void on_abort(int) {
  name_input();
  std::signal(SIGABRT, SIG_DFL);
  std::raise(SIGABRT);
}
}  // namespace

int main(int argc, char** argv) {
  __sanitizer_set_death_callback(name_input);
  std::signal(SIGABRT, on_abort);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(arg);
    }
  }
  std::sort(files.begin(), files.end());  // a stable order: a failure names the same file each run
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    current = f.string();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("%zu inputs replayed without a sanitizer report\n", files.size());
  return 0;
}
