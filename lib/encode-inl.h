// QuantizeLinear encoders: quotient lanes -> output codes (int32 lanes), on both exact paths.
// Owns: the rounding, clamping and NaN rules of each output type and the argument that the
// reciprocal path gives division's codes. Must not know: layouts, runs, where codes are stored.
//
// The two exact paths (docs/exactness.md):
// - division: q = x / s in the division precision, then Encode(q).
// - reciprocal (float32 precision, every 1/s a normal float32): the codes of x * (1/s), except
//   in lanes near one of the encoder's decision boundaries, which the encoder flags and the
//   caller recomputes by division. |x (1/s) - fl(x / s)| <= 1.5 * 2^-23 |x / s| (1/s rounded,
//   then the product; with an FMA only 2^-23 |x / s|), and each encoder's flagged window is
//   wider than that, so outside flagged lanes both paths give the same code.
//   tests/reciprocal_test.cc compares the two on every float32 input.
//
// The encoder interface (IntEncoder, MiniFloatEncoder<T>, backward-inl.h's IntClampTest; its
// MiniClampTest has the first two members and kReciprocal = false):
//   prec                          the division precision
//   Encode(df, q, zp)             division path: codes of the quotients q (already rounded to
//                                 prec); zp: zero-point lanes (integers; float4: float32 bits)
//   margin()                      the reciprocal path's boundary test (Margin); kHasRelativeMargin:
//                                 whether it can be Margin::kRelative
//   ReciprocalLower/Upper(df)     its loop invariants: the callers hoist them (GCC reloads
//                                 members after byte stores, which may alias)
//   ZeroOffset(df, zp)            the zero point as the reciprocal path adds it (zoff)
//   Reciprocal<kForm, kMargin>(df, x, r, zp, zoff, lo, hi, &ok)
//                                 reciprocal path: codes of x * r in the form kForm (CodeForm),
//                                 clearing in ok the lanes to redo by division
//   kReciprocal                   whether the members below exist
//   kHasFixedPointForm            whether Reciprocal can return CodeForm::kFixedPoint
//   kNaNSign (optional)           whether codes show a NaN quotient's sign (ShowsNaNSign)
#if defined(QLINEAR_LIB_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_ENCODE_INL_H_
#undef QLINEAR_LIB_ENCODE_INL_H_
#else
#define QLINEAR_LIB_ENCODE_INL_H_
#endif

#include "hwy/highway.h"
#include "lib/convert-inl.h"
#include "lib/formats.h"
#include "lib/plan.h"
#include "lib/x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// What Reciprocal returns per lane: the code; a value whose low byte is the code (for a
// truncating store, kTruncatingStore); or the clamped fixed-point t itself, whose bits 14..21 are
// the code (StoreFourFixedPoint narrows and shifts in one go).
enum class CodeForm { kExact, kLowByte, kFixedPoint };

// The reciprocal path's boundary test: a fixed window in the code's fixed point (<= 8-bit
// integers, float8, float4), or one relative to |c| (wider integers).
enum class Margin { kFixed, kRelative };

// Integer outputs. Division path, per lane:
//   c = clamp(q, qmin - zp, qmax - zp) in float (clamp and RNE commute for integer bounds, and
//       no int32 overflow); NaN -> qmin - zp
//   y = RNE(c) + zp
// (Encoders hold no vectors: SVE vectors are sizeless and cannot be members.)
struct IntEncoder {
  static constexpr bool kReciprocal = true;
  static constexpr bool kHasFixedPointForm = true;
  static constexpr bool kHasRelativeMargin = true;
  int32_t qmin, qmax;
  Prec prec;

  Margin margin() const { return qmax - qmin > 255 ? Margin::kRelative : Margin::kFixed; }

  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Encode(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    return Round(df, Clamp(df, q, zp), zp);
  }

