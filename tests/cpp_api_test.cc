// The C++ layer (include/qlinear/qlinear.hpp) compiled against the public library: the
// one-liners' deduction, dtype-valued attributes, output-info wrappers, the packed-type
// one-liners, views that own their braced shapes, and misuse that must give a status (run under
// ASan by the asan preset).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "qlinear/qlinear.hpp"

namespace qlinear {
namespace {

TEST(CppApi, VersionMacrosMatchTheLibrary) {
  char want[32];
  std::snprintf(want, sizeof(want), "%d.%d.%d", QLINEAR_VERSION_MAJOR, QLINEAR_VERSION_MINOR,
                QLINEAR_VERSION_PATCH);
  EXPECT_STREQ(Version(), want);
}

// The zero point takes no part in deduction: a literal 0 converts to y's element type.
TEST(CppApi, OneLinerZeroPointIsNotDeduced) {
  const float x[5] = {-1.0f, -0.25f, 0.0f, 0.35f, 20.0f};
  int8_t y[5];
  ASSERT_TRUE(QuantizeLinear(x, 5, 0.1f, 0, y));
  const int8_t want[5] = {-10, -2, 0, 4, 127};  // -2.5 -> -2 (ties to even), 200 saturates
  EXPECT_EQ(std::memcmp(y, want, 5), 0);
  uint16_t y16[5];
  ASSERT_TRUE(QuantizeLinear(x, 5, 0.5f, 1000, y16));
  EXPECT_EQ(y16[0], 998);
  EXPECT_EQ(y16[4], 1040);
  float back[5];
  ASSERT_TRUE(DequantizeLinear(y, 5, 0.1f, 0, back));
  EXPECT_EQ(back[0], -10 * 0.1f);
  const Status bad = QuantizeLinear(x, 5, 0.1f, 0, static_cast<int8_t*>(nullptr));
  EXPECT_FALSE(bad);
  EXPECT_NE(bad.message().find("y"), std::string::npos) << bad.message();
}

TEST(CppApi, DtypeAttributesTakeTheEnumAndInt32) {
  QuantizeAttrs a;
  EXPECT_EQ(a.c().output_dtype, 0);
  a.output_dtype = DataType::kInt4;
  EXPECT_EQ(a.c().output_dtype, QLINEAR_DTYPE_INT4);
  EXPECT_TRUE(a.output_dtype == DataType::kInt4);
  EXPECT_TRUE(DataType::kInt4 == a.output_dtype);
  EXPECT_TRUE(a.output_dtype != DataType::kUint4);
  a.output_dtype = static_cast<int32_t>(DataType::kUint2);  // code written for the int32_t field
  EXPECT_EQ(a.output_dtype.type(), DataType::kUint2);
  a.output_dtype = QLINEAR_DTYPE_FLOAT8E5M2;
  const int32_t as_int = a.output_dtype;
  EXPECT_EQ(as_int, QLINEAR_DTYPE_FLOAT8E5M2);
  a.precision = DataType::kFloat16;
  EXPECT_EQ(a.c().precision, QLINEAR_DTYPE_FLOAT16);
  DequantizeAttrs d;
  d.output_dtype = DataType::kBFloat16;
  EXPECT_EQ(d.c().output_dtype, QLINEAR_DTYPE_BFLOAT16);
}

TEST(CppApi, OutputInfo) {
  const float x[5] = {0, 1, 2, 3, 4};
  const float scale = 1.0f;
  const TensorView tx(DataType::kFloat, {5}, x);
  const TensorView ts(DataType::kFloat, nullptr, 0, &scale);
  QuantizeAttrs a;
  a.output_dtype = DataType::kInt4;
  OutputInfo info;
  ASSERT_TRUE(QuantizeOutputInfo(tx, ts, nullptr, a, &info));
  EXPECT_EQ(info.dtype, DataType::kInt4);
  EXPECT_EQ(info.bytes, 3u);  // 5 elements, two per byte

  const uint8_t q[5] = {1, 2, 3, 4, 5};
  const uint16_t half_scale = 0x3C00;  // float16 1.0: the output takes the scale's type
  const TensorView tq(DataType::kUint8, {5}, q);
  const TensorView ths(DataType::kFloat16, nullptr, 0, &half_scale);
  ASSERT_TRUE(DequantizeOutputInfo(tq, ths, nullptr, DequantizeAttrs{}, &info));
  EXPECT_EQ(info.dtype, DataType::kFloat16);
  EXPECT_EQ(info.bytes, 10u);

  a.block_size = -1;
  info = OutputInfo{};
  const Status s = QuantizeOutputInfo(tx, ts, nullptr, a, &info);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("block_size"), std::string::npos) << s.message();
  EXPECT_EQ(info.bytes, 0u);  // untouched on failure
}

// StorageBytes against the library's own count, for every quantized output type.
TEST(CppApi, StorageBytesMatchesTheLibrary) {
  const DataType types[] = {DataType::kUint8, DataType::kInt8, DataType::kUint16, DataType::kInt16,
                            DataType::kUint4, DataType::kInt4, DataType::kUint2, DataType::kInt2,
                            DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ,
                            DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ,
                            DataType::kFloat4E2M1};
  std::vector<float> x(13, 1.0f);
  const float scale = 1.0f;
  for (DataType t : types) {
    for (int64_t n = 0; n <= 13; ++n) {
      const TensorView tx(DataType::kFloat, {n}, x.data());
      const TensorView ts(DataType::kFloat, nullptr, 0, &scale);
      QuantizeAttrs a;
      a.output_dtype = t;
      OutputInfo info;
      ASSERT_TRUE(QuantizeOutputInfo(tx, ts, nullptr, a, &info)) << Name(t);
      EXPECT_EQ(StorageBytes(t, static_cast<size_t>(n)), info.bytes) << Name(t) << " n " << n;
    }
  }
  EXPECT_EQ(StorageBytes(DataType::kFloat, 3), 12u);
  EXPECT_EQ(StorageBytes(DataType::kBFloat16, 3), 6u);
  EXPECT_EQ(StorageBytes(DataType::kFloat, SIZE_MAX / 2), SIZE_MAX);
}

// Packed outputs: the bytes of ONNX's own node tests (element 0 in the low bits).
TEST(CppApi, PackedOneLiners) {
  const float x4[5] = {0, 1, 7, -4, -8};
  uint8_t p[3] = {0xEE, 0xEE, 0xEE};
  ASSERT_TRUE(QuantizeLinearTo(DataType::kInt4, x4, 5, 1.0f, 0, p, sizeof p));
  EXPECT_EQ(p[0], 0x10);
  EXPECT_EQ(p[1], 0xC7);
  EXPECT_EQ(p[2], 0x08);
  float back[5];
  ASSERT_TRUE(DequantizeLinearFrom(DataType::kInt4, p, 5, 0.5f, 0, back));
  EXPECT_EQ(back[2], 3.5f);
  EXPECT_EQ(back[4], -4.0f);

  const float x2[4] = {0, 1, -1, -2};
  uint8_t b = 0;
  ASSERT_TRUE(QuantizeLinearTo(DataType::kInt2, x2, 4, 1.0f, 0, &b, 1));
  EXPECT_EQ(b, 0xB4);
  const float xu2[4] = {0, 1, 2, 3};
  ASSERT_TRUE(QuantizeLinearTo(DataType::kUint2, xu2, 4, 1.0f, 0, &b, 1));
  EXPECT_EQ(b, 0xE4);
  // uint2 with zero point 1: codes x + 1, saturating at 3.
  ASSERT_TRUE(QuantizeLinearTo(DataType::kUint2, xu2, 4, 1.0f, 1, &b, 1));
  EXPECT_EQ(b, 0xF9);  // codes 1, 2, 3, 3
  float d2[4];
  ASSERT_TRUE(DequantizeLinearFrom(DataType::kUint2, &b, 4, 2.0f, 1, d2));
  EXPECT_EQ(d2[0], 0.0f);
  EXPECT_EQ(d2[3], 4.0f);

  const float xf4[5] = {0, 1, -1, 1.5f, -4};
  ASSERT_TRUE(QuantizeLinearTo(DataType::kFloat4E2M1, xf4, 5, 1.0f, 0, p, sizeof p));
  EXPECT_EQ(p[0], 0x20);
  EXPECT_EQ(p[1], 0x3A);
  EXPECT_EQ(p[2], 0x0E);

  const float xf8[3] = {448.0f, 1e9f, -0.0f};
  uint8_t f8[3];
  ASSERT_TRUE(QuantizeLinearTo(DataType::kFloat8E4M3FN, xf8, 3, 1.0f, 0, f8, 3));
  EXPECT_EQ(f8[0], 0x7E);
  EXPECT_EQ(f8[1], 0x7E);  // saturates
  EXPECT_EQ(f8[2], 0x80);  // -0 stays -0: the zero point is not added
  float df8[3];
  ASSERT_TRUE(DequantizeLinearFrom(DataType::kFloat8E4M3FN, f8, 3, 1.0f, 0, df8));
  EXPECT_EQ(df8[0], 448.0f);
  EXPECT_TRUE(std::signbit(df8[2]));

  uint16_t y16[2];
  ASSERT_TRUE(QuantizeLinearTo(DataType::kInt16, x4, 2, 0.5f, -3, y16, sizeof y16));
  EXPECT_EQ(static_cast<int16_t>(y16[0]), -3);
  EXPECT_EQ(static_cast<int16_t>(y16[1]), -1);

  // Zero points out of the type's range, and non-zero ones where none exists, are errors.
  Status s = QuantizeLinearTo(DataType::kInt4, x4, 5, 1.0f, 8, p, sizeof p);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("zero_point: 8 is outside int4's range [-8, 7]"), std::string::npos)
      << s.message();
  s = DequantizeLinearFrom(DataType::kUint2, &b, 4, 1.0f, -1, d2);
  EXPECT_NE(s.message().find("uint2's range [0, 3]"), std::string::npos) << s.message();
  s = QuantizeLinearTo(DataType::kFloat8E5M2, xf8, 3, 1.0f, 1, f8, 3);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("zero_point"), std::string::npos) << s.message();
  s = QuantizeLinearTo(DataType::kInt4, x4, 5, 1.0f, 0, p, 2);  // 3 bytes needed
  EXPECT_EQ(s.code(), QLINEAR_BUFFER_TOO_SMALL);
  // float4e2m1: the TensorView overload of QuantizeLinear takes a zero point, DequantizeLinear's
  // never does (the hint is only for the first).
  s = QuantizeLinearTo(DataType::kFloat4E2M1, x4, 4, 1.0f, 1, p, sizeof p);
  EXPECT_NE(s.message().find("(the TensorView overload takes one)"), std::string::npos) << s.message();
  const uint8_t q4[2] = {0x21, 0x43};
  float out4[4];
  s = DequantizeLinearFrom(DataType::kFloat4E2M1, q4, 4, 1.0f, 1, out4);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("zero_point: float4e2m1 takes no zero point other than 0"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("TensorView"), std::string::npos) << s.message();
  // A type the call does not take is UNSUPPORTED_TYPE whatever the zero point.
  for (int64_t zp : {0, 5}) {
    EXPECT_EQ(QuantizeLinearTo(static_cast<DataType>(99), x4, 4, 1.0f, zp, p, sizeof p).code(),
              QLINEAR_UNSUPPORTED_TYPE) << zp;
    EXPECT_EQ(QuantizeLinearTo(DataType::kFloat16, x4, 4, 1.0f, zp, p, sizeof p).code(), QLINEAR_UNSUPPORTED_TYPE)
        << zp;
    EXPECT_EQ(DequantizeLinearFrom(DataType::kFloat8E8M0, q4, 2, 1.0f, zp, out4).code(), QLINEAR_UNSUPPORTED_TYPE)
        << zp;
  }
}

