// QuantizeLinear's backward pass (straight-through estimator): hand tables at the clamp bounds
// and ties, validation, and every target against the scalar reference (with and without a mask).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "lib/kernels.h"
#include "lib/minifloat.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "harness.h"
#include "test_util.h"

namespace qlinear {
namespace {

using test::F32;
using test::FromCodes;
using test::Scalar;
using test::ScalarF32;
using test::Tensor;

struct Backward {
  qlinear_status status;
  std::vector<float> dx;
  std::vector<uint8_t> mask;
};

Backward RunBackward(const Tensor& x, const Tensor& s, const Tensor* zp, qlinear_quantize_attrs a,
                     const std::vector<float>& dy, float lda) {
  Backward r;
  const qlinear_tensor cx = x.c(), cs = s.c();
  qlinear_tensor cz{};
  if (zp) cz = zp->c();
  const qlinear_tensor cdy{QLINEAR_DTYPE_FLOAT, cx.rank, cx.shape, dy.data()};
  r.dx.assign(dy.size(), -7.0f);
  r.status = qlinear_quantize_linear_backward(&cx, &cs, zp ? &cz : nullptr, &a, &cdy, lda, nullptr,
                                              0, r.dx.data(), r.dx.size() * 4);
  // The masked forward pass and a backward pass from its mask must agree.
  std::vector<uint8_t> y(dy.size() * 2 + 8);
  r.mask.assign((dy.size() + 7) / 8, 0xEE);
  EXPECT_EQ(qlinear_quantize_linear_masked(&cx, &cs, zp ? &cz : nullptr, &a, y.data(), y.size(),
                                           r.mask.data(), r.mask.size()),
            r.status);
  std::vector<float> dx2(dy.size(), -9.0f);
  EXPECT_EQ(qlinear_quantize_linear_backward(&cx, &cs, zp ? &cz : nullptr, &a, &cdy, lda,
                                             r.mask.data(), r.mask.size(), dx2.data(), dx2.size() * 4),
            r.status);
  if (r.status == QLINEAR_OK) {
    for (size_t i = 0; i < dx2.size(); ++i) EXPECT_EQ(BitsOf(dx2[i]), BitsOf(r.dx[i])) << i;
  }
  return r;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(Backward, IntegerClampBoundsAndTies) {
  // s = 0.5, int8, zp 0: q = 2x. 127.5 rounds to 128 (even): clamped; -128.5 rounds to -128:
  // not clamped; -129 clamped; NaN and Inf clamped.
  const Tensor x = F32({0.0f, 63.5f, 63.75f, 64.0f, -64.0f, -64.25f, -64.5f, kNaN, kInf, 10.0f});
  const std::vector<float> dy{1, 1, 1, 1, 1, 1, 1, 1, 1, -2};
  const Tensor zp = Scalar(QLINEAR_DTYPE_INT8, 0);
  const Backward b = RunBackward(x, ScalarF32(0.5f), &zp, test::QAttrs(), dy, 3.0f);
  ASSERT_EQ(b.status, QLINEAR_OK);
  EXPECT_EQ(b.dx, (std::vector<float>{6, 6, 0, 0, 6, 6, 0, 0, 0, -12}));
  EXPECT_EQ(b.mask, (std::vector<uint8_t>{0xCC, 0x01}));  // clamped: 2, 3, 6, 7 | 8
}

TEST(Backward, ZeroPointShiftsTheWindow) {
  // uint8 zp 250, s 1: round(x) + 250 <= 255 -> x <= 5.5 (5.5 rounds to 6: 256, clamped).
  const Tensor x = F32({5.0f, 5.4f, 5.5f, -250.0f, -250.5f, -250.6f});
  const Tensor zp = Scalar(QLINEAR_DTYPE_UINT8, 250);
  const Backward b = RunBackward(x, ScalarF32(1.0f), &zp, test::QAttrs(), {1, 1, 1, 1, 1, 1}, 1.0f);
  EXPECT_EQ(b.dx, (std::vector<float>{1, 1, 0, 1, 1, 0}));  // -250.5 -> -250 (even): 0, kept
}

TEST(Backward, Float8AndFloat4) {
  qlinear_quantize_attrs a = test::QAttrs();
  a.output_dtype = QLINEAR_DTYPE_FLOAT8E4M3FN;
  const Tensor x = F32({448.0f, 449.0f, -500.0f, kNaN, 0.001f, -448.0f});
  EXPECT_EQ(RunBackward(x, ScalarF32(1.0f), nullptr, a, {1, 1, 1, 1, 1, 1}, 1.0f).dx,
            (std::vector<float>{1, 0, 0, 0, 1, 1}));
  a.saturate = 0;  // values that overflow to NaN pass no gradient either
  EXPECT_EQ(RunBackward(x, ScalarF32(1.0f), nullptr, a, {1, 1, 1, 1, 1, 1}, 1.0f).dx,
            (std::vector<float>{1, 0, 0, 0, 1, 1}));
  // float4e2m1: the test applies to q + zp: zp 1.0 moves the top from 6 to 5.
  const Tensor zp4 = FromCodes(QLINEAR_DTYPE_FLOAT4E2M1, {0x2}, {});
  const Tensor x4 = F32({5.0f, 5.5f, -7.0f, -7.5f});
  EXPECT_EQ(RunBackward(x4, ScalarF32(1.0f), &zp4, test::QAttrs(), {1, 1, 1, 1}, 2.0f).dx,
            (std::vector<float>{2, 0, 2, 0}));
}

TEST(Backward, DividesByThePerAxisScale) {
  qlinear_quantize_attrs a = test::QAttrs();
  a.axis = 0;
  const Tensor x = F32({1, 2, 3, 4}, {2, 2});
  const Tensor s = F32({0.5f, 4.0f});
  const Tensor zp = test::Ints(QLINEAR_DTYPE_INT8, {0, 0});
  EXPECT_EQ(RunBackward(x, s, &zp, a, {1, 1, 1, 1}, 1.0f).dx, (std::vector<float>{2, 2, 0.25f, 0.25f}));
}

TEST(Backward, Validation) {
  const Tensor x = F32({1, 2, 3});
  const qlinear_tensor cx = x.c();
  const Tensor s = ScalarF32(1.0f);
  const qlinear_tensor cs = s.c();
  std::vector<float> dy(3, 1.0f), dx(3, 5.0f);
  const int64_t wrong[1] = {2};
  const qlinear_tensor bad_shape{QLINEAR_DTYPE_FLOAT, 1, wrong, dy.data()};
  EXPECT_EQ(qlinear_quantize_linear_backward(&cx, &cs, nullptr, nullptr, &bad_shape, 1, nullptr, 0, dx.data(), 12),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("dy:"), std::string::npos);
  const qlinear_tensor bad_type{QLINEAR_DTYPE_INT8, 1, x.shape.data(), dy.data()};
  EXPECT_EQ(qlinear_quantize_linear_backward(&cx, &cs, nullptr, nullptr, &bad_type, 1, nullptr, 0, dx.data(), 12),
            QLINEAR_UNSUPPORTED_TYPE);
  const qlinear_tensor cdy{QLINEAR_DTYPE_FLOAT, 1, x.shape.data(), dy.data()};
  EXPECT_EQ(qlinear_quantize_linear_backward(&cx, &cs, nullptr, nullptr, &cdy, 1, nullptr, 0, dx.data(), 11),
            QLINEAR_BUFFER_TOO_SMALL);
  uint8_t mask = 0;
  EXPECT_EQ(qlinear_quantize_linear_backward(&cx, &cs, nullptr, nullptr, &cdy, 1, &mask, 0, dx.data(), 12),
            QLINEAR_BUFFER_TOO_SMALL);
  EXPECT_NE(std::string(qlinear_last_error()).find("clamp_mask"), std::string::npos);
  EXPECT_EQ(qlinear_quantize_linear_backward(&cx, &cs, nullptr, nullptr, nullptr, 1, nullptr, 0, dx.data(), 12),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_EQ(dx, std::vector<float>(3, 5.0f));
  std::vector<uint8_t> y(3);
  EXPECT_EQ(qlinear_quantize_linear_masked(&cx, &cs, nullptr, nullptr, y.data(), 3, nullptr, 1),
            QLINEAR_INVALID_ARGUMENT);
}

// ---- every target against the reference ----------------------------------------------------

class BackwardTest : public hwy::TestWithParamTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(BackwardTest);

void CheckTarget(int32_t xt, int32_t yt, int32_t dyt, const std::vector<int64_t>& xs,
                 const std::vector<int64_t>& ss, int64_t axis, int64_t block, float lda,
                 std::mt19937& rng) {
  int64_t n = 1, sn = 1;
  for (int64_t d : xs) n *= d;
  for (int64_t d : ss) sn *= d;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t xsz = xt == QLINEAR_DTYPE_FLOAT ? 4 : 2, dsz = dyt == QLINEAR_DTYPE_FLOAT ? 4 : 2;
  std::vector<uint8_t> x(n * xsz), dy(n * dsz), scales(sn * 4), zps(sn * 2 + 2, 0);
  for (int64_t i = 0; i < n; ++i) {
    float v = normal(rng) * 20.0f;
    if (i % 11 == 0) v = std::nearbyint(v) + 0.5f;                   // ties
    if (i % 17 == 0) v = (i % 34 == 0) ? 127.5f * 0.25f : -128.5f * 0.25f;  // clamp bounds (s=0.25)
    if (i % 29 == 0) v = kNaN;
    const float d = normal(rng);
    if (xsz == 4) std::memcpy(&x[4 * i], &v, 4);
    else { const uint16_t h = Half::Encode(v); std::memcpy(&x[2 * i], &h, 2); }
    if (dsz == 4) std::memcpy(&dy[4 * i], &d, 4);
    else { const uint16_t h = dyt == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(d) : BFloat16::Encode(d); std::memcpy(&dy[2 * i], &h, 2); }
  }
  for (int64_t k = 0; k < sn; ++k) {
    const float v = k == 0 ? 0.25f : 0.05f + 0.01f * static_cast<float>(k % 9);
    std::memcpy(&scales[4 * k], &v, 4);
  }
  for (size_t k = 0; k < zps.size(); ++k) zps[k] = FindDType(yt)->kind == Kind::kInt ? static_cast<uint8_t>(rng() & 0x11) : 0;
  harness::QuantizeCall call({xt, xs, std::move(x)}, {QLINEAR_DTYPE_FLOAT, ss, std::move(scales)}, axis, block);
  call.SetZeroPoint({yt, ss, std::move(zps)});
  const harness::Tensor tdy{dyt, xs, std::move(dy)};
  const size_t misalign = static_cast<size_t>(n % 4);  // odd output addresses too
  ASSERT_EQ(harness::CheckBackward(call, tdy, lda, misalign), "")
      << qlinear_dtype_name(xt) << "->" << qlinear_dtype_name(yt) << " dy " << qlinear_dtype_name(dyt) << " n " << n;
}

TEST_P(BackwardTest, MatchesReference) {
  std::mt19937 rng(9);
  const int32_t outs[] = {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16,
                          QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_INT2, QLINEAR_DTYPE_FLOAT8E4M3FN,
                          QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  for (int32_t yt : outs) {
    for (int32_t dyt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
      for (int32_t xt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16}) {
        CheckTarget(xt, yt, dyt, {1037}, {}, 1, 0, 1.0f, rng);
        CheckTarget(xt, yt, dyt, {13, 19}, {19}, 1, 0, -0.75f, rng);      // per-axis, last axis
        CheckTarget(xt, yt, dyt, {13, 19}, {13}, 0, 0, 2.0f, rng);        // per-axis, outer axis
        CheckTarget(xt, yt, dyt, {5, 70}, {5, 3}, 1, 32, 1.0f, rng);      // blocked, last axis
        CheckTarget(xt, yt, dyt, {7, 9}, {4, 9}, 0, 2, 0.5f, rng);        // blocked, outer axis
      }
    }
  }
}

// The clamp mask of integer outputs beside the decision boundaries, where x * (1/s) and x / s
// can round apart: the float32 neighbours of (qmin - 0.5 - zp) s and (qmax + 0.5 - zp) s, for
// scales whose reciprocal is inexact, per tensor and in blocks of 32 (the block loop), against
// the rule computed here from the quotient x / s; the backward pass's dx from the same test.
TEST_P(BackwardTest, ClampMaskBesideTheBoundaries) {
  struct Out {
    int32_t type;
    int64_t qmin, qmax, zp;
  };
  const Out outs[] = {{QLINEAR_DTYPE_INT8, -128, 127, 0},      {QLINEAR_DTYPE_INT8, -128, 127, -3},
                      {QLINEAR_DTYPE_UINT8, 0, 255, 131},      {QLINEAR_DTYPE_INT16, -32768, 32767, -1000},
                      {QLINEAR_DTYPE_UINT16, 0, 65535, 65535}, {QLINEAR_DTYPE_UINT4, 0, 15, 5},
                      {QLINEAR_DTYPE_INT2, -2, 1, 0},          {QLINEAR_DTYPE_INT4, -8, 7, -8},
                      {QLINEAR_DTYPE_UINT2, 0, 3, 3},          {QLINEAR_DTYPE_INT8, -128, 127, 127},
                      {QLINEAR_DTYPE_INT16, -32768, 32767, -32768}};
  const float scales[] = {0.1f, 1.0f / 255.0f, 5.0f / 255.0f, 0.0371f, 1e-3f, 7.3e5f, 3.0f, 1e-30f};
  constexpr int kSide = 150;  // neighbours on each side of each boundary
  for (const Out& o : outs) {
    for (const float s : scales) {
      std::vector<float> x;
      for (const float boundary : {static_cast<float>(o.qmin - o.zp) - 0.5f, static_cast<float>(o.qmax - o.zp) + 0.5f}) {
        float v = boundary * s;
        for (int k = 0; k < kSide; ++k) v = std::nextafter(v, -kInf);
        for (int k = 0; k < 2 * kSide; ++k, v = std::nextafter(v, kInf)) x.push_back(v);
      }
      x.insert(x.end(), {kNaN, -kNaN, kInf, -kInf, 0.0f, -0.0f, s, -s});
      while (x.size() % 32 != 7) x.push_back(static_cast<float>(x.size() % 5) * s);
      const int64_t n = static_cast<int64_t>(x.size());
      std::vector<uint8_t> expected((n + 7) / 8, 0);
      for (int64_t i = 0; i < n; ++i) {
        const float q = x[i] / s;
        const double r = std::nearbyint(static_cast<double>(q));
        if (std::isnan(q) || r < static_cast<double>(o.qmin - o.zp) || r > static_cast<double>(o.qmax - o.zp)) {
          expected[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
        }
      }
      qlinear_quantize_attrs a = test::QAttrs();
      a.axis = 0;
      const Tensor xt = F32(x);
      const qlinear_tensor cx = xt.c();
      for (const int64_t block : {int64_t{0}, int64_t{32}}) {
        const int64_t groups = block == 0 ? 0 : (n + block - 1) / block;
        a.block_size = block;
        const Tensor st = block == 0 ? ScalarF32(s) : F32(std::vector<float>(groups, s));
        const Tensor zt = block == 0 ? Scalar(o.type, o.zp) : test::Ints(o.type, std::vector<int64_t>(groups, o.zp));
        const qlinear_tensor cs = st.c(), cz = zt.c();
        std::vector<uint8_t> y(2 * n), mask(expected.size(), 0xEE);
        ASSERT_EQ(qlinear_quantize_linear_masked(&cx, &cs, &cz, &a, y.data(), y.size(), mask.data(), mask.size()),
                  QLINEAR_OK)
            << qlinear_last_error();
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ((mask[i >> 3] >> (i & 7)) & 1, (expected[i >> 3] >> (i & 7)) & 1)
              << qlinear_dtype_name(o.type) << " zp " << o.zp << " s " << s << " block " << block << " x " << x[i]
              << " (element " << i << ")";
        }
        // The backward pass's own clamp test (no mask): dy = 1 gives 0 or 1/s.
        const std::vector<float> dy(static_cast<size_t>(n), 1.0f);
        std::vector<float> dx(static_cast<size_t>(n), -7.0f);
        const qlinear_tensor cdy{QLINEAR_DTYPE_FLOAT, 1, &n, dy.data()};
        ASSERT_EQ(qlinear_quantize_linear_backward(&cx, &cs, &cz, &a, &cdy, 1.0f, nullptr, 0, dx.data(), dx.size() * 4),
                  QLINEAR_OK)
            << qlinear_last_error();
        for (int64_t i = 0; i < n; ++i) {
          const float want = (expected[i >> 3] >> (i & 7)) & 1 ? 0.0f : 1.0f / s;
          ASSERT_EQ(BitsOf(dx[i]), BitsOf(want)) << qlinear_dtype_name(o.type) << " zp " << o.zp << " s " << s
                                                 << " block " << block << " x " << x[i] << " (element " << i << ")";
        }
      }
    }
  }
}

}  // namespace
}  // namespace qlinear
