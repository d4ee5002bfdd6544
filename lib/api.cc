// The C ABI: validate (plan), check the output, execute. Nothing throws across this boundary (a
// thread that a caller's runner cancels or ends unwinds through it).
#include <cxxabi.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "hwy/targets.h"

#include "dtype.h"
#include "dynamic.h"
#include "error.h"
#include "fpenv.h"
#include "kernels.h"
#include "parallel.h"
#include "params.h"
#include "plan.h"
#include "qlinear/qlinear.h"
#include "reference.h"

#ifndef QLINEAR_VERSION_STRING
#define QLINEAR_VERSION_STRING "0.0.0"
#endif

namespace qlinear {
namespace {

// Runs a call body in the default floating-point environment (fpenv.h: validation rounds and
// decodes in floating point too), mapping any escaping exception to a status (none is
// expected: the library does not allocate on its validated paths except where noted, and never
// throws).
template <class Body>
qlinear_status Guarded(Body&& body) {
  const FpEnvGuard fp_env;
  try {
    const qlinear_status s = body();
    if (s == QLINEAR_OK) ClearError();
    return s;
  } catch (const RunnerFailed& e) {
    return Fail(QLINEAR_INTERNAL_ERROR, "%s", e.what());
  } catch (const std::bad_alloc&) {
    return Fail(QLINEAR_OUT_OF_MEMORY, "out of memory");
  } catch (abi::__forced_unwind&) {
    throw;  // a caller's runner cancelled or ended the calling thread: let it end
  } catch (...) {
    return Fail(QLINEAR_INTERNAL_ERROR, "internal error");
  }
}

// qlinear_dynamic_ranges' layout: 2 floats per group (CheckRanges has checked the product).
uint64_t RangesBytes(const DynamicPlan& p) { return static_cast<uint64_t>(p.groups) * 8; }

uint64_t MaskBytes(int64_t n) { return (static_cast<uint64_t>(n) + 7) / 8; }

qlinear_status CheckMask(const char* name, const void* mask, size_t mask_bytes, int64_t n) {
  const uint64_t needed = MaskBytes(n);
  if (needed > 0 && mask == nullptr) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: pointer is NULL, %llu bytes needed", name,
                static_cast<unsigned long long>(needed));
  }
  if (mask_bytes < needed) {
    return Fail(QLINEAR_BUFFER_TOO_SMALL, "%s: needs %llu bytes (1 bit per element), got %llu",
                name, static_cast<unsigned long long>(needed), static_cast<unsigned long long>(mask_bytes));
  }
  return QLINEAR_OK;
}

// Sub-range checks: inside the tensor, and on byte boundaries for packed types (t).
qlinear_status CheckRange(int64_t first, int64_t count, int64_t n, DType t) {
  if (first < 0 || count < 0 || first > n || count > n - first) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "first, count: [%lld, %lld + %lld) must lie within the tensor's %lld elements",
                static_cast<long long>(first), static_cast<long long>(first),
                static_cast<long long>(count), static_cast<long long>(n));
  }
  const int bits = Info(t).bits;
  if (bits < 8) {
    const int per = 8 / bits;
    if (first % per != 0 && count != 0) {  // (an empty slice writes no byte)
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "first: must be a multiple of %d for %s (slices must not share a byte), got %lld",
                  per, Name(t), static_cast<long long>(first));
    }
    if (count % per != 0 && first + count != n) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "count: must be a multiple of %d for %s unless the slice ends the tensor, got %lld",
                  per, Name(t), static_cast<long long>(count));
    }
  }
  return QLINEAR_OK;
}

// How a parallel call splits (*parallel false: on the calling thread). omp_threads is the
// OpenMP runner's context.
struct Split {
  TaskSplit tasks;
  int omp_threads = 1;
};

