// The sign of a NaN that the arithmetic itself makes (qlinear.h, "NaN results"): x86's default
// NaN is negative and ARM's positive, so 0/0 gave float8e4m3fn 0xFF on one and 0x7F on the
// other. The expected bytes here come from a table of the rule (no division is computed), for
// every quantized output type, both QuantizeLinear paths, DequantizeLinear and the backward
// pass, on every target (and under qemu on every emulated ARM CPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "lib/kernels.h"
#include "qlinear/qlinear.h"
#include "tests/target_test.h"

namespace qlinear {
namespace {

// A special value by class: what the rule needs to know of an operand or a result.
enum class Kind { kZero, kOne, kInf, kNaN };
struct Value {
  Kind kind;
  bool neg;
};

const Value kOperands[] = {{Kind::kZero, false}, {Kind::kZero, true}, {Kind::kInf, false}, {Kind::kInf, true},
                           {Kind::kNaN, false},  {Kind::kNaN, true},  {Kind::kOne, false}, {Kind::kOne, true}};
constexpr int kCount = 8;

uint32_t F32Bits(Value v) {
  const uint32_t sign = v.neg ? 0x80000000u : 0u;
  switch (v.kind) {
    case Kind::kZero: return sign;
    case Kind::kOne: return sign | 0x3F800000u;
    case Kind::kInf: return sign | 0x7F800000u;
    case Kind::kNaN: return sign | 0x7FC00000u;
  }
  return 0;
}
uint16_t F16Bits(Value v) {
  const uint16_t sign = v.neg ? 0x8000 : 0;
  switch (v.kind) {
    case Kind::kZero: return sign;
    case Kind::kOne: return sign | 0x3C00;
    case Kind::kInf: return sign | 0x7C00;
    case Kind::kNaN: return sign | 0x7E00;
  }
  return 0;
}
uint16_t BF16Bits(Value v) { return static_cast<uint16_t>(F32Bits(v) >> 16); }

// a / b and a * b by the rule: a NaN operand's sign (the first one's), else 0/0, Inf/Inf, 0*Inf
// are positive NaNs; otherwise the IEEE result, its sign the XOR of the operands'.
Value Divide(Value a, Value b) {
  if (a.kind == Kind::kNaN) return a;
  if (b.kind == Kind::kNaN) return b;
  const bool neg = a.neg != b.neg;
  if (a.kind == b.kind && a.kind != Kind::kOne) return {Kind::kNaN, false};  // 0/0, Inf/Inf
  if (a.kind == Kind::kZero || b.kind == Kind::kInf) return {Kind::kZero, neg};
  if (a.kind == Kind::kInf || b.kind == Kind::kZero) return {Kind::kInf, neg};
  return {Kind::kOne, neg};
}
Value Multiply(Value a, Value b) {
  if (a.kind == Kind::kNaN) return a;
  if (b.kind == Kind::kNaN) return b;
  const bool neg = a.neg != b.neg;
  if ((a.kind == Kind::kZero && b.kind == Kind::kInf) || (a.kind == Kind::kInf && b.kind == Kind::kZero)) {
    return {Kind::kNaN, false};
  }
  if (a.kind == Kind::kZero || b.kind == Kind::kZero) return {Kind::kZero, neg};
  if (a.kind == Kind::kInf || b.kind == Kind::kInf) return {Kind::kInf, neg};
  return {Kind::kOne, neg};
}

// The code of a quotient q in each output type (qlinear.h's table; no zero point).
uint32_t Code(int32_t type, Value q, bool saturate) {
  const bool nan = q.kind == Kind::kNaN, inf = q.kind == Kind::kInf, zero = q.kind == Kind::kZero;
  switch (type) {
    case QLINEAR_DTYPE_FLOAT8E4M3FN: {
      const uint32_t s = q.neg ? 0x80 : 0;
      if (nan || (inf && !saturate)) return s | 0x7F;
      return s | (inf ? 0x7E : zero ? 0x00 : 0x38);
    }
    case QLINEAR_DTYPE_FLOAT8E5M2: {
      const uint32_t s = q.neg ? 0x80 : 0;
      if (nan) return s | 0x7E;
      return s | (inf ? (saturate ? 0x7B : 0x7C) : zero ? 0x00 : 0x3C);
    }
    case QLINEAR_DTYPE_FLOAT8E4M3FNUZ:
    case QLINEAR_DTYPE_FLOAT8E5M2FNUZ:
      if (nan || (inf && !saturate)) return 0x80;
      if (zero) return 0x00;
      return (q.neg ? 0x80 : 0) | (inf ? 0x7F : 0x40);
    case QLINEAR_DTYPE_FLOAT4E2M1:
      if (nan) return q.neg ? 0x0 : 0x8;
      return (q.neg ? 0x8 : 0) | (inf ? 0x7 : zero ? 0x0 : 0x2);
    default: {  // integers: NaN -> qmin, +-Inf -> qmax/qmin
      const bool is_signed = type == QLINEAR_DTYPE_INT8 || type == QLINEAR_DTYPE_INT16 || type == QLINEAR_DTYPE_INT4;
      const int bits = type == QLINEAR_DTYPE_INT16 || type == QLINEAR_DTYPE_UINT16 ? 16
                       : type == QLINEAR_DTYPE_INT4 ? 4 : type == QLINEAR_DTYPE_UINT2 ? 2 : 8;
      const int64_t qmin = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
      const int64_t qmax = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
      int64_t v = zero ? 0 : q.neg ? -1 : 1;
      if (nan || (inf && q.neg)) v = qmin;
      if (inf && !q.neg) v = qmax;
      if (v < qmin) v = qmin;
      return static_cast<uint32_t>(v) & ((1u << bits) - 1);
    }
  }
}

int Bits(int32_t type) {
  switch (type) {
    case QLINEAR_DTYPE_INT16: case QLINEAR_DTYPE_UINT16: case QLINEAR_DTYPE_FLOAT16: case QLINEAR_DTYPE_BFLOAT16: return 16;
    case QLINEAR_DTYPE_FLOAT: return 32;
    case QLINEAR_DTYPE_INT4: case QLINEAR_DTYPE_UINT4: case QLINEAR_DTYPE_FLOAT4E2M1: return 4;
    case QLINEAR_DTYPE_UINT2: case QLINEAR_DTYPE_INT2: return 2;
    default: return 8;
  }
}

uint32_t CodeAt(const std::vector<uint8_t>& y, int32_t type, int64_t i) {
  const int bits = Bits(type);
  if (bits >= 8) {
    uint32_t c = 0;
    std::memcpy(&c, y.data() + i * (bits / 8), static_cast<size_t>(bits / 8));
    return c;
  }
  const int64_t bit = i * bits;
  return (y[static_cast<size_t>(bit / 8)] >> (bit % 8)) & ((1u << bits) - 1);
}

// Operand bytes of `type` (float32, float16 or bfloat16).
void Put(std::vector<uint8_t>* out, int32_t type, Value v) {
  if (type == QLINEAR_DTYPE_FLOAT) {
    const uint32_t b = F32Bits(v);
    out->insert(out->end(), reinterpret_cast<const uint8_t*>(&b), reinterpret_cast<const uint8_t*>(&b) + 4);
  } else {
    const uint16_t b = type == QLINEAR_DTYPE_FLOAT16 ? F16Bits(v) : BF16Bits(v);
    out->insert(out->end(), reinterpret_cast<const uint8_t*>(&b), reinterpret_cast<const uint8_t*>(&b) + 2);
  }
}

// int32 x and scale divide in float64 (the scalar path on every target): 0/0 is +NaN too.
void QuantizeInt32ZeroByZero() {
  const int32_t x[3] = {0, 0, 5};
  const int32_t s = 0;
  const int64_t n = 3;
  const qlinear_tensor tx{QLINEAR_DTYPE_INT32, 1, &n, x};
  const qlinear_tensor ts{QLINEAR_DTYPE_INT32, 0, nullptr, &s};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.opset = 21;  // int32 scale with int32 x
  for (int32_t out : {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT4E2M1}) {
    if (out == QLINEAR_DTYPE_FLOAT4E2M1) a.opset = 23;
    a.output_dtype = out;
    std::vector<uint8_t> y(3, 0);
    ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, &a, y.data(), y.size()), QLINEAR_OK) << qlinear_last_error();
    EXPECT_EQ(CodeAt(y, out, 0), Code(out, {Kind::kNaN, false}, true)) << qlinear_dtype_name(out);
    EXPECT_EQ(CodeAt(y, out, 2), Code(out, {Kind::kInf, false}, true)) << qlinear_dtype_name(out);
  }
}

