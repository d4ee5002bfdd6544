// Every compiled SIMD target the CPU supports (a test parameter, forced with
// hwy::SetSupportedTargetsForTest) against the scalar reference, bit for bit, through the public
// C API: every input/scale/output type, every granularity, sizes around the vector length,
// misaligned pointers, red zones before and after the output, edge and random values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "lib/kernels.h"
#include "lib/minifloat.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "lib/run_plan.h"
#include "qlinear/qlinear.h"
#include "tests/harness.h"
#include "tests/target_test.h"

namespace qlinear {
namespace {

using harness::Buffer;

class KernelTest : public PerTargetTest {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(KernelTest);

const float kInf = std::numeric_limits<float>::infinity();

// Values that stress rounding and saturation for the scale s and zero point range.
std::vector<float> EdgeValues(float s) {
  std::vector<float> v{0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                       -std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::denorm_min(), -1e-40f,
                       std::numeric_limits<float>::min(), 1e30f, -1e30f, 3e38f, -3e38f};
  for (int k = -260; k <= 260; k += 1) {
    if (std::abs(k) > 20 && k % 7 != 0) continue;
    const float tie = (static_cast<float>(k) + 0.5f) * s;
    v.push_back(tie);
    v.push_back(std::nextafter(tie, kInf));
    v.push_back(std::nextafter(tie, -kInf));
  }
  for (float b : {127.0f, 128.0f, 255.0f, 256.0f, 7.0f, 8.0f, 15.0f, 16.0f, 1.0f, 2.0f, 3.0f,
                  32767.0f, 32768.0f, 65535.0f, 65536.0f}) {
    for (float sign : {1.0f, -1.0f}) {
      const float e = sign * b * s;
      v.push_back(e);
      v.push_back(std::nextafter(e, kInf));
      v.push_back(std::nextafter(e, -kInf));
    }
  }
  return v;
}

// n elements of `type` (float32/float16/bfloat16/int32 x) from edge values and random ones.
std::vector<uint8_t> MakeX(int32_t type, int64_t n, float s, std::mt19937& rng) {
  const std::vector<float> edges = EdgeValues(s);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 3);
  std::vector<uint8_t> out;
  for (int64_t i = 0; i < n; ++i) {
    float v;
    switch (pick(rng)) {
      case 0: v = edges[static_cast<size_t>(rng() % edges.size())]; break;
      case 1: v = normal(rng) * 300.0f * s; break;
      case 2: v = std::nearbyint(normal(rng) * 100.0f) * s * 0.5f; break;  // near ties
      default: v = normal(rng) * 40000.0f * s; break;
    }
    uint8_t b[4];
    size_t w = 4;
    if (type == QLINEAR_DTYPE_FLOAT) {
      std::memcpy(b, &v, 4);
    } else if (type == QLINEAR_DTYPE_INT32) {
      const double d = std::isfinite(v) ? std::max(-2.1e9, std::min(2.1e9, static_cast<double>(v) / s)) : 12345.0;
      const int32_t iv = static_cast<int32_t>(d);
      std::memcpy(b, &iv, 4);
    } else {
      const uint16_t h = type == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(v) : BFloat16::Encode(v);
      std::memcpy(b, &h, 2);
      w = 2;
    }
    out.insert(out.end(), b, b + w);
  }
  return out;
}

int Bits(int32_t t) { return FindDType(t)->bits; }
size_t Bytes(int32_t t, int64_t n) { return static_cast<size_t>(StorageBytes(static_cast<DType>(t), static_cast<uint64_t>(n))); }

// A scale tensor's payload: `count` values near s (varying per entry) in `type`.
// (powers_of_two: s times 1/2, 1 or 2.)
std::vector<uint8_t> MakeScales(int32_t type, int64_t count, float s, std::mt19937& rng, bool powers_of_two = false) {
  std::vector<uint8_t> out;
  std::uniform_real_distribution<float> jitter(0.5f, 2.0f);
  for (int64_t k = 0; k < count; ++k) {
    const float v = k == 0 ? s : powers_of_two ? std::ldexp(s, static_cast<int>(rng() % 3) - 1) : s * jitter(rng);
    if (type == QLINEAR_DTYPE_FLOAT) {
      uint8_t b[4];
      std::memcpy(b, &v, 4);
      out.insert(out.end(), b, b + 4);
    } else if (type == QLINEAR_DTYPE_FLOAT16 || type == QLINEAR_DTYPE_BFLOAT16) {
      const uint16_t h = type == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(v) : BFloat16::Encode(v);
      out.push_back(static_cast<uint8_t>(h));
      out.push_back(static_cast<uint8_t>(h >> 8));
    } else if (type == QLINEAR_DTYPE_INT32) {
      const int32_t iv = std::max(1, static_cast<int32_t>(v));
      uint8_t b[4];
      std::memcpy(b, &iv, 4);
      out.insert(out.end(), b, b + 4);
    } else {  // float8e8m0: the power of two nearest s
      int e;
      std::frexp(v, &e);
      out.push_back(static_cast<uint8_t>(std::max(0, std::min(254, e - 1 + 127))));
    }
  }
  return out;
}

// Zero points in the type's range (random codes), packed.
std::vector<uint8_t> MakeZeroPoints(int32_t type, int64_t count, std::mt19937& rng) {
  const DTypeInfo* info = FindDType(type);
  std::vector<uint8_t> out(Bytes(type, count), 0);
  for (int64_t k = 0; k < count; ++k) {
    uint32_t code = 0;
    if (info->kind == Kind::kInt) {
      code = static_cast<uint32_t>(rng());
    }  // float8/float4 zero points: zero
    if (info->bits >= 8) {
      std::memcpy(out.data() + k * (info->bits / 8), &code, static_cast<size_t>(info->bits / 8));
    } else {
      const int per = 8 / info->bits;
      out[static_cast<size_t>(k / per)] |=
          static_cast<uint8_t>((code & ((1u << info->bits) - 1)) << (info->bits * (k % per)));
    }
  }
  return out;
}

struct Layout2 {
  std::vector<int64_t> x_shape;
  std::vector<int64_t> s_shape;  // empty: per-tensor scalar
  int64_t axis = 1;
  int64_t block = 0;
};

std::string Describe(int32_t xt, int32_t st, int32_t yt, const Layout2& l, int prec) {
  std::string s = std::string(qlinear_dtype_name(xt)) + "/" + qlinear_dtype_name(st) + "->" +
                  qlinear_dtype_name(yt) + " prec " + std::to_string(prec) + " shape [";
  for (int64_t d : l.x_shape) s += std::to_string(d) + ",";
  s += "] axis " + std::to_string(l.axis) + " block " + std::to_string(l.block);
  return s;
}

// One QuantizeLinear call through the API (forced target) against the reference.
void CheckQuantize(int32_t xt, int32_t st, int32_t yt, const Layout2& l, float s, int prec,
                   bool saturate, size_t misalign, std::mt19937& rng, bool powers_of_two = false) {
  int64_t n = 1, sn = 1;
  for (int64_t d : l.x_shape) n *= d;
  for (int64_t d : l.s_shape) sn *= d;
  const std::vector<uint8_t> xdata = MakeX(xt, n, s, rng);
  Buffer xbuf(xdata.size(), misalign);
  if (!xdata.empty()) std::memcpy(xbuf.data(), xdata.data(), xdata.size());
  const std::vector<uint8_t> sdata = MakeScales(st, sn, s, rng, powers_of_two);
  const std::vector<uint8_t> zdata = MakeZeroPoints(yt, sn, rng);
  const qlinear_tensor x{xt, static_cast<int32_t>(l.x_shape.size()), l.x_shape.data(), xbuf.data()};
  const qlinear_tensor sc{st, static_cast<int32_t>(l.s_shape.size()), l.s_shape.data(), sdata.data()};
  const qlinear_tensor zp{yt, static_cast<int32_t>(l.s_shape.size()), l.s_shape.data(), zdata.data()};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.axis = l.axis;
  a.block_size = l.block;
  a.precision = prec;
  a.saturate = saturate;
  const size_t ybytes = Bytes(yt, n);
  Buffer y(ybytes, misalign);
  ASSERT_EQ(qlinear_quantize_linear(&x, &sc, &zp, &a, y.data(), ybytes), QLINEAR_OK)
      << qlinear_last_error() << " " << Describe(xt, st, yt, l, prec);
  ASSERT_TRUE(y.RedZonesIntact()) << Describe(xt, st, yt, l, prec);

  QuantizePlan plan;
  ASSERT_EQ(PlanQuantize(&x, &sc, &zp, &a, &plan), QLINEAR_OK);
  std::vector<uint8_t> want(ybytes + 1, 0);
  QuantizeReference(plan, want.data(), 0, n);
  for (size_t i = 0; i < ybytes; ++i) {
    ASSERT_EQ(y.data()[i], want[i]) << "byte " << i << " of " << ybytes << ": "
                                    << Describe(xt, st, yt, l, prec) << " s " << s;
  }
}

const int32_t kIntOutputs[] = {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT8,  QLINEAR_DTYPE_UINT16,
                               QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_INT4,
                               QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_INT2};
const int32_t kXTypes[] = {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16,
                           QLINEAR_DTYPE_INT32};
const float kScales[] = {1.0f, 0.1f, 1.0f / 255.0f, 3.0f, 0.0371f, 1e-30f, 1e30f, -0.5f,
                         0.0f, 1e-41f};

std::vector<int64_t> SizesFor(int64_t lanes) {
  return {0, 1, 2, 3, lanes - 1, lanes, lanes + 1, 2 * lanes + 3, 4 * lanes, 3 * 1024 + 5};
}

TEST_P(KernelTest, PerTensorEveryTypeAndSize) {
  std::mt19937 rng(1);
  for (int32_t yt : kIntOutputs) {
    for (int32_t xt : kXTypes) {
      for (int64_t n : SizesFor(lanes_)) {
        if (n < 0) continue;
        const float s = kScales[static_cast<size_t>(n) % 10];
        CheckQuantize(xt, QLINEAR_DTYPE_FLOAT, yt, {{n}, {}, 1, 0}, s, 0, true,
                      static_cast<size_t>(n) % 4, rng);
      }
    }
  }
}

// The vector decoding of float16, bfloat16 and float8e8m0 scales (VectorDecodeScales, which the
// blocked and per-axis calls use for 64 scales or more): every code, read from an odd address,
// against the reference's decoding; NaN codes give the quiet NaN with the code's sign. It writes
// whole vectors only and nothing past them.
TEST_P(KernelTest, VectorScaleDecodingOfEveryCode) {
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat8E8M0}) {
    const int64_t size = Info(t).bits / 8, codes = int64_t{1} << Info(t).bits;
    const int64_t n = codes + 3;
    std::vector<uint8_t> src(static_cast<size_t>(1 + n * size));
    for (int64_t k = 0; k < n; ++k) {
      const uint32_t c = static_cast<uint32_t>(k % codes);
      for (int64_t b = 0; b < size; ++b) src[static_cast<size_t>(1 + k * size + b)] = static_cast<uint8_t>(c >> (8 * b));
    }
    const float sentinel = 12345.0f;
    std::vector<float> s(static_cast<size_t>(n), sentinel);
    const int64_t done = VectorDecodeScales(t, src.data() + 1, n, s.data());
    ASSERT_EQ(done, lanes_ == 1 ? 0 : n / lanes_ * lanes_) << Name(t);  // one-lane targets: none
    for (int64_t k = 0; k < n; ++k) {
      uint32_t want = BitsOf(sentinel);
      if (k < done) {
        const double v = LoadReal(t, src.data() + 1, k);
        const uint32_t c = static_cast<uint32_t>(k % codes);
        const bool negative = size == 2 && (c & 0x8000u) != 0;  // e8m0 has no sign
        want = std::isnan(v) ? (negative ? 0x80000000u : 0u) | 0x7FC00000u : BitsOf(static_cast<float>(v));
      }
      ASSERT_EQ(BitsOf(s[static_cast<size_t>(k)]), want) << Name(t) << " code 0x" << std::hex << k % codes;
    }
  }
}

