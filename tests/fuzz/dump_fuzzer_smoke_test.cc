// The dump fuzzer's smoke run, part of the normal test suite (no libFuzzer needed): the seed
// corpus, the checked-in corpus (seeds plus regression inputs of fixed crashes) and a few
// thousand deterministic mutations of them go through the fuzz target, whose invariant
// checks (dump_fuzz_target.h) must all hold.
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "format/trace_abi.h"
#include "gtest/gtest.h"
#include "tests/fuzz/dump_fuzz_target.h"
#include "tests/fuzz/seed_corpus.h"
#include "tests/status_matchers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace warptrace::fuzz {
namespace {

using ::warptrace::testing::IsOk;

constexpr char kCorpusDir[] = "tests/fuzz/corpus";
constexpr int kMutations = 4000;

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::map<std::string, std::string> CheckedInCorpus() {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpusDir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename().string()] =
        std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return files;
}

std::vector<Seed> Seeds() {
  absl::StatusOr<std::vector<Seed>> seeds = SeedCorpus();
  EXPECT_THAT(seeds, IsOk());
  return seeds.ok() ? *std::move(seeds) : std::vector<Seed>();
}

// splitmix64: a small deterministic generator, the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  uint64_t state_;
};

// One of libFuzzer's kinds of mutation, chosen at random, applied to `data`.
void Mutate(Rng& rng, std::string& data) {
  static constexpr uint32_t kInteresting[] = {
      0u,          1u,          2u,          0x7fffffffu,  0x80000000u,        0xffffffffu,
      0xfffffff0u, 0x10000u,    abi::kTraceMagic,          abi::kTraceVersion, abi::kHeaderWords,
      abi::kExitFlag,           abi::kExitFlag | 1u,       abi::kFlagComplete};
  if (data.empty()) data.push_back('\0');
  const size_t at = rng.Below(data.size());
  switch (rng.Below(8)) {
    case 0:  // flip a bit
      data[at] = static_cast<char>(data[at] ^ (1u << rng.Below(8)));
      break;
    case 1:  // a random byte
      data[at] = static_cast<char>(rng.Next());
      break;
    case 2: {  // an interesting word, little-endian, at a word boundary of the buffer part
      const uint32_t w = rng.Below(4) == 0
                             ? static_cast<uint32_t>(rng.Next())
                             : kInteresting[rng.Below(std::size(kInteresting))];
      const size_t pos = kBufferHeaderBytes + 4 * rng.Below(data.size() / 4 + 1);
      if (pos + 4 > data.size()) data.resize(pos + 4, '\0');
      for (int i = 0; i < 4; ++i) data[pos + i] = static_cast<char>(w >> (8 * i));
      break;
    }
    case 3: {  // copy a chunk over another place
      const size_t len = std::min<size_t>(1 + rng.Below(16), data.size() - at);
      const size_t to = rng.Below(data.size() - len + 1);
      data.replace(to, len, data.substr(at, len));
      break;
    }
    case 4:  // truncate
      data.resize(rng.Below(data.size() + 1));
      break;
    case 5: {  // duplicate a chunk in place
      const size_t len = std::min<size_t>(1 + rng.Below(64), data.size() - at);
      data.insert(at, data.substr(at, len));
      break;
    }
    case 6:  // another mode or other flags
      data[0] = static_cast<char>(rng.Next());
      break;
    default: {  // erase a chunk
      const size_t len = std::min<size_t>(1 + rng.Below(8), data.size() - at);
      data.erase(at, len);
      break;
    }
  }
}

std::string Describe(const FuzzStages& s) {
  return absl::StrCat("inputs ", s.inputs, ", skipped ", s.skipped_large, ", rejected ",
                      s.rejected, ", analyzed ", s.analyzed, ", strict failures ",
                      s.strict_failed, ", timelines ", s.timelines, ", slices ", s.slices,
                      ", repaired units ", s.repaired_units, ", sidecars ", s.sidecars_parsed,
                      ", mosaic ", s.mosaic_converted, " (", s.mosaic_overflows,
                      " overflows), hand-off findings ", s.handoff_findings, ", flows ",
                      s.flows);
}