qlinear_status ChooseSplit(int64_t n, const qlinear_parallel_options* o, Split* split, bool* parallel) {
  *parallel = false;
  if (o == nullptr) return QLINEAR_OK;
  if (o->struct_size < sizeof(qlinear_parallel_options)) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "options: struct_size %llu is smaller than this library's %llu (call qlinear_parallel_options_init)",
                static_cast<unsigned long long>(o->struct_size),
                static_cast<unsigned long long>(sizeof(qlinear_parallel_options)));
  }
  if (o->max_threads < 0 || o->max_threads > QLINEAR_MAX_THREADS) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "options: max_threads must be in [0, %d], got %d",
                QLINEAR_MAX_THREADS, static_cast<int>(o->max_threads));
  }
  if (o->min_elements_per_task < 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "options: min_elements_per_task must be >= 0, got %lld",
                static_cast<long long>(o->min_elements_per_task));
  }
  const int64_t min_per = o->min_elements_per_task > 0 ? o->min_elements_per_task : 262144;
  int64_t threads = o->max_threads;
  if (o->parallel_for != nullptr) {
    split->tasks.parallel_for = o->parallel_for;
    split->tasks.context = o->runner_context;
    if (threads == 0) threads = 64;
  } else if (OpenMPBuiltIn()) {
    if (threads == 0) threads = std::min<int64_t>(OpenMPMaxThreads(), QLINEAR_MAX_THREADS);
    split->tasks.parallel_for = OpenMPParallelFor;
    split->tasks.context = &split->omp_threads;
  } else {
    return QLINEAR_OK;
  }
  int64_t tasks = std::min<int64_t>(threads, n / min_per);
  if (tasks < 2) return QLINEAR_OK;
  // 64-element (byte) boundaries; rounding up the piece may leave fewer tasks than asked for.
  split->tasks.per_task = (n / tasks + (n % tasks != 0) + 63) / 64 * 64;
  tasks = n / split->tasks.per_task + (n % split->tasks.per_task != 0);
  split->omp_threads = static_cast<int>(tasks);  // the team: one thread per task at most
  *parallel = true;
  return QLINEAR_OK;
}

// QuantizeLinear and DequantizeLinear seen alike by the range and parallel entry points: how to
// plan, which operand may be packed (sub-byte), how to execute.
qlinear_status PlanFor(const qlinear_tensor* x, const qlinear_tensor* s, const qlinear_tensor* z,
                       const qlinear_quantize_attrs* a, QuantizePlan* p) {
  return PlanQuantize(x, s, z, a, p);
}
qlinear_status PlanFor(const qlinear_tensor* x, const qlinear_tensor* s, const qlinear_tensor* z,
                       const qlinear_dequantize_attrs* a, DequantizePlan* p) {
  return PlanDequantize(x, s, z, a, p);
}
DType PackedType(const QuantizePlan& p) { return p.y_type; }
bool Quantizes(const QuantizePlan&) { return true; }
bool Quantizes(const DequantizePlan&) { return false; }
DType PackedType(const DequantizePlan& p) { return p.x_type; }
void Execute(const QuantizePlan& p, void* y, const TaskSplit* split) { ExecuteQuantize(p, y, split); }
void Execute(const DequantizePlan& p, void* y, const TaskSplit* split) { ExecuteDequantize(p, y, split); }

// The shape of a QuantizeLinear / DequantizeLinear call: the whole tensor, elements
// [first, first + count) (range calls), or the whole tensor split into tasks (options).
struct Extent {
  bool range = false;
  int64_t first = 0, count = 0;
  const qlinear_parallel_options* options = nullptr;
};