TEST_P(KernelTest, ScaleTypesAndPrecision) {
  std::mt19937 rng(2);
  const int32_t scales[] = {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16,
                            QLINEAR_DTYPE_FLOAT8E8M0, QLINEAR_DTYPE_INT32};
  for (int32_t st : scales) {
    for (int32_t xt : kXTypes) {
      for (int prec : {0, int{QLINEAR_DTYPE_FLOAT}, int{QLINEAR_DTYPE_FLOAT16}, int{QLINEAR_DTYPE_BFLOAT16}}) {
        for (float s : {1.0f, 0.1f, 0.0371f, 1e-6f, 700.0f}) {
          const int64_t n = 3 * lanes_ + 5;
          CheckQuantize(xt, st, QLINEAR_DTYPE_INT8, {{n}, {}, 1, 0}, s, prec, true, 1, rng);
          CheckQuantize(xt, st, QLINEAR_DTYPE_UINT16, {{n}, {}, 1, 0}, s, prec, true, 0, rng);
        }
      }
    }
  }
}

TEST_P(KernelTest, Granularities) {
  std::mt19937 rng(3);
  const int64_t L = lanes_;
  const std::vector<Layout2> layouts = {
      {{5, 2 * L + 3}, {5}, 0, 0},            // per-axis, outer axis, long rows
      {{7, L + 1}, {L + 1}, 1, 0},            // per-axis, last axis: scale per element
      {{3, 5, 3}, {5}, -2, 0},                // per-axis, odd inner: rows end mid-byte
      {{2, 3, 67}, {2, 3, 3}, 2, 32},         // blocked along the last axis, short last block
      {{3, 4 * L + 1}, {3, 2 * L + 1}, 1, 2}, // blocked along the last axis, short blocks
      {{9, 5}, {3, 5}, 0, 3},                 // blocked along an outer axis
      {{7, 3, 5}, {4, 3, 5}, 0, 2},           // blocked along an outer axis, short last block
      {{13, 2 * L + 3}, {3, 2 * L + 3}, 0, 5}, // blocked along an outer axis: four-row groups
      {{1, 2 * L + 5}, {1, 1}, 1, 2 * L + 5}, // one block per row
      // Sub-byte outputs are staged in 1024-element chunks: a chunk boundary inside a block
      // starts a run mid-block (found by `qlinear selftest`).
      {{3, 700}, {3, 23}, 1, 31},
      {{6, 263}, {6, 9}, 1, 31},
      // Sub-byte outputs whose runs all start on a byte and hold >= 64 elements are packed in
      // registers (runs of whole bytes of int4 and of int2 fields; 16-bit x off AVX-512).
      {{5, 4 * L + 64}, {5}, 0, 0},               // per-axis, outer axis
      {{7, 4 * L + 68}, {4 * L + 68}, 1, 0},      // per-axis, last axis: scale per element
      {{9, 4 * L + 72}, {3, 4 * L + 72}, 0, 3},   // blocked along an outer axis
      {{4, 8 * L}, {4, 4}, 1, 2 * L},             // blocked along the last axis, rows join
      {{4, 24 * L}, {4, 4}, 1, 6 * L},            // the same, groups across blocks at 4 lanes
      {{3, 32 * L + 4}, {3, (36 * L + 3) / (4 * L)}, 1, 4 * L},  // rows apart, short last block
      {{2, 3, 2 * L + 66}, {3}, 1, 0},            // per-axis, middle axis (int2: staged)
      {{5, 2 * L + 4}, {5}, 0, 0},                // whole bytes but short runs: staged
  };
  for (const Layout2& l : layouts) {
    for (int32_t yt : kIntOutputs) {
      for (int32_t xt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
        CheckQuantize(xt, QLINEAR_DTYPE_FLOAT, yt, l, 0.05f, 0, true, 3, rng);
      }
    }
    for (int32_t yt : {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1}) {
      for (bool sat : {true, false}) CheckQuantize(QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, yt, l, 0.05f, 0, sat, 1, rng);
    }
    for (int32_t xt : {QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {  // float4 packs these too
      CheckQuantize(xt, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT4E2M1, l, 0.05f, 0, true, 1, rng);
    }
  }
}

// Power-of-two scales (MX and POW2 scales, e8m0 scales): codes come from x * (1/s), which is
// exactly x / s, with no boundary test. Ties and their neighbours of each scale, every output
// type, per tensor, per element and blocked, negative scales, both paths.
TEST_P(KernelTest, PowerOfTwoScalesEveryLayout) {
  const int64_t L = lanes_;
  const std::vector<Layout2> layouts = {{{9 * L + 5}, {}, 1, 0},
                                        {{3, 8 * L + 3}, {8 * L + 3}, 1, 0},
                                        {{4, 4 * L + 5}, {4, 2}, 1, 2 * L + 3},
                                        {{5, 96}, {5, 3}, 1, 32},
                                        {{66, 2 * L + 1}, {3, 2 * L + 1}, 0, 32}};
  const int32_t outputs[] = {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_INT4,
                             QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E5M2,
                             QLINEAR_DTYPE_FLOAT8E4M3FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  std::mt19937 rng(23);
  for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
    SetQuantizePathForTest(path);
    for (const Layout2& l : layouts) {
      for (int32_t yt : outputs) {
        for (float s : {0.25f, 1.0f, -8.0f, 0x1p-20f, 0x1p100f}) {
          for (int32_t st : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT8E8M0}) {
            if (st == QLINEAR_DTYPE_FLOAT8E8M0 && s < 0) continue;
            CheckQuantize(QLINEAR_DTYPE_FLOAT, st, yt, l, s, 0, yt != QLINEAR_DTYPE_FLOAT8E5M2, 1, rng,
                          /*powers_of_two=*/true);
          }
        }
      }
    }
  }
  SetQuantizePathForTest(QuantizePath::kAuto);
}

// Per-element scales where a few reciprocals are not normal floats (1/1e-39 is Inf): the whole
// call must divide (with Inf, x = 0 or tiny x would come out saturated or NaN). Columns 5 and 97
// hold the bad scales (the vector part and the tail of 100 scales), their x 0 and +-1e-44.
TEST_P(KernelTest, PerElementScalesWithoutNormalReciprocalsDivide) {
  const int64_t rows = 3, cols = 100;
  std::vector<float> scales(cols, 0.05f), x(rows * cols);
  scales[5] = scales[97] = 1e-39f;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& v : x) v = normal(rng);
  for (int64_t c : {5, 97}) {
    x[c] = 0.0f;
    x[cols + c] = 1e-44f;
    x[2 * cols + c] = -1e-44f;
  }
  const int64_t xs[2] = {rows, cols}, ss[1] = {cols};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, xs, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 1, ss, scales.data()};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.axis = 1;
  a.output_dtype = QLINEAR_DTYPE_INT8;
  QuantizePlan plan;
  ASSERT_EQ(PlanQuantize(&tx, &ts, nullptr, &a, &plan), QLINEAR_OK);
  std::vector<uint8_t> want(rows * cols), got(rows * cols);
  QuantizeReference(plan, want.data(), 0, rows * cols);
  for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
    SetQuantizePathForTest(path);
    ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, &a, got.data(), got.size()), QLINEAR_OK);
    SetQuantizePathForTest(QuantizePath::kAuto);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
  }
}

TEST_P(KernelTest, LargeTensor) {
  std::mt19937 rng(4);
  CheckQuantize(QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_INT8, {{1000003}, {}, 1, 0},
                0.02f, 0, true, 1, rng);
  CheckQuantize(QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_UINT4,
                {{1000003}, {}, 1, 0}, 0.3f, 0, true, 2, rng);
  CheckQuantize(QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_INT2,
                {{1001, 999}, {999}, 1, 0}, 0.7f, 0, true, 3, rng);
}

