// A call into the C ABI next to the scalar reference: build the tensors and attributes, call,
// compare bit for bit, check the red zones around the output. Shared by the unit tests,
// `qlinear selftest`, the fuzzers and the benchmark; no test framework here (a check returns
// "" or the first difference, in words).
#ifndef QLINEAR_TESTS_HARNESS_H_
#define QLINEAR_TESTS_HARNESS_H_

#include <stdint.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lib/dtype.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

namespace qlinear {
namespace harness {

// Bytes with room for a misaligned start and red zones of sentinel bytes on both sides.
class Buffer {
 public:
  static constexpr size_t kRedZone = 64;
  static constexpr uint8_t kSentinel = 0xCD;
  Buffer(size_t bytes, size_t misalign)
      : mem_(bytes + 2 * kRedZone + 8, kSentinel), offset_(kRedZone + misalign % 8), size_(bytes) {}
  uint8_t* data() { return mem_.data() + offset_; }
  const uint8_t* data() const { return mem_.data() + offset_; }
  size_t size() const { return size_; }
  bool RedZonesIntact() const {
    for (size_t i = 0; i < offset_; ++i) {
      if (mem_[i] != kSentinel) return false;
    }
    for (size_t i = offset_ + size_; i < mem_.size(); ++i) {
      if (mem_[i] != kSentinel) return false;
    }
    return true;
  }

 private:
  std::vector<uint8_t> mem_;
  size_t offset_, size_;
};

// A dense tensor of any type (packed for sub-byte types).
struct Tensor {
  int32_t dtype = QLINEAR_DTYPE_FLOAT;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  qlinear_tensor c() const {
    return qlinear_tensor{dtype, static_cast<int32_t>(shape.size()), shape.data(), bytes.empty() ? nullptr : bytes.data()};
  }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

inline size_t StorageOf(int32_t dtype, int64_t n) {
  return static_cast<size_t>(StorageBytes(static_cast<DType>(dtype), static_cast<uint64_t>(n)));
}

// Elements of a byte range of a packed or plain tensor: `first` must start a byte.
inline size_t ByteOffsetOf(int32_t dtype, int64_t first) {
  const int bits = FindDType(dtype)->bits;
  return static_cast<size_t>(first) * static_cast<size_t>(bits) / 8;
}

// Where two outputs of `dtype` first differ, in words ("" when equal); n elements.
inline std::string FirstDifference(int32_t dtype, const uint8_t* got, const uint8_t* want, int64_t n) {
  const size_t bytes = StorageOf(dtype, n);
  for (size_t i = 0; i < bytes; ++i) {
    if (got[i] != want[i]) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "%s output byte %zu of %zu: got 0x%02x, want 0x%02x", qlinear_dtype_name(dtype),
                    i, bytes, got[i], want[i]);
      return buf;
    }
  }
  return "";
}

// A QuantizeLinear call: x, its scale and (if has_zero_point) zero point, attributes.
struct QuantizeCall {
  Tensor x, scale, zero_point;
  bool has_zero_point = false;
  qlinear_quantize_attrs attrs;
  QuantizeCall() { qlinear_quantize_attrs_init(&attrs); }
};

// The whole tensor through qlinear_quantize_linear into a red-zoned buffer at `misalign`,
// against the reference. "" when equal. `reference`, if given, receives the reference's output.
inline std::string CheckQuantize(const QuantizeCall& call, size_t misalign = 0,
                                 std::vector<uint8_t>* reference = nullptr) {
  const qlinear_tensor x = call.x.c(), s = call.scale.c(), z = call.zero_point.c();
  const qlinear_tensor* zp = call.has_zero_point ? &z : nullptr;
  int32_t y_type = 0;
  size_t bytes = 0;
  if (qlinear_quantize_output_info(&x, &s, zp, &call.attrs, &y_type, &bytes) != QLINEAR_OK) {
    return std::string("rejected: ") + qlinear_last_error();
  }
  Buffer y(bytes, misalign);
  if (qlinear_quantize_linear(&x, &s, zp, &call.attrs, y.data(), bytes) != QLINEAR_OK) {
    return std::string("failed: ") + qlinear_last_error();
  }
  if (!y.RedZonesIntact()) return "written outside the output";
  QuantizePlan plan;
  if (PlanQuantize(&x, &s, zp, &call.attrs, &plan) != QLINEAR_OK) return "the reference's plan failed";
  std::vector<uint8_t> want(bytes);
  QuantizeReference(plan, want.data(), 0, call.x.count());
  std::string diff = FirstDifference(y_type, y.data(), want.data(), call.x.count());
  if (reference != nullptr) *reference = std::move(want);
  return diff;
}

// A DequantizeLinear call: x, its scale and (if has_zero_point) zero point, attributes.
struct DequantizeCall {
  Tensor x, scale, zero_point;
  bool has_zero_point = false;
  qlinear_dequantize_attrs attrs;
  DequantizeCall() { qlinear_dequantize_attrs_init(&attrs); }
};

// Elements [first, first + count) (count < 0: the whole tensor through the plain entry point)
// through the API into a red-zoned buffer at `misalign`, against the reference. "" when equal.
inline std::string CheckDequantize(const DequantizeCall& call, int64_t first = 0, int64_t count = -1,
                                   size_t misalign = 0) {
  const qlinear_tensor x = call.x.c(), s = call.scale.c(), z = call.zero_point.c();
  const qlinear_tensor* zp = call.has_zero_point ? &z : nullptr;
  int32_t y_type = 0;
  size_t whole_bytes = 0;
  if (qlinear_dequantize_output_info(&x, &s, zp, &call.attrs, &y_type, &whole_bytes) != QLINEAR_OK) {
    return std::string("rejected: ") + qlinear_last_error();
  }
  const int64_t n = call.x.count();
  const bool range = count >= 0;
  if (!range) count = n;
  const size_t bytes = StorageOf(y_type, count);
  Buffer y(bytes, misalign);
  qlinear_status st;
  if (range) {
    qlinear_tensor slice = x;
    slice.data = call.x.bytes.data() + ByteOffsetOf(x.dtype, first);
    st = qlinear_dequantize_linear_range(&slice, &s, zp, &call.attrs, first, count, y.data(), bytes);
  } else {
    st = qlinear_dequantize_linear(&x, &s, zp, &call.attrs, y.data(), bytes);
  }
  if (st != QLINEAR_OK) return std::string("failed: ") + qlinear_last_error();
  if (!y.RedZonesIntact()) return "written outside the output";
  DequantizePlan plan;
  if (PlanDequantize(&x, &s, zp, &call.attrs, &plan) != QLINEAR_OK) return "the reference's plan failed";
  std::vector<uint8_t> want(StorageOf(y_type, n) + 1);
  DequantizeReference(plan, want.data(), 0, n);
  return FirstDifference(y_type, y.data(), want.data() + ByteOffsetOf(y_type, first), count);
}

}  // namespace harness
}  // namespace qlinear

#endif  // QLINEAR_TESTS_HARNESS_H_
