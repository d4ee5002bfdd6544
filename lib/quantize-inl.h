// Per-target QuantizeLinear / DequantizeLinear kernels (Highway include-guard toggle).
//
// QuantizeLinear, integer outputs (README decision 3), per lane:
//   q  = round_p(round_p(x) / s)        p = the division precision; s arrives already rounded to it
//   c  = clamp(q, qmin - zp, qmax - zp) in float (integer bounds: clamp and RNE commute, and no
//        int32 overflow); NaN -> qmin - zp, chosen with IsNaN, never left to Min/Max
//   y  = NearestInt(c) + zp             (round half to even)
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
#include <cstring>

#include "hwy/highway.h"
#include "lib/convert-inl.h"
#include "lib/kernels.h"
#include "lib/plan.h"
#include "lib/reference.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements staged per chunk for sub-byte outputs/inputs (a multiple of 4: whole bytes).
constexpr int64_t kChunk = 1024;

// ---- QuantizeLinear: integer codes ---------------------------------------------------------

template <Prec kPrec, class DF, class DI = hn::RebindToSigned<DF>>
HWY_INLINE hn::Vec<DI> QuantizeLanes(DF df, hn::Vec<DF> x, hn::Vec<DF> s, hn::Vec<DI> zp,
                                     hn::Vec<DF> lo, hn::Vec<DF> hi) {
  const hn::Vec<DF> q = RoundToPrec<kPrec>(df, hn::Div(RoundToPrec<kPrec>(df, x), s));
  const hn::Vec<DF> c = hn::IfThenElse(hn::IsNaN(q), lo, hn::Min(hn::Max(q, lo), hi));
  return hn::Add(hn::NearestInt(c), zp);
}

template <class DF, class TOut>
HWY_INLINE void StoreCodes(DF df, hn::Vec<hn::RebindToSigned<DF>> v, TOut* HWY_RESTRICT out) {
  const hn::Rebind<TOut, DF> dout;
  hn::StoreU(hn::DemoteTo(dout, v), dout, out);
}

// n elements with one scale and zero point.
template <Prec kPrec, class XT, class TOut>
HWY_NOINLINE void QuantizeUniform(const XT* HWY_RESTRICT x, int64_t n, float scale, int32_t zp,
                                  int32_t qmin, int32_t qmax, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto vs = hn::Set(df, scale);
  const auto vz = hn::Set(di, zp);
  const auto lo = hn::Set(df, static_cast<float>(qmin - zp));
  const auto hi = hn::Set(df, static_cast<float>(qmax - zp));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    StoreCodes(df, QuantizeLanes<kPrec>(df, LoadAsF32(df, x + i), vs, vz, lo, hi), out + i);
  }
  if (i < n) {  // tail through stack buffers: no over-read, no over-write
    const size_t rem = static_cast<size_t>(n - i);
    HWY_ALIGN XT xb[hn::MaxLanes(df)] = {};
    HWY_ALIGN TOut ob[hn::MaxLanes(df)];
    std::memcpy(xb, x + i, rem * sizeof(XT));
    StoreCodes(df, QuantizeLanes<kPrec>(df, LoadAsF32(df, xb), vs, vz, lo, hi), ob);
    std::memcpy(out + i, ob, rem * sizeof(TOut));
  }
}