// DequantizeLinear: decoded x (float8 codes of the table's classes, and integers) times scales
// of every class, to float32, float16 and bfloat16.
void DequantizeTable() {
  struct Input {
    int32_t type;
    std::vector<uint32_t> codes;
    std::vector<Value> values;
  };
  const Input kInputs[] = {
      {QLINEAR_DTYPE_FLOAT8E5M2, {0x00, 0x80, 0x7C, 0xFC, 0x7E, 0xFE, 0x3C, 0xBC},
       {kOperands[0], kOperands[1], kOperands[2], kOperands[3], kOperands[4], kOperands[5], kOperands[6], kOperands[7]}},
      {QLINEAR_DTYPE_FLOAT8E4M3FN, {0x00, 0x80, 0x7F, 0xFF, 0x38, 0xB8},
       {kOperands[0], kOperands[1], kOperands[4], kOperands[5], kOperands[6], kOperands[7]}},
      {QLINEAR_DTYPE_FLOAT8E4M3FNUZ, {0x00, 0x80, 0x40}, {kOperands[0], {Kind::kNaN, false}, kOperands[6]}},
      {QLINEAR_DTYPE_INT8, {0x00, 0x01, 0xFF}, {kOperands[0], kOperands[6], kOperands[7]}},
      {QLINEAR_DTYPE_UINT4, {0x0, 0x1}, {kOperands[0], kOperands[6]}},
  };
  for (const Input& in : kInputs) {
    for (int32_t st : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16}) {
      for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
        const std::string what = std::string(qlinear_dtype_name(in.type)) + " * " + qlinear_dtype_name(st) +
                                 " -> " + qlinear_dtype_name(yt);
        const int64_t rows = static_cast<int64_t>(in.codes.size());
        // x [rows, 8]: row i holds code i, column j uses scale j; then per tensor per scale.
        std::vector<uint32_t> codes;
        for (int64_t i = 0; i < rows; ++i) {
          for (int j = 0; j < kCount; ++j) codes.push_back(in.codes[static_cast<size_t>(i)]);
        }
        const int bits = Bits(in.type);
        std::vector<uint8_t> xs((codes.size() * bits + 7) / 8, 0);
        for (size_t k = 0; k < codes.size(); ++k) {
          xs[k * bits / 8] |= static_cast<uint8_t>(codes[k] << (k * bits % 8));
        }
        std::vector<uint8_t> ss;
        for (const Value& v : kOperands) Put(&ss, st, v);
        const int64_t shape[2] = {rows, kCount}, scale_shape[1] = {kCount};
        const qlinear_tensor tx{in.type, 2, shape, xs.data()};
        const qlinear_tensor ts{st, 1, scale_shape, ss.data()};
        qlinear_dequantize_attrs a;
        qlinear_dequantize_attrs_init(&a);
        a.output_dtype = yt;
        const size_t ysize = static_cast<size_t>(Bits(yt) / 8);
        std::vector<uint8_t> y(codes.size() * ysize, 0xCD);
        ASSERT_EQ(qlinear_dequantize_linear(&tx, &ts, nullptr, &a, y.data(), y.size()), QLINEAR_OK)
            << qlinear_last_error() << " " << what;
        for (int64_t i = 0; i < rows; ++i) {
          for (int j = 0; j < kCount; ++j) {
            const Value p = Multiply(in.values[static_cast<size_t>(i)], kOperands[j]);
            const uint32_t want = yt == QLINEAR_DTYPE_FLOAT ? F32Bits(p) : yt == QLINEAR_DTYPE_FLOAT16 ? F16Bits(p) : BF16Bits(p);
            ASSERT_EQ(CodeAt(y, yt, i * kCount + j), want) << what << " x " << i << " scale " << j;
          }
        }
        // Per tensor: every x code with one scale.
        const int64_t all = static_cast<int64_t>(codes.size());
        for (int j = 0; j < kCount; ++j) {
          const qlinear_tensor tn{in.type, 1, &all, xs.data()};
          const qlinear_tensor t1{st, 0, nullptr, ss.data() + j * (Bits(st) / 8)};
          std::fill(y.begin(), y.end(), 0xCD);
          ASSERT_EQ(qlinear_dequantize_linear(&tn, &t1, nullptr, &a, y.data(), y.size()), QLINEAR_OK) << what;
          for (int64_t k = 0; k < all; ++k) {
            const Value p = Multiply(in.values[static_cast<size_t>(k / kCount)], kOperands[j]);
            const uint32_t want = yt == QLINEAR_DTYPE_FLOAT ? F32Bits(p) : yt == QLINEAR_DTYPE_FLOAT16 ? F16Bits(p) : BF16Bits(p);
            ASSERT_EQ(CodeAt(y, yt, k), want) << what << " per tensor, x " << k / kCount << " scale " << j;
          }
        }
      }
    }
  }
}

