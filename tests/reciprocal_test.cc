// The reciprocal path (multiply by 1/scale, divide only near rounding boundaries) against the
// division path, bit for bit, on every float32 bit pattern: all 2^32 on the best target this CPU
// supports, every 64th chunk of 2^16 on the others and for the scales that flag no lane
// (QLINEAR_EXHAUSTIVE_STRIDE=k: every k-th chunk everywhere, 1 = everything;
// QLINEAR_EXHAUSTIVE_PART=k/m splits the work; QLINEAR_EXHAUSTIVE_TARGETS=A,B limits the sweep to
// the targets named). Both paths are forced through the public C API.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hwy/highway.h"
#include "hwy/targets.h"
#include "lib/kernels.h"
#include "qlinear/qlinear.h"

namespace qlinear {
namespace {

struct OutputCase {
  int32_t type;
  int32_t saturate;
  int64_t zero_point;  // stored as `type` (float4: its code); zero for float8
};

// Integer encoders with the constant margin (8-bit, zp at 0 and off-centre) and the relative
// one (16-bit); float8 encoders with and without saturation (normal and subnormal midpoints);
// float4 without and with a zero point (0xB = -1.5 and 0x7 = 6, the largest, added after the
// division).
const OutputCase kOutputs[] = {
    {QLINEAR_DTYPE_INT8, 1, 0},          {QLINEAR_DTYPE_UINT8, 1, 131},
    {QLINEAR_DTYPE_INT16, 1, -1000},     {QLINEAR_DTYPE_FLOAT8E4M3FN, 1, 0},
    {QLINEAR_DTYPE_FLOAT8E5M2, 0, 0},    {QLINEAR_DTYPE_FLOAT8E4M3FNUZ, 0, 0},
    {QLINEAR_DTYPE_FLOAT8E4M3FN, 0, 0},  {QLINEAR_DTYPE_FLOAT8E5M2FNUZ, 1, 0},
    {QLINEAR_DTYPE_FLOAT4E2M1, 1, 0},    {QLINEAR_DTYPE_FLOAT4E2M1, 1, 0xB},
    {QLINEAR_DTYPE_FLOAT4E2M1, 1, 0x7},
};

// Bytes of n outputs of the case's type, and elements per compared unit of them.
size_t OutputBytes(const OutputCase& out, int64_t n) {
  const size_t count = static_cast<size_t>(n);
  return out.type == QLINEAR_DTYPE_INT16 ? count * 2 : out.type == QLINEAR_DTYPE_FLOAT4E2M1 ? count / 2 : count;
}

std::vector<float> Scales() {
  return {1.0f, 3.0f, 0.1f, 1.0f / 255.0f, 5.0f / 255.0f, 0.0371f, 1e-3f, 7.3e5f,
          std::numeric_limits<float>::min(),         // smallest normal: a power of two, exact products
          std::numeric_limits<float>::denorm_min() * 1000.0f};  // a denormal
}

// Scales whose reciprocal path flags no lane: a power of two (x * (1/s) is the quotient) or a
// 1/s that is not a normal float32 (the whole call divides). Nothing there depends on the
// boundary windows, so every 64th chunk of them suffices, on the best target too.
bool FlagsNoLane(float s) {
  uint32_t bits;
  std::memcpy(&bits, &s, 4);
  return (bits & 0x7FFFFF) == 0 || !std::isnormal(1.0f / s);
}

// One call of QuantizeLinear, per tensor, on the path forced now.
void Quantize(const std::vector<float>& x, float scale, const OutputCase& out, std::vector<uint8_t>* y) {
  const int64_t n = static_cast<int64_t>(x.size());
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
  int16_t zp16 = static_cast<int16_t>(out.zero_point);
  int8_t zp8 = static_cast<int8_t>(out.zero_point);
  uint8_t zpu8 = static_cast<uint8_t>(out.zero_point);
  const void* zp = out.type == QLINEAR_DTYPE_INT16 ? static_cast<const void*>(&zp16)
                   : out.type == QLINEAR_DTYPE_UINT8 ? static_cast<const void*>(&zpu8)
                                                      : static_cast<const void*>(&zp8);
  const qlinear_tensor tz{out.type, 0, nullptr, zp};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.saturate = out.saturate;
  a.output_dtype = out.type;
  const size_t bytes = OutputBytes(out, n);
  y->assign(bytes, 0);
  ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, &tz, &a, y->data(), bytes), QLINEAR_OK) << qlinear_last_error();
}

int64_t Stride(bool best, int64_t target) {
  if (const char* e = std::getenv("QLINEAR_EXHAUSTIVE_STRIDE")) return std::max(1L, std::atol(e));
  return best ? 1 : target == HWY_SCALAR ? 512 : 64;
}