// n elements, element j with scales[j] and zps[j].
template <Prec kPrec, class XT, class TOut>
HWY_NOINLINE void QuantizePerElement(const XT* HWY_RESTRICT x, int64_t n,
                                     const float* HWY_RESTRICT scales,
                                     const int32_t* HWY_RESTRICT zps, int32_t qmin, int32_t qmax,
                                     TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto vmin = hn::Set(di, qmin), vmax = hn::Set(di, qmax);
  auto lanes = [&](const XT* xp, const float* sp, const int32_t* zp, TOut* op) {
    const auto vz = hn::LoadU(di, zp);
    const auto lo = hn::ConvertTo(df, hn::Sub(vmin, vz));
    const auto hi = hn::ConvertTo(df, hn::Sub(vmax, vz));
    StoreCodes(df, QuantizeLanes<kPrec>(df, LoadAsF32(df, xp), hn::LoadU(df, sp), vz, lo, hi), op);
  };
  int64_t i = 0;
  for (; i + N <= n; i += N) lanes(x + i, scales + i, zps + i, out + i);
  if (i < n) {
    const size_t rem = static_cast<size_t>(n - i);
    HWY_ALIGN XT xb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float sb[hn::MaxLanes(df)];
    HWY_ALIGN int32_t zb[hn::MaxLanes(df)] = {};
    HWY_ALIGN TOut ob[hn::MaxLanes(df)];
    std::fill(sb, sb + hn::MaxLanes(df), 1.0f);
    std::memcpy(xb, x + i, rem * sizeof(XT));
    std::memcpy(sb, scales + i, rem * sizeof(float));
    std::memcpy(zb, zps + i, rem * sizeof(int32_t));
    lanes(xb, sb, zb, ob);
    std::memcpy(out + i, ob, rem * sizeof(TOut));
  }
}

// One run (plan.h) of x into out[0, r.count).
template <Prec kPrec, class XT, class TOut>
HWY_INLINE void QuantizeRunInt(const Run& r, const XT* HWY_RESTRICT x, const QuantParams& prm,
                               int32_t qmin, int32_t qmax, TOut* HWY_RESTRICT out) {
  const XT* xr = x + r.start;
  if (r.period >= r.count) {
    QuantizeUniform<kPrec>(xr, r.count, prm.scales[r.scale_first], prm.zps[r.scale_first], qmin,
                           qmax, out);
  } else if (r.period == 1) {
    QuantizePerElement<kPrec>(xr, r.count, prm.scales + r.scale_first, prm.zps + r.scale_first,
                              qmin, qmax, out);
  } else if (r.period >= 16) {  // blocks along the run: one uniform span per block
    int64_t j = 0, k = r.scale_first, len = r.period - r.phase;
    while (j < r.count) {
      len = std::min(len, r.count - j);
      QuantizeUniform<kPrec>(xr + j, len, prm.scales[k], prm.zps[k], qmin, qmax, out + j);
      j += len;
      ++k;
      len = r.period;
    }
  } else {  // short blocks: expand their scales per element, a stack chunk at a time
    HWY_ALIGN float sb[256];
    HWY_ALIGN int32_t zb[256];
    for (int64_t j0 = 0; j0 < r.count; j0 += 256) {
      const int64_t len = std::min<int64_t>(256, r.count - j0);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t k = r.scale_first + (r.phase + j0 + j) / r.period;
        sb[j] = prm.scales[k];
        zb[j] = prm.zps[k];
      }
      QuantizePerElement<kPrec>(xr + j0, len, sb, zb, qmin, qmax, out + j0);
    }
  }
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
      const auto w = hn::BitCast(d32, hn::LoadU(d8, codes + i));
      auto v = hn::And(w, hn::Set(d32, 0x3u));
      v = hn::Or(v, hn::And(hn::ShiftRight<6>(w), hn::Set(d32, 0xCu)));
      v = hn::Or(v, hn::And(hn::ShiftRight<12>(w), hn::Set(d32, 0x30u)));
      v = hn::Or(v, hn::And(hn::ShiftRight<18>(w), hn::Set(d32, 0xC0u)));
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

