// Hand-computed tables from the operator texts (docs/semantics.md), through the public C API.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "test_util.h"

namespace qlinear {
namespace test {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<int64_t> Q(const std::vector<float>& x, float scale, int32_t type, int64_t zp) {
  const Tensor tz = Scalar(type, zp);
  const Result r = Quantize(F32(x), ScalarF32(scale), tz);
  EXPECT_EQ(r.status, QLINEAR_OK) << r.message;
  return r.ints();
}

std::vector<uint32_t> QCodes(const std::vector<float>& x, float scale, int32_t type,
                             bool saturate = true) {
  qlinear_quantize_attrs a = QAttrs();
  a.output_dtype = type;
  a.saturate = saturate;
  const Result r = Quantize(F32(x), ScalarF32(scale), nullptr, a);
  EXPECT_EQ(r.status, QLINEAR_OK) << r.message;
  return r.codes;
}

using V = std::vector<int64_t>;
using C = std::vector<uint32_t>;

TEST(Rounding, TiesToEvenWithEvenAndOddZeroPoints) {
  const std::vector<float> x{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, -3.5f};
  EXPECT_EQ(Q(x, 1.0f, QLINEAR_DTYPE_INT8, 0), (V{0, 2, 2, 0, -2, -2, 4, -4}));
  EXPECT_EQ(Q(x, 1.0f, QLINEAR_DTYPE_INT8, 1), (V{1, 3, 3, 1, -1, -1, 5, -3}));
  EXPECT_EQ(Q(x, 1.0f, QLINEAR_DTYPE_INT8, -3), (V{-3, -1, -1, -3, -5, -5, 1, -7}));
  EXPECT_EQ(Q(x, 1.0f, QLINEAR_DTYPE_UINT8, 128), (V{128, 130, 130, 128, 126, 126, 132, 124}));
  // Ties reached through the division: x / 2.
  EXPECT_EQ(Q({1, 3, 5, -1, -3, -5}, 2.0f, QLINEAR_DTYPE_INT16, 7), (V{7, 9, 9, 7, 5, 5}));
  // sonos/tract #2672: [0.25, 0.75, 1.25, 1.75] / 0.5 -> [0, 2, 2, 4].
  EXPECT_EQ(Q({0.25f, 0.75f, 1.25f, 1.75f}, 0.5f, QLINEAR_DTYPE_UINT8, 0), (V{0, 2, 2, 4}));
  // Just off the tie: one ulp either side.
  EXPECT_EQ(Q({std::nextafter(2.5f, 0.0f), std::nextafter(2.5f, 3.0f)}, 1.0f, QLINEAR_DTYPE_INT8, 0),
            (V{2, 3}));
}

TEST(Rounding, DivisionNotReciprocal) {
  // test_dynamicquantizelinear's element: -2.5 / float32(5/255) = -127.49999 -> -127, while
  // -2.5 * (1 / s) = -127.5 -> -128.
  const float s = 5.0f / 255.0f;
  EXPECT_EQ(Q({-2.5f}, s, QLINEAR_DTYPE_INT8, 0), (V{-127}));
}

TEST(Saturation, BoundsPlusMinusOneUlp) {
  EXPECT_EQ(Q({127.0f, std::nextafter(127.5f, 0.0f), 127.5f, 128.0f, -128.0f, -128.5f,
               std::nextafter(-128.5f, -200.0f), -1e9f},
              1.0f, QLINEAR_DTYPE_INT8, 0),
            (V{127, 127, 127, 127, -128, -128, -128, -128}));
  EXPECT_EQ(Q({-0.5f, std::nextafter(-0.5f, -1.0f), 254.5f, 255.5f, 1e30f}, 1.0f,
              QLINEAR_DTYPE_UINT8, 0),
            (V{0, 0, 254, 255, 255}));
  EXPECT_EQ(Q({32766.5f, 32767.5f, -32768.5f, -32769.0f}, 1.0f, QLINEAR_DTYPE_INT16, 0),
            (V{32766, 32767, -32768, -32768}));
  EXPECT_EQ(Q({65534.5f, 65535.5f, -0.6f}, 1.0f, QLINEAR_DTYPE_UINT16, 0), (V{65534, 65535, 0}));
  EXPECT_EQ(Q({6.5f, 7.5f, -8.5f, -9.0f}, 1.0f, QLINEAR_DTYPE_INT4, 0), (V{6, 7, -8, -8}));
  EXPECT_EQ(Q({14.5f, 15.5f, -1.0f}, 1.0f, QLINEAR_DTYPE_UINT4, 0), (V{14, 15, 0}));
  EXPECT_EQ(Q({0.5f, 1.5f, -2.5f, -3.0f}, 1.0f, QLINEAR_DTYPE_INT2, 0), (V{0, 1, -2, -2}));
  EXPECT_EQ(Q({2.5f, 3.5f, -0.7f}, 1.0f, QLINEAR_DTYPE_UINT2, 0), (V{2, 3, 0}));
  // The zero point shifts the clamp window: 120 + 10 saturates, -130 + 10 does not.
  EXPECT_EQ(Q({120.0f, -130.0f, -140.0f}, 1.0f, QLINEAR_DTYPE_INT8, 10), (V{127, -120, -128}));
  // Quotients beyond int32 range saturate instead of wrapping.
  EXPECT_EQ(Q({3e9f, -3e9f, 1e38f}, 1.0f, QLINEAR_DTYPE_INT16, 0), (V{32767, -32768, 32767}));
}

TEST(SpecialValues, IntegerOutputs) {
  // +Inf -> qmax, -Inf -> qmin, NaN -> qmin, -0 -> zero point.
  EXPECT_EQ(Q({kInf, -kInf, kNaN, -kNaN, -0.0f}, 1.0f, QLINEAR_DTYPE_INT8, 3),
            (V{127, -128, -128, -128, 3}));
  EXPECT_EQ(Q({kInf, -kInf, kNaN, -0.0f}, 1.0f, QLINEAR_DTYPE_UINT8, 7), (V{255, 0, 0, 7}));
  // Scale 0: x/0 = +Inf, -Inf, NaN (0/0).
  EXPECT_EQ(Q({2.0f, -2.0f, 0.0f}, 0.0f, QLINEAR_DTYPE_INT8, 0), (V{127, -128, -128}));
  EXPECT_EQ(Q({2.0f, -2.0f}, -0.0f, QLINEAR_DTYPE_INT8, 0), (V{-128, 127}));
  // Negative scale flips the sign.
  EXPECT_EQ(Q({3.0f, -5.0f, 2.5f}, -1.0f, QLINEAR_DTYPE_INT8, 0), (V{-3, 5, -2}));
  // NaN scale.
  EXPECT_EQ(Q({1.0f}, kNaN, QLINEAR_DTYPE_UINT8, 9), (V{0}));
  // Denormals: x denormal -> 0; denormal scale -> huge quotient; tiny/huge scales.
  const float denorm = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(Q({denorm, -denorm, 1e-38f}, 1.0f, QLINEAR_DTYPE_INT8, 0), (V{0, 0, 0}));
  EXPECT_EQ(Q({1e-40f, -1e-40f, 7 * denorm}, denorm, QLINEAR_DTYPE_INT8, 0), (V{127, -128, 7}));
  EXPECT_EQ(Q({1e38f, 3e38f}, 1e38f, QLINEAR_DTYPE_INT8, 0), (V{1, 3}));
  EXPECT_EQ(Q({1e-30f}, 1e-32f, QLINEAR_DTYPE_INT8, 0), (V{100}));
}

// Independent float8/float4 decoder written from the format table (docs/semantics.md, "float8 outputs").
double DecodeRef(int32_t type, uint32_t c) {
  int e_bits, m_bits, bias, sign_shift;
  switch (type) {
    case QLINEAR_DTYPE_FLOAT8E4M3FN: e_bits = 4; m_bits = 3; bias = 7; break;
    case QLINEAR_DTYPE_FLOAT8E4M3FNUZ: e_bits = 4; m_bits = 3; bias = 8; break;
    case QLINEAR_DTYPE_FLOAT8E5M2: e_bits = 5; m_bits = 2; bias = 15; break;
    case QLINEAR_DTYPE_FLOAT8E5M2FNUZ: e_bits = 5; m_bits = 2; bias = 16; break;
    default: e_bits = 2; m_bits = 1; bias = 1; break;
  }
  sign_shift = e_bits + m_bits;
  const bool neg = (c >> sign_shift) & 1;
  const uint32_t e = (c >> m_bits) & ((1u << e_bits) - 1), m = c & ((1u << m_bits) - 1);
  const bool fnuz = type == QLINEAR_DTYPE_FLOAT8E4M3FNUZ || type == QLINEAR_DTYPE_FLOAT8E5M2FNUZ;
  if (fnuz && c == 0x80) return NAN;
  if (type == QLINEAR_DTYPE_FLOAT8E4M3FN && (c & 0x7F) == 0x7F) return NAN;
  if (type == QLINEAR_DTYPE_FLOAT8E5M2 && e == 31) return m ? NAN : (neg ? -INFINITY : INFINITY);
  const double mag = e == 0 ? std::ldexp(m, 1 - bias - m_bits)
                            : std::ldexp(1.0 + m / double(1 << m_bits), int(e) - bias);
  return neg ? -mag : mag;
}

const int32_t kMiniTypes[] = {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ,
                              QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT8E5M2FNUZ,
                              QLINEAR_DTYPE_FLOAT4E2M1};

TEST(MiniFloat, DecoderTableSpotChecks) {
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E4M3FN, 0x7E), 448.0);
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E4M3FN, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E4M3FN, 0x08), std::ldexp(1.0, -6));
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E4M3FNUZ, 0x7F), 240.0);
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E4M3FNUZ, 0x01), std::ldexp(1.0, -10));
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E5M2, 0x7B), 57344.0);
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E5M2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E5M2FNUZ, 0x7F), 57344.0);
  EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT8E5M2FNUZ, 0x01), std::ldexp(1.0, -17));
  const double fp4[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t c = 0; c < 8; ++c) {
    EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT4E2M1, c), fp4[c]);
    EXPECT_EQ(DecodeRef(QLINEAR_DTYPE_FLOAT4E2M1, c | 8), -fp4[c]);
  }
}

