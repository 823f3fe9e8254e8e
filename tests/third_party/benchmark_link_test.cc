// Google Benchmark links and runs a registered benchmark.
#include <benchmark/benchmark.h>

#include "gtest/gtest.h"

namespace {

int g_runs = 0;

void BM_Count(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(++g_runs);
}
BENCHMARK(BM_Count)->Iterations(10);

TEST(BenchmarkLinkTest, RunsRegisteredBenchmark) {
  int argc = 1;
  char arg0[] = "benchmark_link_test";
  char* argv[] = {arg0, nullptr};
  benchmark::Initialize(&argc, argv);
  EXPECT_EQ(benchmark::RunSpecifiedBenchmarks(), 1u);
  EXPECT_EQ(g_runs, 10);
}

}  // namespace
