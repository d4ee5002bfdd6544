// ONNX rules -> a plan: every validation rule, then granularity reduced to contiguous runs.
// Nothing here writes output; a plan that was built successfully can always be executed.
#ifndef QLINEAR_LIB_PLAN_H_
#define QLINEAR_LIB_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "dtype.h"
#include "error.h"
#include "qlinear/qlinear.h"

namespace qlinear {

// Precision of the QuantizeLinear division (docs/semantics.md, "Division precision").
enum class Prec : uint8_t { kF32, kF16, kBF16, kF64 };

enum class Granularity : uint8_t { kPerTensor, kPerAxis, kBlocked };

// x viewed as [outer, axis_dim, inner] around the quantization axis.
struct Layout {
  Granularity granularity = Granularity::kPerTensor;
  int64_t count = 0;  // elements of x
  int64_t outer = 1, axis_dim = 1, inner = 1;
  int64_t block = 0;         // blocked: block_size
  int64_t scale_axis = 1;    // blocked: ceil(axis_dim / block)
  int64_t scale_count = 1;   // elements of the scale (and of the zero point, when per-axis/blocked)
};

// Blocks along a run of at least this many elements are taken a block at a time; shorter ones
// are expanded to a scale per element.
constexpr int64_t kMinBlockSpan = 16;

// How the scale index moves along the runs of a layout (ForEachRun), i.e. which loop runs them.
enum class RunKind : uint8_t {
  kUniform,      // one scale per run: per-tensor, per-axis on an outer axis
  kPerElement,   // a scale per element, the same for each row of the run's length: per-axis on
                 // the last axis, blocks along an outer axis
  kBlocks,       // a new scale every block (>= kMinBlockSpan elements): blocks along the last axis
  kShortBlocks,  // the same with shorter blocks, expanded to a scale per element
};

// A contiguous stretch of x. Element j (0 <= j < count) is flat index start + j and uses scale
// (and zero point) index scale_first + (phase + j) / period. Per-tensor: one run, period = count.
struct Run {
  int64_t start;
  int64_t count;
  int64_t scale_first;
  int64_t period;  // 1: a new scale every element; block size; or >= count: one scale
  int64_t phase;   // 0 <= phase < period
};

inline RunKind RunKindOf(const Layout& l) {
  switch (l.granularity) {
    case Granularity::kPerTensor:
      return RunKind::kUniform;
    case Granularity::kPerAxis:
      return l.inner == 1 ? RunKind::kPerElement : RunKind::kUniform;
    case Granularity::kBlocked:
      if (l.inner > 1) return RunKind::kPerElement;
      return l.block >= kMinBlockSpan ? RunKind::kBlocks : RunKind::kShortBlocks;
  }
  return RunKind::kUniform;
}

// Scale (and zero-point) index of flat element i, straight from the definition. The reference
// uses this; the vector path uses runs, and tests compare the two.
inline int64_t ScaleIndex(const Layout& l, int64_t i) {
  switch (l.granularity) {
    case Granularity::kPerTensor:
      return 0;
    case Granularity::kPerAxis:
      return (i / l.inner) % l.axis_dim;
    case Granularity::kBlocked: {
      const int64_t row = i / l.inner, in = i % l.inner;
      const int64_t o = row / l.axis_dim, a = row % l.axis_dim;
      return (o * l.scale_axis + a / l.block) * l.inner + in;
    }
  }
  return 0;
}

// The scale (and zero-point) indices that flat elements [begin, end) use lie in
// [*first, *first + *count): a sub-range call decodes only those.
inline void ScaleWindow(const Layout& l, int64_t begin, int64_t end, int64_t* first, int64_t* count) {
  *first = 0;
  *count = l.granularity == Granularity::kPerTensor ? 1 : l.scale_count;
  if (end <= begin || l.granularity == Granularity::kPerTensor) return;
  const int64_t r0 = begin / l.inner, r1 = (end - 1) / l.inner;  // rows of `inner` elements
  if (l.granularity == Granularity::kPerAxis) {  // index = row % axis_dim: wraps
    const int64_t a0 = r0 % l.axis_dim, a1 = r1 % l.axis_dim;
    if (r1 - r0 < l.axis_dim && a0 <= a1) {
      *first = a0;
      *count = a1 - a0 + 1;
    }
    return;
  }
  // Blocked: index = block_row * inner + (i % inner), block_row nondecreasing in the row.
  auto block_row = [&](int64_t row) { return row / l.axis_dim * l.scale_axis + row % l.axis_dim / l.block; };
  if (r0 == r1) {
    *first = block_row(r0) * l.inner + begin % l.inner;
    *count = end - begin;
  } else {
    *first = block_row(r0) * l.inner;
    *count = (block_row(r1) - block_row(r0) + 1) * l.inner;
  }
}

// A call whose elements use more scale indices than this is run in pieces that each use at most
// about this many (WindowPieceEnd), so that its decoded per-group parameters stay small (16 bytes
// per group at most: 64 KiB) instead of growing with the tensor.
constexpr int64_t kWindowGroups = 4096;

// Where the piece of [begin, end) that starts at begin ends: end itself when ScaleWindow(begin,
// end) has at most max_groups indices, else earlier, at the end of whole groups so that no group
// is decoded twice: blocks along an outer axis end a block row (of `inner` groups; at least one
// even when inner > max_groups), per-axis layouts end a row within one sweep of the axis. A
// per-axis layout whose sweeps repeat with short rows (inner < 64) is not cut: each sweep
// would decode every scale again.
inline int64_t WindowPieceEnd(const Layout& l, int64_t begin, int64_t end, int64_t max_groups) {
  if (end <= begin || l.granularity == Granularity::kPerTensor) return end;
  int64_t first, count;
  ScaleWindow(l, begin, end, &first, &count);
  if (count <= max_groups) return end;
  const int64_t r0 = begin / l.inner;  // rows of `inner` elements
  int64_t row_end;                     // the piece ends with row row_end - 1
  if (l.granularity == Granularity::kPerAxis) {
    if (l.outer > 1 && l.inner < 64) return end;
    row_end = std::min((r0 / l.axis_dim + 1) * l.axis_dim, r0 + max_groups);
  } else {
    // Block row b covers rows [o * axis_dim + j * block, o * axis_dim + min(axis_dim, (j + 1) *
    // block)), o = b / scale_axis, j = b % scale_axis. The last one in the piece lies before the
    // block row of end's last row: count > max_groups.
    const int64_t rows_of_block_rows = std::max<int64_t>(1, max_groups / l.inner);
    const int64_t b0 = r0 / l.axis_dim * l.scale_axis + r0 % l.axis_dim / l.block;
    const int64_t b = b0 + rows_of_block_rows - 1;
    const int64_t o = b / l.scale_axis, j0 = b % l.scale_axis * l.block;
    row_end = o * l.axis_dim + j0 + std::min(l.block, l.axis_dim - j0);
  }
  return std::min(end, row_end * l.inner);
}

// Per-axis layouts: calls fn(const Run&) for each stretch of [begin, end) within one sweep of the
// axis (axis_dim rows of `inner` elements, scale index (i / inner) % axis_dim), as one run of
// blocks of `inner`: element j uses scale scale_first + (phase + j) / inner.
template <class Fn>
void ForEachAxisSweep(const Layout& l, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const int64_t sweep = l.axis_dim * l.inner;  // <= count: x is not empty
  for (int64_t i = begin; i < end;) {
    const int64_t next = end - i < sweep - i % sweep ? end : i + (sweep - i % sweep);
    fn(static_cast<const Run&>(Run{i, next - i, (i / l.inner) % l.axis_dim, l.inner, i % l.inner}));
    i = next;
  }
}

// Calls fn(const Run&) for the runs that cover flat indices [begin, end), in order. The first
// run's position comes from divisions, the next runs' are stepped from it: divisions per run
// put one on the chain from each run's start to the next (stepping: per-row DequantizeLinear
// of 4- and 2-bit types 1.05-1.10x on AVX2 at 64K and 1M elements, Zen 5).
template <class Fn>
void ForEachRun(const Layout& l, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  int64_t i = begin;
  // r clipped to end and passed to fn; returns its count (callers move i past it).
  auto emit = [&](Run r) {
    if (r.count > end - i) r.count = end - i;
    fn(static_cast<const Run&>(r));
    return r.count;
  };
  switch (l.granularity) {
    case Granularity::kPerTensor:
      break;
    case Granularity::kPerAxis:
      if (l.inner == 1) {  // last axis: the scale changes every element
        for (int64_t a = i % l.axis_dim; i < end; a = 0) i += emit(Run{i, l.axis_dim - a, a, 1, 0});
      } else {
        int64_t in = i % l.inner, k = (i / l.inner) % l.axis_dim;
        for (; i < end; in = 0, k = k + 1 == l.axis_dim ? 0 : k + 1) {
          i += emit(Run{i, l.inner - in, k, l.inner - in, 0});
        }
      }
      return;
    case Granularity::kBlocked:
      if (l.inner == 1 && l.axis_dim % l.block == 0) {
        // Blocks along the last axis that tile its rows: scale index i / block, so the rows
        // join into one run (no per-row call).
        emit(Run{i, end - i, i / l.block, l.block, i % l.block});
        return;
      }
      if (l.inner == 1) {  // blocks along the last axis: a new scale every `block` elements
        for (int64_t o = i / l.axis_dim, a = i % l.axis_dim; i < end; ++o, a = 0) {
          i += emit(Run{i, l.axis_dim - a, o * l.scale_axis + a / l.block, l.block, a % l.block});
        }
      } else {  // blocks along an outer axis: a row of `inner` scales, one per element
        const int64_t row = i / l.inner;
        int64_t in = i % l.inner, o = row / l.axis_dim, a = row % l.axis_dim;
        int64_t k = a / l.block, left = l.block - a % l.block;  // a's block in o, rows left in it
        while (i < end) {
          i += emit(Run{i, l.inner - in, (o * l.scale_axis + k) * l.inner + in, 1, 0});
          in = 0;
          if (++a == l.axis_dim) {
            a = 0;
            ++o;
            k = 0;
            left = l.block;
          } else if (--left == 0) {
            ++k;
            left = l.block;
          }
        }
      }
      return;
  }
  emit(Run{i, end - i, 0, end - i, 0});  // per tensor: one run, one scale
}

// What a QuantizeLinear and a DequantizeLinear plan share.
struct PlanBase {
  int version = 0;  // operator version: 10, 13, 19, 21, 23, 24 or 25
  Layout layout;
  DType x_type = DType::kUndefined, scale_type = DType::kUndefined, y_type = DType::kUndefined;
  const void* x = nullptr;
  const void* scale = nullptr;
  const void* zero_point = nullptr;  // nullptr: zero of the quantized type
  uint64_t y_bytes = 0;
  // The elements to compute, [begin, end) of the flattened tensor; x and y point at element
  // `begin` (the sub-range entry points and parallel tasks narrow it; plans cover everything).
  int64_t begin = 0, end = 0;
  // The elements that size-based choices (prefetching, streaming stores) weigh: those of the
  // whole call when it runs in pieces on one thread (RunInWindowPieces); 0: [begin, end).
  int64_t call_elements = 0;
};

// The elements a plan's size-based choices weigh (PlanBase::call_elements).
inline int64_t ElementsForChoices(const PlanBase& p) { return p.call_elements > 0 ? p.call_elements : p.end - p.begin; }

struct ParamsWorkspace;  // params.h

struct QuantizePlan : PlanBase {
  Prec prec = Prec::kF32;
  bool saturate = true;
  // Buffers for the decoded per-group parameters, allocated beforehand by a caller that must not
  // allocate once it has begun writing outputs (dynamic quantization); null: the call allocates.
  ParamsWorkspace* workspace = nullptr;
};

struct DequantizePlan : PlanBase {};

// Validate a call and build its plan. On failure: a non-OK status, the thread's error message
// set, *plan unspecified.
qlinear_status PlanQuantize(const qlinear_tensor* x, const qlinear_tensor* scale,
                            const qlinear_tensor* zero_point, const qlinear_quantize_attrs* attrs,
                            QuantizePlan* plan);
qlinear_status PlanDequantize(const qlinear_tensor* x, const qlinear_tensor* scale,
                              const qlinear_tensor* zero_point,
                              const qlinear_dequantize_attrs* attrs, DequantizePlan* plan);

// Checks the output pointer and capacity against the plan's y_bytes.
qlinear_status CheckOutput(const void* y, size_t y_bytes, uint64_t needed);

// One of a call's buffers for CheckDisjoint: `bytes` bytes at `data` (none if either is 0).
struct ArgumentBytes {
  const char* name;
  const void* data;
  uint64_t bytes;
};
// The bytes of a validated tensor's data (0 for NULL), or of its first `count` elements.
uint64_t TensorBytes(const qlinear_tensor* t);
uint64_t SliceBytes(const qlinear_tensor* t, int64_t count);
// QLINEAR_INVALID_ARGUMENT naming both buffers where an output shares a byte with another
// output or with an input (qlinear.h: no output may overlap any other argument).
qlinear_status CheckDisjoint(std::initializer_list<ArgumentBytes> outputs, std::initializer_list<ArgumentBytes> inputs);

// The argument checks every entry point shares (messages name `name` / the axis).
// Shape, data pointer and element count (overflow-checked) of one tensor argument.
qlinear_status CheckTensor(const char* name, const qlinear_tensor& t, int64_t* count);
// axis in [-rank, rank) -> [0, rank).
qlinear_status NormalizeAxis(int64_t axis, int32_t rank, int64_t* out);

// The sizes a caller's attribute struct may have below ours: the end of one of our fields (an
// older header's struct ends at one of them). Any other size would mix the caller's bytes with
// the defaults inside a field.
#define QLINEAR_FIELD_END(T, f) (offsetof(T, f) + sizeof(static_cast<T*>(nullptr)->f))
template <class Attrs>
struct AttrFields;
template <>
struct AttrFields<qlinear_quantize_attrs> {
  using T = qlinear_quantize_attrs;
  static constexpr const char* kName = "qlinear_quantize_attrs";
  static constexpr size_t kEnds[] = {QLINEAR_FIELD_END(T, opset),        QLINEAR_FIELD_END(T, axis),
                                     QLINEAR_FIELD_END(T, block_size),   QLINEAR_FIELD_END(T, output_dtype),
                                     QLINEAR_FIELD_END(T, saturate),     QLINEAR_FIELD_END(T, precision)};
};
template <>
struct AttrFields<qlinear_dequantize_attrs> {
  using T = qlinear_dequantize_attrs;
  static constexpr const char* kName = "qlinear_dequantize_attrs";
  static constexpr size_t kEnds[] = {QLINEAR_FIELD_END(T, opset), QLINEAR_FIELD_END(T, axis),
                                     QLINEAR_FIELD_END(T, block_size), QLINEAR_FIELD_END(T, output_dtype),
                                     QLINEAR_FIELD_END(T, reserved)};
};
template <>
struct AttrFields<qlinear_dynamic_attrs> {
  using T = qlinear_dynamic_attrs;
  static constexpr const char* kName = "qlinear_dynamic_attrs";
  static constexpr size_t kEnds[] = {QLINEAR_FIELD_END(T, output_dtype), QLINEAR_FIELD_END(T, rule),
                                     QLINEAR_FIELD_END(T, granularity),  QLINEAR_FIELD_END(T, axis),
                                     QLINEAR_FIELD_END(T, block_size),   QLINEAR_FIELD_END(T, scale_dtype),
                                     QLINEAR_FIELD_END(T, reserved)};
};
// The _init functions and qlinear_quantize_attrs_for_dynamic write these structs' first
// layouts (qlinear.h), and never more bytes, so that a program built against this header can run
// with a later library. A longer layout needs init functions of its own: these asserts, on each
// first layout's last field by name, fail when a field is added after it.
template <class T>
constexpr bool EndsAt(size_t last_field_end) {
  return sizeof(T) - last_field_end < alignof(T);
}
static_assert(EndsAt<qlinear_quantize_attrs>(QLINEAR_FIELD_END(qlinear_quantize_attrs, precision)),
              "qlinear_quantize_attrs grew: see above");
static_assert(EndsAt<qlinear_dequantize_attrs>(QLINEAR_FIELD_END(qlinear_dequantize_attrs, reserved)),
              "qlinear_dequantize_attrs grew: see above");
static_assert(EndsAt<qlinear_dynamic_attrs>(QLINEAR_FIELD_END(qlinear_dynamic_attrs, reserved)),
              "qlinear_dynamic_attrs grew: see above");
static_assert(EndsAt<qlinear_parallel_options>(QLINEAR_FIELD_END(qlinear_parallel_options, runner_context)),
              "qlinear_parallel_options grew: see above");
#undef QLINEAR_FIELD_END

// Copies a caller's attribute struct over the defaults (older, smaller structs keep the
// defaults of the fields they do not have; newer, larger ones are read as far as we know).
template <class Attrs>
qlinear_status ReadAttrs(const Attrs* in, void (*init)(Attrs*), Attrs* out) {
  init(out);
  if (in == nullptr) return QLINEAR_OK;
  bool at_field = in->struct_size >= sizeof(Attrs);
  for (size_t end : AttrFields<Attrs>::kEnds) at_field = at_field || in->struct_size == end;
  if (!at_field) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "attrs: struct_size is %u, which does not end at a field of %s; initialise attributes with "
                "their _init function",
                static_cast<unsigned>(in->struct_size), AttrFields<Attrs>::kName);
  }
  const size_t n = in->struct_size < sizeof(Attrs) ? in->struct_size : sizeof(Attrs);
  std::memcpy(out, in, n);
  out->struct_size = sizeof(Attrs);
  return QLINEAR_OK;
}

// The largest byte count of any tensor or buffer of a call: PTRDIFF_MAX, so that it fits size_t
// and ptrdiff_t (no object is larger, and byte offsets are signed) and element counts and
// offsets derived from it never overflow int64_t.
constexpr uint64_t kMaxBytes = static_cast<uint64_t>(PTRDIFF_MAX);

// *bytes = the storage of `count` (>= 0) elements of t; a failure naming `name` when it exceeds
// kMaxBytes (a buffer wider per element than the tensor it mirrors, e.g. float32 y of int8 x).
qlinear_status CheckBytes(const char* name, DType t, int64_t count, uint64_t* bytes);

}  // namespace qlinear

#endif  // QLINEAR_LIB_PLAN_H_
