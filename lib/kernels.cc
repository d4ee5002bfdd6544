// QuantizeLinear's foreach_target unit: stamps one driver per target and dispatches once per API
// call; the driver walks the whole plan (no indirect call per run or per element). Also the
// process's execution settings: the pinned SIMD target and the quantize path. The loops into
// float8/float4 outputs, DequantizeLinear, the backward pass and dynamic quantization have their
// own units (kernels_*.cc), which compile in parallel with this one.
// Owns: which target and which path run. Must not know: validation, the loops themselves.
#include "kernels.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dispatch.h"
#include "dynamic.h"
#include "error.h"
#include "fpenv.h"
#include "params.h"
#include "reference.h"
#include "run_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/dynamic-inl.h"
#include "lib/quantize-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

// The quantize path of this target when nothing forces one (both are exact; this is the faster
// one): the reciprocal path on every vector target, division on the one-lane fallback, where
// the flag test costs more than the division saves. Measured by the benchmark's -div / -recip
// rows (docs/performance.md).
constexpr QuantizePath kOwnPath =
    HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128 ? QuantizePath::kReciprocal : QuantizePath::kDivision;

bool ReciprocalPathDriver() { return kOwnPath == QuantizePath::kReciprocal; }

void QuantizePiece(const QuantizePlan& p, const QuantParams& prm, void* y) {
  if (prm.vector) {
    QuantizeVector(p, prm, y);
  } else {
    QuantizeReference(p, y, p.begin, p.end);
  }
}

// A whole QuantizeLinear call on this target (one dispatch per call): the path chosen (`path`:
// the one forced, or kAuto), then the pieces, each with its scales decoded (on the calling
// thread, pieces of about kWindowGroups groups: a first call's scratch stays small).
void ExecuteQuantizeDriver(const QuantizePlan& p, void* y, const TaskSplit* split, QuantizePath path) {
  if (!VectorQuantizeSupported(p)) return RunPlan<QuantizePiece>(p, y, QuantParams(), split);
  if (path == QuantizePath::kAuto) path = kOwnPath;
  // The reciprocal path needs the quotient in float32 (no second rounding).
  const bool reciprocals = p.prec == Prec::kF32 && path == QuantizePath::kReciprocal;
  const ParamsFor use = reciprocals ? ParamsFor::kReciprocal : ParamsFor::kDivision;
  auto run = [&](const QuantizePlan& q, void* q_y, ParamsWorkspace* ws, const TaskSplit* s) {
    const DecodedParams d(q.layout, q.begin, q.end, q.scale_type, q.scale, q.y_type, q.zero_point, q.prec, use, ws);
    RunPlan<QuantizePiece>(q, q_y, d.params(), s);
  };
  // A caller's workspace or parallel-for: the whole call at once.
  if (split != nullptr || p.workspace != nullptr) return run(p, y, p.workspace, split);
  RunInWindowPieces(
      p, y,
      [&](int64_t groups) { return ArraysFor(groups, p.scale_type, p.scale, p.y_type, p.zero_point, p.prec, use); },
      [&](const QuantizePlan& q, void* q_y, ParamsWorkspace* ws) { run(q, q_y, ws, nullptr); },
      [](const QuantizePlan& q, void* q_y) { QuantizeReference(q, q_y, q.begin, q.end); });
}

// ExecuteQuantizeDriver on the calling thread with a statistics job (dynamic.h StatsJob) done
// alongside. Runs of float32 x whose job is the largest |x| of the elements that follow the
// plan's, at a distance that maps each group onto a group a fixed number further on (the next
// chunk of a dynamic quantization), take it inside the quantize loop (SideStats) where that loop
// is the reciprocal path's groups into <= 8-bit integer or float8/float4 outputs: per-axis rows
// (reciprocals that are not all exact products) and blocks along the last axis (BlockSide, also
// with exact products: MX, POW2_CEIL), with the largest |x| or MINMAX's two keys; the rest of
// the job, or all of it elsewhere, runs after.
// Tensors from this many elements (16 MB of float32) prefetch the side runs (SideStats): beyond
// the last-level cache; at 1M elements the prefetches cost 11% (docs/dynamic.md).
constexpr int64_t kSidePrefetchFrom = int64_t{4} << 20;