// float8/float4 outputs run through the reference on every target (vector encoders: issue 4);
// the driver's fallback must still honour ranges, packing and red zones.
TEST_P(KernelTest, MiniFloatOutputsFallBack) {
  std::mt19937 rng(5);
  const int32_t outs[] = {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ,
                          QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT8E5M2FNUZ,
                          QLINEAR_DTYPE_FLOAT4E2M1};
  for (int32_t yt : outs) {
    for (bool sat : {true, false}) {
      CheckQuantize(QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, yt, {{2 * lanes_ + 3}, {}, 1, 0},
                    0.25f, 0, sat, 1, rng);
    }
  }
}

// DequantizeLinear: every integer input, float32/float16/bfloat16 outputs, granularities.
void CheckDequantize(int32_t xt, int32_t st, int32_t yt, const Layout2& l, size_t misalign,
                     std::mt19937& rng, const std::vector<uint8_t>* codes = nullptr) {
  int64_t n = 1, sn = 1;
  for (int64_t d : l.x_shape) n *= d;
  for (int64_t d : l.s_shape) sn *= d;
  std::vector<uint8_t> xdata(Bytes(xt, n));
  for (uint8_t& b : xdata) b = static_cast<uint8_t>(rng());
  if (codes != nullptr) xdata = *codes;  // the caller's codes (as many bytes)
  if (Bits(xt) < 8 && n % (8 / Bits(xt)) != 0) {  // keep padding zero, as writers do
    xdata.back() &= static_cast<uint8_t>((1u << (Bits(xt) * (n % (8 / Bits(xt))))) - 1);
  }
  Buffer xbuf(xdata.size(), misalign);
  if (!xdata.empty()) std::memcpy(xbuf.data(), xdata.data(), xdata.size());
  const std::vector<uint8_t> sdata = MakeScales(st, sn, 0.037f, rng);
  const bool zp_allowed = FindDType(xt)->kind == Kind::kInt && xt != QLINEAR_DTYPE_INT32;
  const std::vector<uint8_t> zdata = MakeZeroPoints(xt, sn, rng);
  const qlinear_tensor x{xt, static_cast<int32_t>(l.x_shape.size()), l.x_shape.data(), xbuf.data()};
  const qlinear_tensor sc{st, static_cast<int32_t>(l.s_shape.size()), l.s_shape.data(), sdata.data()};
  const qlinear_tensor zp{xt, static_cast<int32_t>(l.s_shape.size()), l.s_shape.data(), zdata.data()};
  qlinear_dequantize_attrs a;
  qlinear_dequantize_attrs_init(&a);
  a.axis = l.axis;
  a.block_size = l.block;
  a.output_dtype = yt;
  const size_t ybytes = Bytes(yt, n);
  Buffer y(ybytes, misalign);
  const qlinear_tensor* zpp = zp_allowed ? &zp : nullptr;
  ASSERT_EQ(qlinear_dequantize_linear(&x, &sc, zpp, &a, y.data(), ybytes), QLINEAR_OK)
      << qlinear_last_error();
  ASSERT_TRUE(y.RedZonesIntact());
  DequantizePlan plan;
  ASSERT_EQ(PlanDequantize(&x, &sc, zpp, &a, &plan), QLINEAR_OK);
  std::vector<uint8_t> want(ybytes + 1);
  DequantizeReference(plan, want.data(), 0, n);
  for (size_t i = 0; i < ybytes; ++i) {
    ASSERT_EQ(y.data()[i], want[i]) << "byte " << i << " " << Describe(xt, st, yt, l, 0);
  }
}

// The piece bounds of a call on the calling thread (ForEachPieceBounds), for 8-, 4- and 2-bit
// outputs and a range call starting mid-byte: consecutive, starting on a byte, each within the
// limit (a block row at least), ending whole groups or at the byte that holds a group end, which
// is a piece of its own; no scale decoded twice within a sweep. Includes layouts whose pieces end
// mid-byte: block rows of odd length, and per-axis sweeps of odd length (a byte across two sweeps
// would use every scale of the axis).
TEST(WindowPieces, EndWholeGroupsOrAtTheirStraddleByte) {
  struct Case {
    std::vector<int64_t> x_shape, s_shape;
    int64_t axis, block;
  };
  const std::vector<Case> cases = {
      {{10, 4101}, {4, 4101}, 0, 3},       {{12, 2501}, {6, 2501}, 0, 2},
      {{600, 35}, {300, 35}, 0, 2},        {{3, 20001}, {3, 5001}, 1, 4},
      {{9001}, {9001}, 0, 0},              {{2, 4201, 65}, {4201}, 1, 0},
      {{1000, 4095}, {334, 4095}, 0, 3},   {{2, 100001, 65}, {100001}, 1, 0},
      {{3, 9001, 63}, {9001}, 1, 0},  // rows under 64: one piece
  };
  const float x0 = 0.0f;  // never read: only the plan's layout is used
  for (const Case& c : cases) {
    int64_t n = 1, sn = 1;
    for (int64_t d : c.x_shape) n *= d;
    for (int64_t d : c.s_shape) sn *= d;
    std::vector<float> s(static_cast<size_t>(sn), 1.0f);
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(c.x_shape.size()), c.x_shape.data(), &x0};
    const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(c.s_shape.size()), c.s_shape.data(), s.data()};
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.axis = c.axis;
    a.block_size = c.block;
    QuantizePlan plan;
    ASSERT_EQ(PlanQuantize(&tx, &ts, nullptr, &a, &plan), QLINEAR_OK) << qlinear_last_error();
    const Layout& l = plan.layout;
    // Decoding each scale once per sweep of the axis decodes this many.
    const int64_t once = l.granularity == Granularity::kPerAxis ? l.outer * l.axis_dim : l.scale_count;
    for (DType yt : {DType::kInt8, DType::kInt4, DType::kInt2}) {
      for (int64_t begin : {int64_t{0}, int64_t{5}}) {
        plan.y_type = yt;
        plan.begin = begin;
        plan.end = n;
        const int64_t per_byte = 8 / Info(yt).bits;
        std::string where = "shape [";
        for (int64_t d : c.x_shape) where += std::to_string(d) + ",";
        where += "] axis " + std::to_string(c.axis) + " block " + std::to_string(c.block) + ", " +
                 std::to_string(per_byte) + " per byte, from " + std::to_string(begin);
        int64_t at = begin, pieces = 0, decoded = 0;
        bool after_straddle = false;
        const bool cut = ForEachPieceBounds(plan, [&](int64_t b, int64_t e, bool straddle) {
          ++pieces;
          EXPECT_EQ(b, at) << where;
          EXPECT_GT(e, b) << where;
          EXPECT_EQ((b - begin) % per_byte, 0) << where << ": piece at " << b;
          if (straddle) {
            EXPECT_EQ(e - b, std::min(per_byte, n - b)) << where << ": straddle byte at " << b;
            EXPECT_NE(ScaleIndex(l, b), ScaleIndex(l, e - 1)) << where << ": straddle byte at " << b;
          } else {
            int64_t first, count;
            ScaleWindow(l, b, e, &first, &count);
            EXPECT_LE(count, std::max(kWindowGroups, l.inner)) << where << ": piece [" << b << ", " << e << ")";
            decoded += count;
            if (b > begin && !after_straddle) {
              EXPECT_NE(ScaleIndex(l, b - 1), ScaleIndex(l, b)) << where << ": piece starts mid-group at " << b;
            }
          }
          after_straddle = straddle;
          at = e;
        });
        if (c.axis == 1 && c.x_shape.size() == 3 && c.x_shape[2] < 64) {
          EXPECT_FALSE(cut) << where;
          continue;
        }
        ASSERT_TRUE(cut) << where;
        EXPECT_EQ(at, n) << where;
        EXPECT_GT(pieces, 1) << where;
        EXPECT_LE(decoded, once) << where << ": scales decoded twice";
      }
    }
  }
}

// Calls on the calling thread whose elements use more than kWindowGroups scales, in pieces of
// their own decoded scales, for layouts whose pieces end mid-byte of int4/int2 (rows of odd
// length, blocks of 3, a per-axis sweep of odd length), both directions, against the reference.
TEST_P(KernelTest, CallsInPiecesOfTheirScaleWindows) {
  std::mt19937 rng(41);
  const std::vector<Layout2> layouts = {
      {{10, 4101}, {4, 4101}, 0, 3},
      {{12, 2501}, {6, 2501}, 0, 2},
      {{600, 35}, {300, 35}, 0, 2},
      {{3, 20001}, {3, 5001}, 1, 4},
      {{9001}, {9001}, 0, 0},
      {{2, 4201, 65}, {4201}, 1, 0},
  };
  for (const Layout2& l : layouts) {
    for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_INT2, QLINEAR_DTYPE_FLOAT4E2M1}) {
      CheckQuantize(QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, yt, l, 0.05f, 0, true, 1, rng);
    }
    CheckQuantize(QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16, QLINEAR_DTYPE_INT4, l, 0.05f, 0, true, 3, rng);
    for (int32_t xt : {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_FLOAT4E2M1}) {
      CheckDequantize(xt, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_FLOAT, l, 1, rng);
    }
    CheckDequantize(QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_BFLOAT16, l, 2, rng);
  }
}

// NaN products written as float16/bfloat16: the reference's canonical quiet NaN with the sign,
// whatever the payload (api_fuzzer found a NaN scale 0xFFFFFFFF written as bfloat16 0xFFFF).
TEST_P(KernelTest, DequantizeNaNPayloadsToHalfTypes) {
  const int64_t n = 37;
  std::vector<int8_t> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xs[static_cast<size_t>(i)] = static_cast<int8_t>(i - 18);
  for (uint32_t nan_bits : {0xFFFFFFFFu, 0x7F800001u, 0xFFC00001u, 0x7FBFFFFFu}) {
    float s;
    std::memcpy(&s, &nan_bits, 4);
    for (int32_t yt : {QLINEAR_DTYPE_BFLOAT16, QLINEAR_DTYPE_FLOAT16}) {
      const int64_t dims[1] = {n};
      const qlinear_tensor x{QLINEAR_DTYPE_INT8, 1, dims, xs.data()};
      const qlinear_tensor sc{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
      qlinear_dequantize_attrs a;
      qlinear_dequantize_attrs_init(&a);
      a.output_dtype = yt;
      std::vector<uint16_t> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
      ASSERT_EQ(qlinear_dequantize_linear(&x, &sc, nullptr, &a, got.data(), got.size() * 2), QLINEAR_OK)
          << qlinear_last_error();
      DequantizePlan plan;
      ASSERT_EQ(PlanDequantize(&x, &sc, nullptr, &a, &plan), QLINEAR_OK);
      DequantizeReference(plan, want.data(), 0, n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)])
            << qlinear_dtype_name(yt) << " scale bits 0x" << std::hex << nan_bits << " element " << std::dec << i;
      }
    }
  }
}

