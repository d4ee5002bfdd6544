// Per-target group statistics for dynamic quantization (Highway include-guard toggle).
//
// Every statistic is a max of int32 keys that start at 0, so no lane ever meets Min/Max's NaN
// policy and partial results combine by max in any order or overlap:
//   kAbs     key = |x|'s bits               -> amax; NaN and +-Inf give keys >= 0x7F800000
//   kMinMax  keys = x's bits and -x's bits  -> hi = max(0, max x) and -lo = max(0, -min x):
//            negative values have negative keys (-0.0 is INT32_MIN), so 0 wins over them
// The finite-only kinds give NaN/Inf lanes the key 0 (ABSMAX and MINMAX leave them out).
// Valid for float32, float16 and bfloat16 x (loaded exactly as float32). Overlapping loads are
// harmless (max is idempotent): a segment's tail is its last full vector, or, for segments
// shorter than a vector, a copy padded with +0.
#if defined(QLINEAR_LIB_DYNAMIC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_DYNAMIC_INL_H_
#undef QLINEAR_LIB_DYNAMIC_INL_H_
#else
#define QLINEAR_LIB_DYNAMIC_INL_H_
#endif

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <limits>

#include "hwy/highway.h"
#include "lib/convert-inl.h"
#include "lib/dynamic.h"
#include "lib/minifloat.h"
#include "lib/plan.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#ifndef QLINEAR_DYNAMIC_INLINE_LAMBDA
#if defined(__GNUC__) || defined(__clang__)
#define QLINEAR_DYNAMIC_INLINE_LAMBDA __attribute__((always_inline))
#else
#define QLINEAR_DYNAMIC_INLINE_LAMBDA
#endif
#endif

// GCC 12 auto-vectorizes the SCALAR target's loops (plain C++ there) and on aarch64 miscompiled
// the two-chain bfloat16 reduction below (an Inf among the even elements of a 407-element
// segment was lost). On SCALAR the loops are kept scalar by an empty asm on the loop counter.
#undef QLINEAR_SCALAR_LOOP
#if HWY_TARGET == HWY_SCALAR && defined(__GNUC__) && !defined(__clang__)
#define QLINEAR_SCALAR_LOOP(i) asm volatile("" : "+r"(i))
#else
#define QLINEAR_SCALAR_LOOP(i)
#endif

// Whether the fused loops (quantize-inl.h) skip the clamp of integer codes where the chunk's
// statistics bound every quotient (SideStats::in_range): x86 with vectors of up to 256 bits.
// On AVX2 (Zen 4) that made int8 per row 1.09-1.4x faster; AVX-512 measured 0.92-1.03x (its
// loops are not bound by the two operations), so it keeps the clamp and skips the check.
#undef QLINEAR_SKIPS_CLAMP
#if HWY_ARCH_X86 && HWY_TARGET >= HWY_AVX2 && HWY_TARGET <= HWY_SSE4
#define QLINEAR_SKIPS_CLAMP 1
#else
#define QLINEAR_SKIPS_CLAMP 0
#endif

