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
#include <cstring>

#include "hwy/highway.h"
#include "lib/convert-inl.h"
#include "lib/dynamic.h"
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

// The keys of one statistic kind (see the top of the file).
template <bool kMinMax, bool kFinite>
struct StatKeys {
  static constexpr bool kTwo = kMinMax;  // s1 is kept too
  template <class DF, class DI = hn::RebindToSigned<DF>>
  static HWY_INLINE hn::Vec<DI> First(DF /*df*/, hn::Vec<DF> v) {
    const DI di;
    const auto bits = hn::BitCast(di, v);
    if constexpr (kMinMax) {
      return KeepFinite(di, bits, hn::Xor(bits, hn::Set(di, INT32_MIN)));
    } else {
      return KeepFinite(di, bits, hn::And(bits, hn::Set(di, 0x7FFFFFFF)));
    }
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

// One statistic over the contiguous len >= 1 elements of x.
template <class K, class XT>
HWY_INLINE void SegmentStats(const XT* HWY_RESTRICT x, int64_t len, uint32_t* s0, uint32_t* s1) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto a0 = hn::Zero(di), b0 = hn::Zero(di), a1 = hn::Zero(di), b1 = hn::Zero(di);
  int64_t i = 0;
  for (; i + 2 * N <= len; i += 2 * N) {  // two chains: a max per cycle per chain
    const auto v = LoadAsF32(df, x + i), w = LoadAsF32(df, x + i + N);
    a0 = hn::Max(a0, K::First(df, v));
    b0 = hn::Max(b0, K::First(df, w));
    if constexpr (K::kTwo) {
      a1 = hn::Max(a1, K::Second(df, v));
      b1 = hn::Max(b1, K::Second(df, w));
    }
  }
  if (i + N <= len) {
    const auto v = LoadAsF32(df, x + i);
    a0 = hn::Max(a0, K::First(df, v));
    if constexpr (K::kTwo) a1 = hn::Max(a1, K::Second(df, v));
    i += N;
  }
  if (i < len) {
    HWY_ALIGN XT buf[hn::MaxLanes(df)] = {};  // +0.0 in every float format
    if (len < N) std::memcpy(buf, x, static_cast<size_t>(len) * sizeof(XT));
    // The last full vector (overlapping counted lanes is harmless), or the padded copy.
    const auto v = LoadAsF32(df, len >= N ? x + len - N : buf);
    b0 = hn::Max(b0, K::First(df, v));
    if constexpr (K::kTwo) b1 = hn::Max(b1, K::Second(df, v));
  }
  Combine(static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(di, hn::Max(a0, b0)))), s0);
  if constexpr (K::kTwo) {
    Combine(static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(di, hn::Max(a1, b1)))), s1);
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
// Max of kCount consecutive blocks' key vectors, reduced across lanes all at once: T(2k) =
// Max(ConcatEven(T(hi k), T(lo k)), ConcatOdd(...)) keeps, in order, groups of N/2k lanes per
// block, each the max of 2k of the block's lanes; T(N) has one lane per block. N - 1 pairs of
// permutes and maxes for N blocks, where a reduction per block costs log2(N) of them each.
template <size_t kCount, class DI, class Leaf>
HWY_INLINE hn::Vec<DI> TreeMax(DI di, const Leaf& leaf, int64_t j) {
  if constexpr (kCount == 1) {
    return leaf(j);
  } else {
    const auto lo = TreeMax<kCount / 2>(di, leaf, j);
    const auto hi = TreeMax<kCount / 2>(di, leaf, j + static_cast<int64_t>(kCount / 2));
    return hn::Max(hn::ConcatEven(di, hi, lo), hn::ConcatOdd(di, hi, lo));
  }
}

// One key of N whole blocks of `period` elements (a multiple of N) into s[0, N).
template <class K, bool kSecond, class XT>
HWY_INLINE void TreeKey(const XT* HWY_RESTRICT x, int64_t period, uint32_t* s) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  constexpr size_t kN = hn::MaxLanes(di);
  const int64_t N = static_cast<int64_t>(kN);
  auto key = [&](const XT* p) QLINEAR_DYNAMIC_INLINE_LAMBDA {
    return kSecond ? K::Second(df, LoadAsF32(df, p)) : K::First(df, LoadAsF32(df, p));
  };
  auto leaf = [&](int64_t j) QLINEAR_DYNAMIC_INLINE_LAMBDA {
    const XT* p = x + j * period;
    auto m = key(p);
    for (int64_t v = N; v < period; v += N) m = hn::Max(m, key(p + v));
    return m;
  };
  int32_t* t = reinterpret_cast<int32_t*>(s);
  hn::StoreU(hn::Max(hn::LoadU(di, t), TreeMax<kN>(di, leaf, 0)), di, t);
}

template <class K, class XT>
HWY_INLINE void TreeBlocks(const XT* HWY_RESTRICT x, int64_t period, uint32_t* s0, uint32_t* s1) {
  TreeKey<K, false>(x, period, s0);
  if constexpr (K::kTwo) TreeKey<K, true>(x, period, s1);
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
  if (r.period % N == 0) {
    for (; i + N * r.period <= r.count; i += N * r.period, k += N) {
      TreeBlocks<K>(x + i, r.period, s0 + k, K::kTwo ? s1 + k : nullptr);
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
  switch (kind) {
    case StatKind::kAbs: return StatsOfRange<StatKeys<false, false>>(l, begin, end, p, g_first, s0, s1);
    case StatKind::kAbsFinite: return StatsOfRange<StatKeys<false, true>>(l, begin, end, p, g_first, s0, s1);
    case StatKind::kMinMax: return StatsOfRange<StatKeys<true, false>>(l, begin, end, p, g_first, s0, s1);
    case StatKind::kMinMaxFinite: return StatsOfRange<StatKeys<true, true>>(l, begin, end, p, g_first, s0, s1);
  }
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
