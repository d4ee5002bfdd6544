// The facts of the quantized float formats (float8 x4, float4e2m1) and the constants of the
// reciprocal path's fixed point, at compile time. The scalar codec (minifloat.h) and the vector
// encoders and decoders (encode-inl.h, dequantize-inl.h) all read them from here.
// Owns: numbers. Must not know: Highway, tensors, validation.
#ifndef QLINEAR_LIB_FORMATS_H_
#define QLINEAR_LIB_FORMATS_H_

#include <stdint.h>

#include "dtype.h"

namespace qlinear {

// A quantized float format (docs/semantics.md, "float8 and float4 outputs").
struct MiniFormat {
  int mant_bits;
  int bias;
  float max_value;        // largest finite value
  uint8_t max_code;       // code of +max
  uint8_t sign_bit;       // 0x80, or 0x8 for float4
  bool fnuz;              // one NaN (0x80), no -0, no Inf
  bool has_inf;           // e5m2 only: 0x7C / 0xFC
  uint8_t nan_code;       // the code written for +NaN (e4m3fn 0x7F, e5m2 0x7E, fnuz 0x80; float4: 0x8)
  uint8_t overflow_code;  // beyond max without saturation: NaN (e4m3fn, fnuz) or Inf (e5m2), unsigned
};

inline constexpr MiniFormat kE4M3FN{3, 7, 448.0f, 0x7E, 0x80, false, false, 0x7F, 0x7F};
inline constexpr MiniFormat kE4M3FNUZ{3, 8, 240.0f, 0x7F, 0x80, true, false, 0x80, 0x80};
inline constexpr MiniFormat kE5M2{2, 15, 57344.0f, 0x7B, 0x80, false, true, 0x7E, 0x7C};
inline constexpr MiniFormat kE5M2FNUZ{2, 16, 57344.0f, 0x7F, 0x80, true, false, 0x80, 0x80};
// float4e2m1 has no NaN and always saturates. Its "NaN code" 0x8 (-0) is what +NaN becomes, and
// the sign bit flips it to 0x0 for -NaN (the ONNX reference implementation's behaviour).
inline constexpr MiniFormat kE2M1{1, 1, 6.0f, 0x7, 0x8, false, false, 0x8, 0x7};

// The format of a float8/float4 type (any other type: float4e2m1's; callers check the kind).
constexpr const MiniFormat& MiniFormatOf(DType t) {
  return t == DType::kFloat8E4M3FN     ? kE4M3FN
         : t == DType::kFloat8E4M3FNUZ ? kE4M3FNUZ
         : t == DType::kFloat8E5M2     ? kE5M2
         : t == DType::kFloat8E5M2FNUZ ? kE5M2FNUZ
                                       : kE2M1;
}

// The bfloat16 bits of the value of magnitude code m (0..127) of a float8 format: every float8
// value is a bfloat16 value. NaN codes give the quiet NaN 0x7FC0, e5m2's Inf code 0x7F80 (fnuz:
// every magnitude is finite; their NaN is the code 0x80).
constexpr uint16_t BF16OfMagnitude(const MiniFormat& f, int m) {
  if (f.has_inf && m == f.overflow_code) return 0x7F80;
  if (!f.fnuz && m > f.max_code) return 0x7FC0;
  const int e = m >> f.mant_bits, frac = m & ((1 << f.mant_bits) - 1);
  if (e > 0) return static_cast<uint16_t>(((e - f.bias + 127) << 7) | (frac << (7 - f.mant_bits)));
  if (frac == 0) return 0;
  int p = 0;  // the leading bit of a subnormal's fraction becomes the implicit one
  while ((frac >> (p + 1)) != 0) ++p;
  return static_cast<uint16_t>(((127 + 1 - f.bias - f.mant_bits + p) << 7) | ((frac - (1 << p)) << (7 - p)));
}

// The reciprocal path of <= 8-bit integer outputs (encode-inl.h, IntEncoder; docs/exactness.md):
// t = x * (1/s) + (zp + kOffset) lies in [512, 1024) after clamping, where the float32 ulp is
// 2^-14, so bits(t) - bits(kBase) is the code's value in fixed point with 14 fraction bits.
struct FixedPoint {
  static constexpr float kBase = 768.0f;
  static constexpr int32_t kBaseBits = 0x44400000;  // bits of 768.0f
  static constexpr int kFractionBits = 14;
  // bits(kBase) >> kFractionBits: subtracted from t's bits >> 14 to get the code (its low byte
  // is zero, so a truncating byte store may skip it).
  static constexpr int32_t kBaseCode = kBaseBits >> kFractionBits;
  // One half (round to nearest by a floor) and w = 2^-12, which keeps exact ties above the
  // flagged window's floor so that they are flagged rather than rounded.
  static constexpr float kOffset = kBase + 0.5f + 0x1p-12f;
  // Fraction bits 3..13 of t: all zero means t's fraction is below 2^-11, where the error of
  // the product could cross a half-integer; such lanes are redone by division.
  static constexpr int32_t kFlagBits = 0x3FF8;
  // Clamp bounds of t for [qmin, qmax]: fractions 0.25 / 0.75 are never flagged.
  static constexpr float Lower(int32_t qmin) { return kBase + 0.25f + static_cast<float>(qmin); }
  static constexpr float Upper(int32_t qmax) { return kBase + 0.75f + static_cast<float>(qmax); }
};

// c + kRounder has ulp 1 for |c| < 2^22, so the FPU rounds c half to even and the float32 bits
// minus kRounderBits are that integer (the division path's integer rounding).
struct Rounder {
  static constexpr float kValue = 12582912.0f;  // 1.5 * 2^23
  static constexpr int32_t kBits = 0x4B400000;
};

}  // namespace qlinear

#endif  // QLINEAR_LIB_FORMATS_H_
