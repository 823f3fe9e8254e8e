// What instrumentation costs at compile time: NVRTC time for the three example kernels with
// profiling on (warpgroup units, auto placement, regions + kernel site) and off, the PTX and
// cubin sizes, and where the difference goes. Run:
//   bazel run -c opt //tests/jit/compile:compile_benchmark
//
// Every compile goes through the product's request and options: CudaCompileRequest (the
// emitted source, its in-memory headers and the force-included device prelude) and
// NvrtcOptions (-arch=sm_90 -std=c++17 -lineinfo --pre-include=...). Both variants get the
// same options; only the profiled source carries and #includes the recorder's headers (an
// in-memory header costs nothing until included; BM_RecorderHeaderParse prices including).
//
// BM_Compile/<kernel>/<profiled>: one NvrtcCompiler::Compile per iteration (wall time), with
//   ptx_bytes and cubin_bytes.
// BM_OnVersusOff/<kernel>: per iteration, compiles off and on, each for sm_90 (front end,
//   NVVM and ptxas) and for compute_90 (PTX only: front end and NVVM), alternating the
//   order. The counters are medians over iterations of per-iteration process CPU time
//   (robust on a shared machine; NVRTC compiles on the calling thread):
//     off_ms, on_ms            sm_90 compile, off and on
//     time_ratio               on / off for sm_90: the number the issue aims at (<= 1.10)
//     wall_ratio               the same from wall time
//     ptx_off_ms, ptx_on_ms    compute_90 compile (front end + NVVM), off and on
//     ptxas_off_ms, ptxas_on_ms  the remainder: sm_90 minus compute_90
//     ptx_off, ptx_on, ptx_growth, cubin_off, cubin_on, cubin_growth: sizes in bytes
// BM_RecorderHeaderParse: an empty kernel with and without #include "recorder.cuh"
//   (compute_90): parse_ms is what including the recorder costs by itself.
// BM_BatchedVariants/<kernel>: the eight profiled variants of a kernel (warp, warpgroup,
//   block, custom units x global, shared placement) for sm_90, as eight NVRTC programs
//   (separate_ms) and as one (batched_ms, tests/jit/nvrtc_batch.h, how the NVRTC test suites
//   compile them), alternating; medians of process CPU time. What batching saves is NVRTC's
//   per-program cost (empty_ms above) times seven.
#include <nvrtc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "format/embedded_headers.h"
#include "jit/compile/compiler.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_device.h"
#include "jit/emit/emitter.h"
#include "tests/jit/benchmark_kernels.h"
#include "tests/jit/nvrtc_batch.h"

