// Per-target QuantizeLinear loops (Highway include-guard toggle).
// Owns: walking a plan's runs into vectors; the reciprocal path's flagged-group loop, the
// division loop and the tail. Must not know: the rounding rules of output types (encode-inl.h),
// instruction tricks (x86-inl.h), bit packing (pack-inl.h), validation (plan.cc).
//
// Each run (plan.h) is taken by the loop its RunKind names:
//   kUniform, kPerElement   QuantizeSpan: groups of four vectors on the reciprocal path
//                           (SpanGroups), then whole vectors by division, then the tail
//                           (UnflaggedRest); <= 8-bit integer outputs with per-element scales take
//                           four rows with the same scales at a time (RowGroups)
//   kBlocks                 BlockGroups where blocks are whole vectors, else a span per block
//   kShortBlocks            spans with a scale per element (spans.h ForEachSpan)
// The reciprocal path (encode-inl.h) computes a group of four vectors, stores it, and tests the
// group's boundary flags once; only flagged vectors are recomputed by division (FlaggedGroups).
// SVE vectors are sizeless (no arrays, no members), so a group's source is a set of lambdas
// over locals rather than a policy object.
// Sub-byte outputs from float32 are packed in registers by the stores (pack-inl.h PackedOut)
// where every run starts on a byte; other sub-byte plans are staged as one code per byte in
// chunks on byte boundaries, then packed.
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
#include "lib/dynamic-inl.h"
#include "lib/encode-inl.h"
#include "lib/kernels.h"
#include "lib/pack-inl.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "lib/spans.h"
#include "lib/storage.h"
#include "lib/x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements staged per chunk for sub-byte outputs/inputs (a multiple of 4: whole bytes).
constexpr int64_t kChunk = 1024;

// From this many elements x is prefetched 4 KB ahead: per-tensor float32 spans on the
// reciprocal path, and the staged chunks of sub-byte outputs. The hardware prefetchers stop at
// 4 KB pages, and beyond the TLB's reach (16M elements, 64 MB) the loop waits on page walks. In
// cache the prefetches only cost, hence the threshold (docs/performance.md).
constexpr int64_t kPrefetchFrom = int64_t{1} << 20;

// Where the reciprocal path's zero offsets come from (the encoder's ZeroOffset of each zero
// point, or QuantParams::offsets), and whether a span prefetches x.
enum class ZeroOffsets { kComputed, kLoaded };
enum class Prefetch { kNone, k4KAhead };
// How the unflagged loops get quotients: x / s, or x * (1/s) where that is exact
// (QuantParams::exact_products: power-of-two scales).
enum class Quotients { kDivide, kExactProduct };

// Where a loop stores a group's four code vectors: to consecutive outputs, or apart (rows).
enum class FourStores { kConsecutive, kApart };

// The CodeForm a loop asks of the encoder: kFixedPoint where four vectors go to consecutive
// outputs at once (StoreFourFixedPoint), kLowByte for truncating stores, else exact codes.
template <class Enc, Margin kMargin, FourStores kStores, class DF, class TOut>
constexpr CodeForm ChooseCodeForm() {
  if (kStores == FourStores::kConsecutive && kMargin == Margin::kFixed && Enc::kHasFixedPointForm && kFixedPointStore<DF, TOut>) {
    return CodeForm::kFixedPoint;
  }
  return kTruncatingStore<DF, TOut> ? CodeForm::kLowByte : CodeForm::kExact;
}

// Four code vectors in the form kForm to consecutive outputs.
template <CodeForm kForm, class DF, class Out, class VI>
HWY_INLINE void StoreFour(DF df, VI c0, VI c1, VI c2, VI c3, Out out) {
  if constexpr (kForm == CodeForm::kFixedPoint) {
    StoreFourFixedPoint(df, c0, c1, c2, c3, out);
  } else {
    StoreFourCodes(df, c0, c1, c2, c3, out);
  }
}

// x / s in the precision prec; kSignedNaN: with the NaN rule (DivideSignedNaN).
template <bool kSignedNaN = false, class DF>
HWY_INLINE hn::Vec<DF> Quotient(DF df, hn::Vec<DF> x, hn::Vec<DF> s, Prec prec) {
  return RoundToPrec(df, DivideSignedNaN<kSignedNaN>(df, RoundToPrec(df, x, prec), s), prec);
}

// The codes of x[0, N) with scale (kDivide) or reciprocal (kExactProduct) sr and zero point vz.
template <Quotients kQ, class Enc, class DF, class XT>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> VectorCodes(const Enc& enc, DF df, const XT* HWY_RESTRICT x, hn::Vec<DF> sr,
                                                       hn::Vec<hn::RebindToSigned<DF>> vz) {
  const auto vx = LoadAsF32(df, x);
  // (a product makes a NaN only from a NaN x, 1/s being finite: its sign is x's already)
  const auto q = kQ == Quotients::kDivide ? Quotient<ShowsNaNSign<Enc>::value>(df, vx, sr, enc.prec)
                                          : RoundToPrec(df, hn::Mul(RoundToPrec(df, vx, enc.prec), sr), enc.prec);
  return enc.Encode(df, q, vz);
}

// One vector by division: codes of x[0, N) with scale vs and zero point vz, stored at out.
template <class Enc, class DF, class XT, class Out>
HWY_INLINE void DivideVector(const Enc& enc, DF df, const XT* HWY_RESTRICT x, hn::Vec<DF> vs,
                             hn::Vec<hn::RebindToSigned<DF>> vz, Out out) {
  StoreCodes(df, VectorCodes<Quotients::kDivide>(enc, df, x, vs, vz), out);
}

// The flagged-group loop of the reciprocal path: groups [0, groups) of four vectors. begin(g)
// prepares group g; codes(g, v, &ok) encodes its vector v, clearing the lanes to redo;
// store(g, c0, c1, c2, c3) stores the group. A group with a cleared lane has each vector's flags
// recomputed and only the flagged vectors redone by divide(g, v): inputs with few significant
// bits (bfloat16 x, round scales) hit exact ties in a few % of lanes, and redoing all four cost
// up to half the time.
template <class DF, class Begin, class Codes, class Store, class Divide>
HWY_INLINE void FlaggedGroups(DF df, int64_t groups, Begin&& begin, Codes&& codes, Store&& store, Divide&& divide) {
  using M = hn::Mask<DF>;
  const M all = hn::FirstN(df, hn::Lanes(df));
  for (int64_t g = 0; g < groups; ++g) {
    begin(g);
    M ok = all;
    const auto c0 = codes(g, 0, &ok), c1 = codes(g, 1, &ok), c2 = codes(g, 2, &ok), c3 = codes(g, 3, &ok);
    store(g, c0, c1, c2, c3);
    if (HWY_UNLIKELY(!hn::AllTrue(df, ok))) {
      for (int v = 0; v < 4; ++v) {
        M m = all;
        (void)codes(g, v, &m);
        if (!hn::AllTrue(df, m)) divide(g, v);
      }
    }
  }
}