// The keys of one statistic kind (see the top of the file).
template <StatKind kKind>
struct StatKeys {
  static constexpr bool kMinMax = kKind == StatKind::kMinMax || kKind == StatKind::kMinMaxFinite;
  static constexpr bool kFinite = kKind == StatKind::kAbsFinite || kKind == StatKind::kMinMaxFinite;
  static constexpr bool kTwo = kMinMax;  // s1 is kept too
  // The first statistic's lanes before their key: |x|'s bits, or for MINMAX x's own bits, whose
  // unsigned order puts every negative value above every other and orders them by magnitude
  // (0 for NaN/Inf lanes of the finite-only kinds). Loops keep the unsigned max of these
  // (MaxRaw) and take the key once per reduction (KeyOfRaw, ReducedKey): one op per vector.
  template <class DF, class DI = hn::RebindToSigned<DF>>
  static HWY_INLINE hn::Vec<DI> Raw(DF /*df*/, hn::Vec<DF> v) {
    const DI di;
    const auto bits = hn::BitCast(di, v);
    if constexpr (kMinMax) {
      return KeepFinite(di, bits, bits);
    } else {
      return KeepFinite(di, bits, hn::And(bits, hn::Set(di, 0x7FFFFFFF)));
    }
  }
  template <class VI>
  static HWY_INLINE VI MaxRaw(VI a, VI b) {
    const hn::DFromV<VI> di;
    const hn::RebindToUnsigned<decltype(di)> du;
    return hn::BitCast(di, hn::Max(hn::BitCast(du, a), hn::BitCast(du, b)));
  }
  // Flipping bit 31 maps unsigned order to int32 order, so the key of the raw max is the max of
  // the keys; MINMAX keys of x >= +0 are negative and lose to 0.
  template <class VI>
  static HWY_INLINE VI KeyOfRaw(VI raw) {
    if constexpr (kMinMax) {
      return hn::Xor(raw, hn::Set(hn::DFromV<VI>(), INT32_MIN));
    } else {
      return raw;
    }
  }
  // max(0, the largest key) of the lanes of raw maxima.
  template <class DI>
  static HWY_INLINE uint32_t ReducedKey(DI /*di*/, hn::Vec<DI> raw) {
    const hn::RebindToUnsigned<DI> du;
    const uint32_t m = hn::GetLane(hn::MaxOfLanes(du, hn::BitCast(du, raw)));
    if constexpr (kMinMax) return m >= 0x80000000u ? m & 0x7FFFFFFFu : 0;
    return m;
  }
  template <class DF, class DI = hn::RebindToSigned<DF>>
  static HWY_INLINE hn::Vec<DI> First(DF df, hn::Vec<DF> v) {
    return KeyOfRaw(Raw(df, v));
  }
  template <class DF, class DI = hn::RebindToSigned<DF>>
  static HWY_INLINE hn::Vec<DI> Second(DF /*df*/, hn::Vec<DF> v) {
    const DI di;
    const auto bits = hn::BitCast(di, v);
    return KeepFinite(di, bits, bits);
  }
  // key, or 0 where x is NaN or +-Inf (finite-only kinds).
  template <class DI, class VI = hn::Vec<DI>>
  static HWY_INLINE VI KeepFinite(DI di, VI bits, VI key) {
    if constexpr (!kFinite) return key;
    const auto finite = hn::Lt(hn::And(bits, hn::Set(di, 0x7FFFFFFF)), hn::Set(di, 0x7F800000));
    return hn::IfThenElseZero(finite, key);
  }
};

// Combines a reduced key into a statistic (both >= 0: unsigned order is the int32 order).
HWY_INLINE void Combine(uint32_t key, uint32_t* s) { *s = std::max(*s, key); }

// One statistic over the contiguous len >= 1 elements of x: four vectors per iteration, each
// in its own chain (a max has a cycle of latency; two chains left per-row statistics at 60% of
// the load rate on Zen 5).
template <class K, class XT>
HWY_INLINE void SegmentStats(const XT* HWY_RESTRICT x, int64_t len, uint32_t* s0, uint32_t* s1) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto a0 = hn::Zero(di), b0 = hn::Zero(di), c0 = hn::Zero(di), d0 = hn::Zero(di);
  auto a1 = hn::Zero(di), b1 = hn::Zero(di), c1 = hn::Zero(di), d1 = hn::Zero(di);
  int64_t i = 0;
  for (; i + 4 * N <= len; i += 4 * N) {
    QLINEAR_SCALAR_LOOP(i);
    const auto v = LoadAsF32(df, x + i), w = LoadAsF32(df, x + i + N);
    const auto t = LoadAsF32(df, x + i + 2 * N), u = LoadAsF32(df, x + i + 3 * N);
    a0 = K::MaxRaw(a0, K::Raw(df, v));
    b0 = K::MaxRaw(b0, K::Raw(df, w));
    c0 = K::MaxRaw(c0, K::Raw(df, t));
    d0 = K::MaxRaw(d0, K::Raw(df, u));
    if constexpr (K::kTwo) {
      a1 = hn::Max(a1, K::Second(df, v));
      b1 = hn::Max(b1, K::Second(df, w));
      c1 = hn::Max(c1, K::Second(df, t));
      d1 = hn::Max(d1, K::Second(df, u));
    }
  }
  for (; i + N <= len; i += N) {
    QLINEAR_SCALAR_LOOP(i);
    const auto v = LoadAsF32(df, x + i);
    a0 = K::MaxRaw(a0, K::Raw(df, v));
    if constexpr (K::kTwo) a1 = hn::Max(a1, K::Second(df, v));
  }
  if (i < len) {
    HWY_ALIGN XT buf[hn::MaxLanes(df)] = {};  // +0.0 in every float format
    if (len < N) std::memcpy(buf, x, static_cast<size_t>(len) * sizeof(XT));
    // The last full vector (overlapping counted lanes is harmless), or the padded copy.
    const auto v = LoadAsF32(df, len >= N ? x + len - N : buf);
    b0 = K::MaxRaw(b0, K::Raw(df, v));
    if constexpr (K::kTwo) b1 = hn::Max(b1, K::Second(df, v));
  }
  Combine(K::ReducedKey(di, K::MaxRaw(K::MaxRaw(a0, b0), K::MaxRaw(c0, d0))), s0);
  if constexpr (K::kTwo) {
    Combine(static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(di, hn::Max(hn::Max(a1, b1), hn::Max(c1, d1))))), s1);
  }
}

