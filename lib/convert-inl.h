// Per-target float conversions, exact on every target (Highway's own f32->bf16 demotion truncates,
// and f32->f16 truncates on SSE4/SCALAR in Highway 1.0.3, so these are written on the bits).
#if defined(QLINEAR_LIB_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_CONVERT_INL_H_
#undef QLINEAR_LIB_CONVERT_INL_H_
#else
#define QLINEAR_LIB_CONVERT_INL_H_
#endif

#include <type_traits>

#include "hwy/highway.h"
#include "lib/plan.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// v rounded to the nearest bfloat16 value (ties to even), kept in float32. Overflow carries
// into the exponent and gives Inf; f32 subnormals round on the same bit grid; NaN stays NaN.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V RoundToBF16(DF df, V v) {
  const hn::RebindToUnsigned<DF> du;
  const auto bits = hn::BitCast(du, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded =
      hn::And(hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lsb)), hn::Set(du, 0xFFFF0000u));
  return hn::IfThenElse(hn::IsNaN(v), v, hn::BitCast(df, rounded));
}

// v rounded to the nearest float16 value (ties to even), kept in float32: 10 fraction bits for
// |v| >= 2^-14, the fixed grid 2^-24 below it (f16 subnormals), Inf above 65504 after
// rounding; Inf and NaN pass through.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V RoundToF16(DF df, V v) {
  const hn::RebindToSigned<DF> di;  // |v|'s bits are < 2^31: signed compares are exact
  const auto sign = hn::And(hn::BitCast(di, v), hn::Set(di, static_cast<int32_t>(0x80000000u)));
  const V a = hn::Abs(v);
  const auto abits = hn::BitCast(di, a);
  // Normal range: round the float32 fraction to 10 bits on the integer bits.
  const auto lsb = hn::And(hn::ShiftRight<13>(abits), hn::Set(di, 1));
  auto normal = hn::And(hn::Add(abits, hn::Add(hn::Set(di, 0xFFF), lsb)),
                        hn::Set(di, static_cast<int32_t>(0xFFFFE000u)));
  normal = hn::IfThenElse(hn::Gt(normal, hn::Set(di, 0x477FE000)), hn::Set(di, 0x7F800000), normal);
  // Subnormal range: adding 0.5 puts |v| where the float32 ulp is 2^-24; the FPU rounds (RNE).
  const V half = hn::Set(df, 0.5f);
  const auto sub = hn::BitCast(di, hn::Sub(hn::Add(a, half), half));
  auto r = hn::IfThenElse(hn::Lt(abits, hn::Set(di, 0x38800000)), sub, normal);
  r = hn::IfThenElse(hn::Gt(abits, hn::Set(di, 0x7F7FFFFF)), abits, r);  // Inf, NaN
  return hn::BitCast(df, hn::Or(r, sign));
}

// float16 bits of v (RNE; NaN -> 0x7E00 with the sign), in the low 16 bits of 32-bit lanes.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> F16Bits(DF df, V v) {
  const hn::RebindToSigned<DF> di;
  const V r = RoundToF16(df, v);
  const auto bits = hn::BitCast(di, r);
  const auto sign16 = hn::And(hn::ShiftRight<16>(bits), hn::Set(di, 0x8000));
  const auto abits = hn::And(bits, hn::Set(di, 0x7FFFFFFF));
  const auto normal = hn::ShiftRight<13>(hn::Sub(abits, hn::Set(di, 0x38000000)));
  // Subnormal results are multiples of 2^-24 below 2^-14: the multiple is the fraction field.
  // Only those lanes are converted: a NaN lane's conversion is undefined on the emulated targets.
  const auto is_sub = hn::Lt(abits, hn::Set(di, 0x38800000));
  const V sub_abs = hn::IfThenElseZero(hn::RebindMask(df, is_sub), hn::Abs(r));
  const auto sub = hn::ConvertTo(di, hn::Mul(sub_abs, hn::Set(df, 16777216.0f)));
  auto out = hn::IfThenElse(is_sub, sub, normal);
  out = hn::IfThenElse(hn::Eq(abits, hn::Set(di, 0x7F800000)), hn::Set(di, 0x7C00), out);
  out = hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(v)), hn::Set(di, 0x7E00), out);
  return hn::Or(out, sign16);
}