// The one-liners take integer zero points only: a floating-point or bool one (often the scale
// and the zero point swapped) does not compile.
template <class Z, class = void>
struct OneLinerTakes : std::false_type {};
template <class Z>
struct OneLinerTakes<Z, decltype(void(QuantizeLinear(static_cast<const float*>(nullptr), size_t{0}, 0.0f,
                                                     std::declval<Z>(), static_cast<int8_t*>(nullptr))))>
    : std::true_type {};
static_assert(OneLinerTakes<int>::value && OneLinerTakes<int64_t>::value && OneLinerTakes<unsigned>::value,
              "integer zero points");
static_assert(!OneLinerTakes<double>::value && !OneLinerTakes<float>::value && !OneLinerTakes<bool>::value,
              "floating-point and bool zero points are deleted overloads");

TEST(CppApi, OneLinerCountBeyondInt64IsNamed) {
  const float x = 1.0f;
  int8_t y = 0;
  float d = 0.0f;
  for (const Status& s : {QuantizeLinear(&x, SIZE_MAX, 0.1f, 0, &y), DequantizeLinear(&y, SIZE_MAX, 0.1f, 0, &d)}) {
    EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
    EXPECT_NE(s.message().find("n: 18446744073709551615 elements exceed INT64_MAX"), std::string::npos)
        << s.message();
  }
  EXPECT_EQ(y, 0);
}

