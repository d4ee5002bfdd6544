// The foreach_target unit: stamps one driver per target; ExecuteX dispatches once per API call
// and the driver walks the whole plan (no indirect call per run or per element).
#include "kernels.h"

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
    QuantizeReference(p, y, 0, p.layout.count);
  }
}

void DequantizeDriver(const DequantizePlan& p, const QuantParams& prm, void* y) {
  if (prm.vector) {
    DequantizeVector(p, prm, y);
  } else {
    DequantizeReference(p, y, 0, p.layout.count);
  }
}

void DynamicQuantizeDriver(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  DynamicQuantize(x, n, y, scale, zp);
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
HWY_EXPORT(TargetDriver);
HWY_EXPORT(LanesDriver);

bool VectorQuantizeSupported(const QuantizePlan& p) {
  if (p.prec == Prec::kF64) return false;  // int32 scales, int32 x before opset 19
  // int32 -> float32 -> bfloat16 would round twice; int32 -> float16 cannot (|x| < 65520 is
  // exact in float32, larger values overflow either way).
  return !(p.x_type == DType::kInt32 && p.prec == Prec::kBF16);
}

bool VectorDequantizeSupported(const DequantizePlan& p) { return true; }


void ExecuteQuantize(const QuantizePlan& p, void* y) {
  if (!VectorQuantizeSupported(p)) {
    HWY_DYNAMIC_DISPATCH(QuantizeDriver)(p, QuantParams(), y);
    return;
  }
  const DecodedParams d(p.layout, p.scale_type, p.scale, p.y_type, p.zero_point, p.prec);
  HWY_DYNAMIC_DISPATCH(QuantizeDriver)(p, d.params(), y);
}

void ExecuteDequantize(const DequantizePlan& p, void* y) {
  if (!VectorDequantizeSupported(p)) {
    HWY_DYNAMIC_DISPATCH(DequantizeDriver)(p, QuantParams(), y);
    return;
  }
  const DecodedParams d(p.layout, p.scale_type, p.scale, p.x_type, p.zero_point, Prec::kF32);
  HWY_DYNAMIC_DISPATCH(DequantizeDriver)(p, d.params(), y);
}

void ExecuteDynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  HWY_DYNAMIC_DISPATCH(DynamicQuantizeDriver)(x, n, y, scale, zp);
}

const char* ActiveTargetName() { return hwy::TargetName(DispatchedTarget()); }

int64_t DispatchedTarget() { return HWY_DYNAMIC_DISPATCH(TargetDriver)(); }

int64_t DispatchedLanesF32() { return HWY_DYNAMIC_DISPATCH(LanesDriver)(); }

int64_t CompiledTargetMask() { return HWY_TARGETS; }

int64_t SupportedTargetMask() { return hwy::SupportedTargets() & HWY_TARGETS; }

}  // namespace qlinear
#endif  // HWY_ONCE
