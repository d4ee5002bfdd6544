// Dynamic quantization: validation, the plan, and the per-group scale formulas (qlinear.h).
#include "dynamic.h"

#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "error.h"
#include "minifloat.h"
#include "reference.h"

namespace qlinear {
namespace {

const char* RuleName(int32_t rule) {
  switch (rule) {
    case QLINEAR_SCALE_ABSMAX: return "ABSMAX";
    case QLINEAR_SCALE_MINMAX: return "MINMAX";
    case QLINEAR_SCALE_MX: return "MX";
    case QLINEAR_SCALE_POW2_CEIL: return "POW2_CEIL";
  }
  return "unknown";
}

const char* GranularityName(int32_t g) {
  switch (g) {
    case QLINEAR_GRANULARITY_TENSOR: return "TENSOR";
    case QLINEAR_GRANULARITY_AXIS: return "AXIS";
    case QLINEAR_GRANULARITY_BLOCK: return "BLOCK";
  }
  return "unknown";
}

bool IsScaleFloat(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

// Scale value and code for q > 0 rounded once (to nearest even) to t, with the edge rules: a
// result of 0 becomes the smallest positive subnormal, an overflow the largest finite value.
// q is a double holding amax / P, 1 / P or a float32 (MINMAX): amax has 24 significant bits
// and P < 2^16, so amax / P lies at least 2^-40 * 2^e from any midpoint (2^e its binade) of a
// format of <= 24 bits unless it is that midpoint exactly, where the double quotient is exact
// too; the double's own error is below 2^-53 * 2^e, so rounding it once gives the correctly
// rounded quotient.
GroupScale RoundScale(DType t, double q) {
  GroupScale g{0.0f, 0, 0};
  if (t == DType::kFloat32) {
    float v = static_cast<float>(q);
    if (v == 0.0f) v = std::numeric_limits<float>::denorm_min();
    if (std::isinf(v)) v = FLT_MAX;
    g.value = v;
    g.code = BitsOf(v);
    return g;
  }
  const bool half = t == DType::kFloat16;
  uint16_t h = half ? Half::Encode(q) : BFloat16::Encode(q);
  const uint16_t inf = half ? Half::kInf : BFloat16::kInf;
  if (h == 0) h = 1;
  if (h == inf) h = static_cast<uint16_t>(inf - 1);
  g.value = half ? Half::Decode(h) : BFloat16::Decode(h);
  g.code = h;
  return g;
}

// float8e8m0 2^e (e in [-127, 127]) as value and code; 2^-127 is a float32 subnormal.
GroupScale PowerOfTwo(int e) {
  e = std::max(-127, std::min(127, e));
  const uint32_t code = static_cast<uint32_t>(e + 127);
  return GroupScale{FloatOf(code == 0 ? 0x00400000u : code << 23), code, 0};
}

// Sub-byte zero points of groups [g0, g0 + n): whole bytes where they start on one (vectors,
// then bytes), else field by field (the first field of a byte writes it, so its padding is
// zero). The bytes after the vectors go through a stack buffer that the compiler knows aliases
// nothing (stores through uint8_t* may alias z, which kept the loop scalar).
template <int kBits>
void PackZeroPoints(const int32_t* z, int64_t g0, int64_t n, uint8_t* dst) {
  constexpr int kPer = 8 / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1;
  constexpr int64_t kBatch = 256;
  int64_t g = g0;
  if (g % kPer == 0) {
    if (n >= 64) g += VectorPackZeroPoints(kBits, z, n, dst + g / kPer);
    uint8_t buf[kBatch];
    for (int64_t bytes; (bytes = std::min(kBatch, (g0 + n - g) / kPer)) > 0; g += bytes * kPer) {
      const int32_t* from = z + (g - g0);
      for (int64_t i = 0; i < bytes; ++i) {
        unsigned byte = 0;
        for (int k = 0; k < kPer; ++k) byte |= (static_cast<unsigned>(from[i * kPer + k]) & kMask) << (k * kBits);
        buf[i] = static_cast<uint8_t>(byte);
      }
      std::memcpy(dst + g / kPer, buf, static_cast<size_t>(bytes));
    }
  }
  for (; g < g0 + n; ++g) {
    const unsigned field = (static_cast<unsigned>(z[g - g0]) & kMask) << ((g % kPer) * kBits);
    dst[g / kPer] = static_cast<uint8_t>(g % kPer == 0 ? field : dst[g / kPer] | field);
  }
}

const GroupScale kNaNScale{FloatOf(0x7FC00000u), 0xFFu, 0};  // e8m0 0xFF decodes to +NaN

// MINMAX (float32 arithmetic, as DynamicQuantizeLinear): lo <= 0 <= hi are float32 values.
GroupScale MinMaxScale(const RuleFacts& f, float lo, float hi) {
  const float levels = static_cast<float>(f.qmax - f.qmin);
  const float range = hi - lo;
  const float s = range == 0.0f ? 1.0f / levels : range / levels;
  GroupScale g = RoundScale(f.scale_type, s);
  // lo <= 0 and the scale > 0: lo / s is finite or -Inf, t finite or +Inf, never NaN.
  const float t = static_cast<float>(f.qmin) - lo / g.value;
  const float c = std::min(std::max(t, static_cast<float>(f.qmin)), static_cast<float>(f.qmax));
  g.zero_point = static_cast<int32_t>(std::nearbyint(c));
  return g;
}

}  // namespace

RuleFacts FactsFor(Rule rule, DType y_type, DType scale_type) {
  RuleFacts f;
  f.rule = rule;
  f.y_type = y_type;
  f.scale_type = scale_type;
  const DTypeInfo& info = Info(y_type);
  if (info.kind == Kind::kInt) {
    f.qmin = info.qmin;
    f.qmax = info.qmax;
    f.p = static_cast<float>(info.qmax);
  } else {
    f.p = MiniFormatOf(y_type).max_value;
  }
  int e;
  std::frexp(f.p, &e);  // p in [2^(e-1), 2^e)
  f.emax = e - 1;
  return f;
}

GroupScale ReferenceGroupScale(const RuleFacts& f, double lo, double hi, bool nonfinite) {
  const double amax = std::max(-lo, hi);
  switch (f.rule) {
    case Rule::kAbsMax:
      return RoundScale(f.scale_type, amax == 0.0 ? 1.0 / f.p : amax / f.p);
    case Rule::kMinMax:
      return MinMaxScale(f, static_cast<float>(lo), static_cast<float>(hi));
    case Rule::kMx: {
      if (nonfinite) return kNaNScale;
      if (amax == 0.0) return PowerOfTwo(-127);
      int k;
      std::frexp(amax, &k);  // floor(log2 amax) = k - 1, subnormals included
      return PowerOfTwo(k - 1 - f.emax);
    }
    case Rule::kPow2Ceil: {
      if (nonfinite) return kNaNScale;
      if (amax == 0.0) return PowerOfTwo(-127);
      int ka, kp;
      std::frexp(amax, &ka);
      std::frexp(static_cast<double>(f.p), &kp);
      // 2^(ka-1) <= amax and p < 2^kp: below e = ka - kp - 1 the product is < amax; at most
      // two steps up reach the answer. p * 2^e is exact in double.
      int e = ka - kp - 1;
      while (std::ldexp(static_cast<double>(f.p), e) < amax) ++e;
      return PowerOfTwo(e);
    }
  }
  return kNaNScale;
}

GroupScale GroupScaleFromStats(const RuleFacts& f, uint32_t s0, uint32_t s1) {
  switch (f.rule) {
    case Rule::kAbsMax:
      if (f.scale_type == DType::kFloat32) {
        // IEEE division rounds the exact quotient of two float32 values once: no double needed.
        const float amax = FloatOf(s0);
        float v = amax == 0.0f ? 1.0f / f.p : amax / f.p;
        if (v == 0.0f) v = std::numeric_limits<float>::denorm_min();
        if (std::isinf(v)) v = FLT_MAX;  // amax = +Inf only arrives through qlinear_dynamic_scales
        return GroupScale{v, BitsOf(v), 0};
      }
      return ReferenceGroupScale(f, 0.0, FloatOf(s0), false);
    case Rule::kMinMax:
      return MinMaxScale(f, -FloatOf(s0), FloatOf(s1));
    case Rule::kMx: {
      if (s0 >= kNonFiniteBits) return kNaNScale;
      // floor(log2 amax) - emax + 127 is the exponent field minus emax; subnormal amax (field 0)
      // and zero clamp to code 0, and the field is at most 254, so no upper clamp.
      const int code = std::max(0, static_cast<int>(s0 >> 23) - f.emax);
      return PowerOfTwo(code - 127);
    }
    case Rule::kPow2Ceil: {
      if (s0 >= kNonFiniteBits) return kNaNScale;
      if (s0 == 0) return PowerOfTwo(-127);
      // amax = (1 + a) 2^ea and p = (1 + b) 2^ep: the smallest e with p 2^e >= amax is ea - ep,
      // or one more when a > b (subnormal amax normalized by 2^64, exactly).
      const bool sub = s0 < 0x00800000u;
      const uint32_t nb = sub ? BitsOf(FloatOf(s0) * 0x1p64f) : s0;
      const uint32_t pb = BitsOf(f.p);
      int e = static_cast<int>(nb >> 23) - static_cast<int>(pb >> 23) - (sub ? 64 : 0);
      if ((nb & 0x7FFFFFu) > (pb & 0x7FFFFFu)) ++e;
      return PowerOfTwo(e);
    }
  }
  return kNaNScale;
}

qlinear_status ReadDynamicAttrs(const qlinear_dynamic_attrs* in, qlinear_dynamic_attrs* out) {
  qlinear_dynamic_attrs& a = *out;
  qlinear_status s = ReadAttrs(in, qlinear_dynamic_attrs_init, &a);
  if (s != QLINEAR_OK) return s;
  // A struct that ends before block_size has its default: 32 for blocks, 0 (the only value the
  // other granularities take) otherwise.
  if (in != nullptr && in->struct_size < offsetof(qlinear_dynamic_attrs, block_size) + sizeof(a.block_size) &&
      a.granularity != QLINEAR_GRANULARITY_BLOCK) {
    a.block_size = 0;
  }
  if (a.reserved != 0) return Fail(QLINEAR_INVALID_ARGUMENT, "attrs: reserved must be 0");

  // Output type and rule.
  if (a.output_dtype == 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "output_dtype: must be set (the quantized type, e.g. QLINEAR_DTYPE_INT8)");
  }
  const DTypeInfo* yi = FindDType(a.output_dtype);
  if (yi == nullptr) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE, "output_dtype: %d is not a type qlinear knows",
                static_cast<int>(a.output_dtype));
  }
  if (!((yi->kind == Kind::kInt && yi->type != DType::kInt32) || yi->kind == Kind::kMiniFloat)) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE, "output_dtype: %s is not a quantized type", yi->name);
  }
  if (a.rule < QLINEAR_SCALE_ABSMAX || a.rule > QLINEAR_SCALE_POW2_CEIL) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "rule: must be 1 (ABSMAX), 2 (MINMAX), 3 (MX) or 4 (POW2_CEIL), got %d",
                static_cast<int>(a.rule));
  }
  const bool minmax = a.rule == QLINEAR_SCALE_MINMAX;
  if (minmax && yi->kind != Kind::kInt) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE,
                "output_dtype: rule MINMAX writes a zero point and needs an integer output, got %s",
                yi->name);
  }
  if (!minmax && !yi->is_signed) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE,
                "output_dtype: rule %s is symmetric (no zero point) and needs a signed output, "
                "got %s (MINMAX takes unsigned types)",
                RuleName(a.rule), yi->name);
  }
  const bool pow2 = a.rule == QLINEAR_SCALE_MX || a.rule == QLINEAR_SCALE_POW2_CEIL;
  if (a.scale_dtype == 0) {
    a.scale_dtype = pow2 ? QLINEAR_DTYPE_FLOAT8E8M0 : QLINEAR_DTYPE_FLOAT;
  } else {
    const DTypeInfo* si = FindDType(a.scale_dtype);
    if (si == nullptr) {
      return Fail(QLINEAR_UNSUPPORTED_TYPE, "scale_dtype: %d is not a type qlinear knows",
                  static_cast<int>(a.scale_dtype));
    }
    if (pow2 && si->type != DType::kFloat8E8M0) {
      return Fail(QLINEAR_UNSUPPORTED_TYPE,
                  "scale_dtype: rule %s writes powers of two as float8e8m0, got %s",
                  RuleName(a.rule), si->name);
    }
    if (!pow2 && !IsScaleFloat(si->type)) {
      return Fail(QLINEAR_UNSUPPORTED_TYPE,
                  "scale_dtype: rule %s takes float32, float16 or bfloat16, got %s",
                  RuleName(a.rule), si->name);
    }
  }

  // Granularity.
  const int32_t g = a.granularity;
  if (g < QLINEAR_GRANULARITY_TENSOR || g > QLINEAR_GRANULARITY_BLOCK) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "granularity: must be 1 (TENSOR), 2 (AXIS) or 3 (BLOCK), got %d",
                static_cast<int>(g));
  }
  if (g == QLINEAR_GRANULARITY_BLOCK && a.block_size <= 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "block_size: must be > 0 with granularity BLOCK, got %lld",
                static_cast<long long>(a.block_size));
  }
  if (g != QLINEAR_GRANULARITY_BLOCK && a.block_size != 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "block_size: must be 0 unless granularity is BLOCK (granularity is %s), got %lld",
                GranularityName(g), static_cast<long long>(a.block_size));
  }
  return QLINEAR_OK;
}