// Whole vectors [i, n / N * N) by division (kDivide, sr: the scales) or exact products
// (kExactProduct, sr: the reciprocals), four at a time and then one by one, then the partial
// vector through stack buffers (no over-read, no over-write; padding lanes x = 0, s = r = 1).
template <Scales kScales, Quotients kQ, class Enc, class XT, class Out>
HWY_INLINE void UnflaggedRest(const Enc& enc, const XT* HWY_RESTRICT x, int64_t i, int64_t n,
                              const float* HWY_RESTRICT sr, const int32_t* HWY_RESTRICT z, Out out) {
  constexpr bool kEach = kScales == Scales::kPerElement;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto usr = hn::Set(df, *sr);
  const auto uz = hn::Set(di, *z);
  auto codes = [&](const XT* xp, const float* sp, const int32_t* zp) QLINEAR_INLINE_LAMBDA {
    return VectorCodes<kQ>(enc, df, xp, kEach ? hn::LoadU(df, sp) : usr, kEach ? hn::LoadU(di, zp) : uz);
  };
  auto at = [&](int64_t k) QLINEAR_INLINE_LAMBDA {
    return codes(x + k, kEach ? sr + k : sr, kEach ? z + k : z);
  };
  if constexpr (kQ == Quotients::kExactProduct) {  // (division is the slow path: no grouping)
    for (; i + 4 * N <= n; i += 4 * N) {
      StoreFourCodes(df, at(i), at(i + N), at(i + 2 * N), at(i + 3 * N), out + i);
    }
  }
  for (; i + N <= n; i += N) StoreCodes(df, at(i), out + i);
  if (i < n) {
    const size_t rem = static_cast<size_t>(n - i);
    HWY_ALIGN XT xb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float sb[hn::MaxLanes(df)];
    HWY_ALIGN int32_t zb[hn::MaxLanes(df)] = {};
    std::memcpy(xb, x + i, rem * sizeof(XT));
    if (kEach) {
      std::fill(sb, sb + hn::MaxLanes(df), 1.0f);
      std::memcpy(sb, sr + i, rem * sizeof(float));
      std::memcpy(zb, z + i, rem * sizeof(int32_t));
    }
    StorePartialCodes(df, codes(xb, sb, zb), rem, out + i);
  }
}

// enc.Reciprocal; kClamp false only for IntEncoder (the one encoder with an unclamped form).
template <CodeForm kForm, Margin kMargin, bool kClamp, class Enc, class DF, class... Args>
HWY_INLINE auto ReciprocalCodes(const Enc& enc, DF df, Args... args) {
  static_assert(kClamp || std::is_same_v<Enc, IntEncoder>, "only integer codes skip the clamp");
  if constexpr (kClamp) {
    return enc.template Reciprocal<kForm, kMargin>(df, args...);
  } else {
    return enc.template Reciprocal<kForm, kMargin, false>(df, args...);
  }
}

// The groups of a span (uniform or per-element scales) on the reciprocal path. Returns the
// elements done (a multiple of 4N). kSide: also the largest |x| of side[0, n) into *side_amax
// (SideStats; kSideTwo: x's and -x's largest keys into *side_amax and *side_neg, MINMAX), four
// side vectors per group, loaded while the group's arithmetic runs (the rest of the side run by
// the statistics kernel, dynamic-inl.h); side_room: elements readable from side (>= n), for the
// prefetches.
template <Scales kScales, ZeroOffsets kOffsets, Margin kMargin, Prefetch kPrefetch, bool kSide = false,
          bool kSideTwo = false, bool kClamp = true, class Enc, class XT, class Out>
HWY_INLINE int64_t SpanGroups(const Enc& enc, const XT* HWY_RESTRICT x, int64_t n, const float* HWY_RESTRICT s,
                              const float* HWY_RESTRICT r, const int32_t* HWY_RESTRICT z,
                              const float* HWY_RESTRICT off, Out out, const XT* HWY_RESTRICT side = nullptr,
                              uint32_t* side_amax = nullptr, int64_t side_room = 0, uint32_t* side_neg = nullptr) {
  constexpr bool kEach = kScales == Scales::kPerElement;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr CodeForm kForm =
      ChooseCodeForm<Enc, kMargin, FourStores::kConsecutive, decltype(df), std::remove_pointer_t<Out>>();
  const auto us = hn::Set(df, *s);
  const auto ur = hn::Set(df, *r);
  const auto uz = hn::Set(di, *z);
  const auto uoff = enc.ZeroOffset(df, uz);
  const auto lo = enc.ReciprocalLower(df);
  const auto hi = enc.ReciprocalUpper(df);
  constexpr int64_t kAhead = 4096 / sizeof(XT), kLine = 64 / sizeof(XT);
  using SideK = StatKeys<kSideTwo ? StatKind::kMinMax : StatKind::kAbs>;
  auto m0 = hn::Zero(di), m1 = hn::Zero(di), m2 = hn::Zero(di), m3 = hn::Zero(di);  // side raw maxima
  auto n0 = hn::Zero(di), n1 = hn::Zero(di), n2 = hn::Zero(di), n3 = hn::Zero(di);  // (kSideTwo: -x's)
  auto begin = [&](int64_t g) QLINEAR_INLINE_LAMBDA {
    if constexpr (kPrefetch == Prefetch::k4KAhead) {  // x, or with kSide the side run
      const int64_t i = g * 4 * N;
      const XT* from = kSide ? side : x;
      const int64_t room = kSide ? side_room : n;
      for (int64_t p = i + kAhead; p < i + kAhead + 4 * N && p < room; p += kLine) hwy::Prefetch(from + p);
    }
    if constexpr (kSide) {
      const XT* sp = side + g * 4 * N;
      const auto v0 = LoadAsF32(df, sp), v1 = LoadAsF32(df, sp + N);
      const auto v2 = LoadAsF32(df, sp + 2 * N), v3 = LoadAsF32(df, sp + 3 * N);
      m0 = SideK::MaxRaw(m0, SideK::Raw(df, v0));
      m1 = SideK::MaxRaw(m1, SideK::Raw(df, v1));
      m2 = SideK::MaxRaw(m2, SideK::Raw(df, v2));
      m3 = SideK::MaxRaw(m3, SideK::Raw(df, v3));
      if constexpr (kSideTwo) {
        n0 = hn::Max(n0, SideK::Second(df, v0));
        n1 = hn::Max(n1, SideK::Second(df, v1));
        n2 = hn::Max(n2, SideK::Second(df, v2));
        n3 = hn::Max(n3, SideK::Second(df, v3));
      }
    }
  };
  auto codes = [&](int64_t g, int v, hn::Mask<decltype(df)>* ok) QLINEAR_INLINE_LAMBDA {
    const int64_t i = (4 * g + v) * N;
    const auto vz = kEach ? hn::LoadU(di, z + i) : uz;
    const auto vr = kEach ? hn::LoadU(df, r + i) : ur;
    const auto zoff = !kEach ? uoff : kOffsets == ZeroOffsets::kLoaded ? hn::LoadU(df, off + i) : enc.ZeroOffset(df, vz);
    return ReciprocalCodes<kForm, kMargin, kClamp>(enc, df, LoadAsF32(df, x + i), vr, vz, zoff, lo, hi, ok);
  };
  auto store = [&](int64_t g, auto c0, auto c1, auto c2, auto c3) QLINEAR_INLINE_LAMBDA {
    StoreFour<kForm>(df, c0, c1, c2, c3, out + g * 4 * N);
  };
  auto divide = [&](int64_t g, int v) {
    const int64_t i = (4 * g + v) * N;
    DivideVector(enc, df, x + i, kEach ? hn::LoadU(df, s + i) : us, kEach ? hn::LoadU(di, z + i) : uz, out + i);
  };
  const int64_t groups = n / (4 * N);
  FlaggedGroups(df, groups, begin, codes, store, divide);
  if constexpr (kSide) {
    Combine(SideK::ReducedKey(di, SideK::MaxRaw(SideK::MaxRaw(m0, m1), SideK::MaxRaw(m2, m3))), side_amax);
    if constexpr (kSideTwo) {
      Combine(static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(di, hn::Max(hn::Max(n0, n1), hn::Max(n2, n3))))),
              side_neg);
    }
    const int64_t rest = groups * 4 * N;
    if (rest < n) SegmentStats<SideK>(side + rest, n - rest, side_amax, side_neg);
  }
  return groups * 4 * N;
}