// A NaN scale with a payload keeps it (quieted) when x is not NaN; a NaN x wins over it.
void DequantizeNaNScalePayload(int64_t lanes) {
  const uint32_t snan = 0xFFA00001u;  // negative signaling NaN with a payload
  float s;
  std::memcpy(&s, &snan, 4);
  const int64_t n = 2 * lanes + 3;
  std::vector<uint8_t> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = i % 2 ? 0x7E : 0x3C;  // e5m2 +NaN, 1.0
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT8E5M2, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  std::vector<uint32_t> y(static_cast<size_t>(n));
  ASSERT_EQ(qlinear_dequantize_linear(&tx, &ts, nullptr, nullptr, y.data(), y.size() * 4), QLINEAR_OK);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(y[static_cast<size_t>(i)], i % 2 ? 0x7FC00000u : 0xFFE00001u) << i;
  }
  // A float16 / bfloat16 NaN scale decodes to the quiet NaN of its sign (qlinear.h), payload
  // or not: the float32 product is that NaN wherever x is not NaN.
  qlinear_dequantize_attrs a;
  qlinear_dequantize_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_FLOAT;
  for (const auto& [type, bits, want] : {std::tuple{QLINEAR_DTYPE_FLOAT16, uint16_t{0xFD01}, 0xFFC00000u},
                                         std::tuple{QLINEAR_DTYPE_FLOAT16, uint16_t{0x7C01}, 0x7FC00000u},
                                         std::tuple{QLINEAR_DTYPE_BFLOAT16, uint16_t{0xFFA5}, 0xFFC00000u},
                                         std::tuple{QLINEAR_DTYPE_BFLOAT16, uint16_t{0x7F81}, 0x7FC00000u}}) {
    const qlinear_tensor th{type, 0, nullptr, &bits};
    ASSERT_EQ(qlinear_dequantize_linear(&tx, &th, nullptr, &a, y.data(), y.size() * 4), QLINEAR_OK);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(y[static_cast<size_t>(i)], i % 2 ? 0x7FC00000u : want) << i << " scale " << std::hex << bits;
    }
  }
}

