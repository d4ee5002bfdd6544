// Packing and unpacking of sub-byte codes (4- and 2-bit types): one code per byte (or per int32
// lane of a code vector, PackedOut) on one side, ONNX raw_data packing on the other (element 0
// in the low bits of byte 0).
// Owns: bit positions (the SSE4/AVX2 form of the four-vector packing, PackFourCodes, is in
// x86-inl.h with the other x86 stores). Must not know: what the codes mean.
#if defined(QLINEAR_LIB_PACK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_PACK_INL_H_
#undef QLINEAR_LIB_PACK_INL_H_
#else
#define QLINEAR_LIB_PACK_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// n codes (n a multiple of 8 / kBits; codes masked or not) -> n * kBits / 8 bytes.
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

// n codes (int32, the field in the low kBits bits) -> ceil(n * kBits / 8) bytes; the fields past
// n in the last byte are zero.
template <int kBits>
HWY_INLINE void PackLanes(const int32_t* HWY_RESTRICT codes, size_t n, uint8_t* HWY_RESTRICT out) {
  constexpr size_t kPer = 8 / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1;
  for (size_t i = 0; i < n; i += kPer) {
    unsigned b = 0;
    for (size_t k = 0; k < kPer && i + k < n; ++k) b |= (static_cast<unsigned>(codes[i + k]) & kMask) << (k * kBits);
    out[i / kPer] = static_cast<uint8_t>(b);
  }
}

// ---- QuantizeLinear's sub-byte output, packed as the codes are made ----------------------------

// The output of a quantize loop for a kBits-wide type: element i's field is in byte
// i / (8 / kBits). Offsets added must be multiples of 8 / kBits: the vector loops add multiples
// of a vector's lanes (>= 4; the scalar target, one lane, stages its codes instead).
template <int kBits>
struct PackedOut {
  uint8_t* bytes;
  PackedOut operator+(int64_t i) const {
    HWY_DASSERT(i % (8 / kBits) == 0);
    return PackedOut{bytes + i / (8 / kBits)};
  }
};

#if HWY_TARGET != HWY_SCALAR
// Int32 lanes 2k and 2k + 1 of lo, then of hi, each holding a kBits-wide field in its low bits:
// lane k of the result holds field(2k) | field(2k + 1) << kBits. Per 64-bit lane, one mask, one
// shift and one or join the pair in its low half (int32 lane 2k is that half: the little-endian
// lane order of x86 and Arm); ConcatEven keeps the low halves in order.
template <int kBits, class DI>
HWY_INLINE hn::Vec<DI> JoinPairs(DI di, hn::Vec<DI> lo, hn::Vec<DI> hi) {
  const hn::Repartition<uint64_t, DI> d64;
  constexpr uint64_t kField = (uint64_t{1} << kBits) - 1;
  const auto mask = hn::Set(d64, kField | kField << 32);
  auto join = [&](hn::Vec<DI> v) QLINEAR_INLINE_LAMBDA {
    const auto t = hn::And(hn::BitCast(d64, v), mask);
    return hn::BitCast(di, hn::Or(t, hn::ShiftRight<32 - kBits>(t)));
  };
  return hn::ConcatEven(di, join(hi), join(lo));
}

// Four code vectors (the exact codes, or any int32 whose low kBits bits are the field; on SSE4
// and AVX2 the exact codes, which the loops give PackedOut) to consecutive packed outputs: 4N
// fields, 2N bytes (4-bit) or N (2-bit).
template <int kBits, class DF, class VI>
HWY_INLINE void StoreFourCodes(DF df, VI c0, VI c1, VI c2, VI c3, PackedOut<kBits> out) {
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
  if constexpr (hn::MaxLanes(DF()) * sizeof(float) == HWY_MAX_BYTES) {  // full vectors
    return PackFourCodes<kBits>(c0, c1, c2, c3, out.bytes);
  }
#elif QLINEAR_AVX512 && HWY_TARGET <= HWY_AVX3_DL
  if constexpr (hn::MaxLanes(DF()) == 16) return PackFourCodes<kBits>(c0.raw, c1.raw, c2.raw, c3.raw, out.bytes);
#endif
  const hn::RebindToSigned<DF> di;
  if constexpr (kBits == 4) {
    StoreTwoCodes(df, JoinPairs<4>(di, c0, c1), JoinPairs<4>(di, c2, c3), out.bytes);
  } else {
    StoreCodes(df, JoinPairs<4>(di, JoinPairs<2>(di, c0, c1), JoinPairs<2>(di, c2, c3)), out.bytes);
  }
}

// The first n codes of one vector (the loops' single vectors and tails: rare, through the stack).
template <int kBits, class DF, class VI>
HWY_INLINE void StorePartialCodes(DF df, VI c, size_t n, PackedOut<kBits> out) {
  const hn::RebindToSigned<DF> di;
  HWY_ALIGN int32_t lanes[hn::MaxLanes(di)];
  hn::Store(c, di, lanes);
  PackLanes<kBits>(lanes, n, out.bytes);
}
template <int kBits, class DF, class VI>
HWY_INLINE void StoreCodes(DF df, VI c, PackedOut<kBits> out) {
  StorePartialCodes(df, c, hn::Lanes(df), out);
}
#endif

// Elements [first, first + n) of packed bits-wide fields at `in` (element e is field e % per of
// byte e / per), one per T into codes; sign_extend: the field's top bit is a sign (int4, int2).
template <class T>
HWY_INLINE void UnpackCodes(const uint8_t* HWY_RESTRICT in, int bits, bool sign_extend, int64_t first, int64_t n,
                            T* HWY_RESTRICT codes) {
  const int per = 8 / bits;
  const int shift = 8 - bits;  // sign extension: the field shifted to the top and back
  for (int64_t e = first; e < first + n; ++e) {
    const unsigned field = (in[e / per] >> (bits * (e % per))) & ((1u << bits) - 1);
    codes[e - first] = sign_extend ? static_cast<T>(static_cast<int8_t>(static_cast<uint8_t>(field << shift)) >> shift)
                                   : static_cast<T>(field);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_PACK_INL_H_