// The stride for the scales that flag no lane.
int64_t UnflaggedStride(int64_t stride) {
  return std::getenv("QLINEAR_EXHAUSTIVE_STRIDE") != nullptr ? stride : std::max<int64_t>(stride, 64);
}

// QLINEAR_EXHAUSTIVE_PART=k/m: only chunks c with c % m == k (ctest runs the parts in parallel).
void Part(int64_t* k, int64_t* m) {
  *k = 0;
  *m = 1;
  if (const char* e = std::getenv("QLINEAR_EXHAUSTIVE_PART")) {
    long a = 0, b = 1;
    if (std::sscanf(e, "%ld/%ld", &a, &b) == 2 && b > 0 && a >= 0 && a < b) {
      *k = a;
      *m = b;
    }
  }
}

// QLINEAR_EXHAUSTIVE_TARGETS: a comma-separated list of target names (unset: every target).
bool Selected(int64_t target) {
  const char* e = std::getenv("QLINEAR_EXHAUSTIVE_TARGETS");
  if (e == nullptr || e[0] == '\0') return true;
  const std::string list = std::string(",") + e + ",";
  return list.find(std::string(",") + hwy::TargetName(target) + ",") != std::string::npos;
}

TEST(ReciprocalExhaustive, EveryFloat32MatchesDivision) {
  // 2^16 inputs (256 KiB): both paths read x from L2.
  constexpr int64_t kChunk = int64_t{1} << 16;
  constexpr int64_t kChunks = (int64_t{1} << 32) / kChunk;
  const int64_t supported = static_cast<int64_t>(hwy::SupportedAndGeneratedTargets().size());
  ASSERT_GT(supported, 0);
  std::vector<float> x(kChunk);
  std::vector<uint8_t> by_div, by_rec;
  bool best = true;
  int64_t swept = 0;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {  // best first
    if (!Selected(target)) {
      std::printf("[ reciprocal ] %-8s skipped (QLINEAR_EXHAUSTIVE_TARGETS)\n", hwy::TargetName(target));
      continue;
    }
    ++swept;
    hwy::SetSupportedTargetsForTest(target);
    const int64_t stride = Stride(best, target);
    int64_t part, parts;
    Part(&part, &parts);
    const auto t0 = std::chrono::steady_clock::now();
    int64_t compared = 0;
    for (int64_t c = 0; c < kChunks; c += stride) {
      if ((c / stride) % parts != part) continue;
      for (int64_t i = 0; i < kChunk; ++i) {
        const uint32_t bits = static_cast<uint32_t>(c * kChunk + i);
        std::memcpy(&x[static_cast<size_t>(i)], &bits, 4);
      }
      for (float s : Scales()) {
        if (FlagsNoLane(s) && c % UnflaggedStride(stride) != 0) continue;
        for (const OutputCase& out : kOutputs) {
          SetQuantizePathForTest(QuantizePath::kDivision);
          Quantize(x, s, out, &by_div);
          SetQuantizePathForTest(QuantizePath::kReciprocal);
          Quantize(x, s, out, &by_rec);
          if (by_div != by_rec) {
            // Per element: w bytes, or (float4) the element's nibble.
            const size_t w = out.type == QLINEAR_DTYPE_INT16 ? 2 : 1;
            const bool nibbles = out.type == QLINEAR_DTYPE_FLOAT4E2M1;
            for (size_t i = 0; i < x.size(); ++i) {
              const bool differs = nibbles ? ((by_div[i / 2] ^ by_rec[i / 2]) >> (4 * (i % 2)) & 0xF) != 0
                                           : std::memcmp(&by_div[i * w], &by_rec[i * w], w) != 0;
              if (differs) {
                uint32_t bits;
                std::memcpy(&bits, &x[i], 4);
                ADD_FAILURE() << hwy::TargetName(target) << " " << qlinear_dtype_name(out.type)
                              << " scale " << s << " x bits 0x" << std::hex << bits << std::dec
                              << ": reciprocal path differs from division";
                break;
              }
            }
            SetQuantizePathForTest(QuantizePath::kAuto);
            hwy::SetSupportedTargetsForTest(0);
            return;
          }
          compared += kChunk;
        }
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ reciprocal ] %-8s %s: %lld (input, scale, type) cases equal, %.1f s\n",
                hwy::TargetName(target), stride == 1 ? "all 2^32 inputs" : "sampled",
                static_cast<long long>(compared), secs);
    best = false;
  }
  SetQuantizePathForTest(QuantizePath::kAuto);
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GT(swept, 0) << "QLINEAR_EXHAUSTIVE_TARGETS names no target this CPU runs";
}

}  // namespace
}  // namespace qlinear