// A span of x into codes: the reciprocal path's groups when r is given (1/s), then the rest by
// division. off: per-element zero offsets (QuantParams::offsets), or null.
template <Scales kScales, class Enc, class XT, class Out>
HWY_NOINLINE void QuantizeSpan(const Enc& enc_ref, const XT* HWY_RESTRICT x, int64_t n,
                               const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                               const int32_t* HWY_RESTRICT z, Out out,
                               const float* HWY_RESTRICT off = nullptr, bool exact_products = false) {
  // A local copy: byte stores may alias the referenced encoder, which would make the compiler
  // reload its bounds (and rebuild the clamp vectors) on every iteration.
  const Enc enc = enc_ref;
  if constexpr (Enc::kReciprocal) {
    if (exact_products && r != nullptr) return UnflaggedRest<kScales, Quotients::kExactProduct>(enc, x, 0, n, r, z, out);
  }
  int64_t i = 0;
  if constexpr (Enc::kReciprocal) {
    if (r != nullptr) {
      auto groups = [&](auto margin, auto offsets, auto prefetch) {
        return SpanGroups<kScales, decltype(offsets)::value, decltype(margin)::value, decltype(prefetch)::value>(
            enc, x, n, s, r, z, off, out);
      };
      using Fixed = std::integral_constant<Margin, Margin::kFixed>;
      using Computed = std::integral_constant<ZeroOffsets, ZeroOffsets::kComputed>;
      using NoPrefetch = std::integral_constant<Prefetch, Prefetch::kNone>;
      // Prefetching pays only on long spans with one scale.
      auto maybe_prefetch = [&](auto margin) {
        if constexpr (kScales == Scales::kUniform) {
          if (n >= kPrefetchFrom) return groups(margin, Computed(), std::integral_constant<Prefetch, Prefetch::k4KAhead>());
        }
        return groups(margin, Computed(), NoPrefetch());
      };
      i = -1;
      if constexpr (Enc::kHasRelativeMargin) {
        if (enc.margin() == Margin::kRelative) i = maybe_prefetch(std::integral_constant<Margin, Margin::kRelative>());
      }
      if constexpr (kScales == Scales::kPerElement && Enc::kHasFixedPointForm) {
        if (i < 0 && off != nullptr) {
          i = groups(Fixed(), std::integral_constant<ZeroOffsets, ZeroOffsets::kLoaded>(), NoPrefetch());
        }
      }
      if (i < 0) i = maybe_prefetch(Fixed());
    }
  }
  UnflaggedRest<kScales, Quotients::kDivide>(enc, x, i, n, s, z, out);
}

// QuantizeSpan of a span with one scale, and the largest |x| of side[0, n) into *side_amax
// (SideStats; with side_neg: x's and -x's largest keys into *side_amax and *side_neg, MINMAX):
// inside the reciprocal path's groups where the span takes them, else by a loop of its own. (A
// function apart: two more arguments to QuantizeSpan cost rows of 1024 5-9%.) prefetch: the
// side run 4 KB ahead of its loads (SideStats::prefetch). in_range: SideStats::in_range (integer
// outputs without prefetching skip the clamp then, where QLINEAR_SKIPS_CLAMP).
template <class Enc, class XT, class Out>
HWY_NOINLINE void QuantizeSpanWithSide(const Enc& enc_ref, const XT* HWY_RESTRICT x, int64_t n,
                                       const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                                       const int32_t* HWY_RESTRICT z, Out out, bool exact_products,
                                       const XT* HWY_RESTRICT side, uint32_t* side_amax, uint32_t* side_neg,
                                       int64_t side_room, bool prefetch, bool in_range) {
  const Enc enc = enc_ref;  // see QuantizeSpan
  if constexpr (Enc::kReciprocal && std::is_same_v<XT, float>) {
    if (!exact_products && r != nullptr && enc.margin() == Margin::kFixed) {
      auto groups = [&](auto ahead, auto two, auto clamp) {
        return SpanGroups<Scales::kUniform, ZeroOffsets::kComputed, Margin::kFixed, decltype(ahead)::value, true,
                          decltype(two)::value, decltype(clamp)::value>(enc, x, n, s, r, z, nullptr, out, side,
                                                                        side_amax, side_room, side_neg);
      };
      auto with_keys = [&](auto two) {
        if (prefetch) return groups(std::integral_constant<Prefetch, Prefetch::k4KAhead>(), two, std::true_type());
        if constexpr (std::is_same_v<Enc, IntEncoder> && QLINEAR_SKIPS_CLAMP) {
          if (in_range) return groups(std::integral_constant<Prefetch, Prefetch::kNone>(), two, std::false_type());
        }
        return groups(std::integral_constant<Prefetch, Prefetch::kNone>(), two, std::true_type());
      };
      int64_t i = -1;
      if (side_neg == nullptr) {
        i = with_keys(std::false_type());
      } else if constexpr (std::is_same_v<Enc, IntEncoder>) {  // (MINMAX: integer outputs only)
        i = with_keys(std::true_type());
      }
      if (i >= 0) return UnflaggedRest<Scales::kUniform, Quotients::kDivide>(enc, x, i, n, s, z, out);
    }
  }
  if (side_neg != nullptr) {
    SegmentStats<StatKeys<StatKind::kMinMax>>(side, n, side_amax, side_neg);
  } else {
    SegmentStats<StatKeys<StatKind::kAbs>>(side, n, side_amax, nullptr);
  }
  QuantizeSpan<Scales::kUniform>(enc, x, n, s, r, z, out, nullptr, exact_products);
}

