// The training backward pass in its own foreach_target unit (it compiles in parallel with
// kernels.cc). One dispatch per API call, as there.
#include "dispatch.h"
#include "kernels.h"
#include "params.h"
#include "reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kernels_backward.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/backward-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {

void BackwardDriver(const QuantizePlan& p, const QuantParams& prm, const BackwardArgs& b) {
  if (prm.vector) {
    BackwardVector(p, prm, b);
  } else {
    BackwardReference(p, b, 0, p.layout.count);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {

HWY_EXPORT(BackwardDriver);

std::unique_ptr<DecodedParams> DecodeBackwardParams(const QuantizePlan& p) {
  if (!VectorQuantizeSupported(p)) return nullptr;
  // Integer clamp tests take the reciprocal path where QuantizeLinear would (backward-inl.h
  // IntClampTest); the float8/float4 ones divide.
  const bool reciprocals =
      p.prec == Prec::kF32 && Info(p.y_type).kind != Kind::kMiniFloat && ReciprocalPathChosen();
  return std::make_unique<DecodedParams>(p.layout, 0, p.layout.count, p.scale_type, p.scale, p.y_type, p.zero_point,
                                         p.prec, reciprocals ? ParamsFor::kReciprocal : ParamsFor::kDivision);
}

void ExecuteBackward(const QuantizePlan& p, const BackwardArgs& b, const DecodedParams* d) {
  if (d == nullptr) {
    QLINEAR_DISPATCH(BackwardDriver)(p, QuantParams(), b);
    return;
  }
  const bool exact = b.dx == nullptr || d->GradientFactorsExact(b.lda);  // else the reference's NaN rule
  QLINEAR_DISPATCH(BackwardDriver)(p, exact ? d->params() : QuantParams(), b);
}

void ExecuteBackward(const QuantizePlan& p, const BackwardArgs& b) {
  const std::unique_ptr<DecodedParams> d = DecodeBackwardParams(p);
  ExecuteBackward(p, b, d.get());
}

}  // namespace qlinear
#endif  // HWY_ONCE
