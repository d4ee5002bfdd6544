// One test per validation rule: the call returns the status, the message names the argument
// and the rule, and the output buffer is left untouched.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"

namespace qlinear {
namespace test {
namespace {

constexpr uint8_t kSentinel = 0x5A;

struct Call {
  Tensor x = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor scale = ScalarF32(0.5f);
  Tensor zp = Scalar(QLINEAR_DTYPE_UINT8, 3);
  bool use_zp = true;
  qlinear_quantize_attrs attrs = QAttrs();
};

// Expects rejection with `status` and a message containing each of `parts`; checks the output.
void ExpectQRejected(const Call& c, qlinear_status status, std::vector<std::string> parts) {
  std::vector<uint8_t> y(256, kSentinel);
  const qlinear_tensor x = c.x.c(), s = c.scale.c(), z = c.zp.c();
  const qlinear_status got =
      qlinear_quantize_linear(&x, &s, c.use_zp ? &z : nullptr, &c.attrs, y.data(), y.size());
  EXPECT_EQ(got, status) << qlinear_last_error();
  const std::string msg = qlinear_last_error();
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg << " / " << p;
  EXPECT_EQ(y, std::vector<uint8_t>(256, kSentinel)) << "output written by a rejected call";
  // The info function rejects identically.
  int32_t dtype = -7;
  size_t bytes = 12345;
  EXPECT_EQ(qlinear_quantize_output_info(&x, &s, c.use_zp ? &z : nullptr, &c.attrs, &dtype, &bytes),
            status);
}

void ExpectQAccepted(const Call& c) {
  std::vector<uint8_t> y(256, kSentinel);
  const qlinear_tensor x = c.x.c(), s = c.scale.c(), z = c.zp.c();
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, c.use_zp ? &z : nullptr, &c.attrs, y.data(), y.size()),
            QLINEAR_OK)
      << qlinear_last_error();
  EXPECT_STREQ(qlinear_last_error(), "");
}

TEST(QuantizeValidation, NullTensorPointers) {
  std::vector<uint8_t> y(8, kSentinel);
  const Call c;
  const qlinear_tensor x = c.x.c(), s = c.scale.c();
  EXPECT_EQ(qlinear_quantize_linear(nullptr, &s, nullptr, nullptr, y.data(), 8),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("x:"), std::string::npos);
  EXPECT_EQ(qlinear_quantize_linear(&x, nullptr, nullptr, nullptr, y.data(), 8),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("y_scale:"), std::string::npos);
  EXPECT_EQ(y, std::vector<uint8_t>(8, kSentinel));
}

TEST(QuantizeValidation, AttrsStructSize) {
  Call c;
  c.attrs.struct_size = 0;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"attrs:", "struct_size"});
  // A size inside a field (axis) would mix the caller's bytes with the default's.
  c.attrs.struct_size = offsetof(qlinear_quantize_attrs, axis) + 4;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"attrs:", "struct_size is 12", "qlinear_quantize_attrs"});
  // An older, smaller struct: the fields it lacks keep their defaults.
  c.attrs.struct_size = offsetof(qlinear_quantize_attrs, block_size);
  c.attrs.block_size = 999;  // beyond struct_size: ignored
  ExpectQAccepted(c);
}

// The _init functions and qlinear_quantize_attrs_for_dynamic write their struct's layout and
// nothing after it (qlinear.h: a program built against an older header has only that much).
template <class T, class Write>
T WrittenWithin(Write write) {
  alignas(std::max_align_t) unsigned char buf[sizeof(T) + 64];
  std::memset(buf, 0xA5, sizeof(buf));
  write(reinterpret_cast<T*>(buf));
  for (size_t i = sizeof(T); i < sizeof(buf); ++i) EXPECT_EQ(buf[i], 0xA5) << "byte " << i << " after the struct";
  T t;
  std::memcpy(&t, buf, sizeof(T));
  EXPECT_EQ(t.struct_size, sizeof(T));
  return t;
}

