// Per-target DequantizeLinear: code sources (memory -> int32 code lanes, sub-byte fields unpacked
// in registers), decoders (codes -> exact float32) and the loops over a plan's runs.
// y = float32(x - zero_point) * float32(scale), one multiply, one rounding to float16/bfloat16.
// Owns: decoding codes and storing the outputs. Must not know: validation, QuantizeLinear.
//
// Each run (plan.h RunKind) goes through the group loop of its scales: groups of four vectors
// with one scale (kUniform), a scale per element (kPerElement), or a scale per block along the
// run (kBlocks, blocks of whole vectors); short blocks are expanded per element (spans.h). The
// elements before a packed run's first byte boundary and after its last whole group are staged
// through small buffers (DequantizeFew).
#if defined(QLINEAR_LIB_DEQUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_DEQUANTIZE_INL_H_
#undef QLINEAR_LIB_DEQUANTIZE_INL_H_
#else
#define QLINEAR_LIB_DEQUANTIZE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "lib/convert-inl.h"
#include "lib/encode-inl.h"
#include "lib/kernels.h"
#include "lib/plan.h"
#include "lib/spans.h"
#include "lib/storage.h"
#include "lib/x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- outputs --------------------------------------------------------------------------------

// Whether a vector's NaN lanes may carry a payload. DequantizeLinear's may not: a NaN comes only
// from a float8 NaN code, decoded to sign | 0x7FC00000, times a finite scale (DecodedParams::
// ForDequantize sends other calls to the reference), and the conversions below keep that NaN's
// sign and give the canonical 0x7E00 / 0x7FC0 by themselves. The backward pass's dy may carry
// any payload: those lanes are made canonical first.
enum class NaNs { kCanonical, kAny };

// float32 lanes to float16 at out, rounded to nearest even; NaN -> the quiet NaN 0x7E00 with
// the sign (as the scalar reference writes it). Where Highway's demotion is exact (AVX2 and up:
// VCVTPS2PH; NEON, SVE) it is used; elsewhere F16Bits (trap: SSE4 and SCALAR demotions truncate).
template <NaNs kNaNs, class DF>
HWY_INLINE void StoreF16(DF df, hn::Vec<DF> v, uint16_t* HWY_RESTRICT out) {
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2) || (HWY_ARCH_ARM && HWY_TARGET != HWY_SCALAR)
  const hn::Rebind<hwy::float16_t, DF> dh;
  if constexpr (kNaNs == NaNs::kAny) {
    const hn::RebindToUnsigned<DF> du;
    const auto quiet = hn::BitCast(df, hn::Or(hn::And(hn::BitCast(du, v), hn::Set(du, 0x80000000u)), hn::Set(du, 0x7FC00000u)));
    v = hn::IfThenElse(hn::IsNaN(v), quiet, v);
  }
  hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(out));
#else
  const hn::Rebind<uint16_t, DF> d16;
  hn::StoreU(hn::DemoteTo(d16, F16Bits(df, v)), d16, out);
#endif
}

// float32 lanes to their bfloat16 rounding (RNE) in the upper half of each 32-bit lane; the lower
// half is garbage. A canonical NaN's low 16 bits are zero: rounding leaves it as it is.
template <class DF, class DU = hn::RebindToUnsigned<DF>>
HWY_INLINE hn::Vec<DU> RoundedToBF16High(DF /*df*/, hn::Vec<DF> v) {
  const DU du;
  const auto bits = hn::BitCast(du, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  return hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lsb));
}

// float32 lanes to bfloat16 at out (RNE).
template <NaNs kNaNs, class DF>
HWY_INLINE void StoreBF16(DF df, hn::Vec<DF> v, uint16_t* HWY_RESTRICT out) {
  const hn::Rebind<uint16_t, DF> d16;
  if constexpr (kNaNs == NaNs::kAny) {
    hn::StoreU(hn::DemoteTo(d16, BF16Bits(df, v)), d16, out);
  } else {
    const auto high = hn::ShiftRight<16>(RoundedToBF16High(df, v));
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(hn::RebindToSigned<DF>(), high)), d16, out);
  }
}

// Two vectors of canonical-NaN float32 lanes to 2N bfloat16 at out: one narrowing shuffle and one
// full store per pair instead of a narrowing per vector. `normal`: no lane is a subnormal
// (QuantParams::normal_products); `exact`: every lane is a bfloat16 value already
// (QuantParams::bf16_products), whose upper halves are its rounding.
template <class DF>
HWY_INLINE void StoreTwoBF16(DF df, hn::Vec<DF> v0, hn::Vec<DF> v1, bool normal, bool exact,
                             uint16_t* HWY_RESTRICT out) {
#if HWY_TARGET == HWY_SCALAR
  (void)normal, (void)exact;
  StoreBF16<NaNs::kCanonical>(df, v0, out);
  StoreBF16<NaNs::kCanonical>(df, v1, out + hn::Lanes(df));
#else
  if (StoreTwoBF16InHardware(df, v0, v1, g_cpu_converts_bf16, normal, out)) return;
  const hn::Repartition<uint16_t, DF> d16;
  if (exact) return hn::StoreU(hn::ConcatOdd(d16, hn::BitCast(d16, v1), hn::BitCast(d16, v0)), d16, out);
  const auto lo = hn::BitCast(d16, RoundedToBF16High(df, v0));
  const auto hi = hn::BitCast(d16, RoundedToBF16High(df, v1));
  hn::StoreU(hn::ConcatOdd(d16, hi, lo), d16, out);
#endif
}

// float32 lanes to element i of y of type kY (float32, float16, bfloat16).
template <DType kY, NaNs kNaNs = NaNs::kCanonical, class DF>
HWY_INLINE void StoreY(DF df, hn::Vec<DF> v, void* HWY_RESTRICT y, int64_t i) {
  if constexpr (kY == DType::kFloat32) {
    hn::StoreU(v, df, static_cast<float*>(y) + i);
  } else if constexpr (kY == DType::kFloat16) {
    StoreF16<kNaNs>(df, v, static_cast<uint16_t*>(y) + i);
  } else {
    StoreBF16<kNaNs>(df, v, static_cast<uint16_t*>(y) + i);
  }
}

// Four vectors to elements [i, i + 4N) of y, stored in address order. The stores are
// independent and the compiler's scheduler interleaves them; out of order, stores that straddle
// cache lines (an output aligned to less than a vector, as malloc's are) cost up to 20% of an
// L2-resident float32 output (AVX3, 64K elements).
// `normal`, `exact`: as StoreTwoBF16's.
template <DType kY, class DF, class V = hn::Vec<DF>>
HWY_INLINE void StoreFourY(DF df, V v0, V v1, V v2, V v3, bool normal, bool exact, void* HWY_RESTRICT y,
                           int64_t i) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  if constexpr (kY == DType::kBFloat16) {
    uint16_t* HWY_RESTRICT out = static_cast<uint16_t*>(y) + i;
    StoreTwoBF16(df, v0, v1, normal, exact, out);
    QLINEAR_KEEP_ORDER();
    StoreTwoBF16(df, v2, v3, normal, exact, out + 2 * N);
    return;
  }
  (void)normal, (void)exact;
  StoreY<kY>(df, v0, y, i);
  QLINEAR_KEEP_ORDER();
  StoreY<kY>(df, v1, y, i + N);
  QLINEAR_KEEP_ORDER();
  StoreY<kY>(df, v2, y, i + 2 * N);
  QLINEAR_KEEP_ORDER();
  StoreY<kY>(df, v3, y, i + 3 * N);
}

// Four float32 vectors to o[0, 4N) with non-temporal stores (o vector-aligned).
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE void StreamFour(DF df, V v0, V v1, V v2, V v3, float* HWY_RESTRICT o) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  hn::Stream(v0, df, o);
  hn::Stream(v1, df, o + N);
  hn::Stream(v2, df, o + 2 * N);
  hn::Stream(v3, df, o + 3 * N);
}

// A loop's group of four vectors (values decoded by dec times scales) to elements [i, i + 4N)
// of y: StoreFourY, or (a Streaming decoder's float32 output, x86) non-temporal stores where
// element i is vector-aligned.
template <DType kY, class Dec, class DF, class V = hn::Vec<DF>>
HWY_INLINE void StoreGroup(const Dec& dec, DF df, V v0, V v1, V v2, V v3, void* HWY_RESTRICT y, int64_t i) {
#if HWY_ARCH_X86
  if constexpr (kY == DType::kFloat32 && Dec::kStreams) {
    float* HWY_RESTRICT o = static_cast<float*>(y) + i;
    if (HWY_LIKELY(reinterpret_cast<uintptr_t>(o) % (hn::Lanes(df) * sizeof(float)) == 0)) {
      return StreamFour(df, v0, v1, v2, v3, o);
    }
  }
#endif
  StoreFourY<kY>(df, v0, v1, v2, v3, dec.normal_products, dec.bf16_products, y, i);
}

// The same with the output type chosen at run time (the backward pass's dx).
template <class DF>
HWY_INLINE void StoreOutput(DF df, hn::Vec<DF> v, DType y_type, void* HWY_RESTRICT out) {
  if (y_type == DType::kFloat32) return StoreY<DType::kFloat32, NaNs::kAny>(df, v, out, 0);
  if (y_type == DType::kFloat16) return StoreY<DType::kFloat16, NaNs::kAny>(df, v, out, 0);
  StoreY<DType::kBFloat16, NaNs::kAny>(df, v, out, 0);
}

// ---- decoders: int32 code lanes and zero points -> exact float32 --------------------------------

// Whether Codes is a packed source whose FourFields permutes (PackedCodes::FieldsByPermute).
template <class Codes, class DF>
constexpr bool PermutedFields() {
  if constexpr (Codes::kFieldBits > 0) {
    return Codes::template FieldsByPermute<DF>();
  } else {
    return false;
  }
}

