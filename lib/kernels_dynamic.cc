// Dynamic quantization's execution: the per-target statistics kernels (dynamic-inl.h) in their
// own foreach_target unit, and the chunk loop that computes a chunk's scales and quantizes it
// with the library's QuantizeLinear execution while the chunk is in cache.
#include "dynamic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "dispatch.h"
#include "fpenv.h"
#include "kernels.h"
#include "minifloat.h"
#include "params.h"

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

bool ScalesDriver(const RuleFacts& f, const uint32_t* s0, const uint32_t* s1, int64_t n, float* values,
                  uint32_t* codes, int32_t* zps) {
  return ScalesVector(f, s0, s1, n, values, codes, zps);
}

int64_t PackZeroPointsDriver(int bits, const int32_t* HWY_RESTRICT z, int64_t n, uint8_t* HWY_RESTRICT dst) {
#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the caller's scalar loop
  (void)bits, (void)z, (void)n, (void)dst;
  return 0;
#else
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(di));
  const auto mask = hn::Set(di, (1 << bits) - 1);
  // Pairs of adjacent lanes of two vectors (2N fields) joined: lane i = a[2i] | a[2i + 1] << s.
  auto join = [&](auto a, auto b, auto shift) {
    return hn::Or(hn::ConcatEven(di, b, a), hn::ShiftLeft<decltype(shift)::value>(hn::ConcatOdd(di, b, a)));
  };
  auto load = [&](int64_t i) { return hn::And(hn::LoadU(di, z + i), mask); };
  int64_t k = 0;
  if (bits == 4) {
    for (; k + 2 * N <= n; k += 2 * N) {
      const auto bytes = join(load(k), load(k + N), std::integral_constant<int, 4>());
      hn::StoreU(hn::DemoteTo(d8, bytes), d8, dst + k / 2);
    }
  } else if (bits == 2) {
    for (; k + 4 * N <= n; k += 4 * N) {
      const auto lo = join(load(k), load(k + N), std::integral_constant<int, 2>());
      const auto hi = join(load(k + 2 * N), load(k + 3 * N), std::integral_constant<int, 2>());
      hn::StoreU(hn::DemoteTo(d8, join(lo, hi, std::integral_constant<int, 4>())), d8, dst + k / 4);
    }
  }
  return k;
#endif
}

