// Packing and unpacking of sub-byte codes (4- and 2-bit types): one code per byte on one side,
// ONNX raw_data packing on the other (element 0 in the low bits of byte 0).
// Owns: bit positions. Must not know: what the codes mean.
#if defined(QLINEAR_LIB_PACK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_PACK_INL_H_
#undef QLINEAR_LIB_PACK_INL_H_
#else
#define QLINEAR_LIB_PACK_INL_H_
#endif

#include <stdint.h>

#include "hwy/highway.h"

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
