// Per-target QuantizeLinear / DequantizeLinear kernels (Highway include-guard toggle).
//
// QuantizeLinear, integer outputs (README decision 3), per lane:
//   q  = round_p(round_p(x) / s)        p = the division precision; s arrives already rounded to it
//   c  = clamp(q, qmin - zp, qmax - zp) in float (integer bounds: clamp and RNE commute, and no
//        int32 overflow); NaN -> qmin - zp, chosen with IsNaN, never left to Min/Max
//   y  = RNE(c) + zp                    (round half to even, by the 1.5 * 2^23 rounder)
// Granularity arrives as runs (plan.h): one scale per run, a scale per element, or a scale per
// block of elements; one span kernel serves all of them. Sub-byte outputs are staged as one
// code per byte in chunks that start on byte boundaries, then packed in vector form.
#if defined(QLINEAR_LIB_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_QUANTIZE_INL_H_
#undef QLINEAR_LIB_QUANTIZE_INL_H_
#else
#define QLINEAR_LIB_QUANTIZE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "lib/convert-inl.h"
#include "lib/kernels.h"
#include "lib/plan.h"
#include "lib/minifloat.h"
#include "lib/reference.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lambdas called from several places in a kernel must still inline (constant arguments fold).
#if defined(__GNUC__) || defined(__clang__)
#define QLINEAR_INLINE_LAMBDA __attribute__((always_inline))
#else
#define QLINEAR_INLINE_LAMBDA
#endif

// Elements staged per chunk for sub-byte outputs/inputs (a multiple of 4: whole bytes).
constexpr int64_t kChunk = 1024;

// From this many elements x is prefetched 4 KB ahead: per-tensor float32 spans on the
// reciprocal path, and the staged chunks of sub-byte outputs. The hardware prefetchers stop at
// 4 KB pages, and beyond the TLB's reach (16M elements, 64 MB) the loop waited on page walks:
// int8 16M 3.1 -> 5.1 G el/s on Sapphire Rapids (the loop alone). In cache the prefetches only
// cost (10% at 4K, 8% for int4 at 64K).
constexpr int64_t kPrefetchFrom = int64_t{1} << 20;

// ok without the lanes of v (int32) that have none of `bits` set. On AVX-512 one VPTESTMD under
// the mask ok: the flags of a group of vectors chain through it and one KORTEST tests them all
// (a VPTESTNMD per vector, KORWs to join them and a KORTEST were 8 of 27 ops per 64 int8 codes).
template <class DF, class VI>
HWY_INLINE hn::Mask<DF> KeepIfAnyBitSet(DF df, hn::Mask<DF> ok, VI v, int32_t bits) {
  const hn::RebindToSigned<DF> di;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(df) == 16) {
    return hn::Mask<DF>{_mm512_mask_test_epi32_mask(ok.raw, v.raw, hn::Set(di, bits).raw)};
  }
#endif
  return hn::AndNot(hn::RebindMask(df, hn::Eq(hn::And(v, hn::Set(di, bits)), hn::Zero(di))), ok);
}

// What IntEncoder's fixed-point EncodeReciprocal returns per lane: the code; only its low byte
// exact (for a truncating store); or the clamped t itself, whose bits 14..21 are the code's low
// byte (StoreFourFixedPoint narrows and shifts in one go). Other encoders return codes.
enum class CodeForm { kExact, kLowByte, kFixedPoint };

// ---- QuantizeLinear encoders: quotient lanes -> output codes (int32 lanes) -----------------
//
// An encoder maps quotient lanes and zero-point lanes to codes:
// Encode(df, q, zp) for the quotient q (already rounded to the division precision).

// Integer outputs: clamp in float to [qmin - zp, qmax - zp], NaN -> qmin - zp, RNE, + zp.
// (Encoders hold no vectors: SVE vectors are sizeless and cannot be members. For uniform spans
// the bounds are loop-invariant and hoisted by the compiler.)
struct IntEncoder {
  static constexpr bool kReciprocal = true;
  int32_t qmin, qmax;
  Prec prec;
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Lo(DF df, hn::Vec<DI> zp) const {
    return hn::ConvertTo(df, hn::Sub(hn::Set(DI(), qmin), zp));
  }
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Hi(DF df, hn::Vec<DI> zp) const {
    return hn::ConvertTo(df, hn::Sub(hn::Set(DI(), qmax), zp));
  }
  // c = clamp(q, lo, hi), NaN -> lo.
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Prepare(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    const hn::Vec<DF> lo = Lo(df, zp);
    const hn::Vec<DF> c = hn::Min(hn::Max(q, lo), Hi(df, zp));
#if HWY_ARCH_X86
    return c;  // MAXPS returns its second operand (lo) when q is NaN; the NaN tests check it
#else
    return hn::IfThenElse(hn::IsNaN(q), lo, c);
#endif
  }
  // RNE(c) + zp: c + 1.5 * 2^23 has ulp 1 (|c| < 2^17), so the FPU rounds c half to even and
  // the float32 bits minus those of 1.5 * 2^23 are that integer.
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Finish(DF df, hn::Vec<DF> /*q*/, hn::Vec<DF> c, hn::Vec<DI> zp) const {
    const DI di;
    return hn::Sub(hn::BitCast(di, hn::Add(c, hn::Set(df, kRounder))), hn::Sub(hn::Set(di, kRounderBits), zp));
  }
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Encode(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    return Finish(df, q, Prepare(df, q, zp), zp);
  }
  // Lanes whose clamped c lies within |c| * 2^-20 of a half-integer: the only places where
  // rounding c can differ from rounding a quotient 1.5 * 2^-23 |c| away. Ranges wider than
  // 8 bits (RelativeMargin) use this; narrower ones the fixed-point test below.
  bool RelativeMargin() const { return qmax - qmin > 255; }
  template <class DF>
  HWY_INLINE hn::Mask<DF> NearBoundary(DF df, hn::Vec<DF> c) const {
    const auto rounded = hn::Sub(hn::Add(c, hn::Set(df, kRounder)), hn::Set(df, kRounder));
    const auto from_int = hn::Abs(hn::Sub(c, rounded));  // exact
    return hn::Ge(hn::MulAdd(hn::Abs(c), hn::Set(df, 0x1p-20f), from_int), hn::Set(df, 0.5f));
  }
  static constexpr float kRounder = 12582912.0f;  // 1.5 * 2^23
  static constexpr int32_t kRounderBits = 0x4B400000;

  // The reciprocal path for ranges of at most 8 bits (qmin >= -128, qmax <= 255): one fused
  // t = x * r + (768 + zp + 0.5 + w), w = 2^-12, then t clamped to [768 + qmin + 0.25,
  // 768 + qmax + 0.75] (bounds that do not depend on zp). t lies in [512, 1024), where the
  // float32 ulp is 2^-14: bits(t) - bits(768) = (c' + zp + 0.5 + w) * 2^14 for c' within
  // 2^-15 (rounding of t) + 2^-23 |c| (1/s rounded; 1.5 * 2^-23 |c| without FMA) of the
  // quotient fl(x / s), |c| <= 255: at most 2.5 * 2^-15 in all. The code is floor(t) - 768,
  // a shift, except where that error could cross a half-integer: lanes whose t has a
  // fraction below 2^-11 = 16 * 2^-15 > w + error, i.e. fraction bits 3..13 all zero, are
  // flagged and redone by division (ties land there too: their fraction is w + error).
  // Clamping t instead of c is exact: lanes below the lower bound have c + zp < qmin - 0.25
  // and saturate to qmin either way; the bounds' fractions 0.25 / 0.75 are never flagged.
  // NaN: MAXPS returns its second operand (the lower bound) on x86, as Prepare does.
  // (DecodedParams precomputes it per element as kFixedPointOffset + zp, the same float sum.)
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> ZeroOffset(DF df, hn::Vec<DI> zp) const {
    return hn::Add(hn::ConvertTo(df, zp), hn::Set(df, kFixedPointOffset));
  }
  // kForm (CodeForm): kLowByte skips the subtraction of bits(768) >> 14 = 0x11100, whose low
  // byte is zero; kFixedPoint also the shift.
  // lo, hi: ReciprocalLower/Upper, hoisted by the caller (GCC reloads members after int8
  // stores, which may alias them). ok: flagged lanes cleared (KeepIfAnyBitSet).
  template <CodeForm kForm, class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> FixedPointCodes(DF df, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DF> offset,
                                         hn::Vec<DF> lo, hn::Vec<DF> hi, hn::Mask<DF>* ok) const {
    const DI di;
#if HWY_ARCH_X86
    // After MAXPS every lane is a positive float (NaN became lo), whose bits order as int32: the
    // upper clamp is an integer min, off the FP pipes that the FMA and MAXPS use.
    const auto t = hn::Min(hn::BitCast(di, hn::Max(hn::MulAdd(x, r, offset), lo)), hn::BitCast(di, hi));
#else
    auto tf = hn::Min(hn::Max(hn::MulAdd(x, r, offset), lo), hi);
    tf = hn::IfThenElse(hn::IsNaN(tf), lo, tf);
    const auto t = hn::BitCast(di, tf);
#endif
    *ok = KeepIfAnyBitSet(df, *ok, t, 0x3FF8);
    if constexpr (kForm == CodeForm::kFixedPoint) return t;
    const auto codes = hn::ShiftRight<14>(t);
    return kForm == CodeForm::kLowByte ? codes : hn::Sub(codes, hn::Set(di, 0x44400000 >> 14));
  }

  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalLower(DF df) const { return hn::Set(df, 768.25f + static_cast<float>(qmin)); }
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalUpper(DF df) const { return hn::Set(df, 768.75f + static_cast<float>(qmax)); }

