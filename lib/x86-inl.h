// Per-target operations that x86 does better with AVX-512 instructions Highway 1.0.3 does not
// expose (masked VPTESTMD, VPMOVDB/VPMOVDW, VPERMT2B, VPERMB with merge masks, VCVTNE2PS2BF16) or where an x86
// quirk saves an operation (MAXPS returns its second operand for a NaN), and the SSE4/AVX2
// packing of sub-byte codes (PMADDUBSW joins fields where Highway has no such op). Each is a named
// function with a plain Highway form for every other target. Each replaced form was measured.
// Owns: how codes reach memory and registers and how the boundary flags are tested. Must not know: encoders,
// formats, tensors.
#if defined(QLINEAR_LIB_X86_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_X86_INL_H_
#undef QLINEAR_LIB_X86_INL_H_
#else
#define QLINEAR_LIB_X86_INL_H_
#endif

#include <stdint.h>

#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "lib/formats.h"

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

// Keeps the memory accesses before it before those after it in the generated code (no
// instruction is emitted): independent stores stay in address order (dequantize-inl.h StoreFourY).
#if defined(__GNUC__) || defined(__clang__)
#define QLINEAR_KEEP_ORDER() __asm__ __volatile__("" ::: "memory")
#else
#define QLINEAR_KEEP_ORDER()
#endif

#undef QLINEAR_AVX512  // per target: this file is included once for each
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define QLINEAR_AVX512 1
#else
#define QLINEAR_AVX512 0
#endif

// ok without the lanes of v (int32) that have none of `bits` set. On AVX-512 one VPTESTMD under
// the mask ok: the flags of a group of vectors chain through it and one KORTEST tests them all
// (a VPTESTNMD per vector, KORWs to join them and a KORTEST were 8 of 27 ops per 64 int8 codes;
// Highway's And + Eq cost 12% more under GCC).
template <class DF, class VI>
HWY_INLINE hn::Mask<DF> KeepIfAnyBitSet(DF df, hn::Mask<DF> ok, VI v, int32_t bits) {
  const hn::RebindToSigned<DF> di;
#if QLINEAR_AVX512
  if constexpr (hn::MaxLanes(df) == 16) {
    return hn::Mask<DF>{_mm512_mask_test_epi32_mask(ok.raw, v.raw, hn::Set(di, bits).raw)};
  }
#endif
  return hn::AndNot(hn::RebindMask(df, hn::Eq(hn::And(v, hn::Set(di, bits)), hn::Zero(di))), ok);
}

// max(v, lo) with NaN lanes -> lo. N.B. MAXPS returns its second operand when either is NaN, so
// on x86 Highway's Max (MAXPS v, lo) already does it; elsewhere NaN lanes are selected.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V MaxNaNToLower(DF df, V v, V lo) {
#if HWY_ARCH_X86
  (void)df;
  return hn::Max(v, lo);
#else
  return hn::IfThenElse(hn::IsNaN(v), lo, hn::Max(v, lo));
#endif
}

// v clamped to [lo, hi] with NaN -> lo, as int32 bits; lo > 0. On x86 the upper clamp is an
// integer min (after MAXPS every lane is a positive float, whose bits order as int32), off the
// FP ports that the FMA and MAXPS use.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> ClampPositiveBits(DF df, V v, V lo, V hi) {
  const hn::RebindToSigned<DF> di;
#if HWY_ARCH_X86
  return hn::Min(hn::BitCast(di, MaxNaNToLower(df, v, lo)), hn::BitCast(di, hi));
#else
  return hn::BitCast(di, hn::Min(MaxNaNToLower(df, v, lo), hi));
#endif
}

