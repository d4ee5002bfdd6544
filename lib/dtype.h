// The one list of element types and their facts. Nothing else in qlinear writes -8, 15 or 448.
#ifndef QLINEAR_LIB_DTYPE_H_
#define QLINEAR_LIB_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

namespace qlinear {

enum class Kind : uint8_t {
  kFloat,      // float32, float16, bfloat16: x, scales, DQ outputs
  kInt,        // integers, incl. packed sub-byte ones
  kMiniFloat,  // float8 x4, float4e2m1: quantized floats
  kScaleOnly,  // float8e8m0
};

// X(enumerator, onnx code, name, bits, kind, signed, qmin, qmax, since)
// qmin/qmax: the saturation range of integer types (0 for the others). since: the ai.onnx opset
// whose QuantizeLinear/DequantizeLinear first take the type as the quantized one (Q's output,
// DQ's input; int32 only as DQ's input) or, for float8e8m0, as a scale; 0 for the float types.
#define QLINEAR_DTYPE_LIST(X)                                                 \
  X(kFloat32, 1, "float32", 32, kFloat, true, 0, 0, 0)                        \
  X(kUint8, 2, "uint8", 8, kInt, false, 0, 255, 10)                           \
  X(kInt8, 3, "int8", 8, kInt, true, -128, 127, 10)                           \
  X(kUint16, 4, "uint16", 16, kInt, false, 0, 65535, 21)                      \
  X(kInt16, 5, "int16", 16, kInt, true, -32768, 32767, 21)                    \
  X(kInt32, 6, "int32", 32, kInt, true, INT32_MIN, INT32_MAX, 10)             \
  X(kFloat16, 10, "float16", 16, kFloat, true, 0, 0, 0)                       \
  X(kBFloat16, 16, "bfloat16", 16, kFloat, true, 0, 0, 0)                     \
  X(kFloat8E4M3FN, 17, "float8e4m3fn", 8, kMiniFloat, true, 0, 0, 19)         \
  X(kFloat8E4M3FNUZ, 18, "float8e4m3fnuz", 8, kMiniFloat, true, 0, 0, 19)     \
  X(kFloat8E5M2, 19, "float8e5m2", 8, kMiniFloat, true, 0, 0, 19)             \
  X(kFloat8E5M2FNUZ, 20, "float8e5m2fnuz", 8, kMiniFloat, true, 0, 0, 19)     \
  X(kUint4, 21, "uint4", 4, kInt, false, 0, 15, 21)                           \
  X(kInt4, 22, "int4", 4, kInt, true, -8, 7, 21)                              \
  X(kFloat4E2M1, 23, "float4e2m1", 4, kMiniFloat, true, 0, 0, 23)             \
  X(kFloat8E8M0, 24, "float8e8m0", 8, kScaleOnly, false, 0, 0, 24)            \
  X(kUint2, 25, "uint2", 2, kInt, false, 0, 3, 25)                            \
  X(kInt2, 26, "int2", 2, kInt, true, -2, 1, 25)

enum class DType : int32_t {
  kUndefined = 0,
#define QLINEAR_X(e, code, name, bits, kind, sgn, lo, hi, since) e = code,
  QLINEAR_DTYPE_LIST(QLINEAR_X)
#undef QLINEAR_X
};

struct DTypeInfo {
  DType type;
  const char* name;
  int bits;  // bits per element (4 and 2 are packed)
  Kind kind;
  bool is_signed;
  int32_t qmin, qmax;
  int since;  // the opset that introduced it as a quantized (or e8m0 scale) type; 0: float types
};

namespace dtype_detail {
inline constexpr DTypeInfo kTable[] = {
#define QLINEAR_X(e, code, name, bits, kind, sgn, lo, hi, since) {DType::e, name, bits, Kind::kind, sgn, lo, hi, since},
    QLINEAR_DTYPE_LIST(QLINEAR_X)
#undef QLINEAR_X
};
constexpr int32_t MaxCode() {
  int32_t m = 0;
  for (const DTypeInfo& info : kTable) m = static_cast<int32_t>(info.type) > m ? static_cast<int32_t>(info.type) : m;
  return m;
}
// Codes are small (ONNX TensorProto numbers): a table indexed by code, built at compile time
// (every call looks types up several times; a function-local static cost 9% of a 64-element call).
struct Index {
  const DTypeInfo* at[MaxCode() + 1];
};
constexpr Index BuildIndex() {
  Index index{};
  for (const DTypeInfo& info : kTable) index.at[static_cast<int32_t>(info.type)] = &info;
  return index;
}
inline constexpr Index kIndex = BuildIndex();
}  // namespace dtype_detail

// Facts for a code, or nullptr when the code is not one of the list.
constexpr const DTypeInfo* FindDType(int32_t code) {
  return code >= 0 && code <= dtype_detail::MaxCode() ? dtype_detail::kIndex.at[code] : nullptr;
}
constexpr const DTypeInfo& Info(DType t) { return *FindDType(static_cast<int32_t>(t)); }
inline const char* Name(DType t) {
  const DTypeInfo* i = FindDType(static_cast<int32_t>(t));
  return i ? i->name : "unknown";
}

// f(DTypeTag<T>()) for the type t of the list (nothing for other codes): the one switch on a
// type, from which the kernels' dispatch on input and output types is generated. Always inlined,
// so that the switch lands in the (per-target) caller and a kernel's lambda inlines into it.
template <DType kT>
struct DTypeTag {
  static constexpr DType kType = kT;
};
template <class F>
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
inline void WithDType(DType t, F&& f) {
  switch (t) {
#define QLINEAR_X(e, code, name, bits, kind, sgn, lo, hi, since) \
  case DType::e:                                                  \
    f(DTypeTag<DType::e>());                                      \
    return;
    QLINEAR_DTYPE_LIST(QLINEAR_X)
#undef QLINEAR_X
    default:
      return;
  }
}

// Bytes that `count` elements of `t` occupy (packed for sub-byte types). Caller checks overflow.
inline uint64_t StorageBytes(DType t, uint64_t count) {
  const uint64_t bits = static_cast<uint64_t>(Info(t).bits);
  return bits >= 8 ? count * (bits / 8) : (count + (8 / bits) - 1) / (8 / bits);
}

// Byte offset of element `elements` from element 0 of a tensor of type t (elements is a multiple
// of the per-byte count for sub-byte types).
inline size_t ByteOffset(DType t, int64_t elements) {
  return static_cast<size_t>(elements) * static_cast<size_t>(Info(t).bits) / 8;
}

inline bool IsSubByte(DType t) { return Info(t).bits < 8; }

}  // namespace qlinear

#endif  // QLINEAR_LIB_DTYPE_H_