TEST(AttrsInit, WritesTheStructAndNothingAfterIt) {
  const auto q = WrittenWithin<qlinear_quantize_attrs>(qlinear_quantize_attrs_init);
  EXPECT_EQ(q.opset, 0);
  EXPECT_EQ(q.axis, 1);
  EXPECT_EQ(q.block_size, 0);
  EXPECT_EQ(q.output_dtype, 0);
  EXPECT_EQ(q.saturate, 1);
  EXPECT_EQ(q.precision, 0);
  const auto d = WrittenWithin<qlinear_dequantize_attrs>(qlinear_dequantize_attrs_init);
  EXPECT_EQ(d.opset, 0);
  EXPECT_EQ(d.axis, 1);
  EXPECT_EQ(d.block_size, 0);
  EXPECT_EQ(d.output_dtype, 0);
  EXPECT_EQ(d.reserved, 0);
  const auto y = WrittenWithin<qlinear_dynamic_attrs>(qlinear_dynamic_attrs_init);
  EXPECT_EQ(y.output_dtype, 0);
  EXPECT_EQ(y.rule, QLINEAR_SCALE_ABSMAX);
  EXPECT_EQ(y.granularity, QLINEAR_GRANULARITY_BLOCK);
  EXPECT_EQ(y.axis, -1);
  EXPECT_EQ(y.block_size, 32);
  EXPECT_EQ(y.scale_dtype, 0);
  EXPECT_EQ(y.reserved, 0);
  const auto o = WrittenWithin<qlinear_parallel_options>(qlinear_parallel_options_init);
  EXPECT_EQ(o.max_threads, 0);
  EXPECT_EQ(o.min_elements_per_task, 0);
  EXPECT_EQ(o.parallel_for, nullptr);
  EXPECT_EQ(o.runner_context, nullptr);
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT4;
  a.block_size = 64;
  const auto f = WrittenWithin<qlinear_quantize_attrs>([&](qlinear_quantize_attrs* out) {
    EXPECT_EQ(qlinear_quantize_attrs_for_dynamic(&a, out), QLINEAR_OK) << qlinear_last_error();
  });
  EXPECT_EQ(f.opset, 25);
  EXPECT_EQ(f.axis, -1);
  EXPECT_EQ(f.block_size, 64);
  EXPECT_EQ(f.output_dtype, QLINEAR_DTYPE_INT4);
  EXPECT_EQ(f.saturate, 1);
  EXPECT_EQ(f.precision, QLINEAR_DTYPE_FLOAT);
  // NULL is ignored.
  qlinear_quantize_attrs_init(nullptr);
  qlinear_dequantize_attrs_init(nullptr);
  qlinear_dynamic_attrs_init(nullptr);
  qlinear_parallel_options_init(nullptr);
}

TEST(QuantizeValidation, OpsetRange) {
  Call c;
  c.attrs.opset = 9;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"opset:", "9", "[10, 28]"});
  c.attrs.opset = 29;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"opset:", "29", "[10, 28]"});
  c.attrs.opset = 17;  // a model opset between versions uses QuantizeLinear-13
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, Shapes) {
  Call c;
  c.x.shape = {-1, 3};
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"x:", "negative"});
  c.x.shape = {int64_t{1} << 40, int64_t{1} << 40};
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"x:", "overflows"});
  c = Call();
  qlinear_tensor x = c.x.c();
  const qlinear_tensor s = c.scale.c();
  std::vector<uint8_t> y(64, kSentinel);
  x.rank = -1;
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, nullptr, y.data(), 64), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("x: rank"), std::string::npos);
  x.rank = QLINEAR_MAX_RANK + 1;
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, nullptr, y.data(), 64), QLINEAR_INVALID_ARGUMENT);
  x.rank = 2;
  x.shape = nullptr;
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, nullptr, y.data(), 64), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("shape is NULL"), std::string::npos);
  x = c.x.c();
  x.data = nullptr;
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, nullptr, y.data(), 64), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("x: data is NULL"), std::string::npos);
  EXPECT_EQ(y, std::vector<uint8_t>(64, kSentinel));
  // A zero dimension makes an empty tensor, even next to a huge one.
  c.x.shape = {0, int64_t{1} << 62};
  c.x.bytes.clear();
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, UnknownDtypeCode) {
  Call c;
  c.x.dtype = 99;
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"x:", "99"});
}