// A statistic per element: s[j] = max(s[j], key(x[j])) for j < len (per-element scales).
template <class K, class XT>
HWY_INLINE void ElementStats(const XT* HWY_RESTRICT x, int64_t len, uint32_t* HWY_RESTRICT s0,
                             uint32_t* HWY_RESTRICT s1) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  // Signed and unsigned int32 may alias: the keys are int32 lanes over the uint32 statistics.
  int32_t* t0 = reinterpret_cast<int32_t*>(s0);
  int32_t* t1 = reinterpret_cast<int32_t*>(s1);
  int64_t i = 0;
  for (; i + N <= len; i += N) {
    QLINEAR_SCALAR_LOOP(i);
    const auto v = LoadAsF32(df, x + i);
    hn::StoreU(hn::Max(hn::LoadU(di, t0 + i), K::First(df, v)), di, t0 + i);
    if constexpr (K::kTwo) hn::StoreU(hn::Max(hn::LoadU(di, t1 + i), K::Second(df, v)), di, t1 + i);
  }
  if (i == len) return;
  const size_t rem = static_cast<size_t>(len - i);
  HWY_ALIGN XT xb[hn::MaxLanes(df)] = {};
  HWY_ALIGN int32_t b0[hn::MaxLanes(df)] = {};
  std::memcpy(xb, x + i, rem * sizeof(XT));
  std::memcpy(b0, t0 + i, rem * sizeof(int32_t));
  const auto v = LoadAsF32(df, xb);
  hn::Store(hn::Max(hn::Load(di, b0), K::First(df, v)), di, b0);
  std::memcpy(t0 + i, b0, rem * sizeof(int32_t));
  if constexpr (K::kTwo) {
    HWY_ALIGN int32_t b1[hn::MaxLanes(df)] = {};
    std::memcpy(b1, t1 + i, rem * sizeof(int32_t));
    hn::Store(hn::Max(hn::Load(di, b1), K::Second(df, v)), di, b1);
    std::memcpy(t1 + i, b1, rem * sizeof(int32_t));
  }
}

#undef QLINEAR_DYNAMIC_TREE
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
#define QLINEAR_DYNAMIC_TREE 1
// Fixed-size vectors only (SVE's are sizeless and cannot be members): the two keys of a block.
template <class V>
struct KeyPair {
  V first, second;
};

// Max of kCount consecutive blocks' key vectors, reduced across lanes all at once: T(2k) =
// Max(ConcatEven(T(hi k), T(lo k)), ConcatOdd(...)) keeps, in order, groups of N/2k lanes per
// block, each the max of 2k of the block's lanes; T(N) has one lane per block. N - 1 pairs of
// permutes and maxes for N blocks, where a reduction per block costs log2(N) of them each.
template <size_t kCount, class DI, class Leaf, class V = hn::Vec<DI>>
HWY_INLINE KeyPair<V> TreeMax(DI di, const Leaf& leaf, int64_t j) {
  if constexpr (kCount == 1) {
    return leaf(j);
  } else {
    const KeyPair<V> lo = TreeMax<kCount / 2>(di, leaf, j);
    const KeyPair<V> hi = TreeMax<kCount / 2>(di, leaf, j + static_cast<int64_t>(kCount / 2));
    auto join = [di](V h, V l) { return hn::Max(hn::ConcatEven(di, h, l), hn::ConcatOdd(di, h, l)); };
    return KeyPair<V>{join(hi.first, lo.first), join(hi.second, lo.second)};
  }
}