// A weight-format DequantizeLinear input: random codes (the unused bits of a packed last byte
// clear), scales 0.037 * (1..7) or e8m0 codes 118..129, random zero points when asked.
struct WeightCase {
  int32_t xt;
  std::vector<int64_t> shape, s_shape;  // s_shape empty: per tensor
  int64_t axis, block;
  bool zero_points;
  int32_t st;
};
struct WeightData {
  int64_t n = 1;
  std::vector<uint8_t> x, scales, zero_points;
  qlinear_tensor tx, ts, tz;
  WeightData(const WeightCase& c, std::mt19937& rng) {
    int64_t sn = 1;
    for (int64_t d : c.shape) n *= d;
    for (int64_t d : c.s_shape) sn *= d;
    x.resize(Bytes(c.xt, n));
    for (uint8_t& b : x) b = static_cast<uint8_t>(rng());
    const int64_t per = std::max(1, 8 / Bits(c.xt));  // elements per byte (wider types: 1)
    if (n % per != 0) x.back() &= static_cast<uint8_t>((1u << (8 / per * (n % per))) - 1);
    scales.resize(Bytes(c.st, sn));
    for (int64_t k = 0; k < sn; ++k) {
      if (c.st == QLINEAR_DTYPE_FLOAT8E8M0) {
        scales[static_cast<size_t>(k)] = static_cast<uint8_t>(118 + rng() % 12);
      } else {
        const float v = 0.037f * static_cast<float>(1 + rng() % 7);
        std::memcpy(&scales[static_cast<size_t>(4 * k)], &v, 4);
      }
    }
    zero_points.resize(c.zero_points ? Bytes(c.xt, sn) : 0);
    for (uint8_t& b : zero_points) b = static_cast<uint8_t>(rng());
    if (c.zero_points && sn % 2 != 0) zero_points.back() &= 0x0F;
    const int32_t rank = static_cast<int32_t>(c.s_shape.size());
    const int64_t* s_dims = c.s_shape.empty() ? nullptr : c.s_shape.data();
    tx = {c.xt, static_cast<int32_t>(c.shape.size()), c.shape.data(), x.data()};
    ts = {c.st, rank, s_dims, scales.data()};
    tz = {c.xt, rank, s_dims, zero_points.data()};
  }
};

// Long float32 outputs take non-temporal stores on x86: per tensor from the first 64-byte
// boundary that starts a byte of codes; other granularities from the loops themselves where y
// and every run and block start on a line (offset 0 here, rows of whole lines), else through
// chunks decoded into two alternating buffers, each chunk's lines streamed out while the next
// one is decoded. Outputs at offsets from a 64-byte boundary (0; 4 and 60: an odd head, not
// streamed on packed x; 8; 2: not float-aligned, normal stores), int8 and int4 per tensor, int4
// rows of odd length (the second row starts mid-byte), per row (int4 and int2 rows of 4096: the
// 4- and 2-bit tables; int8 rows of 16, too short to stream in place), blocks along the last
// and the outer axis with packed zero points, MXFP4, uint8 blocks of 48 with zero points, int16
// blocks of 16, per element along the last axis, per column of int8 (rows of whole lines that
// are not whole groups of four vectors on AVX-512), float8 in blocks along the outer axis; sizes
// that are not multiples of a chunk or a line; range calls from element 16 and 4 into a
// line-aligned y. Bytes equal the reference's and the red zones around y are intact.
TEST_P(KernelTest, LongFloat32OutputsStreamed) {
  if (!HWY_ARCH_X86) GTEST_SKIP() << "streamed stores are x86's";
  std::mt19937 rng(8);
  constexpr int64_t kLong = (int64_t{1} << 22) + 37;
  constexpr size_t kRed = 64;
  const WeightCase cases[] = {
      {QLINEAR_DTYPE_INT8, {kLong}, {}, 1, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT4, {kLong}, {}, 1, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT4, {2, (int64_t{1} << 22) + 1}, {2}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT8, {4097, 1024}, {4097}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT4, {4099, 1025}, {4099, 33}, 1, 32, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_UINT4, {4100, 1024}, {33, 1024}, 0, 128, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT4E2M1, {4096, 1030}, {4096, 33}, 1, 32, false, QLINEAR_DTYPE_FLOAT8E8M0},
      {QLINEAR_DTYPE_INT2, {4097, 1027}, {1027}, 1, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT8, {4097, 1030}, {1030}, 1, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT8E4M3FN, {4099, 1024}, {129, 1024}, 0, 32, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT4E2M1, {4097, 1024}, {4097, 32}, 1, 32, false, QLINEAR_DTYPE_FLOAT8E8M0},
      {QLINEAR_DTYPE_INT8, {4097, 1040}, {1040}, 1, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT4, {1025, 4096}, {1025}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT2, {1025, 4096}, {1025}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_UINT8, {4097, 1024}, {4097, 22}, 1, 48, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT16, {4097, 1024}, {4097, 64}, 1, 16, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT8, {262147, 16}, {262147}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
  };
  for (const WeightCase& c : cases) {
    const WeightData w(c, rng);
    const int64_t n = w.n;
    const qlinear_tensor &x = w.tx, &sc = w.ts, &zp = w.tz;
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.axis = c.axis;
    a.block_size = c.block;
    a.output_dtype = QLINEAR_DTYPE_FLOAT;
    const qlinear_tensor* z = c.zero_points ? &zp : nullptr;
    DequantizePlan plan;
    ASSERT_EQ(PlanDequantize(&x, &sc, z, &a, &plan), QLINEAR_OK) << qlinear_last_error();
    const size_t ybytes = static_cast<size_t>(n) * 4;
    std::vector<uint8_t> want(ybytes);
    DequantizeReference(plan, want.data(), 0, n);
    const size_t total = (ybytes + 128 + 2 * kRed + 63) / 64 * 64;  // aligned_alloc: a multiple of 64
    void* mem = std::aligned_alloc(64, total);
    ASSERT_NE(mem, nullptr);
    uint8_t* base = static_cast<uint8_t*>(mem);
    for (size_t offset : {0, 4, 8, 60, 2}) {
      std::memset(base, 0xCD, total);
      uint8_t* y = base + kRed + offset;
      ASSERT_EQ(qlinear_dequantize_linear(&x, &sc, z, &a, y, ybytes), QLINEAR_OK) << qlinear_last_error();
      EXPECT_EQ(std::memcmp(y, want.data(), ybytes), 0)
          << Describe(c.xt, c.st, QLINEAR_DTYPE_FLOAT, {c.shape, c.s_shape, a.axis, c.block}, 0) << " at offset "
          << offset;
      for (size_t i = 0; i < kRed + offset; ++i) ASSERT_EQ(base[i], 0xCD) << "before y, offset " << offset;
      for (size_t i = kRed + offset + ybytes; i < total; ++i) {
        ASSERT_EQ(base[i], 0xCD) << "after y, offset " << offset;
      }
    }
    // Ranges into a line-aligned y: from element 16 (every line stays whole) and from element
    // 4 (lines shifted: staged).
    for (int64_t first : {16, 4}) {
      std::memset(base, 0xCD, total);
      uint8_t* y = base + kRed;
      const size_t rbytes = ybytes - static_cast<size_t>(4 * first);
      qlinear_tensor xr = x;
      xr.data = static_cast<const uint8_t*>(x.data) + Bytes(c.xt, first);
      ASSERT_EQ(qlinear_dequantize_linear_range(&xr, &sc, z, &a, first, n - first, y, rbytes), QLINEAR_OK)
          << qlinear_last_error();
      EXPECT_EQ(std::memcmp(y, want.data() + 4 * first, rbytes), 0)
          << Describe(c.xt, c.st, QLINEAR_DTYPE_FLOAT, {c.shape, c.s_shape, a.axis, c.block}, 0) << " range from "
          << first;
      for (size_t i = 0; i < kRed; ++i) ASSERT_EQ(base[i], 0xCD) << "before the range's y";
      for (size_t i = kRed + rbytes; i < total; ++i) ASSERT_EQ(base[i], 0xCD) << "after the range's y";
    }
    std::free(mem);
  }
}

// Long float16/bfloat16 outputs of layouts whose rows share a row of scales (per column, blocks
// along the outer axis) are decoded one row at a time instead of four rows together (fewer
// concurrent streams where memory bounds the call): whole calls and a range from inside a row.
// Bytes equal the reference's, red zones intact.
TEST_P(KernelTest, LongHalfOutputsOfSharedScaleRows) {
  if (!HWY_ARCH_X86) GTEST_SKIP() << "the path is target-independent; x86 runs it natively";
  std::mt19937 rng(9);
  constexpr size_t kRed = 64;
  const WeightCase cases[] = {
      {QLINEAR_DTYPE_INT8, {4097, 1024}, {1024}, 1, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_UINT4, {4100, 1025}, {33, 1025}, 0, 128, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT8E4M3FN, {4099, 1030}, {129, 1030}, 0, 32, false, QLINEAR_DTYPE_FLOAT},
  };
  int turn = 0;
  for (const WeightCase& c : cases) {
    const WeightData w(c, rng);
    const int32_t yt = turn++ % 2 ? QLINEAR_DTYPE_FLOAT16 : QLINEAR_DTYPE_BFLOAT16;
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.axis = c.axis;
    a.block_size = c.block;
    a.output_dtype = yt;
    const qlinear_tensor* z = c.zero_points ? &w.tz : nullptr;
    DequantizePlan plan;
    ASSERT_EQ(PlanDequantize(&w.tx, &w.ts, z, &a, &plan), QLINEAR_OK) << qlinear_last_error();
    const size_t ybytes = static_cast<size_t>(w.n) * 2;
    std::vector<uint8_t> want(ybytes), got(ybytes + 2 * kRed, 0xCD);
    DequantizeReference(plan, want.data(), 0, w.n);
    ASSERT_EQ(qlinear_dequantize_linear(&w.tx, &w.ts, z, &a, got.data() + kRed, ybytes), QLINEAR_OK)
        << qlinear_last_error();
    EXPECT_EQ(std::memcmp(got.data() + kRed, want.data(), ybytes), 0)
        << Describe(c.xt, c.st, yt, {c.shape, c.s_shape, a.axis, c.block}, 0);
    for (size_t i = 0; i < kRed; ++i) {
      ASSERT_EQ(got[i], 0xCD) << "before y";
      ASSERT_EQ(got[kRed + ybytes + i], 0xCD) << "after y";
    }
    // A range from inside the first row (on a byte) to the end, still over 4M elements.
    constexpr int64_t kFirst = 2;
    const size_t rbytes = ybytes - 2 * kFirst;
    qlinear_tensor xr = w.tx;
    xr.data = static_cast<const uint8_t*>(w.tx.data) + (c.xt == QLINEAR_DTYPE_UINT4 ? kFirst / 2 : kFirst);
    std::fill(got.begin(), got.end(), uint8_t{0xCD});
    ASSERT_EQ(qlinear_dequantize_linear_range(&xr, &w.ts, z, &a, kFirst, w.n - kFirst, got.data() + kRed, rbytes),
              QLINEAR_OK)
        << qlinear_last_error();
    EXPECT_EQ(std::memcmp(got.data() + kRed, want.data() + 2 * kFirst, rbytes), 0)
        << Describe(c.xt, c.st, yt, {c.shape, c.s_shape, a.axis, c.block}, 0) << " range from " << kFirst;
    for (size_t i = 0; i < kRed; ++i) {
      ASSERT_EQ(got[i], 0xCD) << "before the range's y";
      ASSERT_EQ(got[kRed + rbytes + i], 0xCD) << "after the range's y";
    }
  }
}

// Per axis on an outer axis with rows of whole groups of four vectors: each sweep of the axis is
// dequantized as one run of blocks of a row (ForEachAxisSweep). Whole calls and range calls that
// start inside a row (inside a vector, on a vector, on a group) and on a later sweep, with and
// without zero points, into y at several offsets from a line, against the reference, with red
// zones.
TEST_P(KernelTest, RowsOfOneScaleRunAsBlocks) {
  std::mt19937 rng(10);
  const int64_t L = lanes_;
  constexpr size_t kRed = 64;
  const WeightCase cases[] = {
      {QLINEAR_DTYPE_INT8, {7, 8 * L}, {7}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_UINT8, {7, 8 * L}, {7}, 0, 0, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT16, {3, 64 * L}, {3}, 0, 0, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT8E4M3FN, {2, 5, 4 * L}, {5}, 1, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_UINT8, {3, 3, 8 * L}, {3}, 1, 0, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT8E5M2, {9, 12 * L}, {9}, 0, 0, false, QLINEAR_DTYPE_FLOAT8E8M0},
  };
  for (const WeightCase& c : cases) {
    const WeightData w(c, rng);
    const int64_t n = w.n, row = c.shape.back();
    const qlinear_tensor* z = c.zero_points ? &w.tz : nullptr;
    for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
      qlinear_dequantize_attrs a;
      qlinear_dequantize_attrs_init(&a);
      a.axis = c.axis;
      a.output_dtype = yt;
      DequantizePlan plan;
      ASSERT_EQ(PlanDequantize(&w.tx, &w.ts, z, &a, &plan), QLINEAR_OK) << qlinear_last_error();
      const size_t ysize = yt == QLINEAR_DTYPE_FLOAT ? 4 : 2;
      std::vector<uint8_t> want(static_cast<size_t>(n) * ysize);
      DequantizeReference(plan, want.data(), 0, n);
      const size_t total = (want.size() + 2 * kRed + 64 + 63) / 64 * 64;
      void* mem = std::aligned_alloc(64, total);
      ASSERT_NE(mem, nullptr);
      uint8_t* base = static_cast<uint8_t*>(mem);
      const int64_t sweep = c.shape.size() == 3 ? c.shape[1] * row : 2 * row;  // rank 2: a later row
      for (int64_t first : {int64_t{0}, int64_t{1}, L + 3, 4 * L, row + L, row + 4 * L, sweep + 5, sweep + 2 * L}) {
        if (first + 8 > n) continue;
        const int64_t count = first == 1 ? n - first - 7 : n - first;  // one range ends early
        qlinear_tensor slice = w.tx;
        slice.data = w.x.data() + Bytes(c.xt, first);
        const size_t ybytes = static_cast<size_t>(count) * ysize;
        for (size_t offset : {0, 4, 16}) {
          std::memset(base, 0xCD, total);
          uint8_t* y = base + kRed + offset;
          ASSERT_EQ(qlinear_dequantize_linear_range(&slice, &w.ts, z, &a, first, count, y, ybytes), QLINEAR_OK)
              << qlinear_last_error();
          EXPECT_EQ(std::memcmp(y, want.data() + static_cast<size_t>(first) * ysize, ybytes), 0)
              << Describe(c.xt, c.st, yt, {c.shape, c.s_shape, c.axis, 0}, 0) << " first " << first
              << " at offset " << offset;
          for (size_t i = 0; i < kRed + offset; ++i) ASSERT_EQ(base[i], 0xCD) << "before y, offset " << offset;
          for (size_t i = kRed + offset + ybytes; i < total; ++i) ASSERT_EQ(base[i], 0xCD) << "after y, offset " << offset;
        }
      }
      std::free(mem);
    }
  }
}

