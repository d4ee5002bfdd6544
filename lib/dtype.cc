#include "dtype.h"

#include <array>

namespace qlinear {

const DTypeInfo* FindDType(int32_t code) {
  static const DTypeInfo kTable[] = {
#define QLINEAR_X(e, code, name, bits, kind, sgn, lo, hi) \
  {DType::e, name, bits, Kind::kind, sgn, lo, hi},
      QLINEAR_DTYPE_LIST(QLINEAR_X)
#undef QLINEAR_X
  };
  // Codes are small (ONNX TensorProto numbers): an index built once, not a search per call.
  constexpr int32_t kCodes = 64;
  static const auto kIndex = [] {
    std::array<const DTypeInfo*, kCodes> index{};
    for (const DTypeInfo& info : kTable) {
      const int32_t c = static_cast<int32_t>(info.type);
      if (c >= 0 && c < kCodes) index[static_cast<size_t>(c)] = &info;
    }
    return index;
  }();
  if (code >= 0 && code < kCodes) return kIndex[static_cast<size_t>(code)];
  for (const DTypeInfo& info : kTable) {  // (none today: every code is below kCodes)
    if (static_cast<int32_t>(info.type) == code) return &info;
  }
  return nullptr;
}

}  // namespace qlinear
