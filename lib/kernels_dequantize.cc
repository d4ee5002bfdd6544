// DequantizeLinear in its own foreach_target unit (it compiles in parallel with kernels.cc,
// which holds QuantizeLinear and the process's execution settings). One dispatch per API call;
// the driver walks the whole plan.
// Owns: the DequantizeLinear driver. Must not know: validation, the loops themselves.
#include "dispatch.h"
#include "kernels.h"
#include "params.h"
#include "reference.h"
#include "run_plan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels_dequantize.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/dequantize-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

void DequantizePiece(const DequantizePlan& p, const QuantParams& prm, void* y) {
  if (prm.vector) {
    DequantizeVector(p, prm, y);
  } else {
    DequantizeReference(p, y, p.begin, p.end);
  }
}

void ExecuteDequantizeDriver(const DequantizePlan& p, void* y, const TaskSplit* split) {
  if (!VectorDequantizeSupported(p)) return RunPlan<DequantizePiece>(p, y, QuantParams(), split);
  auto run = [&](const DequantizePlan& q, void* q_y, ParamsWorkspace* ws, const TaskSplit* s) {
    const DecodedParams d(q.layout, q.begin, q.end, q.scale_type, q.scale, q.x_type, q.zero_point, Prec::kF32,
                          ParamsFor::kDequantize, ws);
    RunPlan<DequantizePiece>(q, q_y, d.ForDequantize(q.x_type), s);
  };
  if (split != nullptr) return run(p, y, nullptr, split);
  // On the calling thread, pieces of about kWindowGroups groups: the decoded scales and zero
  // points stay small (a first call's scratch; no allocation per call for large tensors).
  RunInWindowPieces(
      p, y,
      [&](int64_t groups) {
        return ArraysFor(groups, p.scale_type, p.scale, p.x_type, p.zero_point, Prec::kF32, ParamsFor::kDequantize);
      },
      [&](const DequantizePlan& q, void* q_y, ParamsWorkspace* ws) { run(q, q_y, ws, nullptr); },
      [](const DequantizePlan& q, void* q_y) { DequantizeReference(q, q_y, q.begin, q.end); });
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {

HWY_EXPORT(ExecuteDequantizeDriver);

bool VectorDequantizeSupported(const DequantizePlan& p) { return true; }

void ExecuteDequantize(const DequantizePlan& p, void* y, const TaskSplit* split) {
  QLINEAR_DISPATCH(ExecuteDequantizeDriver)(p, y, split);
}

}  // namespace qlinear
#endif  // HWY_ONCE
