// Writes the dump fuzzer's seed corpus (seed_corpus.h) into a directory, one file per seed:
//
//   bazel run //tests/fuzz:make_seed_corpus -- $PWD/tests/fuzz/corpus
//
// Exits 1, with the reason, when a seed cannot be built or written.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/fuzz/seed_corpus.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seed_corpus OUTPUT_DIR\n");
    return 1;
  }
  const absl::StatusOr<std::vector<warptrace::fuzz::Seed>> seeds =
      warptrace::fuzz::SeedCorpus();
  if (!seeds.ok()) {
    std::fprintf(stderr, "make_seed_corpus: %s\n", seeds.status().ToString().c_str());
    return 1;
  }
  for (const warptrace::fuzz::Seed& seed : *seeds) {
    const std::string path = std::string(argv[1]) + "/" + seed.name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(seed.data.data(), static_cast<std::streamsize>(seed.data.size()));
    out.close();
    if (!out) {
      std::fprintf(stderr, "make_seed_corpus: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  std::printf("make_seed_corpus: wrote %zu seeds to %s\n", seeds->size(), argv[1]);
  return 0;
}
