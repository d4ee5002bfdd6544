// The foreach_target unit: stamps one driver per target; ExecuteX dispatches once per API call
// and the driver walks the whole plan (no indirect call per run or per element).
#include "kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fpenv.h"
#include "params.h"
#include "reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/quantize-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

void QuantizeDriver(const QuantizePlan& p, const QuantParams& prm, void* y) {
  if (prm.vector) {
    QuantizeVector(p, prm, y);
  } else {
    QuantizeReference(p, y, p.begin, p.end);
  }
}

void DequantizeDriver(const DequantizePlan& p, const QuantParams& prm, void* y) {
  if (prm.vector) {
    DequantizeVector(p, prm, y);
  } else {
    DequantizeReference(p, y, p.begin, p.end);
  }
}

void DynamicQuantizeDriver(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp,
                           bool reciprocal) {
  DynamicQuantize(x, n, y, scale, zp, reciprocal);
}

// Whether the reciprocal path beats division on this CPU for this target: both are exact, so
// this only picks the faster. Timed once per target (4096 float32 -> int8, best of 7 each).
bool MeasureReciprocalFaster() {
  constexpr int64_t kN = 4096;
  std::vector<float> x(kN);
  std::vector<int8_t> out(kN);
  uint32_t state = 12345;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int32_t>(state >> 8) % 60000) * 0.01f;
  }
  const IntEncoder enc{-128, 127, Prec::kF32};
  const float scale = 0.37f, recip = 1.0f / scale;
  const int32_t zp = 3;
  auto time = [&](const float* r) {
    const auto t0 = std::chrono::steady_clock::now();
    QuantizeSpan<false>(enc, x.data(), kN, &scale, r, &zp, out.data());
    return std::chrono::steady_clock::now() - t0;
  };
  auto best_div = time(nullptr), best_rec = time(&recip);
  for (int k = 0; k < 7; ++k) {
    best_div = std::min(best_div, time(nullptr));
    best_rec = std::min(best_rec, time(&recip));
  }
  return best_rec * 20 < best_div * 19;  // 5% better, else the simpler division
}

bool ReciprocalFasterDriver() {
  static const bool faster = MeasureReciprocalFaster();
  return faster;
}

// r[k] = 1 / s[k]; whether every r[k] is a normal float32 (exponent field neither 0 nor 255).
bool ReciprocalsDriver(const float* HWY_RESTRICT s, int64_t n, float* HWY_RESTRICT r) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto bad = hn::Zero(di);
  int64_t k = 0;
  for (; k + N <= n; k += N) {
    const auto v = hn::Div(hn::Set(df, 1.0f), hn::LoadU(df, s + k));
    hn::StoreU(v, df, r + k);
    const auto field = hn::And(hn::ShiftRight<23>(hn::BitCast(di, v)), hn::Set(di, 0xFF));
    bad = hn::Or(bad, hn::VecFromMask(di, hn::Or(hn::Eq(field, hn::Zero(di)), hn::Eq(field, hn::Set(di, 0xFF)))));
  }
  const bool normal = hn::AllTrue(di, hn::Eq(bad, hn::Zero(di)));
  return ScalarReciprocals(s, k, n, r) && normal;
}

int64_t TargetDriver() { return HWY_TARGET; }