// Integers: float32(x - zp), exact for <= 16-bit types (int32 inputs have zp == 0, validated).
struct IntDecoder {
  static constexpr bool kDrains = false;   // see Draining
  static constexpr bool kStreams = false;  // see Streaming
  static constexpr int kFoldShift = 0;    // nothing to fold (MiniFloatDecoder)
  static constexpr float kFold = 1.0f;
  bool normal_products = false;  // QuantParams::normal_products
  bool bf16_products = false;    // QuantParams::bf16_products
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Decode(DF df, hn::Vec<DI> x, hn::Vec<DI> zp) const {
    return hn::ConvertTo(df, hn::Sub(x, zp));
  }
  // f(v0, v1, v2, v3): the values of elements [e, e + 4N); zp(v): vector v's zero points.
  template <bool kFolded = false, class DF, class Codes, class Zp, class F>
  HWY_INLINE void Four(DF df, const Codes& codes, int64_t e, Zp&& zp, F&& f) const {
    if constexpr (PermutedFields<Codes, DF>()) {
#if (QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL) || (HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2)
      // Permuted fields without shift, sign extension or conversion: lane j's field sits at
      // bit p = bits * (j % per) of its byte. The float32 whose bits are 2^(23 - p)'s |
      // (field ^ bias) << p is 2^(23 - p) + code + bias (its mantissa's unit is 2^-p; bias =
      // 2^(bits - 1) for a signed type, else 0); minus the float32 2^(23 - p) + zp + bias it is
      // code - zp, exactly: both are multiples of 2^-p below 2^(24 - p). (After the generic
      // widening, sign-extended codes convert as cheaply: that form is kept there.)
      constexpr int kBits = Codes::kFieldBits, kPer = 8 / kBits;
      constexpr int32_t kBias = Codes::kSignedFields ? 1 << (kBits - 1) : 0;
      struct Lanes {
        alignas(64) int32_t mask[16], base[16], biased[16], shift[16];
      };
      static constexpr Lanes kLanes = [] {
        Lanes t{};
        for (int j = 0; j < 16; ++j) {
          const int p = kBits * (j % kPer);
          t.mask[j] = ((1 << kBits) - 1) << p;
          t.base[j] = (127 + 23 - p) << 23;  // 2^(23 - p)
          t.biased[j] = t.base[j] | (kBias << p);
          t.shift[j] = p;
        }
        return t;
      }();
      const hn::RebindToSigned<DF> di;
      const auto mask = hn::Load(di, kLanes.mask), biased = hn::Load(di, kLanes.biased);
      const auto base = hn::Load(di, kLanes.base), shift = hn::Load(di, kLanes.shift);
      // The subtrahend's bits: 2^(23 - p) with zp + bias placed in its mantissa.
      auto value = [&](auto u, int k) QLINEAR_INLINE_LAMBDA {
        const auto x = hn::BitCast(df, hn::Xor(hn::And(u, mask), biased));
        return hn::Sub(x, hn::BitCast(df, hn::Or(base, hn::Add(zp(k), hn::Set(di, kBias)) << shift)));
      };
      codes.FourFieldsInPlace(df, e, [&](auto u0, auto u1, auto u2, auto u3) QLINEAR_INLINE_LAMBDA {
        f(value(u0, 0), value(u1, 1), value(u2, 2), value(u3, 3));
      });
#else
      static_assert(!PermutedFields<Codes, DF>(), "permuted fields only where FieldLanes exists");
#endif
    } else {
      codes.Four(df, e, [&](auto c0, auto c1, auto c2, auto c3) QLINEAR_INLINE_LAMBDA {
        f(Decode(df, c0, zp(0)), Decode(df, c1, zp(1)), Decode(df, c2, zp(2)), Decode(df, c3, zp(3)));
      });
    }
  }
};

// float8/float4 codes: the magnitude's fields placed in a float32 whose exponent field is raised
// by kLift, then scaled by 2^(127 - kLift - bias) (exact), the format's NaN/Inf codes selected,
// the sign ORed in. Subnormal codes (exponent field 0) take the exponent field of the smallest
// normal and lose its implicit 1 by an exact subtraction, so every operand is a normal float32:
// x86 takes a microcode assist for subnormal operands of a multiply (random float4e2m1 codes
// decoded 1.7x slower on SSE4). The zero point is zero (validated) and not used.
template <DType kT>
struct MiniFloatDecoder {
  static constexpr bool kDrains = false;   // see Draining
  static constexpr bool kStreams = false;  // see Streaming
  using Tr = MiniTraits<kT>;
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> Decode(DF df, hn::Vec<DI> code, hn::Vec<DI> /*zp*/) const {
    const DI di;
    constexpr int kLift = 64;  // every value of every format stays in float32's normal range
    const auto mag = hn::And(code, hn::Set(di, Tr::kSignBit - 1));
    const auto subnormal = hn::Lt(mag, hn::Set(di, 1 << Tr::kMant));
    const auto lifted = hn::Add(hn::ShiftLeft<23 - Tr::kMant>(mag),
                                hn::IfThenElse(subnormal, hn::Set(di, (kLift + 1) << 23), hn::Set(di, kLift << 23)));
    const auto implicit_one = hn::BitCast(df, hn::Set(di, (kLift + 1) << 23));  // 2^(kLift + 1 - 127)
    const auto scale = hn::BitCast(df, hn::Set(di, (127 + 127 - kLift - Tr::kBias) << 23));
    auto v = hn::Mul(hn::Sub(hn::BitCast(df, lifted), hn::IfThenElseZero(hn::RebindMask(df, subnormal), implicit_one)),
                     scale);
    if constexpr (!Tr::kFnuz && !Tr::kFp4) {  // codes beyond max: NaN, or e5m2's Inf
      const auto special = Tr::kF.has_inf ? hn::IfThenElse(hn::RebindMask(df, hn::Eq(mag, hn::Set(di, Tr::kF.overflow_code))),
                                                           hn::Set(df, INFINITY), hn::Set(df, NAN))
                                          : hn::Set(df, NAN);
      v = hn::IfThenElse(hn::RebindMask(df, hn::Gt(mag, hn::Set(di, Tr::kMaxCode))), special, v);
    }
    constexpr int kSignShift = 31 - (Tr::kFp4 ? 3 : 7);
    const auto sign = hn::And(hn::ShiftLeft<kSignShift>(code), hn::Set(di, static_cast<int32_t>(0x80000000u)));
    v = hn::BitCast(df, hn::Or(hn::BitCast(di, v), sign));
    if constexpr (Tr::kFnuz) {  // the single NaN 0x80 (the code of -0) has no sign
      v = hn::IfThenElse(hn::RebindMask(df, hn::Eq(code, hn::Set(di, Tr::kF.nan_code))), hn::Set(df, NAN), v);
    }
    return v;
  }

  // Whether Four goes through float16: where the target converts float16 to float32 in hardware
  // (VCVTPH2PS; FCVTL on Arm) and the format fits float16's exponent range (not e5m2fnuz).
#undef QLINEAR_F16_IN_HARDWARE  // per target
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2) || (HWY_ARCH_ARM && HWY_TARGET != HWY_SCALAR)
#define QLINEAR_F16_IN_HARDWARE 1
  static constexpr bool kViaF16 = kT != DType::kFloat8E5M2FNUZ;
#else
#define QLINEAR_F16_IN_HARDWARE 0
  static constexpr bool kViaF16 = false;
#endif
  // f(v0, v1, v2, v3): the values of elements [e, e + 4N). Via float16: each code's fields placed
  // in float16 bits (subnormal codes land on float16 subnormals) whose value is the code's times
  // 2^-kF16Shift, converted exactly to float32 and scaled back: fewer operations per vector
  // than Decode's float32 construction. NaN codes become float16's quiet NaN
  // with the code's sign (fnuz: positive), as the reference decodes them.
  static constexpr int kF16Shift = 15 - Tr::kBias;
  // Which route Four takes with the loops' vectors (ScalableTag<float>): below, in this order.
#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
  static constexpr bool kBF16TableRoute = !Tr::kFp4 && hn::MaxLanes(hn::ScalableTag<float>()) == 16;
#else
  static constexpr bool kBF16TableRoute = false;
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
  static constexpr bool kNibbleRoute = kT == DType::kFloat8E4M3FN && !kBF16TableRoute;
#else
  static constexpr bool kNibbleRoute = false;
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  static constexpr bool kPermuteRoute = Tr::kFp4 && hn::MaxLanes(hn::ScalableTag<float>()) >= 8;
#else
  static constexpr bool kPermuteRoute = false;
#endif
  // The power of two a loop may fold into its scales when `fold` is set (every |scale| < 2^100,
  // QuantParams::moderate_scales): Four<true> leaves its values 2^-kFoldShift times the codes'
  // (the float16 route without its last multiply), and v * 2^-k * (s * 2^k) is the real number
  // v * s rounded once, as before; s * 2^k is exact. A loop folds where one scale serves many
  // vectors (one multiply per scale instead of one per vector).
  static constexpr int kFoldShift = kViaF16 && !kBF16TableRoute && !kNibbleRoute && !kPermuteRoute ? kF16Shift : 0;
  static constexpr float kFold = static_cast<float>(1 << kFoldShift);
  bool fold = false;
  bool normal_products = false;  // QuantParams::normal_products
  bool bf16_products = false;    // QuantParams::bf16_products
  mutable bool fixes_nans = false;  // e5m2 via float16: a group held NaN codes (Four)
  template <bool kFolded = false, class DF, class Codes, class Zp, class F>
  HWY_INLINE void Four(DF df, const Codes& codes, int64_t e, Zp&& /*zp*/, F&& f) const {
#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
    // float8 on AVX3_DL: every value is a bfloat16, looked up by byte permutes in a table of the
    // 128 magnitudes' bfloat16 bits.
    if constexpr (!Tr::kFp4 && hn::MaxLanes(DF()) == 16) {
      static constexpr BF16Table kTable = [] {
        BF16Table t{};
        for (int m = 0; m < 128; ++m) {
          const uint16_t bits = BF16OfMagnitude(Tr::kF, m);
          t.hi[m / 64].b[m % 64] = static_cast<uint8_t>(bits >> 8);
          t.lo[m / 64].b[m % 64] = static_cast<uint8_t>(bits & 0xFF);
        }
        return t;
      }();
      const uint8_t* p = reinterpret_cast<const uint8_t*>(codes.x + e);
      FourFromBF16Table<Tr::kFnuz>(df, kTable, p, f);
      return;
    }
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
    // e4m3fn on x86 without byte permutes: the bfloat16 of a normal magnitude has the high byte
    // (e + 120) >> 1, a function of the code's high nibble (sign and e's top three bits), and
    // the low byte (e & 1) << 7 | m << 4, the low nibble shifted: one PSHUFB each. Subnormals
    // (high nibble s000, low nibble 0mmm) and NaN (s111, 1111) are patched by xoring entries of
    // two more tables, indexed by the low nibble plus an offset per high nibble that lands them
    // on entries 8 + m and 0 and every other code on an index with bit 7 set (PSHUFB: 0). The
    // two bytes go to the top of each float32 by two rounds of in-block interleaves, after a
    // permute of 32-bit lanes that puts the codes of each output vector in element order.
    if constexpr (kNibbleRoute && hn::MaxLanes(DF()) >= 4) {
      static constexpr NibbleTables kTables = NibbleTablesOf(Tr::kF);
      static_assert(NibbleTablesExact(Tr::kF), "the nibble tables decode every code");
      const hn::Repartition<uint8_t, DF> d8;
      const hn::Repartition<uint16_t, DF> d16;
      const hn::Repartition<uint32_t, DF> d32;
      auto c = hn::LoadU(d8, reinterpret_cast<const uint8_t*>(codes.x + e));
      if constexpr (hn::MaxLanes(hn::Repartition<uint32_t, DF>()) > 4) {
        // Block b, 32-bit lane k: the codes of elements 4 (B k + b) .. + 3 (B blocks).
        struct Order {
          alignas(64) uint32_t slots[hn::MaxLanes(hn::Repartition<uint32_t, DF>())];
        };
        static constexpr Order kOrder = [] {
          Order t{};
          constexpr size_t kLanes = hn::MaxLanes(hn::Repartition<uint32_t, DF>()), kBlocks = kLanes / 4;
          for (size_t i = 0; i < kLanes; ++i) t.slots[i] = static_cast<uint32_t>(kBlocks * (i % 4) + i / 4);
          return t;
        }();
        c = hn::BitCast(d8, hn::TableLookupLanes(hn::BitCast(d32, c), hn::SetTableIndices(d32, kOrder.slots)));
      }
      const auto nibble = hn::Set(d8, uint8_t{0x0F});
      const auto lo = hn::And(c, nibble);
      const auto hi = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, c))), nibble);
      const auto patch = hn::Add(lo, hn::TableLookupBytes(hn::LoadDup128(d8, kTables.offset), hi));
      const auto top = hn::Xor(hn::TableLookupBytes(hn::LoadDup128(d8, kTables.top), hi),
                               hn::TableLookupBytesOr0(hn::LoadDup128(d8, kTables.top_patch), patch));
      const auto low = hn::Xor(hn::TableLookupBytes(hn::LoadDup128(d8, kTables.low), lo),
                               hn::TableLookupBytesOr0(hn::LoadDup128(d8, kTables.low_patch), patch));
      const auto w0 = hn::BitCast(d16, hn::InterleaveLower(d8, low, top));
      const auto w1 = hn::BitCast(d16, hn::InterleaveUpper(d8, low, top));
      const auto z = hn::Zero(d16);
      f(hn::BitCast(df, hn::InterleaveLower(d16, z, w0)), hn::BitCast(df, hn::InterleaveUpper(d16, z, w0)),
        hn::BitCast(df, hn::InterleaveLower(d16, z, w1)), hn::BitCast(df, hn::InterleaveUpper(d16, z, w1)));
      return;
    }
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    // float4e2m1 on AVX2 and AVX-512: one lane permute (VPERMPS) per vector looks the codes up in
    // a vector of Decode's own values, of codes 0..15 where they fill a vector (AVX-512), else of
    // the magnitudes 0..7, whose entry m holds value(m) ^ m << 28: xored with the field shifted
    // left by 28 (its sign on bit 31, its magnitude m on bits 28..30, the bits above the field
    // shifted out), it is value(m) with the code's sign, without a mask.
    if constexpr (Tr::kFp4 && hn::MaxLanes(DF()) >= 8) {
      const hn::RebindToSigned<DF> di;
      auto table = Decode(df, hn::Iota(di, 0), hn::Zero(di));
      if constexpr (hn::MaxLanes(DF()) < 16) {
        table = hn::BitCast(df, hn::Xor(hn::BitCast(di, table), hn::ShiftLeft<28>(hn::Iota(di, 0))));
      }
      codes.FourFields(df, e, [&](auto u0, auto u1, auto u2, auto u3) QLINEAR_INLINE_LAMBDA {
        auto value = [&](auto u) QLINEAR_INLINE_LAMBDA {
          const auto v = PermuteByLowBits(df, table, u);
          if constexpr (hn::MaxLanes(DF()) == 16) return v;
          return hn::BitCast(df, hn::Xor(hn::BitCast(di, v), hn::ShiftLeft<28>(u)));
        };
        f(value(u0), value(u1), value(u2), value(u3));
      });
      return;
    }
