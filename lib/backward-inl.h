// Per-target training kernels: the clamp test of the forward pass and dx = dy * (lda / s) where
// not clamped (qlinear.h, "Training"). The clamp test reuses the forward run kernel with an
// encoder that yields 1 (clamped) or 0 per element instead of a code.
#if defined(QLINEAR_LIB_BACKWARD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_BACKWARD_INL_H_
#undef QLINEAR_LIB_BACKWARD_INL_H_
#else
#define QLINEAR_LIB_BACKWARD_INL_H_
#endif

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "lib/dequantize-inl.h"
#include "lib/quantize-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Integer outputs: clamped when q is NaN or round_half_even(q) leaves [qmin - zp, qmax - zp],
// i.e. when |q - m| > h (ties at = h resolved by division) with the window's centre
// m = (qmin + qmax) / 2 - zp and half-width h = (qmax - qmin + 1) / 2.
// On the reciprocal path: u = |fl(x * (1/s) - m)| (one FMA) lies within 2^-24 (2 |q| + u) of
// |q - m| (1/s and q rounded, then the FMA; 2^-24 (3 |q| + u) where a multiply and an add round
// apart), and near the window's edges |q| <= 2h, so lanes with |u - h| > d = 2^-20 * 2h decide
// as the quotient would (u - h is exact there: Sterbenz); the others are flagged and redone by
// division. NaN x gives a NaN u: clamped, not flagged.
// (The division pass had cost three quarters of a masked QuantizeLinear.)
struct IntClampTest {
  static constexpr bool kReciprocal = true;
  static constexpr bool kHasFixedPointForm = false;
  static constexpr bool kHasRelativeMargin = true;
  IntEncoder bounds;
  Prec prec;

  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Encode(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    const hn::Vec<DF> r = hn::Round(q);  // Inf stays Inf; NaN compares false below
    const auto inside = hn::And(hn::Ge(r, bounds.Lo(df, zp)), hn::Le(r, bounds.Hi(df, zp)));
    return hn::IfThenElseZero(hn::RebindMask(DI(), hn::Not(inside)), hn::Set(DI(), 1));
  }

  Margin margin() const { return Margin::kRelative; }
  // The loop invariants: h (as `lo`) and d (as `hi`).
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalLower(DF df) const {
    return hn::Set(df, 0.5f * static_cast<float>(bounds.qmax - bounds.qmin + 1));
  }
  template <class DF>
  HWY_INLINE hn::Vec<DF> ReciprocalUpper(DF df) const {
    return hn::Set(df, 0x1p-20f * static_cast<float>(bounds.qmax - bounds.qmin + 1));
  }
  // -m = zp - (qmin + qmax) / 2: exact (a half-integer below 2^17).
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DF> ZeroOffset(DF df, hn::Vec<DI> zp) const {
    return hn::Sub(hn::ConvertTo(df, zp), hn::Set(df, 0.5f * static_cast<float>(bounds.qmin + bounds.qmax)));
  }

  // 0 or 1 per lane in every form and margin (a store takes either).
  template <CodeForm kForm, Margin kMargin, class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Reciprocal(DF df, hn::Vec<DF> x, hn::Vec<DF> r, hn::Vec<DI> /*zp*/, hn::Vec<DF> zoff,
                                    hn::Vec<DF> h, hn::Vec<DF> d, hn::Mask<DF>* ok) const {
    static_assert(kForm != CodeForm::kFixedPoint, "flags have no fixed-point form");
    const auto u = hn::Abs(hn::MulAdd(x, r, zoff));
    *ok = hn::AndNot(hn::Le(hn::Abs(hn::Sub(u, h)), d), *ok);
    return hn::IfThenZeroElse(hn::RebindMask(DI(), hn::Le(u, h)), hn::Set(DI(), 1));
  }
};

// float8/float4 outputs: clamped when q (+ zp for float4) is NaN or beyond the largest finite.
template <DType kT>
struct MiniClampTest {
  static constexpr bool kReciprocal = false;
  using Tr = MiniTraits<kT>;
  Prec prec;
  template <class DF, class DI = hn::RebindToSigned<DF>>
  HWY_INLINE hn::Vec<DI> Encode(DF df, hn::Vec<DF> q, hn::Vec<DI> zp) const {
    if (Tr::kFp4) q = RoundToPrec(df, hn::Add(q, hn::BitCast(df, zp)), prec);
    const auto inside = hn::Le(hn::Abs(q), hn::Set(df, Tr::kMaxValue));  // false for NaN
    return hn::IfThenElseZero(hn::RebindMask(DI(), hn::Not(inside)), hn::Set(DI(), 1));
  }
};

