// Dynamic quantization (qlinear.h "Dynamic quantization"):
// - hand tables of each rule's scale at the edges (2^k, 2^k (1 - 2^-24), P 2^k and neighbours,
//   subnormal amax, 0, NaN and Inf groups, float16/bfloat16 overflow and underflow);
// - the fast scale path and the double reference against an exact rational rounding written
//   here with integers;
// - on every target: outputs equal the element-by-element reference, y equals QuantizeLinear
//   with the scales written, DequantizeLinear gives x back within half a step, parallel calls
//   give the same bytes, nothing is written outside the outputs;
// - sharding: ranges of slices reduced with max give the whole tensor's scales;
// - bad input rejected with the outputs untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "lib/dynamic.h"
#include "lib/kernels.h"
#include "lib/minifloat.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"
#include "qlinear/qlinear.hpp"
#include "tests/target_test.h"

namespace qlinear {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr uint8_t kSentinel = 0xCD;
constexpr size_t kRedZone = 32;

float F(uint32_t bits) { return FloatOf(bits); }

int ScaleBytes(int32_t t) { return t == QLINEAR_DTYPE_FLOAT ? 4 : t == QLINEAR_DTYPE_FLOAT8E8M0 ? 1 : 2; }

qlinear_dynamic_attrs Attrs(int32_t y, int32_t rule, int32_t granularity, int64_t axis,
                            int64_t block, int32_t scale_dtype = 0) {
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = y;
  a.rule = rule;
  a.granularity = granularity;
  a.axis = axis;
  a.block_size = block;
  a.scale_dtype = scale_dtype;
  return a;
}

// Payload bytes with red zones after it.
struct Buf {
  std::vector<uint8_t> mem;
  size_t size;
  explicit Buf(size_t n) : mem(n + kRedZone, kSentinel), size(n) {}
  uint8_t* data() { return mem.data(); }
  bool Intact() const {
    for (size_t i = size; i < mem.size(); ++i) {
      if (mem[i] != kSentinel) return false;
    }
    return true;
  }
  std::vector<uint8_t> bytes() const { return std::vector<uint8_t>(mem.begin(), mem.begin() + static_cast<std::ptrdiff_t>(size)); }
};

struct Out {
  qlinear_status status = QLINEAR_OK;
  std::string message;
  std::vector<uint8_t> y, scale, zp;
};

// One qlinear_quantize_dynamic (or _parallel) call with buffers of the sizes output_info gives.
Out Call(const qlinear_tensor& x, const qlinear_dynamic_attrs& a,
        const qlinear_parallel_options* par = nullptr) {
  Out o;
  size_t yb = 0, sb = 0, zb = 0;
  o.status = qlinear_quantize_dynamic_output_info(&x, &a, &yb, &sb, &zb);
  if (o.status != QLINEAR_OK) {
    o.message = qlinear_last_error();
    return o;
  }
  Buf y(yb), s(sb), z(zb);
  void* zp = a.rule == QLINEAR_SCALE_MINMAX ? z.data() : nullptr;
  o.status = par ? qlinear_quantize_dynamic_parallel(&x, &a, y.data(), yb, s.data(), sb, zp, zb, par)
                 : qlinear_quantize_dynamic(&x, &a, y.data(), yb, s.data(), sb, zp, zb);
  if (o.status != QLINEAR_OK) o.message = qlinear_last_error();
  EXPECT_TRUE(y.Intact() && s.Intact() && z.Intact()) << "written beyond an output";
  o.y = y.bytes();
  o.scale = s.bytes();
  o.zp = z.bytes();
  return o;
}

qlinear_tensor Vec1(int32_t dtype, const int64_t* shape, const void* data) {
  return qlinear_tensor{dtype, 1, shape, data};
}

uint32_t ScaleCode(const Out& o, int32_t st, size_t g) {
  uint32_t c = 0;
  std::memcpy(&c, o.scale.data() + g * static_cast<size_t>(ScaleBytes(st)), static_cast<size_t>(ScaleBytes(st)));
  return c;
}

// Scales of blocks of one element: scale[i] is the scale of the group {x[i]}.
std::vector<uint32_t> ElementScales(const std::vector<float>& x, int32_t y, int32_t rule, int32_t st) {
  const int64_t n = static_cast<int64_t>(x.size());
  const qlinear_tensor tx = Vec1(QLINEAR_DTYPE_FLOAT, &n, x.data());
  const Out o = Call(tx, Attrs(y, rule, QLINEAR_GRANULARITY_BLOCK, 0, 1, st));
  EXPECT_EQ(o.status, QLINEAR_OK) << o.message;
  std::vector<uint32_t> codes;
  const int32_t t = st ? st : rule >= QLINEAR_SCALE_MX ? QLINEAR_DTYPE_FLOAT8E8M0 : QLINEAR_DTYPE_FLOAT;
  for (size_t i = 0; i < x.size() && o.status == QLINEAR_OK; ++i) codes.push_back(ScaleCode(o, t, i));
  return codes;
}

struct Row {
  float amax;
  uint32_t code;
};

void ExpectTable(const std::vector<Row>& rows, int32_t y, int32_t rule, int32_t st, const char* what) {
  std::vector<float> x;
  for (const Row& r : rows) x.push_back(r.amax);
  const std::vector<uint32_t> got = ElementScales(x, y, rule, st);
  ASSERT_EQ(got.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(got[i], rows[i].code) << what << ": amax " << rows[i].amax << " (0x" << std::hex
                                    << BitsOf(rows[i].amax) << ")";
  }
}

// ---- hand tables ------------------------------------------------------------------------------

TEST(DynamicScales, AbsMaxFloat32Table) {
  // int8, P = 127. 1/127 = 2^-7 (1 + 2^-7 + 2^-14 + 2^-21 + 2^-28 ...): mantissa field
  // 2^16 + 2^9 + 2^2 = 0x10204, the rest (2^-28 ...) below half an ulp.
  ExpectTable({{127.0f, 0x3F800000u},                       // P 2^0 -> 1
               {std::ldexp(127.0f, -10), 0x3A800000u},      // P 2^-10 -> 2^-10
               {std::ldexp(127.0f, 100), 0x71800000u},      // P 2^100 -> 2^100
               {std::ldexp(127.0f, -130), 0x00080000u},     // -> 2^-130, a float32 subnormal
               {0.0f, 0x3C010204u},                         // range 0: 1/P
               {-0.0f, 0x3C010204u},
               {F(0x00000001u), 0x00000001u},               // 2^-149 / 127 rounds to 0 -> 2^-149
               {kNaN, 0x3C010204u},                         // nothing finite: as range 0
               {-kInf, 0x3C010204u},
               {1.0f, 0x3C010204u},                         // 2^0 / 127
               {F(0x3F7FFFFFu), 0x3C010204u},               // 2^0 (1 - 2^-24): 0.47 ulp below
               {-254.0f, 0x40000000u}},                     // |x|: 2 P -> 2
              QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, 0, "ABSMAX int8 float32");
  // int2, P = 1: the scale is amax itself.
  ExpectTable({{FLT_MAX, BitsOf(FLT_MAX)}, {F(0x00000003u), 0x00000003u}, {0.0f, 0x3F800000u}},
              QLINEAR_DTYPE_INT2, QLINEAR_SCALE_ABSMAX, 0, "ABSMAX int2");
  // e4m3fn, P = 448 = 7 * 2^6: 448 2^k -> 2^k; 3 * 2^-10 * 448 / 448.
  ExpectTable({{448.0f, 0x3F800000u}, {std::ldexp(448.0f, -20), 0x35800000u}, {1344.0f, 0x40400000u}},
              QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_ABSMAX, 0, "ABSMAX e4m3fn");
}

TEST(DynamicScales, AbsMaxHalfTypesOverflowAndUnderflow) {
  // float16 scales, int8: 65504 * 127 -> 65504 (0x7BFF); 65520 * 127 -> the tie 65520 rounds to
  // even 2^16 = Inf -> largest finite; 2^-24 * 127 -> 0x0001; 2^-25 * 127: tie -> 0 -> 0x0001;
  // 1.5 * 2^-24 * 127: tie between 1 and 2 -> 2; 1/127 -> 2^-7 (1 + 2^-7) = 0x2008.
  ExpectTable({{65504.0f * 127.0f, 0x7BFFu},
               {65520.0f * 127.0f, 0x7BFFu},
               {1e30f, 0x7BFFu},
               {127.0f, 0x3C00u},
               {std::ldexp(127.0f, -24), 0x0001u},
               {std::ldexp(127.0f, -25), 0x0001u},
               {std::ldexp(127.0f * 3.0f, -25), 0x0002u},
               {std::ldexp(127.0f, -40), 0x0001u},
               {0.0f, 0x2008u}},
              QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_DTYPE_FLOAT16, "ABSMAX float16");
  // bfloat16 scales, int2 (P = 1, scale = amax rounded): FLT_MAX rounds up to 2^128 -> 0x7F7F;
  // 2^-134 ties to 0 -> 0x0001; 1 + 2^-8 ties to even 1.0; 1 + 3 * 2^-8 ties up to 1 + 2^-6.
  ExpectTable({{FLT_MAX, 0x7F7Fu},
               {std::ldexp(1.0f, -134), 0x0001u},
               {std::ldexp(1.0f, -133), 0x0001u},
               {std::ldexp(3.0f, -134), 0x0002u},
               {1.0f + 0x1p-8f, 0x3F80u},
               {1.0f + 3 * 0x1p-8f, 0x3F82u},
               {0.0f, 0x3F80u}},
              QLINEAR_DTYPE_INT2, QLINEAR_SCALE_ABSMAX, QLINEAR_DTYPE_BFLOAT16, "ABSMAX bfloat16");
}

TEST(DynamicScales, MxTable) {
  // e4m3fn, emax 8: code = floor(log2 amax) - 8 + 127, clamped to [0, 254]; NaN/Inf -> 0xFF.
  ExpectTable({{448.0f, 127},
               {256.0f, 127},
               {F(0x437FFFFFu), 126},      // 2^8 (1 - 2^-24): floor(log2) = 7
               {512.0f, 128},
               {1.0f, 119},
               {F(0x3F7FFFFFu), 118},
               {FLT_MAX, 246},
               {std::ldexp(1.0f, -119), 0},  // e = -127
               {std::ldexp(1.0f, -120), 0},  // e = -128 -> clamped
               {F(0x00000001u), 0},          // subnormal amax
               {0.0f, 0},
               {kNaN, 0xFF},
               {kInf, 0xFF},
               {-kInf, 0xFF}},
              QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_MX, 0, "MX e4m3fn");
  // int8 (MXINT8's ONNX scale, emax 6), float4e2m1 (emax 2), e5m2 (emax 15).
  ExpectTable({{127.0f, 127}, {128.0f, 128}, {1.0f, 121}, {-64.0f, 127}},
              QLINEAR_DTYPE_INT8, QLINEAR_SCALE_MX, 0, "MX int8");
  ExpectTable({{6.0f, 127}, {8.0f, 128}, {F(0x40FFFFFFu), 127}, {1.0f, 125}},
              QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_SCALE_MX, 0, "MX float4e2m1");
  ExpectTable({{57344.0f, 127}, {1.0f, 112}, {FLT_MAX, 239}},
              QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_SCALE_MX, 0, "MX e5m2");
}

TEST(DynamicScales, Pow2CeilTable) {
  // e4m3fn, P = 448: the smallest e with 448 2^e >= amax.
  ExpectTable({{448.0f, 127},
               {F(0x43E00001u), 128},        // just above 448
               {224.0f, 126},
               {F(0x435FFFFFu), 126},        // just below 224
               {F(0x43600001u), 127},        // just above 224
               {1.0f, 119},                  // 448 2^-8 = 1.75 >= 1 > 0.875
               {512.0f, 128},
               {F(0x00000001u), 0},          // clamped to 2^-127
               {0.0f, 0},
               {kNaN, 0xFF},
               {-kInf, 0xFF}},
              QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_POW2_CEIL, 0, "POW2_CEIL e4m3fn");
  // int2, P = 1: e = ceil(log2 amax); FLT_MAX needs 2^128 -> clamped to 2^127.
  ExpectTable({{1.0f, 127}, {1.5f, 128}, {2.0f, 128}, {F(0x3F7FFFFFu), 127}, {FLT_MAX, 254},
               {0.25f, 125}},
              QLINEAR_DTYPE_INT2, QLINEAR_SCALE_POW2_CEIL, 0, "POW2_CEIL int2");
  // int8, P = 127: 127 2^e >= amax.
  ExpectTable({{127.0f, 127}, {F(0x42FE0001u), 128}, {128.0f, 128}, {63.5f, 126}},
              QLINEAR_DTYPE_INT8, QLINEAR_SCALE_POW2_CEIL, 0, "POW2_CEIL int8");
}

// MINMAX, hand cases: s = fl32(fl32(hi - lo) / (qmax - qmin)), zero point = rint(clamp(qmin -
// fl32(lo / s), qmin, qmax)).
TEST(DynamicScales, MinMaxTable) {
  struct Case {
    std::vector<float> x;
    int32_t y;
    uint32_t scale_bits;
    int32_t zp;
    const char* what;
  };
  const float s3 = 3.0f / 255.0f;  // fl32(3 / 255): range [-1, 2]
  const Case cases[] = {
      {{-1.0f, 2.0f}, QLINEAR_DTYPE_UINT8, BitsOf(s3), 85, "[-1, 2] uint8"},
      {{-1.0f, 2.0f}, QLINEAR_DTYPE_INT8, BitsOf(s3), -43, "[-1, 2] int8"},
      {{0.0f, 0.0f, -0.0f}, QLINEAR_DTYPE_UINT8, BitsOf(1.0f / 255.0f), 0, "zeros: 1/255"},
      {{0.0f}, QLINEAR_DTYPE_INT8, BitsOf(1.0f / 255.0f), -128, "zeros int8"},
      {{0.0f}, QLINEAR_DTYPE_UINT4, BitsOf(1.0f / 15.0f), 0, "zeros uint4: 1/15"},
      {{1.0f, 2.0f}, QLINEAR_DTYPE_UINT8, BitsOf(2.0f / 255.0f), 0, "positive: lo = 0"},
      {{-2.0f, -1.0f}, QLINEAR_DTYPE_UINT8, BitsOf(2.0f / 255.0f), 255, "negative: hi = 0"},
      {{-2.0f, -1.0f}, QLINEAR_DTYPE_INT4, BitsOf(2.0f / 15.0f), 7, "negative int4"},
      {{-3e38f, 3e38f}, QLINEAR_DTYPE_UINT8, BitsOf(FLT_MAX), 1, "range overflows: FLT_MAX, zp rint(0.88)"},
      {{0.0f, F(1)}, QLINEAR_DTYPE_UINT8, 1u, 0, "2^-149 / 255 underflows: 2^-149"},
      {{kNaN, 1.0f, -kInf}, QLINEAR_DTYPE_UINT8, BitsOf(1.0f / 255.0f), 0, "NaN, Inf left out"},
      {{kNaN}, QLINEAR_DTYPE_INT16, BitsOf(1.0f / 65535.0f), -32768, "nothing finite"},
  };
  for (const Case& c : cases) {
    const int64_t n = static_cast<int64_t>(c.x.size());
    const qlinear_tensor tx = Vec1(QLINEAR_DTYPE_FLOAT, &n, c.x.data());
    const Out o = Call(tx, Attrs(c.y, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_TENSOR, -1, 0));
    ASSERT_EQ(o.status, QLINEAR_OK) << o.message;
    EXPECT_EQ(ScaleCode(o, QLINEAR_DTYPE_FLOAT, 0), c.scale_bits) << c.what;
    const int bits = FindDType(c.y)->bits;
    uint32_t z = 0;
    std::memcpy(&z, o.zp.data(), static_cast<size_t>(std::max(1, bits / 8)));
    z &= bits >= 32 ? ~0u : (1u << bits) - 1;
    const int32_t zv = FindDType(c.y)->is_signed ? static_cast<int32_t>(z << (32 - bits)) >> (32 - bits) : static_cast<int32_t>(z);
    EXPECT_EQ(zv, c.zp) << c.what;
  }
  // float16 scale: fl32(3/255) = 0.011764706 rounded to float16.
  const std::vector<float> x{-1.0f, 2.0f};
  const int64_t n = 2;
  const qlinear_tensor tx = Vec1(QLINEAR_DTYPE_FLOAT, &n, x.data());
  const Out o = Call(tx, Attrs(QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_TENSOR, -1, 0, QLINEAR_DTYPE_FLOAT16));
  ASSERT_EQ(o.status, QLINEAR_OK) << o.message;
  EXPECT_EQ(ScaleCode(o, QLINEAR_DTYPE_FLOAT16, 0), Half::Encode(s3));
  EXPECT_EQ(o.zp[0], static_cast<uint8_t>(std::nearbyint(0.0f - (-1.0f) / Half::Decode(Half::Encode(s3)))));
}

// MINMAX uint8 per tensor is DynamicQuantizeLinear (the library's opset-11 entry point).
TEST(DynamicScales, MinMaxUint8IsDynamicQuantizeLinear) {
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int rep = 0; rep < 20; ++rep) {
    std::vector<float> x(1000 + rep);
    for (float& v : x) v = normal(rng) + (rep % 3 == 0 ? 5.0f : rep % 3 == 1 ? -5.0f : 0.0f);
    const int64_t n = static_cast<int64_t>(x.size());
    const qlinear_tensor tx = Vec1(QLINEAR_DTYPE_FLOAT, &n, x.data());
    const Out o = Call(tx, Attrs(QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_TENSOR, -1, 0));
    ASSERT_EQ(o.status, QLINEAR_OK) << o.message;
    std::vector<uint8_t> y(x.size());
    float scale;
    uint8_t zp;
    ASSERT_EQ(qlinear_dynamic_quantize_linear(&tx, y.data(), y.size(), &scale, &zp), QLINEAR_OK);
    EXPECT_EQ(ScaleCode(o, QLINEAR_DTYPE_FLOAT, 0), BitsOf(scale));
    EXPECT_EQ(o.zp[0], zp);
    EXPECT_EQ(o.y, y);
  }
}