// Every code: DequantizeLinear decodes it exactly; QuantizeLinear re-encodes it.
TEST(MiniFloat, EveryCodeDecodesAndReencodes) {
  for (int32_t type : kMiniTypes) {
    const uint32_t n = type == QLINEAR_DTYPE_FLOAT4E2M1 ? 16 : 256;
    std::vector<uint32_t> codes;
    for (uint32_t c = 0; c < n; ++c) codes.push_back(c);
    const Tensor x = FromCodes(type, codes, {static_cast<int64_t>(n)});
    const Result dq = Dequantize(x, ScalarF32(1.0f), nullptr, DQAttrs());
    ASSERT_EQ(dq.status, QLINEAR_OK) << dq.message;
    const std::vector<float> values = dq.floats();
    for (uint32_t c = 0; c < n; ++c) {
      const double want = DecodeRef(type, c);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(values[c])) << qlinear_dtype_name(type) << " code " << c;
      } else {
        EXPECT_EQ(values[c], want) << qlinear_dtype_name(type) << " code " << c;
        EXPECT_EQ(std::signbit(values[c]), std::signbit(want));
      }
    }
    for (bool sat : {true, false}) {
      const C back = QCodes(values, 1.0f, type, sat);
      for (uint32_t c = 0; c < n; ++c) {
        if (std::isnan(DecodeRef(type, c))) continue;
        if (!sat && std::isinf(DecodeRef(type, c))) {
          EXPECT_EQ(back[c], c);  // e5m2 keeps Inf without saturation
          continue;
        }
        if (sat && std::isinf(DecodeRef(type, c))) {
          EXPECT_EQ(back[c], c == 0x7C ? 0x7Bu : 0xFBu);
          continue;
        }
        EXPECT_EQ(back[c], c) << qlinear_dtype_name(type) << " code " << c << " sat " << sat;
      }
    }
  }
}