template <Prec kPrec, class XT, class TOut>
void QuantizeIntAll(const QuantizePlan& p, const QuantParams& prm, void* y) {
  const XT* x = static_cast<const XT*>(p.x);
  const DTypeInfo& info = Info(p.y_type);
  const int64_t n = p.layout.count;
  if (info.bits >= 8) {
    TOut* out = static_cast<TOut*>(y);
    ForEachRun(p.layout, 0, n, [&](const Run& r) {
      QuantizeRunInt<kPrec>(r, x, prm, info.qmin, info.qmax, out + r.start);
    });
    return;
  }
  // Sub-byte: chunks on byte boundaries; codes staged one per byte, padding codes zero.
  HWY_ALIGN TOut codes[kChunk];
  uint8_t* out = static_cast<uint8_t*>(y);
  const int per = 8 / info.bits;
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t c1 = std::min(n, c0 + kChunk);
    ForEachRun(p.layout, c0, c1, [&](const Run& r) {
      QuantizeRunInt<kPrec>(r, x, prm, info.qmin, info.qmax, codes + (r.start - c0));
    });
    const int64_t padded = (c1 - c0 + per - 1) / per * per;
    std::fill(codes + (c1 - c0), codes + padded, TOut{0});
    if (info.bits == 4) {
      PackCodes<4>(reinterpret_cast<const uint8_t*>(codes), padded, out + c0 / per);
    } else {
      PackCodes<2>(reinterpret_cast<const uint8_t*>(codes), padded, out + c0 / per);
    }
  }
}

template <Prec kPrec, class XT>
void QuantizeIntForX(const QuantizePlan& p, const QuantParams& prm, void* y) {
  switch (p.y_type) {
    case DType::kInt8: case DType::kInt4: case DType::kInt2:
      return QuantizeIntAll<kPrec, XT, int8_t>(p, prm, y);
    case DType::kUint8: case DType::kUint4: case DType::kUint2:
      return QuantizeIntAll<kPrec, XT, uint8_t>(p, prm, y);
    case DType::kInt16: return QuantizeIntAll<kPrec, XT, int16_t>(p, prm, y);
    case DType::kUint16: return QuantizeIntAll<kPrec, XT, uint16_t>(p, prm, y);
    default: return;
  }
}

template <Prec kPrec>
void QuantizeIntForPrec(const QuantizePlan& p, const QuantParams& prm, void* y) {
  switch (p.x_type) {
    case DType::kFloat32: return QuantizeIntForX<kPrec, float>(p, prm, y);
    case DType::kFloat16: return QuantizeIntForX<kPrec, hwy::float16_t>(p, prm, y);
    case DType::kBFloat16: return QuantizeIntForX<kPrec, hwy::bfloat16_t>(p, prm, y);
    case DType::kInt32: return QuantizeIntForX<kPrec, int32_t>(p, prm, y);
    default: return;
  }
}