// A NaN/Inf group's elements quantize as QuantizeLinear quantizes them: MX gives the whole
// block the NaN scale, so every element is a NaN quotient.
TEST(DynamicScales, NonFiniteGroupsQuantize) {
  std::vector<float> x(64, 1.0f);
  x[3] = kNaN;       // block 0: NaN scale under MX
  x[40] = kInf;      // block 1: Inf
  const int64_t n = 64;
  const qlinear_tensor tx = Vec1(QLINEAR_DTYPE_FLOAT, &n, x.data());
  Out o = Call(tx, Attrs(QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_BLOCK, 0, 32));
  ASSERT_EQ(o.status, QLINEAR_OK) << o.message;
  EXPECT_EQ(o.scale[0], 0xFF);
  EXPECT_EQ(o.scale[1], 0xFF);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(o.y[static_cast<size_t>(i)], 0x7F) << i;  // +NaN code
  o = Call(tx, Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 0, 32));
  ASSERT_EQ(o.status, QLINEAR_OK) << o.message;
  EXPECT_EQ(ScaleCode(o, QLINEAR_DTYPE_FLOAT, 0), BitsOf(1.0f / 127.0f));
  EXPECT_EQ(static_cast<int8_t>(o.y[3]), -128);   // NaN -> qmin
  EXPECT_EQ(static_cast<int8_t>(o.y[40]), 127);   // Inf -> qmax
  EXPECT_EQ(static_cast<int8_t>(o.y[0]), 127);    // 1 / (1/127)
}

// ---- the scale formulas against an exact rational rounding ------------------------------------

int BitLength(uint64_t v) { return v == 0 ? 0 : 64 - __builtin_clzll(v); }

