// The host backend's NVRTC check (jit/run/gpu_compile_check.h) and the CUDA intrinsics and
// constants of jit/host/device/cuda_on_cpu.h, each compared with what NVRTC makes of the same kernel.
#include "jit/run/gpu_compile_check.h"

#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_device.h"
#include "jit/emit/emitter.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

class GpuCompileCheckTest : public testing::HostRunTest {};

Kernel OneStore(const std::string& name, const std::string& stmt) {
  KernelBuilder b(name);
  b.Param("float*", "out").Block({32, 1, 1});
  b.Stmt(stmt);
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

TEST_F(GpuCompileCheckTest, HostRunFailsWithNvrtcsLogWhenTheKernelDoesNotCompileForTheGpu) {
  // M_PI is <math.h>'s (a POSIX extension): the host compiler has it, NVRTC does not (the
  // device prelude gives INFINITY and NAN, not M_PI; math_constants.h has CUDART_PI_F).
  const Kernel kernel = OneStore("uses_m_pi", "if (threadIdx.x == 0) out[0] = M_PI;");
  std::vector<float> out(1, 0.0f);
  RunOptions options;
  options.profile.enabled = false;
  EXPECT_THAT(RunKernel(*device_, kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("kernel uses_m_pi compiles on the host but not for "
                                       "the GPU (NVRTC, sm_90"),
                             HasSubstr("identifier \"M_PI\" is undefined"))));
  // The option turns the check off: the host compiler alone decides.
  options.check_gpu_compile = false;
  ASSERT_THAT(RunKernel(*device_, kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
                  .status(),
              IsOk());
  EXPECT_FLOAT_EQ(out[0], 3.14159265f);
}

TEST_F(GpuCompileCheckTest, RepeatedKernelsAreCheckedFromTheCache) {
  const Kernel kernel = OneStore("cached_check", "if (threadIdx.x == 0) out[0] = 2.0f;");
  std::vector<float> out(1, 0.0f);
  RunOptions options;
  options.profile.enabled = false;
  ASSERT_THAT(RunKernel(*device_, kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
                  .status(),
              IsOk());
  const CompileCacheStats before = GpuCheckCompiler().stats();
  for (int i = 0; i < 3; ++i) {
    ASSERT_THAT(RunKernel(*device_, kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
                    .status(),
                IsOk());
  }
  const CompileCacheStats after = GpuCheckCompiler().stats();
  EXPECT_EQ(after.misses, before.misses);  // NVRTC did not run again
  EXPECT_EQ(after.memory_hits, before.memory_hits + 3);
  EXPECT_EQ(out[0], 2.0f);
}

// What the host computes for each expression, bit for bit, and what NVRTC folds the same
// expression to (the immediate of its st.global in the PTX).
struct Folded {
  const char* expr;
  uint32_t bits;  // the float result's bits, as CUDA defines it
};

constexpr Folded kFolded[] = {
    {"__int_as_float(0x3f800000)", 0x3f800000u},
    {"__uint_as_float(0xc0490fdbu)", 0xc0490fdbu},
    {"(float)__float_as_int(2.0f)", 0x4e800000u},   // 0x40000000 = 1073741824
    {"(float)(__float_as_uint(-1.0f) >> 24)", 0x433f0000u},  // 0xbf = 191
    {"(float)(__double_as_longlong(1.0) >> 52)", 0x447fc000u},  // 1023
    {"(float)__longlong_as_double(0x4010000000000000LL)", 0x40800000u},  // 4.0
    {"(float)__double2hiint(2.0)", 0x4e800000u},  // 0x40000000
    {"(float)__hiloint2double(0x40080000, 0)", 0x40400000u},  // 3.0
    {"__saturatef(2.5f)", 0x3f800000u},
    {"__saturatef(-0.5f)", 0x00000000u},
    {"__fadd_rn(1.0f, 2.0f)", 0x40400000u},
    {"__fmul_rn(3.0f, 0.5f)", 0x3fc00000u},
    {"__fdiv_rn(1.0f, 4.0f)", 0x3e800000u},
    {"__fmaf_rn(2.0f, 3.0f, 1.0f)", 0x40e00000u},
    {"(float)__float2int_rn(2.5f)", 0x40000000u},  // to even
    {"(float)__float2int_rz(-2.7f)", 0xc0000000u},
    {"(float)__float2int_rd(-2.5f)", 0xc0400000u},
    {"(float)__float2int_ru(2.1f)", 0x40400000u},
    {"__int2float_rn(-7)", 0xc0e00000u},
    {"CUDART_INF_F", 0x7f800000u},
    {"CUDART_NEG_ZERO_F", 0x80000000u},
    {"CUDART_MAX_NORMAL_F", 0x7f7fffffu},
    {"CUDART_PI_F", 0x40490fdbu},
    {"CUDART_LN2_F", 0x3f317218u},
    {"(float)CUDART_PI", 0x40490fdbu},
    {"(float)CUDART_INF", 0x7f800000u},
};

// The constant each `st.global.{u32,f32} [%rdN+OFF], %reg` of `ptx` stores, by byte offset,
// where the register was set from an immediate (`mov.u32 %r3, -1068953637;`, `mov.f32 %f1,
// 0f3F800000;`).
std::map<uint64_t, uint32_t> FoldedStores(const std::string& ptx) {
  std::map<std::string, uint32_t> immediate;
  std::map<uint64_t, uint32_t> stored;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    std::vector<std::string> words = absl::StrSplit(line, absl::ByAnyChar(" \t,;[]"),
                                                    absl::SkipEmpty());
    if (words.size() == 3 && (words[0] == "mov.u32" || words[0] == "mov.f32")) {
      const std::string& value = words[2];
      if (absl::StartsWith(value, "0f")) {
        immediate[words[1]] = static_cast<uint32_t>(std::stoul(value.substr(2), nullptr, 16));
      } else if (!value.empty() && (value[0] == '-' || std::isdigit(value[0]))) {
        immediate[words[1]] = static_cast<uint32_t>(std::stoll(value));
      } else {
        immediate.erase(words[1]);
      }
    } else if (words.size() == 3 &&
               (words[0] == "st.global.u32" || words[0] == "st.global.f32")) {
      const size_t plus = words[1].find('+');
      const uint64_t offset = plus == std::string::npos ? 0 : std::stoull(words[1].substr(plus + 1));
      auto it = immediate.find(words[2]);
      if (it != immediate.end()) stored[offset] = it->second;
    }
  }
  return stored;
}

Kernel FoldedKernel(const std::string& name, absl::Span<const Folded> folded,
                    const std::string& preamble) {
  KernelBuilder b(name);
  b.Param("float*", "out").Block({32, 1, 1});
  b.Preamble(preamble);
  std::string body = "if (threadIdx.x == 0) {\n";
  for (size_t i = 0; i < folded.size(); ++i) {
    absl::StrAppend(&body, "  out[", i, "] = ", folded[i].expr, ";\n");
  }
  absl::StrAppend(&body, "}");
  b.Stmt(body);
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

// Runs `folded`'s expressions on the host backend (checking each result's bits) and compiles
// them with NVRTC; returns how many NVRTC folded to an immediate, each checked to be the
// host's bits.
size_t CheckFolded(HostDevice& device, absl::Span<const Folded> folded, const Kernel& kernel) {
  std::vector<float> out(folded.size(), -1.0f);
  RunOptions options;
  options.profile.enabled = false;
  const absl::Status run =
      RunKernel(device, kernel, {KernelArg::Out(absl::MakeSpan(out))}, options).status();
  EXPECT_THAT(run, IsOk());  // includes the NVRTC check
  if (!run.ok()) return 0;
  // NVRTC's PTX stores each folded constant as an immediate: 0fXXXXXXXX.
  NvrtcCompiler nvrtc;
  absl::StatusOr<CompiledKernel> compiled =
      nvrtc.Compile(*CudaCompileRequest(EmitUnprofiledKernel(kernel), CudaTarget::Default(), {}));
  EXPECT_THAT(compiled, IsOk());
  if (!compiled.ok()) return 0;
  const std::map<uint64_t, uint32_t> stored = FoldedStores(compiled->ptx);
  size_t compared = 0;
  for (size_t i = 0; i < folded.size(); ++i) {
    SCOPED_TRACE(folded[i].expr);
    uint32_t host_bits = 0;
    std::memcpy(&host_bits, &out[i], sizeof host_bits);
    EXPECT_EQ(host_bits, folded[i].bits) << absl::StrFormat("host gave 0x%08x", host_bits);
    auto it = stored.find(4 * i);
    if (it == stored.end()) continue;  // NVRTC computes this one at run time
    ++compared;
    EXPECT_EQ(it->second, host_bits) << absl::StrFormat("NVRTC folded it to 0x%08x",
                                                        it->second);
  }
  return compared;
}

TEST_F(GpuCompileCheckTest, ReinterpretationRoundingConversionsAndConstantsMatchNvrtc) {
  const Kernel kernel = FoldedKernel(
      "folded", kFolded,
      "#include <math_constants.h>\n"
      "__device__ float Store(float* out, int i, float v) { out[i] = v; return v; }");
  // Reinterpretation and the CUDART constants fold (14 of them with NVRTC 13.0).
  EXPECT_GE(CheckFolded(*device_, kFolded, kernel), 12u);
}

// The device prelude (jit/primitives/warptrace_device_prelude.cuh): the fixed-width types,
// <climits>, <cfloat>, INFINITY and NAN on both backends, with the same values; a ported
// kernel's standard includes compile under NVRTC (they resolve to the prelude).
constexpr Folded kPrelude[] = {
    {"(float)sizeof(int8_t)", 0x3f800000u},           // 1
    {"(float)sizeof(int64_t)", 0x41000000u},          // 8
    {"(float)sizeof(std::uint32_t)", 0x40800000u},    // 4
    {"(float)sizeof(uintptr_t)", 0x41000000u},        // 8
    {"(float)sizeof(std::size_t)", 0x41000000u},      // 8
    {"(float)(int64_t{-1} < 0)", 0x3f800000u},        // signed
    {"(float)(uint64_t{0} - 1 > 0)", 0x3f800000u},    // unsigned
    {"(float)INT8_MIN", 0xc3000000u},                 // -128
    {"(float)(UINT32_MAX >> 28)", 0x41700000u},       // 15
    {"(float)(INT64_MAX >> 60)", 0x40e00000u},        // 7
    {"(float)(UINT64_MAX >> 63)", 0x3f800000u},       // 1
    {"(float)(SIZE_MAX >> 63)", 0x3f800000u},         // 1
    {"(float)CHAR_BIT", 0x41000000u},                 // 8
    {"(float)(INT_MAX >> 24)", 0x42fe0000u},          // 127
    {"(float)(INT_MIN / 2147483647)", 0xbf800000u},   // -1
    {"(float)(LLONG_MAX >> 62)", 0x3f800000u},        // 1
    {"(float)(UINT_MAX >> 31)", 0x3f800000u},         // 1
    {"FLT_MAX", 0x7f7fffffu},
    {"FLT_MIN", 0x00800000u},
    {"FLT_EPSILON", 0x34000000u},
    {"(float)FLT_MANT_DIG", 0x41c00000u},             // 24
    {"(float)(DBL_EPSILON * 4503599627370496.0)", 0x3f800000u},  // 2^-52 * 2^52
    {"(float)DBL_MAX_EXP", 0x44800000u},              // 1024
    {"INFINITY", 0x7f800000u},
    {"-INFINITY", 0xff800000u},
    {"(float)(NAN != NAN)", 0x3f800000u},
};

TEST_F(GpuCompileCheckTest, TheDevicePreludesTypesAndLimitsAreTheSameOnBothBackends) {
  const Kernel kernel = FoldedKernel(
      "prelude", kPrelude,
      "#include <cstdint>\n#include <stdint.h>\n#include <climits>\n#include <float.h>\n"
      "#include <cstddef>\n#include <limits.h>\n#include <cfloat>\n#include <stddef.h>\n"
      "__device__ int64_t Widen(int32_t x) { return x; }");
  // The sizes, signs and integer limits fold; so do the float constants.
  EXPECT_GE(CheckFolded(*device_, kPrelude, kernel), 20u);
}

TEST_F(GpuCompileCheckTest, FastMathIntrinsicsRunOnTheHostAndCompileForTheGpu) {
  KernelBuilder b("fast_math");
  b.Param("float*", "out").Block({32, 1, 1});
  b.Preamble("__device__ float Sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }");
  b.Stmt("if (threadIdx.x == 0) {\n"
         "  float s, c; __sincosf(0.5f, &s, &c);\n"
         "  out[0] = Sigmoid(0.0f); out[1] = __logf(1.0f); out[2] = __fdividef(1.0f, 8.0f);\n"
         "  out[3] = __powf(2.0f, 3.0f); out[4] = __log2f(8.0f); out[5] = __exp10f(2.0f);\n"
         "  out[6] = __tanf(0.0f); out[7] = s * s + c * c; out[8] = fdividef(3.0f, 2.0f);\n"
         "  out[9] = __log10f(1000.0f); out[10] = __frcp_rn(4.0f); out[11] = __fsqrt_rn(9.0f);\n"
         "}");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> out(12, -1.0f);
  RunOptions options;
  options.profile.enabled = false;
  ASSERT_THAT(RunKernel(*device_, *kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
                  .status(),
              IsOk());
  const std::vector<float> expected = {0.5f, 0.0f,  0.125f, 8.0f, 3.0f,  100.0f,
                                       0.0f, 1.0f,  1.5f,   3.0f, 0.25f, 3.0f};
  for (size_t i = 0; i < expected.size(); ++i) {
    // The GPU's fast math is approximate (2 ulp and more); the host's is exact.
    EXPECT_NEAR(out[i], expected[i], 1e-4f * std::abs(expected[i]) + 1e-6f) << i;
  }
  // __fdividef is the GPU's approximate division.
  NvrtcCompiler nvrtc;
  absl::StatusOr<CompiledKernel> compiled =
      nvrtc.Compile(*CudaCompileRequest(EmitUnprofiledKernel(*kernel), CudaTarget::Default(), {}));
  ASSERT_THAT(compiled, IsOk());
  EXPECT_THAT(compiled->ptx, HasSubstr("div.approx.f32"));  // __fdividef
}

// ---- Host / NVRTC parity (issue 31 item 10) ----

// __nv_bfloat16 exists once the kernel includes <cuda_bf16.h>, on the host as with NVRTC:
// without it both compilers reject the kernel (the host compiler used to accept it, and
// only the NVRTC check, or a GPU, said otherwise).
TEST_F(GpuCompileCheckTest, Bfloat16NeedsCudaBf16HOnTheHostAsWithNvrtc) {
  const std::string stmt =
      "if (threadIdx.x == 0) out[0] = __bfloat162float(__float2bfloat16(1.5f));";
  std::vector<float> out(1, 0.0f);
  RunOptions options;
  options.profile.enabled = false;
  options.check_gpu_compile = false;  // the host compiler's own verdict
  EXPECT_THAT(RunKernel(*device_, OneStore("bf16_no_include", stmt),
                        {KernelArg::Out(absl::MakeSpan(out))}, options)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("__float2bfloat16")));
  KernelBuilder b("bf16_include");
  b.Param("float*", "out").Block({32, 1, 1});
  b.Preamble("#include <cuda_bf16.h>");
  b.Stmt(stmt);
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  options.check_gpu_compile = true;
  ASSERT_THAT(RunKernel(*device_, *kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
                  .status(),
              IsOk());
  EXPECT_EQ(out[0], 1.5f);
}

// __ldg and the other cache-hinted loads and stores run on the host (plain accesses) and
// compile for the GPU.
TEST_F(GpuCompileCheckTest, CacheHintedLoadsAndStoresRunOnTheHostAndCompileForTheGpu) {
  KernelBuilder b("cache_hints");
  b.Param("const float*", "in").Param("float*", "out").Block({32, 1, 1});
  b.Stmt("if (threadIdx.x == 0) {\n"
         "  out[0] = __ldg(&in[0]) + __ldcg(&in[1]) + __ldca(&in[2]);\n"
         "  out[1] = __ldcs(&in[3]) + __ldlu(&in[4]) + __ldcv(&in[5]);\n"
         "  __stwb(&out[2], in[0]); __stcg(&out[3], 2.0f); __stcs(&out[4], in[2]);\n"
         "  __stwt(&out[5], 1.0f + in[5]);\n"
         "}");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  const std::vector<float> in = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  std::vector<float> out(6, -1.0f);
  RunOptions options;
  options.profile.enabled = false;
  ASSERT_THAT(RunKernel(*device_, *kernel,
                        {KernelArg::In(absl::MakeConstSpan(in)),
                         KernelArg::Out(absl::MakeSpan(out))},
                        options)
                  .status(),
              IsOk());  // includes the NVRTC check
  EXPECT_EQ(out, (std::vector<float>{6.0f, 15.0f, 1.0f, 2.0f, 3.0f, 7.0f}));
}

}  // namespace
}  // namespace warptrace
