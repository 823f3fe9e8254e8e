#include "tests/jit/primitives/tensor_core_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gtest/gtest.h"
#include "tests/jit/primitives/tensor_core_kernels.h"

namespace warptrace::testing {
namespace {

int FloatBits(float f) {
  int i;
  std::memcpy(&i, &f, 4);
  return i;
}
float BitsFloat(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}

// The 16-bit encodings of small integers (|v| <= 256), exact in both formats, computed here
// from the formats' definitions: bf16 is the top half of the binary32 encoding; binary16 has
// a 5-bit exponent of bias 15 and a 10-bit fraction.
uint32_t Bf16Bits(int v) { return static_cast<uint32_t>(FloatBits(static_cast<float>(v))) >> 16; }
uint32_t F16Bits(int v) {
  if (v == 0) return 0;
  const uint32_t sign = v < 0 ? 0x8000u : 0;
  const uint32_t m = static_cast<uint32_t>(std::abs(v));
  const int e = 31 - __builtin_clz(m);  // m = 2^e x 1.f
  const uint32_t fraction = (m << (10 - e)) & 0x3ffu;
  return sign | (static_cast<uint32_t>(e + 15) << 10) | fraction;
}

// mma.m16n8k16 fragments, from the PTX ISA ("Matrix Fragments for mma.m16n8k16 with floating
// point type"), groupID = %laneid >> 2, threadID_in_group = %laneid % 4:
//   A (.f16/.bf16, a0..a7, two per .f16x2 register, low to high):
//     row = groupID                 for ai where 0 <= i < 2 || 4 <= i < 6
//           groupID + 8             otherwise
//     col = (threadID_in_group * 2) + (i & 0x1)       for ai where i < 4
//           (threadID_in_group * 2) + (i & 0x1) + 8   for ai where i >= 4
//   B (b0..b3, two per register):
//     row = (threadID_in_group * 2) + (i & 0x1)       for bi where i < 2
//           (threadID_in_group * 2) + (i & 0x1) + 8   for bi where i >= 2
//     col = groupID
//   C, D (.f32, c0..c3):
//     row = groupID                 for ci where i < 2
//           groupID + 8             for ci where i >= 2
//     col = (threadID_in_group * 2) + (i & 0x1)
struct Coord {
  int row, col;
};
Coord AElement(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {(i < 2 || (i >= 4 && i < 6)) ? g : g + 8, t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
}
Coord BElement(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
Coord CElement(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

// The mma_*_registers kernel's input for A (16 x 16), B (16 x 8), C (16 x 8) of integers.
std::vector<int> PackMma(const std::vector<int>& a, const std::vector<int>& b,
                         const std::vector<int>& c, uint32_t (*bits)(int)) {
  std::vector<int> in(32 * 10);
  for (int lane = 0; lane < 32; ++lane) {
    int* r = &in[lane * 10];
    for (int i = 0; i < 8; ++i) {
      const Coord e = AElement(lane, i);
      r[i / 2] |= static_cast<int>(bits(a[e.row * 16 + e.col]) << (16 * (i % 2)));
    }
    for (int i = 0; i < 4; ++i) {
      const Coord e = BElement(lane, i);
      r[4 + i / 2] |= static_cast<int>(bits(b[e.row * 8 + e.col]) << (16 * (i % 2)));
    }
    for (int i = 0; i < 4; ++i) {
      const Coord e = CElement(lane, i);
      r[6 + i] = FloatBits(static_cast<float>(c[e.row * 8 + e.col]));
    }
  }
  return in;
}

// Runs the mma kernel on integer A, B, C and expects D = A B + C exactly (every product and
// sum is an integer far below 2^24) at the places the D formula gives.
void ExpectMma(Device& device, bool bf16, const std::vector<int>& a, const std::vector<int>& b,
               const std::vector<int>& c) {
  const std::string kernel = bf16 ? "mma_bf16_registers" : "mma_f16_registers";
  std::vector<int> out;
  const absl::Status run = RunTensorCoreKernel(
      device, kernel, 32, PackMma(a, b, c, bf16 ? &Bf16Bits : &F16Bits), 32 * 4, &out);
  ASSERT_TRUE(run.ok()) << run;
  int mismatches = 0;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const Coord e = CElement(lane, i);
      int want = c[e.row * 8 + e.col];
      for (int k = 0; k < 16; ++k) want += a[e.row * 16 + k] * b[k * 8 + e.col];
      const float got = BitsFloat(out[lane * 4 + i]);
      if (got != static_cast<float>(want) && ++mismatches <= 8) {
        ADD_FAILURE() << kernel << ": lane " << lane << " d" << i << " (D[" << e.row << "]["
                      << e.col << "]) is " << got << ", want " << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << kernel;
}

// ldmatrix / stmatrix rows sit at scattered tile rows (row r of matrix m at (8m + r) x 5 mod
// 32), so that each lane's address is seen to be used.
int TileRow(int m, int r) { return (8 * m + r) * 5 % 32; }
uint32_t Element(int m, int r, int c) { return 0x4000u + m * 256 + r * 16 + c; }
uint32_t Code(int m, int lane, int half) { return 0x8000u | (m * 64 + lane * 2 + half); }
const char* const kForms[] = {"x1", "x2", "x4", "x1.trans", "x2.trans", "x4.trans"};

}  // namespace

absl::Status RunTensorCoreKernel(Device& device, const std::string& name, uint32_t threads,
                                 const std::vector<int>& in, size_t out_ints,
                                 std::vector<int>* out) {
  absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel =
      device.Load(PrimitiveKernelSource(FindTensorCoreKernel(name)));
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<DeviceBuffer> out_buffer = DeviceBuffer::Allocate(device, out_ints * 4);
  absl::StatusOr<DeviceBuffer> in_buffer =
      DeviceBuffer::Allocate(device, std::max<size_t>(in.size(), 1) * 4);
  if (!out_buffer.ok()) return out_buffer.status();
  if (!in_buffer.ok()) return in_buffer.status();
  if (absl::Status s = out_buffer->Zero(); !s.ok()) return s;
  if (!in.empty()) {
    if (absl::Status s = in_buffer->CopyFrom(in.data(), in.size() * 4); !s.ok()) return s;
  }
  void* out_ptr = out_buffer->get();
  void* in_ptr = in_buffer->get();
  void* args[] = {&out_ptr, &in_ptr};
  absl::Status launched = device.Launch(**kernel, {1, 1, 1}, {threads, 1, 1}, 0, args);
  if (launched.ok()) launched = device.Synchronize();
  out->resize(out_ints);
  if (absl::Status s = out_buffer->CopyTo(out->data(), out_ints * 4); !s.ok()) return s;
  return launched;
}

void ExpectMmaLayouts(Device& device, bool bf16) {
  {  // One-hot A (A[m][k] = 1 where k = m): D = B, every element where the formulas say.
    SCOPED_TRACE("one-hot A");
    std::vector<int> a(16 * 16), b(16 * 8), c(16 * 8, 0);
    for (int m = 0; m < 16; ++m) a[m * 16 + m] = 1;
    for (int k = 0; k < 16; ++k) {
      for (int n = 0; n < 8; ++n) b[k * 8 + n] = k * 8 + n + 1;
    }
    ExpectMma(device, bf16, a, b, c);
  }
  for (int s = 0; s < 2; ++s) {  // One-hot B (B[k][n] = 1 where k = n + 8s): D = A's columns.
    SCOPED_TRACE(s == 0 ? "one-hot B, k = n" : "one-hot B, k = n + 8");
    std::vector<int> a(16 * 16), b(16 * 8), c(16 * 8, 0);
    for (int m = 0; m < 16; ++m) {
      for (int k = 0; k < 16; ++k) a[m * 16 + k] = m * 16 + k + 1 - 128;
    }
    for (int n = 0; n < 8; ++n) b[(n + 8 * s) * 8 + n] = 1;
    ExpectMma(device, bf16, a, b, c);
  }
  {  // Zero A and B: D = C, where the accumulator layout puts it.
    SCOPED_TRACE("C alone");
    std::vector<int> a(16 * 16), b(16 * 8), c(16 * 8);
    for (int i = 0; i < 16 * 8; ++i) c[i] = 1000 + i * 7;
    ExpectMma(device, bf16, a, b, c);
  }
  {  // Small random integers: everything at once, exactly.
    SCOPED_TRACE("random integers");
    std::vector<int> a(16 * 16), b(16 * 8), c(16 * 8);
    uint32_t state = 12345;
    auto next = [&](int range) {
      state = state * 1664525u + 1013904223u;
      return static_cast<int>((state >> 16) % (2 * range + 1)) - range;
    };
    for (int& v : a) v = next(7);
    for (int& v : b) v = next(7);
    for (int& v : c) v = next(300);
    ExpectMma(device, bf16, a, b, c);
  }
}

// ldmatrix (PTX ISA, "Warp-level matrix load instruction: ldmatrix"): for .x1, .x2, .x4,
// threads 0-7, 0-15, 0-31 pass the addresses of the matrices' rows: thread 8m + r holds row
// r of matrix m ("addr0-addr7" of each matrix). "Each thread in a warp loads fragments of a
// row, with thread 0 receiving the first fragment in its register r, and so on. A group of
// four threads loads an entire row of the matrix": register m of lane l holds row l / 4,
// elements 2 (l % 4) and 2 (l % 4) + 1 of matrix m (the lower in the low half). "Optional
// qualifier .trans indicates that the matrix is loaded in column-major format": the same
// register then holds column l / 4, rows 2 (l % 4) and 2 (l % 4) + 1.
void ExpectLdmatrixForms(Device& device) {
  std::vector<int> in(256 + 32);
  for (int m = 0; m < 4; ++m) {
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) in[TileRow(m, r) * 8 + c] = static_cast<int>(Element(m, r, c));
    }
  }
  for (int lane = 0; lane < 32; ++lane) in[256 + lane] = TileRow(lane / 8, lane % 8);
  std::vector<int> out;
  const absl::Status run = RunTensorCoreKernel(device, "ldmatrix_forms", 32, in, 6 * 32 * 4, &out);
  ASSERT_TRUE(run.ok()) << run;
  int mismatches = 0;
  for (int f = 0; f < 6; ++f) {
    const int num = 1 << (f % 3);
    const bool trans = f >= 3;
    for (int lane = 0; lane < 32; ++lane) {
      for (int m = 0; m < 4; ++m) {
        uint32_t want = 0;
        if (m < num) {
          want = trans ? Element(m, 2 * (lane % 4), lane / 4) |
                             (Element(m, 2 * (lane % 4) + 1, lane / 4) << 16)
                       : Element(m, lane / 4, 2 * (lane % 4)) |
                             (Element(m, lane / 4, 2 * (lane % 4) + 1) << 16);
        }
        const uint32_t got = static_cast<uint32_t>(out[(f * 32 + lane) * 4 + m]);
        if (got != want && ++mismatches <= 10) {
          ADD_FAILURE() << "ldmatrix." << kForms[f] << " lane " << lane << " register " << m
                        << ": got 0x" << std::hex << got << ", want 0x" << want;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// stmatrix (PTX ISA, "Warp-level matrix store instruction: stmatrix") stores the fragments
// ldmatrix loads, with the same addresses and layout: element (r, c) of matrix m comes from
// half c % 2 of register m of lane 4r + c / 2; with .trans the matrix is stored transposed,
// so element (r, c) is the fragment's (c, r): half r % 2 of register m of lane 4c + r / 2.
void ExpectStmatrixForms(Device& device) {
  std::vector<int> in(32 + 32 * 4);
  for (int lane = 0; lane < 32; ++lane) {
    in[lane] = TileRow(lane / 8, lane % 8);
    for (int m = 0; m < 4; ++m) {
      in[32 + lane * 4 + m] = static_cast<int>(Code(m, lane, 0) | (Code(m, lane, 1) << 16));
    }
  }
  std::vector<int> out;
  const absl::Status run = RunTensorCoreKernel(device, "stmatrix_forms", 32, in, 6 * 256, &out);
  ASSERT_TRUE(run.ok()) << run;
  int mismatches = 0;
  for (int f = 0; f < 6; ++f) {
    const int num = 1 << (f % 3);
    const bool trans = f >= 3;
    std::vector<uint32_t> want(256, 0);
    for (int m = 0; m < num; ++m) {
      for (int r = 0; r < 8; ++r) {
        for (int c = 0; c < 8; ++c) {
          want[TileRow(m, r) * 8 + c] =
              trans ? Code(m, 4 * c + r / 2, r % 2) : Code(m, 4 * r + c / 2, c % 2);
        }
      }
    }
    for (int i = 0; i < 256; ++i) {
      const uint32_t got = static_cast<uint32_t>(out[f * 256 + i]);
      if (got != want[i] && ++mismatches <= 10) {
        ADD_FAILURE() << "stmatrix." << kForms[f] << " tile row " << i / 8 << " element "
                      << i % 8 << ": got 0x" << std::hex << got << ", want 0x" << want[i];
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

void ExpectElectElectsOneLanePerWarp(Device& device) {
  std::vector<int> out;
  const absl::Status run = RunTensorCoreKernel(device, "elect_one", 96, {}, 96, &out);
  ASSERT_TRUE(run.ok()) << run;
  for (int w = 0; w < 3; ++w) {
    int elected = 0;
    for (int l = 0; l < 32; ++l) elected += out[w * 32 + l];
    EXPECT_EQ(elected, 1) << "warp " << w;
  }
}

// 64 x 64 x 64 against a double-precision reference of the same bf16 inputs (the values
// have 8 significant bits, so the kernel's conversion is exact). The products are exact in
// fp32; K = 64 fp32 additions in any order bound the error by gamma_K sum |a b|, gamma_K =
// K u / (1 - K u), u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1);
// the tolerance allows 4x that for the hardware's unspecified accumulation.
void ExpectBf16GemmMatchesReference(Device& device) {
  constexpr int kN = 64;
  std::vector<float> a(kN * kN), b(kN * kN);
  uint32_t state = 99;
  auto next = [&] {  // in (-2, 2), 8 significant bits: exact in bf16
    state = state * 1664525u + 1013904223u;
    const int mantissa = static_cast<int>((state >> 8) % 256) - 128;
    return std::ldexp(static_cast<float>(mantissa), -6 - static_cast<int>((state >> 20) % 3));
  };
  for (float& v : a) v = next();
  for (float& v : b) v = next();
  std::vector<int> in(2 * kN * kN);
  for (int i = 0; i < kN * kN; ++i) {
    in[i] = FloatBits(a[i]);
    in[kN * kN + i] = FloatBits(b[i]);
  }
  std::vector<int> out;
  const absl::Status run = RunTensorCoreKernel(device, "mma_gemm_bf16", 128, in, kN * kN, &out);
  ASSERT_TRUE(run.ok()) << run;
  const double u = std::ldexp(1.0, -24);
  const double gamma = kN * u / (1 - kN * u);
  int bad = 0;
  for (int m = 0; m < kN; ++m) {
    for (int n = 0; n < kN; ++n) {
      double want = 0, magnitude = 0;
      for (int k = 0; k < kN; ++k) {
        want += static_cast<double>(a[m * kN + k]) * b[k * kN + n];
        magnitude += std::fabs(static_cast<double>(a[m * kN + k]) * b[k * kN + n]);
      }
      const double got = BitsFloat(out[m * kN + n]);
      if (!(std::fabs(got - want) <= 4 * gamma * magnitude) && ++bad <= 8) {
        ADD_FAILURE() << "C[" << m << "][" << n << "] = " << got << ", want " << want
                      << " within " << 4 * gamma * magnitude;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace warptrace::testing