void QuantizeAttrsFor(const qlinear_dynamic_attrs& a, qlinear_quantize_attrs* q) {
  qlinear_quantize_attrs_init(q);
  q->opset = 25;
  if (a.granularity != QLINEAR_GRANULARITY_TENSOR) q->axis = a.axis;
  q->block_size = a.granularity == QLINEAR_GRANULARITY_BLOCK ? a.block_size : 0;
  q->output_dtype = a.output_dtype;
  q->saturate = 1;
  q->precision = QLINEAR_DTYPE_FLOAT;
}

qlinear_status PlanDynamic(const qlinear_tensor* x, const qlinear_dynamic_attrs* attrs_in,
                           bool need_data, DynamicPlan* p) {
  qlinear_dynamic_attrs a;
  qlinear_status s = ReadDynamicAttrs(attrs_in, &a);
  if (s != QLINEAR_OK) return s;
  const DType yt = static_cast<DType>(a.output_dtype), st = static_cast<DType>(a.scale_dtype);
  const Rule rule = static_cast<Rule>(a.rule);
  const int32_t g = a.granularity;

  // x.
  if (x == nullptr) return Fail(QLINEAR_INVALID_ARGUMENT, "x: tensor pointer is NULL");
  static const uint64_t kPlaceholder[1] = {0};  // data for tensors validated but not read here
  qlinear_tensor xv = *x;
  if (!need_data && xv.data == nullptr) xv.data = kPlaceholder;
  int64_t n = 0;
  if ((s = CheckTensor("x", xv, &n)) != QLINEAR_OK) return s;
  const DType xt = static_cast<DType>(xv.dtype);
  if (!IsScaleFloat(xt)) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE,
                "x: dynamic quantization takes float32, float16 or bfloat16, got %s", Name(xt));
  }

  // The scale's shape (qlinear.h), then QuantizeLinear's own plan for it.
  int64_t axis = 0;
  if (g != QLINEAR_GRANULARITY_TENSOR && xv.rank == 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "granularity: x of rank 0 has no axis for %s scales; use TENSOR",
                g == QLINEAR_GRANULARITY_AXIS ? "AXIS" : "BLOCK");
  }
  if (g != QLINEAR_GRANULARITY_TENSOR && (s = NormalizeAxis(a.axis, xv.rank, &axis)) != QLINEAR_OK) {
    return s;
  }
  int64_t shape[QLINEAR_MAX_RANK];
  int32_t rank = 0;
  if (g == QLINEAR_GRANULARITY_AXIS) {
    rank = 1;
    shape[0] = xv.shape[axis];
  } else if (g == QLINEAR_GRANULARITY_BLOCK) {
    rank = xv.rank;
    for (int32_t i = 0; i < rank; ++i) shape[i] = xv.shape[i];
    shape[axis] = shape[axis] / a.block_size + (shape[axis] % a.block_size != 0);
  }
  // Each dimension is at most x's: the count fits when x's does (a zero anywhere gives 0).
  int64_t groups = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] == 0) groups = 0;
  }
  for (int32_t i = 0; i < rank && groups != 0; ++i) groups *= shape[i];
  uint64_t scale_bytes = 0, zp_bytes = 0;
  s = CheckBytes("y_scale", st, groups, &scale_bytes);
  if (s != QLINEAR_OK) return s;
  if (rule == Rule::kMinMax && (s = CheckBytes("y_zero_point", yt, groups, &zp_bytes)) != QLINEAR_OK) return s;

  qlinear_quantize_attrs qa;
  QuantizeAttrsFor(a, &qa);
  qa.axis = axis;
  const qlinear_tensor scale{static_cast<int32_t>(st), rank, shape, kPlaceholder};
  const qlinear_tensor zp{static_cast<int32_t>(yt), rank, shape, kPlaceholder};
  if ((s = PlanQuantize(&xv, &scale, rule == Rule::kMinMax ? &zp : nullptr, &qa, &p->q)) !=
      QLINEAR_OK) {
    return s;
  }
  p->q.x = x->data;
  p->q.scale = nullptr;
  p->q.zero_point = nullptr;
  p->facts = FactsFor(rule, yt, st);
  p->groups = groups;
  p->scale_bytes = scale_bytes;
  p->zp_bytes = zp_bytes;

  const Layout& l = p->q.layout;
  p->one_pass = false;
  p->units_per_outer = 1;
  p->unit_rows = 1;
  p->groups_per_unit = 1;
  if (l.granularity == Granularity::kBlocked) {
    p->one_pass = true;
    p->units_per_outer = l.scale_axis;
    p->unit_rows = l.block;
    p->groups_per_unit = l.inner;
  } else if (l.granularity == Granularity::kPerAxis && l.outer == 1) {
    p->one_pass = true;
    p->units_per_outer = l.axis_dim;
  }
  return QLINEAR_OK;
}