// amax (finite, > 0) = m 2^e with m an integer.
void Decompose(float amax, uint64_t* m, int* e) {
  const uint32_t b = BitsOf(amax) & 0x7FFFFFFFu;
  const uint32_t field = b >> 23, frac = b & 0x7FFFFFu;
  *m = field == 0 ? frac : (frac | 0x800000u);
  *e = (field == 0 ? 1 : static_cast<int>(field)) - 150;
}

// m 2^e >= p 2^k, exactly (p an integer).
bool AtLeast(uint64_t m, int e, uint64_t p, int k) {
  const int d = e - k;
  const unsigned __int128 lhs = d >= 0 ? static_cast<unsigned __int128>(m) << d : m;
  const unsigned __int128 rhs = d >= 0 ? p : static_cast<unsigned __int128>(p) << -d;
  return lhs >= rhs;
}

// The value of m 2^e / p rounded to nearest even on the grid of a format with `mant` fraction
// bits and smallest normal exponent emin (no overflow handling): as a double (exact).
double ExactRound(uint64_t m, int e, uint64_t p, int mant, int emin) {
  int k = e + BitLength(m) - BitLength(p);  // floor(log2(m 2^e / p)) is k or k - 1
  if (!AtLeast(m, e, p, k)) --k;
  const int q = std::max(k, emin) - mant;  // quantum 2^q
  // (m 2^e / p) / 2^q = m 2^(e - q) / p
  const int sh = e - q;
  if (sh < -100) return 0.0;  // far below half a quantum
  const unsigned __int128 num = sh >= 0 ? static_cast<unsigned __int128>(m) << sh : m;
  const unsigned __int128 den = sh >= 0 ? p : static_cast<unsigned __int128>(p) << -sh;
  unsigned __int128 r = num / den;
  const unsigned __int128 rem = num % den;
  if (2 * rem > den || (2 * rem == den && (r & 1))) ++r;
  return std::ldexp(static_cast<double>(static_cast<uint64_t>(r)), q);
}

double DecodeScale(DType t, uint32_t code) {
  switch (t) {
    case DType::kFloat32: return FloatOf(code);
    case DType::kFloat16: return Half::Decode(static_cast<uint16_t>(code));
    case DType::kBFloat16: return BFloat16::Decode(static_cast<uint16_t>(code));
    default: return DecodeE8M0(static_cast<uint8_t>(code));
  }
}

// ABSMAX: the expected scale value of a finite amax, from ExactRound and the edge rules.
double ExpectedAbsMax(float amax, uint64_t p, DType t) {
  const int mant = t == DType::kFloat32 ? 23 : t == DType::kFloat16 ? 10 : 7;
  const int emin = t == DType::kFloat16 ? -14 : -126;
  const double maxv = t == DType::kFloat32 ? FLT_MAX : t == DType::kFloat16 ? 65504.0 : BFloat16::MaxValue();
  uint64_t m = 1;
  int e = 0;
  if (amax != 0.0f) Decompose(amax, &m, &e);
  double v = ExactRound(m, e, p, mant, emin);
  // Rounding up past the largest finite value is an overflow (the next binade's first value).
  if (v > maxv) v = maxv;
  if (v == 0.0) v = std::ldexp(1.0, emin - mant);
  return v;
}

// Interesting amax bit patterns: every exponent with edge mantissas, P 2^k neighbours, random.
std::vector<float> AmaxSweep(float p, std::mt19937& rng) {
  std::vector<float> v{0.0f};
  for (uint32_t field = 0; field < 255; ++field) {
    for (uint32_t frac : {0u, 1u, 2u, 0x400000u, 0x7FFFFEu, 0x7FFFFFu, 0x123457u}) {
      const float a = F(field << 23 | frac);
      if (a != 0.0f) v.push_back(a);
    }
  }
  for (int k = -150; k <= 128; ++k) {
    const float a = std::ldexp(p, k);
    if (!(a > 0.0f) || std::isinf(a)) continue;
    v.push_back(a);
    v.push_back(std::nextafter(a, kInf));
    v.push_back(std::nextafter(a, 0.0f));
    v.push_back(std::ldexp(p + 0.5f, k));  // tie candidates of the quotient
  }
  for (int i = 0; i < 20000; ++i) {
    const float a = F(static_cast<uint32_t>(rng()) & 0x7F7FFFFFu);
    if (a > 0.0f) v.push_back(a);
  }
  return v;
}

// Amax values whose float32 quotient by p is exactly a float16/bfloat16 midpoint although the
// exact quotient is not (or is): the double-rounding traps of rounding through float32.
std::vector<float> MidpointTraps(float p, std::mt19937& rng) {
  std::vector<float> v;
  for (int i = 0; i < 400; ++i) {
    const int mant = i % 2 ? 10 : 7;  // float16, bfloat16
    const int e = static_cast<int>(rng() % 60) - 40;
    const double m = std::ldexp(2.0 * static_cast<double>(rng() % (1u << mant)) + 1.0 + std::ldexp(1.0, mant + 1), e - mant - 1);
    const float a = static_cast<float>(m * p);
    for (float c : {a, std::nextafter(a, kInf), std::nextafter(a, 0.0f)}) {
      if (c > 0.0f && std::isfinite(c)) v.push_back(c);
    }
  }
  return v;
}

const DType kSignedOutputs[] = {DType::kInt8, DType::kInt16, DType::kInt4, DType::kInt2,
                                DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                                DType::kFloat8E5M2FNUZ, DType::kFloat4E2M1};

TEST(DynamicScales, AbsMaxIsTheExactQuotientRounded) {
  std::mt19937 rng(7);
  for (DType y : kSignedOutputs) {
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      const RuleFacts f = FactsFor(Rule::kAbsMax, y, t);
      const uint64_t p = static_cast<uint64_t>(f.p);
      ASSERT_EQ(static_cast<float>(p), f.p);
      std::vector<float> sweep = AmaxSweep(f.p, rng);
      const std::vector<float> traps = MidpointTraps(f.p, rng);
      sweep.insert(sweep.end(), traps.begin(), traps.end());
      for (float a : sweep) {
        const double want = ExpectedAbsMax(a, p, t);
        const GroupScale fast = GroupScaleFromStats(f, BitsOf(a), 0);
        const GroupScale ref = ReferenceGroupScale(f, 0.0, a, false);
        ASSERT_EQ(DecodeScale(t, fast.code), want) << Name(y) << " " << Name(t) << " amax " << a;
        ASSERT_EQ(fast.code, ref.code) << Name(y) << " " << Name(t) << " amax " << a;
        ASSERT_EQ(static_cast<double>(fast.value), want);
      }
    }
  }
}

// The e8m0 code MX / POW2_CEIL give amax (finite), from integer arithmetic.
uint32_t ExpectedPowerOfTwo(Rule rule, float a, uint64_t p) {
  int e = -127;
  if (a != 0.0f) {
    uint64_t m;
    int ea;
    Decompose(a, &m, &ea);
    if (rule == Rule::kMx) {
      e = ea + BitLength(m) - 1 - (BitLength(p) - 1);  // floor(log2 a) - floor(log2 p)
    } else {
      e = ea + BitLength(m) - BitLength(p) - 1;  // p 2^e < a here
      while (!AtLeast(p, e, m, ea)) ++e;          // the smallest e with p 2^e >= a
    }
  }
  return static_cast<uint32_t>(std::max(-127, std::min(127, e)) + 127);
}

TEST(DynamicScales, PowerOfTwoRulesAreExact) {
  std::mt19937 rng(8);
  for (DType y : kSignedOutputs) {
    for (Rule rule : {Rule::kMx, Rule::kPow2Ceil}) {
      const RuleFacts f = FactsFor(rule, y, DType::kFloat8E8M0);
      const uint64_t p = static_cast<uint64_t>(f.p);
      for (float a : AmaxSweep(f.p, rng)) {
        const uint32_t want = ExpectedPowerOfTwo(rule, a, p);
        const GroupScale fast = GroupScaleFromStats(f, BitsOf(a), 0);
        const GroupScale ref = ReferenceGroupScale(f, 0.0, a, false);
        ASSERT_EQ(fast.code, want) << Name(y) << " amax " << a;
        ASSERT_EQ(ref.code, want) << Name(y) << " amax " << a;
        ASSERT_EQ(BitsOf(fast.value), BitsOf(DecodeE8M0(static_cast<uint8_t>(want))));
      }
      EXPECT_EQ(GroupScaleFromStats(f, kNonFiniteBits, 0).code, 0xFFu);
      EXPECT_EQ(GroupScaleFromStats(f, 0x7FC00000u, 0).code, 0xFFu);
    }
  }
}

// ---- every target: against the reference and QuantizeLinear ---------------------------------