#endif
#if QLINEAR_F16_IN_HARDWARE
    if constexpr (kViaF16) {
      const hn::Repartition<uint16_t, DF> d16;
      const hn::Rebind<hwy::float16_t, DF> dh;  // N lanes
      const hn::RebindToSigned<decltype(d16)> di16;
      // e5m2 codes' magnitudes (positive int16).
      auto magnitude = [&](hn::Vec<decltype(d16)> c) QLINEAR_INLINE_LAMBDA {
        return hn::BitCast(di16, hn::And(c, hn::Set(d16, uint16_t{0x7F})));
      };
      // g(lo, hi): the values of the 2N codes in c. nan_codes: whether c may hold NaN codes
      // (e5m2 only; the other formats always check).
      auto half = [&](auto nan_codes, hn::Vec<decltype(d16)> c, auto&& g) QLINEAR_INLINE_LAMBDA {
        hn::Vec<decltype(d16)> bits;
        if constexpr (Tr::kFp4) {
          const auto sign = hn::And(hn::ShiftLeft<12>(c), hn::Set(d16, uint16_t{0x8000}));
          bits = hn::Or(hn::ShiftLeft<9>(hn::And(c, hn::Set(d16, uint16_t{7}))), sign);
        } else if constexpr (Tr::kMant == 2) {  // e5m2: float16's top byte; NaN codes made canonical
          bits = hn::ShiftLeft<8>(c);
          if constexpr (decltype(nan_codes)::value) {
            const auto nan = hn::RebindMask(d16, hn::Gt(magnitude(c), hn::Set(di16, int16_t{0x7C})));
            bits = hn::IfThenElse(nan, hn::Or(hn::And(bits, hn::Set(d16, uint16_t{0x8000})), hn::Set(d16, uint16_t{0x7E00})), bits);
          }
        } else {  // e4m3fn, e4m3fnuz: c's bit 7 is also in bits 8..15, so shifted left by 7
          // it lands on the float16 sign, and its copy on bit 14 is cleared.
          bits = hn::And(hn::ShiftLeft<7>(c), hn::Set(d16, uint16_t{0xBFFF}));
          if constexpr (Tr::kFnuz) {
            bits = hn::IfThenElse(hn::Eq(c, hn::Set(d16, uint16_t{0xFF80})), hn::Set(d16, uint16_t{0x7E00}), bits);
          } else {  // magnitude 0x7F: sign | 0x3F80 becomes sign | 0x7E00
            const auto nan = hn::Eq(hn::Or(c, hn::Set(d16, uint16_t{0xFF80})), hn::Set(d16, uint16_t{0xFFFF}));
            bits = hn::Xor(bits, hn::And(hn::VecFromMask(d16, nan), hn::Set(d16, uint16_t{0x4180})));
          }
        }
        const hn::Half<decltype(d16)> d16h;  // N lanes (halves of uint16: Arm has none of float16)
        auto lo = hn::PromoteTo(df, hn::BitCast(dh, hn::LowerHalf(d16h, bits)));
        auto hi = hn::PromoteTo(df, hn::BitCast(dh, hn::UpperHalf(d16h, bits)));
        if constexpr (kF16Shift != 0 && !kFolded) {
          const auto scale = hn::Set(df, static_cast<float>(1 << kF16Shift));
          lo = hn::Mul(lo, scale);
          hi = hn::Mul(hi, scale);
        }
        g(lo, hi);
      };
      auto both = [&](auto nan_codes, hn::Vec<decltype(d16)> c01, hn::Vec<decltype(d16)> c23) QLINEAR_INLINE_LAMBDA {
        half(nan_codes, c01, [&](auto v0, auto v1) QLINEAR_INLINE_LAMBDA {
          half(nan_codes, c23, [&](auto v2, auto v3) QLINEAR_INLINE_LAMBDA { f(v0, v1, v2, v3); });
        });
      };
      codes.FourHalves(df, e, [&](auto c01, auto c23) QLINEAR_INLINE_LAMBDA {
        // e5m2: one test of the group's largest magnitude instead of a NaN fix per half, until
        // a group holds NaN codes; from then on every group is fixed without the test (with NaN
        // codes here and there, its branch mispredicts: 0.52-0.68x at 1M elements).
        if constexpr (Tr::kMant == 2) {
          if (!fixes_nans) {
            const auto most = hn::Max(magnitude(c01), magnitude(c23));
            if (HWY_LIKELY(hn::AllFalse(di16, hn::Gt(most, hn::Set(di16, int16_t{0x7C}))))) {
              return both(std::false_type(), c01, c23);
            }
            fixes_nans = true;
          }
        }
        both(std::true_type(), c01, c23);
      });
      return;
    }
#endif
    {
      const hn::RebindToSigned<DF> di;
      codes.Four(df, e, [&](auto c0, auto c1, auto c2, auto c3) QLINEAR_INLINE_LAMBDA {
        const auto z = hn::Zero(di);
        f(Decode(df, c0, z), Decode(df, c1, z), Decode(df, c2, z), Decode(df, c3, z));
      });
    }
  }
};

// ---- code sources: elements of x as int32 lanes -----------------------------------------------

// 8-, 16- and 32-bit codes in memory.
template <class XT>
struct MemoryCodes {
  static constexpr int kPerByte = 1;  // elements per byte boundary
  static constexpr bool kVector = true;  // Four exists
  static constexpr int kFieldBits = 0;   // not packed
  const XT* x;

  // DequantizeFew's staging: the bytes from element e on, how many n elements take, and the
  // same source over a copy of them.
  const void* BytesAt(int64_t e) const { return x + e; }
  static constexpr int64_t BytesFor(int64_t n) { return n * static_cast<int64_t>(sizeof(XT)); }
  MemoryCodes Over(const void* p) const { return MemoryCodes{static_cast<const XT*>(p)}; }

  int32_t Code(int64_t e) const {
    XT v;
    std::memcpy(&v, x + e, sizeof(XT));
    return static_cast<int32_t>(v);
  }
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Load(DF df, int64_t e) const {
    const DI di;
    if constexpr (sizeof(XT) == 4) {
      return hn::LoadU(di, reinterpret_cast<const int32_t*>(x + e));
    } else {
      return hn::PromoteTo(di, hn::LoadU(hn::Rebind<XT, DF>(), x + e));
    }
  }
  // f(c0, c1, c2, c3): the code lanes of elements [e, e + 4N).
  template <class DF, class F>
  HWY_INLINE void Four(DF df, int64_t e, F&& f) const {
    const int64_t N = static_cast<int64_t>(hn::Lanes(df));
    f(Load(df, e), Load(df, e + N), Load(df, e + 2 * N), Load(df, e + 3 * N));
  }
  // f(h0, h1): the codes of elements [e, e + 2N) and [e + 2N, e + 4N) as uint16 lanes, bit 7
  // copied to bits 8..15 (byte codes only; the widening costs the same either way).
  template <class DF, class F>
  HWY_INLINE void FourHalves(DF df, int64_t e, F&& f) const {
    static_assert(sizeof(XT) == 1, "byte codes");
    const hn::Repartition<uint16_t, DF> d16;
    const hn::Repartition<int16_t, DF> di16;
    const hn::Rebind<int8_t, decltype(d16)> d8;
    const int64_t N2 = static_cast<int64_t>(hn::Lanes(d16));
    const int8_t* p = reinterpret_cast<const int8_t*>(x) + e;
    f(hn::BitCast(d16, hn::PromoteTo(di16, hn::LoadU(d8, p))), hn::BitCast(d16, hn::PromoteTo(di16, hn::LoadU(d8, p + N2))));
  }
};

// Packed kBits-wide fields (element e: field e % per of byte e / per), kSigned: two's complement.
// Four unpacks a group of 4N fields in registers as int32 codes (the group's bytes widened so
// that each field gets a byte of its own, the sign extended on bytes, the quarters widened);
// FourFields gives the raw fields without their sign, by permutes where the target has them.
template <int kBits, bool kSigned>
struct PackedCodes {
  static constexpr int kPerByte = 8 / kBits;
  static constexpr bool kVector = HWY_TARGET != HWY_SCALAR;  // one-lane vectors have no halves
  static constexpr int kFieldBits = kBits;
  static constexpr bool kSignedFields = kSigned;
  const uint8_t* in;

  // As MemoryCodes' (e a multiple of kPerByte).
  const void* BytesAt(int64_t e) const { return in + e / kPerByte; }
  static constexpr int64_t BytesFor(int64_t n) { return (n + kPerByte - 1) / kPerByte; }
  PackedCodes Over(const void* p) const { return PackedCodes{static_cast<const uint8_t*>(p)}; }