TEST(QuantizeValidation, InputTypesPerOpset) {
  Call c;
  c.x = Ints(QLINEAR_DTYPE_UINT8, {1, 2});
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"x:", "uint8"});
  c = Call();
  c.x = FromCodes(QLINEAR_DTYPE_FLOAT16, {0x3C00}, {1});
  c.scale = FromCodes(QLINEAR_DTYPE_FLOAT16, {0x3C00}, {});
  c.attrs.opset = 13;
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"x:", "float16", "QuantizeLinear-13"});
  c.attrs.opset = 19;
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, ScaleTypesPerOpset) {
  Call c;
  c.attrs.opset = 13;
  c.scale = FromCodes(QLINEAR_DTYPE_FLOAT16, {0x3C00}, {});
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"y_scale:", "float16"});
  c.attrs.opset = 21;  // float32 x with a float16 scale: mixed types need opset 23
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"y_scale:", "x's type"});
  c.attrs.opset = 23;
  ExpectQAccepted(c);
  c.scale = FromCodes(QLINEAR_DTYPE_FLOAT8E8M0, {127}, {});
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"y_scale:", "float8e8m0"});
  c.attrs.opset = 24;
  ExpectQAccepted(c);
  c.scale = Scalar(QLINEAR_DTYPE_UINT8, 1);
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"y_scale:", "uint8"});
}

TEST(QuantizeValidation, AttributesTheOpsetLacks) {
  struct Case { int opset; void (*set)(qlinear_quantize_attrs*); const char* name; };
  const Case cases[] = {
      {10, [](qlinear_quantize_attrs* a) { a->axis = 0; }, "axis:"},
      {13, [](qlinear_quantize_attrs* a) { a->saturate = 0; }, "saturate:"},
      {19, [](qlinear_quantize_attrs* a) { a->block_size = 2; }, "block_size:"},
      {19, [](qlinear_quantize_attrs* a) { a->output_dtype = QLINEAR_DTYPE_UINT8; }, "output_dtype:"},
      {21, [](qlinear_quantize_attrs* a) { a->precision = QLINEAR_DTYPE_FLOAT; }, "precision:"},
  };
  for (const Case& k : cases) {
    Call c;
    c.attrs.opset = k.opset;
    k.set(&c.attrs);
    ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {k.name, "needs opset"});
  }
}

TEST(QuantizeValidation, NegativeBlockSize) {
  Call c;
  c.attrs.block_size = -2;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"block_size:", ">= 0"});
}

TEST(QuantizeValidation, OutputDtypeAgainstZeroPoint) {
  Call c;
  c.attrs.output_dtype = QLINEAR_DTYPE_INT8;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"output_dtype:", "does not match y_zero_point", "uint8"});
  c.zp = Scalar(QLINEAR_DTYPE_INT8, 3);  // matching: fine (onnxruntime#25526)
  ExpectQAccepted(c);
  c.use_zp = false;
  c.attrs.output_dtype = 77;
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"output_dtype:", "77"});
}

TEST(QuantizeValidation, OutputMustBeAQuantizedType) {
  Call c;
  c.zp = ScalarF32(0.0f);
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"y_zero_point:", "float32", "not a quantized type"});
  c.use_zp = false;
  c.attrs.output_dtype = QLINEAR_DTYPE_FLOAT8E8M0;
  ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"output_dtype:", "float8e8m0"});
}