  // Codes of x * r (r = 1/s) in the form kForm; lanes to redo by division are cleared in *ok
  // (see ReciprocalVectors). zoff = ZeroOffset(zp).
  static constexpr bool kHasFixedPoint = true;
  template <bool kRelative, CodeForm kForm, class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> EncodeReciprocal(DF df, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DI> zp, hn::Vec<DF> zoff,
                                          hn::Vec<DF> lo, hn::Vec<DF> hi, hn::Mask<DF>* ok) const {
    static_assert(!kRelative || kForm != CodeForm::kFixedPoint, "the relative test has no t");
    if constexpr (!kRelative) return FixedPointCodes<kForm>(df, x, r, zoff, lo, hi, ok);
    const hn::Vec<DF> q = hn::Mul(x, r);
    const hn::Vec<DF> c = Prepare(df, q, zp);
    *ok = hn::AndNot(NearBoundary(df, c), *ok);
    return Finish(df, q, c, zp);
  }
};

// Format facts of the float8/float4 output types, at compile time (SEMANTICS.md 3.1).
template <DType kT>
struct MiniTraits {
  static constexpr bool kFp4 = kT == DType::kFloat4E2M1;
  static constexpr bool kFnuz = kT == DType::kFloat8E4M3FNUZ || kT == DType::kFloat8E5M2FNUZ;
  static constexpr bool kE5M2 = kT == DType::kFloat8E5M2;
  static constexpr int kMant = kFp4 ? 1 : (kT == DType::kFloat8E5M2 || kT == DType::kFloat8E5M2FNUZ ? 2 : 3);
  static constexpr int kBias = kFp4 ? 1
                               : kT == DType::kFloat8E4M3FN ? 7
                               : kT == DType::kFloat8E4M3FNUZ ? 8
                               : kT == DType::kFloat8E5M2 ? 15 : 16;
  static constexpr int32_t kMaxCode = kFp4 ? 0x7 : (kT == DType::kFloat8E4M3FN ? 0x7E : kE5M2 ? 0x7B : 0x7F);
  static constexpr int32_t kSignBit = kFp4 ? 0x8 : 0x80;
  static constexpr float kMaxValue = kFp4 ? 6.0f
                                     : kT == DType::kFloat8E4M3FN ? 448.0f
                                     : kT == DType::kFloat8E4M3FNUZ ? 240.0f : 57344.0f;
  // float32 bits of the smallest normal 2^(1 - bias), and of 2^(1 - bias - mant + 23), the
  // constant whose float32 ulp is the format's subnormal quantum.
  static constexpr int32_t kMinNormalBits = (127 + 1 - kBias) << 23;
  static constexpr int32_t kSubMagicBits = (127 + 1 - kBias - kMant + 23) << 23;
};

// float8/float4 outputs: RNE on the float32 bits of the exact quotient (no detour through
// float16). saturate: |q| clamped to max first; otherwise codes beyond max become NaN
// (e4m3fn 0x7F|sign, fnuz 0x80) or Inf (e5m2 0x7C|sign). float4e2m1 adds its zero point as a
// float in the division precision, always saturates, and writes 0x8/0x0 for +NaN/-NaN.
template <DType kT>
struct MiniFloatEncoder {
  using Tr = MiniTraits<kT>;
  static constexpr bool kReciprocal = true;
  static constexpr bool kNaNSign = !Tr::kFnuz;  // NaN codes carry the sign (qlinear.h's NaN rule)
  bool saturate;
  Prec prec;
  bool RelativeMargin() const { return false; }
  // |q| (float4: |q + zp| in the division precision), clamped to max when saturating. Min's NaN
  // behaviour differs per target: NaN lanes are replaced in Finish, whatever Min made of them.
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Prepare(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    if (Tr::kFp4) q = RoundToPrec(df, hn::Add(q, hn::BitCast(df, zp)), prec);
    auto av = hn::Abs(q);
    if (Tr::kFp4 || saturate) av = hn::Min(av, hn::Set(df, Tr::kMaxValue));
    return av;
  }
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Encode(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    if (Tr::kFp4) {  // Finish takes the sign and NaN-ness from q + zp
      q = RoundToPrec(df, hn::Add(q, hn::BitCast(df, zp)), prec);
      auto av = hn::Min(hn::Abs(q), hn::Set(df, Tr::kMaxValue));
      return Finish(df, q, av, zp);
    }
    return Finish(df, q, Prepare(df, q, zp), zp);
  }
  // The reciprocal path, in fixed point per binade. For |q| in [2^e, 2^(e+1)), e clamped below
  // at the smallest normal's exponent (the subnormal quantum is that binade's), adding
  // m = 2^(e + 7 - kMant) rounds |q| to 2^-16 of the format's quantum 2^(e - kMant):
  // bits(|q| + m) - bits(m) = v, |q| / quantum in 16-bit fixed point (m > 2^(e+1), so the sum
  // stays in m's binade; a carry past it is still exact). The code is the biased exponent
  // (e + bias - 1) << kMant plus round(v / 2^16), taken as a floor after adding one half and
  // w = 4 units; that add carries into the exponent exactly as RNE does. Error against
  // fl(x / s): 1.5 * 2^-23 |q| relative (1/s rounded, then the product) is at most 0.19 units,
  // the rounding of |q| + m 0.5: lanes whose fraction (with w) is below 8 units, i.e. bits
  // 3..15 all zero, may be near a midpoint and are redone by division, as are NaN lanes. Not
  // saturating, |q| is capped at twice max, beyond the overflow midpoint (a midpoint too:
  // flagged), so that m stays finite; saturating, at max.
  // float4 rounds t = q + zp instead (a second rounding in the division path): t = x * r + zp
  // in one FMA is within 2^-24 (|q| + 2 |t|) + 2^-23 |q| of fl(fl(x / s) + zp); where t decides
  // the code (|t| < 6) |q| < 12, so that is below 0.3 units of 2^-17 (the smallest quantum 0.5
  // in 16-bit fixed point). The sign of t also decides the code (-0 is 0x8), and the two sums
  // may differ in sign when t is near zero: lanes with |t| < 2^-12 and x != 0 are redone too.
  // The cap on |q| (see above), hoisted by the caller; no lower bound.
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalLower(DF df) const { return hn::Zero(df); }
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalUpper(DF df) const {
    return hn::Set(df, Tr::kFp4 || saturate ? Tr::kMaxValue : Tr::kMaxValue * 2.0f);
  }
  // float4: the zero point as a float (its lanes hold float32 bits); float8: no zero point.
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> ZeroOffset(DF df, hn::Vec<DI> zp) const {
    return Tr::kFp4 ? hn::BitCast(df, zp) : hn::Zero(df);
  }
  static constexpr bool kHasFixedPoint = false;  // codes in every CodeForm
  template <bool kRelative, CodeForm kForm, class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> EncodeReciprocal(DF df, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DI> /*zp*/,
                                          hn::Vec<DF> zoff, hn::Vec<DF> /*lo*/, hn::Vec<DF> cap,
                                          hn::Mask<DF>* ok) const {
    const DI di;
    constexpr int kUnitShift = 16;
    constexpr int32_t kMagic = (23 - Tr::kMant - kUnitShift) << 23;  // m = eb + kMagic
    // u = bits(|q| + m) - m + 2^15 + w - (bits of the smallest normal's exponent) << 16: one
    // subtraction of eb + kBase, then the code is (u >> 16) + (eb >> (23 - kMant)).
    constexpr int32_t kBase = kMagic - (1 << (kUnitShift - 1)) - 4 +
                              ((Tr::kMinNormalBits >> (23 - Tr::kMant)) << kUnitShift);
    const auto q = Tr::kFp4 ? hn::MulAdd(x, r, zoff) : hn::Mul(x, r);
    const auto av = hn::Min(hn::Abs(q), cap);
    const auto eb = hn::Max(hn::And(hn::BitCast(di, av), hn::Set(di, 0x7F800000)),
                            hn::Set(di, Tr::kMinNormalBits));
    const auto sum = hn::Add(av, hn::BitCast(df, hn::Add(eb, hn::Set(di, kMagic))));
    const auto u = hn::Sub(hn::BitCast(di, sum), hn::Add(eb, hn::Set(di, kBase)));
    *ok = KeepIfAnyBitSet(df, hn::AndNot(hn::IsNaN(q), *ok), u, 0xFFF8);
    auto code = hn::Add(hn::ShiftRight<kUnitShift>(u), hn::ShiftRight<23 - Tr::kMant>(eb));
    if constexpr (Tr::kFp4) {
      const auto near_zero = hn::And(hn::Lt(av, hn::Set(df, 0x1p-12f)), hn::Ne(x, hn::Zero(df)));
      *ok = hn::AndNot(near_zero, *ok);
      return hn::OrAnd(code, hn::ShiftRight<28>(hn::BitCast(di, q)), hn::Set(di, Tr::kSignBit));
    }
    // Beyond max: NaN (e4m3fn 0x7F, fnuz 0x80) or Inf (e5m2 0x7C), in each case max + 1.
    if (!saturate) code = hn::Min(code, hn::Set(di, Tr::kMaxCode + 1));
    auto sign = hn::ShiftRight<24>(hn::BitCast(di, q));
    if (Tr::kFnuz) sign = hn::IfThenZeroElse(hn::Eq(code, hn::Zero(di)), sign);  // no -0
    return hn::OrAnd(code, sign, hn::Set(di, 0x80));  // fnuz's 0x80 (NaN) is unsigned already
  }
  // Codes from q and av = Prepare(q) (float4: q + zp and its av).
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Finish(DF df, hn::Vec<DF> q, hn::Vec<DF> av, hn::Vec<DI> /*zp*/) const {
    const DI di;
    const auto a = hn::BitCast(di, av);
    // Normal range: round the 23-bit fraction to kMant bits (a carry may bump the exponent),
    // then rebias the exponent field.
    constexpr int kShift = 23 - Tr::kMant;
    const auto lsb = hn::And(hn::ShiftRight<kShift>(a), hn::Set(di, 1));
    const auto normal = hn::Sub(
        hn::ShiftRight<kShift>(hn::Add(hn::Add(a, hn::Set(di, (1 << (kShift - 1)) - 1)), lsb)),
        hn::Set(di, (127 - Tr::kBias) << Tr::kMant));
    // Subnormal range: the FPU rounds |q| + magic to the subnormal quantum; the difference of
    // the bits counts quanta (2^kMant quanta = the smallest normal code, so carries are right).
    const auto magic = hn::BitCast(df, hn::Set(di, Tr::kSubMagicBits));
    const auto sub = hn::Sub(hn::BitCast(di, hn::Add(av, magic)), hn::BitCast(di, magic));
    auto code = hn::IfThenElse(hn::Lt(a, hn::Set(di, Tr::kMinNormalBits)), sub, normal);
    constexpr int32_t kOverCode = Tr::kFnuz ? 0x80 : (Tr::kE5M2 ? 0x7C : 0x7F);
    if (!Tr::kFp4 && !saturate) {  // beyond max: NaN (Inf for e5m2); Inf lands here too
      code = hn::IfThenElse(hn::Gt(code, hn::Set(di, Tr::kMaxCode)), hn::Set(di, kOverCode), code);
    }
    // NaN codes before the sign: e4m3fn 0x7F, e5m2 0x7E (the sign is then kept), fnuz 0x80;
    // float4 0x8, which the sign flips to 0x0 for -NaN.
    constexpr int32_t kNaNCode = Tr::kFp4 ? 0x8 : (Tr::kFnuz ? 0x80 : (Tr::kE5M2 ? 0x7E : 0x7F));
    code = hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(q)), hn::Set(di, kNaNCode), code);
    auto sign = hn::And(hn::ShiftRight<Tr::kFp4 ? 28 : 24>(hn::BitCast(di, q)), hn::Set(di, Tr::kSignBit));
    if (Tr::kFnuz) {  // no -0, and the single NaN 0x80 carries no sign
      sign = hn::IfThenZeroElse(hn::Eq(hn::And(code, hn::Set(di, 0x7F)), hn::Zero(di)), sign);
    }
    return hn::Xor(code, sign);
  }
};

