// Seeds for the Deflate fuzzer (deflate_fuzzer.cc) that reach what small inputs never do
// (issue 55: in 4 minutes libFuzzer grew no input past 3 KB, so the Deflater's 256 KiB
// window, its block splits and the stored-block path of incompressible data went untested):
//
//   bazel run //tests/fuzz:make_deflate_seed_corpus -- /tmp/deflate_seeds
//   bazel run --config=fuzz //tests/fuzz:deflate_fuzzer -- -jobs=1 -max_total_time=240
//       -max_len=1100000 /tmp/deflate_fuzz /tmp/deflate_seeds
//
// Generated, not checked in (about 3 MB); deterministic, so the same seeds every time.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tests/base/packet_bytes.h"

namespace {

bool Write(const std::string& dir, const char* name, const std::vector<uint8_t>& bytes) {
  const std::string path = dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() ||
      std::fclose(f) != 0) {
    std::fprintf(stderr, "make_deflate_seed_corpus: cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
  return true;
}

// A 4 KiB random block repeated at distances that straddle the 32 KiB (zlib) and 256 KiB
// (this Deflater's) windows, between random filler.
std::vector<uint8_t> FarMatches() {
  std::mt19937 rng(55);
  std::vector<uint8_t> block(4096), out(600 * 1024);
  for (uint8_t& b : block) b = static_cast<uint8_t>(rng());
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  for (size_t at : {size_t{0}, size_t{40} << 10, size_t{140} << 10, size_t{395} << 10,
                    size_t{520} << 10}) {
    std::copy(block.begin(), block.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_deflate_seed_corpus DIR\n");
    return 1;
  }
  const std::string dir = argv[1];
  std::mt19937 rng(7);
  std::vector<uint8_t> random(300 * 1024);
  for (uint8_t& b : random) b = static_cast<uint8_t>(rng());
  bool ok = Write(dir, "packets_256k", warptrace::testing::PacketBytes(1, (256 << 10) + 7));
  ok &= Write(dir, "packets_1m", warptrace::testing::PacketBytes(2, 1 << 20));
  ok &= Write(dir, "far_matches_600k", FarMatches());
  ok &= Write(dir, "zeros_512k", std::vector<uint8_t>(512 << 10, 0));
  ok &= Write(dir, "random_300k", random);
  // And the empty input: a run started from the large seeds alone never takes the short-stream
  // paths (under 16 bytes, an empty stored block); 95.9% -> 97.3% of deflate.cc's branches.
  ok &= Write(dir, "empty", {});
  return ok ? 0 : 1;
}
