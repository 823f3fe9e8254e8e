// main() for a fuzzer (dump_fuzzer, deflate_fuzzer) built without libFuzzer (any build but
// --config=fuzz):
// runs each file argument, and each regular file in each directory argument, through
// LLVMFuzzerTestOneInput once, so crash inputs can be replayed under gcc, asan or ubsan:
//
//   bazel run //tests/fuzz:dump_fuzzer -- $PWD/tests/fuzz/corpus $PWD/crash-1234
//
// Flags (arguments starting with '-', as libFuzzer's) are ignored. Exits 1 when a path
// cannot be read or no input was found; a broken invariant traps in the entry point.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

const char* program = "fuzzer";  // argv[0]'s file name, for messages

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read %s\n", program, path.c_str());
    return false;
  }
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  static std::string name;
  if (argc > 0) {
    name = std::filesystem::path(argv[0]).filename().string();
    program = name.c_str();
  }
  size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    std::error_code error;
    if (std::filesystem::is_directory(arg, error)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(arg, error)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      if (error) {
        std::fprintf(stderr, "%s: cannot list %s: %s\n", program, arg.c_str(),
                     error.message().c_str());
        return 1;
      }
      for (const auto& file : files) {
        if (!RunFile(file)) return 1;
        ++runs;
      }
    } else {
      if (!RunFile(arg)) return 1;
      ++runs;
    }
  }
  if (runs == 0) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...: no input given\n", program);
    return 1;
  }
  std::printf("%s: %zu inputs ran without a broken invariant\n", program, runs);
  return 0;
}