// Whether StoreCodes<DF, TOut> keeps only the low bits of each code (VPMOVDB) rather than
// saturating (DemoteTo): the fixed-point encoder can then skip a subtraction.
template <class DF, class TOut>
constexpr bool kTruncatingStore =
    HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3 && sizeof(TOut) == 1 && hn::MaxLanes(DF()) == 16;

template <class DF, class TOut>
HWY_INLINE void StoreCodes(DF df, hn::Vec<hn::RebindToSigned<DF>> v, TOut* HWY_RESTRICT out) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // Codes are already in TOut's range, so truncation is exact: one VPMOVDB/VPMOVDW instead of
  // DemoteTo's two packs and a permute (the narrowing bounded the int8 loop).
  if constexpr (sizeof(TOut) == 1 && hn::MaxLanes(df) == 16) {
    return _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(v.raw));
  } else if constexpr (sizeof(TOut) == 2 && hn::MaxLanes(df) == 16) {
    return _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(v.raw));
  }
#endif
  const hn::Rebind<TOut, DF> dout;
  hn::StoreU(hn::DemoteTo(dout, v), dout, out);
}

// Two or four code vectors to consecutive outputs. On AVX3_DL, byte outputs: one VPERMT2B takes
// the low byte of each lane of two vectors (an insert joins two such halves), then one store:
// per 64 codes 3 ops and a store instead of four VPMOVDB (two ops each) and four stores.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL
// A VPERMT2B index: byte k takes byte (k / group) * stride + first + k % group of the pair
// (bit 6 picks the second vector; only the low 7 bits count).
struct alignas(64) ByteIndex {
  uint8_t b[64];
};
constexpr ByteIndex StridedBytes(int stride, int first, int group) {
  ByteIndex t{};
  for (int k = 0; k < 64; ++k) t.b[k] = static_cast<uint8_t>((k / group) * stride + first + k % group);
  return t;
}
HWY_INLINE __m512i PermutePair(__m512i a, const ByteIndex& index, __m512i b) {
  return _mm512_permutex2var_epi8(a, _mm512_load_si512(index.b), b);
}
// Bytes 0..31: the low byte of each lane of c0 then c1.
HWY_INLINE __m512i LowBytesOfPair(__m512i c0, __m512i c1) {
  static constexpr ByteIndex kLowBytes = StridedBytes(4, 0, 1);
  return PermutePair(c0, kLowBytes, c1);
}
#endif

template <class DF, class TOut, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE void StoreTwoCodes(DF df, VI c0, VI c1, TOut* HWY_RESTRICT out) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL
  if constexpr (sizeof(TOut) == 1 && hn::MaxLanes(df) == 16) {
    return _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(LowBytesOfPair(c0.raw, c1.raw)));
  }
#endif
  StoreCodes(df, c0, out);
  StoreCodes(df, c1, out + hn::Lanes(df));
}

template <class DF, class TOut, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE void StoreFourCodes(DF df, VI c0, VI c1, VI c2, VI c3, TOut* HWY_RESTRICT out) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL
  if constexpr (sizeof(TOut) == 1 && hn::MaxLanes(df) == 16) {
    const __m512i lo = LowBytesOfPair(c0.raw, c1.raw), hi = LowBytesOfPair(c2.raw, c3.raw);
    return _mm512_storeu_si512(out, _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1));
  }
#endif
  StoreTwoCodes(df, c0, c1, out);
  StoreTwoCodes(df, c2, c3, out + 2 * hn::Lanes(df));
}

// Whether StoreFourFixedPoint narrows fixed-point t lanes itself (CodeForm::kFixedPoint).
template <class DF, class TOut>
constexpr bool kFixedPointStore = kTruncatingStore<DF, TOut> && HWY_TARGET <= HWY_AVX3_DL;

// Four vectors of IntEncoder's t (CodeForm::kFixedPoint): code byte = bits 14..21 of t. VPERMB
// gathers bytes 1 and 2 of each lane as a word (bits 8..23), two vectors into one under a
// merge mask; one 16-bit shift by 6 per pair puts each code in its word's low byte; two more
// VPERMB keep those bytes. 8 single-uop ops per 64 codes: VPERMT2B and VPMOVDB are 2-3 uops
// each on Intel (2 cycles a piece measured on Sapphire Rapids, VPERMB 1), and 32-bit shifts of
// each vector would cost 4.
template <class DF, class TOut, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE void StoreFourFixedPoint(DF df, VI t0, VI t1, VI t2, VI t3, TOut* HWY_RESTRICT out) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL
  if constexpr (kFixedPointStore<DF, TOut>) {
    // Byte k of a word vector: byte 1 + k % 2 of lane (k / 2) % 16 (each half from one t).
    static constexpr ByteIndex kMiddleWords = StridedBytes(4, 1, 2);
    static constexpr ByteIndex kLowBytesOfWords = StridedBytes(2, 0, 1);  // byte k: 2k mod 64
    const __m512i words = _mm512_load_si512(kMiddleWords.b);
    const __m512i low_bytes = _mm512_load_si512(kLowBytesOfWords.b);
    constexpr __mmask64 kHigh = 0xFFFFFFFF00000000ull;
    auto pair = [&](__m512i a, __m512i b) QLINEAR_INLINE_LAMBDA {
      const __m512i w = _mm512_mask_permutexvar_epi8(_mm512_permutexvar_epi8(words, a), kHigh, words, b);
      return _mm512_srli_epi16(w, 6);
    };
    const __m512i w01 = pair(t0.raw, t1.raw), w23 = pair(t2.raw, t3.raw);
    const __m512i codes = _mm512_mask_permutexvar_epi8(_mm512_permutexvar_epi8(low_bytes, w01), kHigh, low_bytes, w23);
    return _mm512_storeu_si512(out, codes);
  }