// Every QuantizeLinear / DequantizeLinear entry point but the masked and backward ones: plan,
// check the range and the output, split, check the settings, execute.
template <class Plan, class Attrs>
qlinear_status Call(const qlinear_tensor* x, const qlinear_tensor* scale, const qlinear_tensor* zp,
                    const Attrs* attrs, void* y, size_t y_bytes, const Extent& extent) {
  return Guarded([&] {
    // An empty slice has no elements for x->data to point at: NULL is allowed (qlinear.h).
    qlinear_tensor empty_slice;
    static const uint64_t kNoElements = 0;
    if (extent.range && extent.count == 0 && x != nullptr && x->data == nullptr) {
      empty_slice = *x;
      empty_slice.data = &kNoElements;
      x = &empty_slice;
    }
    Plan p;
    qlinear_status s = PlanFor(x, scale, zp, attrs, &p);
    if (s != QLINEAR_OK) return s;
    uint64_t needed = p.y_bytes;
    if (extent.range) {
      if ((s = CheckRange(extent.first, extent.count, p.layout.count, PackedType(p))) != QLINEAR_OK) return s;
      needed = StorageBytes(p.y_type, static_cast<uint64_t>(extent.count));
    }
    if ((s = CheckOutput(y, y_bytes, needed)) != QLINEAR_OK) return s;
    const ArgumentBytes x_read{"x", x->data, extent.range ? SliceBytes(x, extent.count) : TensorBytes(x)};
    const char* scale_name = Quantizes(p) ? "y_scale" : "x_scale";
    const char* zp_name = Quantizes(p) ? "y_zero_point" : "x_zero_point";
    if ((s = CheckDisjoint({{"y", y, needed}},
                           {x_read, {scale_name, scale->data, TensorBytes(scale)},
                            {zp_name, zp != nullptr ? zp->data : nullptr, TensorBytes(zp)}})) != QLINEAR_OK) {
      return s;
    }
    Split split;
    bool parallel = false;
    if ((s = ChooseSplit(p.layout.count, extent.options, &split, &parallel)) != QLINEAR_OK) return s;
    if ((s = ExecutionSettingsStatus(Quantizes(p))) != QLINEAR_OK) return s;
    if (extent.range) {
      if (extent.count == 0) return QLINEAR_OK;  // (its first need not start a byte)
      p.begin = extent.first;
      p.end = extent.first + extent.count;
    }
    // An empty x writes nothing: its (possibly many) scales are not decoded.
    if (p.layout.count == 0) return QLINEAR_OK;
    Execute(p, y, parallel ? &split.tasks : nullptr);
    return QLINEAR_OK;
  });
}

// The *_output_info entry points: the plan's output type and bytes.
template <class Plan, class Attrs>
qlinear_status OutputInfo(const qlinear_tensor* x, const qlinear_tensor* scale, const qlinear_tensor* zp,
                          const Attrs* attrs, int32_t* y_dtype, size_t* y_bytes) {
  return Guarded([&] {
    Plan p;
    const qlinear_status s = PlanFor(x, scale, zp, attrs, &p);
    if (s != QLINEAR_OK) return s;
    if (y_dtype) *y_dtype = static_cast<int32_t>(p.y_type);
    if (y_bytes) *y_bytes = static_cast<size_t>(p.y_bytes);
    return QLINEAR_OK;
  });
}

// qlinear_quantize_dynamic and its parallel form (options NULL: serial).
qlinear_status QuantizeDynamicCall(const qlinear_tensor* x, const qlinear_dynamic_attrs* attrs, void* y,
                                   size_t y_bytes, void* y_scale, size_t y_scale_bytes, void* y_zero_point,
                                   size_t y_zero_point_bytes, const qlinear_parallel_options* options) {
  return Guarded([&] {
    DynamicPlan p;
    qlinear_status s = PlanDynamic(x, attrs, true, &p);
    if (s != QLINEAR_OK) return s;
    if ((s = CheckOutput(y, y_bytes, p.q.y_bytes)) != QLINEAR_OK) return s;
    if ((s = CheckScaleOutputs(p, y_scale, y_scale_bytes, y_zero_point, y_zero_point_bytes)) != QLINEAR_OK) {
      return s;
    }
    if ((s = CheckDisjoint({{"y", y, p.q.y_bytes}, {"y_scale", y_scale, p.scale_bytes},
                            {"y_zero_point", y_zero_point, p.zp_bytes}},
                           {{"x", x->data, TensorBytes(x)}})) != QLINEAR_OK) {
      return s;
    }
    Split split;
    bool parallel;
    if ((s = ChooseSplit(p.q.layout.count, options, &split, &parallel)) != QLINEAR_OK) return s;
    if ((s = ExecutionSettingsStatus(true)) != QLINEAR_OK) return s;
    DynamicOutputs out;
    out.y = y;
    out.scale = y_scale;
    out.zero_point = y_zero_point;
    ExecuteDynamic(p, out, parallel ? &split.tasks : nullptr);
    return QLINEAR_OK;
  });
}

// The fields both attribute structs share, at the ONNX defaults.
template <class Attrs>
void InitCommonAttrs(Attrs* a) {
  a->struct_size = sizeof(*a);
  a->opset = 0;
  a->axis = 1;
  a->block_size = 0;
  a->output_dtype = 0;
}

}  // namespace
}  // namespace qlinear

using namespace qlinear;

