#include "dtype.h"

namespace qlinear {

const DTypeInfo* FindDType(int32_t code) {
  static const DTypeInfo kTable[] = {
#define QLINEAR_X(e, code, name, bits, kind, sgn, lo, hi) \
  {DType::e, name, bits, Kind::kind, sgn, lo, hi},
      QLINEAR_DTYPE_LIST(QLINEAR_X)
#undef QLINEAR_X
  };
  for (const DTypeInfo& info : kTable) {
    if (static_cast<int32_t>(info.type) == code) return &info;
  }
  return nullptr;
}

}  // namespace qlinear