TEST(DumpFuzzerSmokeTest, EverySeedKeepsEveryInvariantAndReachesEveryStage) {
  const std::vector<Seed> seeds = Seeds();
  ASSERT_GE(seeds.size(), 50u);
  FuzzStages stages;
  for (const Seed& seed : seeds) {
    EXPECT_LE(seed.data.size(), 4096u) << seed.name;
    EXPECT_THAT(RunDumpFuzzInput(Bytes(seed.data), &stages), IsOk()) << seed.name;
  }
  // Every seed gets past the parsers but the five built to be rejected: wrong size, wrong
  // capacity (strict and repaired), unknown sidecar version, odd Mosaic traces_used.
  EXPECT_EQ(stages.rejected, 5u) << Describe(stages);
  EXPECT_EQ(stages.skipped_large, 0u) << Describe(stages);
  EXPECT_GE(stages.timelines, 30u) << Describe(stages);
  EXPECT_GE(stages.strict_failed, 15u) << Describe(stages);
  EXPECT_GE(stages.repaired_units, 5u) << Describe(stages);
  EXPECT_EQ(stages.sidecars_parsed, 2u) << Describe(stages);
  EXPECT_EQ(stages.mosaic_converted, 7u) << Describe(stages);
  EXPECT_EQ(stages.mosaic_overflows, 2u) << Describe(stages);
  // The hand-off seeds: one finding per corruption class, strict and repaired, except the
  // arrival count (the fuzz layouts have no barrier table: counts are not checked).
  EXPECT_EQ(stages.handoff_findings, 6u) << Describe(stages);
  EXPECT_GE(stages.flows, 10u) << Describe(stages);
}

TEST(DumpFuzzerSmokeTest, SeedsHaveDistinctNamesAndContents) {
  std::set<std::string> names, contents;
  for (const Seed& seed : Seeds()) {
    EXPECT_TRUE(names.insert(seed.name).second) << seed.name;
    EXPECT_TRUE(contents.insert(seed.data).second) << seed.name << " repeats another seed";
  }
}

TEST(DumpFuzzerSmokeTest, CheckedInCorpusHoldsTheCurrentSeeds) {
  const std::map<std::string, std::string> files = CheckedInCorpus();
  for (const Seed& seed : Seeds()) {
    auto it = files.find(seed.name);
    ASSERT_NE(it, files.end())
        << seed.name << " is missing from " << kCorpusDir
        << "; regenerate: bazel run //tests/fuzz:make_seed_corpus -- $PWD/tests/fuzz/corpus";
    EXPECT_EQ(it->second, seed.data)
        << seed.name << " differs from the generator's; regenerate: bazel run "
        << "//tests/fuzz:make_seed_corpus -- $PWD/tests/fuzz/corpus";
  }
}

TEST(DumpFuzzerSmokeTest, EveryCheckedInInputKeepsEveryInvariant) {
  const std::map<std::string, std::string> files = CheckedInCorpus();
  ASSERT_FALSE(files.empty()) << "no corpus in " << kCorpusDir;
  for (const auto& [name, data] : files) {
    EXPECT_THAT(RunDumpFuzzInput(Bytes(data)), IsOk())
        << name << " (hex " << absl::BytesToHexString(data.substr(0, 256)) << ")";
    // And through the libFuzzer entry point itself, which traps on a broken invariant.
    EXPECT_EQ(LLVMFuzzerTestOneInput(Bytes(data).data(), data.size()), 0) << name;
  }
}

TEST(DumpFuzzerSmokeTest, MutatedSeedsKeepEveryInvariant) {
  const std::map<std::string, std::string> files = CheckedInCorpus();
  std::vector<std::string> pool;
  for (const auto& [name, data] : files) pool.push_back(data);
  ASSERT_FALSE(pool.empty());
  Rng rng(20240601);
  FuzzStages stages;
  int failures = 0;
  for (int i = 0; i < kMutations && failures < 5; ++i) {
    std::string input = pool[rng.Below(pool.size())];
    const int rounds = 1 + static_cast<int>(rng.Below(4));
    for (int r = 0; r < rounds; ++r) Mutate(rng, input);
    const absl::Status status = RunDumpFuzzInput(Bytes(input), &stages);
    if (!status.ok()) {
      ++failures;
      ADD_FAILURE() << "mutation " << i << ": " << status << "\ninput (hex): "
                    << absl::BytesToHexString(input);
    }
  }
  // The mutations must mostly stay deep enough to reach verify and the outputs.
  std::printf("mutations: %s\n", Describe(stages).c_str());
  EXPECT_GE(stages.analyzed, kMutations / 3) << Describe(stages);
  EXPECT_GE(stages.timelines, kMutations / 5) << Describe(stages);
  EXPECT_GE(stages.strict_failed, kMutations / 10) << Describe(stages);
  EXPECT_GE(stages.rejected, kMutations / 20) << Describe(stages);
  EXPECT_GE(stages.flows, kMutations / 40) << Describe(stages);
}

}  // namespace
}  // namespace warptrace::fuzz