void QuantizeWithStatsDriver(const QuantizePlan& p, void* y, const StatsJob& job, bool in_range, QuantizePath path) {
  if (path == QuantizePath::kAuto) path = kOwnPath;
  const bool vector = VectorQuantizeSupported(p);
  const bool reciprocals = vector && p.prec == Prec::kF32 && path == QuantizePath::kReciprocal;
  const DecodedParams d(p.layout, p.begin, p.end, p.scale_type, p.scale, p.y_type, p.zero_point, p.prec,
                        reciprocals ? ParamsFor::kReciprocal : ParamsFor::kDivision, p.workspace);
  const Layout& l = p.layout;
  const int64_t distance = job.begin - p.begin;
  int64_t done = job.begin;  // the job's elements [job.begin, done) are done
  const QuantParams& prm = d.params();
  const bool two = job.kind == StatKind::kMinMax;
  const bool fused_loop = vector && prm.recips != nullptr && Info(p.y_type).bits <= 8 &&
                          (job.kind == StatKind::kAbs || two) &&
                          job.x_type == DType::kFloat32 && p.x_type == DType::kFloat32 && job.begin == p.end &&
                          job.x == static_cast<const float*>(p.x) + distance &&
                          job.layout->count == l.count && job.layout->inner == l.inner &&
                          job.layout->granularity == l.granularity && job.layout->block == l.block &&
                          job.layout->axis_dim == l.axis_dim;
  // (rows from kPrefetchFrom elements keep QuantizeSpan's own prefetching of x)
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  bool rows = fused_loop && !prm.exact_products && l.granularity == Granularity::kPerAxis && l.outer == 1 &&
              l.inner > 1 && l.inner < kPrefetchFrom && p.begin % l.inner == 0 && distance % l.inner == 0 &&
              job.end % l.inner == 0;
  // Blocks along the last axis: rows of whole blocks shift by whole blocks, others by whole rows.
  const int64_t shift = l.axis_dim % std::max<int64_t>(l.block, 1) == 0 ? l.block : l.axis_dim;
  const bool prefetch = l.count >= kSidePrefetchFrom;
  const bool blocks = fused_loop && RunKindOf(l) == RunKind::kBlocks && p.begin % shift == 0 && distance % shift == 0 &&
                      BlockSideFits(N, l.block, prefetch, two);
  // Per row with two keys on AVX-512 the prefetched side measured 0.93x at 16M elements.
  if (rows && two && prefetch && N >= 16) rows = false;
  if (rows || blocks) {
    SideStats side;
    side.distance = distance;
    side.end = job.end;
    side.groups_ahead = rows ? distance / l.inner : distance / shift * (shift == l.block ? 1 : l.scale_axis);
    side.g_first = job.g_first;
    side.amax = job.s0;
    side.neg = two ? job.s1 : nullptr;
    side.prefetch = prefetch;
    side.in_range = in_range;
    if (QuantizeVector(p, prm, y, &side)) done = std::min(job.end, job.begin + (p.end - p.begin));
  } else {
    QuantizePiece(p, vector ? prm : QuantParams(), y);
  }
  if (job.end > done) {
    GroupStatsVector(job.kind, job.layout[0], done, job.end, job.x_type,
                     static_cast<const char*>(job.x) + ByteOffset(job.x_type, done - job.begin), job.g_first, job.s0,
                     job.s1);
  }
}

void DynamicQuantizeDriver(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp,
                           QuantizePath path) {
  DynamicQuantize(x, n, y, scale, zp, (path == QuantizePath::kAuto ? kOwnPath : path) == QuantizePath::kReciprocal);
}

// r[k] = 1 / s[k]; whether every r[k] is a normal float32 (exponent field neither 0 nor 255)
// and every s[k] a power of two (fraction field zero).
ReciprocalFacts ReciprocalsDriver(const float* HWY_RESTRICT s, int64_t n, float* HWY_RESTRICT r) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto bad = hn::Zero(di), fraction = hn::Zero(di);
  int64_t k = 0;
  for (; k + N <= n; k += N) {
    const auto vs = hn::LoadU(df, s + k);
    const auto v = hn::Div(hn::Set(df, 1.0f), vs);
    hn::StoreU(v, df, r + k);
    const auto field = hn::And(hn::ShiftRight<23>(hn::BitCast(di, v)), hn::Set(di, 0xFF));
    bad = hn::Or(bad, hn::VecFromMask(di, hn::Or(hn::Eq(field, hn::Zero(di)), hn::Eq(field, hn::Set(di, 0xFF)))));
    fraction = hn::Or(fraction, hn::And(hn::BitCast(di, vs), hn::Set(di, 0x7FFFFF)));
  }
  ReciprocalFacts f = ScalarReciprocals(s, k, n, r);
  f.normal = f.normal && hn::AllTrue(di, hn::Eq(bad, hn::Zero(di)));
  f.powers_of_two = f.powers_of_two && hn::AllTrue(di, hn::Eq(fraction, hn::Zero(di)));
  return f;
}