#if QLINEAR_AVX512
// float4e2m1 codes of t = x * r + zoff: MiniFloatEncoder's reciprocal path in about 12
// operations per 16 lanes instead of 21. The rounding thresholds of |t| (0.25, 0.75, 1.25, 1.75,
// 2.5, 3.5, 5) are all quarters, so the magnitude code is a 32-entry table (one VPERMT2D) of
// k = floor(4 |t|). v = min(|t|, 5.625) + (8 + 2^-17) holds 4 |t| in fixed point: k in bits
// 18..22 of its bits, the fraction in bits 0..17 raised by 8 units (2^-15 of a quarter). A lane
// is cleared in ok when that fraction is below 16 units, i.e. when 4 |t| may lie within 2^-15
// of an integer: the argument above MiniFloatEncoder::Reciprocal bounds |t - fl(fl(x / s) +
// zp)| by 2^-24 * 46.5 for |t| < 5.625 (|q| <= |t| + 6), below 3 units, and the rounding of v
// adds half a unit; exact ties land there too. Near zero that window (|t| < 2^-17) also
// covers the sign, which may differ between the paths only within 2^-19.8 of zero. Lanes with
// x = 0 are kept: t is exactly zoff on both paths. NaN lanes are cleared: MINPS returns its
// second operand, the NaN, and the integer min maps it onto 14.0, whose fraction bits are zero.
template <class DF, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE VI Float4Reciprocal(DF /*df*/, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DF> zoff, hn::Mask<DF>* ok) {
  const __m512 t = _mm512_fmadd_ps(x.raw, r.raw, zoff.raw);
  const __m512 a = _mm512_min_ps(_mm512_set1_ps(5.625f), _mm512_abs_ps(t));
  const __m512i v = _mm512_min_epi32(_mm512_castps_si512(_mm512_add_ps(a, _mm512_set1_ps(8.0f + 0x1p-17f))),
                                     _mm512_set1_epi32(0x41600000));  // 14.0
  const __mmask16 zero_x = _mm512_mask_cmp_ps_mask(ok->raw, x.raw, _mm512_setzero_ps(), _CMP_EQ_OQ);
  ok->raw = static_cast<__mmask16>(_mm512_mask_test_epi32_mask(ok->raw, v, _mm512_set1_epi32(0x3FFF0)) | zero_x);
  const __m512i low = _mm512_setr_epi32(0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 6);  // k = 0..15
  const __m512i high = _mm512_setr_epi32(6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);  // 16..31
  const __m512i magnitude = _mm512_permutex2var_epi32(low, _mm512_srli_epi32(v, 18), high);
  // | (sign of t) << 3: -0 is 0x8 too.
  return VI{_mm512_ternarylogic_epi32(magnitude, _mm512_srai_epi32(_mm512_castps_si512(t), 28),
                                      _mm512_set1_epi32(8), 0xF8)};
}
#endif

#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
// The same table on AVX2 and SSE4, which have no 32-entry permute: k's byte (0x40 + k; the lane's
// other bytes are 0x10 and 0, which pick entry 0 = 0) clamped to k = 15 indexes one PSHUFB of
// the first 16 entries (entry 15 is 6, as for k = 16..19), and k >= 20 (v >= 13.0) adds one:
// about 18 operations per vector where the binade form takes 24. Same v, same flags, same NaN
// lanes (MINPS takes its second operand here too). SSE4 has no FMA: rounding x * r before the
// add moves t by under one more unit, inside the flagged window.
template <class DF, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE VI Float4ReciprocalByBytes(DF df, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DF> zoff, hn::Mask<DF>* ok) {
  const hn::RebindToSigned<DF> di;
  const hn::Repartition<uint8_t, DF> d8;
  const auto t = hn::MulAdd(x, r, zoff);
  const auto a = hn::Min(hn::Set(df, 5.625f), hn::Abs(t));
  const auto v = hn::Min(hn::BitCast(di, hn::Add(a, hn::Set(df, 8.0f + 0x1p-17f))), hn::Set(di, 0x41600000));
  const auto near = hn::RebindMask(df, hn::Eq(hn::And(v, hn::Set(di, 0x3FFF0)), hn::Zero(di)));
  *ok = hn::AndNot(hn::AndNot(hn::Eq(x, hn::Zero(df)), near), *ok);
  alignas(16) static constexpr uint8_t kLow[16] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 6};  // k = 0..15
  const auto index = hn::Min(hn::BitCast(d8, hn::ShiftRight<18>(v)), hn::Set(d8, uint8_t{0x4F}));
  const auto low = hn::BitCast(di, hn::TableLookupBytes(hn::LoadDup128(d8, kLow), index));
  const auto magnitude = hn::Sub(low, hn::VecFromMask(di, hn::Gt(v, hn::Set(di, 0x41500000 - 1))));
  return hn::OrAnd(magnitude, hn::ShiftRight<28>(hn::BitCast(di, t)), hn::Set(di, 8));
}
#endif