  // The bounds of c: qmin - zp and qmax - zp (also the backward pass's clamp test).
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Lo(DF df, hn::Vec<DI> zp) const {
    return hn::ConvertTo(df, hn::Sub(hn::Set(DI(), qmin), zp));
  }
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Hi(DF df, hn::Vec<DI> zp) const {
    return hn::ConvertTo(df, hn::Sub(hn::Set(DI(), qmax), zp));
  }

  // The reciprocal path, fixed margin (qmin >= -128, qmax <= 255): one fused
  // t = x * r + (zp + FixedPoint::kOffset), clamped to [FixedPoint::Lower(qmin),
  // FixedPoint::Upper(qmax)] (bounds that do not depend on zp). t lies in [512, 1024), where the
  // float32 ulp is 2^-14: bits(t) - bits(768) = (c' + zp + 0.5 + w) * 2^14 for c' within 2^-15
  // (rounding of t) + 2^-23 |c| (1/s rounded) of the quotient fl(x / s), |c| <= 255: at most
  // 2.5 * 2^-15 in all. The code is floor(t) - 768, a shift, except where that error could cross
  // a half-integer: lanes whose t has a fraction below 2^-11 = 16 * 2^-15 > w + error, i.e.
  // FixedPoint::kFlagBits all zero, are flagged (exact ties land there too: their fraction is
  // w + error). Clamping t instead of c is exact: lanes below the lower bound have
  // c + zp < qmin - 0.25 and saturate to qmin either way; the bounds' fractions 0.25 / 0.75 are
  // never flagged. NaN lanes take the lower bound (MaxNaNToLower), as Clamp does.
  // Relative margin (wider ranges): c = clamp(x * r) as in Encode, flagged when c lies within
  // |c| * 2^-20 of a half-integer (NearBoundary).
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalLower(DF df) const { return hn::Set(df, FixedPoint::Lower(qmin)); }
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalUpper(DF df) const { return hn::Set(df, FixedPoint::Upper(qmax)); }
  // zp + FixedPoint::kOffset (DecodedParams precomputes the same float sum per element).
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> ZeroOffset(DF df, hn::Vec<DI> zp) const {
    return hn::Add(hn::ConvertTo(df, zp), hn::Set(df, FixedPoint::kOffset));
  }
  // kLowByte skips the subtraction of FixedPoint::kBaseCode (its low byte is zero); kFixedPoint
  // also the shift. kClamp false (fixed margin): t is not clamped, for callers that know x is
  // finite and x * r + zp lies within 2^-15 of [qmin - 0.5, qmax + 0.5] (SideStats::in_range):
  // with t's rounding (2^-15; SSE4 has no FMA, its product's rounding adds 2^-17) t >= 768 +
  // qmin, and t >= 769 + qmax only with a fraction below 2^-11 (flagged; from 1024, uint8's
  // 769 + qmax, t is 1024 + k 2^-13 with k <= 2, also flagged), so every unflagged lane floors
  // to the clamped code.
  template <CodeForm kForm, Margin kMargin, bool kClamp = true, class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Reciprocal(DF df, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DI> zp, hn::Vec<DF> zoff,
                                    hn::Vec<DF> lo, hn::Vec<DF> hi, hn::Mask<DF>* ok) const {
    if constexpr (kMargin == Margin::kRelative) {
      static_assert(kForm != CodeForm::kFixedPoint, "the relative test has no t");
      const hn::Vec<DF> c = Clamp(df, hn::Mul(x, r), zp);
      *ok = hn::AndNot(NearBoundary(df, c), *ok);
      return Round(df, c, zp);
    } else {
      const auto t = kClamp ? ClampPositiveBits(df, hn::MulAdd(x, r, zoff), lo, hi)
                            : hn::BitCast(DI(), hn::MulAdd(x, r, zoff));
      *ok = KeepIfAnyBitSet(df, *ok, t, FixedPoint::kFlagBits);
      if constexpr (kForm == CodeForm::kFixedPoint) return t;
      const auto codes = hn::ShiftRight<FixedPoint::kFractionBits>(t);
      return kForm == CodeForm::kLowByte ? codes : hn::Sub(codes, hn::Set(DI(), FixedPoint::kBaseCode));
    }
  }