TEST(QuantizeValidation, OutputTypesPerOpset) {
  struct Case { int32_t type; int opset; };
  const Case cases[] = {{QLINEAR_DTYPE_FLOAT8E4M3FN, 13}, {QLINEAR_DTYPE_INT4, 19},
                        {QLINEAR_DTYPE_INT16, 19},        {QLINEAR_DTYPE_FLOAT4E2M1, 21},
                        {QLINEAR_DTYPE_INT2, 24},         {QLINEAR_DTYPE_UINT2, 23}};
  for (const Case& k : cases) {
    Call c;
    c.attrs.opset = k.opset;
    c.zp = FromCodes(k.type, {0}, {});
    ExpectQRejected(c, QLINEAR_UNSUPPORTED_TYPE, {"y_zero_point:", qlinear_dtype_name(k.type), "needs opset"});
    c.attrs.opset = 25;
    ExpectQAccepted(c);
  }
}

TEST(QuantizeValidation, PrecisionValues) {
  Call c;
  c.attrs.precision = QLINEAR_DTYPE_INT32;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"precision:", "6"});
  c.attrs.precision = QLINEAR_DTYPE_BFLOAT16;
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, PerAxisScaleShape) {
  Call c;  // x [2, 3], axis 1
  c.scale = F32({1, 2});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {0, 0});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT,
                  {"y_scale: per-axis quantization needs a 1-D scale of length x.shape[1] = 3, got [2]"});
  c.scale = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_scale:", "1-D", "[2, 3]"});
}

// A scalar x has no axis: the message names the scale or block_size, not `axis`.
TEST(QuantizeValidation, ScalarXTakesAPerTensorScale) {
  Call c;
  c.x = ScalarF32(2.0f);
  c.scale = F32({1, 2});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {0, 0});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT,
                  {"y_scale: x of rank 0 takes a per-tensor scale (one element), got [2]"});
  c.scale = ScalarF32(0.5f);
  c.zp = Scalar(QLINEAR_DTYPE_UINT8, 3);
  c.attrs.block_size = 2;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"block_size: x of rank 0 has no axis for blocks, got 2"});
  c.attrs.block_size = 0;
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, AxisRange) {
  Call c;
  c.scale = F32({1, 2, 3});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {0, 0, 0});
  c.attrs.axis = 2;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"axis: 2 is out of range [-2, 1]"});
  c.attrs.axis = -3;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"axis: -3"});
  c.attrs.axis = -1;
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, GranularityPerOpset) {
  Call c;
  c.scale = F32({1, 2, 3});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {0, 0, 0});
  c.attrs.opset = 10;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_scale:", "QuantizeLinear", "per-tensor"});
  c.attrs.opset = 13;
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, BlockedScaleShape) {
  Call c;
  c.x = F32(std::vector<float>(10, 1.0f), {2, 5});
  c.attrs.block_size = 2;
  c.scale = F32({1, 1, 1, 1}, {2, 2});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {0, 0, 0, 0}, {2, 2});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT,
                  {"y_scale: blocked quantization needs 3 entries on axis 1 (ceil(5/2)), got 2"});
  c.scale = F32({1, 1, 1}, {3});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {0, 0, 0}, {3});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_scale:", "rank"});
  c.scale = F32(std::vector<float>(9, 1.0f), {3, 3});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, std::vector<int64_t>(9, 0), {3, 3});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_scale:", "dimension 0"});
  c.scale = F32(std::vector<float>(6, 1.0f), {2, 3});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, std::vector<int64_t>(6, 0), {2, 3});
  ExpectQAccepted(c);
  // The reference would accept a too-large block (trailing scales unused); ONNX's schema and
  // ORT do not.
  c.attrs.block_size = 4;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"needs 2 entries on axis 1 (ceil(5/4)), got 3"});
}

TEST(QuantizeValidation, ZeroPointShape) {
  Call c;
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {1, 2});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_zero_point:", "[2]"});
  c.scale = F32({1, 2, 3});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {1, 2, 3}, {3, 1});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_zero_point:", "[3]", "[3, 1]"});
}