// ---- storing code vectors (int32 lanes, each already in TOut's range) -------------------------

// Whether StoreCodes keeps only the low bits of each lane (VPMOVDB) rather than saturating
// (DemoteTo): an encoder may then leave high bits that the store drops.
template <class DF, class TOut>
constexpr bool kTruncatingStore = QLINEAR_AVX512 && sizeof(TOut) == 1 && hn::MaxLanes(DF()) == 16;

template <class DF, class TOut>
HWY_INLINE void StoreCodes(DF df, hn::Vec<hn::RebindToSigned<DF>> v, TOut* HWY_RESTRICT out) {
#if QLINEAR_AVX512
  // One VPMOVDB/VPMOVDW instead of DemoteTo's two packs and a permute (the narrowing bounded
  // the int8 loop).
  if constexpr (sizeof(TOut) == 1 && hn::MaxLanes(df) == 16) {
    return _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(v.raw));
  } else if constexpr (sizeof(TOut) == 2 && hn::MaxLanes(df) == 16) {
    return _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(v.raw));
  }
#endif
  const hn::Rebind<TOut, DF> dout;
  hn::StoreU(hn::DemoteTo(dout, v), dout, out);
}

// The first n codes of one vector (tails).
template <class DF, class TOut>
HWY_INLINE void StorePartialCodes(DF df, hn::Vec<hn::RebindToSigned<DF>> v, size_t n, TOut* HWY_RESTRICT out) {
  HWY_ALIGN TOut codes[hn::MaxLanes(df)];
  StoreCodes(df, v, codes);
  std::memcpy(out, codes, n * sizeof(TOut));
}

#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
// A VPERMT2B/VPERMB index: byte k takes byte (k / group) * stride + first + k % group of the
// source (for VPERMT2B, bit 6 picks the second vector; only the low 7 bits count).
struct alignas(64) ByteIndex {
  uint8_t b[64];
};
constexpr ByteIndex StridedBytes(int stride, int first, int group) {
  ByteIndex t{};
  for (int k = 0; k < 64; ++k) t.b[k] = static_cast<uint8_t>((k / group) * stride + first + k % group);
  return t;
}
// Bytes 0..31: the low byte of each lane of c0 then c1 (one VPERMT2B).
HWY_INLINE __m512i LowBytesOfPair(__m512i c0, __m512i c1) {
  static constexpr ByteIndex kLowBytes = StridedBytes(4, 0, 1);
  return _mm512_permutex2var_epi8(c0, _mm512_load_si512(kLowBytes.b), c1);
}
// Bytes 0..63: the low byte of each lane of c0, c1, c2, c3 (two VPERMT2B and an insert).
HWY_INLINE __m512i LowBytesOfFour(__m512i c0, __m512i c1, __m512i c2, __m512i c3) {
  const __m512i lo = LowBytesOfPair(c0, c1), hi = LowBytesOfPair(c2, c3);
  return _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1);
}
#endif