// dy lanes (float32, float16 or bfloat16, chosen per call) as float32.
template <class DF>
HWY_INLINE hn::Vec<DF> LoadDy(DF df, DType t, const void* HWY_RESTRICT base, int64_t i) {
  if (t == DType::kFloat16) return LoadAsF32(df, static_cast<const hwy::float16_t*>(base) + i);
  if (t == DType::kBFloat16) return LoadAsF32(df, static_cast<const hwy::bfloat16_t*>(base) + i);
  return LoadAsF32(df, static_cast<const float*>(base) + i);
}

// dx over n elements: flags (1 = clamped) -> +0, else dy * (lda / s).
template <Scales kScales>
HWY_NOINLINE void DxSpan(const void* HWY_RESTRICT dy, const uint8_t* HWY_RESTRICT flags, int64_t n,
                         const float* HWY_RESTRICT s, float lda, DType dx_type, void* HWY_RESTRICT dx) {
  constexpr bool kPerElement = kScales == Scales::kPerElement;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(df)> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const size_t size = dx_type == DType::kFloat32 ? 4 : 2;
  const auto vlda = hn::Set(df, lda);
  char* out = static_cast<char*>(dx);
  auto lanes = [&](const void* dyp, int64_t di0, const uint8_t* fp, const float* sp, void* op) {
    // lda / s: one division per scale; per-element scales divide per lane (same bits).
    const auto g = kPerElement ? hn::Div(vlda, hn::LoadU(df, sp)) : hn::Set(df, lda / *sp);
    const auto clamped = hn::RebindMask(df, hn::Ne(hn::PromoteTo(di, hn::LoadU(d8, fp)), hn::Zero(di)));
    StoreOutput(df, hn::IfThenZeroElse(clamped, hn::Mul(LoadDy(df, dx_type, dyp, di0), g)), dx_type, op);
  };
  int64_t i = 0;
  for (; i + N <= n; i += N) lanes(dy, i, flags + i, kPerElement ? s + i : s, out + i * size);
  if (i < n) {
    const size_t rem = static_cast<size_t>(n - i);
    HWY_ALIGN float yb[hn::MaxLanes(df)] = {};
    HWY_ALIGN uint8_t fb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float sb[hn::MaxLanes(df)];
    HWY_ALIGN float ob[hn::MaxLanes(df)];
    std::fill(sb, sb + hn::MaxLanes(df), 1.0f);
    std::memcpy(yb, static_cast<const char*>(dy) + i * size, rem * size);
    std::memcpy(fb, flags + i, rem);
    if (kPerElement) std::memcpy(sb, s + i, rem * sizeof(float));
    lanes(yb, 0, fb, kPerElement ? sb : s, ob);
    std::memcpy(out + i * size, ob, rem * size);
  }
}

HWY_INLINE void DxRun(const Run& r, const char* HWY_RESTRICT dy, const uint8_t* HWY_RESTRICT flags,
                      const QuantParams& prm, float lda, DType dx_type, char* HWY_RESTRICT dx) {
  const size_t size = dx_type == DType::kFloat32 ? 4 : 2;
  ForEachSpan(r, prm, [&](const Span& sp) {
    const int64_t j = sp.j;
    if (sp.per_element) {
      DxSpan<Scales::kPerElement>(dy + j * size, flags + j, sp.len, sp.s, lda, dx_type, dx + j * size);
    } else {
      DxSpan<Scales::kUniform>(dy + j * size, flags + j, sp.len, sp.s, lda, dx_type, dx + j * size);
    }
  });
}