qlinear_status CheckScaleOutputs(const DynamicPlan& p, const void* y_scale, size_t y_scale_bytes,
                                 const void* y_zero_point, size_t y_zero_point_bytes) {
  if (p.scale_bytes > 0 && y_scale == nullptr) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "y_scale: pointer is NULL, %llu bytes needed",
                static_cast<unsigned long long>(p.scale_bytes));
  }
  if (y_scale_bytes < p.scale_bytes) {
    return Fail(QLINEAR_BUFFER_TOO_SMALL, "y_scale_bytes: %lld %s scales need %llu bytes, got %llu",
                static_cast<long long>(p.groups), Name(p.facts.scale_type),
                static_cast<unsigned long long>(p.scale_bytes),
                static_cast<unsigned long long>(y_scale_bytes));
  }
  if (p.facts.rule == Rule::kMinMax) {
    if (y_zero_point == nullptr) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "y_zero_point: rule MINMAX writes a zero point per scale; pointer is NULL "
                  "(%llu bytes needed)",
                  static_cast<unsigned long long>(p.zp_bytes));
    }
    if (y_zero_point_bytes < p.zp_bytes) {
      return Fail(QLINEAR_BUFFER_TOO_SMALL,
                  "y_zero_point_bytes: %lld %s zero points need %llu bytes, got %llu",
                  static_cast<long long>(p.groups), Name(p.facts.y_type),
                  static_cast<unsigned long long>(p.zp_bytes),
                  static_cast<unsigned long long>(y_zero_point_bytes));
    }
  } else if (y_zero_point != nullptr) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "y_zero_point: must be NULL with rule %s (symmetric: no zero point)",
                RuleName(static_cast<int32_t>(p.facts.rule)));
  }
  return QLINEAR_OK;
}