#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
// Vector v (0..3) of a group of 64 packed kBits-wide fields whose bytes are in `bytes`: lane j
// gets the byte holding field 16 v + j (one VPERMB) shifted right to put the field at bit 0 (one
// VPSRLVD; kInPlace: not shifted, the field stays at bit kBits * (j % (8 / kBits))); the bits
// beside the field are not defined. Replaces an extract and a widening per vector of the generic
// unpacking (FourBytes in dequantize-inl.h), both shuffles.
template <int kBits, bool kInPlace>
HWY_INLINE __m512i FieldLanes(__m512i bytes, int v) {
  constexpr int kPerByte = 8 / kBits;
  struct Tables {
    ByteIndex index[4];
    alignas(64) uint32_t shift[16];
  };
  static constexpr Tables kTables = [] {
    Tables t{};
    for (int w = 0; w < 4; ++w) {
      for (int k = 0; k < 64; ++k) t.index[w].b[k] = static_cast<uint8_t>(w * 16 / kPerByte + (k / 4) / kPerByte);
    }
    for (int j = 0; j < 16; ++j) t.shift[j] = static_cast<uint32_t>(kBits * (j % kPerByte));
    return t;
  }();
  const __m512i spread = _mm512_permutexvar_epi8(_mm512_load_si512(kTables.index[v].b), bytes);
  if constexpr (kInPlace) return spread;
  return _mm512_srlv_epi32(spread, _mm512_load_si512(kTables.shift));
}
#endif

#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
// The same on AVX2 (8 lanes, a group of 32 fields): `bytes` holds the group's bytes in both
// 128-bit blocks, so one in-block VPSHUFB reaches every field's byte.
template <int kBits, bool kInPlace>
HWY_INLINE __m256i FieldLanes(__m256i bytes, int v) {
  constexpr int kPerByte = 8 / kBits;
  struct Tables {
    alignas(32) uint8_t index[4][32];
    alignas(32) uint32_t shift[8];
  };
  static constexpr Tables kTables = [] {
    Tables t{};
    for (int w = 0; w < 4; ++w) {
      for (int k = 0; k < 32; ++k) t.index[w][k] = static_cast<uint8_t>(w * 8 / kPerByte + (k / 4) / kPerByte);
    }
    for (int j = 0; j < 8; ++j) t.shift[j] = static_cast<uint32_t>(kBits * (j % kPerByte));
    return t;
  }();
  const __m256i spread = _mm256_shuffle_epi8(bytes, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTables.index[v])));
  if constexpr (kInPlace) return spread;
  return _mm256_srlv_epi32(spread, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTables.shift)));
}
#endif

#if (QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL) || (HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2)
// f(u0, u1, u2, u3): int32 lanes holding the 4N packed fields starting at byte p (4N * kBits / 8
// bytes are read), by FieldLanes: at bit 0 or (kInPlace) where they are in their byte; the other
// bits are not defined. Only for a full vector of float32 lanes (16 on AVX3_DL, 8 on AVX2).
template <int kBits, bool kInPlace, class DF, class F>
HWY_INLINE void PermutedFieldVectors(DF df, const uint8_t* HWY_RESTRICT p, F&& f) {
  using VI = hn::Vec<hn::RebindToSigned<DF>>;
#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
  static_assert(hn::MaxLanes(df) == 16, "AVX3_DL: 16 lanes");
  const __m512i bytes = kBits == 4 ? _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))
                                   : _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#else
  static_assert(hn::MaxLanes(df) == 8, "AVX2: 8 lanes");
  __m256i bytes;
  if constexpr (kBits == 4) {
    bytes = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {  // one broadcast load (VPBROADCASTQ), not a load and an insert
    int64_t group;
    std::memcpy(&group, p, sizeof(group));
    bytes = _mm256_set1_epi64x(group);
  }
#endif
  f(VI{FieldLanes<kBits, kInPlace>(bytes, 0)}, VI{FieldLanes<kBits, kInPlace>(bytes, 1)},
    VI{FieldLanes<kBits, kInPlace>(bytes, 2)}, VI{FieldLanes<kBits, kInPlace>(bytes, 3)});
}
#endif

