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
#include <utility>
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

inline void InitAttrs(qlinear_quantize_attrs* a) { qlinear_quantize_attrs_init(a); }
inline void InitAttrs(qlinear_dequantize_attrs* a) { qlinear_dequantize_attrs_init(a); }

// A QuantizeLinear or DequantizeLinear call: x, its scale along `axis` (blocks of `block`; 0:
// per tensor or per axis), a zero point if set, the other attributes at their defaults.
template <class Attrs>
struct Call {
  Tensor x, scale, zero_point;
  bool has_zero_point = false;
  Attrs attrs;
  Call() { InitAttrs(&attrs); }
  Call(Tensor x_in, Tensor scale_in, int64_t axis = 1, int64_t block = 0) : Call() {
    x = std::move(x_in);
    scale = std::move(scale_in);
    attrs.axis = axis;
    attrs.block_size = block;
  }
  void SetZeroPoint(Tensor z) {
    zero_point = std::move(z);
    has_zero_point = true;
  }
};
using QuantizeCall = Call<qlinear_quantize_attrs>;
using DequantizeCall = Call<qlinear_dequantize_attrs>;

inline qlinear_status OutputInfo(const qlinear_tensor* x, const qlinear_tensor* s, const qlinear_tensor* z,
                                 const qlinear_quantize_attrs* a, int32_t* y_type, size_t* y_bytes) {
  return qlinear_quantize_output_info(x, s, z, a, y_type, y_bytes);
}
inline qlinear_status OutputInfo(const qlinear_tensor* x, const qlinear_tensor* s, const qlinear_tensor* z,
                                 const qlinear_dequantize_attrs* a, int32_t* y_type, size_t* y_bytes) {
  return qlinear_dequantize_output_info(x, s, z, a, y_type, y_bytes);
}

// A call's C arguments (zp null without a zero point; it points into this object) and its
// output's type and bytes as the library reports them, or why it rejects the call.
template <class Attrs>
struct CArgs {
  qlinear_tensor x, s, z;
  const qlinear_tensor* zp;
  const Attrs* attrs;
  int32_t y_type = 0;
  size_t y_bytes = 0;
  std::string rejected;  // "" when accepted
  explicit CArgs(const Call<Attrs>& call)
      : x(call.x.c()), s(call.scale.c()), z(call.zero_point.c()), zp(call.has_zero_point ? &z : nullptr),
        attrs(&call.attrs) {
    if (OutputInfo(&x, &s, zp, attrs, &y_type, &y_bytes) != QLINEAR_OK) {
      rejected = std::string("rejected: ") + qlinear_last_error();
    }
  }
  CArgs(const CArgs&) = delete;
  CArgs& operator=(const CArgs&) = delete;
};

// The whole tensor through qlinear_quantize_linear into a red-zoned buffer at `misalign`,
// against the reference. "" when equal. `reference`, if given, receives the reference's output.
inline std::string CheckQuantize(const QuantizeCall& call, size_t misalign = 0,
                                 std::vector<uint8_t>* reference = nullptr) {
  const CArgs<qlinear_quantize_attrs> a(call);
  if (!a.rejected.empty()) return a.rejected;
  Buffer y(a.y_bytes, misalign);
  if (qlinear_quantize_linear(&a.x, &a.s, a.zp, a.attrs, y.data(), a.y_bytes) != QLINEAR_OK) {
    return std::string("failed: ") + qlinear_last_error();
  }
  if (!y.RedZonesIntact()) return "written outside the output";
  QuantizePlan plan;
  if (PlanQuantize(&a.x, &a.s, a.zp, a.attrs, &plan) != QLINEAR_OK) return "the reference's plan failed";
  std::vector<uint8_t> want(a.y_bytes);
  QuantizeReference(plan, want.data(), 0, call.x.count());
  std::string diff = FirstDifference(a.y_type, y.data(), want.data(), call.x.count());
  if (reference != nullptr) *reference = std::move(want);
  return diff;
}

