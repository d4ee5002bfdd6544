// DequantizeLinear on every SIMD target against the scalar reference, bit for bit: every code of
// every input type with every zero point, every float8/float4 code with every e8m0 scale, scales
// that are NaN, +-Inf, +-0, subnormal and huge, and the weight layouts models ship (blocks of 16
// to 128 along the last and an outer axis, per-channel along either axis, packed per-block zero
// points) at sizes and row lengths that split bytes and vectors, through whole-tensor and range
// calls, with red zones after every output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "lib/kernels.h"
#include "lib/minifloat.h"
#include "tests/harness.h"
#include "tests/target_test.h"

namespace qlinear {
namespace {

using harness::CheckDequantize;
using harness::DequantizeCall;
using harness::Tensor;

class DequantizeTest : public PerTargetTest {
 protected:
  void CheckEveryMiniFloatCode(int64_t extra, int64_t rows, uint32_t stride);
};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(DequantizeTest);

int Bits(int32_t t) { return FindDType(t)->bits; }

// One code per element -> a packed tensor.
Tensor Codes(int32_t dtype, const std::vector<uint32_t>& codes, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int bits = Bits(dtype);
  t.bytes.assign(harness::StorageOf(dtype, static_cast<int64_t>(codes.size())), 0);
  for (size_t i = 0; i < codes.size(); ++i) {
    if (bits >= 8) {
      std::memcpy(t.bytes.data() + i * static_cast<size_t>(bits / 8), &codes[i], static_cast<size_t>(bits / 8));
    } else {
      t.bytes[i * bits / 8] |= static_cast<uint8_t>((codes[i] & ((1u << bits) - 1)) << (i * bits % 8));
    }
  }
  return t;
}

Tensor F32(const std::vector<float>& v, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = QLINEAR_DTYPE_FLOAT;
  t.shape = std::move(shape);
  t.bytes.resize(v.size() * 4);
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

// Scales of type st from float values (e8m0: the code is given as the value's exponent + 127).
Tensor Scales(int32_t st, const std::vector<float>& v, std::vector<int64_t> shape) {
  if (st == QLINEAR_DTYPE_FLOAT) return F32(v, std::move(shape));
  std::vector<uint32_t> codes;
  for (float f : v) {
    if (st == QLINEAR_DTYPE_FLOAT16) codes.push_back(Half::Encode(f));
    else if (st == QLINEAR_DTYPE_BFLOAT16) codes.push_back(BFloat16::Encode(f));
    else if (std::isnan(f)) codes.push_back(0xFF);
    else if (std::isinf(f) || f == 0.0f) codes.push_back(std::isinf(f) ? 254 : 0);  // ilogb: INT_MAX / INT_MIN
    else codes.push_back(static_cast<uint32_t>(std::max(0, std::min(254, std::ilogb(f) + 127))));
  }
  return Codes(st, codes, std::move(shape));
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const std::vector<float> kSpecialScales = {0.037f, -kNaN, kNaN, kInf, -kInf, 0.0f, -0.0f,
                                           std::numeric_limits<float>::denorm_min(), 1e-40f,
                                           std::numeric_limits<float>::min(), 3e37f, -0.7f, 1.0f, 2.5e-3f};

std::string Where(const DequantizeCall& c, const std::string& what) {
  std::string s = std::string(qlinear_dtype_name(c.x.dtype)) + " x " + qlinear_dtype_name(c.scale.dtype) + " -> " +
                  qlinear_dtype_name(c.attrs.output_dtype) + " shape [";
  for (int64_t d : c.x.shape) s += std::to_string(d) + ",";
  return s + "] axis " + std::to_string(c.attrs.axis) + " block " + std::to_string(c.attrs.block_size) + ": " + what;
}

const int32_t kOutputs[] = {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16};

// Rows of every code (odd row lengths: packed rows start inside bytes), row r with zero point r
// (every zero point of 4- and 2-bit types, a spread of the 8- and 16-bit ones) and a special
// scale; every output type.
TEST_P(DequantizeTest, EveryCodeWithEveryZeroPoint) {
  const int32_t types[] = {QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_INT2, QLINEAR_DTYPE_UINT2,
                           QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_UINT16};
  for (int32_t xt : types) {
    const int bits = Bits(xt);
    const uint32_t codes = bits >= 8 ? 256u : 1u << bits;  // 16-bit: the low 256 codes and their negatives
    const int64_t rows = bits >= 8 ? 19 : static_cast<int64_t>(codes);
    const int64_t n = 2 * static_cast<int64_t>(codes) + 4 * lanes_ + 3;
    std::vector<uint32_t> x, zp;
    std::vector<float> s;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        uint32_t c = static_cast<uint32_t>(i * 7 + r) % codes;
        if (bits == 16 && i % 2) c = 0x10000u - c;
        x.push_back(c);
      }
      zp.push_back(bits >= 8 ? static_cast<uint32_t>(r * 37 + (bits == 16 && r % 2 ? 0xFF00 : 0)) : static_cast<uint32_t>(r));
      s.push_back(kSpecialScales[static_cast<size_t>(r) % kSpecialScales.size()]);
    }
    DequantizeCall c(Codes(xt, x, {rows, n}), F32(s, {rows}), 0);
    c.SetZeroPoint(Codes(xt, zp, {rows}));
    for (int32_t yt : kOutputs) {
      c.attrs.output_dtype = yt;
      const std::string diff = CheckDequantize(c, 0, -1, static_cast<size_t>(yt % 4));
      ASSERT_EQ(diff, "") << Where(c, diff);
    }
  }
}

// 4- and 2-bit codes in spans long enough for the tables of outputs (x86), every output type:
// rows of random codes holding every code, each row with a finite edge scale (0, -0, subnormal, the smallest
// normal, products that overflow float16 or float32 or land on float16 subnormals, negative)
// and, for the integer types, every zero point; rows start inside bytes. Also range calls (from a
// byte off any vector boundary) and per-tensor calls with each scale.
TEST_P(DequantizeTest, PackedCodesInLongSpans) {
  if (!HWY_ARCH_X86) GTEST_SKIP() << "the tables are x86's";
  const std::vector<float> scales = {0.037f, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), 1e-40f,
                                     std::numeric_limits<float>::min(), 3e37f, 2e38f, -0.7f, 1.0f,
                                     1e4f, 6e-8f, -1e-6f};
  for (int32_t xt : {QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_DTYPE_INT2,
                     QLINEAR_DTYPE_UINT2}) {
    const bool zps = xt != QLINEAR_DTYPE_FLOAT4E2M1;
    const int64_t rows = static_cast<int64_t>(scales.size()) * (zps ? 16 : 1);
    const int64_t n = 8 * lanes_ + 301;
    std::vector<uint32_t> x, zp;
    std::vector<float> s;
    std::mt19937 rng(static_cast<uint32_t>(xt));
    for (int64_t r = 0; r < rows; ++r) {
      // Random codes (a periodic pattern would hide elements moved by its period), every code
      // among the first 16 of each row.
      for (int64_t i = 0; i < n; ++i) x.push_back(i < 16 ? static_cast<uint32_t>(i + r) % 16 : rng() % 16);
      s.push_back(scales[static_cast<size_t>(r) % scales.size()]);
      zp.push_back(static_cast<uint32_t>(r / static_cast<int64_t>(scales.size())));
    }
    DequantizeCall c(Codes(xt, x, {rows, n}), F32(s, {rows}), 0);
    if (zps) c.SetZeroPoint(Codes(xt, zp, {rows}));
    for (int32_t yt : kOutputs) {
      c.attrs.output_dtype = yt;
      const int64_t per = 8 / Bits(xt);  // a range starts on a byte and, short of the end, ends on one
      for (int64_t first : {int64_t{-1}, per, 2 * n + 2}) {
        const int64_t count = first < 0 ? -1 : (rows * n - first - 3) / per * per;
        const size_t misalign = static_cast<size_t>((first / per + 1) & 3);
        const std::string diff = CheckDequantize(c, std::max<int64_t>(first, 0), count, misalign);
        ASSERT_EQ(diff, "") << Where(c, diff) << " first " << first;
      }
    }
    for (float scale : scales) {
      const int64_t m = 4 * n + 1;
      std::vector<uint32_t> codes(x.begin(), x.begin() + m);
      DequantizeCall t(Codes(xt, codes, {m}), F32({scale}, {}), 0);
      if (zps) t.SetZeroPoint(Codes(xt, {static_cast<uint32_t>(codes[5])}, {}));
      for (int32_t yt : kOutputs) {
        t.attrs.output_dtype = yt;
        const std::string diff = CheckDequantize(t, 0, -1, 2);
        ASSERT_EQ(diff, "") << Where(t, diff) << " scale " << scale;
      }
    }
  }
}

// Every float8/float4 code, each row with its own e8m0 scale code (rows: codes 0..rows-1),
// every output type.
void DequantizeTest::CheckEveryMiniFloatCode(int64_t extra, int64_t rows, uint32_t stride) {
  const int32_t types[] = {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ, QLINEAR_DTYPE_FLOAT8E5M2,
                           QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  for (int32_t xt : types) {
    const uint32_t codes = 1u << Bits(xt);
    const int64_t n = static_cast<int64_t>(codes) + extra;  // odd: float4 rows start inside bytes
    std::vector<uint32_t> x, scale_codes;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < n; ++i) x.push_back(static_cast<uint32_t>(i * stride + r) % codes);
      scale_codes.push_back(static_cast<uint32_t>(r));
    }
    DequantizeCall c(Codes(xt, x, {rows, n}), Codes(QLINEAR_DTYPE_FLOAT8E8M0, scale_codes, {rows}), 0);
    for (int32_t yt : kOutputs) {
      c.attrs.output_dtype = yt;
      const std::string diff = CheckDequantize(c, 0, -1, 1);
      ASSERT_EQ(diff, "") << Where(c, diff);
    }
  }
}