// Midpoints between adjacent finite values round to the even code; one ulp off goes to the
// nearer neighbour. Saturation does not matter inside the range.
TEST(MiniFloat, EveryMidpointRoundsToEven) {
  for (int32_t type : kMiniTypes) {
    const uint32_t sign = type == QLINEAR_DTYPE_FLOAT4E2M1 ? 0x8 : 0x80;
    for (uint32_t c = 0; c + 1 < sign; ++c) {
      const double lo = DecodeRef(type, c), hi = DecodeRef(type, c + 1);
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const float mid = static_cast<float>((lo + hi) / 2);
      ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
      const uint32_t even = (c & 1) ? c + 1 : c;
      for (bool sat : {true, false}) {
        const C got = QCodes({mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), -mid,
                              -std::nextafter(mid, 0.0f)},
                             1.0f, type, sat);
        EXPECT_EQ(got[0], even) << qlinear_dtype_name(type) << " mid " << mid;
        EXPECT_EQ(got[1], c);
        EXPECT_EQ(got[2], c + 1);
        const uint32_t neg_even = even == 0 && (type == QLINEAR_DTYPE_FLOAT8E4M3FNUZ ||
                                                type == QLINEAR_DTYPE_FLOAT8E5M2FNUZ)
                                      ? 0
                                      : even | sign;
        EXPECT_EQ(got[3], neg_even) << qlinear_dtype_name(type) << " -mid " << mid;
        const uint32_t neg_c =
            c == 0 && (type == QLINEAR_DTYPE_FLOAT8E4M3FNUZ || type == QLINEAR_DTYPE_FLOAT8E5M2FNUZ)
                ? 0
                : c | sign;
        EXPECT_EQ(got[4], neg_c);
      }
    }
  }
}

TEST(MiniFloat, SaturateOnTable) {  // docs/semantics.md, "float8 outputs": saturate
  const std::vector<float> x{0.0f, -0.0f, kNaN, -kNaN, kInf, -kInf, 1e9f, -1e9f};
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E4M3FN),
            (C{0x00, 0x80, 0x7F, 0xFF, 0x7E, 0xFE, 0x7E, 0xFE}));
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E4M3FNUZ),
            (C{0x00, 0x00, 0x80, 0x80, 0x7F, 0xFF, 0x7F, 0xFF}));
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E5M2),
            (C{0x00, 0x80, 0x7E, 0xFE, 0x7B, 0xFB, 0x7B, 0xFB}));
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E5M2FNUZ),
            (C{0x00, 0x00, 0x80, 0x80, 0x7F, 0xFF, 0x7F, 0xFF}));
  // Clamp then round: the official e4m3fn case 100000/2 -> 0x7E; 50000 -> 49152 (e5m2 0x7A).
  EXPECT_EQ(QCodes({100000.0f}, 2, QLINEAR_DTYPE_FLOAT8E4M3FN), (C{0x7E}));
  EXPECT_EQ(QCodes({50000.0f}, 1, QLINEAR_DTYPE_FLOAT8E5M2), (C{0x7A}));
  EXPECT_EQ(QCodes({464.0f, 465.0f, 500.0f}, 1, QLINEAR_DTYPE_FLOAT8E4M3FN), (C{0x7E, 0x7E, 0x7E}));
}