  int32_t Code(int64_t e) const {
    const int32_t field = (in[e / kPerByte] >> (kBits * (e % kPerByte))) & ((1 << kBits) - 1);
    return kSigned ? (field ^ (1 << (kBits - 1))) - (1 << (kBits - 1)) : field;
  }
#if HWY_TARGET != HWY_SCALAR
  // The fields of elements [e, e + 4N), one per byte (e a multiple of kPerByte); generic form.
  template <class DF>
  HWY_INLINE hn::Vec<hn::Repartition<uint8_t, DF>> FourBytes(DF df, int64_t e) const {
    const hn::Repartition<uint8_t, DF> d8;  // 4N lanes
    const uint8_t* p = in + e / kPerByte;
    if constexpr (kBits == 4) {  // 2N bytes: each to a u16 with its low nibble in byte 0, high in byte 1
      const hn::Repartition<uint16_t, DF> d16;
      const auto w = hn::PromoteTo(d16, hn::LoadU(hn::Rebind<uint8_t, decltype(d16)>(), p));
      return hn::BitCast(d8, hn::Or(hn::And(w, hn::Set(d16, uint16_t{0x000F})),
                                    hn::And(hn::ShiftLeft<4>(w), hn::Set(d16, uint16_t{0x0F00}))));
    } else {  // N bytes: each to a u32; fields 0..3 to bytes 0..3 (nibbles to halves, then fields)
      const hn::Repartition<uint32_t, DF> d32;
      auto v = hn::PromoteTo(d32, hn::LoadU(hn::Rebind<uint8_t, decltype(d32)>(), p));
      v = hn::And(hn::Or(v, hn::ShiftLeft<12>(v)), hn::Set(d32, 0x000F000Fu));
      v = hn::And(hn::Or(v, hn::ShiftLeft<6>(v)), hn::Set(d32, 0x03030303u));
      return hn::BitCast(d8, v);
    }
  }
  // f(c0, c1, c2, c3): int32 lanes, sign-extended on bytes first (the generic form).
  template <class DF, class F>
  HWY_INLINE void Four(DF df, int64_t e, F&& f) const {
    const hn::Repartition<int8_t, DF> di8;
    auto sc = hn::BitCast(di8, FourBytes(df, e));
    if constexpr (kSigned) {
      const auto bias = hn::Set(di8, static_cast<int8_t>(1 << (kBits - 1)));
      sc = hn::Sub(hn::Xor(sc, bias), bias);
    }
    const hn::Half<decltype(di8)> dh;
    const hn::Half<decltype(dh)> dq;  // N lanes
    const hn::RebindToSigned<DF> di;
    const auto lo = hn::LowerHalf(dh, sc), hi = hn::UpperHalf(dh, sc);
    f(hn::PromoteTo(di, hn::LowerHalf(dq, lo)), hn::PromoteTo(di, hn::UpperHalf(dq, lo)),
      hn::PromoteTo(di, hn::LowerHalf(dq, hi)), hn::PromoteTo(di, hn::UpperHalf(dq, hi)));
  }
  // Whether FourFields takes each vector's fields from the group's bytes with one permute and one
  // shift (AVX3_DL, AVX2) rather than by the generic widening.
  template <class DF>
  static constexpr bool FieldsByPermute() {
#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
    return hn::MaxLanes(DF()) == 16;
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
    return true;
#else
    return false;
#endif
  }
  // f(u0, u1, u2, u3): int32 lanes whose low kBits bits are the fields of elements [e, e + 4N)
  // (e a multiple of kPerByte); the bits above are not defined.
  template <class DF, class F>
  HWY_INLINE void FourFields(DF df, int64_t e, F&& f) const {
    const hn::RebindToSigned<DF> di;
#if (QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL) || (HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2)
    if constexpr (FieldsByPermute<DF>()) return PermutedFieldVectors<kBits, false>(df, in + e / kPerByte, f);
#endif
    const hn::Repartition<uint8_t, DF> d8;
    const hn::Half<decltype(d8)> dh;
    const hn::Half<decltype(dh)> dq;  // N lanes
    const hn::RebindToUnsigned<DF> du;
    const auto b = FourBytes(df, e);
    const auto lo = hn::LowerHalf(dh, b), hi = hn::UpperHalf(dh, b);
    auto widen = [&](auto q) QLINEAR_INLINE_LAMBDA { return hn::BitCast(di, hn::PromoteTo(du, q)); };
    f(widen(hn::LowerHalf(dq, lo)), widen(hn::UpperHalf(dq, lo)), widen(hn::LowerHalf(dq, hi)),
      widen(hn::UpperHalf(dq, hi)));
  }
#if (QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL) || (HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2)
  // The same where FieldsByPermute, with lane j's field left at bit kBits * (j % kPerByte) (one
  // shift fewer per vector); the bits beside it are not defined.
  template <class DF, class F>
  HWY_INLINE void FourFieldsInPlace(DF df, int64_t e, F&& f) const {
    PermutedFieldVectors<kBits, true>(df, in + e / kPerByte, f);
  }
#endif
  // f(h0, h1): uint16 lanes (unsigned fields).
  template <class DF, class F>
  HWY_INLINE void FourHalves(DF df, int64_t e, F&& f) const {
    const auto b = FourBytes(df, e);
    const hn::Repartition<uint16_t, DF> d16;
    const hn::Half<hn::Repartition<uint8_t, DF>> dh;
    f(hn::PromoteTo(d16, hn::LowerHalf(dh, b)), hn::PromoteTo(d16, hn::UpperHalf(dh, b)));
  }
#endif
};

// ---- the loops --------------------------------------------------------------------------------
//
// s: the scale (kUniform) or one per element; z: likewise the zero points, or null when every
// zero point is 0 (none given: no loads for them). y points at element e's output.

constexpr int64_t YSize(DType y) { return y == DType::kFloat32 ? 4 : 2; }

// loop(std::true_type) where dec folds its power of two into the scales, else
// loop(std::false_type): the branch is taken once per loop, not per group.
template <class Dec, class Loop>
HWY_INLINE void WithFolding(const Dec& dec, Loop&& loop) {
  if constexpr (Dec::kFoldShift != 0) {
    if (dec.fold) return loop(std::true_type());
  }
  loop(std::false_type());
}
// s as the scale of Four<kFolded>.
template <bool kFolded, class Dec>
HWY_INLINE float ScaleFor(float s) {
  if constexpr (kFolded) {
    return s * Dec::kFold;
  } else {
    return s;
  }
}
// loop(std::true_type) where integer codes have zero points to subtract, else
// loop(std::false_type): the loop then subtracts a constant zero, which the compiler drops (one
// operation of about six per vector). Float8/float4 decoders ignore zero points.
template <class Dec, class Loop>
HWY_INLINE void WithZeroPoints(bool subtracts, Loop&& loop) {
  if constexpr (std::is_base_of<IntDecoder, Dec>::value) {
    if (subtracts) return loop(std::true_type());
  }
  loop(std::false_type());
}

// DequantizeFew's elements [e, e + n) a group of four vectors at a time: the codes' bytes from
// e's byte on copied into a zeroed buffer and decoded by the loops' group decode, padding lanes
// taking code 0 and scale 1, the outputs copied out.
template <DType kY, Scales kScales, class Dec, class Codes>
HWY_NOINLINE void FewByGroups(const Dec& dec, const Codes codes, int64_t e, int64_t n, const float* HWY_RESTRICT s,
                              const int32_t* HWY_RESTRICT z, char* HWY_RESTRICT out) {
  constexpr bool kEach = kScales == Scales::kPerElement;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr size_t kMax = hn::MaxLanes(df);
  // A group's codes (4N of up to 4 bytes: four vectors of bytes; the loops' groups read
  // exactly their codes' bytes), scales, zero points and outputs (up to 4 bytes each).
  HWY_ALIGN float code_bytes[4 * kMax];  // as bytes
  uint8_t* cb = reinterpret_cast<uint8_t*>(code_bytes);
  HWY_ALIGN float sb[4 * kMax];
  HWY_ALIGN int32_t zb[4 * kMax];
  HWY_ALIGN float ob[4 * kMax];
  const auto us = hn::Set(df, kEach ? 1.0f : *s);
  const auto uz = hn::Set(di, !kEach && z != nullptr ? *z : 0);
  while (n > 0) {
    const int64_t off = e % Codes::kPerByte;
    const int64_t m = std::min(n, 4 * N - off);
    for (int64_t k = 0; k < 4; ++k) hn::Store(hn::Zero(df), df, code_bytes + k * N);  // (-O2 keeps fills scalar)
    std::memcpy(cb, codes.BytesAt(e - off), static_cast<size_t>(Codes::BytesFor(off + m)));
    if (kEach) {
      for (int64_t k = 0; k < 4; ++k) hn::Store(hn::Set(df, 1.0f), df, sb + k * N);
      std::memcpy(sb + off, s, static_cast<size_t>(m) * sizeof(float));
      if (z != nullptr) {
        for (int64_t k = 0; k < 4; ++k) hn::Store(hn::Zero(di), di, zb + k * N);
        std::memcpy(zb + off, z, static_cast<size_t>(m) * sizeof(int32_t));
      }
    }
    auto scale = [&](int k) QLINEAR_INLINE_LAMBDA { return kEach ? hn::Load(df, sb + k * N) : us; };
    auto zp = [&](int k) QLINEAR_INLINE_LAMBDA {
      return kEach ? (z != nullptr ? hn::Load(di, zb + k * N) : hn::Zero(di)) : uz;
    };
    dec.template Four<false>(df, codes.Over(cb), 0, zp, [&](auto v0, auto v1, auto v2, auto v3) QLINEAR_INLINE_LAMBDA {
      StoreFourY<kY>(df, hn::Mul(v0, scale(0)), hn::Mul(v1, scale(1)), hn::Mul(v2, scale(2)), hn::Mul(v3, scale(3)),
                     dec.normal_products, dec.bf16_products, ob, 0);
    });
    std::memcpy(out, reinterpret_cast<const char*>(ob) + off * YSize(kY), static_cast<size_t>(m * YSize(kY)));
    e += m;
    n -= m;
    out += m * YSize(kY);
    if (kEach) {
      s += m;
      if (z != nullptr) z += m;
    }
  }
}

// Elements [e, e + n) through stack buffers (a packed span's head before its first byte
// boundary, spans shorter than a group, the tails): more than a vector's by groups
// (FewByGroups), else a vector at a time with codes read one by one, lanes padded with code 0
// and scale 1. (Read one by one, codes cost about 1 ns each, which rows of 1000 elements per
// column felt at a third of the rate of rows of 1024; a group costs more than a vector of codes
// read one by one, hence the threshold.)
template <DType kY, Scales kScales, class Dec, class Codes>
HWY_NOINLINE void DequantizeFew(const Dec& dec, const Codes codes, int64_t e, int64_t n, const float* HWY_RESTRICT s,
                                const int32_t* HWY_RESTRICT z, void* HWY_RESTRICT y) {
  constexpr bool kEach = kScales == Scales::kPerElement;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr size_t kMax = hn::MaxLanes(df);
  char* out = static_cast<char*>(y);
  if constexpr (Codes::kVector) {
    if (n > N) return FewByGroups<kY, kScales>(dec, codes, e, n, s, z, out);
  }
  for (int64_t i = 0; i < n; i += N) {
    const int64_t m = std::min(N, n - i);
    HWY_ALIGN int32_t cb[kMax] = {};
    HWY_ALIGN float sb[kMax];
    HWY_ALIGN int32_t zb[kMax] = {};
    HWY_ALIGN float ob[kMax];
    std::fill(sb, sb + kMax, 1.0f);
    for (int64_t k = 0; k < m; ++k) cb[k] = codes.Code(e + i + k);
    if (kEach) std::memcpy(sb, s + i, static_cast<size_t>(m) * sizeof(float));
    if (z != nullptr) {
      if (kEach) {
        std::memcpy(zb, z + i, static_cast<size_t>(m) * sizeof(int32_t));
      } else {
        std::fill(zb, zb + kMax, *z);
      }
    }
    const auto vs = kEach ? hn::Load(df, sb) : hn::Set(df, *s);
    StoreY<kY>(df, hn::Mul(dec.Decode(df, hn::Load(di, cb), hn::Load(di, zb)), vs), ob, 0);
    std::memcpy(out + i * YSize(kY), ob, static_cast<size_t>(m * YSize(kY)));
  }
}

// From this many elements a float32 span with one scale is stored with non-temporal stores
// (x86): 16 MiB of output is beyond any core's L2, and skipping the read-for-ownership of each
// line made 16M-element int4 -> float32 calls 2.5x faster (docs/performance.md). Below it the
// output stays in cache for its reader (at 64K elements streaming lost 30%).
constexpr int64_t kStreamFrom = int64_t{1} << 22;