// Spans of kAlignFrom elements or more with one scale start their vector loop at y's first
// cache-line boundary when that element starts a byte of codes (x86). Per tensor, per row
// (rows of odd length: every other row of a packed tensor starts mid-byte) and blocks of 16K
// elements or more (with packed zero points; MXFP4 with a short last block), whole calls and
// range calls (from odd elements of 8-bit x), every output type, y at offsets from a 64-byte
// boundary that give even and odd heads (an odd one on packed x: no alignment), and offsets
// that are not a multiple of the element size (no alignment possible). Bytes equal the
// reference's and the red zones around y are intact. (That the loop is aligned shows in the
// benchmark's -y16 rows, not here.)
TEST_P(KernelTest, LongSpansAlignOutputs) {
  if (!HWY_ARCH_X86) GTEST_SKIP() << "output alignment is x86's";
  std::mt19937 rng(9);
  constexpr int64_t kRow = 16391;
  constexpr size_t kRed = 64;
  const WeightCase cases[] = {
      {QLINEAR_DTYPE_INT8, {2 * kRow}, {}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT4, {2 * kRow}, {}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_UINT4, {2 * kRow}, {}, 0, 0, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_INT2, {2 * kRow}, {}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT8E4M3FN, {2 * kRow}, {}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT4E2M1, {2 * kRow}, {}, 0, 0, false, QLINEAR_DTYPE_FLOAT8E8M0},
      {QLINEAR_DTYPE_INT4, {3, kRow}, {3}, 0, 0, false, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT4E2M1, {3, kRow}, {3}, 0, 0, false, QLINEAR_DTYPE_FLOAT8E8M0},
      // Blocks long enough to align: the second starts inside a byte of x (odd block size).
      {QLINEAR_DTYPE_UINT4, {2 * kRow}, {2}, 0, kRow, true, QLINEAR_DTYPE_FLOAT},
      {QLINEAR_DTYPE_FLOAT4E2M1, {kRow + 20000}, {2}, 0, 20000, false, QLINEAR_DTYPE_FLOAT8E8M0},
  };
  for (const WeightCase& c : cases) {
    const WeightData w(c, rng);
    const int64_t n = w.n, per = 8 / Bits(c.xt);
    const qlinear_tensor &x = w.tx, &sc = w.ts;
    const qlinear_tensor* z = c.zero_points ? &w.tz : nullptr;
    for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
      qlinear_dequantize_attrs a;
      qlinear_dequantize_attrs_init(&a);
      a.axis = 0;
      a.block_size = c.block;
      a.output_dtype = yt;
      DequantizePlan plan;
      ASSERT_EQ(PlanDequantize(&x, &sc, z, &a, &plan), QLINEAR_OK) << qlinear_last_error();
      const size_t ysize = yt == QLINEAR_DTYPE_FLOAT ? 4 : 2;
      std::vector<uint8_t> want(static_cast<size_t>(n) * ysize);
      DequantizeReference(plan, want.data(), 0, n);
      const size_t total = (want.size() + 128 + 2 * kRed + 63) / 64 * 64;
      void* mem = std::aligned_alloc(64, total);
      ASSERT_NE(mem, nullptr);
      uint8_t* base = static_cast<uint8_t*>(mem);
      for (int64_t first : {int64_t{0}, per, 3 * per}) {  // range calls start on a byte of x
        // x->data at element `first`; the slice ends the tensor or a byte before its end.
        const int64_t count = first == per ? (n - first - 5) / per * per : n - first;
        qlinear_tensor slice = x;
        slice.data = w.x.data() + Bytes(c.xt, first);
        const size_t ybytes = static_cast<size_t>(count) * ysize;
        for (size_t offset : {0, 1, 2, 4, 16, 30, 48, 60, 62}) {
          std::memset(base, 0xCD, total);
          uint8_t* y = base + kRed + offset;
          ASSERT_EQ(qlinear_dequantize_linear_range(&slice, &sc, z, &a, first, count, y, ybytes), QLINEAR_OK)
              << qlinear_last_error();
          EXPECT_EQ(std::memcmp(y, want.data() + static_cast<size_t>(first) * ysize, ybytes), 0)
              << Describe(c.xt, c.st, yt, {c.shape, c.s_shape, 0, 0}, 0) << " first " << first << " at offset "
              << offset;
          for (size_t i = 0; i < kRed + offset; ++i) ASSERT_EQ(base[i], 0xCD) << "before y, offset " << offset;
          for (size_t i = kRed + offset + ybytes; i < total; ++i) ASSERT_EQ(base[i], 0xCD) << "after y, offset " << offset;
        }
      }
      std::free(mem);
    }
  }
}

