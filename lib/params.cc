#include "params.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

// Typed copies for the common cases (blocked layouts decode a scale per 32 elements, so this
// loop is on the hot path); everything else goes through the generic per-element loaders.
template <class T>
void Widen(const void* src, int64_t n, int32_t* dst) {
  const T* p = static_cast<const T*>(src);
  for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<int32_t>(p[k]);
}

void DecodeScales(DType t, const void* scale, int64_t n, Prec prec, float* s) {
  if (t == DType::kFloat32 && prec == Prec::kF32) {
    if (n > 0) std::memcpy(s, scale, static_cast<size_t>(n) * sizeof(float));  // (empty: data may be NULL)
    return;
  }
  for (int64_t k = 0; k < n; ++k) s[k] = static_cast<float>(RoundToPrecision(prec, LoadReal(t, scale, k)));
}

void DecodeZeroPoints(DType t, const void* zp, int64_t n, int32_t* z) {
  const bool is_int = Info(t).kind == Kind::kInt;
  if (zp == nullptr || (!is_int && t != DType::kFloat4E2M1)) {
    std::fill(z, z + n, ZeroPointLane(t, nullptr, 0));
    return;
  }
  switch (t) {
    case DType::kInt8: return Widen<int8_t>(zp, n, z);
    case DType::kUint8: return Widen<uint8_t>(zp, n, z);
    case DType::kInt16: return Widen<int16_t>(zp, n, z);
    case DType::kUint16: return Widen<uint16_t>(zp, n, z);
    case DType::kInt32: return Widen<int32_t>(zp, n, z);
    default:
      for (int64_t k = 0; k < n; ++k) z[k] = ZeroPointLane(t, zp, k);
  }
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
  DecodeScales(scale_type, scale, n, prec, s);
  DecodeZeroPoints(zp_type, zp, n, z);
  prm_.scales = s;
  prm_.zps = z;
  if (reciprocals) {
    float* r = &recip0_;
    if (n != 1) {
      recips_.resize(static_cast<size_t>(n));
      r = recips_.data();
    }
    bool all_normal = true;
    for (int64_t k = 0; k < n; ++k) r[k] = 1.0f / s[k];  // vectorizes
    for (int64_t k = 0; k < n && all_normal; ++k) all_normal = std::isnormal(r[k]);
    if (all_normal) prm_.recips = r;
  }
  prm_.vector = true;
}

}  // namespace qlinear