ScaleFacts ScaleFactsDriver(const float* HWY_RESTRICT s, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto exponent = hn::Set(di, 0x7F800000), magnitude = hn::Set(di, 0x7FFFFFFF);
  const auto moderate = hn::Set(di, static_cast<int32_t>(kModerateExponentBits));
  const auto fraction = hn::Set(di, 0x7FFFFF);
  auto nonfinite = hn::Zero(di), zero = hn::Zero(di), large = hn::Zero(di), min_field = exponent;
  auto fractions = hn::Zero(di);
  int64_t k = 0;
  for (; k + N <= n; k += N) {
    const auto bits = hn::BitCast(di, hn::LoadU(df, s + k));
    const auto field = hn::And(bits, exponent);  // non-negative: signed compares are exact
    const auto is_zero = hn::Eq(hn::And(bits, magnitude), hn::Zero(di));
    nonfinite = hn::Or(nonfinite, hn::VecFromMask(di, hn::Eq(field, exponent)));
    zero = hn::Or(zero, hn::VecFromMask(di, is_zero));
    large = hn::Or(large, hn::VecFromMask(di, hn::Gt(field, moderate)));
    min_field = hn::Min(min_field, hn::IfThenElse(is_zero, exponent, field));
    fractions = hn::Or(fractions, hn::And(bits, fraction));
  }
  ScaleFacts f = ScalarScaleFacts(s, k, n);
  HWY_ALIGN int32_t lanes[hn::MaxLanes(di)];
  hn::Store(fractions, di, lanes);
  for (int64_t i = 0; i < N; ++i) f.fractions |= static_cast<uint32_t>(lanes[i]);
  const uint32_t vector_min = static_cast<uint32_t>(hn::GetLane(hn::MinOfLanes(di, min_field))) >> 23;
  f.min_field = std::min(f.min_field, vector_min);
  f.finite = f.finite && hn::AllTrue(di, hn::Eq(nonfinite, hn::Zero(di)));
  f.zero = f.zero || !hn::AllTrue(di, hn::Eq(zero, hn::Zero(di)));
  f.moderate = f.moderate && hn::AllTrue(di, hn::Eq(large, hn::Zero(di)));
  return f;
}