TEST(QuantizeValidation, Float8ZeroPointMustBeZero) {
  Call c;
  c.zp = FromCodes(QLINEAR_DTYPE_FLOAT8E4M3FN, {0x38}, {1});
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_zero_point:", "must be zero", "0x38"});
  c.zp = FromCodes(QLINEAR_DTYPE_FLOAT8E5M2, {0x7E}, {1});  // NaN is not zero either
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_zero_point:", "must be zero"});
  c.zp = FromCodes(QLINEAR_DTYPE_FLOAT8E4M3FN, {0x80}, {1});  // -0 is zero
  ExpectQAccepted(c);
}

TEST(QuantizeValidation, EmptyScale) {
  Call c;
  c.scale = F32({}, {0});
  c.use_zp = false;
  ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_scale:", "empty"});
}

TEST(QuantizeValidation, OutputBuffer) {
  const Call c;
  const qlinear_tensor x = c.x.c(), s = c.scale.c();
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, nullptr, nullptr, 6), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("y:"), std::string::npos);
  std::vector<uint8_t> y(6, kSentinel);
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, nullptr, y.data(), 5), QLINEAR_BUFFER_TOO_SMALL);
  EXPECT_NE(std::string(qlinear_last_error()).find("y_bytes: output needs 6 bytes, got 5"),
            std::string::npos);
  EXPECT_EQ(y, std::vector<uint8_t>(6, kSentinel));
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, nullptr, y.data(), 6), QLINEAR_OK);
  // int4 output of 6 elements needs 3 bytes; empty output accepts NULL.
  const Tensor z4 = Scalar(QLINEAR_DTYPE_INT4, 0);
  const qlinear_tensor cz = z4.c();
  size_t bytes = 0;
  ASSERT_EQ(qlinear_quantize_output_info(&x, &s, &cz, nullptr, nullptr, &bytes), QLINEAR_OK);
  EXPECT_EQ(bytes, 3u);
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, &cz, nullptr, y.data(), 2), QLINEAR_BUFFER_TOO_SMALL);
  const Tensor empty = F32({}, {0, 3});
  const qlinear_tensor ce = empty.c();
  EXPECT_EQ(qlinear_quantize_linear(&ce, &s, nullptr, nullptr, nullptr, 0), QLINEAR_OK);
}

// ---- DequantizeLinear ----------------------------------------------------------------------

void ExpectDQRejected(const Tensor& x, const Tensor& s, const Tensor* zp,
                      const qlinear_dequantize_attrs& a, qlinear_status status,
                      std::vector<std::string> parts) {
  std::vector<uint8_t> y(256, kSentinel);
  const qlinear_tensor cx = x.c(), cs = s.c();
  qlinear_tensor cz{};
  if (zp) cz = zp->c();
  EXPECT_EQ(qlinear_dequantize_linear(&cx, &cs, zp ? &cz : nullptr, &a, y.data(), y.size()), status)
      << qlinear_last_error();
  const std::string msg = qlinear_last_error();
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg << " / " << p;
  EXPECT_EQ(y, std::vector<uint8_t>(256, kSentinel));
}

TEST(DequantizeValidation, AttrsStructSize) {
  const Tensor x = Scalar(QLINEAR_DTYPE_INT8, 3), s = ScalarF32(0.5f);
  qlinear_dequantize_attrs a = DQAttrs();
  a.struct_size = offsetof(qlinear_dequantize_attrs, block_size) + 1;
  ExpectDQRejected(x, s, nullptr, a, QLINEAR_INVALID_ARGUMENT, {"attrs:", "struct_size", "qlinear_dequantize_attrs"});
}

