// Dynamic quantization (qlinear.h "Dynamic quantization"): per-group scales computed from the
// data, then QuantizeLinear with them. The plan is a QuantizeLinear-25 plan (saturate 1,
// precision float32) plus the rule's facts; every output byte comes from the library's own
// QuantizeLinear execution, so y equals qlinear_quantize_linear with the scales written.
#ifndef QLINEAR_LIB_DYNAMIC_H_
#define QLINEAR_LIB_DYNAMIC_H_

#include <stdint.h>

#include "dtype.h"
#include "kernels.h"
#include "plan.h"
#include "qlinear/qlinear.h"

namespace qlinear {

enum class Rule : uint8_t { kAbsMax = 1, kMinMax = 2, kMx = 3, kPow2Ceil = 4 };

// A rule applied to an output type: the facts of the table (from dtype.h/minifloat.h).
struct RuleFacts {
  Rule rule = Rule::kAbsMax;
  DType y_type = DType::kInt8, scale_type = DType::kFloat32;
  float p = 127.0f;           // largest positive value of y_type
  int32_t qmin = 0, qmax = 0;  // integer outputs (MINMAX)
  int emax = 6;               // floor(log2 p)
};
RuleFacts FactsFor(Rule rule, DType y_type, DType scale_type);

// One group's scale: its exact value as float32 (NaN for e8m0's 0xFF), its code in scale_type
// (float32 bits, float16/bfloat16 bits, e8m0 byte) and the zero point (MINMAX, else 0).
struct GroupScale {
  float value;
  uint32_t code;
  int32_t zero_point;
};

// A group's statistics as the kernels produce them: float32 bits of non-negative values, so
// that integer max combines them. Symmetric rules: s0 = amax (bits >= 0x7F800000: the group
// holds NaN/Inf, unless finite-only keys were used). MINMAX: s0 = -lo, s1 = hi.
constexpr uint32_t kNonFiniteBits = 0x7F800000u;

// The scalar reference of the formulas in double (the oracle): lo <= 0 <= hi over the
// group's finite elements, nonfinite = the group holds NaN or +-Inf.
GroupScale ReferenceGroupScale(const RuleFacts& f, double lo, double hi, bool nonfinite);
// The same from kernel statistics, on the fast path (identical results; tested against the
// reference). s1 is ignored for the symmetric rules.
GroupScale GroupScaleFromStats(const RuleFacts& f, uint32_t s0, uint32_t s1);

// Which keys the statistics kernel uses (dynamic-inl.h).
enum class StatKind : uint8_t {
  kAbs,            // s0 = max |x| bits (NaN/Inf show as >= kNonFiniteBits)
  kAbsFinite,      // the same over finite elements only
  kMinMax,         // s0 = max(0, -min x), s1 = max(0, max x) bits (NaN/Inf show as above)
  kMinMaxFinite,   // over finite elements only
};

struct DynamicPlan {
  QuantizePlan q;  // QuantizeLinear-25 with the scales written (x, layout, types)
  RuleFacts facts;
  int64_t groups = 0;         // scale elements
  uint64_t scale_bytes = 0;   // y_scale's bytes
  uint64_t zp_bytes = 0;      // y_zero_point's bytes (0 unless MINMAX)
  // Units: the smallest runs of whole groups that are contiguous in memory. One-pass layouts
  // (blocks; per axis with nothing before the axis) are cut into chunks of units, each
  // computed and quantized while in cache; the others are one unit (two passes).
  bool one_pass = false;
  int64_t units_per_outer = 1;  // blocks (or indices) along the axis per outer index
  int64_t unit_rows = 1;        // axis indices per unit: block_size, or 1 per axis
  int64_t groups_per_unit = 1;  // inner for blocks, 1 per axis
};

// Reads attrs over the defaults and checks every rule that does not involve x; resolves
// scale_dtype 0 to the rule's default.
qlinear_status ReadDynamicAttrs(const qlinear_dynamic_attrs* in, qlinear_dynamic_attrs* out);
// The QuantizeLinear attributes that reproduce the dynamic quantization (qlinear.h).
void QuantizeAttrsFor(const qlinear_dynamic_attrs& a, qlinear_quantize_attrs* q);

// Validates x and attrs (not the output buffers) and builds the plan. need_data: x->data must
// be non-NULL when x has elements (false for qlinear_dynamic_scales with ranges).
qlinear_status PlanDynamic(const qlinear_tensor* x, const qlinear_dynamic_attrs* attrs,
                           bool need_data, DynamicPlan* plan);
// y_scale and y_zero_point against the plan (the rule decides whether a zero point is taken).
qlinear_status CheckScaleOutputs(const DynamicPlan& p, const void* y_scale, size_t y_scale_bytes,
                                 const void* y_zero_point, size_t y_zero_point_bytes);
// ranges: non-NULL, ranges_bytes >= 8 * groups; with `values`, every entry >= 0 and not NaN.
qlinear_status CheckRanges(const DynamicPlan& p, const float* ranges, size_t ranges_bytes,
                           bool values);

struct DynamicOutputs {
  void* y = nullptr;  // nullptr: scales only
  void* scale = nullptr;
  void* zero_point = nullptr;
};

// Writes group g's scale code and zero point into the outputs. Sub-byte zero points: the first
// group of a byte writes the whole byte (padding zero), later ones OR into it, so callers write
// groups in increasing order and start every range of groups on a byte boundary.
void StoreGroupScale(const DynamicPlan& p, const GroupScale& s, int64_t g, const DynamicOutputs& out);
// Zero points of groups [g0, g0 + n), the same way.
void StoreZeroPoints(const DynamicPlan& p, const int32_t* z, int64_t g0, int64_t n, const DynamicOutputs& out);

// Execution (kernels_dynamic.cc): the whole plan, or split into tasks on group boundaries.
void ExecuteDynamic(const DynamicPlan& p, const DynamicOutputs& out, const TaskSplit* split);
// qlinear_dynamic_ranges: x points at element `first`.
void ExecuteDynamicRanges(const DynamicPlan& p, int64_t first, int64_t count, const void* x,
                          float* ranges);
// qlinear_dynamic_scales from ranges.
void ScalesFromRanges(const DynamicPlan& p, const float* ranges, const DynamicOutputs& out);

// The fields z[0, n) & (2^bits - 1) of 4- or 2-bit zero points packed into whole bytes at dst
// (field k of a byte at bits [bits k, bits (k + 1))), a vector at a time: returns how many it
// packed (a multiple of the lane count times 8 / bits), the rest are the caller's. Dispatched.
int64_t VectorPackZeroPoints(int bits, const int32_t* z, int64_t n, uint8_t* dst);

// Statistics of elements [begin, end) of layout l into s0/s1 (indexed by scale index - g_first,
// combined by max with what they hold); x points at element `begin`. Dispatched per call.
void GroupStats(StatKind kind, const Layout& l, int64_t begin, int64_t end, DType x_type,
                const void* x, int64_t g_first, uint32_t* s0, uint32_t* s1);

// GroupStats's arguments as a job that runs alongside a QuantizeLinear execution.
struct StatsJob {
  StatKind kind = StatKind::kAbs;
  const Layout* layout = nullptr;
  int64_t begin = 0, end = 0;  // elements
  DType x_type = DType::kFloat32;
  const void* x = nullptr;  // element `begin`
  int64_t g_first = 0;
  uint32_t* s0 = nullptr;
  uint32_t* s1 = nullptr;
};
// ExecuteQuantize(p, y) on the calling thread with `job` done too (kernels.cc): inside the
// quantize loop where it can (per row, blocks along the last axis: SideStats), so that the
// job's loads overlap the quantize arithmetic, else after the execution. in_range: SideStats's.
void ExecuteQuantizeWithStats(const QuantizePlan& p, void* y, const StatsJob& job, bool in_range);

// The whole computation from the definitions, element by element: statistics through
// ScaleIndex, ReferenceGroupScale, QuantizeReference with the scales written. The oracle of the
// tests and the benchmark's reference row.
void QuantizeDynamicReference(const DynamicPlan& p, const DynamicOutputs& out);

}  // namespace qlinear

#endif  // QLINEAR_LIB_DYNAMIC_H_
