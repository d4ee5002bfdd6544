// The foreach_target unit: stamps one driver per target; ExecuteX dispatches once per API call
// and the driver walks the whole plan (no indirect call per run or per element).
#include "kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/quantize-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

void QuantizeDriver(const QuantizePlan& p, void* y) { QuantizeRange(p, y, 0, p.layout.count); }

void DequantizeDriver(const DequantizePlan& p, void* y) {
  DequantizeRange(p, y, 0, p.layout.count);
}

void DynamicQuantizeDriver(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  DynamicQuantize(x, n, y, scale, zp);
}

int64_t TargetDriver() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {

HWY_EXPORT(QuantizeDriver);
HWY_EXPORT(DequantizeDriver);
HWY_EXPORT(DynamicQuantizeDriver);
HWY_EXPORT(TargetDriver);

void ExecuteQuantize(const QuantizePlan& p, void* y) { HWY_DYNAMIC_DISPATCH(QuantizeDriver)(p, y); }

void ExecuteDequantize(const DequantizePlan& p, void* y) {
  HWY_DYNAMIC_DISPATCH(DequantizeDriver)(p, y);
}

void ExecuteDynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  HWY_DYNAMIC_DISPATCH(DynamicQuantizeDriver)(x, n, y, scale, zp);
}

const char* ActiveTargetName() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(TargetDriver)());
}

int64_t CompiledTargetMask() { return HWY_TARGETS; }

int64_t SupportedTargetMask() { return hwy::SupportedTargets() & HWY_TARGETS; }

}  // namespace qlinear
#endif  // HWY_ONCE