extern "C" {

void qlinear_quantize_attrs_init(qlinear_quantize_attrs* a) {
  if (a == nullptr) return;
  InitCommonAttrs(a);
  a->saturate = 1;
  a->precision = 0;
}

void qlinear_dequantize_attrs_init(qlinear_dequantize_attrs* a) {
  if (a == nullptr) return;
  InitCommonAttrs(a);
  a->reserved = 0;
}

// The four entry points of each operator (output_info, linear, _range, _parallel: the header
// documents them), all on the templated call path above. op: quantize or dequantize.
#define QLINEAR_OPERATOR_ENTRY_POINTS(op, Plan)                                                        \
  qlinear_status qlinear_##op##_output_info(const qlinear_tensor* x, const qlinear_tensor* scale,      \
                                            const qlinear_tensor* zero_point,                         \
                                            const qlinear_##op##_attrs* attrs, int32_t* y_dtype,      \
                                            size_t* y_bytes) {                                        \
    return OutputInfo<Plan>(x, scale, zero_point, attrs, y_dtype, y_bytes);                           \
  }                                                                                                   \
  qlinear_status qlinear_##op##_linear(const qlinear_tensor* x, const qlinear_tensor* scale,           \
                                       const qlinear_tensor* zero_point,                              \
                                       const qlinear_##op##_attrs* attrs, void* y, size_t y_bytes) {  \
    return Call<Plan>(x, scale, zero_point, attrs, y, y_bytes, Extent{});                             \
  }                                                                                                   \
  qlinear_status qlinear_##op##_linear_range(const qlinear_tensor* x, const qlinear_tensor* scale,     \
                                             const qlinear_tensor* zero_point,                        \
                                             const qlinear_##op##_attrs* attrs, int64_t first,        \
                                             int64_t count, void* y, size_t y_bytes) {                \
    return Call<Plan>(x, scale, zero_point, attrs, y, y_bytes, Extent{true, first, count, nullptr});  \
  }                                                                                                   \
  qlinear_status qlinear_##op##_linear_parallel(const qlinear_tensor* x, const qlinear_tensor* scale,  \
                                                const qlinear_tensor* zero_point,                     \
                                                const qlinear_##op##_attrs* attrs, void* y,           \
                                                size_t y_bytes,                                       \
                                                const qlinear_parallel_options* options) {            \
    return Call<Plan>(x, scale, zero_point, attrs, y, y_bytes, Extent{false, 0, 0, options});         \
  }

QLINEAR_OPERATOR_ENTRY_POINTS(quantize, QuantizePlan)
QLINEAR_OPERATOR_ENTRY_POINTS(dequantize, DequantizePlan)
#undef QLINEAR_OPERATOR_ENTRY_POINTS

qlinear_status qlinear_quantize_linear_masked(const qlinear_tensor* x, const qlinear_tensor* y_scale,
                                              const qlinear_tensor* y_zero_point,
                                              const qlinear_quantize_attrs* attrs, void* y,
                                              size_t y_bytes, uint8_t* clamp_mask,
                                              size_t mask_bytes) {
  return Guarded([&] {
    QuantizePlan p;
    qlinear_status s = PlanQuantize(x, y_scale, y_zero_point, attrs, &p);
    if (s != QLINEAR_OK) return s;
    if ((s = CheckOutput(y, y_bytes, p.y_bytes)) != QLINEAR_OK) return s;
    if ((s = CheckMask("clamp_mask", clamp_mask, mask_bytes, p.layout.count)) != QLINEAR_OK) return s;
    if ((s = CheckDisjoint({{"y", y, p.y_bytes}, {"clamp_mask", clamp_mask, MaskBytes(p.layout.count)}},
                           {{"x", x->data, TensorBytes(x)}, {"y_scale", y_scale->data, TensorBytes(y_scale)},
                            {"y_zero_point", y_zero_point != nullptr ? y_zero_point->data : nullptr,
                             TensorBytes(y_zero_point)}})) != QLINEAR_OK) {
      return s;
    }
    if ((s = ExecutionSettingsStatus(true)) != QLINEAR_OK) return s;
    if (p.layout.count == 0) return QLINEAR_OK;
    // The mask pass's parameters before y is written: out of memory leaves both outputs as they were.
    const std::unique_ptr<DecodedParams> mask_params = DecodeBackwardParams(p);
    ExecuteQuantize(p, y);
    BackwardArgs b;
    b.mask_out = clamp_mask;
    ExecuteBackward(p, b, mask_params.get());
    return QLINEAR_OK;
  });
}