class DynamicTest : public PerTargetTest {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(DynamicTest);

// The vector scale computation on this target: every group of one element (blocks of 1) over the
// amax sweep and the midpoint traps, against the exact roundings above.
TEST_P(DynamicTest, ScalesAreExactOnEveryTarget) {
  std::mt19937 rng(9);
  for (DType y : kSignedOutputs) {
    const float p = FactsFor(Rule::kAbsMax, y, DType::kFloat32).p;
    std::vector<float> amax = AmaxSweep(p, rng);
    amax.resize(std::min<size_t>(amax.size(), 6000));
    const std::vector<float> traps = MidpointTraps(p, rng);
    amax.insert(amax.end(), traps.begin(), traps.end());
    for (size_t i = 0; i < amax.size(); i += 7) amax[i] = -amax[i];  // |x| decides
    const int64_t n = static_cast<int64_t>(amax.size());
    const qlinear_tensor tx = Vec1(QLINEAR_DTYPE_FLOAT, &n, amax.data());
    for (int32_t rule : {QLINEAR_SCALE_ABSMAX, QLINEAR_SCALE_MX, QLINEAR_SCALE_POW2_CEIL}) {
      for (int32_t st : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
        if (rule != QLINEAR_SCALE_ABSMAX && st != QLINEAR_DTYPE_FLOAT) continue;
        const qlinear_dynamic_attrs a = Attrs(static_cast<int32_t>(y), rule, QLINEAR_GRANULARITY_BLOCK, 0, 1,
                                              rule == QLINEAR_SCALE_ABSMAX ? st : 0);
        const Out o = Call(tx, a);
        ASSERT_EQ(o.status, QLINEAR_OK) << o.message;
        for (size_t i = 0; i < amax.size(); ++i) {
          const float v = std::fabs(amax[i]);
          if (rule == QLINEAR_SCALE_ABSMAX) {
            const DType t = static_cast<DType>(st);
            ASSERT_EQ(DecodeScale(t, ScaleCode(o, st, i)), ExpectedAbsMax(v, static_cast<uint64_t>(p), t))
                << Name(y) << " " << Name(t) << " amax " << v;
          } else {
            ASSERT_EQ(o.scale[i], ExpectedPowerOfTwo(static_cast<Rule>(rule), v, static_cast<uint64_t>(p)))
                << Name(y) << " rule " << rule << " amax " << v;
          }
        }
      }
    }
  }
}

struct XData {
  std::vector<uint8_t> bytes;
  std::vector<float> values;  // exact float32 values
};

// Values whose magnitude changes every few elements (groups get different scales), with runs of
// zeros (whole groups of 0), subnormals, -0, and rare NaN/Inf.
XData MakeX(int32_t type, int64_t n, std::mt19937& rng, bool specials) {
  XData d;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 999), exp(-30, 30);
  int zero_run = 0;
  float mag = 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 13 == 0) mag = std::ldexp(1.0f, exp(rng));
    float v = normal(rng) * mag;
    const int r = pick(rng);
    if (zero_run > 0) {
      v = 0.0f;
      --zero_run;
    } else if (r < 3) {
      zero_run = 70;
    } else if (r < 6) {
      v = F(static_cast<uint32_t>(rng()) & 0x807FFFFFu);  // subnormal
    } else if (r < 8) {
      v = -0.0f;
    } else if (specials && r < 10) {
      v = r == 8 ? kNaN : (rng() & 1 ? kInf : -kInf);
    }
    uint8_t b[4];
    size_t w = 4;
    if (type == QLINEAR_DTYPE_FLOAT) {
      std::memcpy(b, &v, 4);
    } else {
      const uint16_t h = type == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(v) : BFloat16::Encode(v);
      v = type == QLINEAR_DTYPE_FLOAT16 ? Half::Decode(h) : BFloat16::Decode(h);
      std::memcpy(b, &h, 2);
      w = 2;
    }
    d.bytes.insert(d.bytes.end(), b, b + w);
    d.values.push_back(v);
  }
  return d;
}

std::string Describe(const std::vector<int64_t>& shape, const qlinear_dynamic_attrs& a, int32_t xt) {
  std::string s = std::string(qlinear_dtype_name(xt)) + " [";
  for (int64_t d : shape) s += std::to_string(d) + ",";
  return s + "] -> " + qlinear_dtype_name(a.output_dtype) + " rule " + std::to_string(a.rule) +
         " granularity " + std::to_string(a.granularity) + " axis " + std::to_string(a.axis) +
         " block " + std::to_string(a.block_size) + " scale " + std::to_string(a.scale_dtype);
}

// A caller's parallel-for running the tasks last first (order must not matter).
void Backwards(void*, int64_t count, qlinear_task_fn task, void* ctx) {
  for (int64_t i = count - 1; i >= 0; --i) task(ctx, i);
}

// The parallel call through Backwards.
Out CallInTasks(const qlinear_tensor& x, const qlinear_dynamic_attrs& a, int32_t threads, int64_t min_per_task) {
  qlinear_parallel_options par;
  qlinear_parallel_options_init(&par);
  par.max_threads = threads;
  par.min_elements_per_task = min_per_task;
  par.parallel_for = Backwards;
  return Call(x, a, &par);
}

// The scale's shape as qlinear.h describes it.
std::vector<int64_t> ScaleShape(const std::vector<int64_t>& shape, const qlinear_dynamic_attrs& a) {
  const int64_t ax = a.axis < 0 ? a.axis + static_cast<int64_t>(shape.size()) : a.axis;
  if (a.granularity == QLINEAR_GRANULARITY_AXIS) return {shape[static_cast<size_t>(ax)]};
  if (a.granularity == QLINEAR_GRANULARITY_TENSOR) return {};
  std::vector<int64_t> ss = shape;
  int64_t& d = ss[static_cast<size_t>(ax)];
  d = d / a.block_size + (d % a.block_size != 0);
  return ss;
}

int32_t ScaleType(const qlinear_dynamic_attrs& a) {
  return a.scale_dtype ? a.scale_dtype : a.rule >= QLINEAR_SCALE_MX ? QLINEAR_DTYPE_FLOAT8E8M0 : QLINEAR_DTYPE_FLOAT;
}

// DequantizeLinear of the outputs gives x back within half a step (plus float32 rounding)
// wherever x did not saturate (integer outputs).
void CheckRoundTrip(const std::vector<int64_t>& shape, const qlinear_dynamic_attrs& a, const XData& x,
                    const Out& o, const std::string& what) {
  const DTypeInfo& yi = *FindDType(a.output_dtype);
  if (yi.kind != Kind::kInt) return;
  const int32_t st = ScaleType(a);
  qlinear_quantize_attrs qa;
  ASSERT_EQ(qlinear_quantize_attrs_for_dynamic(&a, &qa), QLINEAR_OK);
  qlinear_dequantize_attrs da;
  qlinear_dequantize_attrs_init(&da);
  da.axis = qa.axis;
  da.block_size = qa.block_size;
  da.output_dtype = QLINEAR_DTYPE_FLOAT;
  DynamicPlan plan;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(shape.size()), shape.data(), x.values.data()};
  ASSERT_EQ(PlanDynamic(&tx, &a, true, &plan), QLINEAR_OK);
  const Layout& l = plan.q.layout;
  const std::vector<int64_t> ss = ScaleShape(shape, a);
  const qlinear_tensor ty{a.output_dtype, static_cast<int32_t>(shape.size()), shape.data(), o.y.data()};
  const qlinear_tensor ts{st, static_cast<int32_t>(ss.size()), ss.data(), o.scale.data()};
  const qlinear_tensor tz{a.output_dtype, static_cast<int32_t>(ss.size()), ss.data(), o.zp.data()};
  std::vector<float> dq(x.values.size());
  const bool minmax = a.rule == QLINEAR_SCALE_MINMAX;
  ASSERT_EQ(qlinear_dequantize_linear(&ty, &ts, minmax ? &tz : nullptr, &da, dq.data(), dq.size() * 4), QLINEAR_OK)
      << qlinear_last_error() << " " << what;
  const DType yt = static_cast<DType>(a.output_dtype);
  for (size_t i = 0; i < x.values.size(); ++i) {
    const float v = x.values[i];
    const int32_t code = LoadInt(yt, o.y.data(), static_cast<int64_t>(i));
    if (!std::isfinite(v) || code <= yi.qmin || code >= yi.qmax) continue;  // saturated (or at a bound)
    const int64_t k = ScaleIndex(l, static_cast<int64_t>(i));
    const double s = DecodeScale(static_cast<DType>(st), ScaleCode(o, st, static_cast<size_t>(k)));
    if (!(s > 0.0)) continue;  // NaN scale
    const double tol = 0.5 * s * (1.0 + 0x1p-20) + std::fabs(v) * 0x1p-23 + 0x1p-149;
    ASSERT_LE(std::fabs(static_cast<double>(v) - dq[i]), tol) << what << " element " << i << " x " << v;
  }
}

void CheckConfigOf(int32_t xt, const std::vector<int64_t>& shape, const qlinear_dynamic_attrs& a, const XData& x) {
  const std::string what = Describe(shape, a, xt);
  const qlinear_tensor tx{xt, static_cast<int32_t>(shape.size()), shape.data(), x.bytes.data()};
  const Out o = Call(tx, a);
  ASSERT_EQ(o.status, QLINEAR_OK) << o.message << " " << what;

  // The reference: statistics through ScaleIndex, the double formulas, QuantizeReference.
  DynamicPlan plan;
  ASSERT_EQ(PlanDynamic(&tx, &a, true, &plan), QLINEAR_OK);
  std::vector<uint8_t> y(o.y.size()), s(o.scale.size()), z(o.zp.size());
  DynamicOutputs ref;
  ref.y = y.data();
  ref.scale = s.data();
  ref.zero_point = a.rule == QLINEAR_SCALE_MINMAX ? z.data() : nullptr;
  QuantizeDynamicReference(plan, ref);
  ASSERT_EQ(o.scale, s) << "scales differ from the reference: " << what;
  ASSERT_EQ(o.zp, z) << "zero points differ from the reference: " << what;
  ASSERT_EQ(o.y, y) << "y differs from the reference: " << what;

  // The invariant: QuantizeLinear with the scales written.
  {
    qlinear_quantize_attrs qa;
    ASSERT_EQ(qlinear_quantize_attrs_for_dynamic(&a, &qa), QLINEAR_OK);
    const std::vector<int64_t> ss = ScaleShape(shape, a);
    const qlinear_tensor ts{ScaleType(a), static_cast<int32_t>(ss.size()), ss.data(), o.scale.data()};
    const qlinear_tensor tz{a.output_dtype, static_cast<int32_t>(ss.size()), ss.data(), o.zp.data()};
    std::vector<uint8_t> q(o.y.size() + 1, 0);
    ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, a.rule == QLINEAR_SCALE_MINMAX ? &tz : nullptr, &qa, q.data(), o.y.size()),
              QLINEAR_OK)
        << qlinear_last_error() << " " << what;
    q.resize(o.y.size());
    ASSERT_EQ(o.y, q) << "y differs from QuantizeLinear with the scales written: " << what;
  }

  // Parallel: a caller's runner (tasks in reverse order), small tasks.
  const Out op = CallInTasks(tx, a, 5, 64);
  ASSERT_EQ(op.status, QLINEAR_OK) << op.message;
  ASSERT_EQ(op.y, o.y) << "parallel y differs: " << what;
  ASSERT_EQ(op.scale, o.scale) << "parallel scales differ: " << what;
  ASSERT_EQ(op.zp, o.zp) << "parallel zero points differ: " << what;

  CheckRoundTrip(shape, a, x, o, what);
}