// More scales than the check of every scale does one at a time (it takes whole vectors of them
// from 64 on): one special scale among ones, at the first, a middle and the last column, times
// float8e5m2 codes of every class (e5m2 has Inf codes: Inf * 0 makes a NaN).
void DequantizeManyScales(int64_t lanes) {
  const int64_t cols = 64 + 2 * lanes + 3;
  const uint32_t kCodes[] = {0x00, 0x80, 0x7C, 0xFC, 0x7E, 0xFE, 0x3C, 0xBC};  // kOperands' order
  std::vector<uint8_t> xs;
  for (int i = 0; i < kCount; ++i) xs.insert(xs.end(), static_cast<size_t>(cols), static_cast<uint8_t>(kCodes[i]));
  const int64_t shape[2] = {kCount, cols};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT8E5M2, 2, shape, xs.data()};
  for (int j = 0; j < kCount; ++j) {
    for (int64_t at : {int64_t{0}, cols / 2, cols - 1}) {
      std::vector<uint8_t> ss;
      for (int64_t c = 0; c < cols; ++c) Put(&ss, QLINEAR_DTYPE_FLOAT, c == at ? kOperands[j] : Value{Kind::kOne, false});
      const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 1, &cols, ss.data()};
      std::vector<uint32_t> y(xs.size(), 0xCDCDCDCDu);
      ASSERT_EQ(qlinear_dequantize_linear(&tx, &ts, nullptr, nullptr, y.data(), y.size() * 4), QLINEAR_OK)
          << qlinear_last_error();
      for (int i = 0; i < kCount; ++i) {
        for (int64_t c = 0; c < cols; ++c) {
          const Value s = c == at ? kOperands[j] : Value{Kind::kOne, false};
          ASSERT_EQ(y[static_cast<size_t>(i * cols + c)], F32Bits(Multiply(kOperands[i], s)))
              << "scale " << j << " at column " << at << ", x " << i << ", column " << c;
        }
      }
    }
  }
}