// From this many elements a span with one scale aligns its vector stores to cache lines (x86):
// with malloc's 16-byte alignment every 64-byte store straddles two lines, which cost 25-30% of
// an L2-resident float32 output on AVX3_DL (64K elements); the unaligned head goes through
// DequantizeFew, which shorter spans would feel.
#ifndef QLINEAR_ALIGN_FROM
#define QLINEAR_ALIGN_FROM 16384
#endif
constexpr int64_t kAlignFrom = QLINEAR_ALIGN_FROM;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// 4- and 2-bit codes with one scale (x86 AVX2 and up; integers into float32 only where they have
// no permuted decode, kFieldTableFor): a code has 16 (4) possible outputs, so
// they are computed once per span by the vector path's own decode, multiply and conversion, and
// the span is looked up in 16-entry tables of their bytes (in-block byte shuffles, one per
// output byte per 32 codes). Per 64 codes (AVX2) about 14 operations for float16/bfloat16 and
// 31 for float32, where decoding, scaling and converting costs 5-11 per vector of 8. The codes
// are first rearranged across blocks so that the in-block unpacks leave each output vector in
// element order (below).
template <class Codes>
constexpr bool kFieldTable = Codes::kFieldBits == 4 || Codes::kFieldBits == 2;

// Elements [e + j, e + n) in whole steps of 2 * Lanes(bytes) elements, (e + j) on a byte of
// codes; returns the new j. stream: non-temporal float32 stores. (Forcing the stores into
// address order, as StoreFourY does, cost 3-20% here.)
template <DType kY, class Dec, class Codes>
HWY_INLINE int64_t DequantizeFieldTable(const Dec& dec, const Codes& codes, int64_t e, int64_t j, int64_t n,
                                        float s, int32_t zp, bool stream, char* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Repartition<uint8_t, decltype(df)> d8;
  const hn::Repartition<uint16_t, decltype(df)> d16;
  const hn::Repartition<uint32_t, decltype(df)> d32;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const int64_t step = 2 * static_cast<int64_t>(hn::Lanes(d8));
  constexpr int kBits = Codes::kFieldBits;
  constexpr int kBytes = static_cast<int>(YSize(kY));
  // Table entry v is the output of field v (4 bits), or (2 bits) of field v & 3 | v >> 2: the
  // indices below are a byte's 2-bit fields masked in place, 0..3 or 4, 8, 12. Two's complement
  // fields are codes -8..7 (-2..1). Split into bytes: byte b of entry v at bytes[b][v], by
  // even/odd byte selections over 128-bit blocks.
  HWY_ALIGN uint8_t values[(16 + hn::MaxLanes(df)) * 4];
  for (int64_t c = 0; c < 16; c += N) {
    auto field = hn::Iota(di, static_cast<int32_t>(c));
    if constexpr (kBits == 2) field = hn::Or(hn::And(field, hn::Set(di, 3)), hn::ShiftRight<2>(field));
    if constexpr (Codes::kSignedFields) {
      const auto bias = hn::Set(di, 1 << (kBits - 1));
      field = hn::Sub(hn::Xor(field, bias), bias);
    }
    StoreY<kY>(df, hn::Mul(dec.Decode(df, field, hn::Set(di, zp)), hn::Set(df, s)), values, c);
  }
  const hn::Full128<uint8_t> d128;
  HWY_ALIGN uint8_t bytes[4][16];
  const auto v0 = hn::Load(d128, values), v1 = hn::Load(d128, values + 16);
  if constexpr (kBytes == 2) {
    hn::Store(hn::ConcatEven(d128, v1, v0), d128, bytes[0]);
    hn::Store(hn::ConcatOdd(d128, v1, v0), d128, bytes[1]);
  } else {
    const auto v2 = hn::Load(d128, values + 32), v3 = hn::Load(d128, values + 48);
    const auto even01 = hn::ConcatEven(d128, v1, v0), odd01 = hn::ConcatOdd(d128, v1, v0);  // bytes 0, 2 / 1, 3
    const auto even23 = hn::ConcatEven(d128, v3, v2), odd23 = hn::ConcatOdd(d128, v3, v2);
    hn::Store(hn::ConcatEven(d128, even23, even01), d128, bytes[0]);
    hn::Store(hn::ConcatEven(d128, odd23, odd01), d128, bytes[1]);
    hn::Store(hn::ConcatOdd(d128, even23, even01), d128, bytes[2]);
    hn::Store(hn::ConcatOdd(d128, odd23, odd01), d128, bytes[3]);
  }
  using V8 = hn::Vec<decltype(d8)>;
  V8 table[4];
  for (int b = 0; b < kBytes; ++b) table[b] = hn::LoadDup128(d8, bytes[b]);
  // A unit is the codes of 8 outputs (2-byte outputs) or 4 (float32): 4 or 2 bytes of 4-bit
  // codes, 2 or 1 of 2-bit ones. Block b of the rearranged codes holds unit k (in order) of its
  // first bytes from unit B k + b of the step's codes (B blocks): the unpacks of unit k then give
  // output vector k's block b. Dword units are permuted directly; smaller ones are first
  // grouped by residue mod B inside each block (an in-block shuffle).
  constexpr bool kGrouped = kBits == 2 || kBytes == 4;
  constexpr size_t kUnit = (kBits == 4 ? 8 : 4) / static_cast<size_t>(kBytes);  // bytes
  struct Permutes {
    alignas(64) uint32_t slots[hn::MaxLanes(d32)];
    alignas(16) uint8_t group[16];
  };
  static constexpr Permutes kPermutes = [] {
    Permutes t{};
    constexpr size_t kLanes = hn::MaxLanes(hn::Repartition<uint32_t, hn::ScalableTag<float>>());
    constexpr size_t kBlocks = kLanes / 4, kPer = 4 / kBlocks;  // dwords of one residue per block
    for (size_t i = 0; i < kLanes; ++i) {
      const size_t b = i / 4, k = i % 4;
      t.slots[i] = static_cast<uint32_t>(kGrouped ? 4 * (k / kPer) + b * kPer + k % kPer : kBlocks * k + b);
    }
    for (size_t p = 0; p < 16; ++p) {
      const size_t residue = p / (4 * kPer), q = p % (4 * kPer), from = q / kUnit * kBlocks + residue;
      t.group[p] = static_cast<uint8_t>(kUnit * from + q % kUnit);
    }
    return t;
  }();
  const auto permute = hn::SetTableIndices(d32, kPermutes.slots);
  const auto group = hn::LoadDup128(d8, kPermutes.group);
  const auto nibble = hn::Set(d8, uint8_t{0x0F});
  const auto pairs = hn::BitCast(d8, hn::Set(d16, uint16_t{0x0C03}));  // 2-bit fields 0, 1 in place
  const int64_t M = static_cast<int64_t>(hn::Lanes(d16));
  for (; j + step <= n; j += step) {
    V8 v, f[2];
    if constexpr (kBits == 4) {
      v = hn::LoadU(d8, codes.in + (e + j) / 2);
    } else {  // half a vector of bytes
      v = hn::ZeroExtendVector(d8, hn::LoadU(hn::Half<decltype(d8)>(), codes.in + (e + j) / 4));
    }
    if constexpr (kGrouped) v = hn::TableLookupBytes(v, group);
    v = hn::BitCast(d8, hn::TableLookupLanes(hn::BitCast(d32, v), permute));
    if constexpr (kBits == 4) {
      const auto lo = hn::And(v, nibble);
      const auto hi = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, v))), nibble);
      f[0] = hn::InterleaveLower(d8, lo, hi);
      f[1] = hn::InterleaveUpper(d8, lo, hi);
    } else {  // each byte's nibbles twice, masked to fields 0, 1 and 2, 3 (as 0..3, 4..12)
      const auto z = hn::InterleaveLower(d8, v, hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, v))));
      f[0] = hn::And(hn::InterleaveLower(d8, z, z), pairs);
      f[1] = hn::And(hn::InterleaveUpper(d8, z, z), pairs);
    }
    if constexpr (kBytes == 2) {
      uint16_t* HWY_RESTRICT o = reinterpret_cast<uint16_t*>(out) + j;
      for (int h = 0; h < 2; ++h) {
        const auto l = hn::TableLookupBytes(table[0], f[h]), u = hn::TableLookupBytes(table[1], f[h]);
        hn::StoreU(hn::ZipLower(d16, l, u), d16, o + 2 * h * M);
        hn::StoreU(hn::ZipUpper(d16, l, u), d16, o + (2 * h + 1) * M);
      }
    } else {
      float* HWY_RESTRICT o = reinterpret_cast<float*>(out) + j;
#if HWY_ARCH_X86
      if constexpr (Dec::kDrains) {  // as Draining::Four does per four vectors
        dec.drain->Step(df);
        dec.drain->Step(df);
      }
#endif
      auto put = [&](hn::Vec<decltype(d32)> v32, int64_t k) QLINEAR_INLINE_LAMBDA {
        if (stream) {
          hn::Stream(hn::BitCast(df, v32), df, o + k * N);
        } else {
          hn::StoreU(hn::BitCast(df, v32), df, o + k * N);
        }
      };
      for (int h = 0; h < 2; ++h) {
        const auto p0 = hn::TableLookupBytes(table[0], f[h]), p1 = hn::TableLookupBytes(table[1], f[h]);
        const auto p2 = hn::TableLookupBytes(table[2], f[h]), p3 = hn::TableLookupBytes(table[3], f[h]);
        const auto a0 = hn::ZipLower(d16, p0, p1), b0 = hn::ZipLower(d16, p2, p3);
        const auto a1 = hn::ZipUpper(d16, p0, p1), b1 = hn::ZipUpper(d16, p2, p3);
        put(hn::ZipLower(d32, a0, b0), 4 * h);
        put(hn::ZipUpper(d32, a0, b0), 4 * h + 1);
        put(hn::ZipLower(d32, a1, b1), 4 * h + 2);
        put(hn::ZipUpper(d32, a1, b1), 4 * h + 3);
      }
    }
  }
  return j;
}
// From this many elements a span takes the tables: building them costs about as much as 64
// codes; float32 rows of 1024 (float4e2m1, or integers on AVX3) keep the decode on AVX-512.
template <DType kY>
constexpr int64_t kFieldTableFrom = kY == DType::kFloat32 && hn::MaxLanes(hn::ScalableTag<float>()) >= 16 ? 4096 : 256;
// Integer codes into float32 keep the decode where their fields are permuted in place (AVX2,
// AVX3_DL: one shuffle and four operations per vector beat the tables' three shuffles, 1.1-1.3x).
// Dec may wrap IntDecoder (Draining, Streaming).
template <DType kY, class Dec, class Codes>
constexpr bool kFieldTableFor =
    kFieldTable<Codes> && !(kY == DType::kFloat32 && std::is_base_of<IntDecoder, Dec>::value &&
                            PermutedFields<Codes, hn::ScalableTag<float>>());
#endif

// Whether a span of n elements with one scale is looked up in the output tables.
template <DType kY, class Dec, class Codes>
constexpr bool SpanTakesFieldTable(int64_t n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  return kFieldTableFor<kY, Dec, Codes> && n >= kFieldTableFrom<kY>;
#else
  (void)n;
  return false;
#endif
}