// The same for N = 4 or 8 with shuffles inside 128-bit blocks, which are cheaper than
// ConcatEven/ConcatOdd across 256-bit vectors: interleaving the 32-bit lanes of blocks a and b
// and taking the max leaves a's and b's partial maxima in alternate lanes; interleaving the
// 64-bit lanes of two such pairs leaves, in each 128-bit block, one lane per block [a b c d],
// the max of that 128-bit block's lanes. For N = 8 the low halves of [a b c d | a b c d] and
// [e f g h | e f g h] then meet the high halves: [a .. h]. 3 shuffle-max steps for 4 blocks,
// 7 for 8, one of them across 128-bit blocks.
template <class DI, class V = hn::Vec<DI>>
HWY_INLINE V InterleaveMax(DI di, V a, V b) {
  return hn::Max(hn::InterleaveLower(di, a, b), hn::InterleaveUpper(di, a, b));
}
template <class DI, class V = hn::Vec<DI>>
HWY_INLINE V InterleaveMax64(DI di, V ab, V cd) {
  const hn::Repartition<int64_t, DI> d64;
  const auto x = hn::BitCast(d64, ab), y = hn::BitCast(d64, cd);
  return hn::Max(hn::BitCast(di, hn::InterleaveLower(d64, x, y)), hn::BitCast(di, hn::InterleaveUpper(d64, x, y)));
}
template <class DI, class V = hn::Vec<DI>>
HWY_INLINE V FourBlocksMax(DI di, V a, V b, V c, V d) {
  return InterleaveMax64(di, InterleaveMax(di, a, b), InterleaveMax(di, c, d));
}
template <size_t kN, class DI, class Leaf, class V = hn::Vec<DI>>
HWY_INLINE KeyPair<V> BlocksMax(DI di, const Leaf& leaf) {
  if constexpr (kN == 4 || kN == 8) {
    const KeyPair<V> a = leaf(0), b = leaf(1), c = leaf(2), d = leaf(3);
    KeyPair<V> r{FourBlocksMax(di, a.first, b.first, c.first, d.first),
                 FourBlocksMax(di, a.second, b.second, c.second, d.second)};
    if constexpr (kN == 8) {
      const KeyPair<V> e = leaf(4), f = leaf(5), g = leaf(6), h = leaf(7);
      auto halves = [di](V lo, V hi) {
        return hn::Max(hn::ConcatLowerLower(di, hi, lo), hn::ConcatUpperUpper(di, hi, lo));
      };
      r.first = halves(r.first, FourBlocksMax(di, e.first, f.first, g.first, h.first));
      r.second = halves(r.second, FourBlocksMax(di, e.second, f.second, g.second, h.second));
    }
    return r;
  } else {
    return TreeMax<kN>(di, leaf, 0);
  }
}

// N whole blocks of `period` elements (a multiple of N: kVectors = period / N when that is a
// constant, so the block's loads are unrolled, else 0) into s0[0, N) (and s1[0, N)); each
// vector of x is loaded once for both keys.
template <class K, int kVectors, class XT>
HWY_INLINE void TreeBlocks(const XT* HWY_RESTRICT x, int64_t period, uint32_t* s0, uint32_t* s1) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  using V = hn::Vec<decltype(di)>;
  constexpr size_t kN = hn::MaxLanes(di);
  const int64_t N = static_cast<int64_t>(kN);
  const int64_t vectors = kVectors > 0 ? kVectors : period / N;
  auto leaf = [&](int64_t j) QLINEAR_DYNAMIC_INLINE_LAMBDA {
    const XT* p = x + j * period;
    auto v = LoadAsF32(df, p);
    KeyPair<V> m{K::Raw(df, v), K::kTwo ? K::Second(df, v) : hn::Zero(di)};
    for (int64_t o = 1; o < vectors; ++o) {
      v = LoadAsF32(df, p + o * N);
      m.first = K::MaxRaw(m.first, K::Raw(df, v));
      if constexpr (K::kTwo) m.second = hn::Max(m.second, K::Second(df, v));
    }
    m.first = K::KeyOfRaw(m.first);
    return m;
  };
  const KeyPair<V> r = BlocksMax<kN>(di, leaf);
  int32_t* t0 = reinterpret_cast<int32_t*>(s0);
  hn::StoreU(hn::Max(hn::LoadU(di, t0), r.first), di, t0);
  if constexpr (K::kTwo) {
    int32_t* t1 = reinterpret_cast<int32_t*>(s1);
    hn::StoreU(hn::Max(hn::LoadU(di, t1), r.second), di, t1);
  }
}