// The lanes of table picked by the low log2(N) bits of each lane of index (the bits above not
// defined): one VPERMPS on AVX2 and AVX-512, which reads those bits only; elsewhere the index is
// masked first.
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> PermuteByLowBits(DF df, hn::Vec<DF> table, VI index) {
#if QLINEAR_AVX512
  if constexpr (hn::MaxLanes(df) == 16) return hn::Vec<DF>{_mm512_permutexvar_ps(index.raw, table.raw)};
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
  if constexpr (hn::MaxLanes(df) == 8) return hn::Vec<DF>{_mm256_permutevar8x32_ps(table.raw, index.raw)};
#endif
  const hn::RebindToSigned<DF> di;
  const auto low = hn::Set(di, static_cast<int32_t>(hn::Lanes(df) - 1));
  return hn::TableLookupLanes(table, hn::IndicesFromVec(df, hn::And(index, low)));
}

#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
// The high and low bytes of 128 bfloat16 values, entry k for byte codes k and k | 0x80.
struct BF16Table {
  ByteIndex hi[2], lo[2];
};
// f(v0, v1, v2, v3): the float32 values of the 64 byte codes at p, whose bit 7 is the sign and
// whose low 7 bits index table. Two VPERMT2B look up the bytes of 64 values at once, the sign is
// or'ed into the high bytes, and one zero-masked VPERMT2B per vector puts each lane's two bytes at
// the top of its float32: 9 shuffles per 64 codes, where widening codes and building float16 bits
// costs 12 and a float16 conversion per vector. kNaN80: code 0x80 is the positive NaN (fnuz).
template <bool kNaN80, class DF, class F>
HWY_INLINE void FourFromBF16Table(DF /*df*/, const BF16Table& table, const uint8_t* HWY_RESTRICT p, F&& f) {
  const __m512i codes = _mm512_loadu_si512(p);
  __m512i hi = _mm512_permutex2var_epi8(_mm512_load_si512(table.hi[0].b), codes, _mm512_load_si512(table.hi[1].b));
  __m512i lo = _mm512_permutex2var_epi8(_mm512_load_si512(table.lo[0].b), codes, _mm512_load_si512(table.lo[1].b));
  hi = _mm512_or_si512(hi, _mm512_and_si512(codes, _mm512_set1_epi8(static_cast<char>(0x80))));
  if constexpr (kNaN80) {  // bfloat16 0x7FC0
    const __mmask64 nan = _mm512_cmpeq_epi8_mask(codes, _mm512_set1_epi8(static_cast<char>(0x80)));
    hi = _mm512_mask_mov_epi8(hi, nan, _mm512_set1_epi8(0x7F));
    lo = _mm512_mask_mov_epi8(lo, nan, _mm512_set1_epi8(static_cast<char>(0xC0)));
  }
  struct Places {
    ByteIndex v[4];
  };
  // Vector v, lane j: byte 2 from lo[16 v + j], byte 3 from hi[16 v + j] (bit 6: the second table).
  static constexpr Places kPlaces = [] {
    Places t{};
    for (int v = 0; v < 4; ++v) {
      for (int j = 0; j < 16; ++j) {
        t.v[v].b[4 * j + 2] = static_cast<uint8_t>(16 * v + j);
        t.v[v].b[4 * j + 3] = static_cast<uint8_t>(64 + 16 * v + j);
      }
    }
    return t;
  }();
  constexpr __mmask64 kTopHalves = 0xCCCCCCCCCCCCCCCCull;
  auto lanes = [&](int v) QLINEAR_INLINE_LAMBDA {
    return hn::Vec<DF>{_mm512_castsi512_ps(_mm512_maskz_permutex2var_epi8(kTopHalves, lo, _mm512_load_si512(kPlaces.v[v].b), hi))};
  };
  f(lanes(0), lanes(1), lanes(2), lanes(3));
}
#endif