// Elements [e, e + n) with one scale or one per element: groups of four vectors straight from
// the codes, the rest through DequantizeFew.
template <DType kY, Scales kScales, class Dec, class Codes>
HWY_NOINLINE void DequantizeSpan(const Dec& dec, const Codes codes, int64_t e, int64_t n,
                                 const float* HWY_RESTRICT s, const int32_t* HWY_RESTRICT z, void* HWY_RESTRICT y) {
  // codes by value, as in every function here that is not inlined: a reference to a local copy
  // passed on to one lets the copy's address escape, and the compiler then reloads the code
  // pointer from the stack after every vector store (int8 per tensor at 64K: 1.1-1.25x on AVX3_DL).
  constexpr bool kEach = kScales == Scales::kPerElement;
  char* out = static_cast<char*>(y);
  int64_t j = 0;
  bool stream = false;
  if constexpr (Codes::kVector) {
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const int64_t N = static_cast<int64_t>(hn::Lanes(df));
    int64_t head = std::min(n, (Codes::kPerByte - e % Codes::kPerByte) % Codes::kPerByte);
    if (n - head < 4 * N) return DequantizeFew<kY, kScales>(dec, codes, e, n, s, z, out);  // no whole group
    if constexpr (HWY_ARCH_X86 && !kEach) {
      // Long outputs: the vector loop starts at y's first cache-line boundary when that element
      // also starts a byte of codes (else at the codes' first byte), so that no store straddles
      // two lines; long float32 ones then take non-temporal stores.
      const uintptr_t a = reinterpret_cast<uintptr_t>(out);
      constexpr int64_t kSize = YSize(kY);
      const bool streamed = kY == DType::kFloat32 && n >= kStreamFrom;  // whatever kAlignFrom is
      if ((n >= kAlignFrom || streamed) && a % kSize == 0) {
        const int64_t to_aligned = static_cast<int64_t>((64 - a % 64) % 64) / kSize;
        if ((e + to_aligned) % Codes::kPerByte == 0) {
          head = std::min(n, to_aligned);
          stream = streamed;
        }
      }
    }
    if (head > 0) DequantizeFew<kY, kScales>(dec, codes, e, head, s, z, out);
    j = head;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    if constexpr (!kEach && kFieldTableFor<kY, Dec, Codes>) {
      if (n - j >= kFieldTableFrom<kY>) {
        const bool streams = kY == DType::kFloat32 && Dec::kStreams &&
                             reinterpret_cast<uintptr_t>(out + j * YSize(kY)) % (N * sizeof(float)) == 0;
        j = DequantizeFieldTable<kY>(dec, codes, e, j, n, *s, z != nullptr ? *z : 0, stream || streams, out);
      }
    }
#endif
    const auto uz = hn::Set(di, z != nullptr ? *z : 0);
    // with_zps: z[j..] (kEach) or uz subtracted, else a constant zero.
    auto groups = [&](auto with_zps, auto folded) QLINEAR_INLINE_LAMBDA {
      constexpr bool kFolded = decltype(folded)::value;  // kUniform only
      const auto us = hn::Set(df, ScaleFor<kFolded, Dec>(*s));
      auto group = [&]() QLINEAR_INLINE_LAMBDA {  // elements [j, j + 4N)
        auto scaled = [&](auto v, int64_t i) QLINEAR_INLINE_LAMBDA {
          return hn::Mul(v, kEach ? hn::LoadU(df, s + i) : us);
        };
        auto zp = [&](int k) QLINEAR_INLINE_LAMBDA {
          if constexpr (!decltype(with_zps)::value) return hn::Zero(di);
          return kEach ? hn::LoadU(di, z + j + k * N) : uz;
        };
        dec.template Four<kFolded>(df, codes, e + j, zp, [&](auto v0, auto v1, auto v2, auto v3) QLINEAR_INLINE_LAMBDA {
          if constexpr (HWY_ARCH_X86 && kY == DType::kFloat32 && !kEach) {
            if (stream) {
              return StreamFour(df, scaled(v0, j), scaled(v1, j + N), scaled(v2, j + 2 * N), scaled(v3, j + 3 * N),
                                reinterpret_cast<float*>(out) + j);
            }
          }
          StoreGroup<kY>(dec, df, scaled(v0, j), scaled(v1, j + N), scaled(v2, j + 2 * N), scaled(v3, j + 3 * N),
                              out, j);
        });
      };
      for (; j + 4 * N <= n; j += 4 * N) group();
      if (j < n && j - head >= 4 * N && !stream) {
        // The tail of a span of at least one group: one more group, ending on the span's last
        // byte boundary, over elements already done (the same values again; outputs never
        // overlap inputs), not staged by DequantizeFew: rows of 1000 with a scale per column
        // ran at a third of the rate of rows of 1024 that way (int4, AVX3_DL).
        j = head + (n - head) / Codes::kPerByte * Codes::kPerByte - 4 * N;
        group();
        j += 4 * N;
      }
    };
    if constexpr (kEach) {  // a scale per vector: nothing to fold
      WithZeroPoints<Dec>(z != nullptr, [&](auto with_zps) QLINEAR_INLINE_LAMBDA {
        groups(with_zps, std::false_type());
      });
    } else {
      WithFolding(dec, [&](auto folded) QLINEAR_INLINE_LAMBDA {
        WithZeroPoints<Dec>(z != nullptr && *z != 0, [&](auto with_zps) QLINEAR_INLINE_LAMBDA {
          groups(with_zps, folded);
        });
      });
    }
  }
  if (j < n) {
    DequantizeFew<kY, kScales>(dec, codes, e + j, n - j, kEach ? s + j : s, kEach && z != nullptr ? z + j : z,
                               out + j * YSize(kY));
  }
  if (stream) hwy::FlushStream();  // order the streamed stores before the call returns
}

// Four consecutive rows of len elements that share per-element scales (per-axis on the last
// axis, blocks along an outer axis), rows byte-aligned: each group of four scale (and zero
// point) vectors is loaded once for the four rows. The rest of each row through DequantizeSpan.
template <DType kY, class Dec, class Codes>
HWY_NOINLINE void DequantizeFourRows(const Dec& dec, const Codes codes, int64_t e, int64_t len,
                                     const float* HWY_RESTRICT s, const int32_t* HWY_RESTRICT z, void* HWY_RESTRICT y) {
  const hn::ScalableTag<float> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  char* out = static_cast<char*>(y);
  int64_t j = 0;
  if constexpr (Codes::kVector) {
    const hn::RebindToSigned<decltype(df)> di;
    auto columns = [&](auto with_zps, auto folded) QLINEAR_INLINE_LAMBDA {
      constexpr bool kZps = decltype(with_zps)::value;
      constexpr bool kFolded = decltype(folded)::value;
      auto scales = [&](int64_t i) QLINEAR_INLINE_LAMBDA {
        const auto v = hn::LoadU(df, s + i);
        if constexpr (kFolded) {
          return hn::Mul(v, hn::Set(df, Dec::kFold));
        } else {
          return v;
        }
      };
      auto column = [&]() QLINEAR_INLINE_LAMBDA {  // columns [j, j + 4N) of the four rows
        const auto s0 = scales(j), s1 = scales(j + N), s2 = scales(j + 2 * N), s3 = scales(j + 3 * N);
        const auto z0 = kZps ? hn::LoadU(di, z + j) : hn::Zero(di);
        const auto z1 = kZps ? hn::LoadU(di, z + j + N) : hn::Zero(di);
        const auto z2 = kZps ? hn::LoadU(di, z + j + 2 * N) : hn::Zero(di);
        const auto z3 = kZps ? hn::LoadU(di, z + j + 3 * N) : hn::Zero(di);
        auto zp = [&](int k) QLINEAR_INLINE_LAMBDA { return k == 0 ? z0 : k == 1 ? z1 : k == 2 ? z2 : z3; };
        for (int64_t row = 0; row < 4; ++row) {
          const int64_t i = row * len + j;
          dec.template Four<kFolded>(df, codes, e + i, zp, [&](auto v0, auto v1, auto v2, auto v3) QLINEAR_INLINE_LAMBDA {
            StoreGroup<kY>(dec, df, hn::Mul(v0, s0), hn::Mul(v1, s1), hn::Mul(v2, s2), hn::Mul(v3, s3), out, i);
          });
        }
      };
      for (; j + 4 * N <= len; j += 4 * N) column();
      if (j < len && j >= 4 * N) {  // the last columns again, as DequantizeSpan's tail (len: whole bytes)
        j = len - 4 * N;
        column();
        j += 4 * N;
      }
    };
    if (z != nullptr) {  // zero points: integers, which have nothing to fold
      columns(std::true_type(), std::false_type());
    } else {
      WithFolding(dec, [&](auto folded) QLINEAR_INLINE_LAMBDA { columns(std::false_type(), folded); });
    }
  }
  if (j == len) return;
  for (int64_t row = 0; row < 4; ++row) {
    DequantizeSpan<kY, Scales::kPerElement>(dec, codes, e + row * len + j, len - j, s + j, z != nullptr ? z + j : z,
                                            out + (row * len + j) * YSize(kY));
  }
}

// Groups of four vectors from element e of a kBlocks run whose blocks are kPerBlock vectors
// (1 or 2) and whose first block starts at e: the group's blocks are k .. k + 4 / kPerBlock - 1,
// their scales broadcast from constant offsets. Returns the elements done (a multiple of 4N).
template <DType kY, int kPerBlock, class Dec, class Codes>
HWY_INLINE int64_t DequantizeSmallBlockGroups(const Dec& dec, const Codes& codes, int64_t e, int64_t count,
                                              const float* HWY_RESTRICT s, const int32_t* HWY_RESTRICT z,
                                              void* HWY_RESTRICT y) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  int64_t j = 0;
  WithZeroPoints<Dec>(z != nullptr, [&](auto with_zps) QLINEAR_INLINE_LAMBDA {
    WithFolding(dec, [&](auto folded) QLINEAR_INLINE_LAMBDA {
      constexpr bool kFolded = decltype(folded)::value;
      for (int64_t k = 0; j + 4 * N <= count; j += 4 * N, k += 4 / kPerBlock) {
        auto scaled = [&](auto v, int v_index) QLINEAR_INLINE_LAMBDA {
          return hn::Mul(v, hn::Set(df, ScaleFor<kFolded, Dec>(s[k + v_index / kPerBlock])));
        };
        auto zp = [&](int v) QLINEAR_INLINE_LAMBDA {
          if constexpr (decltype(with_zps)::value) return hn::Set(di, z[k + v / kPerBlock]);
          return hn::Zero(di);
        };
        dec.template Four<kFolded>(df, codes, e + j, zp, [&](auto v0, auto v1, auto v2, auto v3) QLINEAR_INLINE_LAMBDA {
          StoreGroup<kY>(dec, df, scaled(v0, 0), scaled(v1, 1), scaled(v2, 2), scaled(v3, 3), y, j);
        });
      }
    });
  });
  return j;
}

