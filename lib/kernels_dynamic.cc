// Dynamic quantization's execution: the per-target statistics kernels (dynamic-inl.h) in their
// own foreach_target unit, and the chunk loop that computes a chunk's scales and quantizes it
// with the library's QuantizeLinear execution while the chunk is in cache.
#include "dynamic.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels.h"
#include "minifloat.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels_dynamic.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/dynamic-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

void GroupStatsDriver(StatKind kind, const Layout& l, int64_t begin, int64_t end, DType x_type,
                      const void* x, int64_t g_first, uint32_t* s0, uint32_t* s1) {
  GroupStatsVector(kind, l, begin, end, x_type, x, g_first, s0, s1);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {

HWY_EXPORT(GroupStatsDriver);

void GroupStats(StatKind kind, const Layout& l, int64_t begin, int64_t end, DType x_type,
                const void* x, int64_t g_first, uint32_t* s0, uint32_t* s1) {
  if (end > begin) HWY_DYNAMIC_DISPATCH(GroupStatsDriver)(kind, l, begin, end, x_type, x, g_first, s0, s1);
}

namespace {

// Elements per chunk of one-pass layouts: the chunk's statistics pass reads x from memory, the
// quantize pass from L2 (64 KB of float32: L1 is 32-48 KB, L2 >= 512 KB). Chunks hold whole
// units, so they may be longer.
constexpr int64_t kChunkElements = 16384;

size_t ByteOffset(DType t, int64_t elements) {
  return static_cast<size_t>(elements) * static_cast<size_t>(Info(t).bits) / 8;
}

// Units (dynamic.h) of a one-pass plan: unit u = (outer index o, u % units_per_outer) covers
// axis rows [ab * unit_rows, min(D, (ab + 1) * unit_rows)) of o, i.e. a contiguous range of
// elements, and groups [u * groups_per_unit, (u + 1) * groups_per_unit).
struct Units {
  const DynamicPlan& p;
  int64_t count;  // units
  int64_t per;    // output elements per byte (1, 2 or 4)
  bool packed_zp;

  explicit Units(const DynamicPlan& plan)
      : p(plan),
        count(plan.q.layout.outer * plan.units_per_outer),
        per(8 / std::min(8, Info(plan.q.y_type).bits)),
        packed_zp(plan.facts.rule == ScaleRule::kMinMax) {}

  int64_t ElemStart(int64_t u) const {
    const Layout& l = p.q.layout;
    const int64_t o = u / p.units_per_outer, ab = u % p.units_per_outer;
    return (o * l.axis_dim + ab * p.unit_rows) * l.inner;
  }
  // The first unit that starts at or after element e (count if none).
  int64_t At(int64_t e) const {
    const Layout& l = p.q.layout;
    const int64_t outer_elems = l.axis_dim * l.inner;
    if (outer_elems == 0) return count;
    const int64_t o = e / outer_elems, rem = e % outer_elems;
    const int64_t unit_elems = std::min(p.unit_rows, l.axis_dim) * l.inner;  // no overflow
    return std::min(count, o * p.units_per_outer + (rem + unit_elems - 1) / unit_elems);
  }
  // Cuts between chunks and tasks: sub-byte outputs and zero points start on byte boundaries.
  bool Cut(int64_t u) const {
    if (u >= count || per == 1) return true;
    return ElemStart(u) % per == 0 && (!packed_zp || u * p.groups_per_unit % per == 0);
  }
  int64_t NextCut(int64_t u) const {
    while (!Cut(u)) ++u;
    return std::min(u, count);
  }
};

// The float32 values of the scales that QuantizeLinear decodes: the caller's y_scale itself when
// it is an aligned float32 array, else a copy (e8m0, float16, bfloat16 scales).
class ScaleValues {
 public:
  ScaleValues(const DynamicPlan& p, const DynamicOutputs& out) {
    if (out.y == nullptr) return;
    if (p.facts.scale_type == DType::kFloat32 && reinterpret_cast<uintptr_t>(out.scale) % alignof(float) == 0) {
      values_ = static_cast<float*>(out.scale);
    } else {
      copy_.reset(new float[static_cast<size_t>(std::max<int64_t>(p.groups, 1))]);
      values_ = copy_.get();
    }
  }
  float* get() const { return values_; }
  bool is_copy() const { return copy_ != nullptr; }

 private:
  std::unique_ptr<float[]> copy_;
  float* values_ = nullptr;
};

StatKind FastKind(const RuleFacts& f) {
  return f.rule == ScaleRule::kMinMax ? StatKind::kMinMax : StatKind::kAbs;
}
StatKind FiniteKind(const RuleFacts& f) {
  return f.rule == ScaleRule::kMinMax ? StatKind::kMinMaxFinite : StatKind::kAbsFinite;
}
bool TwoStats(const RuleFacts& f) { return f.rule == ScaleRule::kMinMax; }

// Statistics of groups [g0, g0 + s0.size()) from elements [e0, e1) of x. ABSMAX and MINMAX
// leave NaN/Inf out: the fast keys flag them, and only then are the finite-only keys run.
struct Stats {
  std::vector<uint32_t> s0, s1;
  void Compute(const DynamicPlan& p, int64_t e0, int64_t e1, int64_t g0, int64_t groups) {
    const RuleFacts& f = p.facts;
    const bool two = TwoStats(f);
    s0.assign(static_cast<size_t>(groups), 0);
    s1.assign(two ? static_cast<size_t>(groups) : 0, 0);
    const void* x = static_cast<const char*>(p.q.x) + ByteOffset(p.q.x_type, e0);
    GroupStats(FastKind(f), p.q.layout, e0, e1, p.q.x_type, x, g0, s0.data(), two ? s1.data() : nullptr);
    if (f.rule != ScaleRule::kAbsMax && f.rule != ScaleRule::kMinMax) return;
    if (!Flagged()) return;
    std::fill(s0.begin(), s0.end(), 0u);
    std::fill(s1.begin(), s1.end(), 0u);
    GroupStats(FiniteKind(f), p.q.layout, e0, e1, p.q.x_type, x, g0, s0.data(), two ? s1.data() : nullptr);
  }
  bool Flagged() const {
    uint32_t m = 0;
    for (uint32_t v : s0) m = std::max(m, v);
    for (uint32_t v : s1) m = std::max(m, v);
    return m >= kNonFiniteBits;
  }
};

// Scales and zero points of groups [g0, g0 + stats) into the outputs (and the float32 values).
void StoreScales(const DynamicPlan& p, const Stats& st, int64_t g0, const DynamicOutputs& out,
                 const ScaleValues& values) {
  const bool two = TwoStats(p.facts);
  float* v = values.is_copy() ? values.get() : nullptr;
  for (size_t k = 0; k < st.s0.size(); ++k) {
    const GroupScale s = GroupScaleFromStats(p.facts, st.s0[k], two ? st.s1[k] : 0);
    StoreGroupScale(p, s, g0 + static_cast<int64_t>(k), out);
    if (v != nullptr) v[g0 + static_cast<int64_t>(k)] = s.value;
  }
}

// QuantizeLinear of elements [e0, e1) with the scales written (float32 values: QuantizeLinear's
// float32-precision decoding of any scale type gives exactly these).
void QuantizeRange(const DynamicPlan& p, int64_t e0, int64_t e1, const DynamicOutputs& out,
                   const ScaleValues& values, const TaskSplit* split) {
  QuantizePlan q = p.q;
  q.scale_type = DType::kFloat32;
  q.scale = values.get();
  q.zero_point = p.facts.rule == ScaleRule::kMinMax ? out.zero_point : nullptr;
  q.begin = e0;
  q.end = e1;
  q.x = static_cast<const char*>(p.q.x) + ByteOffset(p.q.x_type, e0);
  ExecuteQuantize(q, static_cast<char*>(out.y) + ByteOffset(q.y_type, e0), split);
}

// Units [u0, u1) of a one-pass plan, chunk by chunk.
void OnePass(const DynamicPlan& p, const Units& units, int64_t u0, int64_t u1,
             const DynamicOutputs& out, const ScaleValues& values) {
  Stats st;
  while (u0 < u1) {
    int64_t c = units.At(units.ElemStart(u0) + kChunkElements);
    c = std::min(u1, units.NextCut(std::max(c, u0 + 1)));
    const int64_t e0 = units.ElemStart(u0), e1 = units.ElemStart(c);
    const int64_t g0 = u0 * p.groups_per_unit, g1 = c * p.groups_per_unit;
    st.Compute(p, e0, e1, g0, g1 - g0);
    StoreScales(p, st, g0, out, values);
    if (out.y != nullptr && e1 > e0) QuantizeRange(p, e0, e1, out, values, nullptr);
    u0 = c;
  }
}

// Whole-tensor groups (per tensor, per axis strided in memory): statistics over all of x
// (split into tasks whose partial statistics are combined), scales, then QuantizeLinear.
void TwoPass(const DynamicPlan& p, const DynamicOutputs& out, const ScaleValues& values,
             const TaskSplit* split) {
  const int64_t n = p.q.layout.count;
  Stats st;
  if (split == nullptr) {
    st.Compute(p, 0, n, 0, p.groups);
  } else {
    const int64_t tasks = (n + split->per_task - 1) / split->per_task;
    std::vector<Stats> parts(static_cast<size_t>(tasks));
    struct Context {
      const DynamicPlan* p;
      std::vector<Stats>* parts;
      int64_t per_task, n;
    } ctx{&p, &parts, split->per_task, n};
    split->parallel_for(split->context, tasks, [](void* c, int64_t t) {
      const Context& k = *static_cast<const Context*>(c);
      const int64_t e0 = t * k.per_task, e1 = std::min(k.n, e0 + k.per_task);
      (*k.parts)[static_cast<size_t>(t)].Compute(*k.p, e0, e1, 0, k.p->groups);
    }, &ctx);
    st = std::move(parts[0]);
    for (size_t t = 1; t < parts.size(); ++t) {
      for (size_t g = 0; g < st.s0.size(); ++g) st.s0[g] = std::max(st.s0[g], parts[t].s0[g]);
      for (size_t g = 0; g < st.s1.size(); ++g) st.s1[g] = std::max(st.s1[g], parts[t].s1[g]);
    }
  }
  StoreScales(p, st, 0, out, values);
  if (out.y != nullptr && n > 0) QuantizeRange(p, 0, n, out, values, split);
}

}  // namespace

void ExecuteDynamic(const DynamicPlan& p, const DynamicOutputs& out, const TaskSplit* split) {
  const ScaleValues values(p, out);
  if (!p.one_pass) return TwoPass(p, out, values, split);
  const Units units(p);
  if (p.q.layout.count == 0) {  // groups without elements (e.g. x of shape [5, 0], per row)
    const GroupScale s = GroupScaleFromStats(p.facts, 0, 0);
    for (int64_t g = 0; g < p.groups; ++g) StoreGroupScale(p, s, g, out);
    return;
  }
  if (split == nullptr) return OnePass(p, units, 0, units.count, out, values);
  // Tasks of about per_task elements, cut on unit boundaries where bytes are not shared.
  const int64_t n = p.q.layout.count;
  const int64_t tasks = (n + split->per_task - 1) / split->per_task;
  struct Context {
    const DynamicPlan* p;
    const Units* units;
    const DynamicOutputs* out;
    const ScaleValues* values;
    int64_t per_task;
  } ctx{&p, &units, &out, &values, split->per_task};
  split->parallel_for(split->context, tasks, [](void* c, int64_t t) {
    const Context& k = *static_cast<const Context*>(c);
    const int64_t u0 = t == 0 ? 0 : k.units->NextCut(k.units->At(t * k.per_task));
    const int64_t u1 = k.units->NextCut(k.units->At((t + 1) * k.per_task));
    OnePass(*k.p, *k.units, u0, u1, *k.out, *k.values);
  }, &ctx);
}

void ExecuteDynamicRanges(const DynamicPlan& p, int64_t first, int64_t count, const void* x,
                          float* ranges) {
  std::fill(ranges, ranges + 2 * p.groups, 0.0f);
  if (count == 0) return;
  const RuleFacts& f = p.facts;
  const bool two = TwoStats(f);
  int64_t g0, groups;
  ScaleWindow(p.q.layout, first, first + count, &g0, &groups);
  std::vector<uint32_t> s0(static_cast<size_t>(groups), 0), s1(two ? s0.size() : 0, 0);
  // MX and POW2_CEIL keep NaN/Inf (they decide the scale), the others leave them out.
  const StatKind kind = f.rule == ScaleRule::kMx || f.rule == ScaleRule::kPow2Ceil ? StatKind::kAbs : FiniteKind(f);
  GroupStats(kind, p.q.layout, first, first + count, p.q.x_type, x, g0, s0.data(), two ? s1.data() : nullptr);
  for (int64_t k = 0; k < groups; ++k) {
    const size_t i = static_cast<size_t>(k);
    float* r = ranges + 2 * (g0 + k);
    if (two) {
      r[0] = FloatOf(s0[i]);
      r[1] = FloatOf(s1[i]);
    } else {
      r[0] = r[1] = s0[i] >= kNonFiniteBits ? HUGE_VALF : FloatOf(s0[i]);
    }
  }
}

}  // namespace qlinear
#endif  // HWY_ONCE