// DecodeScales (params.cc) for float16, bfloat16 and float8e8m0 scales, whole vectors: the
// bits ScaleOfHalf, ScaleOfBFloat16 and ScaleOfE8M0 give (NaN: the quiet NaN with the sign;
// e8m0 0 is the subnormal 2^-127). src is read as bytes: it needs no alignment.
int64_t DecodeScalesDriver(DType t, const void* HWY_RESTRICT src, int64_t n, float* HWY_RESTRICT s) {
#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the caller's scalar loop
  (void)t, (void)src, (void)n, (void)s;
  return 0;
#else
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const uint8_t* b = static_cast<const uint8_t*>(src);
  int64_t k = 0;
  if (t == DType::kFloat8E8M0) {
    const hn::Rebind<uint8_t, decltype(du)> d8;
    for (; k + N <= n; k += N) {
      const auto c = hn::PromoteTo(du, hn::LoadU(d8, b + k));
      auto bits = hn::IfThenElse(hn::Eq(c, hn::Zero(du)), hn::Set(du, 0x00400000u), hn::ShiftLeft<23>(c));
      bits = hn::IfThenElse(hn::Eq(c, hn::Set(du, 0xFFu)), hn::Set(du, 0x7FC00000u), bits);
      hn::StoreU(hn::BitCast(df, bits), df, s + k);
    }
    return k;
  }
  const hn::Rebind<uint16_t, decltype(du)> d16;
  const hn::Repartition<uint8_t, decltype(d16)> d16_bytes;
  auto halves = [&](int64_t i) { return hn::PromoteTo(du, hn::BitCast(d16, hn::LoadU(d16_bytes, b + 2 * i))); };
  const auto sign_bit = hn::Set(du, 0x80000000u), quiet_nan = hn::Set(du, 0x7FC00000u);
  if (t == DType::kBFloat16) {
    for (; k + N <= n; k += N) {
      const auto bits = hn::ShiftLeft<16>(halves(k));
      const auto magnitude = hn::BitCast(di, hn::AndNot(sign_bit, bits));  // non-negative
      const auto nan = hn::RebindMask(du, hn::Gt(magnitude, hn::Set(di, 0x7F800000)));
      const auto v = hn::IfThenElse(nan, hn::Or(hn::And(bits, sign_bit), quiet_nan), bits);
      hn::StoreU(hn::BitCast(df, v), df, s + k);
    }
    return k;
  }
  if (t != DType::kFloat16) return 0;
  for (; k + N <= n; k += N) {
    const auto h = halves(k);
    const auto exp = hn::And(hn::ShiftRight<10>(h), hn::Set(du, 0x1Fu));
    const auto man = hn::And(h, hn::Set(du, 0x3FFu));
    // exp 1..30: rebias by 127 - 15 = 112; exp 0: man * 2^-24 (exact); exp 31: Inf or NaN.
    const auto normal = hn::Add(hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x7FFFu))), hn::Set(du, 112u << 23));
    const auto subnormal = hn::BitCast(du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, man)), hn::Set(df, 0x1p-24f)));
    const auto special = hn::IfThenElse(hn::Eq(man, hn::Zero(du)), hn::Set(du, 0x7F800000u), quiet_nan);
    auto v = hn::IfThenElse(hn::Eq(exp, hn::Zero(du)), subnormal, normal);
    v = hn::IfThenElse(hn::Eq(exp, hn::Set(du, 0x1Fu)), special, v);
    v = hn::Or(v, hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u))));
    hn::StoreU(hn::BitCast(df, v), df, s + k);
  }
  return k;
#endif
}

// DecodeZeroPoints (params.cc) for 8- and 16-bit integer zero points and whole bytes of packed
// ones, whole vectors: returns how many it wrote (packed: a whole number of bytes), the rest
// are the caller's. Field f of a byte (bits [kBits f, kBits (f + 1))) is moved to the top of
// its lane by a multiply, then shifted down (arithmetically for signed types).
template <int kBits, bool kSigned>
int64_t WidenPackedZeroPoints(const uint8_t* HWY_RESTRICT b, int64_t n, int32_t* HWY_RESTRICT z) {
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::Rebind<uint8_t, decltype(du)> d8;
  constexpr int kPer = 8 / kBits, kPerLog2 = kBits == 4 ? 1 : 2;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  const auto iota = hn::Iota(du, 0);
  const auto byte_of_lane = hn::ShiftRight<kPerLog2>(iota);  // lane j: byte j / kPer
  // 2^(32 - kBits (f + 1)), f = j % kPer: shifts field f to the top bits.
  auto to_top = hn::Set(du, 1u << (32 - kBits));
  const auto field = hn::And(iota, hn::Set(du, kPer - 1));
  for (int f = 1; f < kPer; ++f) {
    to_top = hn::IfThenElse(hn::Eq(field, hn::Set(du, static_cast<uint32_t>(f))),
                            hn::Set(du, 1u << (32 - kBits * (f + 1))), to_top);
  }
  int64_t k = 0;
  for (; k + kPer * N <= n; k += kPer * N) {
    const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, b + k / kPer));
    for (int v = 0; v < kPer; ++v) {
      const auto idx = hn::IndicesFromVec(du, hn::Add(byte_of_lane, hn::Set(du, static_cast<uint32_t>(v * N / kPer))));
      const auto top = hn::BitCast(di, hn::Mul(hn::TableLookupLanes(bytes, idx), to_top));
      const auto value = kSigned ? hn::ShiftRight<32 - kBits>(top)
                                 : hn::BitCast(di, hn::ShiftRight<32 - kBits>(hn::BitCast(du, top)));
      hn::StoreU(value, di, z + k + v * N);
    }
  }
  return k;
}

