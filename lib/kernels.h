// The execution side: one dispatch per API call into the best target's driver, which walks
// the whole plan. Plans reaching here are valid; nothing here can fail.
#ifndef QLINEAR_LIB_KERNELS_H_
#define QLINEAR_LIB_KERNELS_H_

#include <stdint.h>

#include "plan.h"

namespace qlinear {

void ExecuteQuantize(const QuantizePlan& p, void* y);
void ExecuteDequantize(const DequantizePlan& p, void* y);
// DynamicQuantizeLinear: range pass, then a per-tensor quantize pass.
void ExecuteDynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp);

// Name of the target a call made now would run on.
const char* ActiveTargetName();
// Highway target bits compiled into the library, and those of them this CPU (or a test's
// hwy::SetSupportedTargetsForTest) allows.
int64_t CompiledTargetMask();
int64_t SupportedTargetMask();

}  // namespace qlinear

#endif  // QLINEAR_LIB_KERNELS_H_