// A kBlocks run spanning more than one block, blocks of whole vectors (period and phase
// multiples of N, a byte-aligned start): groups of four vectors, each with its block's
// broadcast scale and zero point. Returns the elements done (a multiple of 4N).
template <DType kY, class Dec, class Codes>
HWY_INLINE int64_t DequantizeBlockGroups(const Dec& dec, const Codes codes, int64_t e, int64_t period,
                                         int64_t phase, int64_t count, const float* HWY_RESTRICT s,
                                         const int32_t* HWY_RESTRICT z, void* HWY_RESTRICT y) {
  int64_t j = 0;
  if constexpr (Codes::kVector) {
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const int64_t N = static_cast<int64_t>(hn::Lanes(df));
    const int64_t per_block = period / N;
    // Blocks of one or two vectors starting with the run: a group's blocks at fixed offsets.
    if (phase == 0 && per_block == 1) return DequantizeSmallBlockGroups<kY, 1>(dec, codes, e, count, s, z, y);
    if (phase == 0 && per_block == 2) return DequantizeSmallBlockGroups<kY, 2>(dec, codes, e, count, s, z, y);
    // Blocks of a multiple of four vectors, the run starting on a group boundary of its block:
    // one scale (and zero point) per group.
    if (per_block % 4 == 0 && (phase / N) % 4 == 0) {
      const int64_t groups_per_block = per_block / 4;
      int64_t k = 0, left = groups_per_block - phase / (4 * N);
      WithZeroPoints<Dec>(z != nullptr, [&](auto with_zps) QLINEAR_INLINE_LAMBDA {
        WithFolding(dec, [&](auto folded) QLINEAR_INLINE_LAMBDA {
          constexpr bool kFolded = decltype(folded)::value;
          for (; j + 4 * N <= count; j += 4 * N) {
            const auto vs = hn::Set(df, ScaleFor<kFolded, Dec>(s[k]));
            const auto vz = decltype(with_zps)::value ? hn::Set(di, z[k]) : hn::Zero(di);
            dec.template Four<kFolded>(df, codes, e + j, [&](int) QLINEAR_INLINE_LAMBDA { return vz; },
                                       [&](auto v0, auto v1, auto v2, auto v3) QLINEAR_INLINE_LAMBDA {
                                         StoreGroup<kY>(dec, df, hn::Mul(v0, vs), hn::Mul(v1, vs), hn::Mul(v2, vs),
                                                        hn::Mul(v3, vs), y, j);
                                       });
            if (--left == 0) {
              ++k;
              left = groups_per_block;
            }
          }
        });
      });
      return j;
    }
    int64_t k = 0, left = per_block - phase / N;  // block of the next vector, vectors left in it
    int64_t kk[4];                                // blocks of the group's vectors
    auto scaled = [&](auto v, int v_index) QLINEAR_INLINE_LAMBDA { return hn::Mul(v, hn::Set(df, s[kk[v_index]])); };
    auto zp = [&](int v) QLINEAR_INLINE_LAMBDA { return z != nullptr ? hn::Set(di, z[kk[v]]) : hn::Zero(di); };
    for (; j + 4 * N <= count; j += 4 * N) {
      for (int v = 0; v < 4; ++v) {
        kk[v] = k;
        if (--left == 0) {
          ++k;
          left = per_block;
        }
      }
      dec.Four(df, codes, e + j, zp, [&](auto v0, auto v1, auto v2, auto v3) QLINEAR_INLINE_LAMBDA {
        StoreGroup<kY>(dec, df, scaled(v0, 0), scaled(v1, 1), scaled(v2, 2), scaled(v3, 3), y, j);
      });
    }
  }
  return j;
}

template <DType kY, class Dec, class Codes>
HWY_NOINLINE void DequantizeBlocks(const Dec& dec, const Codes codes, int64_t e, const Run& run, const float* s,
                                   const int32_t* z, void* HWY_RESTRICT y) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t period = run.period, phase = run.phase, count = run.count;
  char* out = static_cast<char*>(y);
  int64_t j = 0;
  if (period % N == 0 && phase % N == 0 && e % Codes::kPerByte == 0) {
    j = DequantizeBlockGroups<kY>(dec, codes, e, period, phase, count, s, z, out);
  }
  if constexpr (Codes::kVector) {
    // A rest of at most a group's elements over more than one block (a row's end after the
    // groups): one call with each element's scale (and zero point), not one per block.
    const int64_t rest = count - j;
    if (rest <= 4 * N && rest > period - (phase + j) % period) {
      const hn::ScalableTag<float> df;
      const hn::RebindToSigned<decltype(df)> di;
      constexpr size_t kMax = hn::MaxLanes(df);
      // After at least one group, the rest is one more group ending on the run's last byte
      // boundary, over elements already done (the same values again), with each element's
      // scale: not staged (blocks of 32 along rows of 1000 spent most of a row's time there).
      // Else the rest is staged (DequantizeFew).
      const int64_t whole = count / Codes::kPerByte * Codes::kPerByte;
      const int64_t from = j >= 4 * N ? whole - 4 * N : j;  // j >= 4N: whole >= j
      // Filled a vector at a time, a block's last vector passing its end: indices up to
      // count - from + N - 2 <= 5N + kPerByte - 3.
      HWY_ALIGN float sb[6 * kMax];
      HWY_ALIGN int32_t zb[6 * kMax];
      int64_t k = (phase + from) / period;
      for (int64_t i = 0, len = period - (phase + from) % period; i < count - from; i += len, len = period, ++k) {
        const auto vs = hn::Set(df, s[k]);
        const auto vz = hn::Set(di, z != nullptr ? z[k] : 0);
        for (int64_t t = 0; t < std::min(len, count - from - i); t += N) {
          hn::StoreU(vs, df, sb + i + t);
          hn::StoreU(vz, di, zb + i + t);
        }
      }
      const int32_t* zs = z != nullptr ? zb : nullptr;
      if (from == j) {
        return DequantizeFew<kY, Scales::kPerElement>(dec, codes, e + j, rest, sb, zs, out + j * YSize(kY));
      }
      DequantizeSpan<kY, Scales::kPerElement>(dec, codes, e + from, 4 * N, sb, zs, out + from * YSize(kY));
      if (whole < count) {
        DequantizeFew<kY, Scales::kPerElement>(dec, codes, e + whole, count - whole, sb + 4 * N,
                                               zs != nullptr ? zs + 4 * N : nullptr, out + whole * YSize(kY));
      }
      return;
    }
  }
  int64_t len = period - (phase + j) % period;
  for (int64_t k = (phase + j) / period; j < count; ++k, j += len, len = period) {
    len = std::min(len, count - j);
    DequantizeSpan<kY, Scales::kUniform>(dec, codes, e + j, len, s + k, z != nullptr ? z + k : z,
                                         out + j * YSize(kY));
  }
}

// One run: elements [e, e + run.count) of the codes into y.
template <DType kY, class Dec, class Codes>
HWY_INLINE void DequantizeRun(const Dec& dec, const Codes& codes, RunKind kind, const Run& run, int64_t e,
                              const QuantParams& prm, void* HWY_RESTRICT y) {
  if (kind == RunKind::kBlocks && run.phase + run.count > run.period) {
    const RunParams p = ParamsOfRun(run, prm);
    return DequantizeBlocks<kY>(dec, codes, e, run, p.s, p.z, y);
  }
  char* out = static_cast<char*>(y);
  ForEachSpan(run, prm, [&](const Span& sp) {
    const int32_t* z = sp.z;
    if (sp.per_element) {
      DequantizeSpan<kY, Scales::kPerElement>(dec, codes, e + sp.j, sp.len, sp.s, z, out + sp.j * YSize(kY));
    } else {
      DequantizeSpan<kY, Scales::kUniform>(dec, codes, e + sp.j, sp.len, sp.s, z, out + sp.j * YSize(kY));
    }
  });
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
// Byte and packed codes into float32 on x86, kPerElement layouts: rows one after another (one
// stream of codes in, one of y out), the scales and zero points that rows share copied once to
// line-aligned buffers. Four rows at a time (DequantizeFourRows) keep four streams of each,
// which the wide stores feel most; 16-bit outputs measured slower this way (docs/performance.md).
// Below AVX-512, byte integers keep four rows (one row at a time measured 0.85-0.93x in cache on
// AVX2 and SSE4; float8 and packed codes 0.93-1.35x, below 1 only within the runs' spread).
// Rows longer than kRowCopyMax keep the four-row form.
constexpr int64_t kRowCopyMax = 2048;  // 16 KiB of stack for both buffers

// Plain decoders only: the Draining and Streaming forms of long outputs keep four rows (below).
template <class Dec, class Codes>
constexpr bool kRowsInSequence =
    !Dec::kDrains && !Dec::kStreams &&
    (Codes::kFieldBits > 0 ||
     ((std::is_same_v<Codes, MemoryCodes<int8_t>> || std::is_same_v<Codes, MemoryCodes<uint8_t>>) &&
      (HWY_TARGET <= HWY_AVX3 || !std::is_base_of<IntDecoder, Dec>::value)));

template <class Dec, class Codes, class One>
HWY_NOINLINE void DequantizeRowsInSequence(const Dec& dec, const Codes codes, const DequantizePlan& p,
                                           const QuantParams& prm, char* HWY_RESTRICT out, const One& one) {
  alignas(64) float sb[kRowCopyMax];
  alignas(64) int32_t zb[kRowCopyMax];
  // The previous row's scales; copied once a second row takes them (rows that share none, as
  // in blocks of one row, are not copied).
  const float* prev = nullptr;
  int64_t prev_count = 0;
  bool copied = false;
  ForEachRun(p.layout, p.begin, p.end, [&](const Run& r) {
    if (r.period != 1 || r.count > kRowCopyMax) return one(r);  // not in a kPerElement layout
    const RunParams rp = ParamsOfRun(r, prm);
    const float* s = rp.s;
    const int32_t* z = rp.z;
    if (rp.s == prev && r.count <= prev_count) {
      if (!copied) {
        const size_t bytes = static_cast<size_t>(prev_count) * sizeof(float);
        std::memcpy(sb, rp.s, bytes);
        if (rp.z != nullptr) std::memcpy(zb, rp.z, bytes);
        copied = true;
      }
      s = sb;
      z = rp.z != nullptr ? zb : nullptr;
    } else {
      prev = rp.s;
      prev_count = r.count;
      copied = false;
    }
    const int64_t e = r.start - p.begin;
    DequantizeSpan<DType::kFloat32, Scales::kPerElement>(dec, codes, e, r.count, s, z, out + e * YSize(DType::kFloat32));
  });
}
#endif

// Elements [p.begin, p.end); x and y point at element p.begin (a byte boundary if packed).
// kPerElement layouts take byte-aligned rows with the same scales four at a time (one load of
// the scales per four rows), except float8 and packed codes into float32 on x86 and byte
// integers on AVX-512 (rows one after another, DequantizeRowsInSequence: kRowsInSequence);
// float16/bfloat16 outputs of kStreamFrom elements or more (a call or a parallel piece) and
// float32 outputs that the loops stream (Streaming) one row at a time:
// where memory bounds the call, the streams of four rows ran them at 0.3-0.9x (float16,
// bfloat16) and 0.7-1.0x (streamed float32) of one row at a time (16M elements, Zen 5), while
// in cache four rows gain up to 1.6x. (Long float32 outputs staged in chunks keep four rows.)
template <DType kY, class Dec, class Codes>
void DequantizeAll(const Dec& dec, const Codes& codes, const DequantizePlan& p, const QuantParams& prm, void* y) {
  const RunKind kind = RunKindOf(p.layout);
  char* out = static_cast<char*>(y);
  auto one = [&](const Run& r) {
    const int64_t e = r.start - p.begin;
    DequantizeRun<kY>(dec, codes, kind, r, e, prm, out + e * YSize(kY));
  };
  if (kind == RunKind::kUniform && p.layout.granularity == Granularity::kPerAxis &&
      p.layout.inner % (4 * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()))) == 0 &&
      p.layout.inner < kAlignFrom && !SpanTakesFieldTable<kY, Dec, Codes>(p.layout.inner)) {
    // Per axis on an outer axis: consecutive rows of `inner` elements take consecutive
    // scales, so the rows of one sweep of the axis are a run of blocks of `inner`, one loop
    // for all of them instead of a call per row (int8 and float8 per row at 64K, AVX3_DL:
    // 1.15-1.19x). Rows of kAlignFrom or more keep their spans, which align y's stores, and
    // so do packed rows long enough for the output tables.
    auto blocks = [&](const Run& r) {
      const RunParams rp = ParamsOfRun(r, prm);
      const int64_t e = r.start - p.begin;
      DequantizeBlocks<kY>(dec, codes, e, r, rp.s, rp.z, out + e * YSize(kY));
    };
    return ForEachAxisSweep(p.layout, p.begin, p.end, [&](const Run& r) {
      if (r.phase == 0 || r.phase + r.count <= r.period) return blocks(r);
      // A run from inside a row: that row's rest alone, so that the rows after it start
      // their groups on a row (one scale per group) whatever the phase.
      const int64_t head = r.period - r.phase;
      blocks(Run{r.start, head, r.scale_first, r.period, r.phase});
      blocks(Run{r.start + head, r.count - head, r.scale_first + 1, r.period, 0});
    });
  }
  if (kind != RunKind::kPerElement || (kY != DType::kFloat32 && ElementsForChoices(p) >= kStreamFrom) || Dec::kStreams) {
    return ForEachRun(p.layout, p.begin, p.end, one);
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
  if constexpr (kY == DType::kFloat32 && kRowsInSequence<Dec, Codes>) {
    const int64_t row = p.layout.inner == 1 ? p.layout.axis_dim : p.layout.inner;
    if (row <= kRowCopyMax) return DequantizeRowsInSequence(dec, codes, p, prm, out, one);
  }
#endif
  ForEachRowGroup(
      p.layout, p.begin, p.end,
      [&](const Run& r) { return (r.start - p.begin) % Codes::kPerByte == 0 && r.count % Codes::kPerByte == 0; },
      [&](const Run& first) {
        const RunParams rp = ParamsOfRun(first, prm);
        const int64_t e = first.start - p.begin;
        DequantizeFourRows<kY>(dec, codes, e, first.count, rp.s, rp.z, out + e * YSize(kY));
      },
      one);
}