int64_t WidenZeroPointsDriver(DType t, const void* HWY_RESTRICT src, int64_t n, int32_t* HWY_RESTRICT z) {
#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the caller's scalar loop
  (void)t, (void)src, (void)n, (void)z;
  return 0;
#else
  const hn::ScalableTag<int32_t> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(di));
  const uint8_t* b = static_cast<const uint8_t*>(src);
  int64_t k = 0;
  auto widen = [&](auto d_narrow) {
    using T = hn::TFromD<decltype(d_narrow)>;
    const hn::Repartition<uint8_t, decltype(d_narrow)> d_bytes;
    for (; k + N <= n; k += N) {
      const auto v = hn::BitCast(d_narrow, hn::LoadU(d_bytes, b + k * static_cast<int64_t>(sizeof(T))));
      hn::StoreU(hn::PromoteTo(di, v), di, z + k);
    }
    return k;
  };
  switch (t) {
    case DType::kInt8: return widen(hn::Rebind<int8_t, decltype(di)>());
    case DType::kUint8: return widen(hn::Rebind<uint8_t, decltype(di)>());
    case DType::kInt16: return widen(hn::Rebind<int16_t, decltype(di)>());
    case DType::kUint16: return widen(hn::Rebind<uint16_t, decltype(di)>());
    case DType::kInt4: return WidenPackedZeroPoints<4, true>(b, n, z);
    case DType::kUint4: return WidenPackedZeroPoints<4, false>(b, n, z);
    case DType::kInt2: return WidenPackedZeroPoints<2, true>(b, n, z);
    case DType::kUint2: return WidenPackedZeroPoints<2, false>(b, n, z);
    default: return 0;
  }
#endif
}

// o[k] = float32(z[k]) + add (exact for the zero points' range), whole vectors: returns how
// many it wrote. As a scalar loop each conversion waited on the previous one (CVTSI2SS merges
// into its destination register).
int64_t ZeroOffsetsDriver(const int32_t* HWY_RESTRICT z, int64_t n, float add, float* HWY_RESTRICT o) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto a = hn::Set(df, add);
  int64_t k = 0;
  for (; k + N <= n; k += N) hn::StoreU(hn::Add(hn::ConvertTo(df, hn::LoadU(di, z + k)), a), df, o + k);
  return k;
}

int64_t TargetDriver() { return HWY_TARGET; }

int64_t LanesDriver() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

namespace qlinear {

namespace {
bool CpuConvertsBF16() {
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
  unsigned a = 0, b = 0, c = 0, d = 0;
  // CPUID leaf 7 sub-leaf 1, EAX bit 5: AVX512_BF16. (The AVX-512 state is enabled by the OS
  // wherever an AVX-512 target is dispatched: Highway checks that.)
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || a < 1) return false;  // a: leaf 7's last sub-leaf
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)) != 0;
#else
  return false;
#endif
}
}  // namespace

bool g_cpu_converts_bf16 = CpuConvertsBF16();

HWY_EXPORT(ExecuteQuantizeDriver);
HWY_EXPORT(DynamicQuantizeDriver);
HWY_EXPORT(QuantizeWithStatsDriver);
HWY_EXPORT(ReciprocalPathDriver);
HWY_EXPORT(ReciprocalsDriver);
HWY_EXPORT(ScaleFactsDriver);
HWY_EXPORT(DecodeScalesDriver);
HWY_EXPORT(WidenZeroPointsDriver);
HWY_EXPORT(ZeroOffsetsDriver);
HWY_EXPORT(TargetDriver);
HWY_EXPORT(LanesDriver);

namespace {

// ---- the SIMD target: Highway's choice, or the pinned one ------------------------------------

// The Highway target bit pinned (QLINEAR_TARGET or qlinear_set_target), 0 for none. Only
// qlinear's own dispatch follows it: a host's other Highway code keeps its choice.
std::atomic<int64_t> g_pinned{0};

// Whether a and b spell the same word in ASCII letters of either case ("avx2" names AVX2). Not
// strcasecmp: its result depends on the host's locale.
bool SameWordAnyCase(const char* a, const char* b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    if (lower(*a) != lower(*b)) return false;
  }
  return *a == *b;
}

// The target named `name` (in either case) among those compiled in (0 if none).
int64_t CompiledTargetNamed(const char* name) {
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t t = int64_t{1} << bit;
    if ((HWY_TARGETS & t) != 0 && SameWordAnyCase(hwy::TargetName(t), name)) return t;
  }
  return 0;
}