 private:
  // c = clamp(q, lo, hi), NaN -> lo.
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Clamp(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    return hn::Min(MaxNaNToLower(df, q, Lo(df, zp)), Hi(df, zp));
  }
  // RNE(c) + zp (Rounder: |c| < 2^17 here).
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Round(DF df, hn::Vec<DF> c, hn::Vec<DI> zp) const {
    const DI di;
    return hn::Sub(hn::BitCast(di, hn::Add(c, hn::Set(df, Rounder::kValue))), hn::Sub(hn::Set(di, Rounder::kBits), zp));
  }
  // Lanes whose clamped c lies within |c| * 2^-20 of a half-integer: the only places where
  // rounding c can differ from rounding a quotient 1.5 * 2^-23 |c| away.
  template <class DF>
  HWY_INLINE hn::Mask<DF> NearBoundary(DF df, hn::Vec<DF> c) const {
    const auto rounded = hn::Sub(hn::Add(c, hn::Set(df, Rounder::kValue)), hn::Set(df, Rounder::kValue));
    const auto from_int = hn::Abs(hn::Sub(c, rounded));  // exact
    return hn::Ge(hn::MulAdd(hn::Abs(c), hn::Set(df, 0x1p-20f), from_int), hn::Set(df, 0.5f));
  }
};

// The facts of a float8/float4 type as compile-time constants (formats.h).
template <DType kT>
struct MiniTraits {
  static constexpr MiniFormat kF = MiniFormatOf(kT);
  static constexpr bool kFp4 = kT == DType::kFloat4E2M1;
  static constexpr bool kFnuz = kF.fnuz;
  static constexpr int kMant = kF.mant_bits;
  static constexpr int kBias = kF.bias;
  static constexpr int32_t kMaxCode = kF.max_code;
  static constexpr int32_t kSignBit = kF.sign_bit;
  static constexpr float kMaxValue = kF.max_value;
  // float32 bits of the smallest normal 2^(1 - bias).
  static constexpr int32_t kMinNormalBits = (127 + 1 - kBias) << 23;
};

// float8/float4 outputs: RNE on the float32 bits of the exact quotient (no detour through
// float16). saturate: |q| clamped to max first; otherwise codes beyond max become the format's
// overflow code (NaN, or Inf for e5m2). float4e2m1 adds its zero point as a float in the division
// precision, always saturates, and writes 0x8/0x0 for +NaN/-NaN.
template <DType kT>
struct MiniFloatEncoder {
  using Tr = MiniTraits<kT>;
  static constexpr bool kReciprocal = true;
  static constexpr bool kHasFixedPointForm = false;  // codes in every CodeForm
  static constexpr bool kHasRelativeMargin = false;
  static constexpr bool kNaNSign = !Tr::kFnuz;  // NaN codes carry the sign (qlinear.h's NaN rule)
  bool saturate;
  Prec prec;
  Margin margin() const { return Margin::kFixed; }

