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
  const DecodedParams d(p.layout, p.begin, p.end, p.scale_type, p.scale, p.x_type, p.zero_point, Prec::kF32,
                        ParamsFor::kDequantize);
  RunPlan<DequantizePiece>(p, y, d.ForDequantize(p.x_type), split);
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
