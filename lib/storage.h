// The C++ element type the kernels use for each DType: how x, scales and codes sit in memory
// (sub-byte codes are staged one per byte). Plain C++: shared by every per-target loop.
#ifndef QLINEAR_LIB_STORAGE_H_
#define QLINEAR_LIB_STORAGE_H_

#include <stdint.h>

#include <type_traits>

#include "dtype.h"
#include "hwy/base.h"

namespace qlinear {

template <DType kT>
constexpr DTypeInfo kInfo = *FindDType(static_cast<int32_t>(kT));

// Quantized types: int8/uint8/int16/uint16/int32 as themselves; 4- and 2-bit integers as int8 or
// uint8 (one code per byte); float8 and float4 codes as uint8.
template <DType kT>
using CodeStorage = std::conditional_t<
    kInfo<kT>.bits == 32, int32_t,
    std::conditional_t<kInfo<kT>.bits == 16, std::conditional_t<kInfo<kT>.is_signed, int16_t, uint16_t>,
                       std::conditional_t<kInfo<kT>.kind == Kind::kInt && kInfo<kT>.is_signed, int8_t, uint8_t>>>;

// Float types (QuantizeLinear's x and dy, DequantizeLinear's y).
template <DType kT>
using FloatStorage = std::conditional_t<
    kT == DType::kFloat16, hwy::float16_t,
    std::conditional_t<kT == DType::kBFloat16, hwy::bfloat16_t, std::conditional_t<kT == DType::kInt32, int32_t, float>>>;

// QuantizeLinear's x types.
constexpr bool IsQuantizeInput(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kInt32;
}
// The quantized types: QuantizeLinear's outputs (not int32) and DequantizeLinear's inputs.
// A scan by value, not FindDType: GCC 12 under -fsanitize=undefined does not fold a pointer's
// comparison with null in a constant expression.
constexpr bool IsQuantized(DType t) {
  for (const DTypeInfo& info : dtype_detail::kTable) {
    if (info.type == t) return info.kind == Kind::kInt || info.kind == Kind::kMiniFloat;
  }
  return false;
}

}  // namespace qlinear

#endif  // QLINEAR_LIB_STORAGE_H_