// The backward pass: x = 0 is not clamped where the scale is finite and nonzero or infinite
// (0 / Inf = 0), and is clamped (dx = +0) where it is 0 or NaN; dx = dy * (lda / s) by the rule.
void BackwardTable() {
  const Value kScales[] = {{Kind::kOne, false}, {Kind::kInf, false}, {Kind::kInf, true},
                           {Kind::kZero, false}, {Kind::kNaN, true}};
  constexpr int kS = 5;
  for (int32_t dyt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16}) {
    for (int l = 0; l < kCount; ++l) {
      const Value lda = kOperands[l];
      const int64_t shape[2] = {kCount, kS}, scale_shape[1] = {kS};
      const std::vector<float> x(kCount * kS, 0.0f);
      std::vector<uint8_t> ss, dy;
      for (const Value& v : kScales) Put(&ss, QLINEAR_DTYPE_FLOAT, v);
      for (int i = 0; i < kCount; ++i) {
        for (int j = 0; j < kS; ++j) Put(&dy, dyt, kOperands[i]);
      }
      const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape, x.data()};
      const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 1, scale_shape, ss.data()};
      const qlinear_tensor tdy{dyt, 2, shape, dy.data()};
      qlinear_quantize_attrs a;
      qlinear_quantize_attrs_init(&a);
      a.output_dtype = QLINEAR_DTYPE_INT8;
      float lda_f;
      const uint32_t lda_bits = F32Bits(lda);
      std::memcpy(&lda_f, &lda_bits, 4);
      std::vector<uint8_t> mask((kCount * kS + 7) / 8), y(kCount * kS);
      ASSERT_EQ(qlinear_quantize_linear_masked(&tx, &ts, nullptr, &a, y.data(), y.size(), mask.data(), mask.size()),
                QLINEAR_OK);
      for (const uint8_t* m : {static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(mask.data())}) {
        std::vector<uint8_t> dx(dy.size(), 0xCD);
        ASSERT_EQ(qlinear_quantize_linear_backward(&tx, &ts, nullptr, &a, &tdy, lda_f, m, mask.size(), dx.data(),
                                                   dx.size()),
                  QLINEAR_OK)
            << qlinear_last_error();
        for (int i = 0; i < kCount; ++i) {
          for (int j = 0; j < kS; ++j) {
            const bool clamped = kScales[j].kind == Kind::kZero || kScales[j].kind == Kind::kNaN;
            const Value d = clamped ? Value{Kind::kZero, false} : Multiply(kOperands[i], Divide(lda, kScales[j]));
            const uint32_t want = dyt == QLINEAR_DTYPE_FLOAT ? F32Bits(d) : F16Bits(d);
            ASSERT_EQ(CodeAt(dx, dyt, i * kS + j), want)
                << qlinear_dtype_name(dyt) << " lda " << l << " dy " << i << " scale " << j << (m ? " (mask)" : "");
          }
        }
      }
    }
  }
}

