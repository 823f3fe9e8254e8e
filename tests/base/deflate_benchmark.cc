// Deflater (base/deflate.h) against libdeflate's level 1 (the Perfetto writer's compressor
// before it) on 256 KiB packet buffers like the writer's: input bytes per second, and the
// compressed size as a fraction of the input ("ratio").
//   bazel run -c opt //tests/base:deflate_benchmark
#include <libdeflate.h>

#include <cstdint>
#include <vector>

#include "base/deflate.h"
#include "benchmark/benchmark.h"
#include "tests/base/packet_bytes.h"

namespace warptrace {
namespace {

constexpr size_t kBufferBytes = size_t{256} << 10;

void BM_Deflater(benchmark::State& state) {
  const std::vector<uint8_t> in = testing::PacketBytes(1, kBufferBytes);
  std::vector<uint8_t> out(Deflater::Bound(in.size()));
  Deflater deflater;
  size_t size = 0;
  for (auto _ : state) {
    size = deflater.Compress(in, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.size()));
  state.counters["ratio"] = static_cast<double>(size) / static_cast<double>(in.size());
}
BENCHMARK(BM_Deflater);

void BM_LibdeflateLevel1(benchmark::State& state) {
  const std::vector<uint8_t> in = testing::PacketBytes(1, kBufferBytes);
  libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  std::vector<uint8_t> out(libdeflate_zlib_compress_bound(c, in.size()));
  size_t size = 0;
  for (auto _ : state) {
    size = libdeflate_zlib_compress(c, in.data(), in.size(), out.data(), out.size());
    benchmark::DoNotOptimize(out.data());
  }
  libdeflate_free_compressor(c);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.size()));
  state.counters["ratio"] = static_cast<double>(size) / static_cast<double>(in.size());
}
BENCHMARK(BM_LibdeflateLevel1);

}  // namespace
}  // namespace warptrace