// Runs of whole trees of blocks, [i, count) of x: returns the new i (k advances with it).
template <class K, int kVectors, class XT>
HWY_INLINE int64_t TreeRun(const XT* HWY_RESTRICT x, int64_t period, int64_t i, int64_t count, int64_t* k,
                           uint32_t* s0, uint32_t* s1) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  for (; i + N * period <= count; i += N * period, *k += N) {
    TreeBlocks<K, kVectors>(x + i, period, s0 + *k, K::kTwo ? s1 + *k : nullptr);
  }
  return i;
}
#else
#define QLINEAR_DYNAMIC_TREE 0
#endif

// A run (plan.h) of `count` elements whose element j uses statistic (phase + j) / period.
template <class K, class XT>
HWY_INLINE void RunStats(const XT* HWY_RESTRICT x, const Run& r, uint32_t* s0, uint32_t* s1) {
  if (r.phase + r.count <= r.period) return SegmentStats<K>(x, r.count, s0, s1);
  if (r.period == 1) return ElementStats<K>(x, r.count, s0, s1);
  int64_t i = 0, k = 0;
  if (r.phase > 0) {  // the end of a block begun before the run
    i = r.period - r.phase;
    SegmentStats<K>(x, i, s0, s1);
    k = 1;
  }
#if QLINEAR_DYNAMIC_TREE
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  if (r.period % N == 0) {  // blocks of 1, 2, 4, 8 or 16 vectors unrolled (32 elements: 4 or 8)
    switch (r.period / N) {
      case 1: i = TreeRun<K, 1>(x, r.period, i, r.count, &k, s0, s1); break;
      case 2: i = TreeRun<K, 2>(x, r.period, i, r.count, &k, s0, s1); break;
      case 4: i = TreeRun<K, 4>(x, r.period, i, r.count, &k, s0, s1); break;
      case 8: i = TreeRun<K, 8>(x, r.period, i, r.count, &k, s0, s1); break;
      case 16: i = TreeRun<K, 16>(x, r.period, i, r.count, &k, s0, s1); break;
      default: i = TreeRun<K, 0>(x, r.period, i, r.count, &k, s0, s1);
    }
  }
#endif
  for (; i < r.count; i += r.period, ++k) {
    SegmentStats<K>(x + i, std::min(r.period, r.count - i), s0 + k, K::kTwo ? s1 + k : nullptr);
  }
}

template <class K, class XT>
void StatsOfRange(const Layout& l, int64_t begin, int64_t end, const XT* HWY_RESTRICT x,
                  int64_t g_first, uint32_t* s0, uint32_t* s1) {
  ForEachRun(l, begin, end, [&](const Run& r) {
    const int64_t k = r.scale_first - g_first;
    RunStats<K>(x + (r.start - begin), r, s0 + k, K::kTwo ? s1 + k : nullptr);
  });
}

template <class XT>
void StatsForX(StatKind kind, const Layout& l, int64_t begin, int64_t end, const void* x,
               int64_t g_first, uint32_t* s0, uint32_t* s1) {
  const XT* p = static_cast<const XT*>(x);
  auto stats = [&](auto keys) { StatsOfRange<decltype(keys)>(l, begin, end, p, g_first, s0, s1); };
  switch (kind) {
    case StatKind::kAbs: return stats(StatKeys<StatKind::kAbs>());
    case StatKind::kAbsFinite: return stats(StatKeys<StatKind::kAbsFinite>());
    case StatKind::kMinMax: return stats(StatKeys<StatKind::kMinMax>());
    case StatKind::kMinMaxFinite: return stats(StatKeys<StatKind::kMinMaxFinite>());
  }
}

// ---- scales from statistics ------------------------------------------------------------------
//
// GroupScaleFromStats (dynamic.cc) for a vector of groups, with the same results lane for lane:
// float32 quotients are IEEE divisions (one rounding of the exact quotient of two float32
// values), e8m0 codes come from exponent fields, float16/bfloat16 scales are rounded from
// float32 by convert-inl.h. ABSMAX into float16/bfloat16 must round the exact quotient, not its
// float32 rounding: the two differ only where the float32 quotient is exactly a midpoint of the
// narrower format, and those (rare) lanes are recomputed by ReferenceGroupScale.