// The statistics side of a kBlocks run (SideStats): the largest |x| of each block of x[0, count)
// into amax[0, ...) (with neg: x's and -x's largest keys into amax and neg, MINMAX), blocks
// counted from x (a block boundary), as the run's own are.
struct BlockSide {
  const float* x;
  int64_t count;
  uint32_t* amax;
  uint32_t* neg;  // or null
  bool prefetch;  // 4 KB ahead (SideStats::prefetch)
  bool in_range;  // the run's own codes need no clamp (SideStats::in_range)
};

// Side statistics inside a block loop: at the first of every N blocks' groups, the N side blocks
// at the same place (a statistics tree, dynamic-inl.h TreeBlocks), `trees` of them; their loads
// and reductions overlap the groups' arithmetic. kVectors: TreeBlocks' unrolling (vectors per
// block, 0: any); -1: no side. K: the statistic's keys (dynamic-inl.h StatKeys).
template <int kVectors, class K>
struct SideTrees {
  SideTrees(const BlockSide* side, int64_t trees, int64_t period)
      : side_(side), trees_(trees), period_(period), prefetch_(side != nullptr && side->prefetch) {}
  HWY_INLINE void AtGroup(int64_t g) {
#if QLINEAR_DYNAMIC_TREE
    if constexpr (kVectors >= 0) {
      const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
      if (prefetch_) {  // the group's share of the side, 4 KB ahead of the next tree
        const int64_t ahead = 1024 + N * period_;
        for (int64_t i = g * 4 * N + ahead; i < (g + 1) * 4 * N + ahead && i < side_->count; i += 16) {
          hwy::Prefetch(side_->x + i);
        }
      }
      if (g == next_ && tree_ < trees_) {
        TreeBlocks<K, kVectors>(side_->x + tree_ * N * period_, period_, side_->amax + tree_ * N,
                                K::kTwo ? side_->neg + tree_ * N : nullptr);
        ++tree_;
        next_ += (kVectors > 0 ? kVectors * N : period_) / 4;  // groups per tree (N blocks)
      }
    }
#else
    (void)g;
#endif
  }
  const BlockSide* side_;
  int64_t trees_, period_;
  bool prefetch_;
  int64_t tree_ = 0, next_ = 0;
};

// Blocks along a run whose vectors lie within one block (period and phase multiples of N), on
// the reciprocal path: the run as a stream of groups of four vectors, each vector with its
// block's broadcast reciprocal and zero offset (broadcast loads, no ALU op); flagged vectors are
// redone by division with their block's scale. Blocks of 32 were otherwise a pair of vectors per
// block, each with its own flag test, branches and narrowing. off: per-block zero offsets, or
// null (the encoder's ZeroOffset of z[k]). Returns the elements done (a multiple of 4N).
template <int kSideVectors = -1, class K = StatKeys<StatKind::kAbs>, bool kClamp = true, class Enc, class XT,
          class Out>
HWY_INLINE int64_t BlockGroups(const Enc& enc, int64_t period, int64_t phase, int64_t count,
                               const XT* HWY_RESTRICT x, const float* HWY_RESTRICT s,
                               const float* HWY_RESTRICT r, const int32_t* HWY_RESTRICT z,
                               const float* HWY_RESTRICT off, Out out, const BlockSide* side = nullptr,
                               int64_t trees = 0) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto lo = enc.ReciprocalLower(df);
  const auto hi = enc.ReciprocalUpper(df);
  const int64_t per_block = period / N;         // vectors per block
  int64_t k = 0, left = per_block - phase / N;  // block of the next vector, vectors left in it
  int64_t kk[4];                                // blocks of the group's vectors
  SideTrees<kSideVectors, K> side_trees(side, trees, period);
  auto begin = [&](int64_t g) QLINEAR_INLINE_LAMBDA {
    side_trees.AtGroup(g);
    for (int v = 0; v < 4; ++v) {
      kk[v] = k;
      if (--left == 0) {
        ++k;
        left = per_block;
      }
    }
  };
  auto run = [&](auto margin, auto offsets) {
    constexpr Margin kMargin = decltype(margin)::value;
    constexpr CodeForm kForm =
      ChooseCodeForm<Enc, kMargin, FourStores::kConsecutive, decltype(df), std::remove_pointer_t<Out>>();
    auto codes = [&](int64_t g, int v, hn::Mask<decltype(df)>* ok) QLINEAR_INLINE_LAMBDA {
      const int64_t b = kk[v];
      const auto vz = hn::Set(di, z[b]);
      const auto zoff = decltype(offsets)::value == ZeroOffsets::kLoaded ? hn::Set(df, off[b]) : enc.ZeroOffset(df, vz);
      return ReciprocalCodes<kForm, kMargin, kClamp>(enc, df, LoadAsF32(df, x + (4 * g + v) * N), hn::Set(df, r[b]),
                                                     vz, zoff, lo, hi, ok);
    };
    auto store = [&](int64_t g, auto c0, auto c1, auto c2, auto c3) QLINEAR_INLINE_LAMBDA {
      StoreFour<kForm>(df, c0, c1, c2, c3, out + g * 4 * N);
    };
    auto divide = [&](int64_t g, int v) {
      const int64_t i = (4 * g + v) * N;
      DivideVector(enc, df, x + i, hn::Set(df, s[kk[v]]), hn::Set(di, z[kk[v]]), out + i);
    };
    FlaggedGroups(df, count / (4 * N), begin, codes, store, divide);
  };
  using Fixed = std::integral_constant<Margin, Margin::kFixed>;
  using Computed = std::integral_constant<ZeroOffsets, ZeroOffsets::kComputed>;
  if constexpr (Enc::kHasRelativeMargin) {
    if (enc.margin() == Margin::kRelative) {
      run(std::integral_constant<Margin, Margin::kRelative>(), Computed());
      return count / (4 * N) * 4 * N;
    }
  }
  if constexpr (Enc::kHasFixedPointForm) {  // (only <= 8-bit integer outputs have offsets)
    if (off != nullptr) {
      run(Fixed(), std::integral_constant<ZeroOffsets, ZeroOffsets::kLoaded>());
      return count / (4 * N) * 4 * N;
    }
  }
  run(Fixed(), Computed());
  return count / (4 * N) * 4 * N;
}