// Scale codes 0..255; the NaN scale 0xFF sends the call to the reference.
TEST_P(DequantizeTest, EveryMiniFloatCodeWithEveryE8M0Scale) { CheckEveryMiniFloatCode(1, 256, 1); }

// Every finite e8m0 scale (2^-127 .. 2^127) in one call: the vector kernels run, so NaN codes
// reach their float16/bfloat16 stores.
TEST_P(DequantizeTest, EveryMiniFloatCodeWithFiniteE8M0Scales) {
  CheckEveryMiniFloatCode(4 * lanes_ + 1, 255, 3);
}

// Every float16 and bfloat16 scale code as a per-axis scale: once the finite codes alone (the
// vector kernels run on the decoded scales), once every code (a NaN or Inf scale sends the call to
// the reference). x = 3 with zero point 1 and a second row, so each scale is applied twice.
TEST_P(DequantizeTest, EveryHalfScaleCode) {
  for (int32_t st : {QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
    for (bool finite_only : {true, false}) {
      std::vector<uint32_t> scales;
      for (uint32_t code = 0; code < 0x10000u; ++code) {
        const uint32_t exp_all_ones = st == QLINEAR_DTYPE_FLOAT16 ? 0x7C00u : 0x7F80u;
        if (!finite_only || (code & exp_all_ones) != exp_all_ones) scales.push_back(code);
      }
      const int64_t n = static_cast<int64_t>(scales.size());
      std::vector<uint32_t> x(static_cast<size_t>(2 * n), 3), zp(static_cast<size_t>(n), 1);
      DequantizeCall c(Codes(QLINEAR_DTYPE_INT8, x, {2, n}), Codes(st, scales, {n}), 1, 0);
      c.SetZeroPoint(Codes(QLINEAR_DTYPE_INT8, zp, {n}));
      c.attrs.output_dtype = QLINEAR_DTYPE_FLOAT;
      const std::string diff = CheckDequantize(c, 0, -1, 0);
      ASSERT_EQ(diff, "") << Where(c, diff);
    }
  }
}

// The AVX-512 bfloat16 stores convert in hardware where the CPU can (g_cpu_converts_bf16,
// lib/kernels.h) and fall back to the integer rounding for pairs of vectors holding a subnormal.
// On such CPUs: every int8 code with finite edge scales (subnormal products, products that round
// up to Inf) both ways, and, with the integer rounding forced as other CPUs run it, every
// float8/float4 code with every finite e8m0 scale.
TEST_P(DequantizeTest, BFloat16OutputsWithAndWithoutTheHardwareConversion) {
  if (!HWY_ARCH_X86 || lanes_ != 16 || !g_cpu_converts_bf16) {
    GTEST_SKIP() << "no hardware conversion on this target or CPU: the other tests run the integer rounding";
  }
  struct Restore {
    bool saved = g_cpu_converts_bf16;
    ~Restore() { g_cpu_converts_bf16 = saved; }
  } restore;
  const std::vector<float> scales = {0.037f, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), 1e-40f,
                                     std::numeric_limits<float>::min(), 3e37f, -0.7f, 1.0f, 2.5e-3f,
                                     std::numeric_limits<float>::max() / 127.0f, 1e-39f};
  const int64_t rows = static_cast<int64_t>(scales.size()), n = 256 + 4 * lanes_ + 3;
  std::vector<uint32_t> x;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < n; ++i) x.push_back(static_cast<uint32_t>(i * 7 + r) % 256);
  }
  DequantizeCall c(Codes(QLINEAR_DTYPE_INT8, x, {rows, n}), F32(scales, {rows}), 0);
  c.attrs.output_dtype = QLINEAR_DTYPE_BFLOAT16;
  for (bool hardware : {true, false}) {
    g_cpu_converts_bf16 = hardware;
    const std::string diff = CheckDequantize(c, 0, -1, 3);
    ASSERT_EQ(diff, "") << Where(c, diff) << (hardware ? " (hardware conversion)" : " (integer rounding)");
  }
  CheckEveryMiniFloatCode(4 * lanes_ + 1, 255, 3);
}