TEST(MiniFloat, SaturateOffTable) {  // the same without saturation, and its thresholds
  const std::vector<float> x{0.0f, -0.0f, kNaN, -kNaN, kInf, -kInf};
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E4M3FN, false), (C{0x00, 0x80, 0x7F, 0xFF, 0x7F, 0xFF}));
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E4M3FNUZ, false), (C{0x00, 0x00, 0x80, 0x80, 0x80, 0x80}));
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E5M2, false), (C{0x00, 0x80, 0x7E, 0xFE, 0x7C, 0xFC}));
  EXPECT_EQ(QCodes(x, 1, QLINEAR_DTYPE_FLOAT8E5M2FNUZ, false), (C{0x00, 0x00, 0x80, 0x80, 0x80, 0x80}));
  // e4m3fn: |x| <= 464 -> 448, > 464 -> NaN.
  EXPECT_EQ(QCodes({464.0f, std::nextafter(464.0f, 1e9f), -465.0f}, 1, QLINEAR_DTYPE_FLOAT8E4M3FN,
                   false),
            (C{0x7E, 0x7F, 0xFF}));
  // e4m3fnuz: < 248 -> <= 240, >= 248 -> NaN (0x80).
  EXPECT_EQ(QCodes({std::nextafter(248.0f, 0.0f), 248.0f, -248.0f}, 1,
                   QLINEAR_DTYPE_FLOAT8E4M3FNUZ, false),
            (C{0x7F, 0x80, 0x80}));
  // e5m2: < 61440 -> <= 57344, >= 61440 -> Inf. e5m2fnuz: >= 61440 -> NaN.
  EXPECT_EQ(QCodes({std::nextafter(61440.0f, 0.0f), 61440.0f, -61440.0f}, 1,
                   QLINEAR_DTYPE_FLOAT8E5M2, false),
            (C{0x7B, 0x7C, 0xFC}));
  EXPECT_EQ(QCodes({std::nextafter(61440.0f, 0.0f), 61440.0f}, 1, QLINEAR_DTYPE_FLOAT8E5M2FNUZ,
                   false),
            (C{0x7F, 0x80}));
}

TEST(MiniFloat, Subnormals) {
  // e4m3fn smallest subnormal 2^-9: its half rounds to 0 (even), just above to 0x01.
  const float half = std::ldexp(1.0f, -10);
  EXPECT_EQ(QCodes({half, std::nextafter(half, 1.0f), -half, -std::nextafter(half, 1.0f),
                    std::ldexp(3.0f, -10)},
                   1, QLINEAR_DTYPE_FLOAT8E4M3FN),
            (C{0x00, 0x01, 0x80, 0x81, 0x02}));
  // fnuz never writes -0: negative underflow gives 0x00.
  EXPECT_EQ(QCodes({-std::ldexp(1.0f, -11), -std::ldexp(1.0f, -30)}, 1,
                   QLINEAR_DTYPE_FLOAT8E4M3FNUZ),
            (C{0x00, 0x00}));
  // e5m2 smallest subnormal 2^-16; 1.5 * 2^-16 is a tie between 0x01 and 0x02 -> 0x02.
  EXPECT_EQ(QCodes({std::ldexp(1.5f, -16), std::ldexp(1.0f, -17)}, 1, QLINEAR_DTYPE_FLOAT8E5M2),
            (C{0x02, 0x00}));
}

TEST(Float4, Table) {  // docs/semantics.md, "float4e2m1 output"
  EXPECT_EQ(QCodes({0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, std::nextafter(5.0f, 9.0f)}, 1,
                   QLINEAR_DTYPE_FLOAT4E2M1),
            (C{0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6, 0x7}));
  EXPECT_EQ(QCodes({7.0f, kInf, -kInf, -0.0f, -0.1f, kNaN, -kNaN}, 1, QLINEAR_DTYPE_FLOAT4E2M1),
            (C{0x7, 0x7, 0xF, 0x8, 0x8, 0x8, 0x0}));
  // saturate = 0 has no effect on float4.
  EXPECT_EQ(QCodes({100.0f, kInf}, 1, QLINEAR_DTYPE_FLOAT4E2M1, false), (C{0x7, 0x7}));
  // The zero point is added as a float before rounding: -0 + (+0) = +0; 1 + 0.5 = 1.5.
  const Tensor zp = FromCodes(QLINEAR_DTYPE_FLOAT4E2M1, {0x0}, {1});
  EXPECT_EQ(Quantize(F32({-0.0f, 2.0f}), ScalarF32(1), zp).codes, (C{0x0, 0x4}));
  const Tensor zp_half = FromCodes(QLINEAR_DTYPE_FLOAT4E2M1, {0x1}, {});
  EXPECT_EQ(Quantize(F32({1.0f, -0.25f, 5.5f}), ScalarF32(1), zp_half).codes,
            (C{0x3, 0x0, 0x7}));  // 1.5; 0.25 -> 0 (tie, even); 6
}