TEST_P(KernelTest, DequantizeEveryType) {
  std::mt19937 rng(6);
  const int32_t inputs[] = {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT8,  QLINEAR_DTYPE_UINT16,
                            QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_INT32, QLINEAR_DTYPE_UINT4,
                            QLINEAR_DTYPE_INT4,  QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_INT2,
                            QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E5M2,
                            QLINEAR_DTYPE_FLOAT4E2M1};
  const int64_t L = lanes_;
  // (9L + 5 and 4L + 3: the float32 loop's four-vector turns, then single vectors and a tail)
  const std::vector<Layout2> layouts = {{{2 * L + 3}, {}, 1, 0}, {{5, L + 3}, {5}, 0, 0},
                                        {{3, 2 * L + 1}, {2 * L + 1}, 1, 0}, {{9 * L + 5}, {}, 1, 0},
                                        {{2, 4 * L + 3}, {4 * L + 3}, 1, 0},
                                        {{3, 70}, {3, 3}, 1, 32}, {{5, 7}, {3, 7}, 0, 2},
                                        {{1}, {}, 1, 0}, {{0}, {}, 1, 0},
                                        // rows of whole groups with a scale each: one run of blocks
                                        {{5, 8 * L}, {5}, 0, 0}, {{2, 3, 4 * L}, {3}, 1, 0},
                                        // rows of more than a group, not whole groups: the last
                                        // group of a row again over elements done (rows of whole
                                        // bytes four at a time, odd rows from inside a byte),
                                        // short rows and blocks staged whole
                                        {{8, 5 * L + 4}, {5 * L + 4}, 1, 0}, {{6, 5 * L + 3}, {5 * L + 3}, 1, 0},
                                        {{5, 5 * L + 3}, {5}, 0, 0},
                                        {{4, 5 * L + 3}, {4, (7 * L + 2) / (2 * L)}, 1, 2 * L},
                                        {{4, 5 * L + 3}, {4, (6 * L + 2) / L}, 1, L},
                                        {{3, 3 * L + 1}, {2, 3 * L + 1}, 0, 2}};
  for (int32_t xt : inputs) {
    for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
      for (int32_t st : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_FLOAT8E8M0}) {
        for (size_t li = 0; li < layouts.size(); ++li) {
          CheckDequantize(xt, st, yt, layouts[li], li % 4, rng);
        }
      }
    }
  }
}

// float8e5m2 codes whose NaN codes (0x7D-0x7F, 0xFD-0xFF) first appear after some groups, or in
// the first, and then here and there: the groups before and after (decoded with and without the
// NaN fix) match the reference, NaN lanes included, per tensor, per column and in blocks of 32
// along rows of several groups.
TEST_P(KernelTest, Float8E5M2NaNCodesAfterFiniteGroups) {
  std::mt19937 rng(23);
  const int64_t L = lanes_, n = 40 * L + 8, w = n / 2;
  const std::vector<Layout2> layouts = {{{n}, {}, 0, 0}, {{2, w}, {w}, 1, 0}, {{2, w}, {2, (w + 31) / 32}, 1, 32}};
  for (int64_t first_nan : {int64_t{0}, 9 * L + 1, n - 1}) {
    std::vector<uint8_t> codes(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      uint8_t b = static_cast<uint8_t>(rng());
      if (i < first_nan && (b & 0x7F) > 0x7C) b = static_cast<uint8_t>((b & 0x80) | 0x7C);  // +-Inf before it
      codes[static_cast<size_t>(i)] = b;
    }
    codes[static_cast<size_t>(first_nan)] = first_nan % 2 == 0 ? 0xFD : 0x7F;
    SCOPED_TRACE("first NaN code at " + std::to_string(first_nan));
    for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
      for (const Layout2& l : layouts) {
        CheckDequantize(QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT, yt, l, 1, rng, &codes);
      }
    }
  }
}

// Zero points of every integer type, decoded a vector at a time from 64 of them on: a scale and
// zero point per column of x [4, D] (D odd, >= 64 + 4 lanes), range calls whose scale windows
// start on every field of a packed zero-point byte and end anywhere, DequantizeLinear and
// QuantizeLinear (whose reciprocal path also adds an offset to each zero point), against the
// reference of the whole tensor.
TEST_P(KernelTest, ZeroPointWindowsOfEveryIntegerType) {
  std::mt19937 rng(17);
  const int64_t D = 4 * lanes_ + 69, n = 4 * D;  // D % 4 == 1: row r starts on field r % 4
  const std::vector<int64_t> shape{4, D}, s_shape{D};
  for (int32_t t : kIntOutputs) {
    const int64_t per = Bits(t) < 8 ? 8 / Bits(t) : 1;
    const std::vector<uint8_t> sdata = MakeScales(QLINEAR_DTYPE_FLOAT, D, 0.05f, rng);
    const std::vector<uint8_t> zdata = MakeZeroPoints(t, D, rng);
    const qlinear_tensor sc{QLINEAR_DTYPE_FLOAT, 1, s_shape.data(), sdata.data()};
    const qlinear_tensor zp{t, 1, s_shape.data(), zdata.data()};
    // DequantizeLinear of random codes, QuantizeLinear of float32 x.
    std::vector<uint8_t> codes(Bytes(t, n));
    for (uint8_t& b : codes) b = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> xdata = MakeX(QLINEAR_DTYPE_FLOAT, n, 0.05f, rng);
    const qlinear_tensor q{t, 2, shape.data(), codes.data()};
    const qlinear_tensor x{QLINEAR_DTYPE_FLOAT, 2, shape.data(), xdata.data()};
    qlinear_dequantize_attrs da;
    qlinear_dequantize_attrs_init(&da);
    da.axis = 1;
    qlinear_quantize_attrs qa;
    qlinear_quantize_attrs_init(&qa);
    qa.axis = 1;
    DequantizePlan dplan;
    ASSERT_EQ(PlanDequantize(&q, &sc, &zp, &da, &dplan), QLINEAR_OK) << qlinear_last_error();
    std::vector<float> dwant(static_cast<size_t>(n));
    DequantizeReference(dplan, dwant.data(), 0, n);
    QuantizePlan qplan;
    ASSERT_EQ(PlanQuantize(&x, &sc, &zp, &qa, &qplan), QLINEAR_OK) << qlinear_last_error();
    std::vector<uint8_t> qwant(Bytes(t, n) + 1, 0);
    QuantizeReference(qplan, qwant.data(), 0, n);
    for (int64_t r = 0; r < 4; ++r) {
      for (int64_t c : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}, D - 70, D - 64, D - 1}) {
        const int64_t first = (r * D + c) / per * per;
        for (int64_t count : {n - first, int64_t{64}, int64_t{68}, D - c / per * per, 2 * D}) {
          count = std::min(count, n - first) / per * per;
          if (count < 0 || (first + count != n && count % per != 0)) continue;
          const std::string what = std::string(qlinear_dtype_name(t)) + " first " + std::to_string(first) +
                                   " count " + std::to_string(count);
          // (x->data points at element `first`: the caller's slice)
          const size_t at = static_cast<size_t>(first / per) * (Bits(t) >= 8 ? static_cast<size_t>(Bits(t) / 8) : 1);
          const qlinear_tensor q_slice{t, 2, shape.data(), codes.data() + at};
          const qlinear_tensor x_slice{QLINEAR_DTYPE_FLOAT, 2, shape.data(), xdata.data() + 4 * first};
          Buffer y(static_cast<size_t>(count) * 4, 1);
          ASSERT_EQ(qlinear_dequantize_linear_range(&q_slice, &sc, &zp, &da, first, count, y.data(), y.size()), QLINEAR_OK)
              << qlinear_last_error() << " " << what;
          ASSERT_TRUE(y.RedZonesIntact()) << what;
          ASSERT_EQ(std::memcmp(y.data(), dwant.data() + first, static_cast<size_t>(count) * 4), 0) << "dequantize " << what;
          const size_t qbytes = Bytes(t, count);
          Buffer qy(qbytes, 3);
          ASSERT_EQ(qlinear_quantize_linear_range(&x_slice, &sc, &zp, &qa, first, count, qy.data(), qbytes), QLINEAR_OK)
              << qlinear_last_error() << " " << what;
          ASSERT_TRUE(qy.RedZonesIntact()) << what;
          for (size_t i = 0; i < qbytes; ++i) {
            ASSERT_EQ(qy.data()[i], qwant[at + i]) << "quantize byte " << i << " " << what;
          }
        }
      }
    }
  }
}

TEST_P(KernelTest, DynamicQuantizeMatchesReference) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (int64_t n : SizesFor(lanes_)) {
    if (n <= 0) continue;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    if (n > 3) x[2] = std::numeric_limits<float>::quiet_NaN();
    const int64_t dims[1] = {n};
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, dims, x.data()};
    Buffer y(static_cast<size_t>(n), 1);
    float scale = 0;
    uint8_t zp = 0;
    ASSERT_EQ(qlinear_dynamic_quantize_linear(&tx, y.data(), static_cast<size_t>(n), &scale, &zp),
              QLINEAR_OK);
    ASSERT_TRUE(y.RedZonesIntact());
    float want_scale = 0;
    uint8_t want_zp = 0;
    DynamicScaleReference(x.data(), n, &want_scale, &want_zp);
    ASSERT_EQ(BitsOf(scale), BitsOf(want_scale));
    ASSERT_EQ(zp, want_zp);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t q = SaturateToInt(DivideInPrecision(Prec::kF32, x[i], want_scale), want_zp, 0, 255);
      ASSERT_EQ(y.data()[i], q) << i;
    }
  }
}