qlinear_status qlinear_quantize_linear_backward(
    const qlinear_tensor* x, const qlinear_tensor* y_scale, const qlinear_tensor* y_zero_point,
    const qlinear_quantize_attrs* attrs, const qlinear_tensor* dy, float lda,
    const uint8_t* clamp_mask, size_t mask_bytes, void* dx, size_t dx_bytes) {
  return Guarded([&] {
    QuantizePlan p;
    qlinear_status s = PlanQuantize(x, y_scale, y_zero_point, attrs, &p);
    if (s != QLINEAR_OK) return s;
    if (dy == nullptr) return Fail(QLINEAR_INVALID_ARGUMENT, "dy: tensor pointer is NULL");
    const DType dyt = static_cast<DType>(dy->dtype);
    if (dyt != DType::kFloat32 && dyt != DType::kFloat16 && dyt != DType::kBFloat16) {
      return Fail(QLINEAR_UNSUPPORTED_TYPE, "dy: must be float32, float16 or bfloat16, got %s",
                  FindDType(dy->dtype) ? Name(dyt) : "unknown");
    }
    bool same = dy->rank == x->rank && (dy->rank == 0 || dy->shape != nullptr);
    for (int32_t i = 0; same && i < x->rank; ++i) same = dy->shape[i] == x->shape[i];
    if (!same) return Fail(QLINEAR_INVALID_ARGUMENT, "dy: must have x's shape");
    if (p.layout.count > 0 && dy->data == nullptr) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "dy: data is NULL with %lld elements",
                  static_cast<long long>(p.layout.count));
    }
    if (clamp_mask != nullptr &&
        (s = CheckMask("clamp_mask", clamp_mask, mask_bytes, p.layout.count)) != QLINEAR_OK) {
      return s;
    }
    uint64_t needed = 0;  // dy's and dx's bytes: their type may be wider than x's
    if ((s = CheckBytes("dy", dyt, p.layout.count, &needed)) != QLINEAR_OK) return s;
    if (needed > 0 && dx == nullptr) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "dx: output pointer is NULL, %llu bytes needed",
                  static_cast<unsigned long long>(needed));
    }
    if (dx_bytes < needed) {
      return Fail(QLINEAR_BUFFER_TOO_SMALL, "dx_bytes: output needs %llu bytes, got %llu",
                  static_cast<unsigned long long>(needed), static_cast<unsigned long long>(dx_bytes));
    }
    if ((s = CheckDisjoint({{"dx", dx, needed}},
                           {{"x", x->data, TensorBytes(x)}, {"y_scale", y_scale->data, TensorBytes(y_scale)},
                            {"y_zero_point", y_zero_point != nullptr ? y_zero_point->data : nullptr,
                             TensorBytes(y_zero_point)},
                            {"dy", dy->data, needed},
                            {"clamp_mask", clamp_mask, clamp_mask != nullptr ? MaskBytes(p.layout.count) : 0}})) !=
        QLINEAR_OK) {
      return s;
    }
    // The clamp test is QuantizeLinear's, on the path QLINEAR_QUANTIZE_PATH picks: a call that quantizes.
    if ((s = ExecutionSettingsStatus(true)) != QLINEAR_OK) return s;
    if (p.layout.count == 0) return QLINEAR_OK;
    BackwardArgs b;
    b.dy_type = dyt;
    b.dy = dy->data;
    b.lda = lda;
    b.mask_in = clamp_mask;
    b.dx = dx;
    ExecuteBackward(p, b);
    return QLINEAR_OK;
  });
}

void qlinear_parallel_options_init(qlinear_parallel_options* o) {
  if (o == nullptr) return;
  o->struct_size = sizeof(*o);
  o->max_threads = 0;
  o->min_elements_per_task = 0;
  o->parallel_for = nullptr;
  o->runner_context = nullptr;
}

int qlinear_openmp_enabled(void) { return OpenMPBuiltIn() ? 1 : 0; }

