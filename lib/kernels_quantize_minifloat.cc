// QuantizeLinear into float8 and float4 outputs: the loops of kernels.cc's drivers for that
// family, in a foreach_target unit of their own, which compiles in parallel with kernels.cc
// (the integer family). Called from the same target's driver, never dispatched on its own.
// Owns: nothing but the instantiation. Must not know: dispatch, validation.
#include "kernels.h"
#include "params.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels_quantize_minifloat.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/quantize-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

bool QuantizeVectorMiniFloat(const QuantizePlan& p, const QuantParams& prm, void* y, const SideStats* side) {
  return QuantizeVectorOf<true>(p, prm, y, side);
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();