void CheckConfig(int32_t xt, const std::vector<int64_t>& shape, const qlinear_dynamic_attrs& a,
                 std::mt19937& rng, bool specials) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  CheckConfigOf(xt, shape, a, MakeX(xt, n, rng, specials));
}

struct RuleType {
  int32_t rule, y, scale;
};
const RuleType kRuleTypes[] = {
    {QLINEAR_SCALE_ABSMAX, QLINEAR_DTYPE_INT8, 0},
    {QLINEAR_SCALE_ABSMAX, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_FLOAT16},
    {QLINEAR_SCALE_ABSMAX, QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_BFLOAT16},
    {QLINEAR_SCALE_ABSMAX, QLINEAR_DTYPE_INT16, 0},
    {QLINEAR_SCALE_MINMAX, QLINEAR_DTYPE_UINT8, 0},
    {QLINEAR_SCALE_MINMAX, QLINEAR_DTYPE_UINT4, 0},
    {QLINEAR_SCALE_MINMAX, QLINEAR_DTYPE_INT2, QLINEAR_DTYPE_FLOAT16},
    {QLINEAR_SCALE_MINMAX, QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_BFLOAT16},
    {QLINEAR_SCALE_MX, QLINEAR_DTYPE_FLOAT8E4M3FN, 0},
    {QLINEAR_SCALE_MX, QLINEAR_DTYPE_FLOAT4E2M1, 0},
    {QLINEAR_SCALE_MX, QLINEAR_DTYPE_INT8, 0},
    {QLINEAR_SCALE_MX, QLINEAR_DTYPE_FLOAT8E5M2, 0},
    {QLINEAR_SCALE_POW2_CEIL, QLINEAR_DTYPE_INT4, 0},
    {QLINEAR_SCALE_POW2_CEIL, QLINEAR_DTYPE_FLOAT8E4M3FNUZ, 0},
};

// Every axis of rank-3 tensors, per tensor, per axis, blocks that do and do not divide the axis
// (and are not multiples of any vector length), for every rule.
TEST_P(DynamicTest, EveryLayoutMatchesReferenceAndQuantizeLinear) {
  std::mt19937 rng(11);
  const std::vector<int64_t> shape{3, 37, 11};
  const int32_t xts[] = {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16};
  int k = 0;
  for (const RuleType& rt : kRuleTypes) {
    const int32_t xt = xts[k++ % 3];
    CheckConfig(xt, shape, Attrs(rt.y, rt.rule, QLINEAR_GRANULARITY_TENSOR, -1, 0, rt.scale), rng, true);
    for (int64_t axis : {0, 1, 2, -1}) {
      CheckConfig(xt, shape, Attrs(rt.y, rt.rule, QLINEAR_GRANULARITY_AXIS, axis, 0, rt.scale), rng, true);
      for (int64_t block : {1, 4, 7, 32}) {
        CheckConfig(xt, shape, Attrs(rt.y, rt.rule, QLINEAR_GRANULARITY_BLOCK, axis, block, rt.scale), rng,
                    k % 2 == 0);
      }
    }
  }
}

// Sizes around the vector length and blocks that are multiples of it (the batched reduction:
// unrolled for 1, 2, 4, 8 or 16 vectors, a loop for 3), with short last blocks; rows longer than a chunk (cut inside rows) and odd rows (sub-byte
// outputs cut only where bytes are not shared).
TEST_P(DynamicTest, SizesBlocksAndChunks) {
  std::mt19937 rng(12);
  const int64_t lanes = DispatchedLanesF32();
  for (int64_t cols : {int64_t{1}, lanes - 1, lanes, lanes + 1, 16 * lanes, 16 * lanes + 5, 100 * lanes + 3}) {
    if (cols < 1) continue;
    for (int64_t block : {lanes, 2 * lanes, 3 * lanes, int64_t{32}, int64_t{128}}) {
      CheckConfig(QLINEAR_DTYPE_FLOAT, {5, cols},
                  Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, block), rng, true);
      CheckConfig(QLINEAR_DTYPE_FLOAT, {5, cols},
                  Attrs(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 1, block), rng, true);
      CheckConfig(QLINEAR_DTYPE_BFLOAT16, {5, cols},
                  Attrs(QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_BLOCK, 1, block), rng, false);
    }
  }
  // Longer than a chunk (32K elements): rows of 20001 (odd: int4 bytes are cut at even rows
  // only) and of 40001 (cut inside rows), per row and blocks along the rows; blocks along an
  // outer axis (slabs of 32 rows of 501).
  CheckConfig(QLINEAR_DTYPE_FLOAT, {3, 20001},
              Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, 32), rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT, {2, 40001},
              Attrs(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 1, 32), rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT, {3, 20001},
              Attrs(QLINEAR_DTYPE_UINT2, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT16, {70, 501},
              Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 0, 32), rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT, {41, 999},
              Attrs(QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_BLOCK, 1, 32), rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT, {30000},
              Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_TENSOR, -1, 0), rng, true);
  // Empty tensors: scales of empty groups (range 0).
  CheckConfig(QLINEAR_DTYPE_FLOAT, {4, 0},
              Attrs(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT, {0},
              Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_TENSOR, -1, 0), rng, true);
}

// A float32 tensor of `shape` checked (CheckConfig), then quantized serially and in parallel
// tasks of at least min_per_task elements (several chunks each): the same bytes.
void CheckTasksOfSeveralChunks(const std::vector<int64_t>& shape, const qlinear_dynamic_attrs& a,
                               int64_t min_per_task, std::mt19937& rng) {
  CheckConfig(QLINEAR_DTYPE_FLOAT, shape, a, rng, false);
  const XData x = MakeX(QLINEAR_DTYPE_FLOAT, shape[0] * shape[1], rng, false);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.bytes.data()};
  const Out serial = Call(tx, a);
  const Out parallel = CallInTasks(tx, a, 3, min_per_task);
  ASSERT_EQ(serial.status, QLINEAR_OK);
  ASSERT_EQ(parallel.status, QLINEAR_OK);
  EXPECT_EQ(parallel.y, serial.y);
  EXPECT_EQ(parallel.scale, serial.scale);
}

// Per row with the statistics of the next chunk's rows computed inside the quantize loop of
// this chunk's (float32 x, the reciprocal path's groups; elsewhere after the chunk): rows that
// are and are not whole groups of vectors, a shorter last chunk, NaN/Inf in later chunks (the
// finite-only rerun), packed, float8, power-of-two (exact products) and int16 (relative margin)
// outputs, MINMAX (two keys), float16/bfloat16 x, parallel tasks of several chunks, and the
// division path.
TEST_P(DynamicTest, PerRowStatisticsOfTheNextChunk) {
  std::mt19937 rng(15);
  const int64_t lanes = DispatchedLanesF32();
  const std::vector<std::vector<int64_t>> shapes{{67, 1003}, {40, 1024}, {2100, 17}, {9, 4 * lanes * 300 + lanes + 1}};
  for (const auto& shape : shapes) {  // without NaN/Inf the statistics of the loop are the ones used
    for (bool specials : {false, true}) {
      CheckConfig(QLINEAR_DTYPE_FLOAT, shape,
                  Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, specials);
    }
  }
  const std::vector<int64_t> shape{67, 1003};
  CheckConfig(QLINEAR_DTYPE_FLOAT, {66, 1004},
              Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, false);
  CheckConfig(QLINEAR_DTYPE_FLOAT, shape,
              Attrs(QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, false);
  CheckConfig(QLINEAR_DTYPE_FLOAT, shape, Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_AXIS, 0, 0),
              rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT, shape,
              Attrs(QLINEAR_DTYPE_INT16, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, true);
  CheckConfig(QLINEAR_DTYPE_FLOAT16, shape,
              Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, true);
  CheckConfig(QLINEAR_DTYPE_BFLOAT16, shape,
              Attrs(QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, false);
  CheckConfig(QLINEAR_DTYPE_FLOAT, shape,
              Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_POW2_CEIL, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, false);
  for (int32_t y : {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT8}) {  // MINMAX: two keys
    for (bool specials : {false, true}) {
      CheckConfig(QLINEAR_DTYPE_FLOAT, shape, Attrs(y, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng,
                  specials);
    }
  }
  CheckConfig(QLINEAR_DTYPE_FLOAT, {66, 1004},
              Attrs(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, false);
  // Parallel tasks of several chunks each (CheckConfig's tasks are one chunk or less).
  CheckTasksOfSeveralChunks({200, 1003}, Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0),
                            70000, rng);
  SetQuantizePathForTest(QuantizePath::kDivision);
  CheckConfig(QLINEAR_DTYPE_FLOAT, shape, Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0),
              rng, true);
  SetQuantizePathForTest(QuantizePath::kAuto);
  // From 4M elements the loop prefetches the side runs (natively only: 4M elements per emulated
  // target would cost minutes under qemu, and the prefetch changes no value).
  if (std::getenv("QEMU_CPU") == nullptr) {
    CheckConfig(QLINEAR_DTYPE_FLOAT, {4097, 1024},
                Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0), rng, false);
  }
}

// Blocks along the last axis with the statistics of the next chunk's blocks computed inside the
// block loop of this chunk's (float32 x into <= 8-bit types: the largest |x| for ABSMAX, MX and
// POW2_CEIL, MINMAX's two keys): blocks of 1, 2, 3, 4, 8 vectors and blocks that are not whole
// vectors, rows of whole blocks (chunks cut inside rows) and rows ending in a short block,
// trailing elements that fill no tree, NaN/Inf, packed and float8/float4 outputs, parallel
// tasks of several chunks, and the prefetching branch.
TEST_P(DynamicTest, BlockStatisticsOfTheNextChunk) {
  std::mt19937 rng(16);
  const int64_t lanes = DispatchedLanesF32();
  for (int64_t block : {int64_t{16}, int64_t{32}, 2 * lanes, 3 * lanes, 4 * lanes, 8 * lanes, int64_t{40}}) {
    if (block < 16) continue;
    for (bool specials : {false, true}) {
      CheckConfig(QLINEAR_DTYPE_FLOAT, {70, 1024},
                  Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, block), rng, specials);
    }
    CheckConfig(QLINEAR_DTYPE_FLOAT, {3, 30000 + block},
                Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, block), rng, false);
  }
  struct Case {
    std::vector<int64_t> shape;
    int32_t y, rule;
    int64_t block;
    bool specials;
  };
  const Case cases[] = {
      {{67, 1003}, QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, 32, true},
      {{64, 1000}, QLINEAR_DTYPE_INT2, QLINEAR_SCALE_ABSMAX, 40, false},
      {{1, 70000 + 4 * lanes + 32}, QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, 32, false},
      {{70, 1024}, QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_MX, 32, true},
      {{70, 1024}, QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_SCALE_MX, 32, true},
      {{70, 1024}, QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_SCALE_ABSMAX, 128, true},
      {{70, 1024}, QLINEAR_DTYPE_INT8, QLINEAR_SCALE_POW2_CEIL, 64, false},
      {{70, 1024}, QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, 32, true},
      {{70, 1024}, QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_MINMAX, 2 * lanes, true},
      {{67, 1003}, QLINEAR_DTYPE_INT8, QLINEAR_SCALE_MINMAX, 32, false},
      {{70, 1024}, QLINEAR_DTYPE_UINT2, QLINEAR_SCALE_MINMAX, 128, false},
      {{70, 1024}, QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, 20, true},
      {{70, 1024}, QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, 8 * lanes, false},
      {{2000, 20}, QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, 32, true},  // runs of one block
      {{2000, 20}, QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, 32, false},
  };
  for (const Case& c : cases) {
    CheckConfig(QLINEAR_DTYPE_FLOAT, c.shape, Attrs(c.y, c.rule, QLINEAR_GRANULARITY_BLOCK, 1, c.block), rng,
                c.specials);
  }
  CheckTasksOfSeveralChunks({200, 1024}, Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, 32),
                            70016, rng);
  // From 4M elements the loop prefetches the side (natively only, as above).
  if (std::getenv("QEMU_CPU") == nullptr) {
    CheckConfig(QLINEAR_DTYPE_FLOAT, {4097, 1024},
                Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, 128), rng, false);
    CheckConfig(QLINEAR_DTYPE_FLOAT, {4097, 1024},
                Attrs(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 1, 128), rng, false);
  }
}