qlinear_status qlinear_dynamic_quantize_linear(const qlinear_tensor* x, uint8_t* y,
                                               size_t y_bytes, float* y_scale,
                                               uint8_t* y_zero_point) {
  return Guarded([&] {
    if (x == nullptr) return Fail(QLINEAR_INVALID_ARGUMENT, "x: tensor pointer is NULL");
    if (x->dtype != QLINEAR_DTYPE_FLOAT) {
      const DTypeInfo* info = FindDType(x->dtype);
      return Fail(QLINEAR_UNSUPPORTED_TYPE,
                  "x: DynamicQuantizeLinear-11 takes float32, got %s", info ? info->name : "unknown");
    }
    if (y_scale == nullptr) return Fail(QLINEAR_INVALID_ARGUMENT, "y_scale: pointer is NULL");
    if (y_zero_point == nullptr) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "y_zero_point: pointer is NULL");
    }
    // Reuse the QuantizeLinear shape checks with a per-tensor float32 scale.
    const float one = 1.0f;
    const qlinear_tensor scale{QLINEAR_DTYPE_FLOAT, 0, nullptr, &one};
    QuantizePlan p;
    qlinear_status s = PlanQuantize(x, &scale, nullptr, nullptr, &p);
    if (s != QLINEAR_OK) return s;
    if (p.layout.count == 0) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "x: DynamicQuantizeLinear needs at least one element (the range is undefined)");
    }
    if ((s = CheckOutput(y, y_bytes, p.y_bytes)) != QLINEAR_OK) return s;
    if ((s = CheckDisjoint({{"y", y, p.y_bytes}, {"y_scale", y_scale, sizeof(float)}, {"y_zero_point", y_zero_point, 1}},
                           {{"x", x->data, TensorBytes(x)}})) != QLINEAR_OK) {
      return s;
    }
    if ((s = ExecutionSettingsStatus(true)) != QLINEAR_OK) return s;
    ExecuteDynamicQuantize(static_cast<const float*>(x->data), p.layout.count, y, y_scale,
                           y_zero_point);
    return QLINEAR_OK;
  });
}

qlinear_status qlinear_quantize_dynamic_output_info(const qlinear_tensor* x,
                                                    const qlinear_dynamic_attrs* attrs,
                                                    size_t* y_bytes, size_t* y_scale_bytes,
                                                    size_t* y_zero_point_bytes) {
  return Guarded([&] {
    DynamicPlan p;
    const qlinear_status s = PlanDynamic(x, attrs, false, &p);
    if (s != QLINEAR_OK) return s;
    if (y_bytes) *y_bytes = static_cast<size_t>(p.q.y_bytes);
    if (y_scale_bytes) *y_scale_bytes = static_cast<size_t>(p.scale_bytes);
    if (y_zero_point_bytes) *y_zero_point_bytes = static_cast<size_t>(p.zp_bytes);
    return QLINEAR_OK;
  });
}

qlinear_status qlinear_quantize_dynamic(const qlinear_tensor* x, const qlinear_dynamic_attrs* attrs,
                                        void* y, size_t y_bytes, void* y_scale, size_t y_scale_bytes,
                                        void* y_zero_point, size_t y_zero_point_bytes) {
  return QuantizeDynamicCall(x, attrs, y, y_bytes, y_scale, y_scale_bytes, y_zero_point,
                             y_zero_point_bytes, nullptr);
}

qlinear_status qlinear_quantize_dynamic_parallel(const qlinear_tensor* x,
                                                 const qlinear_dynamic_attrs* attrs, void* y,
                                                 size_t y_bytes, void* y_scale, size_t y_scale_bytes,
                                                 void* y_zero_point, size_t y_zero_point_bytes,
                                                 const qlinear_parallel_options* options) {
  return QuantizeDynamicCall(x, attrs, y, y_bytes, y_scale, y_scale_bytes, y_zero_point,
                             y_zero_point_bytes, options);
}

qlinear_status qlinear_quantize_attrs_for_dynamic(const qlinear_dynamic_attrs* attrs,
                                                  qlinear_quantize_attrs* out) {
  return Guarded([&] {
    if (out == nullptr) return Fail(QLINEAR_INVALID_ARGUMENT, "out: pointer is NULL");
    qlinear_dynamic_attrs a;
    const qlinear_status s = ReadDynamicAttrs(attrs, &a);
    if (s != QLINEAR_OK) return s;
    QuantizeAttrsFor(a, out);
    return QLINEAR_OK;
  });
}