#endif
  auto code = [](VI t) { return hn::Sub(hn::ShiftRight<14>(t), hn::Set(hn::RebindToSigned<DF>(), 0x44400000 >> 14)); };
  StoreFourCodes(df, code(t0), code(t1), code(t2), code(t3), out);
}

template <bool kSignedNaN = false, class DF>
HWY_INLINE hn::Vec<DF> Quotient(DF df, hn::Vec<DF> x, hn::Vec<DF> s, Prec prec) {
  return RoundToPrec(df, DivideSignedNaN<kSignedNaN>(df, RoundToPrec(df, x, prec), s), prec);
}

// One vector by division: codes of x[0, N) with scale vs and zero point vz, stored at out.
template <class Enc, class DF, class XT, class TOut>
HWY_INLINE void DivideVector(const Enc& enc, DF df, const XT* HWY_RESTRICT x, hn::Vec<DF> vs,
                             hn::Vec<hn::RebindToSigned<DF>> vz, TOut* HWY_RESTRICT out) {
  StoreCodes(df, enc.Encode(df, Quotient<ShowsNaNSign<Enc>::value>(df, LoadAsF32(df, x), vs, enc.prec), vz), out);
}

// The reciprocal path (float32 precision only; params.cc decides): q = x * (1/s), and only when
// some lane lies within a few ulps of one of the encoder's decision boundaries is the vector
// recomputed with x / s. |x*(1/s) - fl(x/s)| <= 1.5 * 2^-23 |x/s|, so no boundary lies between
// the two unless the lane is flagged (the margins are 4x that); outside flagged lanes both give
// the same code. tests/reciprocal_test.cc compares the two paths on every float32.
// (QuantizeSpan below.)
// One span of a run: elements [j, j + len) of the run, one scale (s[0], r[0], z[0]) or one per
// element (s[k], r[k], z[k]). r: reciprocals of the scales, or null (divide).
// off: the fixed-point offsets of the zero points (QuantParams::offsets), or null.
struct Span {
  int64_t j, len;
  const float* s;
  const float* r;
  const int32_t* z;
  bool per_element;
  const float* off = nullptr;
};

// The CodeForm a loop asks of Enc for TOut: kFixedPoint where four vectors are stored at once
// (kFour) by StoreFourFixedPoint, kLowByte for truncating stores, else exact codes.
template <class Enc, bool kRelative, bool kFour, class DF, class TOut>
constexpr CodeForm kFormFor = kFour && kFixedPointStore<DF, TOut> && Enc::kHasFixedPoint && !kRelative
                                  ? CodeForm::kFixedPoint
                              : kTruncatingStore<DF, TOut> ? CodeForm::kLowByte
                                                           : CodeForm::kExact;

// Four code vectors in the form kForm to consecutive outputs.
template <CodeForm kForm, class DF, class TOut, class VI>
HWY_INLINE void StoreFour(DF df, VI c0, VI c1, VI c2, VI c3, TOut* HWY_RESTRICT out) {
  if constexpr (kForm == CodeForm::kFixedPoint) {
    StoreFourFixedPoint(df, c0, c1, c2, c3, out);
  } else {
    StoreFourCodes(df, c0, c1, c2, c3, out);
  }
}

// A flagged group of four vectors: redo(v) for each vector v whose own flags (ok(v), the mask
// its encoding leaves) have a lane cleared.
template <class DF, class Ok, class Redo>
HWY_INLINE void RedoFlaggedOfFour(DF df, Ok&& ok, Redo&& redo) {
  for (int64_t v = 0; v < 4; ++v) {
    if (!hn::AllTrue(df, ok(v))) redo(v);
  }
}

// The reciprocal path (above) over whole groups of four vectors: the encoder clears the lanes
// to redo in one mask per group (KeepIfAnyBitSet), tested once; in a flagged group the flags of
// each vector are recomputed and only the flagged vectors redone by division (redo(i)
// recomputes the vector at i). Returns the number of elements done.
// kOffsets: per-element zero-point offsets are loaded from `off` rather than converted.
// kPrefetch: each line of x is prefetched 4 KB ahead (see kPrefetchFrom).
template <bool kPerElement, bool kRelative, bool kOffsets, bool kPrefetch, class Enc, class XT, class TOut, class Redo>
HWY_INLINE int64_t ReciprocalVectors(const Enc& enc, const XT* HWY_RESTRICT x, int64_t n,
                                     const float* HWY_RESTRICT r, const int32_t* HWY_RESTRICT z,
                                     const float* HWY_RESTRICT off, TOut* HWY_RESTRICT out, Redo&& redo) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  using M = hn::Mask<decltype(df)>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr CodeForm kForm = kFormFor<Enc, kRelative, true, decltype(df), TOut>;
  const auto ur = hn::Set(df, *r);
  const auto uz = hn::Set(di, *z);
  const auto uoff = enc.ZeroOffset(df, uz);
  const auto lo = enc.ReciprocalLower(df);
  const auto hi = enc.ReciprocalUpper(df);
  const M all = hn::FirstN(df, static_cast<size_t>(N));
  auto codes = [&](int64_t i, M* ok) QLINEAR_INLINE_LAMBDA {
    const auto vz = kPerElement ? hn::LoadU(di, z + i) : uz;
    const auto vr = kPerElement ? hn::LoadU(df, r + i) : ur;
    const auto zoff = !kPerElement ? uoff : kOffsets ? hn::LoadU(df, off + i) : enc.ZeroOffset(df, vz);
    return enc.template EncodeReciprocal<kRelative, kForm>(df, LoadAsF32(df, x + i), vr, vz, zoff, lo, hi, ok);
  };
  constexpr int64_t kAhead = 4096 / sizeof(XT), kLine = 64 / sizeof(XT);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    if constexpr (kPrefetch) {
      for (int64_t p = i + kAhead; p < i + kAhead + 4 * N && p < n; p += kLine) hwy::Prefetch(x + p);
    }
    M ok = all;
    const auto c0 = codes(i, &ok), c1 = codes(i + N, &ok), c2 = codes(i + 2 * N, &ok), c3 = codes(i + 3 * N, &ok);
    StoreFour<kForm>(df, c0, c1, c2, c3, out + i);
    if (HWY_UNLIKELY(!hn::AllTrue(df, ok))) {
      // Only the flagged vectors: inputs with few significant bits (bfloat16 x, round scales)
      // hit exact ties in a few % of lanes, and redoing all four cost up to half the time.
      auto vector_ok = [&](int64_t v) {
        M m = all;
        (void)codes(i + v * N, &m);
        return m;
      };
      RedoFlaggedOfFour(df, vector_ok, [&](int64_t v) { redo(i + v * N); });
    }
  }
  return i;
}