// Groups whose quotients reach past the code range, in float32 tensors of two chunks (the first
// chunk's codes come from the loops that also compute the second's statistics): MINMAX with
// bfloat16 scales rounded down, so that hi / s + zp exceeds qmax + 0.5 (per row into uint8:
// 255.89; blocks of 32 into uint4: 15.52), and ABSMAX with float16 scales that overflow
// (s = 65504, |x / s| up to 152.7) or round down to float16's smallest subnormal (amax / P =
// 3.4 * 2^-24, s = 3 * 2^-24, |x / s| = 1.13 P), per row and in blocks. Every group holds both
// ends of its range. Those codes saturate; an unclamped fixed-point code would wrap (16 -> 0 for
// uint4, 144 -> -112 for int8): the loops that skip the clamp must not take these groups. And
// groups that those loops do take with a quotient exactly on the bounds: MINMAX with s = 3 and
// zp = rint(1.5) = 2 puts hi / s + zp on qmax + 0.5 and lo / s + zp on qmin + 0.5 (ties, which
// round to 255 / 15 after the clamp and to 0; for uint8 x (1/3) + 770.5 reaches 1024). No scale
// here is a power of two (those take the exact-product loops).
TEST_P(DynamicTest, QuotientsPastTheCodeRangeSaturateInFusedLoops) {
  std::mt19937 rng(17);
  const std::vector<int64_t> shape{40, 1024};
  struct Case {
    int32_t y, rule, granularity;
    int64_t axis, block;
    int32_t scale;
    float lo, hi;  // each group's ends (a group: a row, or a block)
  };
  const Case cases[] = {
      {QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_AXIS, 0, 0, QLINEAR_DTYPE_BFLOAT16, -1.0f,
       1.014850378036499f},
      {QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 1, 32, QLINEAR_DTYPE_BFLOAT16, -1.0f,
       1.3069076538085938f},
      {QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0, QLINEAR_DTYPE_FLOAT16, -1e7f, 1e7f},
      {QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, 32, QLINEAR_DTYPE_FLOAT16, -1e7f, 1e7f},
      {QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0, QLINEAR_DTYPE_FLOAT16,
       -3.4f * 127 * 0x1p-24f, 3.4f * 127 * 0x1p-24f},
      {QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, 32, QLINEAR_DTYPE_FLOAT16,
       -3.4f * 7 * 0x1p-24f, 3.4f * 7 * 0x1p-24f},
      {QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_AXIS, 0, 0, QLINEAR_DTYPE_FLOAT, -4.5f, 760.5f},
      {QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 1, 32, QLINEAR_DTYPE_FLOAT, -4.5f, 40.5f},
  };
  for (const Case& c : cases) {
    const int64_t group = c.block > 0 ? c.block : shape[1];
    std::uniform_real_distribution<float> u(c.lo, c.hi);
    XData x;
    for (int64_t i = 0; i < shape[0] * shape[1]; ++i) {
      const int64_t k = i % group;
      const float v = k == 3 ? c.lo : k == group - 5 ? c.hi : u(rng);
      uint8_t b[4];
      std::memcpy(b, &v, 4);
      x.bytes.insert(x.bytes.end(), b, b + 4);
      x.values.push_back(v);
    }
    CheckConfigOf(QLINEAR_DTYPE_FLOAT, shape, Attrs(c.y, c.rule, c.granularity, c.axis, c.block, c.scale), x);
  }
}

// Sharding: ranges of three uneven slices, reduced with max, give the whole tensor's scales
// through qlinear_dynamic_scales; with ranges NULL it computes them from x.
TEST_P(DynamicTest, RangesOfSlicesReduceToTheScales) {
  std::mt19937 rng(13);
  const std::vector<int64_t> shape{9, 67};
  const int64_t n = 9 * 67;
  for (const RuleType& rt : kRuleTypes) {
    for (int32_t g : {QLINEAR_GRANULARITY_TENSOR, QLINEAR_GRANULARITY_AXIS, QLINEAR_GRANULARITY_BLOCK}) {
      for (int64_t axis : {0, 1}) {
        const qlinear_dynamic_attrs a = Attrs(rt.y, rt.rule, g, axis, g == QLINEAR_GRANULARITY_BLOCK ? 4 : 0, rt.scale);
        const XData x = MakeX(QLINEAR_DTYPE_FLOAT, n, rng, true);
        const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.bytes.data()};
        const Out whole = Call(tx, a);
        ASSERT_EQ(whole.status, QLINEAR_OK) << whole.message;
        const size_t groups = whole.scale.size() / static_cast<size_t>(ScaleBytes(ScaleType(a)));
        std::vector<float> reduced(2 * groups, 0.0f), part(2 * groups);
        const int64_t cuts[] = {0, 100, 101, n};
        for (int s = 0; s < 3; ++s) {
          const int64_t first = cuts[s], count = cuts[s + 1] - cuts[s];
          const qlinear_tensor slice{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.bytes.data() + 4 * first};
          ASSERT_EQ(qlinear_dynamic_ranges(&slice, &a, first, count, part.data(), part.size() * 4), QLINEAR_OK)
              << qlinear_last_error();
          for (size_t k = 0; k < part.size(); ++k) reduced[k] = std::max(reduced[k], part[k]);
        }
        std::vector<uint8_t> sc(whole.scale.size()), zp(whole.zp.size());
        const qlinear_tensor shape_only{QLINEAR_DTYPE_FLOAT, 2, shape.data(), nullptr};
        const bool minmax = rt.rule == QLINEAR_SCALE_MINMAX;
        ASSERT_EQ(qlinear_dynamic_scales(&shape_only, &a, reduced.data(), reduced.size() * 4, sc.data(), sc.size(),
                                         minmax ? zp.data() : nullptr, zp.size()),
                  QLINEAR_OK)
            << qlinear_last_error();
        EXPECT_EQ(sc, whole.scale) << Describe(shape, a, QLINEAR_DTYPE_FLOAT);
        EXPECT_EQ(zp, whole.zp) << Describe(shape, a, QLINEAR_DTYPE_FLOAT);
        std::fill(sc.begin(), sc.end(), 0);
        ASSERT_EQ(qlinear_dynamic_scales(&tx, &a, nullptr, 0, sc.data(), sc.size(), minmax ? zp.data() : nullptr,
                                         zp.size()),
                  QLINEAR_OK)
            << qlinear_last_error();
        EXPECT_EQ(sc, whole.scale) << Describe(shape, a, QLINEAR_DTYPE_FLOAT);
      }
    }
  }
}

// OpenMP (when built in) splits like any runner.
TEST(DynamicParallel, OpenMPGivesTheSameBytes) {
  std::mt19937 rng(14);
  const std::vector<int64_t> shape{64, 1000};
  const XData x = MakeX(QLINEAR_DTYPE_FLOAT, 64000, rng, true);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.bytes.data()};
  qlinear_parallel_options par;
  qlinear_parallel_options_init(&par);
  par.max_threads = 2;
  par.min_elements_per_task = 1000;
  // One-pass (blocks), two-pass (per column) and per-tensor splits.
  for (const RuleType& rt : {kRuleTypes[5], kRuleTypes[9]}) {
    for (int32_t g : {QLINEAR_GRANULARITY_TENSOR, QLINEAR_GRANULARITY_AXIS, QLINEAR_GRANULARITY_BLOCK}) {
      const qlinear_dynamic_attrs a = Attrs(rt.y, rt.rule, g, 1, g == QLINEAR_GRANULARITY_BLOCK ? 32 : 0, rt.scale);
      const Out serial = Call(tx, a), parallel = Call(tx, a, &par);
      ASSERT_EQ(serial.status, QLINEAR_OK) << serial.message;
      ASSERT_EQ(parallel.status, QLINEAR_OK) << parallel.message;
      EXPECT_EQ(serial.y, parallel.y) << Describe(shape, a, QLINEAR_DTYPE_FLOAT);
      EXPECT_EQ(serial.scale, parallel.scale);
      EXPECT_EQ(serial.zp, parallel.zp);
    }
  }
}