int64_t LanesDriver() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {

HWY_EXPORT(QuantizeDriver);
HWY_EXPORT(DequantizeDriver);
HWY_EXPORT(DynamicQuantizeDriver);
HWY_EXPORT(ReciprocalFasterDriver);
HWY_EXPORT(ReciprocalsDriver);
HWY_EXPORT(TargetDriver);
HWY_EXPORT(LanesDriver);

namespace {

std::atomic<int> g_quantize_path{static_cast<int>(QuantizePath::kAuto)};

// kAuto: QLINEAR_QUANTIZE_PATH=division|reciprocal if set, else what was measured faster.
bool UseReciprocal() {
  static const QuantizePath from_env = [] {
    const char* e = std::getenv("QLINEAR_QUANTIZE_PATH");
    if (e != nullptr && std::strcmp(e, "division") == 0) return QuantizePath::kDivision;
    if (e != nullptr && std::strcmp(e, "reciprocal") == 0) return QuantizePath::kReciprocal;
    return QuantizePath::kAuto;
  }();
  QuantizePath path = static_cast<QuantizePath>(g_quantize_path.load(std::memory_order_relaxed));
  if (path == QuantizePath::kAuto) path = from_env;
  if (path == QuantizePath::kAuto) return HWY_DYNAMIC_DISPATCH(ReciprocalFasterDriver)();
  return path == QuantizePath::kReciprocal;
}

}  // namespace

void SetQuantizePathForTest(QuantizePath path) { g_quantize_path.store(static_cast<int>(path)); }

bool ReciprocalPathChosen() { return UseReciprocal(); }

bool VectorQuantizeSupported(const QuantizePlan& p) {
  if (p.prec == Prec::kF64) return false;  // int32 scales, int32 x before opset 19
  // int32 -> float32 -> bfloat16 would round twice; int32 -> float16 cannot (|x| < 65520 is
  // exact in float32, larger values overflow either way).
  return !(p.x_type == DType::kInt32 && p.prec == Prec::kBF16);
}

bool VectorDequantizeSupported(const DequantizePlan& p) { return true; }

namespace {

// Byte offset of element `elements` from element 0 of a packed tensor of type t (elements is a
// multiple of the per-byte count for sub-byte types).
size_t ByteOffset(DType t, int64_t elements) {
  return static_cast<size_t>(elements) * static_cast<size_t>(Info(t).bits) / 8;
}

// driver(plan, params, y) over the whole plan, or over its pieces through split's parallel-for.
template <class Plan, class Driver>
void RunPlan(const Plan& p, void* y, const QuantParams& prm, const TaskSplit* split, Driver driver) {
  if (split == nullptr) return driver(p, prm, y);
  struct Context {
    const Plan* plan;
    void* y;
    const QuantParams* prm;
    int64_t per_task;
    Driver driver;
  } ctx{&p, y, &prm, split->per_task, driver};
  const int64_t tasks = (p.end - p.begin + split->per_task - 1) / split->per_task;
  split->parallel_for(split->context, tasks, [](void* c, int64_t t) {
    const FpEnvGuard fp_env;  // the pool thread's own modes (qlinear.h)
    const Context& k = *static_cast<const Context*>(c);
    Plan piece = *k.plan;
    piece.begin = k.plan->begin + t * k.per_task;
    piece.end = std::min(k.plan->end, piece.begin + k.per_task);
    const int64_t skip = piece.begin - k.plan->begin;
    piece.x = static_cast<const char*>(k.plan->x) + ByteOffset(piece.x_type, skip);
    k.driver(piece, *k.prm, static_cast<char*>(k.y) + ByteOffset(piece.y_type, skip));
  }, &ctx);
}

}  // namespace

void ExecuteQuantize(const QuantizePlan& p, void* y, const TaskSplit* split) {
  auto driver = [](const QuantizePlan& piece, const QuantParams& prm, void* out) {
    HWY_DYNAMIC_DISPATCH(QuantizeDriver)(piece, prm, out);
  };
  if (!VectorQuantizeSupported(p)) return RunPlan(p, y, QuantParams(), split, driver);
  // The reciprocal path needs the quotient in float32 (no second rounding).
  const bool reciprocals = p.prec == Prec::kF32 && UseReciprocal();
  const DecodedParams d(p.layout, p.begin, p.end, p.scale_type, p.scale, p.y_type, p.zero_point, p.prec,
                        reciprocals);
  RunPlan(p, y, d.params(), split, driver);
}

void ExecuteDequantize(const DequantizePlan& p, void* y, const TaskSplit* split) {
  auto driver = [](const DequantizePlan& piece, const QuantParams& prm, void* out) {
    HWY_DYNAMIC_DISPATCH(DequantizeDriver)(piece, prm, out);
  };
  if (!VectorDequantizeSupported(p)) return RunPlan(p, y, QuantParams(), split, driver);
  const DecodedParams d(p.layout, p.begin, p.end, p.scale_type, p.scale, p.x_type, p.zero_point, Prec::kF32);
  RunPlan(p, y, d.ProductsExact(p.x_type) ? d.params() : QuantParams(), split, driver);
}

void ExecuteDynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  HWY_DYNAMIC_DISPATCH(DynamicQuantizeDriver)(x, n, y, scale, zp, UseReciprocal());
}

bool ComputeReciprocals(const float* s, int64_t n, float* r) {
  if (n >= 64) return HWY_DYNAMIC_DISPATCH(ReciprocalsDriver)(s, n, r);
  return ScalarReciprocals(s, 0, n, r);  // few scales: not worth a dispatch
}

const char* ActiveTargetName() { return hwy::TargetName(DispatchedTarget()); }

int64_t DispatchedTarget() { return HWY_DYNAMIC_DISPATCH(TargetDriver)(); }

int64_t DispatchedLanesF32() { return HWY_DYNAMIC_DISPATCH(LanesDriver)(); }

int64_t CompiledTargetMask() { return HWY_TARGETS; }

int64_t SupportedTargetMask() { return hwy::SupportedTargets() & HWY_TARGETS; }

}  // namespace qlinear
#endif  // HWY_ONCE