qlinear_status CheckRanges(const DynamicPlan& p, const float* ranges, size_t ranges_bytes,
                           bool values) {
  uint64_t needed = 0;
  // 2 floats per group, within the largest object (kMaxBytes) like every other buffer of a call.
  if (__builtin_mul_overflow(static_cast<uint64_t>(p.groups), uint64_t{8}, &needed) || needed > kMaxBytes) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "ranges: %lld groups of 8 bytes exceed PTRDIFF_MAX bytes",
                static_cast<long long>(p.groups));
  }
  if (needed > 0 && ranges == nullptr) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "ranges: pointer is NULL, %llu bytes needed (2 floats per group)",
                static_cast<unsigned long long>(needed));
  }
  if (static_cast<uint64_t>(ranges_bytes) < needed) {
    return Fail(QLINEAR_BUFFER_TOO_SMALL, "ranges_bytes: %lld groups need %llu bytes (2 floats each), got %llu",
                static_cast<long long>(p.groups), static_cast<unsigned long long>(needed),
                static_cast<unsigned long long>(ranges_bytes));
  }
  for (int64_t k = 0; values && k < 2 * p.groups; ++k) {
    if (!(ranges[k] >= 0.0f)) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "ranges: element %lld is %g; entries are maxima of non-negative values "
                  "(>= 0, not NaN)",
                  static_cast<long long>(k), static_cast<double>(ranges[k]));
    }
  }
  return QLINEAR_OK;
}