// Rows of odd length in sub-byte blocks of 2 and 3: no block of the second row starts on a byte
// (and, packed zero points, no group count either), so tasks there end where the tensor does;
// as many tasks as the options allow, each finding its start in a bounded search.
TEST(DynamicParallel, TasksOfOddRowsOfSubByteBlocks) {
  std::mt19937 rng(15);
  for (int64_t d : {int64_t{4097}, int64_t{65537}}) {
    const std::vector<int64_t> shape{2, d};
    const XData x = MakeX(QLINEAR_DTYPE_FLOAT, 2 * d, rng, false);
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.bytes.data()};
    qlinear_parallel_options par;
    qlinear_parallel_options_init(&par);
    par.max_threads = QLINEAR_MAX_THREADS;
    par.min_elements_per_task = 1;
    par.parallel_for = Backwards;
    for (const qlinear_dynamic_attrs& a :
         {Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 1, 2),
          Attrs(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 1, 3),
          Attrs(QLINEAR_DTYPE_UINT2, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 1, 3)}) {
      const Out serial = Call(tx, a), parallel = Call(tx, a, &par);
      ASSERT_EQ(serial.status, QLINEAR_OK) << serial.message;
      ASSERT_EQ(parallel.status, QLINEAR_OK) << parallel.message;
      EXPECT_EQ(serial.y, parallel.y) << Describe(shape, a, QLINEAR_DTYPE_FLOAT);
      EXPECT_EQ(serial.scale, parallel.scale) << Describe(shape, a, QLINEAR_DTYPE_FLOAT);
      EXPECT_EQ(serial.zp, parallel.zp) << Describe(shape, a, QLINEAR_DTYPE_FLOAT);
    }
  }
}

// The C++ layer: QuantizeDynamic's result feeds QuantizeLinear / DequantizeLinear as they are.
TEST(DynamicCpp, ResultFeedsQuantizeLinear) {
  std::vector<float> x(4 * 70);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * static_cast<float>(i % 17);
  const std::vector<int64_t> shape{4, 70};
  const TensorView tx(DataType::kFloat, shape, x.data());
  for (ScaleRule rule : {ScaleRule::kMinMax, ScaleRule::kMx}) {
    DynamicAttrs a;
    a.output_dtype = rule == ScaleRule::kMinMax ? DataType::kUint4 : DataType::kFloat8E4M3FN;
    a.rule = rule;
    DynamicResult r;
    ASSERT_TRUE(QuantizeDynamic(tx, a, &r).ok());
    EXPECT_EQ(r.scale_shape, (std::vector<int64_t>{4, 3}));
    EXPECT_EQ(r.scale_dtype, rule == ScaleRule::kMx ? DataType::kFloat8E8M0 : DataType::kFloat);
    EXPECT_EQ(r.has_zero_point, rule == ScaleRule::kMinMax);
    QuantizeAttrs qa;
    ASSERT_TRUE(QuantizeAttrsForDynamic(a, &qa).ok());
    TensorView zs;
    std::vector<uint8_t> y(r.y.size());
    const Status s = QuantizeLinear(tx, r.ScaleView(), r.ZeroPointView(&zs), qa, y.data(), y.size());
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(y, r.y);
    ParallelOptions po;
    po.min_elements_per_task = 32;
    po.parallel_for = [](int64_t count, const std::function<void(int64_t)>& task) {
      for (int64_t i = 0; i < count; ++i) task(i);
    };
    DynamicResult rp;
    ASSERT_TRUE(QuantizeDynamic(tx, a, &rp, &po).ok());
    EXPECT_EQ(rp.y, r.y);
    EXPECT_EQ(rp.scale, r.scale);
  }
  DynamicAttrs unset;
  DynamicResult r;
  const Status s = QuantizeDynamic(tx, unset, &r);
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("output_dtype"), std::string::npos);
}

// ---- bad input --------------------------------------------------------------------------------

bool Untouched(const std::vector<uint8_t>& b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t v) { return v == kSentinel; });
}

struct Bad {
  qlinear_dynamic_attrs a;
  qlinear_status status;
  const char* needle;  // the argument the message names
};

TEST(DynamicValidation, BadAttributesAreRejectedBeforeWriting) {
  auto with = [](int32_t y, int32_t rule, int32_t g, int64_t axis, int64_t block, int32_t st) {
    return Attrs(y, rule, g, axis, block, st);
  };
  const int32_t T = QLINEAR_GRANULARITY_TENSOR, A = QLINEAR_GRANULARITY_AXIS, B = QLINEAR_GRANULARITY_BLOCK;
  std::vector<Bad> bad = {
      {with(0, 1, B, -1, 32, 0), QLINEAR_INVALID_ARGUMENT, "output_dtype"},
      {with(999, 1, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "output_dtype"},
      {with(QLINEAR_DTYPE_FLOAT, 1, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "output_dtype"},
      {with(QLINEAR_DTYPE_INT32, 1, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "output_dtype"},
      {with(QLINEAR_DTYPE_FLOAT8E8M0, 1, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "output_dtype"},
      {with(QLINEAR_DTYPE_INT8, 0, B, -1, 32, 0), QLINEAR_INVALID_ARGUMENT, "rule"},
      {with(QLINEAR_DTYPE_INT8, 5, B, -1, 32, 0), QLINEAR_INVALID_ARGUMENT, "rule"},
      {with(QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_ABSMAX, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "ABSMAX"},
      {with(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MX, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "MX"},
      {with(QLINEAR_DTYPE_UINT2, QLINEAR_SCALE_POW2_CEIL, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "POW2_CEIL"},
      {with(QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_MINMAX, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "MINMAX"},
      {with(QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_SCALE_MINMAX, B, -1, 32, 0), QLINEAR_UNSUPPORTED_TYPE, "MINMAX"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, B, -1, 32, QLINEAR_DTYPE_FLOAT8E8M0), QLINEAR_UNSUPPORTED_TYPE, "scale_dtype"},
      {with(QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_MINMAX, B, -1, 32, QLINEAR_DTYPE_FLOAT8E8M0), QLINEAR_UNSUPPORTED_TYPE, "scale_dtype"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_MX, B, -1, 32, QLINEAR_DTYPE_FLOAT), QLINEAR_UNSUPPORTED_TYPE, "scale_dtype"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_POW2_CEIL, B, -1, 32, QLINEAR_DTYPE_FLOAT16), QLINEAR_UNSUPPORTED_TYPE, "scale_dtype"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, B, -1, 32, QLINEAR_DTYPE_INT32), QLINEAR_UNSUPPORTED_TYPE, "scale_dtype"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, 0, -1, 0, 0), QLINEAR_INVALID_ARGUMENT, "granularity"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, 4, -1, 0, 0), QLINEAR_INVALID_ARGUMENT, "granularity"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, B, -1, 0, 0), QLINEAR_INVALID_ARGUMENT, "block_size"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, B, -1, -32, 0), QLINEAR_INVALID_ARGUMENT, "block_size"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, A, 0, 32, 0), QLINEAR_INVALID_ARGUMENT, "block_size"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, T, -1, 32, 0), QLINEAR_INVALID_ARGUMENT, "block_size"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, A, 2, 0, 0), QLINEAR_INVALID_ARGUMENT, "axis"},
      {with(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, B, -3, 32, 0), QLINEAR_INVALID_ARGUMENT, "axis"},
  };
  {
    qlinear_dynamic_attrs a = with(QLINEAR_DTYPE_INT8, 1, B, -1, 32, 0);
    a.reserved = 1;
    bad.push_back({a, QLINEAR_INVALID_ARGUMENT, "reserved"});
    a.reserved = 0;
    a.struct_size = 4;
    bad.push_back({a, QLINEAR_INVALID_ARGUMENT, "struct_size"});
    a.struct_size = 9;  // inside `rule`
    bad.push_back({a, QLINEAR_INVALID_ARGUMENT, "struct_size is 9"});
  }
  const std::vector<float> x(2 * 40, 1.5f);
  const std::vector<int64_t> shape{2, 40};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  for (const Bad& b : bad) {
    std::vector<uint8_t> y(1024, kSentinel), s(1024, kSentinel), z(1024, kSentinel);
    void* zp = b.a.rule == QLINEAR_SCALE_MINMAX ? z.data() : nullptr;
    const qlinear_status st = qlinear_quantize_dynamic(&tx, &b.a, y.data(), y.size(), s.data(), s.size(), zp, z.size());
    const std::string msg = qlinear_last_error();
    EXPECT_EQ(st, b.status) << msg;
    EXPECT_NE(msg.find(b.needle), std::string::npos) << "message '" << msg << "' does not name " << b.needle;
    EXPECT_TRUE(Untouched(y) && Untouched(s) && Untouched(z)) << msg;
    size_t yb;
    EXPECT_EQ(qlinear_quantize_dynamic_output_info(&tx, &b.a, &yb, nullptr, nullptr), b.status);
  }
  qlinear_quantize_attrs qa;
  EXPECT_EQ(qlinear_quantize_attrs_for_dynamic(&bad[0].a, &qa), QLINEAR_INVALID_ARGUMENT);
  EXPECT_EQ(qlinear_quantize_attrs_for_dynamic(nullptr, &qa), QLINEAR_INVALID_ARGUMENT);  // output_dtype unset
}

