// Runs every dump benchmark once, briefly, at its smallest size, so they cannot rot: each
// must run without error and report its throughput counters.
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

using ::testing::IsEmpty;

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      names.push_back(run.benchmark_name());
      if (run.error_occurred) errors.push_back(run.benchmark_name() + ": " + run.error_message);
      for (const char* counter : {"items_per_second", "bytes_per_second", "heap_growth_MB"}) {
        auto it = run.counters.find(counter);
        if (it == run.counters.end()) {
          errors.push_back(run.benchmark_name() + ": no counter " + counter);
        } else if (std::string(counter) != "heap_growth_MB" && !(it->second.value > 0)) {
          errors.push_back(run.benchmark_name() + ": " + counter + " is not positive");
        }
      }
    }
  }
  std::vector<std::string> names;
  std::vector<std::string> errors;
};

TEST(DumpBenchmarkTest, EveryBenchmarkRunsAtItsSmallestSizeAndReportsThroughput) {
  const char* argv[] = {"dump_benchmark_test", "--benchmark_filter=events:10000/",
                        "--benchmark_min_time=0.0001"};
  int argc = 3;
  benchmark::Initialize(&argc, const_cast<char**>(argv));
  CollectingReporter reporter;
  const size_t ran = benchmark::RunSpecifiedBenchmarks(&reporter);
  EXPECT_GE(ran, 3u) << "the benchmarks were not linked in";
  EXPECT_EQ(reporter.names.size(), ran);
  EXPECT_THAT(reporter.errors, IsEmpty());
}

}  // namespace
}  // namespace warptrace