  // Division path: RNE of q in one float32 addition. For |q| in [2^e, 2^(e+1)), e clamped below
  // at the smallest normal's exponent, m = 2^(e + 23 - kMant) has the format's quantum
  // 2^(e - kMant) as its float32 ulp and |q| < m, so the FPU rounds |q| + m to the quantum, ties
  // to even, and bits(|q| + m) - bits(m) counts quanta. The code is that count plus
  // (e + bias - 1) << kMant (0 for subnormals); a carry into the next binade is a code carry,
  // and the count's parity is the code's. |q| is capped first: at max when saturating (float4
  // always), else at twice max, beyond the overflow tie, so that m stays finite; codes beyond
  // max then become the overflow code (max + 1 in each format: NaN, or Inf for e5m2).
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Encode(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    const DI di;
    // float4: the sign and NaN-ness come from q + zp.
    if (Tr::kFp4) q = RoundToPrec(df, hn::Add(q, hn::BitCast(df, zp)), prec);
    // Min's NaN behaviour differs per target: NaN lanes are replaced below.
    const auto av = hn::Min(hn::Abs(q), ReciprocalUpper(df));
    const auto eb = hn::Max(hn::And(hn::BitCast(di, av), hn::Set(di, 0x7F800000)),
                            hn::Set(di, Tr::kMinNormalBits));
    constexpr int kShift = 23 - Tr::kMant;
    const auto sum = hn::BitCast(di, hn::Add(av, hn::BitCast(df, hn::Add(eb, hn::Set(di, kShift << 23)))));
    // bits(m) = eb + (kShift << 23); (e + bias - 1) << kMant = (eb - kMinNormalBits) >> kShift.
    constexpr int32_t kBase = (kShift << 23) + (Tr::kMinNormalBits >> kShift);
    auto code = hn::Sub(hn::Add(sum, hn::ShiftRight<kShift>(eb)), hn::Add(eb, hn::Set(di, kBase)));
    static_assert(Tr::kFp4 || Tr::kMaxCode + 1 == Tr::kF.overflow_code, "overflow code follows max");
    if (!Tr::kFp4 && !saturate) code = hn::Min(code, hn::Set(di, Tr::kMaxCode + 1));
    // NaN codes before the sign: the sign then makes e4m3fn 0xFF, e5m2 0xFE, float4 0x0 of a
    // negative NaN; fnuz's single NaN 0x80 carries no sign.
    code = hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(q)), hn::Set(di, Tr::kF.nan_code), code);
    auto sign = hn::And(hn::ShiftRight<Tr::kFp4 ? 28 : 24>(hn::BitCast(di, q)), hn::Set(di, Tr::kSignBit));
    if (Tr::kFnuz) {  // no -0, and the single NaN 0x80 carries no sign
      sign = hn::IfThenZeroElse(hn::Eq(hn::And(code, hn::Set(di, 0x7F)), hn::Zero(di)), sign);
    }
    return hn::Xor(code, sign);
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
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalLower(DF df) const { return hn::Zero(df); }  // unused
  // The cap on |q| (see above).
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalUpper(DF df) const {
    return hn::Set(df, Tr::kFp4 || saturate ? Tr::kMaxValue : Tr::kMaxValue * 2.0f);
  }
  // float4: the zero point as a float (its lanes hold float32 bits); float8: no zero point.
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> ZeroOffset(DF df, hn::Vec<DI> zp) const {
    return Tr::kFp4 ? hn::BitCast(df, zp) : hn::Zero(df);
  }
  template <CodeForm kForm, Margin kMargin, class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Reciprocal(DF df, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DI> /*zp*/, hn::Vec<DF> zoff,
                                    hn::Vec<DF> /*lo*/, hn::Vec<DF> cap, hn::Mask<DF>* ok) const {
#if QLINEAR_AVX512
    if constexpr (Tr::kFp4 && hn::MaxLanes(df) == 16) return Float4Reciprocal(df, x, r, zoff, ok);
#elif HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
    if constexpr (Tr::kFp4) return Float4ReciprocalByBytes(df, x, r, zoff, ok);
#endif
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
    // Beyond max: max + 1 is the overflow code in each format (e4m3fn 0x7F, e5m2 0x7C, fnuz 0x80).
    static_assert(Tr::kFp4 || Tr::kMaxCode + 1 == Tr::kF.overflow_code, "overflow code follows max");
    if (!saturate) code = hn::Min(code, hn::Set(di, Tr::kMaxCode + 1));
    auto sign = hn::ShiftRight<24>(hn::BitCast(di, q));
    if (Tr::kFnuz) sign = hn::IfThenZeroElse(hn::Eq(code, hn::Zero(di)), sign);  // no -0
    return hn::OrAnd(code, sign, hn::Set(di, Tr::kSignBit));  // fnuz's 0x80 (NaN) is unsigned already
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_ENCODE_INL_H_