bool NonFiniteStatsDriver(const uint32_t* s0, int64_t n0, const uint32_t* s1, int64_t n1) {
  return AnyNonFiniteStat(s0, n0) || AnyNonFiniteStat(s1, n1);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {

HWY_EXPORT(GroupStatsDriver);
HWY_EXPORT(ScalesDriver);
HWY_EXPORT(NonFiniteStatsDriver);
HWY_EXPORT(PackZeroPointsDriver);

int64_t VectorPackZeroPoints(int bits, const int32_t* z, int64_t n, uint8_t* dst) {
  return QLINEAR_DISPATCH(PackZeroPointsDriver)(bits, z, n, dst);
}

void GroupStats(StatKind kind, const Layout& l, int64_t begin, int64_t end, DType x_type,
                const void* x, int64_t g_first, uint32_t* s0, uint32_t* s1) {
  if (end > begin) QLINEAR_DISPATCH(GroupStatsDriver)(kind, l, begin, end, x_type, x, g_first, s0, s1);
}

namespace {

// Elements per chunk of one-pass layouts: the statistics pass reads the chunk from memory, the
// quantize pass again from L2 (128 KB of float32; L2 is >= 512 KB where this runs). Per-chunk
// costs (a QuantizeLinear execution each) made 16K-element chunks 5-10% slower in cache (Zen 5,
// int8 per row and int4 blocks of 32 at 64K elements); 64K-element ones gained little more.
// Chunks hold whole units, so they may be longer.
constexpr int64_t kChunkElements = 32768;

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
        packed_zp(plan.facts.rule == Rule::kMinMax) {}

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
  // Cut(u) depends only on ab and o modulo per (1, 2 or 4): per consecutive units of one outer
  // index cover every residue of ab, and per + 1 outer indices without a cut mean none follows.
  // A bounded search, so a task's start costs the same at any size.
  int64_t NextCut(int64_t u) const {
    const int64_t upo = p.units_per_outer;
    for (int64_t outers = 0; u < count && outers <= per; ++outers) {
      const int64_t outer_end = std::min(count, (u / upo + 1) * upo);
      for (int64_t k = 0; k < per && u < outer_end; ++k, ++u) {
        if (Cut(u)) return u;
      }
      u = outer_end;
    }
    return count;
  }
  // The end of the chunk that starts at unit u0 (< u1): about kChunkElements elements, on a cut.
  int64_t ChunkEnd(int64_t u0, int64_t u1) const {
    const int64_t c = At(ElemStart(u0) + kChunkElements);
    return std::min(u1, NextCut(std::max(c, u0 + 1)));
  }
};

// The float32 values of the scales that QuantizeLinear decodes: the caller's y_scale itself when
// it is an aligned float32 array, else a copy (e8m0, float16, bfloat16 scales).
class ScaleValues {
 public:
  ScaleValues(const DynamicPlan& p, const DynamicOutputs& out) {
    if (p.facts.scale_type == DType::kFloat32 && reinterpret_cast<uintptr_t>(out.scale) % alignof(float) == 0) {
      values_ = static_cast<float*>(out.scale);
    } else {
      copy_.reset(new float[static_cast<size_t>(std::max<int64_t>(p.groups, 1))]);
      values_ = copy_.get();
    }
  }
  float* get() const { return values_; }

 private:
  std::unique_ptr<float[]> copy_;
  float* values_ = nullptr;
};

StatKind FastKind(const RuleFacts& f) {
  return f.rule == Rule::kMinMax ? StatKind::kMinMax : StatKind::kAbs;
}
StatKind FiniteKind(const RuleFacts& f) {
  return f.rule == Rule::kMinMax ? StatKind::kMinMaxFinite : StatKind::kAbsFinite;
}
bool TwoStats(const RuleFacts& f) { return f.rule == Rule::kMinMax; }

// v resized to n zeros by memset: at -O2 assign() is a loop of 4-byte stores, once per chunk
// (4.6% of the time of int4 blocks of 32 at 64K elements in a profile; docs/dynamic.md).
void Zeroed(std::vector<uint32_t>* v, size_t n) {
  v->resize(n);
  if (n > 0) std::memset(v->data(), 0, n * sizeof(uint32_t));
}

// Statistics of groups [g0, g0 + s0.size()) from elements [e0, e1) of x. ABSMAX and MINMAX
// leave NaN/Inf out: the fast keys flag them, and only then are the finite-only keys run.
struct Stats {
  std::vector<uint32_t> s0, s1;
  bool nonfinite = false;  // the elements held NaN or +-Inf (ABSMAX, MINMAX: Finish's test)
  // Capacity for `groups` statistics, so that Compute allocates nothing.
  void Reserve(const DynamicPlan& p, int64_t groups) {
    s0.reserve(static_cast<size_t>(groups));
    if (TwoStats(p.facts)) s1.reserve(static_cast<size_t>(groups));
  }
  void Compute(const DynamicPlan& p, int64_t e0, int64_t e1, int64_t g0, int64_t groups) {
    const StatsJob job = Start(p, e0, e1, g0, groups);
    GroupStats(job.kind, *job.layout, e0, e1, job.x_type, job.x, g0, job.s0, job.s1);
    Finish(p, e0, e1, g0);
  }
  // Compute in two steps: zeroed statistics and the fast keys' job, then (after the job has
  // run) the finite-only keys where the fast ones flagged NaN/Inf.
  StatsJob Start(const DynamicPlan& p, int64_t e0, int64_t e1, int64_t g0, int64_t groups) {
    const bool two = TwoStats(p.facts);
    Zeroed(&s0, static_cast<size_t>(groups));
    Zeroed(&s1, two ? static_cast<size_t>(groups) : 0);
    nonfinite = false;
    StatsJob job;
    job.kind = FastKind(p.facts);
    job.layout = &p.q.layout;
    job.begin = e0;
    job.end = e1;
    job.x_type = p.q.x_type;
    job.x = static_cast<const char*>(p.q.x) + ByteOffset(p.q.x_type, e0);
    job.g_first = g0;
    job.s0 = s0.data();
    job.s1 = two ? s1.data() : nullptr;
    return job;
  }
  void Finish(const DynamicPlan& p, int64_t e0, int64_t e1, int64_t g0) {
    const RuleFacts& f = p.facts;
    if (f.rule != Rule::kAbsMax && f.rule != Rule::kMinMax) return;
    if (!Flagged()) return;
    nonfinite = true;
    Zeroed(&s0, s0.size());
    Zeroed(&s1, s1.size());
    const void* x = static_cast<const char*>(p.q.x) + ByteOffset(p.q.x_type, e0);
    GroupStats(FiniteKind(f), p.q.layout, e0, e1, p.q.x_type, x, g0, s0.data(), TwoStats(f) ? s1.data() : nullptr);
  }
  // Whether a statistic is >= kNonFiniteBits.
  bool Flagged() const {
    return QLINEAR_DISPATCH(NonFiniteStatsDriver)(s0.data(), static_cast<int64_t>(s0.size()), s1.data(),
                                                  static_cast<int64_t>(s1.size()));
  }
};

// The low bits of n codes, as T, to dst (any alignment), through a stack buffer that the
// compiler knows aliases nothing.
template <class T>
void NarrowCodes(const uint32_t* codes, size_t n, char* dst) {
  static_assert(sizeof(T) <= 2, "scale codes are 8 or 16 bits");
  constexpr size_t kBatch = 256;
  T buf[kBatch];
  for (size_t k = 0; k < n; k += kBatch) {
    const size_t m = std::min(kBatch, n - k);
    for (size_t i = 0; i < m; ++i) buf[i] = static_cast<T>(codes[k + i]);
    std::memcpy(dst + k * sizeof(T), buf, m * sizeof(T));
  }
}

// Scales and zero points of groups [g0, g0 + stats) into the outputs and their float32 values.
// Returns whether the groups' codes need no clamp (SideStats::in_range).
bool StoreScales(const DynamicPlan& p, const Stats& st, int64_t g0, const DynamicOutputs& out,
                 const ScaleValues& values, std::vector<uint32_t>* codes, std::vector<int32_t>* zps) {
  const RuleFacts& f = p.facts;
  const size_t n = st.s0.size();
  const bool minmax = f.rule == Rule::kMinMax;
  codes->resize(n);
  zps->resize(minmax ? n : 0);
  float* v = values.get() + g0;
  const bool in_range =
      QLINEAR_DISPATCH(ScalesDriver)(f, st.s0.data(), minmax ? st.s1.data() : nullptr, static_cast<int64_t>(n), v,
                                     codes->data(), minmax ? zps->data() : nullptr) &&
      !st.nonfinite;
  char* dst = static_cast<char*>(out.scale);
  // Narrowing through local pointers and a local buffer: stores through char* may alias the
  // codes vector, which kept every iteration a reload and a byte store.
  const uint32_t* from = codes->data();
  if (n == 0) return in_range;  // nothing to store (and no pointer arithmetic on the outputs)
  switch (Info(f.scale_type).bits) {
    case 32:
      if (v != static_cast<float*>(out.scale) + g0) std::memcpy(dst + 4 * g0, v, n * 4);
      break;
    case 16:
      NarrowCodes<uint16_t>(from, n, dst + 2 * g0);
      break;
    default:
      NarrowCodes<uint8_t>(from, n, dst + g0);
  }
  if (minmax) StoreZeroPoints(p, zps->data(), g0, static_cast<int64_t>(n), out);
  return in_range;
}

// QuantizeLinear of elements [e0, e1) with the scales written (float32 values: QuantizeLinear's
// float32-precision decoding of any scale type gives exactly these); its decoded parameters in
// `ws` (reserved beforehand).
// in_range: StoreScales's answer for these elements (with a job).
void QuantizeRange(const DynamicPlan& p, int64_t e0, int64_t e1, const DynamicOutputs& out,
                   const ScaleValues& values, const StatsJob* job, ParamsWorkspace* ws,
                   const TaskSplit* split = nullptr, bool in_range = false) {
  QuantizePlan q = p.q;
  q.scale_type = DType::kFloat32;
  q.scale = values.get();
  q.zero_point = p.facts.rule == Rule::kMinMax ? out.zero_point : nullptr;
  q.begin = e0;
  q.end = e1;
  q.x = static_cast<const char*>(p.q.x) + ByteOffset(p.q.x_type, e0);
  q.workspace = ws;
  void* y = static_cast<char*>(out.y) + ByteOffset(q.y_type, e0);
  if (job != nullptr) return ExecuteQuantizeWithStats(q, y, *job, in_range);
  ExecuteQuantize(q, y, split);
}

// Everything a run of chunks allocates, allocated before its first output byte is written: an
// allocation that fails then leaves the outputs untouched (qlinear.h), and parallel tasks never
// throw.
struct ChunkBuffers {
  Stats st, next;  // the chunk's statistics and the next chunk's
  std::vector<uint32_t> codes;
  std::vector<int32_t> zps;
  ParamsWorkspace params;

  // For chunks of at most `groups` groups (statistics, scales, QuantizeLinear's parameters);
  // `pipelined`: the next chunk's statistics too (OnePass).
  void Reserve(const DynamicPlan& p, int64_t groups, bool pipelined = false) {
    st.Reserve(p, groups);
    if (pipelined) next.Reserve(p, groups);
    codes.reserve(static_cast<size_t>(groups));
    if (p.facts.rule == Rule::kMinMax) zps.reserve(static_cast<size_t>(groups));
    params.Reserve(groups);
  }
  // For the chunks of units [u0, u1) (OnePass's cuts).
  void ReserveFor(const DynamicPlan& p, const Units& units, int64_t u0, int64_t u1) {
    int64_t most = 0;
    for (int64_t u = u0; u < u1;) {
      const int64_t c = units.ChunkEnd(u, u1);
      int64_t first, window;
      ScaleWindow(p.q.layout, units.ElemStart(u), units.ElemStart(c), &first, &window);
      most = std::max({most, (c - u) * p.groups_per_unit, window});
      u = c;
    }
    Reserve(p, most, true);
  }
};

// Units [u0, u1) of a one-pass plan, chunk by chunk, with buffers reserved by ReserveFor: each
// chunk is quantized while the next one's statistics are computed (ExecuteQuantizeWithStats).
void OnePass(const DynamicPlan& p, const Units& units, int64_t u0, int64_t u1,
             const DynamicOutputs& out, const ScaleValues& values, ChunkBuffers* b) {
  const int64_t per_unit = p.groups_per_unit;
  int64_t c = u0 < u1 ? units.ChunkEnd(u0, u1) : u0;
  if (u0 < u1) b->st.Compute(p, units.ElemStart(u0), units.ElemStart(c), u0 * per_unit, (c - u0) * per_unit);
  while (u0 < u1) {
    const int64_t e0 = units.ElemStart(u0), e1 = units.ElemStart(c);
    const int64_t g0 = u0 * per_unit, g1 = c * per_unit;
    const bool in_range = StoreScales(p, b->st, g0, out, values, &b->codes, &b->zps);
    const int64_t next = c < u1 ? units.ChunkEnd(c, u1) : c;
    const int64_t e2 = units.ElemStart(next);
    if (next > c) {
      const StatsJob job = b->next.Start(p, e1, e2, g1, (next - c) * per_unit);
      if (out.y != nullptr && e1 > e0) {
        QuantizeRange(p, e0, e1, out, values, &job, &b->params, nullptr, in_range);
      } else {
        GroupStats(job.kind, *job.layout, e1, e2, job.x_type, job.x, g1, job.s0, job.s1);
      }
      b->next.Finish(p, e1, e2, g1);
    } else if (out.y != nullptr && e1 > e0) {
      QuantizeRange(p, e0, e1, out, values, nullptr, &b->params);
    }
    std::swap(b->st, b->next);
    u0 = c;
    c = next;
  }
}

// Whole-tensor groups (per tensor, per axis strided in memory): statistics over all of x
// (split into tasks whose partial statistics are combined), scales, then QuantizeLinear.
void TwoPass(const DynamicPlan& p, const DynamicOutputs& out, const ScaleValues& values,
             const TaskSplit* split) {
  const int64_t n = p.q.layout.count;
  ChunkBuffers b;  // for all groups at once
  b.Reserve(p, std::max<int64_t>(p.groups, 1));
  Stats& st = b.st;
  if (split == nullptr) {
    st.Compute(p, 0, n, 0, p.groups);
  } else {
    // Each task keeps statistics for the groups its elements touch (ScaleWindow), in buffers
    // reserved here: the tasks allocate nothing. Many short tasks over many groups would keep
    // up to a task's elements each; the parts together hold at most kPartialGroups, or 64 tasks'
    // worth of every group (qlinear.h), with fewer, longer tasks where needed.
    constexpr int64_t kPartialGroups = int64_t{1} << 20;
    const int64_t budget = std::max(kPartialGroups, p.groups > INT64_MAX / 64 ? INT64_MAX : 64 * p.groups);
    int64_t per_task = split->per_task, tasks = 0;
    std::vector<int64_t> firsts, counts;
    for (;;) {
      tasks = (n + per_task - 1) / per_task;
      firsts.assign(static_cast<size_t>(tasks), 0);
      counts.assign(static_cast<size_t>(tasks), 0);
      int64_t held = 0;
      for (int64_t t = 0; t < tasks; ++t) {
        const size_t i = static_cast<size_t>(t);
        ScaleWindow(p.q.layout, t * per_task, std::min(n, (t + 1) * per_task), &firsts[i], &counts[i]);
        held += counts[i];
      }
      if (held <= budget || tasks == 1) break;
      per_task = per_task > n / 2 ? n : 2 * per_task;
    }
    std::vector<Stats> parts(static_cast<size_t>(tasks));
    for (size_t i = 0; i < parts.size(); ++i) parts[i].Reserve(p, counts[i]);
    struct Context {
      const DynamicPlan* p;
      std::vector<Stats>* parts;
      const std::vector<int64_t>* firsts;
      const std::vector<int64_t>* counts;
      int64_t per_task, n, tasks;
    } ctx{&p, &parts, &firsts, &counts, per_task, n, tasks};
    split->Run(tasks, [](void* c, int64_t t) {
      const Context& k = *static_cast<const Context*>(c);
      if (t < 0 || t >= k.tasks) return;  // a runner's index outside [0, tasks): ignored (qlinear.h)
      const FpEnvGuard fp_env;  // the pool thread's own modes (qlinear.h)
      const size_t i = static_cast<size_t>(t);
      const int64_t e0 = t * k.per_task, e1 = std::min(k.n, e0 + k.per_task);
      (*k.parts)[i].Compute(*k.p, e0, e1, (*k.firsts)[i], (*k.counts)[i]);
    }, &ctx);
    Zeroed(&st.s0, static_cast<size_t>(p.groups));
    Zeroed(&st.s1, TwoStats(p.facts) ? st.s0.size() : 0);
    for (size_t t = 0; t < parts.size(); ++t) {
      const size_t g0 = static_cast<size_t>(firsts[t]);
      for (size_t g = 0; g < parts[t].s0.size(); ++g) st.s0[g0 + g] = std::max(st.s0[g0 + g], parts[t].s0[g]);
      for (size_t g = 0; g < parts[t].s1.size(); ++g) st.s1[g0 + g] = std::max(st.s1[g0 + g], parts[t].s1[g]);
    }
  }
  StoreScales(p, st, 0, out, values, &b.codes, &b.zps);
  if (out.y != nullptr && n > 0) QuantizeRange(p, 0, n, out, values, nullptr, &b.params, split);
}

}  // namespace

void ExecuteDynamic(const DynamicPlan& p, const DynamicOutputs& out, const TaskSplit* split) {
  const ScaleValues values(p, out);
  if (!p.one_pass) return TwoPass(p, out, values, split);
  if (p.q.layout.count == 0) {  // groups without elements (e.g. x of shape [5, 0], per row)
    const GroupScale s = GroupScaleFromStats(p.facts, 0, 0);
    for (int64_t g = 0; g < p.groups; ++g) StoreGroupScale(p, s, g, out);
    return;
  }
  // Only with elements: the unit count outer * units_per_outer is then at most the element count
  // (outer alone may be huge beside a zero dimension).
  const Units units(p);
  if (split == nullptr) {
    ChunkBuffers b;
    b.ReserveFor(p, units, 0, units.count);
    return OnePass(p, units, 0, units.count, out, values, &b);
  }
  // Tasks of about per_task elements, cut on unit boundaries where bytes are not shared; each
  // with its buffers reserved here (the tasks allocate nothing).
  const int64_t n = p.q.layout.count;
  const int64_t tasks = (n + split->per_task - 1) / split->per_task;
  std::vector<int64_t> cuts(static_cast<size_t>(tasks) + 1);
  for (int64_t t = 1; t <= tasks; ++t) cuts[static_cast<size_t>(t)] = units.NextCut(units.At(t * split->per_task));
  std::vector<ChunkBuffers> buffers(static_cast<size_t>(tasks));
  for (int64_t t = 0; t < tasks; ++t) {
    const size_t i = static_cast<size_t>(t);
    buffers[i].ReserveFor(p, units, cuts[i], cuts[i + 1]);
  }
  struct Context {
    const DynamicPlan* p;
    const Units* units;
    const DynamicOutputs* out;
    const ScaleValues* values;
    const std::vector<int64_t>* cuts;
    std::vector<ChunkBuffers>* buffers;
    int64_t tasks;
  } ctx{&p, &units, &out, &values, &cuts, &buffers, tasks};
  split->Run(tasks, [](void* c, int64_t t) {
    const Context& k = *static_cast<const Context*>(c);
    if (t < 0 || t >= k.tasks) return;  // a runner's index outside [0, tasks): ignored (qlinear.h)
    const FpEnvGuard fp_env;  // the pool thread's own modes (qlinear.h)
    const size_t i = static_cast<size_t>(t);
    OnePass(*k.p, *k.units, (*k.cuts)[i], (*k.cuts)[i + 1], *k.out, *k.values, &(*k.buffers)[i]);
  }, &ctx);
}

void ExecuteDynamicRanges(const DynamicPlan& p, int64_t first, int64_t count, const void* x,
                          float* ranges) {
  // The statistics' memory first: a failed allocation (QLINEAR_OUT_OF_MEMORY) leaves ranges as
  // they were.
  const RuleFacts& f = p.facts;
  const bool two = TwoStats(f);
  int64_t g0 = 0, groups = 0;
  if (count != 0) ScaleWindow(p.q.layout, first, first + count, &g0, &groups);
  std::vector<uint32_t> s0(static_cast<size_t>(groups), 0), s1(two ? s0.size() : 0, 0);
  std::fill(ranges, ranges + 2 * p.groups, 0.0f);
  if (count == 0) return;
  // MX and POW2_CEIL keep NaN/Inf (they decide the scale), the others leave them out.
  const StatKind kind = f.rule == Rule::kMx || f.rule == Rule::kPow2Ceil ? StatKind::kAbs : FiniteKind(f);
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