namespace warptrace {
namespace {

constexpr char kArch[] = "sm_90";
constexpr char kVirtualArch[] = "compute_90";

// Every failure aborts, with why (a benchmark of a failing compile would measure nothing).
[[noreturn]] void Die(const std::string& what) {
  testing::BenchmarkDie("compile_benchmark", what);
}

Kernel Example(int index) { return testing::BenchmarkKernel(index); }

CompileRequest Request(int index, bool profiled) {
  ProfileOptions options;
  options.enabled = profiled;
  absl::StatusOr<KernelSource> source = EmitKernel(Example(index), options);
  if (!source.ok()) Die(std::string(source.status().message()));
  absl::StatusOr<CompileRequest> request = CudaCompileRequest(*source, *CudaTarget::Parse(kArch));
  if (!request.ok()) Die(std::string(request.status().message()));
  return *std::move(request);
}

double CpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

struct Compiled {
  double cpu_ms = 0;
  double wall_ms = 0;
  size_t ptx_bytes = 0;
  size_t cubin_bytes = 0;  // 0 for a virtual arch
};

// Compiles `request` with NVRTC exactly as NvrtcCompiler does, for `arch`.
Compiled CompileRaw(const CompileRequest& request, const std::string& arch) {
  std::vector<const char*> texts, names;
  for (const EmbeddedFile& h : request.headers) {
    texts.push_back(h.contents.c_str());
    names.push_back(h.name.c_str());
  }
  // The request's options with -arch (NvrtcOptions' first) replaced: `arch` may be a
  // virtual compute_XY, which a CudaTarget does not name.
  std::vector<std::string> flags = NvrtcOptions(request.options);
  flags[0] = "-arch=" + arch;
  std::vector<const char*> flag_ptrs;
  for (const std::string& f : flags) flag_ptrs.push_back(f.c_str());

  Compiled out;
  const double cpu0 = CpuMs();
  const auto wall0 = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, request.source.c_str(), request.name.c_str(),
                         static_cast<int>(texts.size()), texts.data(),
                         names.data()) != NVRTC_SUCCESS) {
    Die("nvrtcCreateProgram failed for " + request.name);
  }
  if (nvrtcCompileProgram(prog, static_cast<int>(flag_ptrs.size()), flag_ptrs.data()) !=
      NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    Die("compiling " + request.name + " for " + arch + ": " + log);
  }
  out.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0)
          .count();
  out.cpu_ms = CpuMs() - cpu0;
  nvrtcGetPTXSize(prog, &out.ptx_bytes);
  if (arch.rfind("sm_", 0) == 0) nvrtcGetCUBINSize(prog, &out.cubin_bytes);
  nvrtcDestroyProgram(&prog);
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void BM_Compile(benchmark::State& state) {
  const CompileRequest request =
      Request(static_cast<int>(state.range(0)), state.range(1) != 0);
  NvrtcCompiler nvrtc;
  size_t ptx = 0, cubin = 0;
  for (auto _ : state) {
    absl::StatusOr<CompiledKernel> k = nvrtc.Compile(request);
    if (!k.ok()) Die(std::string(k.status().message()));
    ptx = k->ptx.size();
    cubin = k->cubin.size();
  }
  state.SetLabel(request.name + (state.range(1) != 0 ? " profiled" : " unprofiled"));
  state.counters["ptx_bytes"] = static_cast<double>(ptx);
  state.counters["cubin_bytes"] = static_cast<double>(cubin);
}
BENCHMARK(BM_Compile)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

void BM_OnVersusOff(benchmark::State& state) {
  const CompileRequest off = Request(static_cast<int>(state.range(0)), false);
  const CompileRequest on = Request(static_cast<int>(state.range(0)), true);
  if (!(off.options == on.options)) Die("the profiled and unprofiled requests differ in options");
  std::vector<double> off_ms, on_ms, ratio, wall_ratio, ptx_off_ms, ptx_on_ms, ptxas_off_ms,
      ptxas_on_ms;
  Compiled off_cubin, on_cubin;
  bool on_first = false;
  for (auto _ : state) {
    on_first = !on_first;  // alternate, so that drift in machine load hits both alike
    Compiled a, b, pa, pb;
    if (on_first) {
      b = CompileRaw(on, kArch);
      a = CompileRaw(off, kArch);
      pb = CompileRaw(on, kVirtualArch);
      pa = CompileRaw(off, kVirtualArch);
    } else {
      a = CompileRaw(off, kArch);
      b = CompileRaw(on, kArch);
      pa = CompileRaw(off, kVirtualArch);
      pb = CompileRaw(on, kVirtualArch);
    }
    off_ms.push_back(a.cpu_ms);
    on_ms.push_back(b.cpu_ms);
    ratio.push_back(b.cpu_ms / a.cpu_ms);
    wall_ratio.push_back(b.wall_ms / a.wall_ms);
    ptx_off_ms.push_back(pa.cpu_ms);
    ptx_on_ms.push_back(pb.cpu_ms);
    ptxas_off_ms.push_back(a.cpu_ms - pa.cpu_ms);
    ptxas_on_ms.push_back(b.cpu_ms - pb.cpu_ms);
    off_cubin = a;
    on_cubin = b;
  }
  state.SetLabel(on.name);
  state.counters["off_ms"] = Median(off_ms);
  state.counters["on_ms"] = Median(on_ms);
  state.counters["time_ratio"] = Median(ratio);
  state.counters["wall_ratio"] = Median(wall_ratio);
  state.counters["ptx_off_ms"] = Median(ptx_off_ms);
  state.counters["ptx_on_ms"] = Median(ptx_on_ms);
  state.counters["ptxas_off_ms"] = Median(ptxas_off_ms);
  state.counters["ptxas_on_ms"] = Median(ptxas_on_ms);
  state.counters["ptx_off"] = static_cast<double>(off_cubin.ptx_bytes);
  state.counters["ptx_on"] = static_cast<double>(on_cubin.ptx_bytes);
  state.counters["ptx_growth"] =
      static_cast<double>(on_cubin.ptx_bytes) / static_cast<double>(off_cubin.ptx_bytes);
  state.counters["cubin_off"] = static_cast<double>(off_cubin.cubin_bytes);
  state.counters["cubin_on"] = static_cast<double>(on_cubin.cubin_bytes);
  state.counters["cubin_growth"] =
      static_cast<double>(on_cubin.cubin_bytes) / static_cast<double>(off_cubin.cubin_bytes);
}
BENCHMARK(BM_OnVersusOff)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->Iterations(10);