class NaNSignTest : public PerTargetTest {
 protected:
  void TearDown() override {
    SetQuantizePathForTest(QuantizePath::kAuto);
    PerTargetTest::TearDown();
  }
};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(NaNSignTest);

const int32_t kOutputs[] = {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ, QLINEAR_DTYPE_FLOAT8E5M2,
                            QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_DTYPE_INT8,
                            QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_INT4,
                            QLINEAR_DTYPE_UINT2};

// Every (x, scale) pair of the table: x [8, 8] with a scale per column (axis 1, per-element
// division), and per tensor, x repeated over 3 vectors and a tail for each scale.
TEST_P(NaNSignTest, QuantizeTable) {
  const struct {
    int32_t type;
    int32_t precision;
  } kInputs[] = {{QLINEAR_DTYPE_FLOAT, 0}, {QLINEAR_DTYPE_FLOAT16, 0}, {QLINEAR_DTYPE_BFLOAT16, 0},
                 {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16}, {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_BFLOAT16}};
  for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
    SetQuantizePathForTest(path);
    for (const auto& in : kInputs) {
      std::vector<uint8_t> xs, ss;
      for (int i = 0; i < kCount; ++i) {
        for (int j = 0; j < kCount; ++j) Put(&xs, in.type, kOperands[i]);
        Put(&ss, in.type, kOperands[i]);
      }
      for (int32_t out : kOutputs) {
        for (int saturate : {1, 0}) {
          qlinear_quantize_attrs a;
          qlinear_quantize_attrs_init(&a);
          a.output_dtype = out;
          a.saturate = saturate;
          a.precision = in.precision;
          const std::string what = std::string(qlinear_dtype_name(in.type)) + " precision " +
                                   std::to_string(in.precision) + " -> " + qlinear_dtype_name(out) +
                                   " saturate " + std::to_string(saturate) +
                                   (path == QuantizePath::kDivision ? " (division)" : " (reciprocal)");
          const int64_t shape[2] = {kCount, kCount}, scale_shape[1] = {kCount};
          const qlinear_tensor tx{in.type, 2, shape, xs.data()};
          const qlinear_tensor ts{in.type, 1, scale_shape, ss.data()};
          std::vector<uint8_t> y(kCount * kCount * 2, 0xCD);
          ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, &a, y.data(), y.size()), QLINEAR_OK)
              << qlinear_last_error() << " " << what;
          for (int i = 0; i < kCount; ++i) {
            for (int j = 0; j < kCount; ++j) {
              const uint32_t want = Code(out, Divide(kOperands[i], kOperands[j]), saturate != 0);
              ASSERT_EQ(CodeAt(y, out, i * kCount + j), want) << what << " x " << i << " scale " << j;
            }
          }
          // Per tensor: one scale, the eight x values cycled over 3 vectors and a tail.
          const int64_t n = 3 * lanes_ + 5;
          const int xsize = Bits(in.type) / 8;
          std::vector<uint8_t> xn;
          for (int64_t k = 0; k < n; ++k) Put(&xn, in.type, kOperands[k % kCount]);
          for (int j = 0; j < kCount; ++j) {
            const qlinear_tensor tn{in.type, 1, &n, xn.data()};
            const qlinear_tensor t1{in.type, 0, nullptr, ss.data() + j * xsize};
            std::vector<uint8_t> yn(static_cast<size_t>(2 * n), 0xCD);
            ASSERT_EQ(qlinear_quantize_linear(&tn, &t1, nullptr, &a, yn.data(), yn.size()), QLINEAR_OK) << what;
            for (int64_t k = 0; k < n; ++k) {
              const uint32_t want = Code(out, Divide(kOperands[k % kCount], kOperands[j]), saturate != 0);
              ASSERT_EQ(CodeAt(yn, out, k), want) << what << " per tensor, x " << k % kCount << " scale " << j;
            }
          }
        }
      }
    }
  }
  QuantizeInt32ZeroByZero();
}

TEST_P(NaNSignTest, DequantizeAndBackwardTables) {
  DequantizeTable();
  DequantizeNaNScalePayload(lanes_);
  DequantizeManyScales(lanes_);
  BackwardTable();
}

}  // namespace
}  // namespace qlinear