// Fused clamp test and dx (no mask in or out): one pass, no staging. kRecip: the clamp test on
// the reciprocal path (r: 1/s), a vector with a flagged lane tested again by division.
template <Scales kScales, bool kRecip, class Test, class XT>
HWY_NOINLINE void BackwardSpan(const Test& test_ref, const XT* HWY_RESTRICT x, const char* HWY_RESTRICT dy,
                               int64_t n, const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                               const int32_t* HWY_RESTRICT z, float lda, DType dx_type, void* HWY_RESTRICT dx) {
  constexpr bool kPerElement = kScales == Scales::kPerElement;
  const Test test = test_ref;  // a local copy: see QuantizeSpan
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const size_t size = dx_type == DType::kFloat32 ? 4 : 2;
  const auto vlda = hn::Set(df, lda);
  const auto us = hn::Set(df, *s);
  const auto ug = hn::Set(df, lda / *s);
  const auto uz = hn::Set(di, *z);
  char* out = static_cast<char*>(dx);
  // The clamp flags of one vector (x as float32, its scales, reciprocals and zero points).
  auto flags = [&](hn::Vec<decltype(df)> vx, hn::Vec<decltype(df)> vs, const float* rp, hn::Vec<decltype(di)> vz)
                   QLINEAR_INLINE_LAMBDA {
    if constexpr (kRecip) {
      auto ok = hn::FirstN(df, static_cast<size_t>(N));
      const auto vr = kPerElement ? hn::LoadU(df, rp) : hn::Set(df, *rp);
      const auto flag = test.template Reciprocal<CodeForm::kExact, Margin::kRelative>(
          df, vx, vr, vz, test.ZeroOffset(df, vz), test.ReciprocalLower(df), test.ReciprocalUpper(df), &ok);
      if (HWY_LIKELY(hn::AllTrue(df, ok))) return flag;
    }
    return test.Encode(df, Quotient(df, vx, vs, test.prec), vz);
  };
  // t: dx_type, a constant in the float32 loop (a type test per vector cost 15% there).
  auto lanes = [&](DType t, const XT* xp, const void* dyp, const float* sp, const float* rp, const int32_t* zp,
                   void* op) QLINEAR_INLINE_LAMBDA {
    const auto vs = kPerElement ? hn::LoadU(df, sp) : us;
    const auto g = kPerElement ? hn::Div(vlda, vs) : ug;
    const auto flag = flags(LoadAsF32(df, xp), vs, rp, kPerElement ? hn::LoadU(di, zp) : uz);
    const auto clamped = hn::RebindMask(df, hn::Ne(flag, hn::Zero(di)));
    StoreOutput(df, hn::IfThenZeroElse(clamped, hn::Mul(LoadDy(df, t, dyp, 0), g)), t, op);
  };
  int64_t i = 0;
  auto vectors = [&](DType t) QLINEAR_INLINE_LAMBDA {
    for (; i + N <= n; i += N) {
      lanes(t, x + i, dy + i * size, kPerElement ? s + i : s, kPerElement && kRecip ? r + i : r,
            kPerElement ? z + i : z, out + i * size);
    }
  };
  if (dx_type == DType::kFloat32) {
    vectors(DType::kFloat32);
  } else {
    vectors(dx_type);
  }
  if (i < n) {
    const size_t rem = static_cast<size_t>(n - i);
    HWY_ALIGN XT xb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float yb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float sb[hn::MaxLanes(df)];
    HWY_ALIGN float rb[hn::MaxLanes(df)];
    HWY_ALIGN int32_t zb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float ob[hn::MaxLanes(df)];
    std::fill(sb, sb + hn::MaxLanes(df), 1.0f);
    std::fill(rb, rb + hn::MaxLanes(df), 1.0f);
    std::memcpy(xb, x + i, rem * sizeof(XT));
    std::memcpy(yb, dy + i * size, rem * size);
    if (kPerElement) {
      std::memcpy(sb, s + i, rem * sizeof(float));
      if (kRecip) std::memcpy(rb, r + i, rem * sizeof(float));
      std::memcpy(zb, z + i, rem * sizeof(int32_t));
    }
    lanes(dx_type, xb, yb, kPerElement ? sb : s, kPerElement ? rb : r, kPerElement ? zb : z, ob);
    std::memcpy(out + i * size, ob, rem * size);
  }
}

// Every mask byte's eight flags, bit k to byte k (built by the compiler): unpacking bit by bit
// was three quarters of a backward pass with a given mask.
struct MaskByteFlags {
  uint8_t flags[256][8] = {};
  constexpr MaskByteFlags() {
    for (unsigned b = 0; b < 256; ++b) {
      for (unsigned k = 0; k < 8; ++k) flags[b][k] = static_cast<uint8_t>((b >> k) & 1u);
    }
  }
};
inline constexpr MaskByteFlags kMaskByteFlags;