// Where no product (x - zp) * scale can be a float32 subnormal (every nonzero |x - zp| times
// every nonzero |scale| >= 2^-126: QuantParams::normal_products), the AVX-512 bfloat16 stores
// convert in hardware without looking for subnormals. Every code of every input type with scales
// around each type's threshold (2^-126 over its smallest nonzero |x - zp|: 1, or the smallest
// float8/float4 subnormal), per tensor; and per axis, 70 scales (vector and scalar parts of the
// scale check) at 1.5 times the threshold, zeros among them, or one at half of it.
TEST_P(DequantizeTest, BFloat16HardwareConversionNearSubnormalProducts) {
  if (!HWY_ARCH_X86 || lanes_ != 16 || !g_cpu_converts_bf16) {
    GTEST_SKIP() << "no hardware conversion on this target or CPU: the other tests run the integer rounding";
  }
  struct Input {
    int32_t xt;
    int smallest;  // log2 of the smallest nonzero |x - zp|
    bool zero_point;
  };
  const Input inputs[] = {{QLINEAR_DTYPE_INT8, 0, true},       {QLINEAR_DTYPE_UINT8, 0, true},
                          {QLINEAR_DTYPE_INT16, 0, false},     {QLINEAR_DTYPE_UINT16, 0, true},
                          {QLINEAR_DTYPE_INT4, 0, false},      {QLINEAR_DTYPE_UINT4, 0, true},
                          {QLINEAR_DTYPE_INT2, 0, true},       {QLINEAR_DTYPE_UINT2, 0, false},
                          {QLINEAR_DTYPE_FLOAT8E4M3FN, -9, false}, {QLINEAR_DTYPE_FLOAT8E4M3FNUZ, -10, false},
                          {QLINEAR_DTYPE_FLOAT8E5M2, -16, false},  {QLINEAR_DTYPE_FLOAT8E5M2FNUZ, -17, false},
                          {QLINEAR_DTYPE_FLOAT4E2M1, -1, false}};
  for (const Input& in : inputs) {
    const int bits = Bits(in.xt);
    const uint32_t codes = bits >= 8 ? 256u : 1u << bits;  // 16-bit: the low 256 codes and their negatives
    const int64_t n = 2 * static_cast<int64_t>(codes) + 4 * lanes_ + 3;
    std::vector<uint32_t> x;
    for (int64_t i = 0; i < n; ++i) {
      uint32_t c = static_cast<uint32_t>(i * 7) % codes;
      if (bits == 16 && i % 2) c = 0x10000u - c;
      x.push_back(c);
    }
    const uint32_t zp = 1;  // x - zp is +-1 for the codes 0 and 2
    const int threshold = -126 - in.smallest;
    for (int k = threshold - 14; k <= threshold + 4; ++k) {
      const float p = std::ldexp(1.0f, k);
      for (float scale : {p, 1.5f * p, std::nextafter(p, 0.0f), -p, -1.5f * p}) {
        DequantizeCall c(Codes(in.xt, x, {n}), F32({scale}, {}), 0);
        if (in.zero_point) c.SetZeroPoint(Codes(in.xt, {zp}, {}));
        c.attrs.output_dtype = QLINEAR_DTYPE_BFLOAT16;
        const std::string diff = CheckDequantize(c, 0, -1, 1);
        ASSERT_EQ(diff, "") << Where(c, diff) << " scale 2^" << k << " " << scale;
      }
    }
    const int64_t rows = 70;
    const float at = std::ldexp(1.0f, threshold);
    std::vector<uint32_t> xs, zps(static_cast<size_t>(rows), zp);
    for (int64_t r = 0; r < rows; ++r) xs.insert(xs.end(), x.begin(), x.end());
    for (int64_t odd : {int64_t{-1}, int64_t{0}, int64_t{40}, int64_t{69}}) {
      std::vector<float> s(static_cast<size_t>(rows), 1.5f * at);
      if (odd < 0) {
        s[3] = 0.0f;
        s[66] = -0.0f;
      } else {
        s[static_cast<size_t>(odd)] = -0.5f * at;
      }
      DequantizeCall c(Codes(in.xt, xs, {rows, n}), F32(s, {rows}), 0);
      if (in.zero_point) c.SetZeroPoint(Codes(in.xt, zps, {rows}));
      c.attrs.output_dtype = QLINEAR_DTYPE_BFLOAT16;
      const std::string diff = CheckDequantize(c, 0, -1, 2);
      ASSERT_EQ(diff, "") << Where(c, diff) << " row " << odd << " at half the threshold";
    }
  }
}