// bfloat16 bits of v (RNE; NaN -> sign | 0x7FC0), in the low 16 bits.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> BF16Bits(DF df, V v) {
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  // NaN: the sign and the canonical quiet NaN 0x7FC0, as the reference writes it (found by
  // api_fuzzer: a NaN scale with a full payload came out as 0xFFFF).
  const auto quiet = hn::Or(hn::And(hn::BitCast(du, v), hn::Set(du, 0x80000000u)), hn::Set(du, 0x7FC00000u));
  const auto r = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet,
                                hn::BitCast(du, RoundToBF16(df, v)));
  return hn::BitCast(di, hn::ShiftRight<16>(r));
}

// v rounded to the division precision (identity for float32). A runtime choice: the branch
// is uniform per call, and a template parameter here multiplied every kernel by three.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V RoundToPrec(DF df, V v, Prec prec) {
  if (prec == Prec::kF16) return RoundToF16(df, v);
  if (prec == Prec::kBF16) return RoundToBF16(df, v);
  return v;
}

// float16 lanes -> float32, exact. Written on the bits because Highway 1.0.3's PromoteTo treats
// exponent 31 (Inf/NaN) as a normal exponent on SSE4 and SCALAR (Inf -> 65536); x86 targets
// with F16C use the instruction (LoadAsF32).
template <class DF>
HWY_INLINE hn::Vec<DF> LoadF16AsF32(DF df, const hwy::float16_t* HWY_RESTRICT p) {
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> d16;
  const auto h = hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<DF>(), hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p))));
  const auto mag = hn::ShiftLeft<13>(hn::And(h, hn::Set(di, 0x7FFF)));
  // Normals and subnormals: the f16 fields placed in a float32 and scaled by 2^112 (exact).
  const auto finite = hn::Mul(hn::BitCast(df, mag), hn::BitCast(df, hn::Set(di, 0x77800000)));
  const auto special = hn::BitCast(df, hn::Or(mag, hn::Set(di, 0x7F800000)));  // Inf, NaN
  const auto is_special = hn::RebindMask(df, hn::Eq(hn::And(h, hn::Set(di, 0x7C00)), hn::Set(di, 0x7C00)));
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(di, 0x8000)));
  return hn::BitCast(df, hn::Or(hn::BitCast(di, hn::IfThenElse(is_special, special, finite)), sign));
}

// x / s; with kSignedNaN the NaN rule of qlinear.h: a NaN quotient takes x's sign if x is NaN,
// else s's if s is NaN, else (0/0, Inf/Inf) is positive (x86's default NaN is negative, ARM's
// positive). Vectors without a NaN quotient cost one test; only encoders whose codes show a
// NaN's sign ask for it (ShowsNaNSign).
template <bool kSignedNaN, class DF, class V = hn::Vec<DF>>
HWY_INLINE V DivideSignedNaN(DF df, V x, V s) {
  const V q = hn::Div(x, s);
  if constexpr (!kSignedNaN) return q;
  const auto nan = hn::IsNaN(q);
  if (HWY_LIKELY(hn::AllFalse(df, nan))) return q;
  const hn::RebindToSigned<DF> di;
  const V positive = hn::BitCast(df, hn::Set(di, 0x7FC00000));
  return hn::IfThenElse(nan, hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(s), s, positive)), q);
}

// Whether Enc's codes show the sign of a NaN quotient: Enc::kNaNSign, false where it has none
// (integer codes map every NaN to qmin, fnuz types to their one NaN).
template <class Enc, class = void>
struct ShowsNaNSign : std::false_type {};
template <class Enc>
struct ShowsNaNSign<Enc, std::void_t<decltype(Enc::kNaNSign)>> : std::integral_constant<bool, Enc::kNaNSign> {};

// Loads lanes of x (float32, float16, bfloat16 or int32) as float32. int32 -> float32 rounds
// to nearest even (cvtdq2ps / scvtf).
template <class DF, class T>
HWY_INLINE hn::Vec<DF> LoadAsF32(DF df, const T* HWY_RESTRICT p) {
  if constexpr (std::is_same<T, float>::value) {
    return hn::LoadU(df, p);
  } else if constexpr (std::is_same<T, int32_t>::value) {
    return hn::ConvertTo(df, hn::LoadU(hn::RebindToSigned<DF>(), p));
  } else if constexpr (std::is_same<T, hwy::float16_t>::value) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    return hn::PromoteTo(df, hn::LoadU(hn::Rebind<hwy::float16_t, DF>(), p));  // VCVTPH2PS: exact
#else
    return LoadF16AsF32(df, p);
#endif
  } else {
    return hn::PromoteTo(df, hn::LoadU(hn::Rebind<T, DF>(), p));
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_CONVERT_INL_H_