TEST(Packing, SubByteLayoutsFromTheSpec) {
  // docs/semantics.md, "Sub-byte packing": int4 [0,1,7,-4,-8] -> 0x10 0xC7 0x08; int2 [0,1,-1,-2] -> 0xB4;
  // uint2 [0,1,2,3] -> 0xE4; float4 [0,1,-1,1.5,-4] -> 0x20 0x3A 0x0E. Padding is zero
  // (the output buffer starts as 0xA5).
  EXPECT_EQ(Quantize(F32({0, 1, 7, -4, -8}), ScalarF32(1), Scalar(QLINEAR_DTYPE_INT4, 0)).bytes,
            (std::vector<uint8_t>{0x10, 0xC7, 0x08}));
  EXPECT_EQ(Quantize(F32({0, 1, -1, -2}), ScalarF32(1), Scalar(QLINEAR_DTYPE_INT2, 0)).bytes,
            (std::vector<uint8_t>{0xB4}));
  EXPECT_EQ(Quantize(F32({0, 1, 2, 3}), ScalarF32(1), Scalar(QLINEAR_DTYPE_UINT2, 0)).bytes,
            (std::vector<uint8_t>{0xE4}));
  EXPECT_EQ(Quantize(F32({0, 1, -1, 1.5f, -4}), ScalarF32(1), nullptr,
                     [] { auto a = QAttrs(); a.output_dtype = QLINEAR_DTYPE_FLOAT4E2M1; return a; }())
                .bytes,
            (std::vector<uint8_t>{0x20, 0x3A, 0x0E}));
  EXPECT_EQ(Quantize(F32({1, 2, 3, 1, 2, 3}), ScalarF32(1), Scalar(QLINEAR_DTYPE_UINT2, 0)).bytes,
            (std::vector<uint8_t>{0x79, 0x0E}));
  // Zero points are packed too: int4 zp [1,1,1] per axis.
  const Tensor zp = Ints(QLINEAR_DTYPE_INT4, {1, 1, 1});
  EXPECT_EQ(zp.bytes, (std::vector<uint8_t>{0x11, 0x01}));
  qlinear_quantize_attrs a = QAttrs();
  a.axis = 0;
  const Result r = Quantize(F32({1, 2, 3, 4, 5, 6}, {3, 2}), F32({1, 1, 1}), &zp, a);
  EXPECT_EQ(r.ints(), (V{2, 3, 4, 5, 6, 7}));
}

TEST(Precision, ScaleTypeAndPrecisionAttribute) {
  // ORT PR #32735's example: float16 x = 15.5, float32 scale 1.0003. Opset >= 23 divides in the
  // scale's type (float32): 15.495 -> 15; precision = float16 rounds the scale to 1.0 -> 16.
  const Tensor x = FromCodes(QLINEAR_DTYPE_FLOAT16, {0x4BC0}, {1});  // 15.5
  qlinear_quantize_attrs a = QAttrs(23);
  EXPECT_EQ(Quantize(x, ScalarF32(1.0003f), nullptr, a).ints(), (V{15}));
  a.precision = QLINEAR_DTYPE_FLOAT16;
  EXPECT_EQ(Quantize(x, ScalarF32(1.0003f), nullptr, a).ints(), (V{16}));
  // bfloat16 x = 304, scale 3 (opset 19: both bfloat16): 101.33 rounds to bfloat16 101.5 (its
  // ulp there is 0.5), then ties to 102; in float32 precision it is 101.
  const Tensor xb = FromCodes(QLINEAR_DTYPE_BFLOAT16, {0x4398}, {1});   // 304
  const Tensor sb = FromCodes(QLINEAR_DTYPE_BFLOAT16, {0x4040}, {});    // 3
  EXPECT_EQ(Quantize(xb, sb, nullptr, QAttrs(19)).ints(), (V{102}));
  qlinear_quantize_attrs a23 = QAttrs(23);
  a23.precision = QLINEAR_DTYPE_FLOAT;
  EXPECT_EQ(Quantize(xb, sb, nullptr, a23).ints(), (V{101}));
  // float16 division overflows to Inf -> qmax: 60000 / 0.5 in float16.
  const Tensor xh = FromCodes(QLINEAR_DTYPE_FLOAT16, {0x7B53}, {1});  // 60000
  const Tensor sh = FromCodes(QLINEAR_DTYPE_FLOAT16, {0x3800}, {});   // 0.5
  EXPECT_EQ(Quantize(xh, sh, nullptr, QAttrs(19)).ints(), (V{255}));
}