// A struct from a header that ends before block_size: the field's default follows the
// granularity (32 for blocks, 0 for the others, which take no other value).
TEST(DynamicValidation, SmallerStructsTakeEveryGranularity) {
  std::vector<float> x(4 * 40);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) - 7.5f;
  const std::vector<int64_t> shape{4, 40};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  const size_t with_axis = offsetof(qlinear_dynamic_attrs, axis) + sizeof(int64_t);
  const size_t without_axis = offsetof(qlinear_dynamic_attrs, granularity) + sizeof(int32_t);
  for (const int32_t g : {QLINEAR_GRANULARITY_TENSOR, QLINEAR_GRANULARITY_AXIS, QLINEAR_GRANULARITY_BLOCK}) {
    for (const size_t size : {with_axis, without_axis}) {
      // The full struct that asks for the same: axis 0 where the struct holds it, else -1.
      const int64_t axis = size == with_axis && g == QLINEAR_GRANULARITY_AXIS ? 0 : -1;
      const qlinear_dynamic_attrs full =
          Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, g, axis, g == QLINEAR_GRANULARITY_BLOCK ? 32 : 0);
      size_t yb = 0, sb = 0;
      ASSERT_EQ(qlinear_quantize_dynamic_output_info(&tx, &full, &yb, &sb, nullptr), QLINEAR_OK);
      std::vector<uint8_t> want_y(yb), want_s(sb);
      ASSERT_EQ(qlinear_quantize_dynamic(&tx, &full, want_y.data(), yb, want_s.data(), sb, nullptr, 0), QLINEAR_OK);
      qlinear_dynamic_attrs a = full;
      a.struct_size = static_cast<uint32_t>(size);
      a.block_size = 77;  // beyond struct_size: not read
      if (size == without_axis) a.axis = 1000;  // likewise
      std::vector<uint8_t> y(yb, kSentinel), sc(sb, kSentinel);
      EXPECT_EQ(qlinear_quantize_dynamic(&tx, &a, y.data(), yb, sc.data(), sb, nullptr, 0), QLINEAR_OK)
          << "granularity " << g << ", struct_size " << size << ": " << qlinear_last_error();
      EXPECT_EQ(y, want_y) << "granularity " << g << ", struct_size " << size;
      EXPECT_EQ(sc, want_s) << "granularity " << g << ", struct_size " << size;
    }
  }
}

// More scales than the largest object holds (an empty x with a huge axis): the error names
// y_scale, as QuantizeLinear's own byte checks do.
TEST(DynamicValidation, ScaleCountsBeyondTheLargestObject) {
  const std::vector<int64_t> shape{0, INT64_MAX / 2};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), nullptr};
  const qlinear_dynamic_attrs a = Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 1, 0);
  size_t yb = 1, sb = 1, zb = 1;
  EXPECT_EQ(qlinear_quantize_dynamic_output_info(&tx, &a, &yb, &sb, &zb), QLINEAR_INVALID_ARGUMENT);
  const std::string msg = qlinear_last_error();
  EXPECT_NE(msg.find("y_scale:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("largest object"), std::string::npos) << msg;
}

TEST(DynamicValidation, BadTensorsAndBuffersAreRejectedBeforeWriting) {
  const std::vector<float> x(2 * 40, 1.5f);
  const std::vector<int64_t> shape{2, 40}, neg{2, -40};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  const qlinear_dynamic_attrs absmax = Attrs(QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, -1, 32);
  const qlinear_dynamic_attrs minmax = Attrs(QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, -1, 32);
  // Needs: y 40 bytes, scales 2 x 2 float32 = 16 bytes, zero points 4 uint4 = 2 bytes.
  struct Case {
    const qlinear_tensor* x;
    const qlinear_dynamic_attrs* a;
    bool y_null;
    size_t y_bytes, s_bytes, z_bytes;
    bool s_null, z_null;
    qlinear_status status;
    const char* needle;
  };
  const qlinear_tensor ints{QLINEAR_DTYPE_INT32, 2, shape.data(), x.data()};
  const qlinear_tensor no_data{QLINEAR_DTYPE_FLOAT, 2, shape.data(), nullptr};
  const qlinear_tensor no_shape{QLINEAR_DTYPE_FLOAT, 2, nullptr, x.data()};
  const qlinear_tensor negative{QLINEAR_DTYPE_FLOAT, 2, neg.data(), x.data()};
  const Case cases[] = {
      {&ints, &absmax, false, 40, 16, 2, false, true, QLINEAR_UNSUPPORTED_TYPE, "x:"},
      {&no_data, &absmax, false, 40, 16, 2, false, true, QLINEAR_INVALID_ARGUMENT, "x:"},
      {&no_shape, &absmax, false, 40, 16, 2, false, true, QLINEAR_INVALID_ARGUMENT, "x:"},
      {&negative, &absmax, false, 40, 16, 2, false, true, QLINEAR_INVALID_ARGUMENT, "x:"},
      {nullptr, &absmax, false, 40, 16, 2, false, true, QLINEAR_INVALID_ARGUMENT, "x:"},
      {&tx, &absmax, true, 40, 16, 2, false, true, QLINEAR_INVALID_ARGUMENT, "y:"},
      {&tx, &absmax, false, 39, 16, 2, false, true, QLINEAR_BUFFER_TOO_SMALL, "y_bytes"},
      {&tx, &absmax, false, 40, 15, 2, false, true, QLINEAR_BUFFER_TOO_SMALL, "y_scale_bytes"},
      {&tx, &absmax, false, 40, 16, 2, true, true, QLINEAR_INVALID_ARGUMENT, "y_scale"},
      {&tx, &absmax, false, 40, 16, 2, false, false, QLINEAR_INVALID_ARGUMENT, "y_zero_point"},
      {&tx, &minmax, false, 40, 16, 2, false, true, QLINEAR_INVALID_ARGUMENT, "y_zero_point"},
      {&tx, &minmax, false, 40, 16, 1, false, false, QLINEAR_BUFFER_TOO_SMALL, "y_zero_point_bytes"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> y(64, kSentinel), s(64, kSentinel), z(64, kSentinel);
    const qlinear_status st = qlinear_quantize_dynamic(c.x, c.a, c.y_null ? nullptr : y.data(), c.y_bytes,
                                                       c.s_null ? nullptr : s.data(), c.s_bytes,
                                                       c.z_null ? nullptr : z.data(), c.z_bytes);
    const std::string msg = qlinear_last_error();
    EXPECT_EQ(st, c.status) << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << "message '" << msg << "' does not name " << c.needle;
    EXPECT_TRUE(Untouched(y) && Untouched(s) && Untouched(z)) << msg;
  }
  // The exact sizes are accepted.
  std::vector<uint8_t> y(40), s(16), z(2);
  EXPECT_EQ(qlinear_quantize_dynamic(&tx, &minmax, y.data(), 40, s.data(), 16, z.data(), 2), QLINEAR_OK)
      << qlinear_last_error();
}

TEST(DynamicValidation, RangesAndScalesArguments) {
  const std::vector<float> x(2 * 40, 1.5f);
  const std::vector<int64_t> shape{2, 40};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  const qlinear_dynamic_attrs a = Attrs(QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0);
  std::vector<float> r(4, -1.0f);  // 2 groups
  EXPECT_EQ(qlinear_dynamic_ranges(&tx, &a, 0, 80, nullptr, 16), QLINEAR_INVALID_ARGUMENT);
  EXPECT_EQ(qlinear_dynamic_ranges(&tx, &a, 0, 80, r.data(), 15), QLINEAR_BUFFER_TOO_SMALL);
  EXPECT_EQ(qlinear_dynamic_ranges(&tx, &a, 10, 71, r.data(), 16), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("first, count"), std::string::npos);
  EXPECT_EQ(qlinear_dynamic_ranges(&tx, &a, -1, 1, r.data(), 16), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(std::all_of(r.begin(), r.end(), [](float v) { return v == -1.0f; }));
  ASSERT_EQ(qlinear_dynamic_ranges(&tx, &a, 40, 40, r.data(), 16), QLINEAR_OK) << qlinear_last_error();
  EXPECT_EQ(r, (std::vector<float>{0.0f, 0.0f, 1.5f, 1.5f}));  // group 0 not in the slice
  std::vector<float> s(2, -1.0f);
  for (float v : {-1.0f, kNaN}) {
    std::vector<float> bad = r;
    bad[1] = v;
    EXPECT_EQ(qlinear_dynamic_scales(&tx, &a, bad.data(), 16, s.data(), 8, nullptr, 0), QLINEAR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(qlinear_last_error()).find("ranges"), std::string::npos);
    EXPECT_EQ(s, (std::vector<float>{-1.0f, -1.0f}));
  }
  EXPECT_EQ(qlinear_dynamic_scales(&tx, &a, r.data(), 15, s.data(), 8, nullptr, 0), QLINEAR_BUFFER_TOO_SMALL);
  EXPECT_EQ(qlinear_dynamic_scales(&tx, &a, r.data(), 16, s.data(), 7, nullptr, 0), QLINEAR_BUFFER_TOO_SMALL);
  ASSERT_EQ(qlinear_dynamic_scales(&tx, &a, r.data(), 16, s.data(), 8, nullptr, 0), QLINEAR_OK);
  EXPECT_EQ(BitsOf(s[0]), BitsOf(1.0f / 127.0f));
  EXPECT_EQ(s[1], 1.5f / 127.0f);

  qlinear_quantize_attrs q;
  ASSERT_EQ(qlinear_quantize_attrs_for_dynamic(&a, &q), QLINEAR_OK);
  EXPECT_EQ(q.opset, 25);
  EXPECT_EQ(q.axis, 0);
  EXPECT_EQ(q.block_size, 0);
  EXPECT_EQ(q.output_dtype, QLINEAR_DTYPE_INT8);
  EXPECT_EQ(q.saturate, 1);
  EXPECT_EQ(q.precision, QLINEAR_DTYPE_FLOAT);
}

}  // namespace
}  // namespace qlinear