// DynamicQuantizeLinear's (lo, hi) and per-tensor ABSMAX's amax against their definitions, with
// the extremes placed anywhere (the range loops keep four vectors in chains of their own):
// scale and zero point of DynamicQuantizeLinear, the ABSMAX scale amax / 127 (one float32
// division: the exact quotient rounded once).
void CheckExtremes(const std::vector<float>& x, const std::string& where) {
  const int64_t n = static_cast<int64_t>(x.size());
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  std::vector<uint8_t> y(x.size());
  float scale = 0, want_scale = 0;
  uint8_t zp = 0, want_zp = 0;
  ASSERT_EQ(qlinear_dynamic_quantize_linear(&tx, y.data(), y.size(), &scale, &zp), QLINEAR_OK) << where;
  DynamicScaleReference(x.data(), n, &want_scale, &want_zp);
  ASSERT_EQ(BitsOf(scale), BitsOf(want_scale)) << where;
  ASSERT_EQ(zp, want_zp) << where;
  float amax = 0;
  for (float v : x) amax = std::isnan(v) ? amax : std::max(amax, std::fabs(v));
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT8;
  a.granularity = QLINEAR_GRANULARITY_TENSOR;
  a.block_size = 0;
  float absmax_scale = 0;
  ASSERT_EQ(qlinear_dynamic_scales(&tx, &a, nullptr, 0, &absmax_scale, sizeof absmax_scale, nullptr, 0), QLINEAR_OK)
      << where << ": " << qlinear_last_error();
  ASSERT_EQ(BitsOf(absmax_scale), BitsOf(amax / 127.0f)) << where;
}

TEST_P(KernelTest, RangesFindTheirExtremesAnywhere) {
  // The smallest and the largest element (and a NaN, which both leave out) at every
  // position, so that each lands in every chain, the one-vector loop and the scalar tail.
  const int64_t n = 9 * lanes_ + 3;
  for (int64_t p = 0; p < n; ++p) {
    std::vector<float> x(static_cast<size_t>(n), 0.5f);
    x[static_cast<size_t>(p)] = -7.25f;
    x[static_cast<size_t>((p + n / 2) % n)] = 3.0f;
    x[static_cast<size_t>((p + n / 3) % n)] = std::numeric_limits<float>::quiet_NaN();
    CheckExtremes(x, "n " + std::to_string(n) + ", min at " + std::to_string(p));
    x[static_cast<size_t>(p)] = 0.5f;
    x[static_cast<size_t>((p + n / 2) % n)] = 9.5f;  // the largest |x| positive, lo 0
    CheckExtremes(x, "n " + std::to_string(n) + ", max at " + std::to_string((p + n / 2) % n));
  }
}

}  // namespace
}  // namespace qlinear

namespace qlinear {
namespace {

// Quantizes the raw x bytes (n elements of xt) with a per-tensor scale (and zero point of type
// yt, if given) through the API on the forced target and through the reference; asserts
// identical bytes and intact red zones.
void CheckAgainstReference(int32_t xt, const std::vector<uint8_t>& xbytes, int64_t n, int32_t st,
                           const std::vector<uint8_t>& scale, int32_t yt, bool saturate, int opset,
                           const std::string& what, const uint8_t* zero_point = nullptr) {
  const int64_t dims[1] = {n};
  const qlinear_tensor x{xt, 1, dims, xbytes.data()};
  const qlinear_tensor sc{st, 0, nullptr, scale.data()};
  const qlinear_tensor zp{yt, 0, nullptr, zero_point};
  const qlinear_tensor* zpp = zero_point != nullptr ? &zp : nullptr;
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.opset = opset;
  a.output_dtype = yt;
  a.saturate = saturate;
  const size_t ybytes = Bytes(yt, n);
  Buffer y(ybytes, 1);
  ASSERT_EQ(qlinear_quantize_linear(&x, &sc, zpp, &a, y.data(), ybytes), QLINEAR_OK)
      << qlinear_last_error() << " " << what;
  ASSERT_TRUE(y.RedZonesIntact()) << what;
  QuantizePlan plan;
  ASSERT_EQ(PlanQuantize(&x, &sc, zpp, &a, &plan), QLINEAR_OK);
  std::vector<uint8_t> want(ybytes + 1);
  QuantizeReference(plan, want.data(), 0, n);
  for (size_t i = 0; i < ybytes; ++i) {
    if (y.data()[i] != want[i]) {
      const size_t per = Bits(yt) >= 8 ? 1 : static_cast<size_t>(8 / Bits(yt));
      char xs[64] = "";
      const size_t xsz = static_cast<size_t>(Bits(xt) / 8);
      uint32_t xv = 0;
      std::memcpy(&xv, xbytes.data() + i * per * xsz, xsz);
      std::snprintf(xs, sizeof(xs), "0x%x", xv);
      FAIL() << what << " -> " << qlinear_dtype_name(yt) << " sat " << saturate << ": byte " << i
             << " (first x " << xs << ") got 0x" << std::hex << int(y.data()[i]) << " want 0x"
             << int(want[i]);
    }
  }
}

const int32_t kAllOutputs[] = {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ,
                               QLINEAR_DTYPE_FLOAT8E5M2,   QLINEAR_DTYPE_FLOAT8E5M2FNUZ,
                               QLINEAR_DTYPE_FLOAT4E2M1,   QLINEAR_DTYPE_INT8,
                               QLINEAR_DTYPE_UINT8,        QLINEAR_DTYPE_INT16,
                               QLINEAR_DTYPE_UINT4,        QLINEAR_DTYPE_INT2};

std::vector<uint8_t> Half16(uint16_t h) { return {static_cast<uint8_t>(h), static_cast<uint8_t>(h >> 8)}; }
std::vector<uint8_t> F32Bytes(float f) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &f, 4);
  return b;
}

// Every float16 and bfloat16 bit pattern through every encoder: the division in the narrow
// precision (opset 19: scale of x's type) and in float32 (opset 23, float32 scale).
TEST_P(KernelTest, EveryHalfAndBFloat16PatternThroughEveryEncoder) {
  std::vector<uint8_t> all(65536 * 2);
  for (uint32_t v = 0; v < 65536; ++v) {
    all[2 * v] = static_cast<uint8_t>(v);
    all[2 * v + 1] = static_cast<uint8_t>(v >> 8);
  }
  for (int32_t yt : kAllOutputs) {
    for (bool sat : {true, false}) {
      if (!sat && FindDType(yt)->kind != Kind::kMiniFloat) continue;
      // scale 1 keeps every pattern; 0.375 rounds, and pushes values over the top.
      CheckAgainstReference(QLINEAR_DTYPE_FLOAT16, all, 65536, QLINEAR_DTYPE_FLOAT16, Half16(0x3C00), yt, sat, 25, "f16/f16(1)");
      CheckAgainstReference(QLINEAR_DTYPE_FLOAT16, all, 65536, QLINEAR_DTYPE_FLOAT16, Half16(0x3600), yt, sat, 25, "f16/f16(0.375)");
      CheckAgainstReference(QLINEAR_DTYPE_BFLOAT16, all, 65536, QLINEAR_DTYPE_BFLOAT16, Half16(0x3F80), yt, sat, 25, "bf16/bf16(1)");
      CheckAgainstReference(QLINEAR_DTYPE_BFLOAT16, all, 65536, QLINEAR_DTYPE_BFLOAT16, Half16(0x3EC0), yt, sat, 25, "bf16/bf16(0.375)");
      CheckAgainstReference(QLINEAR_DTYPE_FLOAT16, all, 65536, QLINEAR_DTYPE_FLOAT, F32Bytes(0.3f), yt, sat, 25, "f16/f32(0.3)");
      CheckAgainstReference(QLINEAR_DTYPE_BFLOAT16, all, 65536, QLINEAR_DTYPE_FLOAT, F32Bytes(1e-20f), yt, sat, 25, "bf16/f32(1e-20)");
    }
  }
}

// Every midpoint between adjacent float8/float4 values, its float32 neighbours, and the
// overflow ties (e.g. 464, 248, 61440), as float32 x with scale 1, saturate on and off.
TEST_P(KernelTest, EveryMiniFloatMidpointAndOverflowTie) {
  for (int32_t yt : {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ,
                     QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1}) {
    const DType t = static_cast<DType>(yt);
    const int codes = yt == QLINEAR_DTYPE_FLOAT4E2M1 ? 8 : 128;
    std::vector<float> x;
    for (int c = 0; c < codes; ++c) {
      const float lo = DecodeMiniFloat(t, static_cast<uint8_t>(c));
      float hi = c + 1 < codes ? DecodeMiniFloat(t, static_cast<uint8_t>(c + 1)) : NAN;
      if (!std::isfinite(lo)) continue;
      if (!std::isfinite(hi)) {  // the step above max: the overflow tie
        const MiniFormat& f = MiniFormatOf(t);
        hi = static_cast<float>(f.max_value + std::ldexp(1.0, static_cast<int>(std::floor(std::log2(f.max_value))) - f.mant_bits));
      }
      const float mid = (lo + hi) / 2;
      for (float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf), lo, hi}) {
        x.push_back(v);
        x.push_back(-v);
      }
    }
    std::vector<uint8_t> bytes(x.size() * 4);
    std::memcpy(bytes.data(), x.data(), bytes.size());
    for (bool sat : {true, false}) {
      CheckAgainstReference(QLINEAR_DTYPE_FLOAT, bytes, static_cast<int64_t>(x.size()), QLINEAR_DTYPE_FLOAT,
                            F32Bytes(1.0f), yt, sat, 25, "midpoints");
      CheckAgainstReference(QLINEAR_DTYPE_FLOAT, bytes, static_cast<int64_t>(x.size()), QLINEAR_DTYPE_FLOAT,
                            F32Bytes(0.5f), yt, sat, 25, "midpoints/0.5");
    }
  }
}

