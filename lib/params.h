// Scales and zero points decoded once per call for the vector kernels (kernels.h QuantParams).
#ifndef QLINEAR_LIB_PARAMS_H_
#define QLINEAR_LIB_PARAMS_H_

#include <stdint.h>

#include <memory>

#include "kernels.h"
#include "plan.h"

namespace qlinear {

// What a call's kernels read: QuantizeLinear by division (and the backward pass), QuantizeLinear
// on the reciprocal path (also 1/scale, and zero offsets), or DequantizeLinear (no zero points
// when none is given, nor for float8/float4 inputs: QuantParams::zps null).
enum class ParamsFor { kDivision, kReciprocal, kDequantize };

// n elements of T, grown on demand (to exactly what is asked: the calls' group counts).
template <class T>
struct GroupArray {
  std::unique_ptr<T[]> data;
  int64_t capacity = 0;
  T* Reserve(int64_t n) {  // may throw std::bad_alloc
    if (n > capacity) {
      data.reset(new T[static_cast<size_t>(n)]);
      capacity = n;
    }
    return data.get();
  }
};

// Per-group buffers for DecodedParams. A caller's (QuantizePlan::workspace), reserved for as
// many groups as its calls decode, makes them allocate nothing. Without one, DecodedParams
// takes one of its thread's (at most kThreadWorkspaces of them, kept between calls) and gives
// it back when it is destroyed, on whatever thread that is.
struct ParamsWorkspace {
  GroupArray<float> scales, recips, offsets;
  GroupArray<int32_t> zps;
  void Reserve(int64_t groups);  // every array; may throw std::bad_alloc
  int64_t Bytes() const;
};

// The arrays a call's DecodedParams decodes n groups into (none for n = 1: its own members).
struct ArraysNeeded {
  bool scales = false, zps = false, recips = false, offsets = false;
  int64_t n = 0;
  bool FitIn(const ParamsWorkspace& w) const {
    return (!scales || w.scales.capacity >= n) && (!zps || w.zps.capacity >= n) &&
           (!recips || w.recips.capacity >= n) && (!offsets || w.offsets.capacity >= n);
  }
  bool Any() const { return scales || zps || recips || offsets; }
};
ArraysNeeded ArraysFor(int64_t n, DType scale_type, const void* scale, DType zp_type, const void* zp, Prec prec,
                       ParamsFor use);

// The calling thread's workspace (or, beyond its size, a new one) held by a call that runs in
// pieces on that thread (run_plan.h RunInWindowPieces), the arrays its pieces need reserved up
// front for the largest piece: no piece allocates once outputs are being written. get() is null
// when they need none. The constructor may throw std::bad_alloc.
class CallWorkspace {
 public:
  explicit CallWorkspace(const ArraysNeeded& need);
  ~CallWorkspace();
  CallWorkspace(const CallWorkspace&) = delete;
  CallWorkspace& operator=(const CallWorkspace&) = delete;
  ParamsWorkspace* get() { return used_ ? &ws_ : nullptr; }

 private:
  ParamsWorkspace ws_;
  bool used_ = false, give_back_ = false;
};

// Scales rounded to the division precision as float32; zero points as the encoders take them
// (integers as int32; float4e2m1 as its float32 bits, an absent one as -0.0 so that every sum,
// -0 included, is unchanged; float8: zero). For the reciprocal path, also 1/scale (kernels.h),
// unless one of them is not a normal float32. Only the scales that elements [begin, end) use are
// decoded (ScaleWindow); float32 scales in float32 precision are used in place. Per-tensor plans
// use the members below: no heap.
class DecodedParams {
 public:
  DecodedParams(const Layout& l, int64_t begin, int64_t end, DType scale_type, const void* scale,
                DType zp_type, const void* zp, Prec prec, ParamsFor use, ParamsWorkspace* ws = nullptr);
  ~DecodedParams();
  DecodedParams(const DecodedParams&) = delete;
  DecodedParams& operator=(const DecodedParams&) = delete;
  const QuantParams& params() const { return prm_; }

  // The vector kernels' NaNs must follow the NaN rule of qlinear.h by themselves; where they
  // would not, the call runs through the scalar reference, which applies it. DequantizeLinear:
  // x * s can only be NaN by a NaN x (a single NaN operand keeps its sign on every CPU) when
  // every scale is finite, and nonzero for float8e5m2 x (Inf * 0); then ForDequantize gives
  // params() with moderate_scales set, else the reference's (QuantParams(), vector = false).
  // Backward: dy * (lda / s) likewise when every lda / s is finite and nonzero.
  QuantParams ForDequantize(DType x_type) const;
  bool GradientFactorsExact(float lda) const;

 private:
  int64_t n_ = 1;  // scales (and zero points) decoded
  ParamsWorkspace own_;  // the arrays when the caller gave none (taken from the thread's)
  bool give_back_ = false;  // own_ goes to the destroying thread's workspaces
  float scale0_ = 1.0f;
  int32_t zp0_ = 0;
  float recip0_ = 1.0f;
  QuantParams prm_;
};

}  // namespace qlinear

#endif  // QLINEAR_LIB_PARAMS_H_