// A span of x into codes: Encode(quotient(x, s), zp), uniform or per element.
template <bool kPerElement, class Enc, class XT, class TOut>
HWY_NOINLINE void QuantizeSpan(const Enc& enc_ref, const XT* HWY_RESTRICT x, int64_t n,
                               const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                               const int32_t* HWY_RESTRICT z, TOut* HWY_RESTRICT out,
                               const float* HWY_RESTRICT off = nullptr) {
  // A local copy: int8 stores may alias the referenced encoder, which would make the compiler
  // reload its bounds (and rebuild the clamp vectors) on every iteration.
  const Enc enc = enc_ref;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto us = hn::Set(df, *s);
  const auto uz = hn::Set(di, *z);
  // One vector by division.
  auto divide_lanes = [&](const XT* xp, const float* sp, const int32_t* zp, TOut* op) QLINEAR_INLINE_LAMBDA {
    const auto vs = kPerElement ? hn::LoadU(df, sp) : us;
    const auto vz = kPerElement ? hn::LoadU(di, zp) : uz;
    DivideVector(enc, df, xp, vs, vz, op);
  };
  auto at = [](auto* p, int64_t i) { return p != nullptr && kPerElement ? p + i : p; };
  auto divide_at = [&](int64_t i) QLINEAR_INLINE_LAMBDA { divide_lanes(x + i, at(s, i), at(z, i), out + i); };
  const bool divide = !Enc::kReciprocal || r == nullptr;
  int64_t i = 0;
  if constexpr (Enc::kReciprocal) {
    if (!divide) {
      auto redo = [&](int64_t j) { divide_at(j); };
      auto vectors = [&](auto prefetch) {
        constexpr bool kPrefetch = decltype(prefetch)::value;
        if (enc.RelativeMargin()) return ReciprocalVectors<kPerElement, true, false, kPrefetch>(enc, x, n, r, z, off, out, redo);
        if (kPerElement && off != nullptr) {
          return ReciprocalVectors<kPerElement, false, true, kPrefetch>(enc, x, n, r, z, off, out, redo);
        }
        return ReciprocalVectors<kPerElement, false, false, kPrefetch>(enc, x, n, r, z, off, out, redo);
      };
      if constexpr (!kPerElement && std::is_same_v<XT, float>) {
        i = n >= kPrefetchFrom ? vectors(std::true_type()) : vectors(std::false_type());
      } else {
        i = vectors(std::false_type());
      }
    }
  }
  for (; i + N <= n; i += N) divide_at(i);
  if (i < n) {  // the tail through stack buffers: no over-read, no over-write
    const size_t rem = static_cast<size_t>(n - i);
    HWY_ALIGN XT xb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float sb[hn::MaxLanes(df)];
    HWY_ALIGN int32_t zb[hn::MaxLanes(df)] = {};
    HWY_ALIGN TOut ob[hn::MaxLanes(df)];
    std::memcpy(xb, x + i, rem * sizeof(XT));
    if (kPerElement) {  // padding lanes: x = 0, s = 1 (no division by zero)
      std::fill(sb, sb + hn::MaxLanes(df), 1.0f);
      std::memcpy(sb, s + i, rem * sizeof(float));
      std::memcpy(zb, z + i, rem * sizeof(int32_t));
    }
    divide_lanes(xb, kPerElement ? sb : s, kPerElement ? zb : z, ob);
    std::memcpy(out + i, ob, rem * sizeof(TOut));
  }
}

// Splits a run (plan.h) into spans for the span kernels (Span above). Short blocks are
// expanded per element through a stack chunk.
template <class Fn>
HWY_INLINE void ForEachSpan(const Run& run, const QuantParams& prm, Fn&& fn) {
  const int64_t k0 = run.scale_first - prm.first;
  const float* s = prm.scales + k0;
  const float* r = prm.recips != nullptr ? prm.recips + k0 : nullptr;
  const int32_t* z = prm.zps + k0;
  const float* off = prm.offsets != nullptr ? prm.offsets + k0 : nullptr;
  if (run.phase + run.count <= run.period) {  // one scale (a run may start mid-block)
    fn(Span{0, run.count, s, r, z, false});
  } else if (run.period == 1) {
    fn(Span{0, run.count, s, r, z, true, off});
  } else if (run.period >= 16) {  // blocks along the run: one uniform span per block
    int64_t j = 0, len = run.period - run.phase;
    for (int64_t k = 0; j < run.count; ++k) {
      len = std::min(len, run.count - j);
      fn(Span{j, len, s + k, r != nullptr ? r + k : nullptr, z + k, false});
      j += len;
      len = run.period;
    }
  } else {
    constexpr int64_t kStage = 256;
    HWY_ALIGN float sb[kStage];
    HWY_ALIGN float rb[kStage];
    HWY_ALIGN int32_t zb[kStage];
    for (int64_t j0 = 0; j0 < run.count; j0 += kStage) {
      const int64_t len = std::min(kStage, run.count - j0);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t k = (run.phase + j0 + j) / run.period;
        sb[j] = s[k];
        if (r != nullptr) rb[j] = r[k];
        zb[j] = z[k];
      }
      fn(Span{j0, len, sb, r != nullptr ? rb : nullptr, zb, true});
    }
  }
}

// Blocks of whole vectors that start on vector boundaries (period and phase multiples of N),
// with per-block zero-point offsets (<= 8-bit integer outputs): the run as a stream of groups of
// four vectors, each with the broadcast reciprocal and offset of its block (broadcast loads,
// no ALU op), stored and flag-tested once per group as in ReciprocalVectors; flagged vectors
// are redone by division with their block's scale. Blocks of 32 were otherwise one pair of
// vectors per block, each with its own flag test, branches and narrowing.
// Returns the elements done (a multiple of 4N); the caller finishes the rest.
template <class Enc, class XT, class TOut>
HWY_INLINE int64_t AlignedBlockVectors(const Enc& enc, int64_t period, int64_t phase, int64_t count,
                                       const XT* HWY_RESTRICT x, const float* HWY_RESTRICT s,
                                       const float* HWY_RESTRICT r, const int32_t* HWY_RESTRICT z,
                                       const float* HWY_RESTRICT off, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  using M = hn::Mask<decltype(df)>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr CodeForm kForm = kFormFor<Enc, false, true, decltype(df), TOut>;
  const auto lo = enc.ReciprocalLower(df);
  const auto hi = enc.ReciprocalUpper(df);
  const M all = hn::FirstN(df, static_cast<size_t>(N));
  const int64_t per_block = period / N;     // vectors per block
  int64_t k = 0, left = per_block - phase / N;  // block of the next vector, vectors left in it
  auto next_block = [&]() QLINEAR_INLINE_LAMBDA {
    const int64_t kv = k;
    if (--left == 0) {
      ++k;
      left = per_block;
    }
    return kv;
  };
  auto codes = [&](int64_t i, int64_t kv, M* ok) QLINEAR_INLINE_LAMBDA {
    return enc.template EncodeReciprocal<false, kForm>(df, LoadAsF32(df, x + i), hn::Set(df, r[kv]), hn::Zero(di),
                                                       hn::Set(df, off[kv]), lo, hi, ok);
  };
  int64_t i = 0;
  for (; i + 4 * N <= count; i += 4 * N) {
    const int64_t k0 = next_block(), k1 = next_block(), k2 = next_block(), k3 = next_block();
    M ok = all;
    const auto c0 = codes(i, k0, &ok), c1 = codes(i + N, k1, &ok), c2 = codes(i + 2 * N, k2, &ok),
               c3 = codes(i + 3 * N, k3, &ok);
    StoreFour<kForm>(df, c0, c1, c2, c3, out + i);
    if (HWY_UNLIKELY(!hn::AllTrue(df, ok))) {
      const int64_t kk[4] = {k0, k1, k2, k3};
      auto vector_ok = [&](int64_t v) {
        M m = all;
        (void)codes(i + v * N, kk[v], &m);
        return m;
      };
      RedoFlaggedOfFour(df, vector_ok, [&](int64_t v) {
        DivideVector(enc, df, x + i + v * N, hn::Set(df, s[kk[v]]), hn::Set(di, z[kk[v]]), out + i + v * N);
      });
    }
  }
  return i;
}

// A run of blocks (period >= 16 elements per scale) in one call: blocks of whole vectors are
// quantized inline with their broadcast scale (a call per 32-element block cost more than the
// arithmetic); other blocks go through QuantizeSpan. On the reciprocal path the boundary flags
// of a block are ANDed into one mask and a flagged block is redone by division.
template <bool kRelative, class Enc, class XT, class TOut>
HWY_INLINE void BlocksOfRun(const Enc& enc, const Run& run, const XT* HWY_RESTRICT x,
                            const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                            const int32_t* HWY_RESTRICT z, const float* HWY_RESTRICT off,
                            TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr CodeForm kForm = kFormFor<Enc, kRelative, false, decltype(df), TOut>;
  const bool reciprocal = Enc::kReciprocal && r != nullptr;
  const auto lo = enc.ReciprocalLower(df);
  const auto hi = enc.ReciprocalUpper(df);
  const auto all = hn::FirstN(df, static_cast<size_t>(N));
  auto divide_block = [&](int64_t j, int64_t len, hn::Vec<decltype(df)> vs, hn::Vec<decltype(di)> vz) {
    for (int64_t i = j; i < j + len; i += N) {
      DivideVector(enc, df, x + i, vs, vz, out + i);
    }
  };
  // Locals: int8 stores may alias `run` (GCC reloaded its fields after every block).
  const int64_t period = run.period, phase = run.phase, count = run.count;
  int64_t j = 0;
  if constexpr (!kRelative && Enc::kHasFixedPoint) {
    if (reciprocal && off != nullptr && period % N == 0 && phase % N == 0) {
      j = AlignedBlockVectors(enc, period, phase, count, x, s, r, z, off, out);
    }
  }
  int64_t len = period - (phase + j) % period;
  for (int64_t k = (phase + j) / period; j < count; ++k, j += len, len = period) {
    len = std::min(len, count - j);
    if (len % N != 0) {
      QuantizeSpan<false>(enc, x + j, len, s + k, reciprocal ? r + k : nullptr, z + k, out + j);
      continue;
    }
    const auto vz = hn::Set(di, z[k]);
    if (!reciprocal) {
      divide_block(j, len, hn::Set(df, s[k]), vz);
      continue;
    }
    const auto vr = hn::Set(df, r[k]);
    const auto zoff = off != nullptr ? hn::Set(df, off[k]) : enc.ZeroOffset(df, vz);
    auto codes = [&](int64_t i, hn::Mask<decltype(df)>* ok) QLINEAR_INLINE_LAMBDA {
      return enc.template EncodeReciprocal<kRelative, kForm>(df, LoadAsF32(df, x + i), vr, vz, zoff, lo, hi, ok);
    };
    auto ok = all;
    int64_t i = j;
    for (; i + 2 * N <= j + len; i += 2 * N) {  // pairs: one narrowing store (StoreTwoCodes)
      const auto c0 = codes(i, &ok), c1 = codes(i + N, &ok);
      StoreTwoCodes(df, c0, c1, out + i);
    }
    if (i < j + len) StoreCodes(df, codes(i, &ok), out + i);  // len is a multiple of N
    if (HWY_UNLIKELY(!hn::AllTrue(df, ok))) divide_block(j, len, hn::Set(df, s[k]), vz);
  }
}

