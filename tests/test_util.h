// Test-side tensors and calls. Packing here is written independently of the library's.
#ifndef QLINEAR_TESTS_TEST_UTIL_H_
#define QLINEAR_TESTS_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lib/minifloat.h"  // BitsOf, FloatOf
#include "qlinear/qlinear.h"

namespace qlinear {
namespace test {

inline int ElementBits(int32_t dtype) {
  switch (dtype) {
    case QLINEAR_DTYPE_FLOAT: case QLINEAR_DTYPE_INT32: return 32;
    case QLINEAR_DTYPE_UINT16: case QLINEAR_DTYPE_INT16: case QLINEAR_DTYPE_FLOAT16:
    case QLINEAR_DTYPE_BFLOAT16: return 16;
    case QLINEAR_DTYPE_UINT4: case QLINEAR_DTYPE_INT4: case QLINEAR_DTYPE_FLOAT4E2M1: return 4;
    case QLINEAR_DTYPE_UINT2: case QLINEAR_DTYPE_INT2: return 2;
    default: return 8;
  }
}

inline size_t BytesFor(int32_t dtype, size_t n) {
  const int bits = ElementBits(dtype);
  return bits >= 8 ? n * (bits / 8) : (n * bits + 7) / 8;
}

struct Tensor {
  int32_t dtype = QLINEAR_DTYPE_FLOAT;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  qlinear_tensor c() const {
    return qlinear_tensor{dtype, static_cast<int32_t>(shape.size()), shape.data(),
                          bytes.empty() ? nullptr : bytes.data()};
  }
  size_t count() const {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }
};

// Raw codes (one per element, low bits used) -> packed tensor of `dtype`.
inline Tensor FromCodes(int32_t dtype, const std::vector<uint32_t>& codes,
                        std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int bits = ElementBits(dtype);
  t.bytes.assign(BytesFor(dtype, codes.size()), 0);
  for (size_t i = 0; i < codes.size(); ++i) {
    if (bits >= 8) {
      std::memcpy(t.bytes.data() + i * (bits / 8), &codes[i], bits / 8);
    } else {
      const size_t bit = i * bits;
      t.bytes[bit / 8] |= static_cast<uint8_t>((codes[i] & ((1u << bits) - 1)) << (bit % 8));
    }
  }
  return t;
}

inline std::vector<uint32_t> ToCodes(int32_t dtype, const std::vector<uint8_t>& bytes, size_t n) {
  const int bits = ElementBits(dtype);
  std::vector<uint32_t> out(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (bits >= 8) {
      std::memcpy(&out[i], bytes.data() + i * (bits / 8), bits / 8);
    } else {
      const size_t bit = i * bits;
      out[i] = (bytes[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
    }
  }
  return out;
}

// Signed value of an integer code.
inline int64_t SignedValue(int32_t dtype, uint32_t code) {
  switch (dtype) {
    case QLINEAR_DTYPE_INT8: return static_cast<int8_t>(code);
    case QLINEAR_DTYPE_INT16: return static_cast<int16_t>(code);
    case QLINEAR_DTYPE_INT32: return static_cast<int32_t>(code);
    case QLINEAR_DTYPE_INT4: return static_cast<int64_t>(code ^ 8) - 8;
    case QLINEAR_DTYPE_INT2: return static_cast<int64_t>(code ^ 2) - 2;
    default: return code;
  }
}

inline std::vector<uint32_t> CodesOfInts(int32_t dtype, const std::vector<int64_t>& v) {
  std::vector<uint32_t> c;
  for (int64_t x : v) c.push_back(static_cast<uint32_t>(x));
  (void)dtype;
  return c;
}

inline Tensor Ints(int32_t dtype, const std::vector<int64_t>& v, std::vector<int64_t> shape) {
  return FromCodes(dtype, CodesOfInts(dtype, v), std::move(shape));
}
inline Tensor Ints(int32_t dtype, const std::vector<int64_t>& v) {
  return Ints(dtype, v, {static_cast<int64_t>(v.size())});
}
inline Tensor Scalar(int32_t dtype, int64_t v) { return Ints(dtype, {v}, {}); }

inline Tensor F32(const std::vector<float>& v, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = QLINEAR_DTYPE_FLOAT;
  t.shape = std::move(shape);
  t.bytes.resize(v.size() * 4);
  if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}
inline Tensor F32(const std::vector<float>& v) { return F32(v, {static_cast<int64_t>(v.size())}); }
inline Tensor ScalarF32(float v) { return F32({v}, {}); }


struct Result {
  qlinear_status status = QLINEAR_OK;
  std::string message;
  int32_t dtype = 0;
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> codes;
  std::vector<int64_t> ints() const {
    std::vector<int64_t> v;
    for (uint32_t c : codes) v.push_back(SignedValue(dtype, c));
    return v;
  }
  std::vector<float> floats() const {  // float32 outputs
    std::vector<float> v;
    for (uint32_t c : codes) v.push_back(FloatOf(c));
    return v;
  }
};

inline qlinear_quantize_attrs QAttrs(int opset = 0) {
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.opset = opset;
  return a;
}
inline qlinear_dequantize_attrs DQAttrs(int opset = 0) {
  qlinear_dequantize_attrs a;
  qlinear_dequantize_attrs_init(&a);
  a.opset = opset;
  return a;
}

inline Result Quantize(const Tensor& x, const Tensor& scale, const Tensor* zp,
                       const qlinear_quantize_attrs& attrs) {
  Result r;
  const qlinear_tensor cx = x.c(), cs = scale.c();
  qlinear_tensor cz{};
  if (zp) cz = zp->c();
  size_t bytes = 0;
  r.status = qlinear_quantize_output_info(&cx, &cs, zp ? &cz : nullptr, &attrs, &r.dtype, &bytes);
  if (r.status == QLINEAR_OK) {
    r.bytes.assign(bytes, 0xA5);
    r.status = qlinear_quantize_linear(&cx, &cs, zp ? &cz : nullptr, &attrs, r.bytes.data(), bytes);
  }
  if (r.status != QLINEAR_OK) {
    r.message = qlinear_last_error();
    return r;
  }
  r.codes = ToCodes(r.dtype, r.bytes, x.count());
  return r;
}
inline Result Quantize(const Tensor& x, const Tensor& scale, const Tensor& zp, int opset = 0) {
  return Quantize(x, scale, &zp, QAttrs(opset));
}

inline Result Dequantize(const Tensor& x, const Tensor& scale, const Tensor* zp,
                         const qlinear_dequantize_attrs& attrs) {
  Result r;
  const qlinear_tensor cx = x.c(), cs = scale.c();
  qlinear_tensor cz{};
  if (zp) cz = zp->c();
  size_t bytes = 0;
  r.status =
      qlinear_dequantize_output_info(&cx, &cs, zp ? &cz : nullptr, &attrs, &r.dtype, &bytes);
  if (r.status == QLINEAR_OK) {
    r.bytes.assign(bytes, 0xA5);
    r.status =
        qlinear_dequantize_linear(&cx, &cs, zp ? &cz : nullptr, &attrs, r.bytes.data(), bytes);
  }
  if (r.status != QLINEAR_OK) {
    r.message = qlinear_last_error();
    return r;
  }
  r.codes = ToCodes(r.dtype, r.bytes, x.count());
  return r;
}

}  // namespace test
}  // namespace qlinear

#endif  // QLINEAR_TESTS_TEST_UTIL_H_