// The same with power-of-two scales (QuantParams::exact_products): each vector's codes from its
// block's exact products, four vectors per store, no flags.
template <int kSideVectors = -1, class K = StatKeys<StatKind::kAbs>, class Enc, class XT, class Out>
HWY_INLINE int64_t ProductBlockGroups(const Enc& enc, int64_t period, int64_t phase, int64_t count,
                                      const XT* HWY_RESTRICT x, const float* HWY_RESTRICT r,
                                      const int32_t* HWY_RESTRICT z, Out out, const BlockSide* side = nullptr,
                                      int64_t trees = 0) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const int64_t per_block = period / N;
  int64_t k = 0, left = per_block - phase / N;
  SideTrees<kSideVectors, K> side_trees(side, trees, period);
  auto codes = [&](int64_t i) QLINEAR_INLINE_LAMBDA {
    const auto c = VectorCodes<Quotients::kExactProduct>(enc, df, x + i, hn::Set(df, r[k]), hn::Set(di, z[k]));
    if (--left == 0) {
      ++k;
      left = per_block;
    }
    return c;
  };
  int64_t i = 0;
  for (; i + 4 * N <= count; i += 4 * N) {
    side_trees.AtGroup(i / (4 * N));
    const auto c0 = codes(i), c1 = codes(i + N), c2 = codes(i + 2 * N), c3 = codes(i + 3 * N);
    StoreFourCodes(df, c0, c1, c2, c3, out + i);
  }
  return i;
}

// Whether the block loop's side statistics pay for blocks of `period` elements (N lanes): trees
// of up to 2 KB of x; larger ones only with prefetching (x beyond the caches), and with MINMAX's
// two keys up to 4 KB. Their bursts of loads stalled the loop otherwise: blocks of 128 measured
// 0.72-0.97x at 64K-1M elements (AVX-512 and AVX2), and MINMAX's on AVX-512 0.93x at 16M.
inline bool BlockSideFits(int64_t N, int64_t period, bool prefetch, bool two_keys) {
  // (period may be any block size a caller gives: divided, not multiplied)
  return period <= 512 / N || (prefetch && (!two_keys || period <= 1024 / N));
}

// Whether a block loop takes side statistics (BlockSide): float32 x into <= 8-bit types (not
// int16 or uint16; float8/float4 and signed integers with |x|, integers with MINMAX's two keys),
// where the statistics tree exists.
template <class K, class Enc, class XT, class Out>
constexpr bool TakesBlockSide() {
  if constexpr (!QLINEAR_DYNAMIC_TREE || !std::is_same_v<XT, float>) {
    return false;
  } else if constexpr (K::kTwo) {
    return std::is_same_v<Enc, IntEncoder> && (!std::is_pointer_v<Out> || sizeof(std::remove_pointer_t<Out>) == 1);
  } else if constexpr (std::is_pointer_v<Out>) {
    return sizeof(std::remove_pointer_t<Out>) == 1 && !(std::is_same_v<Enc, IntEncoder> && std::is_same_v<Out, uint8_t*>);
  } else {
    return true;  // packed sub-byte outputs
  }
}

// BlockGroups (or ProductBlockGroups) of a run starting on a block, with the side statistics
// (BlockSide) of as many whole trees of N blocks as the groups cover: a tree's loads unrolled
// for blocks of 2 vectors (blocks of 32 on AVX-512: 0.77-0.87x with the loop), else a loop (the
// instantiations, per loop, encoder and keys, cost build time). Returns the elements done;
// *side_done: the side elements done. (A function apart: inlined into QuantizeBlocks, its
// variants slowed the loops without a side by 6-25%.)
template <class K, bool kClamp, class Enc, class Out>
HWY_NOINLINE int64_t BlockGroupsWithSide(const Enc& enc, int64_t period, int64_t count, const float* HWY_RESTRICT x,
                                         const RunParams& p, bool exact_products, Out out, const BlockSide& side,
                                         int64_t* side_done) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t trees = std::min(count / (4 * N) * 4 * N, side.count) / (N * period);
  *side_done = trees * N * period;
  auto groups = [&](auto side_vectors) {
    constexpr int kV = decltype(side_vectors)::value;
    if constexpr (!K::kTwo) {  // (MINMAX's scales are rarely all powers of two: not fused there)
      if (exact_products) return ProductBlockGroups<kV, K>(enc, period, 0, count, x, p.r, p.z, out, &side, trees);
    }
    return BlockGroups<kV, K, kClamp>(enc, period, 0, count, x, p.s, p.r, p.z, p.off, out, &side, trees);
  };
  return period == 2 * N ? groups(std::integral_constant<int, 2>()) : groups(std::integral_constant<int, 0>());
}

// A kBlocks run spanning more than one block: BlockGroups (or ProductBlockGroups) where the
// blocks are whole vectors, the rest a span per block. A run that starts inside a block off a
// vector boundary (a range call) finishes that block as a span first; on packed outputs that
// block's end is on a byte, as every block start is (quantize-inl.h PacksInRegisters).
// With `side` (a run starting on a block): also side statistics, inside the block loop where
// it runs; returns the side elements done (the caller does the rest).
template <class Enc, class XT, class Out>
HWY_NOINLINE int64_t QuantizeBlocks(const Enc& enc_ref, const Run& run, const XT* HWY_RESTRICT x, const RunParams& p,
                                    bool exact_products, Out out, const BlockSide* side = nullptr) {
  const Enc enc = enc_ref;  // see QuantizeSpan
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  // Locals: byte stores may alias `run` (GCC reloaded its fields after every block).
  const int64_t period = run.period, phase = run.phase, count = run.count;
  int64_t j = 0, side_done = 0;
  if (p.r != nullptr && period % N == 0) {
    if (phase % N != 0) {
      j = period - phase;  // < count: the run spans more than one block
      QuantizeSpan<Scales::kUniform>(enc, x, j, p.s, p.r, p.z, out, nullptr, exact_products);
    }
    const int64_t k = j == 0 ? 0 : 1, at = j == 0 ? phase : 0;  // the block and phase of element j
    bool taken = false;
    if (side != nullptr && phase == 0 && BlockSideFits(N, period, side->prefetch, side->neg != nullptr) &&
        !(exact_products && side->neg != nullptr)) {
      auto with_side = [&](auto keys) {
        using K = decltype(keys);
        if constexpr (TakesBlockSide<K, Enc, XT, Out>()) {
          // (a function per variant: one loop each, as inlined without the choice)
          if constexpr (std::is_same_v<Enc, IntEncoder> && QLINEAR_SKIPS_CLAMP) {
            if (side->in_range && !side->prefetch && !exact_products) {
              j = BlockGroupsWithSide<K, false>(enc, period, count, x, p, exact_products, out, *side, &side_done);
            } else {
              j = BlockGroupsWithSide<K, true>(enc, period, count, x, p, exact_products, out, *side, &side_done);
            }
          } else {
            j = BlockGroupsWithSide<K, true>(enc, period, count, x, p, exact_products, out, *side, &side_done);
          }
          taken = true;
        }
      };
      if (side->neg != nullptr) {
        with_side(StatKeys<StatKind::kMinMax>());
      } else {
        with_side(StatKeys<StatKind::kAbs>());
      }
    }
    if (!taken) {
      j += exact_products
               ? ProductBlockGroups(enc, period, at, count - j, x + j, p.r + k, p.z + k, out + j)
               : BlockGroups(enc, period, at, count - j, x + j, p.s + k, p.r + k, p.z + k,
                             p.off != nullptr ? p.off + k : nullptr, out + j);
    }
  }
  int64_t len = period - (phase + j) % period;
  for (int64_t k = (phase + j) / period; j < count; ++k, j += len, len = period) {
    len = std::min(len, count - j);
    QuantizeSpan<Scales::kUniform>(enc, x + j, len, p.s + k, p.r != nullptr ? p.r + k : nullptr, p.z + k, out + j,
                                   nullptr, exact_products);
  }
  return side_done;
}