// A view built from a braced list keeps its own copy of the shape: the list's array is gone
// after the declaration. (With a borrowed pointer this read freed memory: ASan reports it, and
// without ASan the call saw a garbage shape.)
TEST(CppApi, ViewFromBracedListOwnsItsShape) {
  std::vector<float> data(8);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  const TensorView x(DataType::kFloat, {2, 4}, data.data());
  std::vector<std::vector<int64_t>> churn;  // reuse the freed memory
  for (int i = 0; i < 16; ++i) churn.emplace_back(2, 19);
  ASSERT_EQ(x.rank, 2);
  EXPECT_EQ(x.shape[0], 2);
  EXPECT_EQ(x.shape[1], 4);
  const float scales[2] = {1.0f, 2.0f};
  const TensorView s(DataType::kFloat, {2}, scales);
  QuantizeAttrs a;
  a.axis = 0;
  a.output_dtype = DataType::kInt8;
  int8_t y[8];
  const Status st = QuantizeLinear(x, s, nullptr, a, y, sizeof y);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(y[3], 3);
  EXPECT_EQ(y[7], 4);  // 7 / 2 = 3.5 -> 4
}

TEST(CppApi, ViewCopiesOwnTheirShape) {
  std::vector<float> data(8, 1.0f);
  TensorView copy;
  {
    const TensorView original(DataType::kFloat, {8}, data.data());
    copy = original;
    EXPECT_NE(copy.shape, original.shape);
  }
  const TensorView copy2(copy);
  ASSERT_EQ(copy2.rank, 1);
  EXPECT_EQ(copy2.shape[0], 8);
  // From a temporary vector, and beyond the inline rank (10 dimensions).
  const TensorView from_vector(DataType::kFloat, std::vector<int64_t>{2, 4}, data.data());
  const TensorView deep(DataType::kFloat, {1, 1, 1, 1, 1, 1, 1, 1, 2, 4}, data.data());
  TensorView deep_copy;
  deep_copy = deep;
  const float scale = 0.5f;
  const TensorView s(DataType::kFloat, nullptr, 0, &scale);
  uint8_t y[8];
  const std::vector<const TensorView*> views = {&copy, &copy2, &from_vector, &deep, &deep_copy};
  for (const TensorView* v : views) {
    ASSERT_TRUE(QuantizeLinear(*v, s, nullptr, QuantizeAttrs{}, y, sizeof y));
    EXPECT_EQ(y[7], 2);
  }
  EXPECT_EQ(deep_copy.rank, 10);
  EXPECT_NE(deep_copy.shape, deep.shape);
  // The pointer form borrows the caller's dims.
  const int64_t dims[1] = {8};
  const TensorView borrowed(DataType::kFloat, dims, 1, data.data());
  EXPECT_EQ(borrowed.shape, dims);
  const TensorView borrowed_copy = borrowed;
  EXPECT_EQ(borrowed_copy.shape, dims);
}