// s (> 0 or +0, never NaN) rounded to the scale type t with the edge rules (0 -> the smallest
// positive subnormal, overflow -> the largest finite value): its value as float32 ...
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V ScaleValueLanes(DF df, V s, DType t) {
  if (t == DType::kFloat32) {
    s = hn::IfThenElse(hn::Eq(s, hn::Zero(df)), hn::Set(df, std::numeric_limits<float>::denorm_min()), s);
    return hn::IfThenElse(hn::IsInf(s), hn::Set(df, FLT_MAX), s);
  }
  const bool half = t == DType::kFloat16;
  const V r = half ? RoundToF16(df, s) : RoundToBF16(df, s);
  const V tiny = hn::Set(df, half ? 0x1p-24f : 0x1p-133f);
  const V max = hn::Set(df, half ? 65504.0f : FloatOf(0x7F7F0000u));
  return hn::IfThenElse(hn::IsInf(r), max, hn::IfThenElse(hn::Eq(r, hn::Zero(df)), tiny, r));
}
// ... and its code (float32 bits, or float16/bfloat16 bits in the low 16 bits).
template <class DF, class V = hn::Vec<DF>, class VI = hn::Vec<hn::RebindToSigned<DF>>>
HWY_INLINE VI ScaleCodeLanes(DF df, V s, DType t) {
  const hn::RebindToSigned<DF> di;
  if (t == DType::kFloat32) return hn::BitCast(di, ScaleValueLanes(df, s, t));
  const bool half = t == DType::kFloat16;
  const VI c = half ? F16Bits(df, s) : BF16Bits(df, s);
  const VI inf = hn::Set(di, half ? 0x7C00 : 0x7F80);
  return hn::IfThenElse(hn::Eq(c, inf), hn::Sub(inf, hn::Set(di, 1)),
                        hn::IfThenElse(hn::Eq(c, hn::Zero(di)), hn::Set(di, 1), c));
}

// Lanes of q (> 0) that lie exactly halfway between two values of float16 (or bfloat16).
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE hn::Mask<DF> HalfMidpoints(DF df, V q, DType t) {
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(di, q);
  if (t == DType::kBFloat16) {  // 16 bits below bfloat16's, float32 subnormals included
    return hn::RebindMask(df, hn::Eq(hn::And(bits, hn::Set(di, 0xFFFF)), hn::Set(di, 0x8000)));
  }
  // float16 normals: 13 bits below; below 2^-14 the grid is 2^-24 (q 2^24 is exact).
  const auto normal = hn::RebindMask(df, hn::Eq(hn::And(bits, hn::Set(di, 0x1FFF)), hn::Set(di, 0x1000)));
  const V u = hn::Mul(q, hn::Set(df, 0x1p24f));
  const auto sub = hn::Eq(hn::Sub(u, hn::Floor(u)), hn::Set(df, 0.5f));
  const auto small = hn::Lt(q, hn::Set(df, 0x1p-14f));
  return hn::Or(hn::And(small, sub), hn::AndNot(small, normal));
}