// One run, xr[0, run.count) into out[0, run.count); with `side`, a run of one scale (where its
// side run lies below side->end) or of blocks (up to side->end) also takes its side run
// (SideStats), the latter inside the block loop where it can, else right after the run.
template <class Enc, class XT, class Out>
HWY_INLINE void QuantizeRun(const Enc& enc, RunKind kind, const Run& run, const XT* HWY_RESTRICT xr,
                            const QuantParams& prm, Out out, const SideStats* side = nullptr) {
  if constexpr (std::is_same_v<XT, float>) {  // (the only x the callers give a side to)
    if (side != nullptr && kind == RunKind::kBlocks) {
      // The side run: the same blocks groups_ahead further on, up to side->end (none: its
      // pointers are not formed, they may lie beyond x and the statistics).
      const int64_t side_count = std::min(run.count, side->end - run.start - side->distance);
      if (side_count <= 0) return QuantizeRun(enc, kind, run, xr, prm, out);
      const int64_t k = run.scale_first + side->groups_ahead - side->g_first;
      const BlockSide bs{xr + side->distance, side_count, side->amax + k,
                         side->neg != nullptr ? side->neg + k : nullptr, side->prefetch, side->in_range};
      int64_t done = 0;
      if constexpr (Enc::kReciprocal) {
        if (run.phase + run.count > run.period) {
          done = QuantizeBlocks(enc, run, xr, ParamsOfRun(run, prm), prm.exact_products, out, &bs);
        } else {
          QuantizeRun(enc, kind, run, xr, prm, out);
        }
      } else {
        QuantizeRun(enc, kind, run, xr, prm, out);
      }
      if (done < bs.count) {
        const Run rest{0, bs.count - done, 0, run.period, (run.phase + done) % run.period};
        const int64_t b = (run.phase + done) / run.period;
        if (bs.neg != nullptr) {
          RunStats<StatKeys<StatKind::kMinMax>>(bs.x + done, rest, bs.amax + b, bs.neg + b);
        } else {
          RunStats<StatKeys<StatKind::kAbs>>(bs.x + done, rest, bs.amax + b, nullptr);
        }
      }
      return;
    }
    if (side != nullptr && kind == RunKind::kUniform && run.phase + run.count <= run.period &&
        run.start + side->distance + run.count <= side->end) {
      const RunParams p = ParamsOfRun(run, prm);
      const int64_t k = run.scale_first + side->groups_ahead - side->g_first;
      return QuantizeSpanWithSide(enc, xr, run.count, p.s, p.r, p.z, out, prm.exact_products, xr + side->distance,
                                  side->amax + k, side->neg != nullptr ? side->neg + k : nullptr,
                                  side->end - run.start - side->distance, side->prefetch, side->in_range);
    }
  }
  if constexpr (Enc::kReciprocal) {  // (float8/float4 clamp tests keep to spans)
    if (kind == RunKind::kBlocks && run.phase + run.count > run.period) {
      QuantizeBlocks(enc, run, xr, ParamsOfRun(run, prm), prm.exact_products, out);
      return;
    }
  }
  ForEachSpan(run, prm, [&](const Span& sp) {
    if (sp.per_element) {
      QuantizeSpan<Scales::kPerElement>(enc, xr + sp.j, sp.len, sp.s, sp.r, sp.z, out + sp.j,
                                        sp.off != nullptr ? sp.off + sp.j : nullptr, prm.exact_products);
    } else {
      QuantizeSpan<Scales::kUniform>(enc, xr + sp.j, sp.len, sp.s, sp.r, sp.z, out + sp.j, nullptr,
                                     prm.exact_products);
    }
  });
}