// rank is a public field: a copy of a view whose rank was changed past the dims it holds reads
// none of them (it read past the inline dims, or threw std::length_error for a negative rank),
// and the call rejects the copy by its rank.
TEST(CppApi, ViewCopyWithATamperedRankCopiesNoShape) {
  std::vector<float> data(8, 1.0f);
  const float scale = 0.5f;
  const TensorView s(DataType::kFloat, nullptr, 0, &scale);
  uint8_t y[8] = {};
  const std::vector<int32_t> ranks = {-1, 9, 11, INT32_MIN, INT32_MAX};
  for (int32_t r : ranks) {
    for (bool deep : {false, true}) {
      TensorView v = deep ? TensorView(DataType::kFloat, {1, 1, 1, 1, 1, 1, 1, 1, 2, 4}, data.data())
                          : TensorView(DataType::kFloat, {8}, data.data());
      v.rank = r;
      if (deep && r == 9) continue;  // 9 of its 10 dims: a valid copy
      const TensorView copy = v;
      EXPECT_EQ(copy.rank, r);
      EXPECT_EQ(copy.shape, nullptr);
      const Status st = QuantizeLinear(copy, s, nullptr, QuantizeAttrs{}, y, sizeof y);
      EXPECT_EQ(st.code(), QLINEAR_INVALID_ARGUMENT) << r;
      EXPECT_NE(st.message().find("x: "), std::string::npos) << st.message();
    }
  }
  // Within the dims it holds, a changed rank is copied as it is.
  TensorView v(DataType::kFloat, {1, 1, 1, 1, 1, 1, 1, 1, 2, 4}, data.data());
  v.rank = 9;
  const TensorView copy = v;
  ASSERT_EQ(copy.rank, 9);
  EXPECT_NE(copy.shape, v.shape);
  EXPECT_EQ(copy.shape[8], 2);
  EXPECT_TRUE(QuantizeLinear(copy, s, nullptr, QuantizeAttrs{}, y, 2));
}

