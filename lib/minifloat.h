// Scalar float formats: float16, bfloat16, float8 x4, float4e2m1 and float8e8m0, encoded from
// and decoded to exact values. Written for exactness, not speed: this is the oracle the vector
// encoders are tested against. All encoders round the exact input (a double that holds the
// float32/float16/bfloat16/int32-derived value exactly) once, to nearest, ties to even.
#ifndef QLINEAR_LIB_MINIFLOAT_H_
#define QLINEAR_LIB_MINIFLOAT_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "dtype.h"
#include "formats.h"

namespace qlinear {

// Rounds finite |v| to `mant_bits` fraction bits, with subnormals below 2^min_exp (the smallest
// normal). No overflow handling: callers compare with their format's max. Exact: ldexp scales by
// powers of two and nearbyint rounds ties to even in the default rounding mode.
inline double RoundToFormat(double v, int mant_bits, int min_exp) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  int e;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  const int lead = e - 1;
  const int quantum = (lead > min_exp ? lead : min_exp) - mant_bits;
  return std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
}

// Bits (no sign) of r >= 0, finite and exactly representable with mant_bits and bias.
inline uint32_t AssembleBits(double r, int mant_bits, int bias) {
  if (r == 0.0) return 0;
  int e;
  std::frexp(r, &e);
  const int lead = e - 1;
  const int min_exp = 1 - bias;
  if (lead < min_exp) {  // subnormal: r = M * 2^(min_exp - mant_bits)
    return static_cast<uint32_t>(std::ldexp(r, mant_bits - min_exp));
  }
  const uint32_t frac = static_cast<uint32_t>(std::ldexp(r, mant_bits - lead)) - (1u << mant_bits);
  return (static_cast<uint32_t>(lead + bias) << mant_bits) | frac;
}

// Value of sign-less bits (finite encodings only).
inline double DecodeBits(uint32_t bits, int mant_bits, int bias) {
  const uint32_t exp = bits >> mant_bits;
  const uint32_t frac = bits & ((1u << mant_bits) - 1);
  if (exp == 0) return std::ldexp(static_cast<double>(frac), 1 - bias - mant_bits);
  return std::ldexp(static_cast<double>(frac + (1u << mant_bits)),
                    static_cast<int>(exp) - bias - mant_bits);
}

// IEEE-style formats with Inf and NaN in the top exponent: float16 (5, 10), bfloat16 (8, 7).
template <int kExpBits, int kMantBits>
struct IeeeHalf {
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr uint16_t kSign = 0x8000;
  static constexpr uint16_t kInf = static_cast<uint16_t>(((1u << kExpBits) - 1) << kMantBits);
  static constexpr uint16_t kQuietNaN = static_cast<uint16_t>(kInf | (1u << (kMantBits - 1)));

  static double MaxValue() { return DecodeBits(kInf - 1u, kMantBits, kBias); }

  // Round to nearest even; overflow gives Inf, NaN a quiet NaN with the sign kept.
  static uint16_t Encode(double v) {
    const uint16_t sign = std::signbit(v) ? kSign : 0;
    if (std::isnan(v)) return sign | kQuietNaN;
    const double a = std::fabs(v);
    if (std::isinf(a)) return sign | kInf;
    const double r = RoundToFormat(a, kMantBits, 1 - kBias);
    if (r > MaxValue()) return sign | kInf;
    return static_cast<uint16_t>(sign | AssembleBits(r, kMantBits, kBias));
  }
  static float Decode(uint16_t bits) {
    const uint32_t mag = bits & 0x7FFFu;
    float v;
    if (mag >= kInf) {
      v = mag == kInf ? INFINITY : NAN;
    } else {
      v = static_cast<float>(DecodeBits(mag, kMantBits, kBias));
    }
    return (bits & kSign) ? -v : v;
  }
};
using Half = IeeeHalf<5, 10>;
using BFloat16 = IeeeHalf<8, 7>;

// Quantizes the exact value v to a float8/float4 code (docs/semantics.md, "float8 and float4
// outputs"). saturate: clamp |v| to max, then round. Otherwise round, and overflow gives NaN (Inf
// for e5m2). float4e2m1 always saturates; its NaN gives 0x8 for +NaN and 0x0 for -NaN (ONNX
// reference).
inline uint8_t EncodeMiniFloat(DType t, double v, bool saturate) {
  const MiniFormat& f = MiniFormatOf(t);
  if (t == DType::kFloat4E2M1) saturate = true;
  const uint8_t sign = std::signbit(v) ? f.sign_bit : 0;
  if (std::isnan(v)) return f.fnuz ? f.nan_code : static_cast<uint8_t>(f.nan_code ^ sign);
  double a = std::fabs(v);
  if (saturate && a > f.max_value) a = f.max_value;  // also catches Inf
  const double r = std::isinf(a) ? a : RoundToFormat(a, f.mant_bits, 1 - f.bias);
  if (r > f.max_value) {  // only without saturation
    return f.fnuz ? f.overflow_code : static_cast<uint8_t>(sign | f.overflow_code);
  }
  if (r == 0.0 && f.fnuz) return 0;
  return static_cast<uint8_t>(sign | AssembleBits(r, f.mant_bits, f.bias));
}

// Exact value of a float8/float4 code (NaN/Inf where the format has them).
inline float DecodeMiniFloat(DType t, uint8_t code) {
  const MiniFormat& f = MiniFormatOf(t);
  const uint8_t mag = code & static_cast<uint8_t>(f.sign_bit - 1);
  const bool neg = (code & f.sign_bit) != 0;
  if (f.fnuz && code == f.nan_code) return NAN;
  float v;
  if (mag > f.max_code) {  // e4m3fn NaN; e5m2 Inf and NaNs
    v = f.has_inf && mag == f.overflow_code ? INFINITY : NAN;
  } else {
    v = static_cast<float>(DecodeBits(mag, f.mant_bits, f.bias));
  }
  return neg ? -v : v;
}

// float8e8m0: 2^(b - 127) exactly (b = 0 is the float32 subnormal 2^-127), 0xFF = NaN.
inline float DecodeE8M0(uint8_t b) {
  return b == 0xFF ? NAN : static_cast<float>(std::ldexp(1.0, static_cast<int>(b) - 127));
}

inline uint32_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float FloatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace qlinear

#endif  // QLINEAR_LIB_MINIFLOAT_H_