// Where every product (x - zp) * scale is a bfloat16 value (QuantParams::bf16_products: the
// significant bits of |x - zp| and of the scales fit in bfloat16's 8), the bfloat16 stores keep
// the upper halves without rounding. Every code of the byte and narrow types, with its widest
// |x - zp|, times scales of 1 to 9 - (its bits) significant bits (1 and 2 for byte types): the
// last give products that round. Per tensor, in blocks of 32 along the last axis, and per row
// of 70 rows whose scales are powers of two but one, whose extra bits make products round: in
// the first, a higher and the last lane of the scale check's vectors (4, 8 or 16 lanes) or its
// scalar part. The AVX-512 conversion in hardware is turned off, as other CPUs run.
TEST_P(DequantizeTest, BFloat16OutputsOfProductsWithFewBits) {
  struct Restore {
    bool saved = g_cpu_converts_bf16;
    ~Restore() { g_cpu_converts_bf16 = saved; }
  } restore;
  g_cpu_converts_bf16 = false;
  struct Input {
    int32_t xt;
    int bits;     // significant bits of the widest |x - zp|
    int32_t zp;   // its code (-1: none)
  };
  const Input inputs[] = {{QLINEAR_DTYPE_INT8, 8, 0x80},         {QLINEAR_DTYPE_UINT8, 8, 0xFF},
                          {QLINEAR_DTYPE_INT4, 4, 0x8},          {QLINEAR_DTYPE_UINT4, 4, 0xF},
                          {QLINEAR_DTYPE_INT2, 2, 0x2},          {QLINEAR_DTYPE_UINT2, 2, -1},
                          {QLINEAR_DTYPE_FLOAT8E4M3FN, 4, -1},   {QLINEAR_DTYPE_FLOAT8E4M3FNUZ, 4, -1},
                          {QLINEAR_DTYPE_FLOAT8E5M2, 3, -1},     {QLINEAR_DTYPE_FLOAT8E5M2FNUZ, 3, -1},
                          {QLINEAR_DTYPE_FLOAT4E2M1, 2, -1}};
  for (const Input& in : inputs) {
    const uint32_t codes = Bits(in.xt) >= 8 ? 256u : 1u << Bits(in.xt);
    const int64_t n = 2 * static_cast<int64_t>(codes) + 4 * lanes_ + 3, blocks = (n + 31) / 32;
    std::vector<uint32_t> row;
    for (int64_t i = 0; i < n; ++i) row.push_back(static_cast<uint32_t>(i * 7) % codes);
    auto with_zero_point = [&](DequantizeCall& c, int64_t count) {
      if (in.zp < 0) return;
      c.SetZeroPoint(Codes(in.xt, std::vector<uint32_t>(static_cast<size_t>(count), static_cast<uint32_t>(in.zp)),
                           c.scale.shape));
    };
    for (int m = 1; m <= 9 - in.bits + (in.bits == 8); ++m) {
      // m significant bits, all ones, around 2^-3; the sign alternates by block.
      const float scale = std::ldexp(static_cast<float>((1 << m) - 1), -2 - m);
      DequantizeCall t(Codes(in.xt, row, {n}), F32({-scale}, {}), 0);
      with_zero_point(t, 1);
      std::vector<uint32_t> rows3;
      std::vector<float> bs;
      for (int r = 0; r < 3; ++r) rows3.insert(rows3.end(), row.begin(), row.end());
      for (int64_t b = 0; b < 3 * blocks; ++b) bs.push_back(b % 2 ? -scale : scale);
      DequantizeCall k(Codes(in.xt, rows3, {3, n}), F32(bs, {3, blocks}), 1);
      k.attrs.block_size = 32;
      with_zero_point(k, 3 * blocks);
      for (DequantizeCall* c : {&t, &k}) {
        c->attrs.output_dtype = QLINEAR_DTYPE_BFLOAT16;
        const std::string diff = CheckDequantize(*c, 0, -1, 1);
        ASSERT_EQ(diff, "") << Where(*c, diff) << " scale " << scale << " (" << m << " bits)";
      }
    }
    const int64_t rows = 70;
    std::vector<uint32_t> xs;
    for (int64_t r = 0; r < rows; ++r) xs.insert(xs.end(), row.begin(), row.end());
    for (int64_t odd : {int64_t{-1}, int64_t{0}, int64_t{41}, int64_t{47}, int64_t{69}}) {
      std::vector<float> s;
      for (int64_t r = 0; r < rows; ++r) s.push_back(std::ldexp(r % 3 ? 1.0f : -1.0f, static_cast<int>(r % 7) - 3));
      // 10 - bits significant bits: more than bfloat16's 8 in the widest products.
      if (odd >= 0) s[static_cast<size_t>(odd)] *= static_cast<float>((1 << (10 - in.bits)) - 1) / (1 << (9 - in.bits));
      DequantizeCall c(Codes(in.xt, xs, {rows, n}), F32(s, {rows}), 0);
      with_zero_point(c, rows);
      c.attrs.output_dtype = QLINEAR_DTYPE_BFLOAT16;
      const std::string diff = CheckDequantize(c, 0, -1, 2);
      ASSERT_EQ(diff, "") << Where(c, diff) << " row " << odd << " with more scale bits";
    }
  }
}