template <class Enc, class XT, class TOut>
HWY_NOINLINE void QuantizeBlocks(const Enc& enc_ref, const Run& run, const XT* HWY_RESTRICT x,
                                 const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                                 const int32_t* HWY_RESTRICT z, const float* HWY_RESTRICT off,
                                 TOut* HWY_RESTRICT out) {
  const Enc enc = enc_ref;  // see QuantizeSpan
  if (enc.RelativeMargin()) return BlocksOfRun<true>(enc, run, x, s, r, z, nullptr, out);
  BlocksOfRun<false>(enc, run, x, s, r, z, off, out);
}

// One run, xr[0, run.count) into out[0, run.count).
template <class Enc, class XT, class TOut>
HWY_INLINE void QuantizeRun(const Enc& enc, const Run& run, const XT* HWY_RESTRICT xr,
                            const QuantParams& prm, TOut* HWY_RESTRICT out) {
  if constexpr (Enc::kReciprocal) {  // (the clamp-test encoders keep to spans)
    if (run.period >= 16 && run.phase + run.count > run.period) {
      const int64_t k = run.scale_first - prm.first;
      const float* r = prm.recips != nullptr ? prm.recips + k : nullptr;
      return QuantizeBlocks(enc, run, xr, prm.scales + k, r, prm.zps + k,
                            prm.offsets != nullptr ? prm.offsets + k : nullptr, out);
    }
  }
  ForEachSpan(run, prm, [&](const Span& sp) {
    if (sp.per_element) {
      QuantizeSpan<true>(enc, xr + sp.j, sp.len, sp.s, sp.r, sp.z, out + sp.j,
                         sp.off != nullptr ? sp.off + sp.j : nullptr);
    } else {
      QuantizeSpan<false>(enc, xr + sp.j, sp.len, sp.s, sp.r, sp.z, out + sp.j);
    }
  });
}

// Four consecutive rows of len elements (row k at x + k * len) that share per-element scales,
// on the fixed-point reciprocal path (QuantParams::offsets): each scale vector is loaded once
// for the four rows; flags are tested once per eight vectors (two columns), flagged ones redone by
// division.
template <class Enc, class XT, class TOut>
HWY_NOINLINE void QuantizeFourRows(const Enc& enc_ref, int64_t len, const XT* HWY_RESTRICT x,
                                   const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                                   const int32_t* HWY_RESTRICT z, const float* HWY_RESTRICT off,
                                   TOut* HWY_RESTRICT out) {
  const Enc enc = enc_ref;  // see QuantizeSpan
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr CodeForm kForm = kFormFor<Enc, false, false, decltype(df), TOut>;
  const auto lo = enc.ReciprocalLower(df);
  const auto hi = enc.ReciprocalUpper(df);
  using M = hn::Mask<decltype(df)>;
  const M all = hn::FirstN(df, static_cast<size_t>(N));
  auto encode = [&](int64_t k, int64_t col, hn::Vec<decltype(df)> vr, hn::Vec<decltype(df)> zoff, M* ok)
                    QLINEAR_INLINE_LAMBDA {
    return enc.template EncodeReciprocal<false, kForm>(df, LoadAsF32(df, x + k * len + col), vr, hn::Zero(di), zoff,
                                                       lo, hi, ok);
  };
  // The flagged vectors of one column (flags recomputed per row), by division.
  auto redo_column = [&](int64_t col) {
    const auto vr = hn::LoadU(df, r + col);
    const auto zoff = hn::LoadU(df, off + col);
    const auto vs = hn::LoadU(df, s + col);
    const auto vz = hn::LoadU(di, z + col);
    auto row_ok = [&](int64_t k) {
      M m = all;
      (void)encode(k, col, vr, zoff, &m);
      return m;
    };
    RedoFlaggedOfFour(df, row_ok, [&](int64_t k) { DivideVector(enc, df, x + k * len + col, vs, vz, out + k * len + col); });
  };
  int64_t i = 0;
  for (; i + 2 * N <= len; i += 2 * N) {  // two columns: one narrowing store per row (StoreTwoCodes)
    const auto vr0 = hn::LoadU(df, r + i), vr1 = hn::LoadU(df, r + i + N);
    const auto zo0 = hn::LoadU(df, off + i), zo1 = hn::LoadU(df, off + i + N);
    M ok = all;
    auto row = [&](int64_t k) QLINEAR_INLINE_LAMBDA {
      const auto c0 = encode(k, i, vr0, zo0, &ok);
      const auto c1 = encode(k, i + N, vr1, zo1, &ok);
      StoreTwoCodes(df, c0, c1, out + k * len + i);
    };
    row(0);
    row(1);
    row(2);
    row(3);
    if (HWY_UNLIKELY(!hn::AllTrue(df, ok))) {
      redo_column(i);
      redo_column(i + N);
    }
  }
  for (; i + N <= len; i += N) {
    const auto vr = hn::LoadU(df, r + i);
    const auto zoff = hn::LoadU(df, off + i);
    M ok = all;
    for (int64_t k = 0; k < 4; ++k) StoreCodes(df, encode(k, i, vr, zoff, &ok), out + k * len + i);
    if (HWY_UNLIKELY(!hn::AllTrue(df, ok))) redo_column(i);
  }
  if (i == len) return;
  for (int64_t k = 0; k < 4; ++k) {
    QuantizeSpan<true>(enc, x + k * len + i, len - i, s + i, r + i, z + i, out + k * len + i, off + i);
  }
}

// The >= 8-bit driver body when per-element offsets exist (per-axis on the last axis, blocks along
// an outer axis, <= 8-bit integers, reciprocal path): whole rows with the same scales go four at
// a time through QuantizeFourRows, every other run as usual.
template <class Enc, class XT, class TOut>
void QuantizeRowGroups(const Enc& enc, const QuantizePlan& p, const QuantParams& prm,
                       const XT* HWY_RESTRICT x, TOut* HWY_RESTRICT out) {
  const int64_t b = p.begin;
  Run group{};
  int64_t rows = 0;
  auto flush = [&] {
    if (rows == 4) {
      const int64_t k = group.scale_first - prm.first;
      QuantizeFourRows(enc, group.count, x + (group.start - b), prm.scales + k, prm.recips + k, prm.zps + k,
                       prm.offsets + k, out + (group.start - b));
    } else {
      for (int64_t row = 0; row < rows; ++row) {
        Run one = group;
        one.start += row * group.count;
        QuantizeRun(enc, one, x + (one.start - b), prm, out + (one.start - b));
      }
    }
    rows = 0;
  };
  ForEachRun(p.layout, b, p.end, [&](const Run& r) {
    if (r.period != 1) {
      flush();
      return QuantizeRun(enc, r, x + (r.start - b), prm, out + (r.start - b));
    }
    if (rows > 0 && (r.scale_first != group.scale_first || r.count != group.count ||
                     r.start != group.start + rows * group.count)) {
      flush();
    }
    if (rows == 0) group = r;
    if (++rows == 4) flush();
  });
  flush();
}

// ---- sub-byte packing: one code per byte in, element 0 in the low bits out -------------------