void StoreZeroPoints(const DynamicPlan& p, const int32_t* z, int64_t g0, int64_t n, const DynamicOutputs& out) {
  uint8_t* dst = static_cast<uint8_t*>(out.zero_point);
  const int bits = Info(p.facts.y_type).bits;
  if (bits == 16) {
    for (int64_t k = 0; k < n; ++k) {
      const uint16_t h = static_cast<uint16_t>(z[k]);
      std::memcpy(dst + 2 * (g0 + k), &h, 2);
    }
  } else if (bits == 8) {
    for (int64_t k = 0; k < n; ++k) dst[g0 + k] = static_cast<uint8_t>(z[k]);
  } else if (bits == 4) {
    PackZeroPoints<4>(z, g0, n, dst);
  } else {
    PackZeroPoints<2>(z, g0, n, dst);
  }
}

void StoreGroupScale(const DynamicPlan& p, const GroupScale& s, int64_t g, const DynamicOutputs& out) {
  char* sc = static_cast<char*>(out.scale);
  switch (Info(p.facts.scale_type).bits) {
    case 32: std::memcpy(sc + 4 * g, &s.code, 4); break;
    case 16: {
      const uint16_t h = static_cast<uint16_t>(s.code);
      std::memcpy(sc + 2 * g, &h, 2);
      break;
    }
    default: sc[g] = static_cast<char>(s.code); break;
  }
  if (p.facts.rule == Rule::kMinMax) StoreZeroPoints(p, &s.zero_point, g, 1, out);
}

