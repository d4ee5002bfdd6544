// Per-target DequantizeLinear: decoders (codes -> exact float32) and the loops over a plan's runs.
// y = float32(x - zero_point) * float32(scale), one multiply, one rounding to float16/bfloat16.
// Owns: decoding codes and storing the outputs. Must not know: validation, QuantizeLinear.
#if defined(QLINEAR_LIB_DEQUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_DEQUANTIZE_INL_H_
#undef QLINEAR_LIB_DEQUANTIZE_INL_H_
#else
#define QLINEAR_LIB_DEQUANTIZE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hwy/highway.h"
#include "lib/convert-inl.h"
#include "lib/encode-inl.h"
#include "lib/kernels.h"
#include "lib/pack-inl.h"
#include "lib/plan.h"
#include "lib/spans.h"
#include "lib/storage.h"
#include "lib/x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements staged per chunk for sub-byte inputs (whole bytes).
constexpr int64_t kDequantizeChunk = 1024;

// float32 lanes to y (float32, or float16/bfloat16 rounded to nearest even).
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

// Decoders: x lanes (promoted to int32) and zero point -> float32 value.
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
    if constexpr (Tr::kFnuz) {
      v = hn::IfThenElse(hn::RebindMask(df, hn::Eq(code, hn::Set(di, Tr::kF.nan_code))), hn::Set(df, NAN), v);
    } else if constexpr (!Tr::kFp4) {  // codes beyond max: NaN, or e5m2's Inf
      const auto special = Tr::kF.has_inf ? hn::IfThenElse(hn::RebindMask(df, hn::Eq(mag, hn::Set(di, Tr::kF.overflow_code))),
                                                           hn::Set(df, INFINITY), hn::Set(df, NAN))
                                          : hn::Set(df, NAN);
      v = hn::IfThenElse(hn::RebindMask(df, hn::Gt(mag, hn::Set(di, Tr::kMaxCode))), special, v);
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
  HWY_ALIGN XT codes[kDequantizeChunk];
  const uint8_t* in = static_cast<const uint8_t*>(p.x);
  const bool sign_extend = info.kind == Kind::kInt && info.is_signed;
  for (int64_t c0 = b; c0 < p.end; c0 += kDequantizeChunk) {
    const int64_t c1 = std::min(p.end, c0 + kDequantizeChunk);
    UnpackCodes(in, info.bits, sign_extend, c0 - b, c1 - c0, codes);
    ForEachRun(p.layout, c0, c1, [&](const Run& r) {
      DequantizeRun(dec, r, codes + (r.start - c0), prm, p.y_type, out + (r.start - b) * ysize, ysize);
    });
  }
}

// The decoder of input type kX.
template <DType kX>
auto DecoderFor() {
  if constexpr (Info(kX).kind == Kind::kMiniFloat) {
    return MiniFloatDecoder<kX>();
  } else {
    return IntDecoder();
  }
}

// Vector DequantizeLinear: one instantiation per (code storage, decoder), generated from the type list.
inline void DequantizeVector(const DequantizePlan& p, const QuantParams& prm, void* y) {
  WithDType(p.x_type, [&](auto xt) {
    constexpr DType kX = decltype(xt)::kType;
    if constexpr (IsQuantized(kX)) DequantizeAll<CodeStorage<kX>>(DecoderFor<kX>(), p, prm, y);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_DEQUANTIZE_INL_H_