// n groups: values[k] (the scale as float32), codes[k] (its code in the scale type), zps[k]
// (MINMAX zero points). s1 is read for MINMAX only. Returns (where QLINEAR_SKIPS_CLAMP, else
// false) whether every group's finite
// elements quantize within the output's range without clamping (SideStats::in_range): integer
// outputs, ABSMAX or MINMAX, hi <= (qmax - zp + 0.5) s and -lo <= (zp - qmin + 0.5) s with s
// normal. Those bounds' roundings and the reciprocal's add at most 2^-15 to |x (1/s) + zp|, so
// the unclamped fixed point t (encode-inl.h IntEncoder::Reciprocal) either floors to the
// clamped code or is flagged.
inline bool ScalesVector(const RuleFacts& f, const uint32_t* HWY_RESTRICT s0,
                         const uint32_t* HWY_RESTRICT s1, int64_t n, float* HWY_RESTRICT values,
                         uint32_t* HWY_RESTRICT codes, int32_t* HWY_RESTRICT zps) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const DType t = f.scale_type;
  const GroupScale empty = ReferenceGroupScale(f, 0.0, 0.0, false);  // range 0 / amax 0
  const float levels = static_cast<float>(f.qmax - f.qmin);
  const uint32_t pbits = BitsOf(f.p);
  const int32_t p_exp = static_cast<int32_t>(pbits >> 23) - 127, p_frac = static_cast<int32_t>(pbits & 0x7FFFFF);
  const int32_t* a = reinterpret_cast<const int32_t*>(s0);
  const int32_t* b = reinterpret_cast<const int32_t*>(s1);
  HWY_ALIGN int32_t a_tail[hn::MaxLanes(df)] = {}, b_tail[hn::MaxLanes(df)] = {};
  HWY_ALIGN int32_t c_tail[hn::MaxLanes(df)], z_tail[hn::MaxLanes(df)], flag[hn::MaxLanes(df)];
  HWY_ALIGN float v_tail[hn::MaxLanes(df)];
  const bool check = QLINEAR_SKIPS_CLAMP && Info(f.y_type).kind == Kind::kInt &&
                     (f.rule == Rule::kAbsMax || f.rule == Rule::kMinMax);
  bool in_range = check;
  // One vector of groups from statistics at k (or the padded tail buffers).
  auto step = [&](int64_t k, const int32_t* sa, const int32_t* sb, float* v, int32_t* c, int32_t* z)
                  QLINEAR_DYNAMIC_INLINE_LAMBDA {
    const auto bits = hn::LoadU(di, sa);
    if (f.rule == Rule::kMx || f.rule == Rule::kPow2Ceil) {
      auto code = hn::Zero(di);  // e + 127
      if (f.rule == Rule::kMx) {
        // floor(log2 amax) - emax + 127 = exponent field - emax (0 for subnormal amax and 0).
        code = hn::Max(hn::Sub(hn::ShiftRight<23>(bits), hn::Set(di, f.emax)), hn::Zero(di));
      } else {
        // amax = (1 + a) 2^ea, p = (1 + b) 2^ep: the smallest e with p 2^e >= amax is ea - ep, or
        // one more when a > b. Subnormal amax is normalized by 2^64 first (exact).
        const auto sub = hn::Lt(bits, hn::Set(di, 0x00800000));
        const auto scaled = hn::BitCast(di, hn::Mul(hn::BitCast(df, bits), hn::Set(df, 0x1p64f)));
        const auto nb = hn::IfThenElse(sub, scaled, bits);
        auto e = hn::Sub(hn::ShiftRight<23>(nb), hn::Set(di, 127 + p_exp));
        e = hn::Sub(e, hn::IfThenElseZero(sub, hn::Set(di, 64)));
        e = hn::Add(e, hn::IfThenElseZero(hn::Gt(hn::And(nb, hn::Set(di, 0x7FFFFF)), hn::Set(di, p_frac)),
                                          hn::Set(di, 1)));
        code = hn::Min(hn::Max(hn::Add(e, hn::Set(di, 127)), hn::Zero(di)), hn::Set(di, 254));
        code = hn::IfThenZeroElse(hn::Eq(bits, hn::Zero(di)), code);
      }
      const auto value = hn::IfThenElse(hn::Eq(code, hn::Zero(di)), hn::Set(di, 0x00400000),
                                        hn::ShiftLeft<23>(code));
      const auto nonfinite = hn::Gt(bits, hn::Set(di, 0x7F7FFFFF));
      hn::StoreU(hn::BitCast(df, hn::IfThenElse(nonfinite, hn::Set(di, 0x7FC00000), value)), df, v);
      hn::StoreU(hn::IfThenElse(nonfinite, hn::Set(di, 0xFF), code), di, c);
    } else if (f.rule == Rule::kAbsMax) {
      const auto amax = hn::BitCast(df, bits);
      const auto q = hn::Div(amax, hn::Set(df, f.p));
      const auto zero = hn::RebindMask(di, hn::Eq(amax, hn::Zero(df)));
      hn::StoreU(hn::IfThenElse(hn::RebindMask(df, zero), hn::Set(df, empty.value), ScaleValueLanes(df, q, t)), df, v);
      hn::StoreU(hn::IfThenElse(zero, hn::Set(di, static_cast<int32_t>(empty.code)), ScaleCodeLanes(df, q, t)), di, c);
      if (t != DType::kFloat32) {
        const auto redo = hn::AndNot(hn::RebindMask(df, zero), HalfMidpoints(df, q, t));
        if (HWY_UNLIKELY(!hn::AllFalse(df, redo))) {
          hn::Store(hn::VecFromMask(di, hn::RebindMask(di, redo)), di, flag);
          for (int64_t j = 0; j < N && k + j < n; ++j) {
            if (!flag[j]) continue;
            const GroupScale g = ReferenceGroupScale(f, 0.0, FloatOf(static_cast<uint32_t>(sa[j])), false);
            v[j] = g.value;
            c[j] = static_cast<int32_t>(g.code);
          }
        }
      }
    } else {
      // MINMAX: hi - lo = hi + (-lo), and qmin - lo / s = qmin + (-lo) / s: the same IEEE results.
      const auto neg_lo = hn::BitCast(df, bits), hi = hn::BitCast(df, hn::LoadU(di, sb));
      const auto range = hn::Add(hi, neg_lo);
      const auto s = hn::IfThenElse(hn::Eq(range, hn::Zero(df)), hn::Set(df, 1.0f / levels),
                                    hn::Div(range, hn::Set(df, levels)));
      const auto value = ScaleValueLanes(df, s, t);
      hn::StoreU(value, df, v);
      hn::StoreU(ScaleCodeLanes(df, s, t), di, c);
      const auto q = hn::Add(hn::Set(df, static_cast<float>(f.qmin)), hn::Div(neg_lo, value));  // never NaN
      const auto clamped = hn::Min(hn::Max(q, hn::Set(df, static_cast<float>(f.qmin))),
                                   hn::Set(df, static_cast<float>(f.qmax)));
      hn::StoreU(hn::ConvertTo(di, hn::Round(clamped)), di, z);
    }
    if (check && in_range) {  // with the values and zero points as stored (ABSMAX's redone lanes too)
      const bool minmax = f.rule == Rule::kMinMax;
      const auto value = hn::LoadU(df, v);
      const auto neg_lo = hn::BitCast(df, bits), hi = minmax ? hn::BitCast(df, hn::LoadU(di, sb)) : neg_lo;
      const auto zp = minmax ? hn::ConvertTo(df, hn::LoadU(di, z)) : hn::Zero(df);
      const auto up = hn::Mul(hn::Sub(hn::Set(df, static_cast<float>(f.qmax) + 0.5f), zp), value);
      const auto down = hn::Mul(hn::Add(zp, hn::Set(df, 0.5f - static_cast<float>(f.qmin))), value);
      const auto fits = hn::And(hn::Ge(value, hn::Set(df, 0x1p-100f)), hn::And(hn::Le(hi, up), hn::Le(neg_lo, down)));
      in_range = hn::AllTrue(df, fits);
    }
  };
  int32_t* c = reinterpret_cast<int32_t*>(codes);
  int64_t k = 0;
  for (; k + N <= n; k += N) {
    QLINEAR_SCALAR_LOOP(k);
    step(k, a + k, b ? b + k : b_tail, values + k, c + k, zps ? zps + k : z_tail);
  }
  if (k < n) {
    const size_t rem = static_cast<size_t>(n - k);
    std::memcpy(a_tail, a + k, rem * 4);
    if (b) std::memcpy(b_tail, b + k, rem * 4);
    step(k, a_tail, b_tail, v_tail, c_tail, z_tail);
    std::memcpy(values + k, v_tail, rem * 4);
    std::memcpy(c + k, c_tail, rem * 4);
    if (zps) std::memcpy(zps + k, z_tail, rem * 4);
  }
  return in_range;
}

