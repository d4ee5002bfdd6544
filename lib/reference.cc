#include "reference.h"

#include <cmath>
#include <cstring>

#include "minifloat.h"

namespace qlinear {
namespace {

template <class T>
T LoadAs(const void* data, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(data) + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

// Writes codes of elements [begin, end) of a tensor of `count` elements of type t (8/16-bit
// or packed 4/2-bit; element 0 in the low bits).
template <class CodeFn>
void EmitCodes(DType t, void* y, int64_t begin, int64_t end, int64_t count, CodeFn&& code) {
  uint8_t* out = static_cast<uint8_t*>(y);
  const int bits = Info(t).bits;
  if (bits == 8) {
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<uint8_t>(code(i));
    return;
  }
  if (bits == 16) {
    for (int64_t i = begin; i < end; ++i) {
      const uint16_t v = static_cast<uint16_t>(code(i));
      std::memcpy(out + 2 * i, &v, 2);
    }
    return;
  }
  const int per = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  for (int64_t b = begin / per; b < (end + per - 1) / per; ++b) {
    unsigned byte = 0, keep = 0;  // keep: fields owned by elements outside [begin, end)
    for (int k = 0; k < per; ++k) {
      const int64_t e = b * per + k;
      if (e >= begin && e < end) {
        byte |= (static_cast<unsigned>(code(e)) & mask) << (k * bits);
      } else if (e < count) {
        keep |= mask << (k * bits);
      }  // e >= count: padding, zero
    }
    out[b] = static_cast<uint8_t>(keep ? (out[b] & keep) | byte : byte);
  }
}

// The NaN rule of qlinear.h for a / b or a * b that came out NaN: a's NaN (quieted) if a is one,
// else b's, else a positive quiet NaN -- never the CPU's default NaN, whose sign differs
// between x86 and ARM.
float NaNOf(float a, float b) {
  if (std::isnan(a)) return FloatOf(BitsOf(a) | 0x00400000u);
  if (std::isnan(b)) return FloatOf(BitsOf(b) | 0x00400000u);
  return FloatOf(0x7FC00000u);
}

}  // namespace

double LoadReal(DType t, const void* data, int64_t i) {
  switch (t) {
    case DType::kFloat32: return LoadAs<float>(data, i);
    case DType::kFloat16: return Half::Decode(LoadAs<uint16_t>(data, i));
    case DType::kBFloat16: return BFloat16::Decode(LoadAs<uint16_t>(data, i));
    case DType::kInt32: return LoadAs<int32_t>(data, i);
    case DType::kFloat8E8M0: return DecodeE8M0(LoadAs<uint8_t>(data, i));
    default: return NAN;  // not reachable after validation
  }
}

uint32_t LoadCode(DType t, const void* data, int64_t i) {
  const uint8_t* b = static_cast<const uint8_t*>(data);
  if (t == DType::kFloat4E2M1) return (b[i >> 1] >> (4 * (i & 1))) & 0xF;
  return b[i];
}

int32_t LoadInt(DType t, const void* data, int64_t i) {
  const uint8_t* b = static_cast<const uint8_t*>(data);
  switch (t) {
    case DType::kUint8: return b[i];
    case DType::kInt8: return static_cast<int8_t>(b[i]);
    case DType::kUint16: return LoadAs<uint16_t>(data, i);
    case DType::kInt16: return LoadAs<int16_t>(data, i);
    case DType::kInt32: return LoadAs<int32_t>(data, i);
    case DType::kUint4: return (b[i >> 1] >> (4 * (i & 1))) & 0xF;
    case DType::kInt4: return static_cast<int32_t>(((b[i >> 1] >> (4 * (i & 1))) & 0xF) ^ 8) - 8;
    case DType::kUint2: return (b[i >> 2] >> (2 * (i & 3))) & 0x3;
    case DType::kInt2: return static_cast<int32_t>(((b[i >> 2] >> (2 * (i & 3))) & 0x3) ^ 2) - 2;
    default: return 0;
  }
}

double RoundToPrecision(Prec p, double v) {
  switch (p) {
    case Prec::kF32: return static_cast<float>(v);
    case Prec::kF16: return Half::Decode(Half::Encode(v));
    case Prec::kBF16: return BFloat16::Decode(BFloat16::Encode(v));
    case Prec::kF64: return v;
  }
  return v;
}

// Narrow precisions compute in float32 and round once: float32 has >= 2p+2 bits for float16
// (p = 11) and bfloat16 (p = 8), so the double rounding is innocuous for + and /.
double DivideInPrecision(Prec p, double x, double s) {
  if (p == Prec::kF64) {
    const double q = x / s;  // int32 operands: only 0/0 is NaN
    return std::isnan(q) ? std::copysign(NAN, std::isnan(x) ? x : std::isnan(s) ? s : 1.0) : q;
  }
  const float xf = static_cast<float>(RoundToPrecision(p, x));
  const float sf = static_cast<float>(RoundToPrecision(p, s));
  const float q = xf / sf;
  return RoundToPrecision(p, std::isnan(q) ? NaNOf(xf, sf) : q);
}

double AddInPrecision(Prec p, double a, double b) {
  if (p == Prec::kF64) return a + b;
  return RoundToPrecision(p, static_cast<float>(a) + static_cast<float>(b));
}

int32_t SaturateToInt(double q, int32_t zp, int32_t qmin, int32_t qmax) {
  if (std::isnan(q)) return qmin;
  const double v = std::nearbyint(q) + zp;  // exact: |q| rounded is an integer-valued double
  if (v <= qmin) return qmin;
  if (v >= qmax) return qmax;
  return static_cast<int32_t>(v);
}

int32_t QuantizeElement(const QuantizePlan& p, int64_t i) {
  const int64_t k = ScaleIndex(p.layout, i);
  const double q = DivideInPrecision(p.prec, LoadReal(p.x_type, p.x, i - p.begin),
                                     LoadReal(p.scale_type, p.scale, k));
  const DTypeInfo& y = Info(p.y_type);
  if (y.kind == Kind::kInt) {
    const int32_t zp = p.zero_point ? LoadInt(p.y_type, p.zero_point, k) : 0;
    return SaturateToInt(q, zp, y.qmin, y.qmax);
  }
  if (p.y_type == DType::kFloat4E2M1) {
    const double zp =
        p.zero_point ? DecodeMiniFloat(p.y_type, static_cast<uint8_t>(LoadCode(p.y_type, p.zero_point, k)))
                     : 0.0;
    // The zero point is added as a float before rounding (docs/semantics.md, "float4e2m1 output"): -0 + 0 = +0.
    const double v = p.zero_point ? AddInPrecision(p.prec, q, zp) : q;
    return EncodeMiniFloat(p.y_type, v, true);
  }
  return EncodeMiniFloat(p.y_type, q, p.saturate);  // float8: zero point is zero, not added
}

bool ClampedElement(const QuantizePlan& p, int64_t i) {
  const int64_t k = ScaleIndex(p.layout, i);
  const double q = DivideInPrecision(p.prec, LoadReal(p.x_type, p.x, i),
                                     LoadReal(p.scale_type, p.scale, k));
  if (std::isnan(q)) return true;
  const DTypeInfo& y = Info(p.y_type);
  if (y.kind == Kind::kInt) {
    const double v = std::nearbyint(q) + (p.zero_point ? LoadInt(p.y_type, p.zero_point, k) : 0);
    return v < y.qmin || v > y.qmax;
  }
  double v = q;
  if (p.y_type == DType::kFloat4E2M1 && p.zero_point) {
    v = AddInPrecision(p.prec, q, DecodeMiniFloat(p.y_type, static_cast<uint8_t>(LoadCode(p.y_type, p.zero_point, k))));
  }
  return std::isnan(v) || std::fabs(v) > MiniFormatOf(p.y_type).max_value;
}

void BackwardReference(const QuantizePlan& p, const BackwardArgs& b, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const bool clamped = b.mask_in ? ((b.mask_in[i >> 3] >> (i & 7)) & 1) != 0 : ClampedElement(p, i);
    if (b.mask_out) {  // whole bytes when i starts one (begin is a multiple of 8)
      if ((i & 7) == 0) b.mask_out[i >> 3] = 0;
      b.mask_out[i >> 3] = static_cast<uint8_t>(b.mask_out[i >> 3] | (clamped ? 1u << (i & 7) : 0u));
    }
    if (b.dx == nullptr) continue;
    const float s = static_cast<float>(RoundToPrecision(p.prec, LoadReal(p.scale_type, p.scale, ScaleIndex(p.layout, i))));
    const float dy = static_cast<float>(LoadReal(b.dy_type, b.dy, i));
    float g = b.lda / s, dx = 0.0f;
    if (std::isnan(g)) g = NaNOf(b.lda, s);
    if (!clamped) dx = dy * g;
    if (std::isnan(dx)) dx = NaNOf(dy, g);
    char* out = static_cast<char*>(b.dx);
    if (b.dy_type == DType::kFloat32) {
      std::memcpy(out + 4 * i, &dx, 4);
    } else {
      const uint16_t h = b.dy_type == DType::kFloat16 ? Half::Encode(dx) : BFloat16::Encode(dx);
      std::memcpy(out + 2 * i, &h, 2);
    }
  }
}

void QuantizeReference(const QuantizePlan& p, void* y, int64_t begin, int64_t end) {
  // y holds elements from p.begin on.
  EmitCodes(p.y_type, y, begin - p.begin, end - p.begin, p.layout.count - p.begin,
            [&p](int64_t i) { return QuantizeElement(p, i + p.begin); });
}

void DequantizeReference(const DequantizePlan& p, void* y, int64_t begin, int64_t end) {
  const DTypeInfo& x = Info(p.x_type);
  for (int64_t i = begin; i < end; ++i) {
    const int64_t k = ScaleIndex(p.layout, i);
    float d;
    if (x.kind == Kind::kInt) {
      const int64_t zp = p.zero_point ? LoadInt(p.x_type, p.zero_point, k) : 0;
      d = static_cast<float>(static_cast<int64_t>(LoadInt(p.x_type, p.x, i - p.begin)) - zp);
    } else {
      d = DecodeMiniFloat(p.x_type, static_cast<uint8_t>(LoadCode(p.x_type, p.x, i - p.begin)));
    }
    const float s = static_cast<float>(LoadReal(p.scale_type, p.scale, k));
    float v = d * s;
    if (std::isnan(v)) v = NaNOf(d, s);
    char* out = static_cast<char*>(y);
    if (p.y_type == DType::kFloat32) {
      std::memcpy(out + 4 * (i - p.begin), &v, 4);
    } else {
      const uint16_t h = p.y_type == DType::kFloat16 ? Half::Encode(v) : BFloat16::Encode(v);
      std::memcpy(out + 2 * (i - p.begin), &h, 2);
    }
  }
}

void DynamicScaleReference(const float* x, int64_t n, float* scale, uint8_t* zero_point) {
  float hi = 0.0f, lo = 0.0f;  // the range always includes 0; NaN compares false: ignored
  for (int64_t i = 0; i < n; ++i) {
    const float v = LoadAs<float>(x, i);  // x need not be aligned
    if (v > hi) hi = v;
    if (v < lo) lo = v;
  }
  DynamicParamsFromRange(lo, hi, scale, zero_point);
}

void DynamicParamsFromRange(float lo, float hi, float* scale, uint8_t* zero_point) {
  const float range = hi - lo;
  const float s = range == 0.0f ? 1.0f / 255.0f : range / 255.0f;
  float zp = 0.0f - lo / s;
  zp = !(zp > 0.0f) ? 0.0f : (zp > 255.0f ? 255.0f : zp);  // NaN (-Inf/Inf) -> 0
  *scale = s;
  *zero_point = static_cast<uint8_t>(std::nearbyint(zp));
}

}  // namespace qlinear