struct WeightLayout {
  std::vector<int64_t> x_shape, s_shape;  // s_shape empty: per tensor
  int64_t axis, block;
};

// The layouts of quantized weights at sizes that split vectors, blocks and bytes, each type
// with scales of each type and each output type, whole and in ranges.
TEST_P(DequantizeTest, WeightLayoutsAndRanges) {
  const int64_t L = lanes_;
  const int64_t K = 3 * L + 5;  // rows, not a multiple of the vector or of the blocks below
  auto blocks = [](int64_t d, int64_t b) { return (d + b - 1) / b; };
  std::vector<WeightLayout> layouts = {
      {{8 * L + 3}, {}, 1, 0},                      // per tensor, a partial vector
      {{K, 4 * L + 2}, {K}, 0, 0},                  // per channel, axis 0
      {{5, 8 * L + 6}, {8 * L + 6}, 1, 0},          // per channel, the last axis
      {{6, 4 * L + 3}, {4 * L + 3}, 1, 0},          // the same with odd rows (inside bytes)
  };
  for (int64_t b : {int64_t{16}, int64_t{32}, int64_t{64}, int64_t{128}}) {
    const int64_t cols = 2 * b + 6;  // a short last block; rows join within no vector
    layouts.push_back({{3, cols}, {3, blocks(cols, b)}, 1, b});                 // blocks along the last axis
    layouts.push_back({{3, 4 * b}, {3, 4}, 1, b});                              // blocks that tile the rows
    layouts.push_back({{b + 5, 4 * L + 2}, {blocks(b + 5, b), 4 * L + 2}, 0, b});  // along the outer axis
  }
  struct Weight {
    int32_t xt;
    bool zero_point;
  };
  const Weight weights[] = {{QLINEAR_DTYPE_INT4, false}, {QLINEAR_DTYPE_UINT4, true}, {QLINEAR_DTYPE_INT2, true},
                            {QLINEAR_DTYPE_UINT2, false}, {QLINEAR_DTYPE_FLOAT4E2M1, false},
                            {QLINEAR_DTYPE_FLOAT8E4M3FN, false}, {QLINEAR_DTYPE_FLOAT8E5M2, false},
                            {QLINEAR_DTYPE_INT8, true}};
  const int32_t scale_types[] = {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16,
                                 QLINEAR_DTYPE_FLOAT8E8M0};
  std::mt19937 rng(17);
  int turn = 0;
  for (const WeightLayout& l : layouts) {
    for (const Weight& w : weights) {
      ++turn;
      int64_t n = 1, sn = 1;
      for (int64_t d : l.x_shape) n *= d;
      for (int64_t d : l.s_shape) sn *= d;
      std::vector<uint32_t> x(static_cast<size_t>(n)), zp(static_cast<size_t>(sn));
      for (uint32_t& v : x) v = rng();
      for (uint32_t& v : zp) v = rng();
      std::vector<float> s(static_cast<size_t>(sn));
      std::uniform_real_distribution<float> mag(0.01f, 4.0f);
      for (size_t k = 0; k < s.size(); ++k) s[k] = k % 11 == 5 ? kSpecialScales[k % kSpecialScales.size()] : mag(rng);
      DequantizeCall c(Codes(w.xt, x, l.x_shape), Scales(scale_types[turn % 4], s, l.s_shape), l.axis, l.block);
      if (w.zero_point) c.SetZeroPoint(Codes(w.xt, zp, l.s_shape));
      c.attrs.output_dtype = kOutputs[turn % 3];
      std::string diff = CheckDequantize(c, 0, -1, static_cast<size_t>(turn));
      ASSERT_EQ(diff, "") << Where(c, diff);
      // Ranges on byte boundaries: from inside the first row or block to inside a later one.
      const int64_t per = Bits(w.xt) >= 8 ? 1 : 8 / Bits(w.xt);
      for (int64_t first : {per, 4 * L, n / 3 / per * per, (n - 2 * per) / per * per}) {
        if (first < 0 || first > n) continue;
        for (int64_t count : {n - first, std::min<int64_t>(n - first, 3 * L * per)}) {
          diff = CheckDequantize(c, first, count, static_cast<size_t>(first % 5));
          ASSERT_EQ(diff, "") << Where(c, "range [" + std::to_string(first) + ", +" + std::to_string(count) + ") " + diff);
        }
      }
    }
  }
}