// Checks `name` as a pin from `source` ("QLINEAR_TARGET" or "qlinear_set_target") and sets
// *target (0 for an empty name: no pin).
qlinear_status ParseTarget(const char* source, const char* name, int64_t* target) {
  *target = 0;
  if (name == nullptr || name[0] == '\0') return QLINEAR_OK;
  char compiled[256];
  const int64_t t = CompiledTargetNamed(name);
  if (t == 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: '%.40s' is not a SIMD target of this build (compiled: %s)", source,
                name, TargetNames(CompiledTargetMask(), compiled));
  }
  if ((hwy::SupportedTargets() & t) == 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: this CPU cannot run %s (supported: %s)", source, hwy::TargetName(t),
                TargetNames(SupportedTargetMask(), compiled));
  }
  *target = t;
  return QLINEAR_OK;
}

// QLINEAR_TARGET, read once: a bad value fails every call that computes (with its message)
// until qlinear_set_target replaces it.
struct EnvironmentPin {
  qlinear_status status = QLINEAR_OK;
  char message[512] = "";
};
std::atomic<bool> g_env_pin_overridden{false};
// A message into a buffer of the same size, cut and terminated. Not snprintf: the first call
// of every process comes here, and on a virtual machine each libc page that formatting maps
// in (three) cost it 10-30 us.
template <size_t kSize>
void CopyMessage(const char* from, char (&to)[kSize]) {
  size_t n = 0;
  while (n + 1 < kSize && from[n] != '\0') ++n;
  std::memcpy(to, from, n);
  to[n] = '\0';
}
const EnvironmentPin& EnvPin() {
  static const EnvironmentPin pin = [] {
    EnvironmentPin p;
    int64_t t = 0;
    // The reading thread's own message survives (this may run inside qlinear_active_target,
    // which sets no status).
    char previous[sizeof(p.message)];
    CopyMessage(LastError(), previous);
    p.status = ParseTarget("QLINEAR_TARGET", std::getenv("QLINEAR_TARGET"), &t);
    if (p.status != QLINEAR_OK) {
      CopyMessage(LastError(), p.message);
      (void)Fail(QLINEAR_OK, "%s", previous);
    } else if (!g_env_pin_overridden.load()) {
      g_pinned.store(t);
    }
    return p;
  }();
  return pin;
}

// ---- the quantize path ---------------------------------------------------------------------

std::atomic<int> g_quantize_path{static_cast<int>(QuantizePath::kAuto)};

// QLINEAR_QUANTIZE_PATH, read once: division | reciprocal | unset (the target's own).
struct EnvironmentPath {
  QuantizePath path = QuantizePath::kAuto;
  bool bad = false;
  char value[41] = "";  // the unknown value, copied: the caller may change the environment later
};
const EnvironmentPath& EnvPath() {
  static const EnvironmentPath env = [] {
    EnvironmentPath e;
    const char* v = std::getenv("QLINEAR_QUANTIZE_PATH");
    if (v == nullptr || v[0] == '\0') return e;
    if (SameWordAnyCase(v, "division")) {
      e.path = QuantizePath::kDivision;
    } else if (SameWordAnyCase(v, "reciprocal")) {
      e.path = QuantizePath::kReciprocal;
    } else {
      e.bad = true;
      CopyMessage(v, e.value);
    }
    return e;
  }();
  return env;
}

// The path forced by the test hook or QLINEAR_QUANTIZE_PATH, or kAuto (the target's own).
QuantizePath RequestedPath() {
  const QuantizePath path = static_cast<QuantizePath>(g_quantize_path.load(std::memory_order_relaxed));
  return path == QuantizePath::kAuto ? EnvPath().path : path;
}

}  // namespace

const char* TargetNames(int64_t mask, char (&buf)[256]) {
  buf[0] = '\0';
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t t = int64_t{1} << bit;
    if ((mask & t) == 0) continue;
    if (buf[0] != '\0') std::strncat(buf, " ", sizeof(buf) - std::strlen(buf) - 1);
    std::strncat(buf, hwy::TargetName(t), sizeof(buf) - std::strlen(buf) - 1);
  }
  return buf;
}