// n codes (n a multiple of 8 / kBits, codes masked or not) -> n * kBits / 8 bytes.
template <int kBits>
HWY_NOINLINE void PackCodes(const uint8_t* HWY_RESTRICT codes, int64_t n, uint8_t* HWY_RESTRICT out) {
  int64_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kBits == 4) {
    const hn::ScalableTag<uint16_t> d16;
    const hn::Repartition<uint8_t, decltype(d16)> d8;
    const hn::Rebind<uint8_t, decltype(d16)> d8h;
    const int64_t N8 = static_cast<int64_t>(hn::Lanes(d8));
    for (; i + N8 <= n; i += N8) {
      const auto w = hn::BitCast(d16, hn::LoadU(d8, codes + i));
      const auto lo = hn::And(w, hn::Set(d16, uint16_t{0x000F}));
      const auto hi = hn::ShiftRight<4>(hn::And(w, hn::Set(d16, uint16_t{0x0F00})));
      // DemoteTo (values <= 0xFF): TruncateTo miscompiles on Highway 1.0.3's AVX3_DL.
      hn::StoreU(hn::DemoteTo(d8h, hn::BitCast(hn::RebindToSigned<decltype(d16)>(), hn::Or(lo, hi))),
                 d8h, out + i / 2);
    }
  } else {
    const hn::ScalableTag<uint32_t> d32;
    const hn::Repartition<uint8_t, decltype(d32)> d8;
    const hn::Rebind<uint8_t, decltype(d32)> d8q;
    const int64_t N8 = static_cast<int64_t>(hn::Lanes(d8));
    for (; i + N8 <= n; i += N8) {
      // Codes c0..c3 at bits 0, 8, 16, 24: fold pairs (c1 to bits 2..3, c3 to 18..19), then
      // halves (bits 16..19 to 4..7); other bits that move stay above bit 7 and are masked.
      auto v = hn::And(hn::BitCast(d32, hn::LoadU(d8, codes + i)), hn::Set(d32, 0x03030303u));
      v = hn::Or(v, hn::ShiftRight<6>(v));
      v = hn::And(hn::Or(v, hn::ShiftRight<12>(v)), hn::Set(d32, 0xFFu));
      hn::StoreU(hn::DemoteTo(d8q, hn::BitCast(hn::RebindToSigned<decltype(d32)>(), v)), d8q,
                 out + i / 4);
    }
  }
#endif
  constexpr int kPer = 8 / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1;
  for (; i < n; i += kPer) {
    unsigned b = 0;
    for (int k = 0; k < kPer; ++k) b |= (codes[i + k] & kMask) << (k * kBits);
    out[i / kPer] = static_cast<uint8_t>(b);
  }
}

// ---- the QuantizeLinear driver body -----------------------------------------------------------

template <class XT, class TOut, class Enc>
void QuantizeAll(const Enc& enc, const QuantizePlan& p, const QuantParams& prm, void* y) {
  // Elements [p.begin, p.end); x and y point at element p.begin.
  const XT* x = static_cast<const XT*>(p.x);
  const int bits = Info(p.y_type).bits;
  const int64_t b = p.begin;
  if (bits >= 8) {
    TOut* out = static_cast<TOut*>(y);
    if constexpr (std::is_same_v<Enc, IntEncoder>) {
      if (prm.offsets != nullptr) return QuantizeRowGroups(enc, p, prm, x, out);
    }
    ForEachRun(p.layout, b, p.end, [&](const Run& r) {
      QuantizeRun(enc, r, x + (r.start - b), prm, out + (r.start - b));
    });
    return;
  }
  // Sub-byte: chunks on byte boundaries (p.begin is one); codes staged one per byte, padding
  // codes zero.
  HWY_ALIGN TOut codes[kChunk];
  uint8_t* out = static_cast<uint8_t*>(y);
  const int per = 8 / bits;
  const bool prefetch = p.end - b >= kPrefetchFrom;
  for (int64_t c0 = b; c0 < p.end; c0 += kChunk) {
    const int64_t c1 = std::min(p.end, c0 + kChunk);
    if (prefetch) {  // the next chunk's x (kPrefetchFrom; a chunk of float32 is 4 KB)
      const char* next = reinterpret_cast<const char*>(x + (c1 - b));
      const int64_t bytes = (std::min(p.end, c1 + kChunk) - c1) * static_cast<int64_t>(sizeof(XT));
      for (int64_t o = 0; o < bytes; o += 64) hwy::Prefetch(next + o);
    }
    ForEachRun(p.layout, c0, c1, [&](const Run& r) {
      QuantizeRun(enc, r, x + (r.start - b), prm, codes + (r.start - c0));
    });
    const int64_t padded = (c1 - c0 + per - 1) / per * per;
    std::fill(codes + (c1 - c0), codes + padded, TOut{0});
    if (bits == 4) {
      PackCodes<4>(reinterpret_cast<const uint8_t*>(codes), padded, out + (c0 - b) / per);
    } else {
      PackCodes<2>(reinterpret_cast<const uint8_t*>(codes), padded, out + (c0 - b) / per);
    }
  }
}

template <class XT>
void QuantizeForX(const QuantizePlan& p, const QuantParams& prm, void* y) {
  const DTypeInfo& info = Info(p.y_type);
  const IntEncoder ints{info.qmin, info.qmax, p.prec};
  switch (p.y_type) {
    case DType::kInt8: case DType::kInt4: case DType::kInt2:
      return QuantizeAll<XT, int8_t>(ints, p, prm, y);
    case DType::kUint8: case DType::kUint4: case DType::kUint2:
      return QuantizeAll<XT, uint8_t>(ints, p, prm, y);
    case DType::kInt16: return QuantizeAll<XT, int16_t>(ints, p, prm, y);
    case DType::kUint16: return QuantizeAll<XT, uint16_t>(ints, p, prm, y);
    case DType::kFloat8E4M3FN:
      return QuantizeAll<XT, uint8_t>(MiniFloatEncoder<DType::kFloat8E4M3FN>{p.saturate, p.prec}, p, prm, y);
    case DType::kFloat8E4M3FNUZ:
      return QuantizeAll<XT, uint8_t>(MiniFloatEncoder<DType::kFloat8E4M3FNUZ>{p.saturate, p.prec}, p, prm, y);
    case DType::kFloat8E5M2:
      return QuantizeAll<XT, uint8_t>(MiniFloatEncoder<DType::kFloat8E5M2>{p.saturate, p.prec}, p, prm, y);
    case DType::kFloat8E5M2FNUZ:
      return QuantizeAll<XT, uint8_t>(MiniFloatEncoder<DType::kFloat8E5M2FNUZ>{p.saturate, p.prec}, p, prm, y);
    case DType::kFloat4E2M1:
      return QuantizeAll<XT, uint8_t>(MiniFloatEncoder<DType::kFloat4E2M1>{true, p.prec}, p, prm, y);
    default: return;
  }
}

// Vector QuantizeLinear for plans that VectorQuantizeSupported accepts.
inline void QuantizeVector(const QuantizePlan& p, const QuantParams& prm, void* y) {
  switch (p.x_type) {
    case DType::kFloat32: return QuantizeForX<float>(p, prm, y);
    case DType::kFloat16: return QuantizeForX<hwy::float16_t>(p, prm, y);
    case DType::kBFloat16: return QuantizeForX<hwy::bfloat16_t>(p, prm, y);
    case DType::kInt32: return QuantizeForX<int32_t>(p, prm, y);
    default: return;
  }
}

// ---- DequantizeLinear ---------------------------------------------------------------------------

template <class DF>
HWY_INLINE void StoreOutput(DF df, hn::Vec<DF> v, DType y_type, void* HWY_RESTRICT out) {
  if (y_type == DType::kFloat32) {
    hn::StoreU(v, df, static_cast<float*>(out));
    return;
  }
  const hn::Rebind<uint16_t, DF> d16;
  const auto bits = y_type == DType::kFloat16 ? F16Bits(df, v) : BF16Bits(df, v);
  hn::StoreU(hn::DemoteTo(d16, bits), d16, static_cast<uint16_t*>(out));
}

// DequantizeLinear decoders: x lanes (promoted to int32) and zero point -> float32 value.
// Integers: float32(x - zp), exact for <= 16-bit types (int32 inputs have zp == 0, validated).
struct IntDecoder {
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Decode(DF df, hn::Vec<DI> x, hn::Vec<DI> zp) const {
    return hn::ConvertTo(df, hn::Sub(x, zp));
  }
};

// float8/float4 codes -> exact float32: the magnitude's fields placed in a float32 and scaled by
// 2^(127 - bias) (exact for normals and subnormals), then the format's NaN/Inf codes. The zero
// point is zero (validated) and not used.
template <DType kT>
struct MiniFloatDecoder {
  using Tr = MiniTraits<kT>;
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Decode(DF df, hn::Vec<DI> code, hn::Vec<DI> /*zp*/) const {
    const DI di;
    const auto mag = hn::And(code, hn::Set(di, Tr::kSignBit - 1));
    const auto scale = hn::BitCast(df, hn::Set(di, (127 + 127 - Tr::kBias) << 23));
    auto v = hn::Mul(hn::BitCast(df, hn::ShiftLeft<23 - Tr::kMant>(mag)), scale);
    if (kT == DType::kFloat8E4M3FN) {
      v = hn::IfThenElse(hn::RebindMask(df, hn::Eq(mag, hn::Set(di, 0x7F))), hn::Set(df, NAN), v);
    } else if (Tr::kE5M2) {
      v = hn::IfThenElse(hn::RebindMask(df, hn::Gt(mag, hn::Set(di, 0x7B))),
                         hn::IfThenElse(hn::RebindMask(df, hn::Eq(mag, hn::Set(di, 0x7C))),
                                        hn::Set(df, INFINITY), hn::Set(df, NAN)),
                         v);
    } else if (Tr::kFnuz) {
      v = hn::IfThenElse(hn::RebindMask(df, hn::Eq(code, hn::Set(di, 0x80))), hn::Set(df, NAN), v);
    }
    const auto neg = hn::RebindMask(df, hn::Ne(hn::And(code, hn::Set(di, Tr::kSignBit)), hn::Zero(di)));
    const auto keep_sign = Tr::kFnuz ? hn::AndNot(hn::IsNaN(v), neg) : neg;
    return hn::IfThenElse(keep_sign, hn::Neg(v), v);
  }
};