void BM_RecorderHeaderParse(benchmark::State& state) {
  CompileRequest bare;
  bare.name = "empty.cu";
  bare.source = "extern \"C\" __global__ void empty() {}\n";
  bare.headers = EmbeddedDeviceHeaders();
  CompileRequest with = bare;
  with.source = "#include \"recorder.cuh\"\n" + bare.source;
  std::vector<double> bare_ms, with_ms;
  for (auto _ : state) {
    bare_ms.push_back(CompileRaw(bare, kVirtualArch).cpu_ms);
    with_ms.push_back(CompileRaw(with, kVirtualArch).cpu_ms);
  }
  state.counters["empty_ms"] = Median(bare_ms);
  state.counters["with_recorder_ms"] = Median(with_ms);
  state.counters["parse_ms"] = Median(with_ms) - Median(bare_ms);
}
BENCHMARK(BM_RecorderHeaderParse)->Unit(benchmark::kMillisecond)->Iterations(10);

void BM_BatchedVariants(benchmark::State& state) {
  const Kernel kernel = Example(static_cast<int>(state.range(0)));
  std::vector<testing::NvrtcBatchMember> members;
  for (const UnitSpec& unit : {UnitSpec::Warp(), UnitSpec::Warpgroup(), UnitSpec::Block(),
                               UnitSpec::Custom(32, 64, 1)}) {
    for (Placement placement : {Placement::kGlobal, Placement::kShared}) {
      ProfileOptions options;
      options.unit = unit;
      options.placement = placement;
      absl::StatusOr<KernelSource> source = EmitKernel(kernel, options);
      if (!source.ok()) Die(std::string(source.status().message()));
      members.push_back({absl::StrCat(kernel.name, " ", members.size()), source->source,
                         source->kernel_name, source->headers});
    }
  }
  auto compile = [&](const std::vector<testing::NvrtcBatchMember>& batch) {
    const double cpu0 = CpuMs();
    absl::StatusOr<std::vector<testing::NvrtcBatchResult>> results =
        testing::CompileNvrtcBatches(batch, kArch);
    if (!results.ok()) Die(std::string(results.status().message()));
    for (const testing::NvrtcBatchResult& r : *results) {
      if (!r.status.ok() || !r.log.empty() || !r.batch_log.empty()) {
        Die(absl::StrCat(r.label, ": ", r.status.ToString(), r.log, r.batch_log));
      }
    }
    return CpuMs() - cpu0;
  };
  std::vector<double> separate_ms, batched_ms;
  bool batched_first = false;
  for (auto _ : state) {
    batched_first = !batched_first;
    if (batched_first) batched_ms.push_back(compile(members));
    double separate = 0;
    for (const testing::NvrtcBatchMember& member : members) separate += compile({member});
    separate_ms.push_back(separate);
    if (!batched_first) batched_ms.push_back(compile(members));
  }
  state.SetLabel(kernel.name);
  state.counters["separate_ms"] = Median(separate_ms);
  state.counters["batched_ms"] = Median(batched_ms);
  state.counters["batched_ratio"] = Median(batched_ms) / Median(separate_ms);
}
BENCHMARK(BM_BatchedVariants)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace warptrace

BENCHMARK_MAIN();