// A view whose shape was moved inside its own dims (the leading 1 dropped) is copied with
// those dims: the copy outlives the original (it kept a pointer into it). Raising the rank of a
// view of fewer than 8 dims past them copies no shape (the inline slots beyond them, zeros or
// an older shape's dims, were read as dims).
TEST(CppApi, ViewCopiesOwnTheirDimsWhereverTheShapePoints) {
  std::vector<float> data(6, 1.0f);
  const float scale = 1.0f;
  const TensorView s(DataType::kFloat, nullptr, 0, &scale);
  uint8_t y[6] = {};
  for (bool deep : {false, true}) {
    auto* v = deep ? new TensorView(DataType::kFloat, {1, 1, 1, 1, 1, 1, 1, 1, 2, 3}, data.data())
                   : new TensorView(DataType::kFloat, {1, 2, 3}, data.data());
    const int drop = deep ? 8 : 1;
    v->shape += drop;
    v->rank -= drop;
    const TensorView w = *v;
    const char* lo = reinterpret_cast<const char*>(&w);
    const bool in_w = reinterpret_cast<const char*>(w.shape) >= lo &&
                      reinterpret_cast<const char*>(w.shape) < lo + sizeof w;
    EXPECT_TRUE(in_w) << "the copy's shape points outside it";
    EXPECT_NE(w.shape, v->shape);
    delete v;  // the copy must not read it any more (the asan preset runs this)
    ASSERT_EQ(w.rank, 2);
    EXPECT_EQ(w.shape[0], 2);
    EXPECT_EQ(w.shape[1], 3);
    EXPECT_TRUE(QuantizeLinear(w, s, nullptr, QuantizeAttrs{}, y, sizeof y));
  }
  TensorView one(DataType::kFloat, {6}, data.data());
  one.rank = 3;
  const TensorView one_copy = one;
  EXPECT_EQ(one_copy.shape, nullptr);
  EXPECT_EQ(QuantizeLinear(one_copy, s, nullptr, QuantizeAttrs{}, y, sizeof y).code(), QLINEAR_INVALID_ARGUMENT);
  TensorView reused(DataType::kFloat, {2, 3, 4}, data.data());
  reused = TensorView(DataType::kFloat, {6}, data.data());
  reused.rank = 3;
  const TensorView reused_copy = reused;
  EXPECT_EQ(reused_copy.shape, nullptr);
  EXPECT_EQ(QuantizeLinear(reused_copy, s, nullptr, QuantizeAttrs{}, y, sizeof y).code(), QLINEAR_INVALID_ARGUMENT);
}

// The typed one-liners check their zero point against Q's range as QuantizeLinearTo does (an
// int argument used to be converted to Q silently: 201 became int8 -55).
TEST(CppApi, OneLinerZeroPointOutOfRangeIsRejected) {
  const float x[4] = {1, 2, 3, 4};
  int8_t q8[4] = {9, 9, 9, 9};
  Status s = QuantizeLinear(x, 4, 1.0f, 201, q8);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("zero_point: 201 is outside int8's range [-128, 127]"), std::string::npos) << s.message();
  EXPECT_EQ(q8[0], 9);
  uint8_t u8[4] = {0, 0, 0, 0};
  float back[4];
  s = DequantizeLinear(u8, 4, 1.0f, -1, back);
  EXPECT_NE(s.message().find("uint8's range [0, 255]"), std::string::npos) << s.message();
  // Wider integers are checked before any narrowing.
  s = QuantizeLinear(x, 4, 1.0f, (int64_t{1} << 32) + 7, u8);
  EXPECT_NE(s.message().find("zero_point: 4294967303 is outside uint8's range"), std::string::npos) << s.message();
  s = QuantizeLinear(x, 4, 1.0f, 0xFFFFFFFFu, q8);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  s = QuantizeLinearTo(DataType::kInt4, x, 4, 1.0f, int64_t{1} << 33, u8, sizeof u8);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  uint16_t u16[4];
  ASSERT_TRUE(QuantizeLinear(x, 4, 1.0f, 65535, u16));
  EXPECT_EQ(u16[0], 65535);  // saturates
}