// Four consecutive rows of len elements (row k at x + k * len) that share per-element scales, on
// the fixed-point reciprocal path with QuantParams::offsets: each column's reciprocals and
// offsets are loaded once for the four rows. Groups are two columns of two rows (one narrowing
// store per row pair, StoreTwoCodes); a last single column is a group of four rows.
template <class Enc, class XT, class TOut>
HWY_NOINLINE void RowGroups(const Enc& enc_ref, int64_t len, const XT* HWY_RESTRICT x,
                            const float* HWY_RESTRICT s, const float* HWY_RESTRICT r,
                            const int32_t* HWY_RESTRICT z, const float* HWY_RESTRICT off,
                            TOut* HWY_RESTRICT out) {
  const Enc enc = enc_ref;  // see QuantizeSpan
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr CodeForm kForm = ChooseCodeForm<Enc, Margin::kFixed, FourStores::kApart, decltype(df), TOut>();
  const auto lo = enc.ReciprocalLower(df);
  const auto hi = enc.ReciprocalUpper(df);
  auto encode = [&](int64_t row, int64_t col, hn::Vec<decltype(df)> vr, hn::Vec<decltype(df)> zoff,
                    hn::Mask<decltype(df)>* ok) QLINEAR_INLINE_LAMBDA {
    return enc.template Reciprocal<kForm, Margin::kFixed>(df, LoadAsF32(df, x + row * len + col), vr, hn::Zero(di),
                                                          zoff, lo, hi, ok);
  };
  auto divide_at = [&](int64_t row, int64_t col) {
    DivideVector(enc, df, x + row * len + col, hn::LoadU(df, s + col), hn::LoadU(di, z + col), out + row * len + col);
  };
  // Two columns: group g is column pair g / 2, rows 2 (g % 2) and 2 (g % 2) + 1; vector v is row
  // v / 2 of the pair, column v % 2. The column pair's vectors are loaded by the first group.
  auto vr0 = hn::Zero(df), vr1 = hn::Zero(df), zo0 = hn::Zero(df), zo1 = hn::Zero(df);
  auto pair_begin = [&](int64_t g) QLINEAR_INLINE_LAMBDA {
    if (g % 2 != 0) return;
    const int64_t col = g / 2 * 2 * N;
    vr0 = hn::LoadU(df, r + col);
    vr1 = hn::LoadU(df, r + col + N);
    zo0 = hn::LoadU(df, off + col);
    zo1 = hn::LoadU(df, off + col + N);
  };
  auto pair_codes = [&](int64_t g, int v, hn::Mask<decltype(df)>* ok) QLINEAR_INLINE_LAMBDA {
    const int64_t row = 2 * (g % 2) + v / 2, col = g / 2 * 2 * N + (v % 2) * N;
    return encode(row, col, v % 2 ? vr1 : vr0, v % 2 ? zo1 : zo0, ok);
  };
  auto pair_store = [&](int64_t g, auto c0, auto c1, auto c2, auto c3) QLINEAR_INLINE_LAMBDA {
    const int64_t row = 2 * (g % 2), col = g / 2 * 2 * N;
    StoreTwoCodes(df, c0, c1, out + row * len + col);
    StoreTwoCodes(df, c2, c3, out + (row + 1) * len + col);
  };
  auto pair_divide = [&](int64_t g, int v) { divide_at(2 * (g % 2) + v / 2, g / 2 * 2 * N + (v % 2) * N); };
  const int64_t pairs = len / (2 * N);
  FlaggedGroups(df, 2 * pairs, pair_begin, pair_codes, pair_store, pair_divide);
  int64_t i = pairs * 2 * N;
  if (i + N <= len) {  // one column: vector v is row v
    const int64_t col = i;
    const auto vr = hn::LoadU(df, r + col), zoff = hn::LoadU(df, off + col);
    auto col_codes = [&](int64_t, int v, hn::Mask<decltype(df)>* ok) QLINEAR_INLINE_LAMBDA {
      return encode(v, col, vr, zoff, ok);
    };
    auto col_store = [&](int64_t, auto c0, auto c1, auto c2, auto c3) QLINEAR_INLINE_LAMBDA {
      StoreCodes(df, c0, out + col);
      StoreCodes(df, c1, out + len + col);
      StoreCodes(df, c2, out + 2 * len + col);
      StoreCodes(df, c3, out + 3 * len + col);
    };
    FlaggedGroups(df, 1, [](int64_t) {}, col_codes, col_store, [&](int64_t, int v) { divide_at(v, col); });
    i += N;
  }
  if (i == len) return;
  for (int64_t row = 0; row < 4; ++row) {
    QuantizeSpan<Scales::kPerElement>(enc, x + row * len + i, len - i, s + i, r + i, z + i, out + row * len + i,
                                      off + i);
  }
}

// The runs of a kPerElement layout on the fixed-point reciprocal path (QuantParams::offsets):
// whole rows with the same scales go four at a time through RowGroups, every other run as usual.
template <class Enc, class XT, class TOut>
void QuantizeRowGroups(const Enc& enc, const QuantizePlan& p, const QuantParams& prm,
                       const XT* HWY_RESTRICT x, TOut* HWY_RESTRICT out) {
  const int64_t b = p.begin;
  ForEachRowGroup(
      p.layout, b, p.end, [](const Run&) { return true; },
      [&](const Run& first) {
        const RunParams rp = ParamsOfRun(first, prm);
        RowGroups(enc, first.count, x + (first.start - b), rp.s, rp.r, rp.z, rp.off, out + (first.start - b));
      },
      [&](const Run& r) { QuantizeRun(enc, RunKind::kPerElement, r, x + (r.start - b), prm, out + (r.start - b)); });
}

// ---- the QuantizeLinear driver body -----------------------------------------------------------

// Whether a sub-byte plan with a kUniform, kPerElement or kBlocks layout is packed in registers
// (PackedOut): every run (ForEachRun) from a byte boundary starts on one, i.e. the per-axis or
// outer-axis stretch is whole bytes, and is long enough that its tail (packed through the
// stack, PackLanes) is a small part of it. Blocks along the last axis also need whole vectors
// (lanes: N), so that BlockGroups takes them (N is a multiple of 4, so blocks are whole bytes),
// and rows of whole bytes (rows that blocks tile are one run).
inline bool PacksInRegisters(const Layout& l, int per, int64_t lanes) {
  constexpr int64_t kMinRun = 64;
  int64_t stretch = 0;
  switch (l.granularity) {
    case Granularity::kPerTensor:
      return true;
    case Granularity::kPerAxis:
      stretch = l.inner == 1 ? l.axis_dim : l.inner;
      break;
    case Granularity::kBlocked:
      if (l.inner > 1) {
        stretch = l.inner;
      } else if (l.block % lanes == 0 && lanes % 4 == 0) {
        stretch = l.axis_dim % l.block == 0 ? l.count : l.axis_dim;
      }
      break;
  }
  return stretch >= kMinRun && stretch % per == 0;
}

