#include "params.h"

#include <cmath>

#include "minifloat.h"
#include "reference.h"

namespace qlinear {
namespace {

int32_t ZeroPointLane(DType t, const void* zp, int64_t k) {
  if (t == DType::kFloat4E2M1) {
    const float v =
        zp != nullptr ? DecodeMiniFloat(t, static_cast<uint8_t>(LoadCode(t, zp, k))) : -0.0f;
    return static_cast<int32_t>(BitsOf(v));
  }
  if (Info(t).kind != Kind::kInt || zp == nullptr) return 0;
  return LoadInt(t, zp, k);
}

}  // namespace

DecodedParams::DecodedParams(const Layout& l, DType scale_type, const void* scale, DType zp_type,
                             const void* zp, Prec prec, bool reciprocals) {
  const int64_t n = l.granularity == Granularity::kPerTensor ? 1 : l.scale_count;
  float* s = &scale0_;
  int32_t* z = &zp0_;
  if (n != 1) {
    scales_.resize(static_cast<size_t>(n));
    zps_.resize(static_cast<size_t>(n));
    s = scales_.data();
    z = zps_.data();
  }
  for (int64_t k = 0; k < n; ++k) {
    s[k] = static_cast<float>(RoundToPrecision(prec, LoadReal(scale_type, scale, k)));
    z[k] = ZeroPointLane(zp_type, zp, k);
  }
  prm_.scales = s;
  prm_.zps = z;
  if (reciprocals) {
    float* r = &recip0_;
    if (n != 1) {
      recips_.resize(static_cast<size_t>(n));
      r = recips_.data();
    }
    bool all_normal = true;
    for (int64_t k = 0; k < n; ++k) {
      r[k] = 1.0f / s[k];
      all_normal = all_normal && std::isnormal(r[k]);
    }
    if (all_normal) prm_.recips = r;
  }
  prm_.vector = true;
}

}  // namespace qlinear
