// bazel run //examples:first_kernel
//
// docs/builder.md's first example, verbatim between the readme markers
// (tests/examples/readme_test.cc checks that docs/builder.md quotes exactly this function,
// and //tests/docs:doc_blocks_test compiles and runs the page's copy): a kernel described with KernelBuilder, run and profiled with one
// RunKernel call, its timeline written as a Chrome trace.
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "examples/example_main.h"
#include "jit/builder/kernel_builder.h"
#include "jit/run/run.h"
#include "llvm/Support/FileSystem.h"
#include "profiler/outputs/chrome_trace.h"

namespace warptrace::examples {

// [readme-begin]
absl::Status FirstKernel(const std::string& trace_path, std::vector<float>& y) {
  KernelBuilder b("smooth");
  b.Param("const float*", "x").Param("float*", "y").Param("int", "n");
  b.Grid({4, 1, 1}).Block({256, 1, 1});
  b.SharedArray("float", "tile", 256);
  b.Stmt("const int i = blockIdx.x * 256 + threadIdx.x;\nfloat acc = 0.0f;");
  b.Region("load", [&] { b.Stmt("tile[threadIdx.x] = i < n ? x[i] : 0.0f;"); });
  b.Barrier("tile ready");
  b.For("j", 0, 8, TripCount::Exact(8), [&] {
    b.Region("accumulate", [&] { b.Stmt("acc += tile[(threadIdx.x + j) % 256];"); });
  });
  b.Region("store", [&] { b.Stmt("if (i < n) y[i] = acc / 8.0f;"); });
  ASSIGN_OR_RETURN(Kernel kernel, b.Build());

  std::vector<float> x(1024, 1.0f);
  y.assign(1024, 0.0f);
  RunOptions options;  // auto device, warpgroup trace units, auto placement
  options.profile.policy.barrier_waits = true;
  ASSIGN_OR_RETURN(RunResult run, RunKernel(kernel,
                                            {KernelArg::In(absl::MakeConstSpan(x)),
                                             KernelArg::Out(absl::MakeSpan(y)),
                                             KernelArg::Scalar<int>(1024)},
                                            options));
  std::cout << run.device_reason << "\n" << run.plan->Explain() << "\n";
  RETURN_IF_ERROR(WriteChromeTraceFile(run.trace->timeline, {}, trace_path));
  return absl::OkStatus();
}
// [readme-end]

}  // namespace warptrace::examples

int main(int argc, char** argv) {
  constexpr char kUsage[] =
      "usage: first_kernel [OUT_DIR | --out=OUT_DIR]\n"
      "Builds docs/builder.md's first kernel (a 1-D smoothing), runs and profiles it with one\n"
      "RunKernel call (on the GPU, or on the host backend without one), checks y and writes\n"
      "OUT_DIR/smooth.trace.json (default: warptrace_out/ where `bazel run` started).\n"
      "The other examples take the common flags (--device, --unit, --cost, ...: --help).\n";
  std::string out_arg;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg.rfind("--out=", 0) == 0) {
      out_arg = arg.substr(6);
    } else if (arg.empty() || arg[0] == '-' || i > 1) {
      std::cerr << "first_kernel: error: unexpected argument '" << arg << "'\n" << kUsage;
      return 2;
    } else {
      out_arg = arg;
    }
  }
  const std::string dir = warptrace::examples::ResolveOutputDirectory(out_arg);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    std::cerr << "first_kernel: error: creating " << dir << ": " << ec.message() << "\n";
    return 1;
  }
  const std::string trace_path = dir + "/smooth.trace.json";
  std::vector<float> y;
  if (absl::Status status = warptrace::examples::FirstKernel(trace_path, y); !status.ok()) {
    std::cerr << "first_kernel: error: " << status.message() << "\n";
    return 1;
  }
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] != 1.0f) {  // the mean of eight ones
      std::cerr << "first_kernel: error: wrong result: y[" << i << "] = " << y[i]
                << ", expected 1\n";
      return 1;
    }
  }
  std::cout << "y is right (1024 values); Chrome trace: " << trace_path
            << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  return 0;
}