// The backward pass of a QuantizeLinear call with gradient dy (x's shape) and factor lda, three
// ways: qlinear_quantize_linear_backward recomputing the clamp test, qlinear_quantize_linear_masked
// (y and the clamp mask), and the backward pass from that mask. dx and the mask against the
// reference, red zones around every output. "" when equal.
inline std::string CheckBackward(const QuantizeCall& call, const Tensor& dy, float lda, size_t misalign = 0) {
  const CArgs<qlinear_quantize_attrs> a(call);
  if (!a.rejected.empty()) return a.rejected;
  const qlinear_tensor tdy = dy.c();
  const int64_t n = call.x.count();
  const size_t dx_bytes = StorageOf(dy.dtype, n), mask_bytes = static_cast<size_t>((n + 7) / 8);
  Buffer dx(dx_bytes, misalign), y(a.y_bytes, misalign), mask(mask_bytes, misalign), dx_masked(dx_bytes, misalign);
  if (qlinear_quantize_linear_backward(&a.x, &a.s, a.zp, a.attrs, &tdy, lda, nullptr, 0, dx.data(), dx_bytes) !=
      QLINEAR_OK) {
    return std::string("backward failed: ") + qlinear_last_error();
  }
  if (qlinear_quantize_linear_masked(&a.x, &a.s, a.zp, a.attrs, y.data(), a.y_bytes, mask.data(), mask_bytes) !=
      QLINEAR_OK) {
    return std::string("masked failed: ") + qlinear_last_error();
  }
  if (qlinear_quantize_linear_backward(&a.x, &a.s, a.zp, a.attrs, &tdy, lda, mask.data(), mask_bytes,
                                       dx_masked.data(), dx_bytes) != QLINEAR_OK) {
    return std::string("backward from the mask failed: ") + qlinear_last_error();
  }
  for (const Buffer* b : {&dx, &y, &mask, &dx_masked}) {
    if (!b->RedZonesIntact()) return "written outside an output";
  }
  QuantizePlan plan;
  if (PlanQuantize(&a.x, &a.s, a.zp, a.attrs, &plan) != QLINEAR_OK) return "the reference's plan failed";
  std::vector<uint8_t> want_dx(dx_bytes), want_mask(mask_bytes), want_y(a.y_bytes);
  BackwardArgs b;
  b.dy_type = static_cast<DType>(dy.dtype);
  b.dy = dy.bytes.data();
  b.lda = lda;
  b.dx = want_dx.data();
  b.mask_out = want_mask.data();
  BackwardReference(plan, b, 0, n);
  QuantizeReference(plan, want_y.data(), 0, n);
  std::string diff = FirstDifference(dy.dtype, dx.data(), want_dx.data(), n);
  if (!diff.empty()) return "dx: " + diff;
  if (std::memcmp(mask.data(), want_mask.data(), mask_bytes) != 0) return "clamp mask differs";
  if (!(diff = FirstDifference(a.y_type, y.data(), want_y.data(), n)).empty()) return "masked y: " + diff;
  if (!(diff = FirstDifference(dy.dtype, dx_masked.data(), want_dx.data(), n)).empty()) return "dx from the mask: " + diff;
  return "";
}

// Elements [first, first + count) (count < 0: the whole tensor through the plain entry point)
// through the API into a red-zoned buffer at `misalign`, against the reference. "" when equal.
inline std::string CheckDequantize(const DequantizeCall& call, int64_t first = 0, int64_t count = -1,
                                   size_t misalign = 0) {
  const CArgs<qlinear_dequantize_attrs> a(call);
  if (!a.rejected.empty()) return a.rejected;
  const int64_t n = call.x.count();
  const bool range = count >= 0;
  if (!range) count = n;
  const size_t bytes = StorageOf(a.y_type, count);
  Buffer y(bytes, misalign);
  qlinear_status st;
  if (range) {
    qlinear_tensor slice = a.x;
    slice.data = call.x.bytes.data() + ByteOffsetOf(a.x.dtype, first);
    st = qlinear_dequantize_linear_range(&slice, &a.s, a.zp, a.attrs, first, count, y.data(), bytes);
  } else {
    st = qlinear_dequantize_linear(&a.x, &a.s, a.zp, a.attrs, y.data(), bytes);
  }
  if (st != QLINEAR_OK) return std::string("failed: ") + qlinear_last_error();
  if (!y.RedZonesIntact()) return "written outside the output";
  DequantizePlan plan;
  if (PlanDequantize(&a.x, &a.s, a.zp, a.attrs, &plan) != QLINEAR_OK) return "the reference's plan failed";
  std::vector<uint8_t> want(StorageOf(a.y_type, n) + 1);
  DequantizeReference(plan, want.data(), 0, n);
  return FirstDifference(a.y_type, y.data(), want.data() + ByteOffsetOf(a.y_type, first), count);
}

}  // namespace harness
}  // namespace qlinear

#endif  // QLINEAR_TESTS_HARNESS_H_