// Chunks of whole mask bytes: flags from mask_in or the clamp test, then mask_out and/or dx.
template <class XT, class Test>
void BackwardAll(const Test& test, const QuantizePlan& p, const QuantParams& prm, const BackwardArgs& b) {
  const XT* x = static_cast<const XT*>(p.x);
  const char* dy = static_cast<const char*>(b.dy);
  const int64_t n = p.layout.count;
  const size_t size = b.dy_type == DType::kFloat32 ? 4 : 2;
  if (b.mask_in == nullptr && b.mask_out == nullptr) {
    char* dx = static_cast<char*>(b.dx);
    ForEachRun(p.layout, 0, n, [&](const Run& r) {
      ForEachSpan(r, prm, [&](const Span& sp) {
        const int64_t i = r.start + sp.j;
        auto span = [&](auto scales, auto recip) {
          BackwardSpan<decltype(scales)::value, decltype(recip)::value>(test, x + i, dy + i * size, sp.len, sp.s, sp.r,
                                                                        sp.z, b.lda, b.dy_type, dx + i * size);
        };
        using PerElement = std::integral_constant<Scales, Scales::kPerElement>;
        using Uniform = std::integral_constant<Scales, Scales::kUniform>;
        using Recip = std::bool_constant<Test::kReciprocal>;
        using Divide = std::false_type;
        if (sp.per_element) {
          sp.r != nullptr ? span(PerElement(), Recip()) : span(PerElement(), Divide());
        } else {
          sp.r != nullptr ? span(Uniform(), Recip()) : span(Uniform(), Divide());
        }
      });
    });
    return;
  }
  HWY_ALIGN uint8_t flags[kChunk];
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t c1 = std::min(n, c0 + kChunk);
    if (b.mask_in != nullptr) {  // (c0 is a multiple of 8)
      const int64_t whole_end = c0 + (c1 - c0) / 8 * 8;
      for (int64_t i = c0; i < whole_end; i += 8) std::memcpy(flags + (i - c0), kMaskByteFlags.flags[b.mask_in[i >> 3]], 8);
      for (int64_t i = whole_end; i < c1; ++i) flags[i - c0] = (b.mask_in[i >> 3] >> (i & 7)) & 1;
    } else {
      ForEachRun(p.layout, c0, c1, [&](const Run& r) {
        QuantizeRun(test, RunKindOf(p.layout), r, x + r.start, prm, flags + (r.start - c0));
      });
    }
    if (b.mask_out != nullptr) {
      // Whole vectors of flags to whole mask bytes (StoreMaskBits: lane k to bit k % 8 of byte
      // k / 8), then the rest bit by bit: the scalar loop was most of a masked QuantizeLinear.
      const hn::ScalableTag<uint8_t> d8;
      const int64_t n8 = static_cast<int64_t>(hn::Lanes(d8));
      int64_t i = c0;
      if (n8 % 8 == 0) {
        for (; i + n8 <= c1; i += n8) {
          hn::StoreMaskBits(d8, hn::Ne(hn::LoadU(d8, flags + (i - c0)), hn::Zero(d8)), b.mask_out + (i >> 3));
        }
      }
      for (; i < c1; i += 8) {
        unsigned byte = 0;
        for (int64_t k = 0; k < 8 && i + k < c1; ++k) byte |= static_cast<unsigned>(flags[i - c0 + k]) << k;
        b.mask_out[i >> 3] = static_cast<uint8_t>(byte);
      }
    }
    if (b.dx != nullptr) {
      char* dx = static_cast<char*>(b.dx);
      ForEachRun(p.layout, c0, c1, [&](const Run& r) {
        DxRun(r, dy + r.start * size, flags + (r.start - c0), prm, b.lda, b.dy_type, dx + r.start * size);
      });
    }
  }
}

// The clamp test of output type kY for a plan.
template <DType kY>
auto ClampTestFor(const QuantizePlan& p) {
  if constexpr (Info(kY).kind == Kind::kMiniFloat) {
    return MiniClampTest<kY>{p.prec};
  } else {
    return IntClampTest{IntEncoder{Info(kY).qmin, Info(kY).qmax, p.prec}, p.prec};
  }
}

// One instantiation per (x storage, clamp test), generated from the type list.
inline void BackwardVector(const QuantizePlan& p, const QuantParams& prm, const BackwardArgs& b) {
  WithDType(p.x_type, [&](auto xt) {
    constexpr DType kX = decltype(xt)::kType;
    if constexpr (IsQuantizeInput(kX)) {
      WithDType(p.y_type, [&](auto yt) {
        constexpr DType kY = decltype(yt)::kType;
        if constexpr (IsQuantized(kY) && kY != DType::kInt32) BackwardAll<FloatStorage<kX>>(ClampTestFor<kY>(p), p, prm, b);
      });
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_BACKWARD_INL_H_