#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
// Four vectors of byte codes (int32 lanes, exact codes of TOut; others saturate) to their 4N
// bytes in element order: two packs to 16-bit lanes, one to bytes and (AVX2, whose packs work
// per 128-bit half: half h holds lanes 4h..4h+3 of each vector) one permute of 32-bit lanes.
// Narrowing each vector by itself took two packs and a permute per vector, a quarter of the
// int8 loop.
template <class TOut, class V>
HWY_INLINE auto BytesOfFour(V c0, V c1, V c2, V c3) {
  // Signed packs to 16 bits for both: a lane beyond the range still saturates to the bound in
  // the byte pack, as DemoteTo would.
  constexpr bool kSigned = std::is_signed_v<TOut>;
#if HWY_TARGET == HWY_AVX2
  const __m256i w01 = _mm256_packs_epi32(c0.raw, c1.raw), w23 = _mm256_packs_epi32(c2.raw, c3.raw);
  const __m256i b = kSigned ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
  return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
#else
  const __m128i w01 = _mm_packs_epi32(c0.raw, c1.raw), w23 = _mm_packs_epi32(c2.raw, c3.raw);
  return kSigned ? _mm_packs_epi16(w01, w23) : _mm_packus_epi16(w01, w23);
#endif
}
HWY_INLINE void StoreRaw(__m128i* out, __m128i v) { _mm_storeu_si128(out, v); }
#if HWY_TARGET == HWY_AVX2
HWY_INLINE void StoreRaw(__m256i* out, __m256i v) { _mm256_storeu_si256(out, v); }
#endif
#endif

// Two code vectors to consecutive outputs. On AVX3_DL, byte outputs: one VPERMT2B and one store
// instead of two VPMOVDB (two ops each) and two stores.
template <class DF, class TOut, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE void StoreTwoCodes(DF df, VI c0, VI c1, TOut* HWY_RESTRICT out) {
#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
  if constexpr (sizeof(TOut) == 1 && hn::MaxLanes(df) == 16) {
    return _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(LowBytesOfPair(c0.raw, c1.raw)));
  }
#endif
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
  if constexpr (sizeof(TOut) == 1) {  // c0, c1 twice: the first 2N bytes
    const auto b = BytesOfFour<TOut>(c0, c1, c0, c1);
#if HWY_TARGET == HWY_AVX2
    return _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(b));
#else
    return _mm_storel_epi64(reinterpret_cast<__m128i*>(out), b);
#endif
  }
#endif
  StoreCodes(df, c0, out);
  StoreCodes(df, c1, out + hn::Lanes(df));
}

// Four code vectors to consecutive outputs (AVX3_DL bytes: two VPERMT2B, an insert, one store).
template <class DF, class TOut, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE void StoreFourCodes(DF df, VI c0, VI c1, VI c2, VI c3, TOut* HWY_RESTRICT out) {
#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
  if constexpr (sizeof(TOut) == 1 && hn::MaxLanes(df) == 16) {
    return _mm512_storeu_si512(out, LowBytesOfFour(c0.raw, c1.raw, c2.raw, c3.raw));
  }
#endif
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
  if constexpr (sizeof(TOut) == 1) {
    using R = decltype(c0.raw);
    return StoreRaw(reinterpret_cast<R*>(out), BytesOfFour<TOut>(c0, c1, c2, c3));
  }
#endif
  StoreTwoCodes(df, c0, c1, out);
  StoreTwoCodes(df, c2, c3, out + 2 * hn::Lanes(df));
}