qlinear_status qlinear_dynamic_ranges(const qlinear_tensor* x, const qlinear_dynamic_attrs* attrs,
                                      int64_t first, int64_t count, float* ranges,
                                      size_t ranges_bytes) {
  return Guarded([&] {
    DynamicPlan p;
    qlinear_status s = PlanDynamic(x, attrs, false, &p);
    if (s != QLINEAR_OK) return s;
    if ((s = CheckRange(first, count, p.q.layout.count, p.q.x_type)) != QLINEAR_OK) return s;
    if (count > 0 && x->data == nullptr) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "x: data is NULL with count %lld", static_cast<long long>(count));
    }
    if ((s = CheckRanges(p, ranges, ranges_bytes, false)) != QLINEAR_OK) return s;
    if ((s = CheckDisjoint({{"ranges", ranges, RangesBytes(p)}}, {{"x", x->data, SliceBytes(x, count)}})) != QLINEAR_OK) {
      return s;
    }
    if ((s = ExecutionSettingsStatus(false)) != QLINEAR_OK) return s;
    ExecuteDynamicRanges(p, first, count, x->data, ranges);
    return QLINEAR_OK;
  });
}

qlinear_status qlinear_dynamic_scales(const qlinear_tensor* x, const qlinear_dynamic_attrs* attrs,
                                      const float* ranges, size_t ranges_bytes, void* y_scale,
                                      size_t y_scale_bytes, void* y_zero_point,
                                      size_t y_zero_point_bytes) {
  return Guarded([&] {
    DynamicPlan p;
    qlinear_status s = PlanDynamic(x, attrs, ranges == nullptr, &p);
    if (s != QLINEAR_OK) return s;
    if ((s = CheckScaleOutputs(p, y_scale, y_scale_bytes, y_zero_point, y_zero_point_bytes)) != QLINEAR_OK) {
      return s;
    }
    if (ranges != nullptr && (s = CheckRanges(p, ranges, ranges_bytes, true)) != QLINEAR_OK) return s;
    if ((s = CheckDisjoint({{"y_scale", y_scale, p.scale_bytes}, {"y_zero_point", y_zero_point, p.zp_bytes}},
                           {ranges != nullptr ? ArgumentBytes{"ranges", ranges, RangesBytes(p)}
                                              : ArgumentBytes{"x", x->data, TensorBytes(x)}})) != QLINEAR_OK) {
      return s;
    }
    if ((s = ExecutionSettingsStatus(false)) != QLINEAR_OK) return s;
    DynamicOutputs out;
    out.scale = y_scale;
    out.zero_point = y_zero_point;
    if (ranges == nullptr) {
      ExecuteDynamic(p, out, nullptr);
      return QLINEAR_OK;
    }
    ScalesFromRanges(p, ranges, out);
    return QLINEAR_OK;
  });
}

const char* qlinear_dtype_name(int32_t dtype) {
  const DTypeInfo* info = FindDType(dtype);
  return info ? info->name : "unknown";
}

const char* qlinear_status_name(qlinear_status status) {
  switch (status) {
    case QLINEAR_OK: return "ok";
    case QLINEAR_INVALID_ARGUMENT: return "invalid argument";
    case QLINEAR_UNSUPPORTED_TYPE: return "unsupported type";
    case QLINEAR_BUFFER_TOO_SMALL: return "buffer too small";
    case QLINEAR_OUT_OF_MEMORY: return "out of memory";
    case QLINEAR_INTERNAL_ERROR: return "internal error";
  }
  return "unknown status";
}

const char* qlinear_last_error(void) { return LastError(); }

const char* qlinear_version(void) { return QLINEAR_VERSION_STRING; }

const char* qlinear_active_target(void) { return ActiveTargetName(); }

qlinear_status qlinear_set_target(const char* name) {
  return Guarded([&] { return PinTarget(name); });
}

const char* qlinear_compiled_targets(void) {
  thread_local char buf[256];
  return TargetNames(CompiledTargetMask(), buf);
}

const char* qlinear_supported_targets(void) {
  thread_local char buf[256];
  return TargetNames(SupportedTargetMask(), buf);
}

}  // extern "C"