// Ties for the reciprocal path: x = (k + 1/2) * s rounded to float32 and its neighbours (1 and 2
// ulps), for many k and s, through the integer and float8 encoders on both exact paths forced.
TEST_P(KernelTest, TiesOnBothQuantizePaths) {
  const float scales[] = {1.0f, 3.0f, 0.1f, 1.0f / 255.0f, 5.0f / 255.0f, 0.0371f, 1e-3f, 7.3e5f,
                          0.02f, 0.7f, 1.17549435e-38f, 3.3e-30f, 123.456f, -0.25f, -0.0371f};
  for (float s : scales) {
    std::vector<float> x;
    for (int k = -40000; k <= 40000; k += (std::abs(k) < 300 ? 1 : 97)) {
      float v = (static_cast<float>(k) + 0.5f) * s;
      for (int u = 0; u < 2; ++u) v = std::nextafter(v, -kInf);
      for (int u = 0; u < 5; ++u, v = std::nextafter(v, kInf)) x.push_back(v);
    }
    std::vector<uint8_t> bytes(x.size() * 4);
    std::memcpy(bytes.data(), x.data(), bytes.size());
    const int64_t n = static_cast<int64_t>(x.size());
    for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
      SetQuantizePathForTest(path);
      for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_UINT16,
                         QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E5M2}) {
        CheckAgainstReference(QLINEAR_DTYPE_FLOAT, bytes, n, QLINEAR_DTYPE_FLOAT, F32Bytes(s), yt, true, 25,
                              std::string(path == QuantizePath::kDivision ? "division" : "reciprocal") +
                                  " ties, scale " + std::to_string(s));
      }
    }
    SetQuantizePathForTest(QuantizePath::kAuto);
  }
}

// Blocked layouts whose blocks hold ties of their own scales (and zero points of their own):
// on the reciprocal path four vectors of different blocks are encoded and flag-tested together,
// and each flagged vector must be redone by division with its own block's scale. Blocks of L,
// 2L, 3L, 4L and 32 elements along the last axis, rows that tile and rows that do not; per row
// half, 1/64 or none of the elements are near ties, so groups are flagged in every position.
TEST_P(KernelTest, BlockedTiesUseTheirBlocksScale) {
  const int64_t L = lanes_;
  struct Shape {
    int64_t rows, cols, block;
  };
  const Shape shapes[] = {{3, 8 * L, L},  {3, 8 * L + 3, 2 * L}, {6, 96, 32},      {3, 70, 32},
                          {3, 9 * L, 3 * L}, {3, 8 * L, 4 * L},  {3, 12 * L + 1, 3 * L}};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  for (const Shape& sh : shapes) {
    const int64_t nb = (sh.cols + sh.block - 1) / sh.block, n = sh.rows * sh.cols;
    std::vector<float> scales(static_cast<size_t>(sh.rows * nb)), x(static_cast<size_t>(n));
    for (float& s : scales) s = 0.01f + 0.001f * static_cast<float>(rng() % 97);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = i / sh.cols;
      const float s = scales[static_cast<size_t>(row * nb + (i % sh.cols) / sh.block)];
      const uint32_t tie_every = row % 3 == 0 ? 2 : row % 3 == 1 ? 64 : 0;
      float v = normal(rng) * s;
      if (tie_every != 0 && rng() % tie_every == 0) {
        v = (static_cast<float>(static_cast<int>(rng() % 301) - 150) + 0.5f) * s;
        if (rng() % 3 == 0) v = std::nextafter(v, rng() % 2 ? kInf : -kInf);
      }
      x[static_cast<size_t>(i)] = v;
    }
    const int64_t xs[2] = {sh.rows, sh.cols}, ss[2] = {sh.rows, nb};
    for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT2}) {
      const std::vector<uint8_t> zdata = MakeZeroPoints(yt, sh.rows * nb, rng);
      const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, xs, x.data()};
      const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 2, ss, scales.data()};
      const qlinear_tensor tz{yt, 2, ss, zdata.data()};
      qlinear_quantize_attrs a;
      qlinear_quantize_attrs_init(&a);
      a.axis = 1;
      a.block_size = sh.block;
      QuantizePlan plan;
      ASSERT_EQ(PlanQuantize(&tx, &ts, &tz, &a, &plan), QLINEAR_OK) << qlinear_last_error();
      const size_t ybytes = Bytes(yt, n);
      std::vector<uint8_t> want(ybytes + 1, 0), got(ybytes);
      QuantizeReference(plan, want.data(), 0, n);
      for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
        SetQuantizePathForTest(path);
        const qlinear_status st = qlinear_quantize_linear(&tx, &ts, &tz, &a, got.data(), ybytes);
        SetQuantizePathForTest(QuantizePath::kAuto);
        ASSERT_EQ(st, QLINEAR_OK) << qlinear_last_error();
        for (size_t i = 0; i < ybytes; ++i) {
          ASSERT_EQ(got[i], want[i]) << "byte " << i << " " << qlinear_dtype_name(yt) << " shape [" << sh.rows << ","
                                     << sh.cols << "] block " << sh.block << " path " << int(path);
        }
      }
    }
  }
}

// float4 adds its zero point after the division: for every zero point z (all 16 codes), x near
// (m - z) * s for every midpoint m between float4 values and for m = 0 (where the sign of
// q + z picks 0x0 or 0x8), and their float32 neighbours (4 ulps each way), on both exact paths.
TEST_P(KernelTest, Float4TiesWithEveryZeroPointOnBothPaths) {
  const float scales[] = {1.0f, 3.0f, 0.1f, 1.0f / 255.0f, 0.0371f, 7.3e5f, 1e-3f, -0.7f, 3.3e-30f};
  const float mids[] = {0.0f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f};
  for (uint8_t zcode = 0; zcode < 16; ++zcode) {
    const float z = DecodeMiniFloat(DType::kFloat4E2M1, zcode);
    for (float s : scales) {
      std::vector<float> x;
      for (float m : mids) {
        for (float sign : {1.0f, -1.0f}) {
          float v = (sign * m - z) * s;
          for (int u = 0; u < 4; ++u) v = std::nextafter(v, -kInf);
          for (int u = 0; u < 9; ++u, v = std::nextafter(v, kInf)) x.push_back(v);
        }
      }
      std::vector<uint8_t> bytes(x.size() * 4);
      std::memcpy(bytes.data(), x.data(), bytes.size());
      for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
        SetQuantizePathForTest(path);
        CheckAgainstReference(QLINEAR_DTYPE_FLOAT, bytes, static_cast<int64_t>(x.size()), QLINEAR_DTYPE_FLOAT,
                              F32Bytes(s), QLINEAR_DTYPE_FLOAT4E2M1, true, 25,
                              std::string(path == QuantizePath::kDivision ? "division" : "reciprocal") +
                                  " float4 ties, zp code " + std::to_string(zcode) + ", scale " + std::to_string(s),
                              &zcode);
      }
      SetQuantizePathForTest(QuantizePath::kAuto);
    }
  }
}

// Random float32 bit patterns (all exponents, NaNs and Infs included) through every encoder.
// QLINEAR_SWEEP_COUNT sets the count per encoder (the `long` ctest label runs 10^7).
TEST_P(KernelTest, RandomFloat32Sweep) {
  const char* env = std::getenv("QLINEAR_SWEEP_COUNT");
  const int64_t total = env ? std::atoll(env) : 100000;
  std::mt19937 rng(11);
  const int64_t batch = 1 << 20;
  for (int32_t yt : kAllOutputs) {
    for (bool sat : {true, false}) {
      if (!sat && FindDType(yt)->kind != Kind::kMiniFloat) continue;
      for (int64_t done = 0; done < total; done += batch) {
        const int64_t n = std::min(batch, total - done);
        std::vector<uint8_t> bytes(static_cast<size_t>(n) * 4);
        for (int64_t i = 0; i < n; ++i) {
          // Half the lanes anywhere, half near the format's range (exponents -20..20).
          uint32_t u = static_cast<uint32_t>(rng());
          if (i & 1) u = (u & 0x807FFFFFu) | ((107u + (u >> 23) % 40u) << 23);
          std::memcpy(&bytes[static_cast<size_t>(4 * i)], &u, 4);
        }
        CheckAgainstReference(QLINEAR_DTYPE_FLOAT, bytes, n, QLINEAR_DTYPE_FLOAT, F32Bytes(1.0f), yt, sat, 25, "sweep/1");
        CheckAgainstReference(QLINEAR_DTYPE_FLOAT, bytes, n, QLINEAR_DTYPE_FLOAT, F32Bytes(0.0371f), yt, sat, 25, "sweep/0.0371");
      }
    }
  }
}

// All 256 float8 codes and 16 float4 codes decoded on this target (DQ), every output type.
TEST_P(KernelTest, EveryMiniFloatCodeDecodes) {
  for (int32_t xt : {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ,
                     QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1}) {
    const int64_t n = xt == QLINEAR_DTYPE_FLOAT4E2M1 ? 16 : 256;
    std::vector<uint8_t> x(Bytes(xt, n));
    for (int64_t c = 0; c < n; ++c) {
      if (xt == QLINEAR_DTYPE_FLOAT4E2M1) x[c / 2] |= static_cast<uint8_t>(c << (4 * (c % 2)));
      else x[c] = static_cast<uint8_t>(c);
    }
    for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
      for (float s : {1.0f, 0.0371f, 1e-30f, 3e34f}) {
        const int64_t dims[1] = {n};
        const qlinear_tensor tx{xt, 1, dims, x.data()};
        const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
        qlinear_dequantize_attrs a;
        qlinear_dequantize_attrs_init(&a);
        a.output_dtype = yt;
        const size_t ybytes = Bytes(yt, n);
        Buffer y(ybytes, 3);
        ASSERT_EQ(qlinear_dequantize_linear(&tx, &ts, nullptr, &a, y.data(), ybytes), QLINEAR_OK);
        ASSERT_TRUE(y.RedZonesIntact());
        DequantizePlan plan;
        ASSERT_EQ(PlanDequantize(&tx, &ts, nullptr, &a, &plan), QLINEAR_OK);
        std::vector<uint8_t> want(ybytes);
        DequantizeReference(plan, want.data(), 0, n);
        ASSERT_EQ(std::vector<uint8_t>(y.data(), y.data() + ybytes), want)
            << qlinear_dtype_name(xt) << " -> " << qlinear_dtype_name(yt) << " s " << s;
      }
    }
  }
}

}  // namespace
}  // namespace qlinear