#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
// Four vectors of exact sub-byte codes (int32 lanes within int8) to 4N packed kBits-wide fields
// (pack-inl.h's PackedOut). Signed packs narrow them to bytes without changing a value (a
// negative code keeps its low bits); one multiply-add then joins each pair of masked fields
// (2-bit: a second joins pairs of pairs), and packs keep the low bytes. On AVX2 the packs work
// per 128-bit half, so half 0 holds elements 0..3 of each vector and half 1 elements 4..7: a final
// unpack interleaves the halves' bytes (2-bit) or words (4-bit) back into element order.
// 8 to 11 ops per 4N codes instead of about 30 with generic joins and narrowing.
template <int kBits, class V>
HWY_INLINE void PackFourCodes(V c0, V c1, V c2, V c3, uint8_t* HWY_RESTRICT out) {
#if HWY_TARGET == HWY_AVX2
  const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(c0.raw, c1.raw), _mm256_packs_epi32(c2.raw, c3.raw));
  if constexpr (kBits == 4) {
    const __m256i f = _mm256_and_si256(b, _mm256_set1_epi8(0x0F));
    const __m256i w = _mm256_maddubs_epi16(f, _mm256_set1_epi16(0x1001));  // f0 + 16 f1
    const __m256i p = _mm256_packus_epi16(w, w);
    const __m128i r = _mm_unpacklo_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), r);
  } else {
    const __m256i f = _mm256_and_si256(b, _mm256_set1_epi8(0x03));
    const __m256i w = _mm256_maddubs_epi16(f, _mm256_set1_epi16(0x0401));  // f0 + 4 f1
    const __m256i d = _mm256_madd_epi16(w, _mm256_set1_epi32(0x00100001));  // w0 + 16 w1
    const __m256i h = _mm256_packs_epi32(d, d);
    const __m256i p = _mm256_packus_epi16(h, h);
    const __m128i r = _mm_unpacklo_epi8(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), r);
  }
#else
  const __m128i b = _mm_packs_epi16(_mm_packs_epi32(c0.raw, c1.raw), _mm_packs_epi32(c2.raw, c3.raw));
  if constexpr (kBits == 4) {
    const __m128i w = _mm_maddubs_epi16(_mm_and_si128(b, _mm_set1_epi8(0x0F)), _mm_set1_epi16(0x1001));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packus_epi16(w, w));
  } else {
    const __m128i w = _mm_maddubs_epi16(_mm_and_si128(b, _mm_set1_epi8(0x03)), _mm_set1_epi16(0x0401));
    const __m128i h = _mm_packs_epi32(_mm_madd_epi16(w, _mm_set1_epi32(0x00100001)), _mm_setzero_si128());
    const int32_t bytes = _mm_cvtsi128_si32(_mm_packus_epi16(h, h));
    std::memcpy(out, &bytes, 4);
  }
#endif
}
#endif

#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
// The same on AVX3_DL (16 lanes): two VPERMT2B gather the 64 codes' low bytes in element order
// (as int8 stores them), then each 16-bit word takes its first code's field and its second's
// shifted beside it (one shift and one bitwise select, VPTERNLOG); 2-bit codes join twice, in
// words then in dwords. A truncating narrowing keeps each joined low byte: 6 to 8 operations per
// 64 codes where the generic joins took 14 to 17.
template <int kBits>
HWY_INLINE void PackFourCodes(__m512i c0, __m512i c1, __m512i c2, __m512i c3, uint8_t* HWY_RESTRICT out) {
  const __m512i b = LowBytesOfFour(c0, c1, c2, c3);
  constexpr int kSelect = 0xE4;  // c ? a : b, bitwise
  if constexpr (kBits == 4) {
    const __m512i w = _mm512_ternarylogic_epi32(b, _mm512_srli_epi16(b, 4), _mm512_set1_epi16(0x000F), kSelect);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi16_epi8(w));
  } else {
    const __m512i w = _mm512_ternarylogic_epi32(b, _mm512_srli_epi16(b, 6), _mm512_set1_epi16(0x0003), kSelect);
    const __m512i d = _mm512_ternarylogic_epi32(w, _mm512_srli_epi32(w, 12), _mm512_set1_epi32(0x0000000F), kSelect);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(d));
  }
}
#endif

// Whether StoreFourFixedPoint narrows fixed-point lanes itself (CodeForm::kFixedPoint).
template <class DF, class TOut>
constexpr bool kFixedPointStore = kTruncatingStore<DF, TOut> && HWY_TARGET <= HWY_AVX3_DL;