// Returns whether `side` was taken: by every run of one scale or of blocks (float32 x), if any.
template <class XT, class TOut, class Enc>
bool QuantizeAll(const Enc& enc, const QuantizePlan& p, const QuantParams& prm, void* y,
                 const SideStats* side = nullptr) {
  // Elements [p.begin, p.end); x and y point at element p.begin.
  const XT* x = static_cast<const XT*>(p.x);
  const int bits = Info(p.y_type).bits;
  const int64_t b = p.begin;
  const RunKind kind = RunKindOf(p.layout);
  const bool takes_side =
      side != nullptr && (kind == RunKind::kUniform || kind == RunKind::kBlocks) && std::is_same_v<XT, float>;
  if (bits >= 8) {
    TOut* out = static_cast<TOut*>(y);
    if constexpr (std::is_same_v<Enc, IntEncoder>) {
      if (kind == RunKind::kPerElement && prm.offsets != nullptr) {
        QuantizeRowGroups(enc, p, prm, x, out);
        return false;
      }
    }
    ForEachRun(p.layout, b, p.end, [&](const Run& r) {
      QuantizeRun(enc, kind, r, x + (r.start - b), prm, out + (r.start - b), side);
    });
    return takes_side;
  }
  uint8_t* out = static_cast<uint8_t*>(y);
  const int per = 8 / bits;
#if HWY_TARGET != HWY_SCALAR
  // Sub-byte outputs, one scale per run, a scale per element or blocks of whole vectors,
  // every run and block starting on a byte (p.begin is one): the loops pack each group's codes
  // in registers as they store them.
  // (Instantiated only for the encoders of sub-byte types: integers with byte codes, float4.)
  // float16/bfloat16 x too, except on AVX-512, where staging was 10-17% faster in cache
  // (int4 at 64K and 1M); elsewhere packing gained 30-45% (AVX2, int4 and float4).
  constexpr bool kFloat4 = std::is_same_v<Enc, MiniFloatEncoder<DType::kFloat4E2M1>>;
  constexpr bool kPackedX = std::is_same_v<XT, float> || !QLINEAR_AVX512;
  if constexpr (kPackedX && (kFloat4 || (std::is_same_v<Enc, IntEncoder> && sizeof(TOut) == 1))) {
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
    if (kind != RunKind::kShortBlocks && PacksInRegisters(p.layout, per, lanes)) {
      auto packed = [&](auto out0) {
        ForEachRun(p.layout, b, p.end, [&](const Run& r) {
          QuantizeRun(enc, kind, r, x + (r.start - b), prm, out0 + (r.start - b), side);
        });
        return takes_side;
      };
      if constexpr (kFloat4) {
        return packed(PackedOut<4>{out});
      } else {
        return bits == 4 ? packed(PackedOut<4>{out}) : packed(PackedOut<2>{out});
      }
    }
  }
#endif
  // Other sub-byte plans: chunks on byte boundaries (p.begin is one); codes staged one per
  // byte, padding codes zero.
  HWY_ALIGN TOut codes[kChunk];
  const bool prefetch = ElementsForChoices(p) >= kPrefetchFrom;
  for (int64_t c0 = b; c0 < p.end; c0 += kChunk) {
    const int64_t c1 = std::min(p.end, c0 + kChunk);
    if (prefetch) {  // the next chunk's x (kPrefetchFrom; a chunk of float32 is 4 KB)
      const char* next = reinterpret_cast<const char*>(x + (c1 - b));
      const int64_t bytes = (std::min(p.end, c1 + kChunk) - c1) * static_cast<int64_t>(sizeof(XT));
      for (int64_t o = 0; o < bytes; o += 64) hwy::Prefetch(next + o);
    }
    ForEachRun(p.layout, c0, c1, [&](const Run& r) {
      QuantizeRun(enc, kind, r, x + (r.start - b), prm, codes + (r.start - c0));
    });
    const int64_t padded = (c1 - c0 + per - 1) / per * per;
    std::fill(codes + (c1 - c0), codes + padded, TOut{0});
    if (bits == 4) {
      PackCodes<4>(reinterpret_cast<const uint8_t*>(codes), padded, out + (c0 - b) / per);
    } else {
      PackCodes<2>(reinterpret_cast<const uint8_t*>(codes), padded, out + (c0 - b) / per);
    }
  }
  return false;
}

// The encoder of output type kY for a plan.
template <DType kY>
auto EncoderFor(const QuantizePlan& p) {
  if constexpr (Info(kY).kind == Kind::kMiniFloat) {
    return MiniFloatEncoder<kY>{kY == DType::kFloat4E2M1 || p.saturate, p.prec};
  } else {
    return IntEncoder{Info(kY).qmin, Info(kY).qmax, p.prec};
  }
}

// Vector QuantizeLinear for plans that VectorQuantizeSupported accepts, into the outputs of one
// family: integers (kMiniFloat false) or float8/float4. One instantiation per (x storage, code
// storage, encoder), generated from the type list. Returns whether `side` was taken (QuantizeAll).
template <bool kMiniFloat>
bool QuantizeVectorOf(const QuantizePlan& p, const QuantParams& prm, void* y, const SideStats* side) {
  bool taken = false;
  WithDType(p.x_type, [&](auto xt) {
    constexpr DType kX = decltype(xt)::kType;
    if constexpr (IsQuantizeInput(kX)) {
      WithDType(p.y_type, [&](auto yt) {
        constexpr DType kY = decltype(yt)::kType;
        if constexpr (IsQuantized(kY) && kY != DType::kInt32 && (Info(kY).kind == Kind::kMiniFloat) == kMiniFloat) {
          taken = QuantizeAll<FloatStorage<kX>, CodeStorage<kY>>(EncoderFor<kY>(p), p, prm, y, side);
        }
      });
    }
  });
  return taken;
}

// QuantizeVectorOf<true>, compiled in its own foreach_target unit (kernels_quantize_minifloat.cc),
// so that a build with two cores compiles the two families side by side.
bool QuantizeVectorMiniFloat(const QuantizePlan& p, const QuantParams& prm, void* y, const SideStats* side);

// Vector QuantizeLinear, either family.
inline bool QuantizeVector(const QuantizePlan& p, const QuantParams& prm, void* y, const SideStats* side = nullptr) {
  if (Info(p.y_type).kind == Kind::kMiniFloat) return QuantizeVectorMiniFloat(p, prm, y, side);
  return QuantizeVectorOf<false>(p, prm, y, side);
}

// ---- DynamicQuantizeLinear ------------------------------------------------------------------------

// min(0, min x) and max(0, max x), NaN lanes ignored (replaced by 0, which the range contains).
// Four vectors per iteration in chains of their own (one chain waited on the min/max latency:
// DynamicQuantizeLinear ran 1.15-1.19x slower in cache, docs/performance.md). The chains' order
// of combining can change only the sign of a zero bound, which the parameters do not see.
inline void RangeOf(const float* HWY_RESTRICT x, int64_t n, float* lo, float* hi) {
  const hn::ScalableTag<float> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto min0 = hn::Zero(df), min1 = min0, min2 = min0, min3 = min0;
  auto max0 = hn::Zero(df), max1 = max0, max2 = max0, max3 = max0;
  auto clean = [](hn::Vec<decltype(df)> v) QLINEAR_INLINE_LAMBDA { return hn::IfThenZeroElse(hn::IsNaN(v), v); };
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const auto v0 = clean(hn::LoadU(df, x + i)), v1 = clean(hn::LoadU(df, x + i + N));
    const auto v2 = clean(hn::LoadU(df, x + i + 2 * N)), v3 = clean(hn::LoadU(df, x + i + 3 * N));
    min0 = hn::Min(min0, v0);
    min1 = hn::Min(min1, v1);
    min2 = hn::Min(min2, v2);
    min3 = hn::Min(min3, v3);
    max0 = hn::Max(max0, v0);
    max1 = hn::Max(max1, v1);
    max2 = hn::Max(max2, v2);
    max3 = hn::Max(max3, v3);
  }
  for (; i + N <= n; i += N) {
    const auto v = clean(hn::LoadU(df, x + i));
    min0 = hn::Min(min0, v);
    max0 = hn::Max(max0, v);
  }
  const auto vmin = hn::Min(hn::Min(min0, min1), hn::Min(min2, min3));
  const auto vmax = hn::Max(hn::Max(max0, max1), hn::Max(max2, max3));
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
  QuantizeSpan<Scales::kUniform>(IntEncoder{0, 255, Prec::kF32}, x, n, scale,
                                 reciprocal && std::isnormal(r) ? &r : nullptr, &z, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_QUANTIZE_INL_H_