// The decoder and the code source of input type kX.
template <DType kX>
auto DecoderFor() {
  if constexpr (Info(kX).kind == Kind::kMiniFloat) {
    return MiniFloatDecoder<kX>();
  } else {
    return IntDecoder();
  }
}
template <DType kX>
auto CodesFor(const void* x) {
  if constexpr (Info(kX).bits < 8) {
    return PackedCodes<Info(kX).bits, Info(kX).kind == Kind::kInt && Info(kX).is_signed>{static_cast<const uint8_t*>(x)};
  } else {
    return MemoryCodes<CodeStorage<kX>>{static_cast<const CodeStorage<kX>*>(x)};
  }
}

// Elements per chunk of a staged call (below): two buffers of 8 KiB of float32 output, which
// stay in L1 together.
constexpr int64_t kStagedChunk = 2048;

struct LineDrain;  // x86 only (below)
#if HWY_ARCH_X86
// Whole cache lines of a staged chunk waiting to be streamed to y. Step streams the next four
// vectors of them: a draining decoder (below) takes one step per group it decodes, so that one
// chunk's lines go out to memory while the next chunk is decoded.
struct LineDrain {
  const float* from = nullptr;
  float* to = nullptr;  // 64-byte aligned
  int64_t left = 0;     // floats, whole lines

  template <class DF>
  HWY_INLINE void Step(DF df) {
    const int64_t N = static_cast<int64_t>(hn::Lanes(df));
    if (HWY_LIKELY(left >= 4 * N)) {
      for (int64_t k = 0; k < 4 * N; k += N) hn::Stream(hn::LoadU(df, from + k), df, to + k);
      from += 4 * N;
      to += 4 * N;
      left -= 4 * N;
    } else if (left > 0) {
      Rest(df);
    }
  }
  template <class DF>
  HWY_INLINE void Rest(DF df) {
    const int64_t N = static_cast<int64_t>(hn::Lanes(df));  // divides a line's 16 floats
    for (; left > 0; left -= N, from += N, to += N) hn::Stream(hn::LoadU(df, from), df, to);
  }
};

// Dec, taking a step of the drain before each group of four vectors it decodes.
template <class Dec>
struct Draining : Dec {
  static constexpr bool kDrains = true;
  LineDrain* drain = nullptr;
  template <bool kFolded = false, class DF, class Codes, class Zp, class F>
  HWY_INLINE void Four(DF df, const Codes& codes, int64_t e, Zp&& zp, F&& f) const {
    drain->Step(df);
    Dec::template Four<kFolded>(df, codes, e, std::forward<Zp>(zp), std::forward<F>(f));
  }
};

// Dec, its loops' float32 groups written with non-temporal stores (StoreGroup).
template <class Dec>
struct Streaming : Dec {
  static constexpr bool kStreams = true;
};

// Whether a long float32 output of a per-axis or blocked call is streamed by the loops
// themselves (Streaming): y on a cache line and every run and block of the layout starting
// on one (its lengths whole lines), so that the loops' groups of four vectors fill lines in
// address order, and runs of at least four groups (shorter ones would mostly go through
// DequantizeFew's normal stores). Others are staged (below).
inline bool StreamsInPlace(const DequantizePlan& p, const void* y) {
  constexpr int64_t kLine = 16;  // float32 elements per 64-byte line
  const Layout& l = p.layout;
  const int64_t unit = l.inner > 1 ? l.inner : l.axis_dim;
  if (unit < 16 * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()))) return false;
  const RunKind kind = RunKindOf(l);
  if (kind == RunKind::kShortBlocks) return false;
  if (kind == RunKind::kBlocks && l.block % kLine != 0 && l.block < l.axis_dim) return false;
  return reinterpret_cast<uintptr_t>(y) % 64 == 0 && p.begin % kLine == 0 && unit % kLine == 0;
}

// A long float32 output of a per-axis or blocked call: chunks of kStagedChunk elements are
// decoded by the usual loops into an aligned buffer on the stack, and copied to y with
// non-temporal stores, whole cache lines of y at a time. The per-row and per-block loops store
// at the output's own alignment (malloc's 16 bytes), which non-temporal stores cannot take;
// the copy can, and skipping each line's read for ownership outweighs the extra pass through
// L1 (docs/performance.md). Two buffers alternate: chunk c's lines are streamed by the decoder
// of chunk c + 1 (Draining), a step per group, so that the stores to memory overlap the
// decoding; what is left of them after that is streamed before the next chunk. Chunks start at
// multiples of kStagedChunk, so the loops keep their row and block phases; the elements of a
// line that two chunks share are copied to the front of the next chunk's buffer. The elements
// before y's first line boundary and after its last one take plain copies. false, with nothing
// written, when y is not 4-aligned.
template <class Direct>
HWY_NOINLINE bool DequantizeStaged(const DequantizePlan& p, void* HWY_RESTRICT y, const Direct& direct) {
  constexpr int64_t kLine = 16;  // float32 elements per 64-byte line
  const uintptr_t a = reinterpret_cast<uintptr_t>(y);
  if (a % 4 != 0) return false;
  const hn::ScalableTag<float> df;
  const int64_t n = p.end - p.begin;
  const int64_t head = static_cast<int64_t>((64 - a % 64) % 64 / 4);  // elements before y's first line
  float* out = static_cast<float*>(y);
  HWY_ALIGN float bufs[2][kLine + kStagedChunk];
  LineDrain drain;
  int64_t queued = 0;            // y[0, queued) is written or in the drain
  const float* prev = nullptr;   // the previous chunk's buffer, element prev_c at prev
  int64_t prev_c = 0;
  for (int64_t c = 0, i = 0; c < n; c += kStagedChunk, ++i) {
    const int64_t len = std::min(kStagedChunk, n - c);
    float* const chunk = bufs[i % 2] + kLine;
    if (queued < c) {  // a line shared with the previous chunk: its first part
      std::memcpy(chunk - (c - queued), prev + (queued - prev_c), static_cast<size_t>(c - queued) * sizeof(float));
    }
    DequantizePlan q = p;
    q.begin = p.begin + c;
    q.end = q.begin + len;
    q.x = static_cast<const char*>(p.x) + ByteOffset(p.x_type, c);
    direct(q, chunk, &drain);
    drain.Rest(df);
    const int64_t end = c + len;
    const float* from = chunk - (c - queued);
    if (queued < head) {  // the first chunk: up to y's first line boundary
      const int64_t k = std::min(head, end);
      std::memcpy(out + queued, from, static_cast<size_t>(k - queued) * sizeof(float));
      from += k - queued;
      queued = k;
    }
    const int64_t lines = (end - queued) / kLine * kLine;
    drain.from = from;
    drain.to = out + queued;
    drain.left = lines;
    queued += lines;
    prev = chunk;
    prev_c = c;
  }
  drain.Rest(df);
  std::memcpy(out + queued, prev + (queued - prev_c), static_cast<size_t>(n - queued) * sizeof(float));
  hwy::FlushStream();  // order the streamed stores before the call returns
  return true;
}
#endif  // HWY_ARCH_X86

// Vector DequantizeLinear: one instantiation per (code source, decoder, output type), generated
// from the type list.
// drain (x86): float32 output into a staged chunk, taking steps of the drain as it goes.
// streaming (x86): float32 output through Streaming (StreamsInPlace).
inline void DequantizeVectorDirect(const DequantizePlan& p, const QuantParams& prm, void* y,
                                   [[maybe_unused]] LineDrain* drain = nullptr,
                                   [[maybe_unused]] bool streaming = false) {
  WithDType(p.x_type, [&](auto xt) {
    constexpr DType kX = decltype(xt)::kType;
    if constexpr (IsQuantized(kX)) {
      auto dec = DecoderFor<kX>();
      if constexpr (decltype(dec)::kFoldShift != 0) dec.fold = prm.moderate_scales;
      dec.normal_products = prm.normal_products;
      dec.bf16_products = prm.bf16_products;
      const auto codes = CodesFor<kX>(p.x);
#if HWY_ARCH_X86
      if (drain != nullptr) {
        Draining<decltype(dec)> draining;
        static_cast<decltype(dec)&>(draining) = dec;
        draining.drain = drain;
        return DequantizeAll<DType::kFloat32>(draining, codes, p, prm, y);
      }
      if (streaming) {
        Streaming<decltype(dec)> streams;
        static_cast<decltype(dec)&>(streams) = dec;
        DequantizeAll<DType::kFloat32>(streams, codes, p, prm, y);
        hwy::FlushStream();  // order the streamed stores before the call returns
        return;
      }
#endif
      switch (p.y_type) {
        case DType::kFloat16: return DequantizeAll<DType::kFloat16>(dec, codes, p, prm, y);
        case DType::kBFloat16: return DequantizeAll<DType::kBFloat16>(dec, codes, p, prm, y);
        default: return DequantizeAll<DType::kFloat32>(dec, codes, p, prm, y);
      }
    }
  });
}

// Per tensor, DequantizeSpan streams long outputs itself; other granularities are streamed by
// their loops where lines allow (StreamsInPlace), else staged.
inline void DequantizeVector(const DequantizePlan& p, const QuantParams& prm, void* y) {
#if HWY_ARCH_X86
  if (p.y_type == DType::kFloat32 && p.layout.granularity != Granularity::kPerTensor &&
      ElementsForChoices(p) >= kStreamFrom) {
    if (StreamsInPlace(p, y)) return DequantizeVectorDirect(p, prm, y, nullptr, true);
    if (DequantizeStaged(p, y, [&](const DequantizePlan& q, void* out, LineDrain* drain) {
          DequantizeVectorDirect(q, prm, out, drain);
        })) {
      return;
    }
  }
#endif
  DequantizeVectorDirect(p, prm, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_DEQUANTIZE_INL_H_
