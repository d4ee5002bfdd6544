// Per-target QuantizeLinear / DequantizeLinear kernels (Highway include-guard toggle).
#if defined(QLINEAR_LIB_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QLINEAR_LIB_QUANTIZE_INL_H_
#undef QLINEAR_LIB_QUANTIZE_INL_H_
#else
#define QLINEAR_LIB_QUANTIZE_INL_H_
#endif

#include "hwy/highway.h"
#include "lib/plan.h"
#include "lib/reference.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

inline void QuantizeRange(const QuantizePlan& p, void* y, int64_t begin, int64_t end) {
  QuantizeReference(p, y, begin, end);
}

inline void DequantizeRange(const DequantizePlan& p, void* y, int64_t begin, int64_t end) {
  DequantizeReference(p, y, begin, end);
}

inline void DynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp) {
  DynamicScaleReference(x, n, scale, zp);
  QuantizePlan p;
  p.layout.count = n;
  p.layout.axis_dim = n;
  p.x_type = DType::kFloat32;
  p.scale_type = DType::kFloat32;
  p.y_type = DType::kUint8;
  p.x = x;
  p.scale = scale;
  p.zero_point = zp;
  p.y_bytes = static_cast<uint64_t>(n);
  QuantizeRange(p, y, 0, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#endif  // QLINEAR_LIB_QUANTIZE_INL_H_
