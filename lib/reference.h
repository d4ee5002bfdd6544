// The scalar reference: the ONNX semantics element by element, written from the spec with
// exact arithmetic (docs/semantics.md). It is the oracle for every vector path and the
// fallback for what is not vectorized. Slow by design; correct for every input the plan allows.
#ifndef QLINEAR_LIB_REFERENCE_H_
#define QLINEAR_LIB_REFERENCE_H_

#include <stdint.h>

#include "dtype.h"
#include "plan.h"

namespace qlinear {

// Exact value of element i of a float32/float16/bfloat16/int32/float8e8m0 tensor.
double LoadReal(DType t, const void* data, int64_t i);
// Raw code of element i of a float8/float4 tensor (float4 unpacked from its nibble).
uint32_t LoadCode(DType t, const void* data, int64_t i);
// Element i of an integer tensor (incl. packed sub-byte types, sign-extended).
int32_t LoadInt(DType t, const void* data, int64_t i);

// v rounded once (to nearest even) to the precision type; F64 returns v.
double RoundToPrecision(Prec p, double v);
// x / s with both operands and the quotient in precision p (docs/semantics.md, "Division precision").
double DivideInPrecision(Prec p, double x, double s);
// a + b in precision p (float4e2m1 zero point).
double AddInPrecision(Prec p, double a, double b);
// clamp(round_half_even(q) + zp, qmin, qmax); NaN -> qmin.
int32_t SaturateToInt(double q, int32_t zp, int32_t qmin, int32_t qmax);

// y's code for element i of a QuantizeLinear plan (integer value or float8/float4 code).
int32_t QuantizeElement(const QuantizePlan& p, int64_t i);

// Elements [begin, end) of the output. Sub-byte outputs: bytes wholly inside the range are
// written whole; a byte shared with elements outside the range is read, modified and written;
// when end == count the last byte's padding bits are set to zero.
void QuantizeReference(const QuantizePlan& p, void* y, int64_t begin, int64_t end);
void DequantizeReference(const DequantizePlan& p, void* y, int64_t begin, int64_t end);

// Training (qlinear.h): whether element i is clamped by the forward pass, and dx[i].
bool ClampedElement(const QuantizePlan& p, int64_t i);
struct BackwardArgs {
  DType dy_type = DType::kFloat32;  // also dx's type
  const void* dy = nullptr;
  float lda = 1.0f;
  const uint8_t* mask_in = nullptr;  // clamp bits from the forward pass, or nullptr
  void* dx = nullptr;                // nullptr: only record mask_out
  uint8_t* mask_out = nullptr;       // nullptr: no mask recorded
};
void BackwardReference(const QuantizePlan& p, const BackwardArgs& b, int64_t begin, int64_t end);

// DynamicQuantizeLinear's scale and zero point for float32 x (docs/semantics.md, "DynamicQuantizeLinear").
void DynamicScaleReference(const float* x, int64_t n, float* scale, uint8_t* zero_point);
// The same from lo = min(0, min x) and hi = max(0, max x) (NaN ignored).
void DynamicParamsFromRange(float lo, float hi, float* scale, uint8_t* zero_point);

}  // namespace qlinear

#endif  // QLINEAR_LIB_REFERENCE_H_
