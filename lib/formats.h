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

// float8e4m3fn's bfloat16 bits from its code's nibbles (the x86 decode without byte permutes,
// dequantize-inl.h): for high nibble h, low nibble l and i = (l + offset[h]) mod 256, the high
// byte is top[h] ^ top_patch[i] and the low byte low[l] ^ low_patch[i], where an index with
// bit 7 set reads 0 (PSHUFB). top and low are right for normal codes; i lands the subnormal
// magnitudes m < 8 (h & 7 = 0, l = m) on entry 8 + m and magnitude 0x7F (NaN) on entry 0,
// whose patches xor in the difference, and every other code on an index with bit 7 set.
struct NibbleTables {
  alignas(16) uint8_t top[16];
  alignas(16) uint8_t low[16];
  alignas(16) uint8_t offset[16];
  alignas(16) uint8_t top_patch[16];
  alignas(16) uint8_t low_patch[16];
};
constexpr NibbleTables NibbleTablesOf(const MiniFormat& f) {
  NibbleTables t{};
  for (int h = 0; h < 16; ++h) {
    const int k = h & 7;  // e's top three bits; e & 1 does not change (e + 120) >> 1
    t.top[h] = static_cast<uint8_t>((h & 8 ? 0x80 : 0) | BF16OfMagnitude(f, k << 4 | 8) >> 8);
    t.offset[h] = static_cast<uint8_t>(k == 0 ? 0x78 : k == 7 ? 0xF1 : 0x80);
  }
  for (int l = 0; l < 16; ++l) t.low[l] = static_cast<uint8_t>(BF16OfMagnitude(f, 0x10 | l) & 0xFF);
  for (int entry = 0; entry < 16; ++entry) {
    const int m = entry == 0 ? 0x7F : entry >= 8 ? entry - 8 : -1;
    if (m < 0) continue;
    const int diff = (t.top[m >> 4] << 8 | t.low[m & 15]) ^ BF16OfMagnitude(f, m);
    t.top_patch[entry] = static_cast<uint8_t>(diff >> 8);
    t.low_patch[entry] = static_cast<uint8_t>(diff & 0xFF);
  }
  return t;
}
// Whether the tables give every code's bfloat16 bits (the sign from bit 7).
constexpr bool NibbleTablesExact(const MiniFormat& f) {
  const NibbleTables t = NibbleTablesOf(f);
  for (int code = 0; code < 256; ++code) {
    const int h = code >> 4, l = code & 15, i = (l + t.offset[h]) & 0xFF;
    const int top = t.top[h] ^ (i & 0x80 ? 0 : t.top_patch[i & 15]);
    const int low = t.low[l] ^ (i & 0x80 ? 0 : t.low_patch[i & 15]);
    if ((top << 8 | low) != (BF16OfMagnitude(f, code & 0x7F) | (code & 0x80) << 8)) return false;
  }
  return true;
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
