#include "params.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
// Caller memory need not be aligned: elements are copied out bytewise (a plain load).
template <class T>
void Widen(const void* src, int64_t n, int32_t* dst) {
  const char* p = static_cast<const char*>(src);
  for (int64_t k = 0; k < n; ++k) {
    T v;
    std::memcpy(&v, p + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
    dst[k] = static_cast<int32_t>(v);
  }
}

// Scales first .. first + n - 1.
void DecodeScales(DType t, const void* scale, int64_t first, int64_t n, Prec prec, float* s) {
  for (int64_t k = 0; k < n; ++k) s[k] = static_cast<float>(RoundToPrecision(prec, LoadReal(t, scale, first + k)));
}

// Zero points first .. first + n - 1.
void DecodeZeroPoints(DType t, const void* zp_data, int64_t first, int64_t n, int32_t* z) {
  const bool sub_byte = Info(t).bits < 8;
  const void* zp = zp_data == nullptr || sub_byte
                       ? zp_data
                       : static_cast<const char*>(zp_data) + first * (Info(t).bits / 8);
  if (!sub_byte) first = 0;
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
      for (int64_t k = 0; k < n; ++k) z[k] = ZeroPointLane(t, zp, first + k);
  }
}

}  // namespace

DecodedParams::DecodedParams(const Layout& l, int64_t begin, int64_t end, DType scale_type,
                             const void* scale, DType zp_type, const void* zp, Prec prec,
                             bool reciprocals) {
  int64_t first, n;
  ScaleWindow(l, begin, end, &first, &n);
  n_ = n;
  float* s = &scale0_;
  int32_t* z = &zp0_;
  if (n != 1) {
    zps_.reset(new int32_t[static_cast<size_t>(n)]);
    z = zps_.get();
  }
  if (scale_type == DType::kFloat32 && prec == Prec::kF32 &&
      reinterpret_cast<uintptr_t>(scale) % alignof(float) == 0) {
    prm_.scales = static_cast<const float*>(scale) + first;
  } else {
    if (n != 1) {
      scales_.reset(new float[static_cast<size_t>(n)]);
      s = scales_.get();
    }
    DecodeScales(scale_type, scale, first, n, prec, s);
    prm_.scales = s;
  }
  DecodeZeroPoints(zp_type, zp, first, n, z);
  prm_.zps = z;
  prm_.first = first;
  if (reciprocals) {
    float* r = &recip0_;
    if (n != 1) {
      recips_.reset(new float[static_cast<size_t>(n)]);
      r = recips_.get();
    }
    if (ComputeReciprocals(prm_.scales, n, r)) prm_.recips = r;
    const DTypeInfo& zi = Info(zp_type);
    if (prm_.recips != nullptr && n > 1 && zi.kind == Kind::kInt && zi.bits <= 8) {
      offsets_.reset(new float[static_cast<size_t>(n)]);
      for (int64_t k = 0; k < n; ++k) offsets_[k] = static_cast<float>(z[k]) + kFixedPointOffset;
      prm_.offsets = offsets_.get();
    }
  }
  prm_.vector = true;
}

bool DecodedParams::ProductsExact(DType x_type) const {
  const bool may_be_inf = x_type == DType::kFloat8E5M2;  // the only input with an Inf code
  for (int64_t k = 0; k < n_; ++k) {
    const float s = prm_.scales[k];
    if (!std::isfinite(s) || (may_be_inf && s == 0.0f)) return false;
  }
  return true;
}

bool DecodedParams::GradientFactorsExact(float lda) const {
  for (int64_t k = 0; k < n_; ++k) {
    const float g = lda / prm_.scales[k];
    if (!std::isfinite(g) || g == 0.0f) return false;
  }
  return true;
}

}  // namespace qlinear