TEST(Precision, Int32InputsAndScales) {
  // 2^24 + 1 over 2^25: exactly 0.50000003 in float64 (-> 1); float32 rounds x to 2^24 (-> 0.5
  // -> 0). Opset 13 (int32 x, float scale) divides in float64; opset 23 in the scale's float32.
  const Tensor x = Ints(QLINEAR_DTYPE_INT32, {16777217});
  const Tensor s = ScalarF32(33554432.0f);
  EXPECT_EQ(Quantize(x, s, nullptr, QAttrs(13)).ints(), (V{1}));
  EXPECT_EQ(Quantize(x, s, nullptr, QAttrs(23)).ints(), (V{0}));
  // int32 scale (opsets 19+): true division in float64, not integer division.
  EXPECT_EQ(Quantize(Ints(QLINEAR_DTYPE_INT32, {7, -7, 5}), Scalar(QLINEAR_DTYPE_INT32, 2),
                     nullptr, QAttrs(19)).ints(),
            (V{4, 0, 2}));  // 3.5 -> 4, -3.5 -> -4 -> clamp 0 (uint8), 2.5 -> 2
  EXPECT_EQ(Quantize(Ints(QLINEAR_DTYPE_INT32, {5, -5, 0}), Scalar(QLINEAR_DTYPE_INT32, 0),
                     Scalar(QLINEAR_DTYPE_INT8, 0), 21).ints(),
            (V{127, -128, -128}));
}

TEST(Precision, Float8E8M0Scales) {
  qlinear_quantize_attrs a = QAttrs(24);
  const auto e8 = [](uint32_t code) { return FromCodes(QLINEAR_DTYPE_FLOAT8E8M0, {code}, {}); };
  EXPECT_EQ(Quantize(F32({3.0f, 5.0f}), e8(128), nullptr, a).ints(), (V{2, 2}));  // /2: 1.5, 2.5
  // 2^-127 is a float32 subnormal and must not be flushed: 3 * 2^-127 / 2^-127 = 3.
  EXPECT_EQ(Quantize(F32({std::ldexp(3.0f, -127)}), e8(0), nullptr, a).ints(), (V{3}));
  EXPECT_EQ(Quantize(F32({1.0f}), e8(0xFF), nullptr, a).ints(), (V{0}));  // NaN scale
  a.output_dtype = QLINEAR_DTYPE_FLOAT8E4M3FN;
  EXPECT_EQ(Quantize(F32({448.0f * 1024}), e8(127 + 10), nullptr, a).codes, (C{0x7E}));
}

// Per-axis and blocked against an odometer over coordinates (independent of the library's
// index arithmetic), every axis of ranks 1-5, int4 output so rows end mid-byte.
struct Odometer {
  std::vector<int64_t> shape, idx;
  explicit Odometer(std::vector<int64_t> s) : shape(std::move(s)), idx(shape.size(), 0) {}
  void Next() {
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) return;
      idx[d] = 0;
    }
  }
};

void CheckGranularity(const std::vector<int64_t>& shape, int64_t axis, int64_t block) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t a = axis < 0 ? axis + rank : axis;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 37) % 29) - 14.0f + 0.5f;
  std::vector<int64_t> sshape;
  if (block == 0) {
    sshape = {shape[a]};
  } else {
    sshape = shape;
    sshape[a] = (shape[a] + block - 1) / block;
  }
  int64_t sn = 1;
  for (int64_t d : sshape) sn *= d;
  std::vector<float> scales(static_cast<size_t>(sn));
  std::vector<int64_t> zps(static_cast<size_t>(sn));
  for (int64_t k = 0; k < sn; ++k) {
    scales[k] = 0.5f + 0.25f * static_cast<float>(k % 7);
    zps[k] = (k % 5) - 2;
  }
  const Tensor ts = F32(scales, sshape);
  const Tensor tz = Ints(QLINEAR_DTYPE_INT4, zps, sshape);
  qlinear_quantize_attrs attrs = QAttrs();
  attrs.axis = axis;
  attrs.block_size = block;
  const Result r = Quantize(F32(x, shape), ts, &tz, attrs);
  ASSERT_EQ(r.status, QLINEAR_OK) << r.message;
  const std::vector<int64_t> got = r.ints();
  Odometer od(shape);
  for (int64_t i = 0; i < n; ++i, od.Next()) {
    int64_t k = 0;  // scale index from coordinates
    if (block == 0) {
      k = od.idx[a];
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        k = k * sshape[d] + (d == a ? od.idx[d] / block : od.idx[d]);
      }
    }
    const double q = std::nearbyint(x[i] / scales[k]) + zps[k];
    const int64_t want = static_cast<int64_t>(std::min(7.0, std::max(-8.0, q)));
    ASSERT_EQ(got[i], want) << "rank " << rank << " axis " << axis << " block " << block
                            << " element " << i;
  }
  // DequantizeLinear with the same layout.
  qlinear_dequantize_attrs da = DQAttrs();
  da.axis = axis;
  da.block_size = block;
  const Tensor q = FromCodes(QLINEAR_DTYPE_INT4, r.codes, shape);
  const Result d = Dequantize(q, ts, &tz, da);
  ASSERT_EQ(d.status, QLINEAR_OK) << d.message;
  const std::vector<float> dq = d.floats();
  Odometer od2(shape);
  for (int64_t i = 0; i < n; ++i, od2.Next()) {
    int64_t k = 0;
    if (block == 0) {
      k = od2.idx[a];
    } else {
      for (int64_t dd = 0; dd < rank; ++dd) {
        k = k * sshape[dd] + (dd == a ? od2.idx[dd] / block : od2.idx[dd]);
      }
    }
    ASSERT_EQ(dq[i], static_cast<float>(got[i] - zps[k]) * scales[k]);
  }
}