void ScalesFromRanges(const DynamicPlan& p, const float* ranges, const DynamicOutputs& out) {
  for (int64_t g = 0; g < p.groups; ++g) {
    const float r0 = ranges[2 * g] + 0.0f, r1 = ranges[2 * g + 1] + 0.0f;  // -0 -> +0
    const GroupScale s = p.facts.rule == Rule::kMinMax
                             ? GroupScaleFromStats(p.facts, BitsOf(r0), BitsOf(r1))
                             : GroupScaleFromStats(p.facts, BitsOf(std::max(r0, r1)), 0);
    StoreGroupScale(p, s, g, out);
  }
}

void QuantizeDynamicReference(const DynamicPlan& p, const DynamicOutputs& out) {
  const Layout& l = p.q.layout;
  std::vector<double> lo(static_cast<size_t>(p.groups), 0.0), hi(lo);
  std::vector<char> nonfinite(lo.size(), 0);
  for (int64_t i = 0; i < l.count; ++i) {
    const size_t k = static_cast<size_t>(ScaleIndex(l, i));
    const double v = LoadReal(p.q.x_type, p.q.x, i);
    if (!std::isfinite(v)) {
      nonfinite[k] = 1;
    } else {
      lo[k] = std::min(lo[k], v);
      hi[k] = std::max(hi[k], v);
    }
  }
  for (int64_t g = 0; g < p.groups; ++g) {
    const size_t k = static_cast<size_t>(g);
    StoreGroupScale(p, ReferenceGroupScale(p.facts, lo[k], hi[k], nonfinite[k] != 0), g, out);
  }
  if (out.y == nullptr) return;
  QuantizePlan q = p.q;
  q.scale = out.scale;
  q.zero_point = p.facts.rule == Rule::kMinMax ? out.zero_point : nullptr;
  QuantizeReference(q, out.y, 0, l.count);
}

}  // namespace qlinear

extern "C" {

void qlinear_dynamic_attrs_init(qlinear_dynamic_attrs* a) {
  if (a == nullptr) return;
  a->struct_size = sizeof(*a);
  a->output_dtype = 0;
  a->rule = QLINEAR_SCALE_ABSMAX;
  a->granularity = QLINEAR_GRANULARITY_BLOCK;
  a->axis = -1;
  a->block_size = 32;
  a->scale_dtype = 0;
  a->reserved = 0;
}

}  // extern "C"