// 8-bit codes (integers, float8) into float32 with a scale per element of a row: per column and
// in blocks along the outer axis (rows that share their scales, then rows that do not; blocks of
// one row share none), rows up to and longer than those whose scales the loops copy (2048), with
// and without zero points (float8: +0 and -0, the only ones allowed, which the loops do not
// read), whole and from inside a row. Finite scales, so that the vector loops run (a NaN or Inf
// scale sends a call to the reference), tiny and negative ones included.
TEST_P(DequantizeTest, ByteCodesWithAScalePerElementOfARow) {
  const int64_t L = lanes_;
  struct Layout {
    int64_t rows, cols, block;  // block 0: per column
  };
  const Layout layouts[] = {{7, 4 * L + 3, 0}, {5, 2048, 0}, {4, 2048 + L + 1, 0}, {9, 64 * L, 4},
                            {11, 8 * L + 5, 4}, {6, 2048, 3}, {5, 2049, 2}, {5, 3 * L + 1, 1}};
  const float tiny[] = {std::numeric_limits<float>::denorm_min(), 1e-40f, std::numeric_limits<float>::min(), -0.7f,
                        3e37f, -0.0f, 0.0f};
  std::mt19937 rng(29);
  for (const Layout& l : layouts) {
    for (int32_t xt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E5M2}) {
      const bool integer = xt == QLINEAR_DTYPE_INT8 || xt == QLINEAR_DTYPE_UINT8;
      for (bool zero_point : {false, true}) {
        const int64_t n = l.rows * l.cols;
        const int64_t srows = l.block == 0 ? 1 : (l.rows + l.block - 1) / l.block;
        std::vector<int64_t> s_shape = l.block == 0 ? std::vector<int64_t>{l.cols} : std::vector<int64_t>{srows, l.cols};
        const int64_t sn = srows * l.cols;
        std::vector<uint32_t> x(static_cast<size_t>(n)), zp(static_cast<size_t>(sn));
        for (uint32_t& v : x) v = rng();
        for (uint32_t& v : zp) v = integer ? rng() : (rng() & 1) << 7;  // float8: +0 and -0
        std::vector<float> s(static_cast<size_t>(sn));
        std::uniform_real_distribution<float> mag(-4.0f, 4.0f);
        for (size_t k = 0; k < s.size(); ++k) s[k] = k % 13 == 7 ? tiny[k / 13 % 7] : mag(rng);
        // A zero scale sends float8e5m2 calls to the reference: not here.
        if (!integer) std::replace(s.begin(), s.end(), 0.0f, 0.375f);
        DequantizeCall c(Codes(xt, x, {l.rows, l.cols}), F32(s, s_shape), l.block == 0 ? 1 : 0, l.block);
        if (zero_point) c.SetZeroPoint(Codes(xt, zp, s_shape));
        c.attrs.output_dtype = QLINEAR_DTYPE_FLOAT;
        std::string diff = CheckDequantize(c);
        ASSERT_EQ(diff, "") << Where(c, diff);
        for (int64_t first : {l.cols / 2, l.cols, 2 * l.cols + 1}) {
          for (int64_t count : {n - first, std::min(n - first, l.cols + L)}) {
            diff = CheckDequantize(c, first, count, static_cast<size_t>(first % 3) * 4);
            ASSERT_EQ(diff, "") << Where(c, "range [" + std::to_string(first) + ", +" + std::to_string(count) + ") " + diff);
          }
        }
      }
    }
  }
}