// Vector QuantizeLinear for plans that VectorQuantizeSupported accepts.
inline void QuantizeVector(const QuantizePlan& p, const QuantParams& prm, void* y) {
  switch (p.prec) {
    case Prec::kF32: return QuantizeIntForPrec<Prec::kF32>(p, prm, y);
    case Prec::kF16: return QuantizeIntForPrec<Prec::kF16>(p, prm, y);
    case Prec::kBF16: return QuantizeIntForPrec<Prec::kBF16>(p, prm, y);
    case Prec::kF64: return;
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

// x[j] (integer type XT) -> (x - zp) * s, n elements; per-element or uniform scale/zp.
template <bool kPerElement, class XT>
HWY_NOINLINE void DequantizeSpan(const XT* HWY_RESTRICT x, int64_t n, const float* HWY_RESTRICT s,
                                 const int32_t* HWY_RESTRICT zp, DType y_type, void* HWY_RESTRICT y) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<XT, decltype(df)> dx;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const size_t ysize = y_type == DType::kFloat32 ? 4 : 2;
  char* out = static_cast<char*>(y);
  auto lanes = [&](const XT* xp, const float* sp, const int32_t* zpp, void* op) {
    hn::Vec<decltype(di)> xi;
    if constexpr (sizeof(XT) == 4) {
      xi = hn::LoadU(di, reinterpret_cast<const int32_t*>(xp));
    } else {
      xi = hn::PromoteTo(di, hn::LoadU(dx, xp));
    }
    const auto vz = kPerElement ? hn::LoadU(di, zpp) : hn::Set(di, *zpp);
    const auto vs = kPerElement ? hn::LoadU(df, sp) : hn::Set(df, *sp);
    // (x - zp) is exact in int32 for <= 16-bit types; int32 inputs have zp == 0 (validated).
    StoreOutput(df, hn::Mul(hn::ConvertTo(df, hn::Sub(xi, vz)), vs), y_type, op);
  };
  int64_t i = 0;
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

template <class XT>
HWY_INLINE void DequantizeRun(const Run& r, const XT* HWY_RESTRICT x, const QuantParams& prm,
                              DType y_type, char* HWY_RESTRICT y, size_t ysize) {
  const XT* xr = x;
  if (r.period >= r.count) {
    DequantizeSpan<false>(xr, r.count, prm.scales + r.scale_first, prm.zps + r.scale_first, y_type, y);
  } else if (r.period == 1) {
    DequantizeSpan<true>(xr, r.count, prm.scales + r.scale_first, prm.zps + r.scale_first, y_type, y);
  } else {
    int64_t j = 0, k = r.scale_first, len = r.period - r.phase;
    while (j < r.count) {
      len = std::min(len, r.count - j);
      DequantizeSpan<false>(xr + j, len, prm.scales + k, prm.zps + k, y_type, y + j * ysize);
      j += len;
      ++k;
      len = r.period;
    }
  }
}

template <class XT>
void DequantizeAll(const DequantizePlan& p, const QuantParams& prm, void* y) {
  const size_t ysize = p.y_type == DType::kFloat32 ? 4 : 2;
  char* out = static_cast<char*>(y);
  const int64_t n = p.layout.count;
  const DTypeInfo& info = Info(p.x_type);
  if (info.bits >= 8) {
    const XT* x = static_cast<const XT*>(p.x);
    ForEachRun(p.layout, 0, n, [&](const Run& r) {
      DequantizeRun(r, x + r.start, prm, p.y_type, out + r.start * ysize, ysize);
    });
    return;
  }
  // Sub-byte inputs: unpack a chunk (sign-extended) to one code per byte, then the same runs.
  HWY_ALIGN XT codes[kChunk];
  const uint8_t* in = static_cast<const uint8_t*>(p.x);
  const int bits = info.bits, per = 8 / bits;
  const int shift = 8 - bits;  // sign extension by shifting the field to the top
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t c1 = std::min(n, c0 + kChunk);
    for (int64_t i = c0; i < c1; ++i) {
      const unsigned field = (in[i / per] >> (bits * (i % per))) & ((1u << bits) - 1);
      codes[i - c0] = info.is_signed
                          ? static_cast<XT>(static_cast<int8_t>(static_cast<uint8_t>(field << shift)) >> shift)
                          : static_cast<XT>(field);
    }
    ForEachRun(p.layout, c0, c1, [&](const Run& r) {
      DequantizeRun(r, codes + (r.start - c0), prm, p.y_type, out + r.start * ysize, ysize);
    });
  }
}

inline void DequantizeVector(const DequantizePlan& p, const QuantParams& prm, void* y) {
  switch (p.x_type) {
    case DType::kInt8: case DType::kInt4: case DType::kInt2:
      return DequantizeAll<int8_t>(p, prm, y);
    case DType::kUint8: case DType::kUint4: case DType::kUint2:
      return DequantizeAll<uint8_t>(p, prm, y);
    case DType::kInt16: return DequantizeAll<int16_t>(p, prm, y);
    case DType::kUint16: return DequantizeAll<uint16_t>(p, prm, y);
    case DType::kInt32: return DequantizeAll<int32_t>(p, prm, y);
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
    if (x[i] < l) l = x[i];
    if (x[i] > h) h = x[i];
  }
  *lo = l;
  *hi = h;
}

inline void DynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  float lo, hi;
  RangeOf(x, n, &lo, &hi);
  DynamicParamsFromRange(lo, hi, scale, zp);
  QuantizeUniform<Prec::kF32>(x, n, *scale, *zp, 0, 255, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_QUANTIZE_INL_H_