// Versions 10, 13 and 19 take a scalar or 1-D scale and zero point (their schemas, reference and
// ONNX Runtime); from 21 a one-element tensor of any shape is per tensor.
TEST(QuantizeValidation, ScaleOfRankTwoBeforeOpset21) {
  for (int32_t opset : {10, 13, 19}) {
    Call c;
    c.attrs.opset = opset;
    c.scale = F32({0.5f}, {1, 1});
    ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT,
                    {"y_scale: QuantizeLinear-" + std::to_string(opset) + " takes a scalar or 1-D tensor", "[1, 1]"});
    c.scale = F32({0.5f}, {1});
    c.zp = Ints(QLINEAR_DTYPE_UINT8, {3}, {1, 1, 1});
    ExpectQRejected(c, QLINEAR_INVALID_ARGUMENT, {"y_zero_point: QuantizeLinear-", "scalar or 1-D"});
    c.zp = Ints(QLINEAR_DTYPE_UINT8, {3}, {1});
    ExpectQAccepted(c);
    const Tensor x = Ints(QLINEAR_DTYPE_UINT8, {1, 2}), s2 = F32({0.5f}, {1, 1});
    ExpectDQRejected(x, s2, nullptr, DQAttrs(opset), QLINEAR_INVALID_ARGUMENT,
                     {"x_scale: DequantizeLinear-", "scalar or 1-D"});
  }
  Call c;
  c.attrs.opset = 21;
  c.scale = F32({0.5f}, {1, 1});
  c.zp = Ints(QLINEAR_DTYPE_UINT8, {3}, {1, 1, 1});
  ExpectQAccepted(c);
}

TEST(DequantizeValidation, InputTypes) {
  const Tensor s = ScalarF32(1);
  ExpectDQRejected(F32({1}), s, nullptr, DQAttrs(), QLINEAR_UNSUPPORTED_TYPE, {"x:", "float32", "not a quantized type"});
  ExpectDQRejected(Ints(QLINEAR_DTYPE_INT4, {1}), s, nullptr, DQAttrs(19), QLINEAR_UNSUPPORTED_TYPE, {"x:", "int4", "opset >= 21"});
  ExpectDQRejected(FromCodes(QLINEAR_DTYPE_FLOAT8E4M3FN, {0}, {1}), s, nullptr, DQAttrs(13),
                   QLINEAR_UNSUPPORTED_TYPE, {"x:", "opset >= 19"});
  ExpectDQRejected(FromCodes(QLINEAR_DTYPE_FLOAT4E2M1, {0}, {1}), s, nullptr, DQAttrs(21),
                   QLINEAR_UNSUPPORTED_TYPE, {"x:", "opset >= 23"});
  ExpectDQRejected(Ints(QLINEAR_DTYPE_UINT2, {1}), s, nullptr, DQAttrs(24), QLINEAR_UNSUPPORTED_TYPE, {"x:", "opset >= 25"});
}

TEST(DequantizeValidation, ScalarXTakesAPerTensorScale) {
  const Tensor x = Scalar(QLINEAR_DTYPE_INT8, 3);
  for (int opset : {13, 19, 25}) {
    ExpectDQRejected(x, F32({1, 2}), nullptr, DQAttrs(opset), QLINEAR_INVALID_ARGUMENT,
                     {"x_scale: x of rank 0 takes a per-tensor scale (one element), got [2]"});
  }
  qlinear_dequantize_attrs a = DQAttrs();
  a.block_size = 2;
  ExpectDQRejected(x, ScalarF32(1), nullptr, a, QLINEAR_INVALID_ARGUMENT,
                   {"block_size: x of rank 0 has no axis for blocks, got 2"});
}

TEST(DequantizeValidation, ScaleTypes) {
  const Tensor x = Ints(QLINEAR_DTYPE_UINT8, {1});
  ExpectDQRejected(x, Scalar(QLINEAR_DTYPE_INT32, 1), nullptr, DQAttrs(), QLINEAR_UNSUPPORTED_TYPE, {"x_scale:", "int32"});
  ExpectDQRejected(x, FromCodes(QLINEAR_DTYPE_FLOAT16, {0x3C00}, {}), nullptr, DQAttrs(13),
                   QLINEAR_UNSUPPORTED_TYPE, {"x_scale:", "float16"});
  qlinear_dequantize_attrs a = DQAttrs(23);
  a.output_dtype = QLINEAR_DTYPE_FLOAT;
  ExpectDQRejected(x, FromCodes(QLINEAR_DTYPE_FLOAT8E8M0, {127}, {}), nullptr, a,
                   QLINEAR_UNSUPPORTED_TYPE, {"x_scale:", "float8e8m0"});
}