// Four vectors of the fixed-point t (encode-inl.h, IntEncoder): code byte = bits 14..21 of t.
// VPERMB gathers bytes 1 and 2 of each lane as a word (bits 8..23), two vectors into one under a
// merge mask; one 16-bit shift by 6 per pair puts each code in its word's low byte; two more
// VPERMB keep those bytes. 8 single-uop ops per 64 codes: VPERMT2B and VPMOVDB are 2-3 uops
// each on Intel (2 cycles a piece measured on Sapphire Rapids, VPERMB 1), and 32-bit shifts of
// each vector would cost 4.
template <class DF, class TOut, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE void StoreFourFixedPoint(DF df, VI t0, VI t1, VI t2, VI t3, TOut* HWY_RESTRICT out) {
#if QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
  if constexpr (kFixedPointStore<DF, TOut>) {
    static_assert(FixedPoint::kFractionBits == 14, "the byte gather below takes bits 8..23");
    // Byte k of a word vector: byte 1 + k % 2 of lane (k / 2) % 16 (each half from one t).
    static constexpr ByteIndex kMiddleWords = StridedBytes(4, 1, 2);
    static constexpr ByteIndex kLowBytesOfWords = StridedBytes(2, 0, 1);  // byte k: 2k mod 64
    const __m512i words = _mm512_load_si512(kMiddleWords.b);
    const __m512i low_bytes = _mm512_load_si512(kLowBytesOfWords.b);
    constexpr __mmask64 kHigh = 0xFFFFFFFF00000000ull;
    auto pair = [&](__m512i a, __m512i b) QLINEAR_INLINE_LAMBDA {
      const __m512i w = _mm512_mask_permutexvar_epi8(_mm512_permutexvar_epi8(words, a), kHigh, words, b);
      return _mm512_srli_epi16(w, FixedPoint::kFractionBits - 8);
    };
    const __m512i w01 = pair(t0.raw, t1.raw), w23 = pair(t2.raw, t3.raw);
    const __m512i codes = _mm512_mask_permutexvar_epi8(_mm512_permutexvar_epi8(low_bytes, w01), kHigh, low_bytes, w23);
    return _mm512_storeu_si512(out, codes);
  }
#endif
  auto code = [](VI t) {
    return hn::Sub(hn::ShiftRight<FixedPoint::kFractionBits>(t), hn::Set(hn::RebindToSigned<DF>(), FixedPoint::kBaseCode));
  };
  StoreFourCodes(df, code(t0), code(t1), code(t2), code(t3), out);
}

// Two float32 vectors to 2N bfloat16 at out by VCVTNE2PS2BF16 where `cpu_has_it` (AVX512_BF16)
// on AVX-512: true when stored. It rounds to nearest even and keeps a canonical NaN as the integer
// rounding does, but reads subnormal inputs as zeros: unless `normal` says no lane is one, pairs
// that hold one (VFPCLASSPS), and every other target, return false with nothing written.
template <class DF>
HWY_INLINE bool StoreTwoBF16InHardware(DF /*df*/, hn::Vec<DF> v0, hn::Vec<DF> v1, bool cpu_has_it, bool normal,
                                       uint16_t* HWY_RESTRICT out) {
#if QLINEAR_AVX512 && (defined(__GNUC__) || defined(__clang__))
  if constexpr (hn::MaxLanes(DF()) == 16) {
    if (cpu_has_it && (normal || (_mm512_fpclass_ps_mask(v0.raw, 0x20) | _mm512_fpclass_ps_mask(v1.raw, 0x20)) == 0)) {
      __m512i r;
      // volatile: kept behind the flag's test (it faults where the CPU lacks it).
      __asm__ __volatile__("vcvtne2ps2bf16 {%2, %1, %0|%0, %1, %2}" : "=v"(r) : "v"(v1.raw), "v"(v0.raw));
      hn::StoreU(hn::Vec512<uint16_t>{r}, hn::Full512<uint16_t>(), out);
      return true;
    }
  }
#endif
  (void)v0, (void)v1, (void)cpu_has_it, (void)normal, (void)out;
  return false;
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_X86_INL_H_