// float8/float4 codes in the weight layouts with scales below 2^100 (the loops fold the
// decoder's power of two into each scale: MiniFloatDecoder::kFoldShift), and once more with one
// scale of 2^100 (they do not): every code, negative, subnormal and tiny scales, every output.
TEST_P(DequantizeTest, MiniFloatCodesWithModerateAndLargeScales) {
  const int64_t L = lanes_;
  auto blocks = [](int64_t d, int64_t b) { return (d + b - 1) / b; };
  std::vector<WeightLayout> layouts = {
      {{16 * L + 3}, {}, 1, 0},             // per tensor
      {{7, 4 * L + 2}, {7}, 0, 0},          // per row
      {{5, 8 * L + 6}, {8 * L + 6}, 1, 0},  // per column: rows of four share the scales
  };
  for (int64_t b : {int64_t{16}, int64_t{32}, int64_t{64}}) {
    layouts.push_back({{3, 4 * b + 6}, {3, blocks(4 * b + 6, b)}, 1, b});
    layouts.push_back({{b + 5, 4 * L + 2}, {blocks(b + 5, b), 4 * L + 2}, 0, b});
  }
  const int32_t types[] = {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ, QLINEAR_DTYPE_FLOAT8E5M2,
                           QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  const float moderate[] = {0.037f, -0.7f, 1e-40f, std::numeric_limits<float>::min(), 0x1.fffffep99f,
                            3.0f, -2.5e-3f, std::numeric_limits<float>::denorm_min()};
  int turn = 0;
  for (const WeightLayout& l : layouts) {
    for (int32_t xt : types) {
      for (bool large : {false, true}) {
        ++turn;
        int64_t n = 1, sn = 1;
        for (int64_t d : l.x_shape) n *= d;
        for (int64_t d : l.s_shape) sn *= d;
        const uint32_t codes = 1u << Bits(xt);
        std::vector<uint32_t> x(static_cast<size_t>(n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint32_t>(i * 37 + 11) % codes;
        std::vector<float> s(static_cast<size_t>(sn));
        for (size_t k = 0; k < s.size(); ++k) s[k] = moderate[(k + static_cast<size_t>(turn)) % 8];
        if (large) s.back() = 0x1p100f;
        const int32_t st = turn % 2 ? QLINEAR_DTYPE_FLOAT : QLINEAR_DTYPE_FLOAT8E8M0;
        DequantizeCall c(Codes(xt, x, l.x_shape), Scales(st, s, l.s_shape), l.axis, l.block);
        for (int32_t yt : kOutputs) {
          c.attrs.output_dtype = yt;
          const std::string diff = CheckDequantize(c, 0, -1, static_cast<size_t>(turn));
          ASSERT_EQ(diff, "") << Where(c, std::string(large ? "a scale of 2^100: " : "") + diff);
        }
      }
    }
  }
}

}  // namespace
}  // namespace qlinear