// Whether any of s[0, n) is >= kNonFiniteBits (statistics are < 2^31, so the unsigned maximum
// decides). Once per chunk over its statistics: as a scalar loop it was 5-10% of the time of
// blocks of 32 (two statistics per block with MINMAX).
inline bool AnyNonFiniteStat(const uint32_t* HWY_RESTRICT s, int64_t n) {
  const hn::ScalableTag<uint32_t> du;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  auto m0 = hn::Zero(du), m1 = hn::Zero(du);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    QLINEAR_SCALAR_LOOP(i);
    m0 = hn::Max(m0, hn::LoadU(du, s + i));
    m1 = hn::Max(m1, hn::LoadU(du, s + i + N));
  }
  uint32_t m = hn::GetLane(hn::MaxOfLanes(du, hn::Max(m0, m1)));
  for (; i < n; ++i) m = std::max(m, s[i]);
  return m >= kNonFiniteBits;
}

// GroupStats (dynamic.h) on this target.
inline void GroupStatsVector(StatKind kind, const Layout& l, int64_t begin, int64_t end, DType x_type,
                             const void* x, int64_t g_first, uint32_t* s0, uint32_t* s1) {
  switch (x_type) {
    case DType::kFloat32: return StatsForX<float>(kind, l, begin, end, x, g_first, s0, s1);
    case DType::kFloat16: return StatsForX<hwy::float16_t>(kind, l, begin, end, x, g_first, s0, s1);
    case DType::kBFloat16: return StatsForX<hwy::bfloat16_t>(kind, l, begin, end, x, g_first, s0, s1);
    default: return;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_DYNAMIC_INL_H_
