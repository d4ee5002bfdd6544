// The execution side: one dispatch per API call into the best target's driver, which walks
// the whole plan. Plans reaching here are valid; nothing here can fail.
#ifndef QLINEAR_LIB_KERNELS_H_
#define QLINEAR_LIB_KERNELS_H_

#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>

#include "plan.h"
#include "qlinear/qlinear.h"

namespace qlinear {

// Scales (already rounded to the division precision) and zero points, decoded once per call:
// one entry for per-tensor plans, the window of scale indices the call uses otherwise.
struct QuantParams {
  const float* scales = nullptr;
  const float* recips = nullptr;  // 1/scales when every one is a normal float32, else null
  const int32_t* zps = nullptr;   // null: every zero point is 0 (DequantizeLinear without one, or of float8/float4)
  // With recips: every scale is a power of two, so x * recips[k] is exactly fl(x / scales[k])
  // (both round the same real number once): codes from the product, no boundary test.
  bool exact_products = false;
  // zps[k] + FixedPoint::kOffset as float, for the reciprocal path of <= 8-bit integer outputs
  // (encode-inl.h IntEncoder::ZeroOffset), when there are recips and more than one zero point;
  // else null.
  const float* offsets = nullptr;
  int64_t first = 0;  // scales[0] (recips[0], zps[0], offsets[0]) is the one of scale index `first`
  // DequantizeLinear: every |scale| < 2^100, so a decoder's power of two (up to 2^27) can be
  // multiplied into a scale without overflow (dequantize-inl.h MiniFloatDecoder::kFoldShift).
  bool moderate_scales = false;
  // DequantizeLinear: no (x - zp) * scale is a float32 subnormal (every nonzero |x - zp| times
  // every nonzero |scale| is at least 2^-126), so the AVX-512 bfloat16 conversion in hardware,
  // which flushes subnormals to zero, needs no per-vector check (dequantize-inl.h StoreGroup).
  bool normal_products = false;
  // DequantizeLinear: with normal_products, every (x - zp) * scale is a bfloat16 value (its
  // significant bits, those of |x - zp| plus those of the scale, fit in bfloat16's 8), so the
  // bfloat16 stores keep the upper halves without rounding (dequantize-inl.h StoreTwoBF16):
  // float8/float4 codes or byte integers with power-of-two scales (float8e8m0: MX), say.
  bool bf16_products = false;
  bool vector = false;  // false: the plan runs through the scalar reference
};

// Statistics that QuantizeLinear's loops compute alongside the runs they quantize (dynamic
// quantization: the next chunk's largest |x| while this chunk is quantized, from the same loop,
// so that their loads overlap its arithmetic). A run of one scale (index k) at elements
// [start, start + count) with start + distance + count <= end also combines the largest |x| of
// x[start + distance, start + distance + count) (float32 bits; NaN/Inf give >= 0x7F800000) by
// max into amax[k + groups_ahead - g_first]. A run of blocks (RunKind::kBlocks) does the same
// per block, up to end (quantize-inl.h BlockSide). With `neg`, x's and -x's largest keys go to
// amax and neg (MINMAX) instead.
struct SideStats {
  int64_t distance = 0;
  int64_t end = 0;
  int64_t groups_ahead = 0;
  int64_t g_first = 0;
  uint32_t* amax = nullptr;
  uint32_t* neg = nullptr;
  // Prefetch the side runs 4 KB ahead (x beyond the last-level cache, where the loop otherwise
  // waits on memory).
  bool prefetch = false;
  // Every element of the plan is finite and its x * r + zp lies within 2^-15 of [qmin - 0.5, qmax + 0.5]
  // (a dynamic quantization's chunk, checked with its statistics): integer codes need no clamp.
  bool in_range = false;
};

// Whether this CPU converts float32 to bfloat16 in hardware (x86 AVX512_BF16's VCVTNE2PS2BF16),
// for the AVX-512 bfloat16 stores (dequantize-inl.h StoreTwoBF16). Set by a static initializer
// from CPUID; false (the integer rounding: the same bytes) before it runs. Tests clear it to
// reach the integer rounding on such CPUs.
extern bool g_cpu_converts_bf16;

// Which plans have a vector path (the rest run through the reference on every target).
bool VectorQuantizeSupported(const QuantizePlan& p);
bool VectorDequantizeSupported(const DequantizePlan& p);


// A plan run as pieces of `per_task` elements (a multiple of 64) through a parallel-for of the
// C ABI's qlinear_parallel_for_fn shape. Scales are decoded once for all pieces.
struct TaskSplit {
  int64_t per_task = 0;
  void (*parallel_for)(void* context, int64_t count, void (*task)(void*, int64_t), void* task_context) = nullptr;
  void* context = nullptr;