TEST(Granularity, PerAxisEveryAxisRanks1To5) {
  const std::vector<int64_t> dims{3, 5, 2, 7, 3};
  for (size_t rank = 1; rank <= 5; ++rank) {
    const std::vector<int64_t> shape(dims.begin(), dims.begin() + rank);
    for (int64_t axis = -static_cast<int64_t>(rank); axis < static_cast<int64_t>(rank); ++axis) {
      if (shape[axis < 0 ? axis + rank : axis] == 1) continue;
      CheckGranularity(shape, axis, 0);
    }
  }
}

TEST(Granularity, BlockedWithShortLastBlocks) {
  const std::vector<int64_t> dims{5, 7, 3, 4};
  for (size_t rank = 1; rank <= 4; ++rank) {
    const std::vector<int64_t> shape(dims.begin(), dims.begin() + rank);
    for (int64_t axis = 0; axis < static_cast<int64_t>(rank); ++axis) {
      for (int64_t block : {1, 2, 3, 4, 8}) {
        CheckGranularity(shape, axis, block);
      }
    }
  }
}

TEST(Granularity, PerTensorMixesScalarAndOneElementShapes) {
  const Tensor x = F32({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(Quantize(x, F32({2.0f}, {1}), Scalar(QLINEAR_DTYPE_INT8, 1)).ints(), (V{1, 2, 3, 3}));
  EXPECT_EQ(Quantize(x, ScalarF32(2.0f), Ints(QLINEAR_DTYPE_INT8, {1}, {1, 1})).ints(),
            (V{1, 2, 3, 3}));
  // The default axis (1) is irrelevant for a per-tensor scale, even on a rank-1 or rank-0 x.
  EXPECT_EQ(Quantize(F32({5.0f}, {}), ScalarF32(1), Scalar(QLINEAR_DTYPE_UINT8, 0)).ints(), (V{5}));
}

TEST(Dequantize, Tables) {
  const Tensor s2 = ScalarF32(2.0f);
  const Tensor zu8 = Scalar(QLINEAR_DTYPE_UINT8, 128);
  EXPECT_EQ(Dequantize(Ints(QLINEAR_DTYPE_UINT8, {0, 3, 128, 255}), s2, &zu8, DQAttrs()).floats(),
            (std::vector<float>{-256, -250, 0, 254}));
  const Tensor zi4 = Scalar(QLINEAR_DTYPE_INT4, -1);
  EXPECT_EQ(Dequantize(Ints(QLINEAR_DTYPE_INT4, {-8, 7, 0}), s2, &zi4, DQAttrs()).floats(),
            (std::vector<float>{-14, 16, 2}));
  const Tensor zu2 = Scalar(QLINEAR_DTYPE_UINT2, 1);
  EXPECT_EQ(Dequantize(Ints(QLINEAR_DTYPE_UINT2, {0, 1, 2, 3, 3}), s2, &zu2, DQAttrs()).floats(),
            (std::vector<float>{-2, 0, 2, 4, 4}));
  // int32: float32(x) then one multiply (2^24 + 1 rounds to 2^24).
  EXPECT_EQ(Dequantize(Ints(QLINEAR_DTYPE_INT32, {16777217, -3}), ScalarF32(1.0f), nullptr,
                       DQAttrs(10)).floats(),
            (std::vector<float>{16777216.0f, -3.0f}));
  // bfloat16 output: one rounding of the float32 product, ties to even (257 -> 256, 259 -> 260).
  qlinear_dequantize_attrs a = DQAttrs(23);
  a.output_dtype = QLINEAR_DTYPE_BFLOAT16;
  EXPECT_EQ(Dequantize(Ints(QLINEAR_DTYPE_INT16, {257, 259, -257}), ScalarF32(1.0f), nullptr, a)
                .codes,
            (C{0x4380, 0x4382, 0xC380}));
  // float16 scale -> float16 output (opset 19): 3 * 0.1 (f16) = 0.2998... -> f16.
  const Tensor sh = FromCodes(QLINEAR_DTYPE_FLOAT16, {0x2E66}, {});  // 0.0999755859375
  EXPECT_EQ(Dequantize(Ints(QLINEAR_DTYPE_UINT8, {3}), sh, nullptr, DQAttrs(19)).codes,
            (C{0x34CC}));  // 0.29992675... rounds to 0x34CC (0.2998046875)
  // float8e8m0 scale with output_dtype: 2^-127 stays a float32 subnormal.
  qlinear_dequantize_attrs e = DQAttrs(24);
  e.output_dtype = QLINEAR_DTYPE_FLOAT;
  EXPECT_EQ(Dequantize(Ints(QLINEAR_DTYPE_INT8, {1, -3}),
                       FromCodes(QLINEAR_DTYPE_FLOAT8E8M0, {0}, {}), nullptr, e).floats(),
            (std::vector<float>{std::ldexp(1.0f, -127), std::ldexp(-3.0f, -127)}));
  // float8 input with a zero zero point (both +0 and -0 count as zero).
  const Tensor z8 = FromCodes(QLINEAR_DTYPE_FLOAT8E4M3FN, {0x80}, {1});
  EXPECT_EQ(Dequantize(FromCodes(QLINEAR_DTYPE_FLOAT8E4M3FN, {0x38, 0xFE}, {2}), s2, &z8,
                       DQAttrs()).floats(),
            (std::vector<float>{2.0f, -896.0f}));
}

TEST(Dynamic, ReferenceBehaviour) {
  const int64_t dims[1] = {4};
  const float x[4] = {0, 0, 0, 0};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, dims, x};
  uint8_t y[4] = {9, 9, 9, 9}, zp = 9;
  float scale = 0;
  ASSERT_EQ(qlinear_dynamic_quantize_linear(&tx, y, 4, &scale, &zp), QLINEAR_OK);
  EXPECT_EQ(scale, 1.0f / 255.0f);  // all-zero input: the reference's 1/255
  EXPECT_EQ(zp, 0);
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), std::vector<uint8_t>(4, 0));
  // All negative -> zero point 255; all positive -> 0.
  const float neg[4] = {-1, -2, -4, -0.5f};
  const qlinear_tensor tn{QLINEAR_DTYPE_FLOAT, 1, dims, neg};
  ASSERT_EQ(qlinear_dynamic_quantize_linear(&tn, y, 4, &scale, &zp), QLINEAR_OK);
  EXPECT_EQ(scale, 4.0f / 255.0f);
  EXPECT_EQ(zp, 255);
  EXPECT_EQ(y[2], 0);
  const float pos[4] = {1, 2, 4, 0.5f};
  const qlinear_tensor tp{QLINEAR_DTYPE_FLOAT, 1, dims, pos};
  ASSERT_EQ(qlinear_dynamic_quantize_linear(&tp, y, 4, &scale, &zp), QLINEAR_OK);
  EXPECT_EQ(zp, 0);
  EXPECT_EQ(y[2], 255);
  EXPECT_EQ(y[3], 32);  // 0.5 / (4/255) = 31.875 -> 32
  // NaN elements are ignored for the range and quantize to 0.
  const float with_nan[4] = {3, NAN, -1, 0};
  const qlinear_tensor tnan{QLINEAR_DTYPE_FLOAT, 1, dims, with_nan};
  ASSERT_EQ(qlinear_dynamic_quantize_linear(&tnan, y, 4, &scale, &zp), QLINEAR_OK);
  EXPECT_EQ(scale, 4.0f / 255.0f);
  EXPECT_EQ(zp, 64);  // 1 / (4/255) = 63.75 -> 64
  EXPECT_EQ(y[1], 0);
  // Edges where the formula is kept: an Inf element or a range beyond float32 makes the range
  // Inf (scale +Inf, zero point -lo / Inf = 0, y = x / Inf = 0 or NaN -> 0); subnormal elements
  // only (ranges 2 or 3 times 2^-149) give scale 0 (range / 255 rounds to 0): zero point -lo / 0 =
  // +Inf -> 255 with a negative element, else NaN -> 0; y: +x / 0 -> 255, -x / 0 and 0 / 0 -> 0.
  struct Edge {
    float x[4];
    float scale;
    uint8_t zp;
    uint8_t y[4];
  };
  const Edge edges[] = {
      {{-INFINITY, 2, -3, 0}, INFINITY, 0, {0, 0, 0, 0}},
      {{3e38f, -3e38f, 1, 0}, INFINITY, 0, {0, 0, 0, 0}},
      {{0x1p-148f, -0x1p-149f, 0, 0x1p-149f}, 0.0f, 255, {255, 0, 0, 255}},
      {{0x1p-148f, 0, 0, 0x1p-149f}, 0.0f, 0, {255, 0, 0, 255}},
  };
  for (const Edge& e : edges) {
    const qlinear_tensor te{QLINEAR_DTYPE_FLOAT, 1, dims, e.x};
    std::fill(y, y + 4, 9);
    ASSERT_EQ(qlinear_dynamic_quantize_linear(&te, y, 4, &scale, &zp), QLINEAR_OK);
    EXPECT_EQ(scale, e.scale) << e.x[0];
    EXPECT_EQ(zp, e.zp) << e.x[0];
    EXPECT_EQ(std::vector<uint8_t>(y, y + 4), std::vector<uint8_t>(e.y, e.y + 4)) << e.x[0];
  }
}

}  // namespace
}  // namespace test
}  // namespace qlinear