// Attribute dtypes take a DataType or an integer code, never a bool or a floating-point value.
static_assert(std::is_constructible<TypeCode, int32_t>::value, "int32_t codes");
static_assert(std::is_constructible<TypeCode, DataType>::value, "DataType");
static_assert(std::is_constructible<TypeCode, long>::value, "other integers");
static_assert(!std::is_constructible<TypeCode, double>::value, "no double");
static_assert(!std::is_constructible<TypeCode, float>::value, "no float");
static_assert(!std::is_constructible<TypeCode, bool>::value, "no bool");

TEST(CppApi, MisuseGivesAStatus) {
  const float x[4] = {1, 2, 3, 4};
  uint8_t y[4] = {7, 7, 7, 7};
  // An output type not set is an error here (the C attribute's 0 would mean uint8).
  Status s = QuantizeLinearTo(DataType::kUndefined, x, 4, 1.0f, 0, y, sizeof y);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("y_type"), std::string::npos) << s.message();
  EXPECT_EQ(y[0], 7);
  // NULL result pointers.
  DynamicAttrs d;
  d.output_dtype = DataType::kInt8;
  s = QuantizeAttrsForDynamic(d, nullptr);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("out:"), std::string::npos) << s.message();
  const TensorView tx(DataType::kFloat, {4}, x);
  s = QuantizeDynamic(tx, d, static_cast<DynamicResult*>(nullptr));
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("out:"), std::string::npos) << s.message();
  // The allocating form checks the options before it allocates 16 TiB of outputs for them.
  const TensorView huge(DataType::kFloat, {int64_t{1} << 44}, x);
  DynamicResult kept;
  kept.y.assign(3, 5);
  for (int which = 0; which < 3; ++which) {
    ParallelOptions o;
    if (which == 0) o.max_threads = -1;
    if (which == 1) o.max_threads = QLINEAR_MAX_THREADS + 1;
    if (which == 2) o.min_elements_per_task = -5;
    s = QuantizeDynamic(huge, d, &kept, &o);
    EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT) << which;
    EXPECT_EQ(s.message().find(which == 2 ? "options: min_elements_per_task must be >= 0, got -5"
                                          : "options: max_threads must be in [0, 65536], got "),
              0u) << s.message();
    EXPECT_EQ(kept.y, std::vector<uint8_t>(3, 5));
  }
  // float8 takes no zero point at all: the message does not send the caller to another overload.
  s = DequantizeLinearFrom(DataType::kFloat8E4M3FN, y, 4, 1.0f, 1, nullptr);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_EQ(s.message().find("TensorView"), std::string::npos) << s.message();
}

// A ParallelFor that throws: the call ends there, with a status naming the exception.
TEST(CppApi, ThrowingParallelForBecomesAStatus) {
  std::vector<float> x(1 << 12, 1.0f);
  std::vector<uint8_t> y(x.size());
  const TensorView tx(DataType::kFloat, {static_cast<int64_t>(x.size())}, x.data());
  const float scale = 1.0f;
  const TensorView ts(DataType::kFloat, nullptr, 0, &scale);
  ParallelOptions o;
  o.max_threads = 4;
  o.min_elements_per_task = 64;
  o.parallel_for = [](int64_t, const std::function<void(int64_t)>&) { throw std::runtime_error("pool is shut down"); };
  const Status s = QuantizeLinearParallel(tx, ts, nullptr, QuantizeAttrs{}, y.data(), y.size(), o);
  EXPECT_EQ(s.code(), QLINEAR_INTERNAL_ERROR);
  EXPECT_NE(s.message().find("pool is shut down"), std::string::npos) << s.message();
  // Dynamic quantization: the pool throws after half of the statistics tasks; no scale is
  // computed from the partial statistics and the pool is not called again.
  DynamicAttrs d;
  d.output_dtype = DataType::kInt8;
  d.granularity = ScaleGranularity::kTensor;
  d.block_size = 0;
  int calls = 0;
  o.parallel_for = [&calls](int64_t count, const std::function<void(int64_t)>& task) {
    ++calls;
    for (int64_t i = 0; i < count / 2; ++i) task(i);
    throw std::runtime_error("pool is shut down");
  };
  float scale_out = -1.0f;
  const Status ds = QuantizeDynamic(tx, d, y.data(), y.size(), &scale_out, sizeof scale_out, nullptr, 0, &o);
  EXPECT_EQ(ds.code(), QLINEAR_INTERNAL_ERROR);
  EXPECT_NE(ds.message().find("pool is shut down"), std::string::npos) << ds.message();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(scale_out, -1.0f);
}

}  // namespace
}  // namespace qlinear