TEST(DequantizeValidation, ZeroPointTypeAndValues) {
  const Tensor s = ScalarF32(1);
  const Tensor zi8 = Scalar(QLINEAR_DTYPE_INT8, 0);
  ExpectDQRejected(Ints(QLINEAR_DTYPE_UINT8, {1}), s, &zi8, DQAttrs(), QLINEAR_UNSUPPORTED_TYPE,
                   {"x_zero_point:", "int8", "uint8"});
  const Tensor zi32 = Scalar(QLINEAR_DTYPE_INT32, 10);
  ExpectDQRejected(Ints(QLINEAR_DTYPE_INT32, {1}), s, &zi32, DQAttrs(), QLINEAR_INVALID_ARGUMENT,
                   {"x_zero_point:", "must be zero", "int32", "element 0 is 10"});
  const Tensor zi32n = Scalar(QLINEAR_DTYPE_INT32, -7);
  ExpectDQRejected(Ints(QLINEAR_DTYPE_INT32, {1}), s, &zi32n, DQAttrs(), QLINEAR_INVALID_ARGUMENT,
                   {"x_zero_point:", "element 0 is -7"});
  const Tensor zf8 = FromCodes(QLINEAR_DTYPE_FLOAT8E5M2, {0x3C}, {});
  ExpectDQRejected(FromCodes(QLINEAR_DTYPE_FLOAT8E5M2, {0}, {1}), s, &zf8, DQAttrs(),
                   QLINEAR_INVALID_ARGUMENT, {"x_zero_point:", "must be zero", "element 0 is code 0x3c"});
  const Tensor zf4 = FromCodes(QLINEAR_DTYPE_FLOAT4E2M1, {0x2}, {});
  ExpectDQRejected(FromCodes(QLINEAR_DTYPE_FLOAT4E2M1, {0}, {1}), s, &zf4, DQAttrs(),
                   QLINEAR_INVALID_ARGUMENT, {"x_zero_point:", "must be zero"});
}

TEST(DequantizeValidation, OutputDtype) {
  const Tensor x = Ints(QLINEAR_DTYPE_UINT8, {1});
  const Tensor e8 = FromCodes(QLINEAR_DTYPE_FLOAT8E8M0, {127}, {});
  ExpectDQRejected(x, e8, nullptr, DQAttrs(24), QLINEAR_INVALID_ARGUMENT, {"output_dtype:", "required", "float8e8m0"});
  qlinear_dequantize_attrs a = DQAttrs();
  a.output_dtype = QLINEAR_DTYPE_INT8;
  ExpectDQRejected(x, ScalarF32(1), nullptr, a, QLINEAR_UNSUPPORTED_TYPE, {"output_dtype:", "3"});
  a = DQAttrs(21);
  a.output_dtype = QLINEAR_DTYPE_FLOAT16;
  ExpectDQRejected(x, ScalarF32(1), nullptr, a, QLINEAR_INVALID_ARGUMENT, {"output_dtype:", "needs opset >= 23"});
  a = DQAttrs();
  a.reserved = 1;
  ExpectDQRejected(x, ScalarF32(1), nullptr, a, QLINEAR_INVALID_ARGUMENT, {"reserved"});
}

TEST(DequantizeValidation, Granularity) {
  const Tensor x = Ints(QLINEAR_DTYPE_UINT8, {1, 2, 3, 4, 5, 6}, {2, 3});
  qlinear_dequantize_attrs a = DQAttrs();
  ExpectDQRejected(x, F32({1, 2}), nullptr, a, QLINEAR_INVALID_ARGUMENT, {"x_scale:", "per-axis", "= 3"});
  a.block_size = 2;
  ExpectDQRejected(x, F32({1, 2, 3, 4, 5, 6}, {2, 3}), nullptr, a, QLINEAR_INVALID_ARGUMENT,
                   {"x_scale: blocked quantization needs 2 entries on axis 1 (ceil(3/2)), got 3"});
  a.block_size = 2;
  a.opset = 19;
  ExpectDQRejected(x, F32({1, 2, 3, 4}, {2, 2}), nullptr, a, QLINEAR_INVALID_ARGUMENT, {"block_size:"});
}