// x[j] (codes of type XT) -> decode(x, zp) * s, n elements; per-element or uniform scale/zp.
template <bool kPerElement, class Dec, class XT>
HWY_NOINLINE void DequantizeSpan(const Dec& dec, const XT* HWY_RESTRICT x, int64_t n,
                                 const float* HWY_RESTRICT s, const int32_t* HWY_RESTRICT zp,
                                 DType y_type, void* HWY_RESTRICT y) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<XT, decltype(df)> dx;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const size_t ysize = y_type == DType::kFloat32 ? 4 : 2;
  char* out = static_cast<char*>(y);
  auto values = [&](const XT* xp, const float* sp, const int32_t* zpp) QLINEAR_INLINE_LAMBDA {
    hn::Vec<decltype(di)> xi;
    if constexpr (sizeof(XT) == 4) {
      xi = hn::LoadU(di, reinterpret_cast<const int32_t*>(xp));
    } else {
      xi = hn::PromoteTo(di, hn::LoadU(dx, xp));
    }
    const auto vz = kPerElement ? hn::LoadU(di, zpp) : hn::Set(di, *zpp);
    const auto vs = kPerElement ? hn::LoadU(df, sp) : hn::Set(df, *sp);
    return hn::Mul(dec.Decode(df, xi, vz), vs);
  };
  auto lanes = [&](const XT* xp, const float* sp, const int32_t* zpp, void* op) {
    StoreOutput(df, values(xp, sp, zpp), y_type, op);
  };
  int64_t i = 0;
  if (y_type == DType::kFloat32) {  // the common output: its own loop, four vectors a turn (the
    float* of = static_cast<float*>(y);  // type test and loop overhead per vector cost 20%)
    auto one = [&](int64_t k) QLINEAR_INLINE_LAMBDA {
      hn::StoreU(values(x + k, kPerElement ? s + k : s, kPerElement ? zp + k : zp), df, of + k);
    };
    for (; i + 4 * N <= n; i += 4 * N) {
      one(i);
      one(i + N);
      one(i + 2 * N);
      one(i + 3 * N);
    }
  }
  for (; i + N <= n; i += N) {
    lanes(x + i, kPerElement ? s + i : s, kPerElement ? zp + i : zp, out + i * ysize);
  }
  if (i < n) {
    const size_t rem = static_cast<size_t>(n - i);
    HWY_ALIGN XT xb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float sb[hn::MaxLanes(df)] = {};
    HWY_ALIGN int32_t zb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float ob[hn::MaxLanes(df)];
    std::memcpy(xb, x + i, rem * sizeof(XT));
    if (kPerElement) {
      std::memcpy(sb, s + i, rem * sizeof(float));
      std::memcpy(zb, zp + i, rem * sizeof(int32_t));
    }
    lanes(xb, kPerElement ? sb : s, kPerElement ? zb : zp, ob);
    std::memcpy(out + i * ysize, ob, rem * ysize);
  }
}

template <class Dec, class XT>
HWY_INLINE void DequantizeRun(const Dec& dec, const Run& r, const XT* HWY_RESTRICT x,
                              const QuantParams& prm, DType y_type, char* HWY_RESTRICT y,
                              size_t ysize) {
  ForEachSpan(r, prm, [&](const Span& sp) {
    if (sp.per_element) {
      DequantizeSpan<true>(dec, x + sp.j, sp.len, sp.s, sp.z, y_type, y + sp.j * ysize);
    } else {
      DequantizeSpan<false>(dec, x + sp.j, sp.len, sp.s, sp.z, y_type, y + sp.j * ysize);
    }
  });
}

template <class XT, class Dec>
void DequantizeAll(const Dec& dec, const DequantizePlan& p, const QuantParams& prm, void* y) {
  // Elements [p.begin, p.end); x and y point at element p.begin (a byte boundary if sub-byte).
  const size_t ysize = p.y_type == DType::kFloat32 ? 4 : 2;
  char* out = static_cast<char*>(y);
  const int64_t b = p.begin;
  const DTypeInfo& info = Info(p.x_type);
  if (info.bits >= 8) {
    const XT* x = static_cast<const XT*>(p.x);
    ForEachRun(p.layout, b, p.end, [&](const Run& r) {
      DequantizeRun(dec, r, x + (r.start - b), prm, p.y_type, out + (r.start - b) * ysize, ysize);
    });
    return;
  }
  // Sub-byte inputs: unpack a chunk to one code per byte (integers sign-extended), then runs.
  HWY_ALIGN XT codes[kChunk];
  const uint8_t* in = static_cast<const uint8_t*>(p.x);
  const int bits = info.bits, per = 8 / bits;
  const int shift = 8 - bits;  // sign extension: the field shifted to the top and back
  const bool sign_extend = info.kind == Kind::kInt && info.is_signed;
  for (int64_t c0 = b; c0 < p.end; c0 += kChunk) {
    const int64_t c1 = std::min(p.end, c0 + kChunk);
    for (int64_t i = c0; i < c1; ++i) {
      const int64_t rel = i - b;
      const unsigned field = (in[rel / per] >> (bits * (rel % per))) & ((1u << bits) - 1);
      codes[i - c0] = sign_extend ? static_cast<XT>(static_cast<int8_t>(static_cast<uint8_t>(field << shift)) >> shift)
                                  : static_cast<XT>(field);
    }
    ForEachRun(p.layout, c0, c1, [&](const Run& r) {
      DequantizeRun(dec, r, codes + (r.start - c0), prm, p.y_type, out + (r.start - b) * ysize, ysize);
    });
  }
}

inline void DequantizeVector(const DequantizePlan& p, const QuantParams& prm, void* y) {
  const IntDecoder ints;
  switch (p.x_type) {
    case DType::kInt8: case DType::kInt4: case DType::kInt2:
      return DequantizeAll<int8_t>(ints, p, prm, y);
    case DType::kUint8: case DType::kUint4: case DType::kUint2:
      return DequantizeAll<uint8_t>(ints, p, prm, y);
    case DType::kInt16: return DequantizeAll<int16_t>(ints, p, prm, y);
    case DType::kUint16: return DequantizeAll<uint16_t>(ints, p, prm, y);
    case DType::kInt32: return DequantizeAll<int32_t>(ints, p, prm, y);
    case DType::kFloat8E4M3FN: return DequantizeAll<uint8_t>(MiniFloatDecoder<DType::kFloat8E4M3FN>(), p, prm, y);
    case DType::kFloat8E4M3FNUZ: return DequantizeAll<uint8_t>(MiniFloatDecoder<DType::kFloat8E4M3FNUZ>(), p, prm, y);
    case DType::kFloat8E5M2: return DequantizeAll<uint8_t>(MiniFloatDecoder<DType::kFloat8E5M2>(), p, prm, y);
    case DType::kFloat8E5M2FNUZ: return DequantizeAll<uint8_t>(MiniFloatDecoder<DType::kFloat8E5M2FNUZ>(), p, prm, y);
    case DType::kFloat4E2M1: return DequantizeAll<uint8_t>(MiniFloatDecoder<DType::kFloat4E2M1>(), p, prm, y);
    default: return;
  }
}

// ---- DynamicQuantizeLinear ------------------------------------------------------------------------

// min(0, min x) and max(0, max x), NaN lanes ignored (replaced by 0, which the range contains).
inline void RangeOf(const float* HWY_RESTRICT x, int64_t n, float* lo, float* hi) {
  const hn::ScalableTag<float> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto vmin = hn::Zero(df), vmax = hn::Zero(df);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(df, x + i);
    const auto clean = hn::IfThenZeroElse(hn::IsNaN(v), v);
    vmin = hn::Min(vmin, clean);
    vmax = hn::Max(vmax, clean);
  }
  float l = hn::GetLane(hn::MinOfLanes(df, vmin)), h = hn::GetLane(hn::MaxOfLanes(df, vmax));
  for (; i < n; ++i) {
    float v;
    std::memcpy(&v, x + i, sizeof(v));  // x need not be aligned
    if (v < l) l = v;
    if (v > h) h = v;
  }
  *lo = l;
  *hi = h;
}

inline void DynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp,
                            bool reciprocal) {
  float lo, hi;
  RangeOf(x, n, &lo, &hi);
  DynamicParamsFromRange(lo, hi, scale, zp);
  const int32_t z = *zp;
  const float r = 1.0f / *scale;
  QuantizeSpan<false>(IntEncoder{0, 255, Prec::kF32}, x, n, scale,
                      reciprocal && std::isnormal(r) ? &r : nullptr, &z, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_QUANTIZE_INL_H_