  // parallel_for over task(task_context, i), i in [0, count), count <= QLINEAR_MAX_THREADS; throws
  // RunnerFailed if the runner threw or returned before every index had run (parallel.cc).
  void Run(int64_t count, void (*task)(void*, int64_t), void* task_context) const;
};

// A caller's parallel_for broke its contract (qlinear.h): the call ends with
// QLINEAR_INTERNAL_ERROR and this message.
class RunnerFailed : public std::exception {
 public:
  explicit RunnerFailed(const char* message) { std::snprintf(what_, sizeof(what_), "%s", message); }
  const char* what() const noexcept override { return what_; }

 private:
  char what_[320];
};

// Computes p's elements [p.begin, p.end) into y (which points at element p.begin), on the
// calling thread, or split into tasks when `split` is given.
void ExecuteQuantize(const QuantizePlan& p, void* y, const TaskSplit* split = nullptr);
// QuantizeLinear with float32 division precision has two exact paths: divide, or multiply by
// 1/scale and divide only near rounding boundaries (encode-inl.h). kAuto: the environment's
// QLINEAR_QUANTIZE_PATH (division|reciprocal) if set, else the target's own choice (the
// reciprocal path on vector targets). Tests and the benchmark force one; process-wide, not while
// other threads quantize.
enum class QuantizePath { kAuto, kDivision, kReciprocal };
void SetQuantizePathForTest(QuantizePath path);
bool ReciprocalPathChosen();  // what a call made now would use (float32 precision)
void ExecuteDequantize(const DequantizePlan& p, void* y, const TaskSplit* split = nullptr);
// Training: clamp mask and/or dx (reference.h BackwardArgs).
struct BackwardArgs;
void ExecuteBackward(const QuantizePlan& p, const BackwardArgs& b);
// The same in two steps, for a call that also writes y: the parameters decoded first (this
// allocates, before any output is written; null where the pass is scalar), then the pass, which
// allocates nothing.
class DecodedParams;
std::unique_ptr<DecodedParams> DecodeBackwardParams(const QuantizePlan& p);
void ExecuteBackward(const QuantizePlan& p, const BackwardArgs& b, const DecodedParams* d);
// DynamicQuantizeLinear: range pass, then a per-tensor quantize pass.
void ExecuteDynamicQuantize(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zp);

// What ComputeReciprocals found: every 1/s a normal float32 (the reciprocal path's condition),
// and every s a power of two besides (then x * (1/s) is exactly fl(x / s): no boundary test).
struct ReciprocalFacts {
  bool normal = true;
  bool powers_of_two = true;
};

// r[k] = 1 / s[k] for k < n, the vector form (dispatched; worth it from about 64 scales).
ReciprocalFacts VectorReciprocals(const float* s, int64_t n, float* r);

// The same for k in [k0, n), one at a time (few scales, and the vector form's tail).
inline ReciprocalFacts ScalarReciprocals(const float* s, int64_t k0, int64_t n, float* r) {
  ReciprocalFacts f;
  for (int64_t k = k0; k < n; ++k) {
    r[k] = 1.0f / s[k];
    f.normal = f.normal && std::isnormal(r[k]);
    uint32_t bits;
    std::memcpy(&bits, &s[k], 4);
    f.powers_of_two = f.powers_of_two && (bits & 0x7FFFFFu) == 0;
  }
  return f;
}

// r[k] = 1 / s[k] for k < n: inline for the few scales of most calls, vector form for many.
inline ReciprocalFacts ComputeReciprocals(const float* s, int64_t n, float* r) {
  return n < 64 ? ScalarReciprocals(s, 0, n, r) : VectorReciprocals(s, n, r);
}

// The exponent field of 2^99, shifted into place: |s| < 2^100 iff s's is not above it.
constexpr uint32_t kModerateExponentBits = (127u + 99u) << 23;

// Whether every s[k] (k < n) is finite, whether one is zero (DequantizeLinear's NaN check,
// params.h ForDequantize), whether every |s[k]| < 2^100 (QuantParams::moderate_scales), and the
// smallest exponent field of the nonzero scales (0xFF if none; QuantParams::normal_products),
// and the OR of their 23 fraction bits (QuantParams::bf16_products); vector form for many scales.
struct ScaleFacts {
  bool finite = true;
  bool zero = false;
  bool moderate = true;
  uint32_t min_field = 0xFF;
  uint32_t fractions = 0;
};
ScaleFacts VectorScaleFacts(const float* s, int64_t n);  // dispatched

// The same for k in [k0, n), one at a time, on the bits (no early exit: the loop vectorizes).
inline ScaleFacts ScalarScaleFacts(const float* s, int64_t k0, int64_t n) {
  uint32_t nonfinite = 0, zero = 0, large = 0, min_field = 0x7F800000u, fractions = 0;
  for (int64_t k = k0; k < n; ++k) {
    uint32_t bits;
    std::memcpy(&bits, &s[k], 4);
    const uint32_t field = bits & 0x7F800000u;
    nonfinite |= field == 0x7F800000u;
    zero |= (bits & 0x7FFFFFFFu) == 0;
    large |= field > kModerateExponentBits;
    const uint32_t key = (bits & 0x7FFFFFFFu) == 0 ? 0x7F800000u : field;
    min_field = key < min_field ? key : min_field;
    fractions |= bits & 0x7FFFFFu;
  }
  ScaleFacts f;
  f.finite = nonfinite == 0;
  f.zero = zero != 0;
  f.moderate = large == 0;
  f.min_field = min_field >> 23;
  f.fractions = fractions;
  return f;
}
inline ScaleFacts ComputeScaleFacts(const float* s, int64_t n) {
  return n < 64 ? ScalarScaleFacts(s, 0, n) : VectorScaleFacts(s, n);
}

// The float32 values of the float16, bfloat16 or float8e8m0 scales src[0 .. n), a vector at a
// time (DecodeScales' decoding, params.cc): returns how many it wrote, a multiple of the lane
// count; the rest are the caller's. 0 for any other type. Dispatched.
int64_t VectorDecodeScales(DType t, const void* src, int64_t n, float* s);

// The int32 values of the integer zero points src[0 .. n) of type t (8 or 16 bits; 4- or 2-bit
// fields from a byte boundary), and the float32 sums z[k] + add, a vector at a time: return
// how many they wrote (a multiple of the lane count; for packed types whole bytes), the rest
// are the caller's. Dispatched.
int64_t VectorWidenZeroPoints(DType t, const void* src, int64_t n, int32_t* z);
int64_t VectorZeroOffsets(const int32_t* z, int64_t n, float add, float* o);

// OK, or the failure of an execution setting from the environment: QLINEAR_TARGET not a
// target this build and CPU can run (every call that computes), QLINEAR_QUANTIZE_PATH not one
// of its values (calls that quantize). Sets the thread's message.
qlinear_status ExecutionSettingsStatus(bool quantizes);
// Pins qlinear's dispatch to the target named (qlinear_set_target); NULL or "" unpins.
qlinear_status PinTarget(const char* name);
// Space-separated names of the targets in a Highway bit mask, best first.
const char* TargetNames(int64_t mask, char (&buf)[256]);

// Name of the target a call made now would run on, its Highway bit, and its float32 lanes.
const char* ActiveTargetName();
int64_t DispatchedTarget();
int64_t DispatchedLanesF32();
// Highway target bits compiled into the library, and those of them this CPU (or a test's
// hwy::SetSupportedTargetsForTest) allows.
int64_t CompiledTargetMask();
int64_t SupportedTargetMask();

}  // namespace qlinear

#endif  // QLINEAR_LIB_KERNELS_H_