// ---- DynamicQuantizeLinear -----------------------------------------------------------------

TEST(DynamicValidation, Rules) {
  uint8_t y[4] = {kSentinel, kSentinel, kSentinel, kSentinel};
  float scale = 0;
  uint8_t zp = 0;
  const Tensor xi = Ints(QLINEAR_DTYPE_INT8, {1, 2});
  const qlinear_tensor cxi = xi.c();
  EXPECT_EQ(qlinear_dynamic_quantize_linear(&cxi, y, 4, &scale, &zp), QLINEAR_UNSUPPORTED_TYPE);
  EXPECT_NE(std::string(qlinear_last_error()).find("x:"), std::string::npos);
  const Tensor empty = F32({}, {0});
  const qlinear_tensor ce = empty.c();
  EXPECT_EQ(qlinear_dynamic_quantize_linear(&ce, y, 4, &scale, &zp), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("at least one element"), std::string::npos);
  const Tensor x = F32({1, 2, 3});
  const qlinear_tensor cx = x.c();
  EXPECT_EQ(qlinear_dynamic_quantize_linear(&cx, y, 2, &scale, &zp), QLINEAR_BUFFER_TOO_SMALL);
  EXPECT_EQ(qlinear_dynamic_quantize_linear(&cx, y, 4, nullptr, &zp), QLINEAR_INVALID_ARGUMENT);
  EXPECT_EQ(qlinear_dynamic_quantize_linear(&cx, y, 4, &scale, nullptr), QLINEAR_INVALID_ARGUMENT);
  EXPECT_EQ(qlinear_dynamic_quantize_linear(nullptr, y, 4, &scale, &zp), QLINEAR_INVALID_ARGUMENT);
  for (uint8_t b : y) EXPECT_EQ(b, kSentinel);
}

TEST(Names, DtypesStatusesVersion) {
  EXPECT_STREQ(qlinear_dtype_name(QLINEAR_DTYPE_INT4), "int4");
  EXPECT_STREQ(qlinear_dtype_name(QLINEAR_DTYPE_FLOAT8E5M2FNUZ), "float8e5m2fnuz");
  EXPECT_STREQ(qlinear_dtype_name(7), "unknown");
  EXPECT_STREQ(qlinear_status_name(QLINEAR_BUFFER_TOO_SMALL), "buffer too small");
  EXPECT_STRNE(qlinear_version(), "");
  EXPECT_STRNE(qlinear_active_target(), "");
}

// Empty tensors are valid and may have NULL data everywhere, per-axis scales included (api_fuzzer
// found a memcpy from a NULL, empty scale array).
TEST(QuantizeValidation, EmptyPerAxisWithNullData) {
  const int64_t xs[2] = {0, 4}, ss[1] = {0};
  const qlinear_tensor x{QLINEAR_DTYPE_FLOAT, 2, xs, nullptr};
  const qlinear_tensor s{QLINEAR_DTYPE_FLOAT, 1, ss, nullptr};
  qlinear_quantize_attrs a = QAttrs();
  a.axis = 0;
  EXPECT_EQ(qlinear_quantize_linear(&x, &s, nullptr, &a, nullptr, 0), QLINEAR_OK) << qlinear_last_error();
  qlinear_dequantize_attrs da;
  qlinear_dequantize_attrs_init(&da);
  da.axis = 0;
  const qlinear_tensor q{QLINEAR_DTYPE_INT8, 2, xs, nullptr};
  EXPECT_EQ(qlinear_dequantize_linear(&q, &s, nullptr, &da, nullptr, 0), QLINEAR_OK) << qlinear_last_error();
}

}  // namespace
}  // namespace test
}  // namespace qlinear