qlinear_status ExecutionSettingsStatus(bool quantizes) {
  const EnvironmentPin& pin = EnvPin();
  if (pin.status != QLINEAR_OK && !g_env_pin_overridden.load()) return Fail(pin.status, "%s", pin.message);
  if (quantizes && EnvPath().bad &&
      static_cast<QuantizePath>(g_quantize_path.load()) == QuantizePath::kAuto) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "QLINEAR_QUANTIZE_PATH: '%.40s' is not one of division, reciprocal (unset: the target's own)",
                EnvPath().value);
  }
  return QLINEAR_OK;
}

qlinear_status PinTarget(const char* name) {
  (void)EnvPin();  // the environment is read first, so that this call overrides it
  int64_t t = 0;
  const qlinear_status s = ParseTarget("qlinear_set_target", name, &t);
  if (s != QLINEAR_OK) return s;
  g_env_pin_overridden.store(true);
  g_pinned.store(t);
  return QLINEAR_OK;
}

void SetQuantizePathForTest(QuantizePath path) { g_quantize_path.store(static_cast<int>(path)); }

bool ReciprocalPathChosen() {
  const QuantizePath path = RequestedPath();
  return path == QuantizePath::kAuto ? QLINEAR_DISPATCH(ReciprocalPathDriver)() : path == QuantizePath::kReciprocal;
}

// Highway's choice of target, made when the library is loaded instead of in the caller's first
// call: it runs about ten CPUID instructions, which a hypervisor traps (about 5 us each on a KVM
// guest, 50 us in all), and the first call need not pay for them.
[[maybe_unused]] const bool g_target_chosen_at_load = [] {
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return true;
}();

// The entry of a dispatch table for the pinned target (its index as Highway's own chooser
// computes it), or Highway's choice.
size_t DispatchIndex() {
  (void)EnvPin();  // QLINEAR_TARGET applies from the first call on
  const int64_t pinned = g_pinned.load(std::memory_order_relaxed);
  if (pinned == 0) return hwy::GetChosenTarget().GetIndex();
  hwy::ChosenTarget chosen;
  chosen.Update(pinned);
  return chosen.GetIndex();
}

bool VectorQuantizeSupported(const QuantizePlan& p) {
  if (p.prec == Prec::kF64) return false;  // int32 scales, int32 x before opset 19
  // int32 -> float32 -> bfloat16 would round twice; int32 -> float16 cannot (|x| < 65520 is
  // exact in float32, larger values overflow either way).
  return !(p.x_type == DType::kInt32 && p.prec == Prec::kBF16);
}

void ExecuteQuantize(const QuantizePlan& p, void* y, const TaskSplit* split) {
  QLINEAR_DISPATCH(ExecuteQuantizeDriver)(p, y, split, RequestedPath());
}

void ExecuteQuantizeWithStats(const QuantizePlan& p, void* y, const StatsJob& job, bool in_range) {
  QLINEAR_DISPATCH(QuantizeWithStatsDriver)(p, y, job, in_range, RequestedPath());
}

void ExecuteDynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  QLINEAR_DISPATCH(DynamicQuantizeDriver)(x, n, y, scale, zp, RequestedPath());
}

ReciprocalFacts VectorReciprocals(const float* s, int64_t n, float* r) {
  return QLINEAR_DISPATCH(ReciprocalsDriver)(s, n, r);
}

ScaleFacts VectorScaleFacts(const float* s, int64_t n) { return QLINEAR_DISPATCH(ScaleFactsDriver)(s, n); }

int64_t VectorDecodeScales(DType t, const void* src, int64_t n, float* s) {
  return QLINEAR_DISPATCH(DecodeScalesDriver)(t, src, n, s);
}

int64_t VectorWidenZeroPoints(DType t, const void* src, int64_t n, int32_t* z) {
  return QLINEAR_DISPATCH(WidenZeroPointsDriver)(t, src, n, z);
}

int64_t VectorZeroOffsets(const int32_t* z, int64_t n, float add, float* o) {
  return QLINEAR_DISPATCH(ZeroOffsetsDriver)(z, n, add, o);
}

const char* ActiveTargetName() { return hwy::TargetName(DispatchedTarget()); }

int64_t DispatchedTarget() { return QLINEAR_DISPATCH(TargetDriver)(); }

int64_t DispatchedLanesF32() { return QLINEAR_DISPATCH(LanesDriver)(); }

int64_t CompiledTargetMask() { return HWY_TARGETS; }

int64_t SupportedTargetMask() { return hwy::SupportedTargets() & HWY_TARGETS; }

}  // namespace qlinear
#endif  // HWY_ONCE
