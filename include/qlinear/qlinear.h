/* qlinear: ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear, bit-exact, and
 * dynamic quantization (scales computed from the data: per tensor, axis, block, MX).
 *
 * This C header is the library's binary contract: enum values are never renumbered, structs that
 * may grow start with `struct_size` (set by their _init function: a smaller struct from an older
 * header keeps the defaults of the fields it lacks; a size that ends inside a field, or that
 * holds no field besides struct_size, is rejected; qlinear_parallel_options has had one layout
 * so far and rejects any size below it). The _init functions and
 * qlinear_quantize_attrs_for_dynamic write the layouts below and, in every later version, never
 * more bytes: a program built against this header may run with a later library. A later,
 * longer layout comes with init functions of its own.
 * It is C99-clean and has no dependency besides <stddef.h> and <stdint.h>.
 *
 * Conventions shared by every function below:
 * - Sizes are in elements unless the name says bytes. All indexing is 64-bit. Every byte count
 *   of a call -- each input tensor, the output (also of the whole tensor for range calls), dy
 *   and dx, the clamp mask -- must fit ptrdiff_t (PTRDIFF_MAX: the largest object); a shape
 *   whose element count fits but whose bytes would not in some input or output type is
 *   QLINEAR_INVALID_ARGUMENT naming that argument (e.g. float32 y of an int8 x of 2^62 elements).
 * - Tensors are dense, row-major, host-endian (little-endian on every supported CPU, as ONNX
 *   raw_data). Sub-byte types (uint4/int4/float4e2m1, uint2/int2) are packed over the whole
 *   flattened tensor, element 0 in the low bits; the padding bits of the last byte are written
 *   as zero.
 * - No alignment is required for any data pointer (tensor data, outputs, masks): they are read
 *   and written bytewise or with unaligned loads. (Typed pointers -- shapes, float* and
 *   uint8_t* results -- are aligned for their type, as C requires of any pointer.) Inputs are
 *   never read beyond their element count, outputs never written beyond the bytes the result
 *   occupies (which must fit in `y_bytes`).
 * - No output may share a byte with another output or with an input (inputs may share bytes):
 *   such a call is rejected with QLINEAR_INVALID_ARGUMENT naming both buffers.
 * - Every call validates all of its arguments before writing a single output byte. A rejected
 *   call returns a non-zero status, leaves the output untouched, and sets a message for the
 *   calling thread (qlinear_last_error) naming the argument and the rule. Whatever memory a
 *   call needs is allocated before its first output byte too: QLINEAR_OUT_OF_MEMORY also
 *   leaves the outputs untouched (OpenMP's team excepted: see qlinear_parallel_options).
 * - All functions are reentrant and thread-safe; no global state is written after the first
 *   call (Highway's choice of the CPU's target is made when the library is loaded). Each thread
 *   that calls keeps up to two scratch buffers between its calls, for the decoded per-group
 *   parameters of per-axis and blocked calls (up to 16 bytes per scale; none for 4-byte-aligned
 *   float32 scales without zero points in DequantizeLinear): at most 2 MiB per thread, freed
 *   when the thread exits. A call on the calling thread decodes at most 4096 scales at a time
 *   (for blocks along an outer axis, one row of them if longer); sets of more than 65536 scales
 *   are allocated for the call: such rows, per-axis scales of any axis but the outermost whose
 *   rows (the elements after the axis: 1 for the last axis) number fewer than 64 (not cut), and
 *   the tasks of a parallel call. The masked and backward calls decode their whole scale set for
 *   the call (up to 16 bytes per scale), and dynamic quantization of groups strided in memory (per
 *   axis with a dimension above 1 before the axis) keeps up to 36 bytes per group for the call;
 *   its parallel form (and that of per tensor) adds each task's partial statistics: up to 8
 *   bytes for each group a task touches, max(2^20, 64 x groups) groups in all (more tasks than
 *   that allows run the statistics in fewer, longer tasks), and about 150 bytes per task. A
 *   QuantizeLinear, DequantizeLinear, masked or backward call on an empty x decodes and
 *   allocates nothing.
 *   dlclose never unmaps the shared library (linked with -z nodelete): OpenMP's idle team and
 *   the threads' scratch destructors may run its code after a host's last call.
 *
 * Semantics in brief (docs/semantics.md gives every decision with its reason):
 * - QuantizeLinear: y = saturate(round_half_even(x / y_scale) + y_zero_point). The division is a
 *   true division (never a reciprocal product unless proven bit-identical) in the precision the
 *   opset defines: opset >= 23 the `precision` attribute if set, else y_scale's type; opsets 19
 *   and 21 x's type; float64 where no float precision is defined (int32 x with a float scale in
 *   opsets 10/13, int32 scales). float16/bfloat16 precision = float32 division rounded once (RNE).
 *   float8e8m0 scales divide in float32 (2^-127 is kept as a float32 subnormal).
 * - Integer outputs: +Inf -> qmax, -Inf -> qmin, NaN -> qmin, a zero scale follows from the
 *   division (x/0 = +-Inf or NaN), negative scales are allowed.
 * - float8 outputs: the zero point must be zero (it is not added, so -0 stays -0). saturate=1:
 *   |q| >= max and +-Inf give +-max; saturate=0: values that round beyond max and Inf give NaN
 *   (e4m3fn: 0x7F/0xFF, fnuz: 0x80) or +-Inf (e5m2). NaN gives 0x7F/0xFF (e4m3fn), 0x7E/0xFE
 *   (e5m2), 0x80 (fnuz types).
 * - float4e2m1 output: the zero point is added as a float before rounding; always saturating
 *   (+-Inf -> +-6); +NaN -> 0x8 and -NaN -> 0x0 (as the ONNX reference implementation).
 * - DequantizeLinear: y = float32(x - zero_point) * float32(scale), one float32 multiply, rounded
 *   once (RNE) to float16/bfloat16 outputs. int32, float8 and float4 inputs need a zero zero point.
 *
 * NaN results. A NaN quotient x / y_scale takes x's sign if x is NaN, else the scale's if the
 * scale is NaN; a NaN made by the division itself (0/0, +-Inf/+-Inf) is positive. (CPUs differ:
 * x86's default NaN is negative, ARM's positive; these bytes are the same on every CPU and
 * target.) So x = 0 with a zero scale gives float8e4m3fn 0x7F, float8e5m2 0x7E, float4e2m1 0x8.
 * The same for DequantizeLinear's product: the decoded x's NaN (a float8 NaN code decodes to
 * the quiet NaN of its sign bit, e4m3fn 0xFF to 0xFFC00000; the fnuz types' 0x80, whose sign
 * bit marks NaN rather than a sign, to 0x7FC00000), else the scale's (a float32
 * scale's payload kept, quieted; a float16, bfloat16 or e8m0 NaN scale decodes to the quiet NaN
 * of its sign, 0x7FC00000 or 0xFFC00000), else a positive NaN (0 * Inf, from an Inf scale or a
 * float8e5m2 Inf times a zero scale): float32 0x7FC00000, float16 0x7E00, bfloat16 0x7FC0. And for the backward pass's
 * dy * (lda / s): dy's NaN, else lda's, else a positive NaN (Inf * 0). (Calls whose scales can
 * make such NaNs -- DequantizeLinear with an Inf or NaN scale or a zero one with float8e5m2 x,
 * backward with lda / s zero, Inf or NaN -- run on the scalar path.)
 *
 * Floating-point environment. Results do not depend on the calling thread's floating-point
 * modes: every call runs with the IEEE defaults (round to nearest even, subnormals kept -- no
 * FTZ/DAZ, x86 MXCSR bits 15/6; no flush-to-zero or default-NaN mode, ARM FPCR FZ/FZ16/DN --,
 * exceptions masked) and restores the caller's modes before it returns, on the calling thread
 * and in every parallel task (OpenMP's workers and a caller's pool threads keep their own
 * modes between tasks). A caller's parallel_for itself runs on the calling thread with the
 * defaults in force (each time it is called; modes it leaves on that thread are reset when it
 * returns, and on x86 the x87 control word, which fesetround also sets and fegetround reads,
 * is put back as the caller had it); its own code on other threads, outside
 * qlinear's tasks, sees those threads' modes, and each task runs under the defaults. The modes
 * are read on entry and written only when they differ from the defaults. Exception flags raised
 * by a call stay set.
 */
#ifndef QLINEAR_QLINEAR_H_
#define QLINEAR_QLINEAR_H_

#include <stddef.h>
#include <stdint.h>

/* The version of this header; qlinear_version() gives the library's. The build reads these
 * three lines (CMake's project version). docs/abi.md: what a version change promises. */
#define QLINEAR_VERSION_MAJOR 0
#define QLINEAR_VERSION_MINOR 2
#define QLINEAR_VERSION_PATCH 0

#if defined(_WIN32) && defined(QLINEAR_SHARED)
#ifdef QLINEAR_BUILDING
#define QLINEAR_API __declspec(dllexport)
#else
#define QLINEAR_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define QLINEAR_API __attribute__((visibility("default")))
#else
#define QLINEAR_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Element types: the ONNX TensorProto.DataType codes. Only those listed are accepted. */
typedef enum qlinear_dtype {
  QLINEAR_DTYPE_UNDEFINED = 0,
  QLINEAR_DTYPE_FLOAT = 1, /* float32 */
  QLINEAR_DTYPE_UINT8 = 2,
  QLINEAR_DTYPE_INT8 = 3,
  QLINEAR_DTYPE_UINT16 = 4,
  QLINEAR_DTYPE_INT16 = 5,
  QLINEAR_DTYPE_INT32 = 6,
  QLINEAR_DTYPE_FLOAT16 = 10,
  QLINEAR_DTYPE_BFLOAT16 = 16,
  QLINEAR_DTYPE_FLOAT8E4M3FN = 17,
  QLINEAR_DTYPE_FLOAT8E4M3FNUZ = 18,
  QLINEAR_DTYPE_FLOAT8E5M2 = 19,
  QLINEAR_DTYPE_FLOAT8E5M2FNUZ = 20,
  QLINEAR_DTYPE_UINT4 = 21, /* packed, 2 per byte */
  QLINEAR_DTYPE_INT4 = 22,  /* packed, 2 per byte */
  QLINEAR_DTYPE_FLOAT4E2M1 = 23, /* packed, 2 per byte */
  QLINEAR_DTYPE_FLOAT8E8M0 = 24, /* scales only: 2^(b-127), 0xFF = NaN */
  QLINEAR_DTYPE_UINT2 = 25, /* packed, 4 per byte */
  QLINEAR_DTYPE_INT2 = 26   /* packed, 4 per byte */
} qlinear_dtype;

/* Call results. Values are stable. */
typedef enum qlinear_status {
  QLINEAR_OK = 0,
  QLINEAR_INVALID_ARGUMENT = 1,  /* null pointer, bad shape, attribute out of range, ... */
  QLINEAR_UNSUPPORTED_TYPE = 2,  /* a type the requested opset does not allow */
  QLINEAR_BUFFER_TOO_SMALL = 3,  /* y_bytes smaller than the result */
  QLINEAR_OUT_OF_MEMORY = 4,
  QLINEAR_INTERNAL_ERROR = 5
} qlinear_status;

/* Largest rank accepted (ONNX sets none; this bounds what a bad `rank` can make us read). */
#define QLINEAR_MAX_RANK 64

/* Opsets. QLINEAR_NEWEST_OPSET is the newest QuantizeLinear/DequantizeLinear version this
 * library implements (25), and what opset 0 means. Newer ai.onnx opsets up to
 * QLINEAR_NEWEST_KNOWN_OPSET kept both operators at that version and run as it; an opset
 * outside [QLINEAR_OLDEST_OPSET, QLINEAR_NEWEST_KNOWN_OPSET] (and not 0) is
 * QLINEAR_INVALID_ARGUMENT. */
#define QLINEAR_NEWEST_OPSET 25
#define QLINEAR_OLDEST_OPSET 10
#define QLINEAR_NEWEST_KNOWN_OPSET 28

/* A read-only tensor view. `shape` holds `rank` dimensions (may be NULL when rank is 0); `data`
 * holds the elements (may be NULL when there are none). Sub-byte types are packed. */
typedef struct qlinear_tensor {
  int32_t dtype; /* qlinear_dtype */
  int32_t rank;
  const int64_t* shape;
  const void* data;
} qlinear_tensor;

/* QuantizeLinear attributes. Initialise with qlinear_quantize_attrs_init (ONNX defaults), then
 * change fields. A NULL attrs pointer means all defaults. */
typedef struct qlinear_quantize_attrs {
  uint32_t struct_size; /* sizeof(qlinear_quantize_attrs) of the caller's header */
  int32_t opset;        /* the model's ai.onnx opset, 10..28; the operator version used is the
                           newest one <= opset. 0 = QLINEAR_NEWEST_OPSET. */
  int64_t axis;         /* default 1; negative counts from the back; per-axis/blocked only (ONNX
                           ignores it for per-tensor scales, where from opset 13 on it is not
                           checked); opset >= 13 */
  int64_t block_size;   /* default 0 (no blocking), else > 0; opset >= 21 */
  int32_t output_dtype; /* default 0 (from the zero point, else uint8); opset >= 21 */
  int32_t saturate;     /* default 1; 0 or 1 (other values are rejected, whatever the output
                           type); it only changes float8 outputs; opset >= 19 */
  int32_t precision;    /* default 0 (= y_scale's type); 1, 10 or 16; opset >= 23 */
} qlinear_quantize_attrs;

/* DequantizeLinear attributes, same conventions. */
typedef struct qlinear_dequantize_attrs {
  uint32_t struct_size;
  int32_t opset;
  int64_t axis;         /* default 1; opset >= 13 */
  int64_t block_size;   /* default 0; opset >= 21 */
  int32_t output_dtype; /* default 0 (= the scale's type); 1, 10 or 16; opset >= 23 */
  int32_t reserved;     /* must be 0 */
} qlinear_dequantize_attrs;

/* Fill with the ONNX defaults and struct_size. Never fails (NULL is ignored). */
QLINEAR_API void qlinear_quantize_attrs_init(qlinear_quantize_attrs* attrs);
QLINEAR_API void qlinear_dequantize_attrs_init(qlinear_dequantize_attrs* attrs);

/* QuantizeLinear. x: float32/float16/bfloat16/int32. y_scale: per-tensor (one element; before
 * opset 21 a scalar or 1-D, as the zero point), per-axis (1-D, length x.shape[axis]) or blocked
 * (x's rank, ceil(D/block_size) on the axis).
 * y_zero_point: NULL or the scale's shape (one-element shapes may differ for per-tensor); its
 * dtype is the output type. y receives x's element count in the output type, packed for
 * sub-byte types; y_bytes is the capacity of y in bytes (see qlinear_quantize_output_info). */
QLINEAR_API qlinear_status qlinear_quantize_linear(const qlinear_tensor* x,
                                                   const qlinear_tensor* y_scale,
                                                   const qlinear_tensor* y_zero_point,
                                                   const qlinear_quantize_attrs* attrs, void* y,
                                                   size_t y_bytes);

/* Validates a QuantizeLinear call without computing it: writes the output dtype and the number
 * of bytes the output occupies. Either out-pointer may be NULL. */
QLINEAR_API qlinear_status qlinear_quantize_output_info(const qlinear_tensor* x,
                                                        const qlinear_tensor* y_scale,
                                                        const qlinear_tensor* y_zero_point,
                                                        const qlinear_quantize_attrs* attrs,
                                                        int32_t* y_dtype, size_t* y_bytes);

/* DequantizeLinear. x: uint8/int8/int32 (all opsets), float8 (19+), uint16/int16/uint4/int4
 * (21+), float4e2m1 (23+), uint2/int2 (25). x_scale: float32; float16/bfloat16 (19+);
 * float8e8m0 (24+, needs output_dtype). x_zero_point: NULL or x's type, the scale's shape.
 * y: float32, or the scale's type (19+), or output_dtype (23+). */
QLINEAR_API qlinear_status qlinear_dequantize_linear(const qlinear_tensor* x,
                                                     const qlinear_tensor* x_scale,
                                                     const qlinear_tensor* x_zero_point,
                                                     const qlinear_dequantize_attrs* attrs,
                                                     void* y, size_t y_bytes);

QLINEAR_API qlinear_status qlinear_dequantize_output_info(const qlinear_tensor* x,
                                                          const qlinear_tensor* x_scale,
                                                          const qlinear_tensor* x_zero_point,
                                                          const qlinear_dequantize_attrs* attrs,
                                                          int32_t* y_dtype, size_t* y_bytes);

/* ---- Sharding and threads ----------------------------------------------------------------
 *
 * Sub-range: elements [first, first + count) of the flattened tensor, with the whole tensor's
 * scales and zero points (per-axis and blocked included). x describes the WHOLE tensor's dtype
 * and shape, but x->data points at element `first` (the caller's slice: count elements); y
 * receives exactly those count elements, y[0] being element `first`. Slices written by
 * different threads or ranks never share a byte: for 4-bit (2-bit) types `first` must be a
 * multiple of 2 (4) unless the slice is empty, and so must `count` unless the slice ends the
 * tensor. y_bytes: at least the storage of count elements. Same status and messages as the whole-tensor calls, plus
 * QLINEAR_INVALID_ARGUMENT naming `first`/`count` when the range is out of bounds or unaligned. */
QLINEAR_API qlinear_status qlinear_quantize_linear_range(const qlinear_tensor* x,
                                                         const qlinear_tensor* y_scale,
                                                         const qlinear_tensor* y_zero_point,
                                                         const qlinear_quantize_attrs* attrs,
                                                         int64_t first, int64_t count, void* y,
                                                         size_t y_bytes);
QLINEAR_API qlinear_status qlinear_dequantize_linear_range(const qlinear_tensor* x,
                                                           const qlinear_tensor* x_scale,
                                                           const qlinear_tensor* x_zero_point,
                                                           const qlinear_dequantize_attrs* attrs,
                                                           int64_t first, int64_t count, void* y,
                                                           size_t y_bytes);

/* A caller's parallel-for: must call task(task_context, i) once for every i in [0, task_count),
 * in any order and on any threads, and return when all have returned (a task called with an i
 * outside that range returns at once without touching anything; one called again after it
 * returned rewrites the same bytes; one index must not run on two threads at once). A runner
 * that returns having never started some tasks, or lets an exception escape (C++) once every
 * task it started has returned, ends the call with QLINEAR_INTERNAL_ERROR and a
 * message naming parallel_for: the tasks that ran may have written part of the outputs. Returning
 * or throwing while a task still runs is undefined behaviour. A runner may end the calling thread
 * (pthread_exit, or a cancellation it acts on) once its started tasks have returned: the call
 * ends with the thread, its outputs partly written. A dynamic quantization whose groups span the tensor
 * (per tensor, per axis strided in memory) calls parallel_for twice: statistics, then codes. */
typedef void (*qlinear_task_fn)(void* task_context, int64_t task_index);
typedef void (*qlinear_parallel_for_fn)(void* runner_context, int64_t task_count,
                                        qlinear_task_fn task, void* task_context);

typedef struct qlinear_parallel_options {
  size_t struct_size;           /* sizeof(qlinear_parallel_options); set by _init */
  int32_t max_threads;          /* tasks to split into at most, 0..QLINEAR_MAX_THREADS; 0: OpenMP's
                                   thread count, or 64. OpenMP's team is never larger than
                                   the number of tasks nor than omp_get_max_threads()
                                   (OMP_NUM_THREADS, else one per core). libgomp ends the process
                                   when it cannot allocate or start its team; a caller that needs
                                   QLINEAR_OUT_OF_MEMORY then passes its own parallel_for. */
  int64_t min_elements_per_task; /* 0: 262144; smaller tensors run on the calling thread */
  qlinear_parallel_for_fn parallel_for; /* NULL: OpenMP if built in (qlinear_openmp_enabled);
                                           in a child forked after this library's OpenMP team
                                           ran, whose threads the fork lost: serial */
  void* runner_context;         /* passed to parallel_for */
} qlinear_parallel_options;

/* Largest max_threads accepted (more is QLINEAR_INVALID_ARGUMENT). */
#define QLINEAR_MAX_THREADS 65536

QLINEAR_API void qlinear_parallel_options_init(qlinear_parallel_options* options);
/* 1 if the library was built with OpenMP (CMake option QLINEAR_OPENMP), else 0. */
QLINEAR_API int qlinear_openmp_enabled(void);

/* The whole-tensor calls split into tasks on 64-element boundaries (so no two tasks share an
 * output byte) and run through options->parallel_for, or OpenMP, or serially (options NULL,
 * neither available, or fewer than 2 * min_elements_per_task elements). Validation happens
 * once, before any task starts; results are identical to the serial calls. */
QLINEAR_API qlinear_status qlinear_quantize_linear_parallel(
    const qlinear_tensor* x, const qlinear_tensor* y_scale, const qlinear_tensor* y_zero_point,
    const qlinear_quantize_attrs* attrs, void* y, size_t y_bytes,
    const qlinear_parallel_options* options);
QLINEAR_API qlinear_status qlinear_dequantize_linear_parallel(
    const qlinear_tensor* x, const qlinear_tensor* x_scale, const qlinear_tensor* x_zero_point,
    const qlinear_dequantize_attrs* attrs, void* y, size_t y_bytes,
    const qlinear_parallel_options* options);

/* DynamicQuantizeLinear (opset 11): float32 x (at least one element) -> uint8 y (x's element
 * count bytes), float32 scale and uint8 zero point. range = max(x, 0) - min(x, 0);
 * scale = range / 255 (all-zero input: 1/255, as the ONNX reference); zero point =
 * round_half_even(clamp(-min/scale, 0, 255)); y = QuantizeLinear(x, scale, zero point).
 * NaN elements are ignored for the range and quantize to 0. The formula is kept at the edges:
 * an Inf element makes the range Inf, so scale = +Inf, zero point 0 and every y is 0; a range
 * of at most 255 * 2^-150 (subnormal elements only) rounds the scale to 0: the zero point is 255
 * if min(x) < 0, else 0, and y is 255 where x > 0, 0 elsewhere (x / 0 saturated; 0 / 0 is NaN). */
QLINEAR_API qlinear_status qlinear_dynamic_quantize_linear(const qlinear_tensor* x, uint8_t* y,
                                                           size_t y_bytes, float* y_scale,
                                                           uint8_t* y_zero_point);

/* ---- Dynamic quantization: scales computed from the data ------------------------------------
 *
 * qlinear_quantize_dynamic splits x into groups (the whole tensor, one group per index along an
 * axis, or blocks of block_size elements along an axis), computes each group's scale (and, for
 * MINMAX, zero point) from the group's values, writes them, and quantizes x with them. The three
 * outputs have exactly the layout QuantizeLinear/DequantizeLinear opset 25 take as inputs:
 *   y             x's shape in output_dtype, packed for sub-byte types;
 *   y_scale       per tensor: one element; per axis: [x.shape[axis]]; blocked: x's shape with
 *                 ceil(x.shape[axis] / block_size) on the axis; in scale_dtype;
 *   y_zero_point  MINMAX only: the scale's shape, in output_dtype (packed for sub-byte types).
 * Defining property: y equals qlinear_quantize_linear (opset 25, saturate 1, precision float32
 * whatever x's type; qlinear_quantize_attrs_for_dynamic fills these) called with the y_scale and
 * y_zero_point that were written, on every target.
 *
 * Per group, P = the output type's largest value (int8/16/4/2: 127, 32767, 7, 1; float8e4m3fn
 * 448, e4m3fnuz 240, e5m2 and e5m2fnuz 57344; float4e2m1 6), emax = floor(log2 P), and amax =
 * the largest |x|, lo = min(0, min x), hi = max(0, max x) of the group:
 *   ABSMAX     signed outputs. scale = amax / P, rounded once (to nearest even) from the exact
 *              quotient to scale_dtype (float32, float16 or bfloat16). No zero point.
 *   MINMAX     integer outputs. s = fl32(fl32(hi - lo) / (qmax - qmin)), rounded to scale_dtype;
 *              zero point = rint(clamp(qmin - fl32(lo / s), qmin, qmax)) in float32 with that
 *              rounded s (DynamicQuantizeLinear's formula for any integer type).
 *   MX         signed outputs, OCP Microscaling v1.0: float8e8m0 scale 2^e, e = floor(log2 amax)
 *              - emax clamped to [-127, 127] (for int8 this is MXINT8's scale times 2^-6: the
 *              ONNX scale, value = code * scale).
 *   POW2_CEIL  signed outputs: float8e8m0 scale 2^e, the smallest e with 2^e * P >= amax (exact
 *              comparison), same clamp: no element saturates, except where the clamp bites
 *              (int2, P = 1, amax above 2^127: those elements saturate).
 * Edge rules:
 * - ABSMAX and MINMAX leave NaN and +-Inf out of amax, lo and hi; those elements quantize by
 *   QuantizeLinear's rules with the group's scale (integers: NaN -> qmin, +-Inf -> qmax/qmin).
 * - A group whose range is 0 (all zeros, empty, or nothing finite) gets the scale a range of 1
 *   gives: 1/P (ABSMAX), 1/(qmax - qmin) (MINMAX: 1/255 for uint8, as DynamicQuantizeLinear).
 * - A scale that rounds to 0 becomes the scale type's smallest positive subnormal (2^-149,
 *   2^-24, 2^-133 for float32, float16, bfloat16); one that overflows its largest finite value.
 * - MX and POW2_CEIL: a group holding NaN or +-Inf gets the NaN scale 0xFF (a positive NaN),
 *   so its elements quantize as NaN quotients by QuantizeLinear's rules (integers qmin, float8
 *   the NaN code, float4e2m1 0x8; a NaN x keeps its own sign); amax = 0 gives code 0 (2^-127).
 * x: float32, float16 or bfloat16, any shape (float16/bfloat16 values are exact in float32).
 */

/* Values are stable; 0 means "not set" and is rejected. */
typedef enum qlinear_scale_rule {
  QLINEAR_SCALE_ABSMAX = 1,
  QLINEAR_SCALE_MINMAX = 2,
  QLINEAR_SCALE_MX = 3,
  QLINEAR_SCALE_POW2_CEIL = 4
} qlinear_scale_rule;

typedef enum qlinear_granularity {
  QLINEAR_GRANULARITY_TENSOR = 1, /* one scale */
  QLINEAR_GRANULARITY_AXIS = 2,   /* one scale per index along axis (per row of [M, K]: axis 0) */
  QLINEAR_GRANULARITY_BLOCK = 3   /* one scale per block_size elements along axis */
} qlinear_granularity;

/* Initialise with qlinear_dynamic_attrs_init, then set output_dtype (and change the rest). */
typedef struct qlinear_dynamic_attrs {
  uint32_t struct_size; /* sizeof(qlinear_dynamic_attrs) of the caller's header */
  int32_t output_dtype; /* required (0 is rejected): a QuantizeLinear output type */
  int32_t rule;         /* qlinear_scale_rule; default QLINEAR_SCALE_ABSMAX */
  int32_t granularity;  /* qlinear_granularity; default QLINEAR_GRANULARITY_BLOCK */
  int64_t axis;         /* default -1 (negative counts from the back); AXIS and BLOCK only */
  int64_t block_size;   /* default 32; must be > 0 with BLOCK and 0 otherwise (a struct that
                           ends before this field: 32 with BLOCK, else 0) */
  int32_t scale_dtype;  /* default 0: the rule's (float8e8m0 for MX and POW2_CEIL, else float32);
                           ABSMAX/MINMAX: float32, float16 or bfloat16; MX/POW2_CEIL: float8e8m0 */
  int32_t reserved;     /* must be 0 */
} qlinear_dynamic_attrs;

QLINEAR_API void qlinear_dynamic_attrs_init(qlinear_dynamic_attrs* attrs);

/* Validates x (x->data is not read and may be NULL) and attrs and writes the bytes each output
 * occupies (y_zero_point_bytes is 0 unless the rule is MINMAX). Any out-pointer may be NULL. The
 * number of groups (scale elements) is y_scale_bytes / the scale type's size (4, 2 or 1). */
QLINEAR_API qlinear_status qlinear_quantize_dynamic_output_info(const qlinear_tensor* x,
                                                                const qlinear_dynamic_attrs* attrs,
                                                                size_t* y_bytes,
                                                                size_t* y_scale_bytes,
                                                                size_t* y_zero_point_bytes);

/* Computes the scales (and zero points) and y. y_zero_point must be non-NULL for MINMAX and NULL
 * for the other rules. *_bytes are the capacities. Blocked and per-row groups are computed and
 * quantized while in cache (one pass over x); per tensor and per axis with groups strided in
 * memory (e.g. per column) read x twice. */
QLINEAR_API qlinear_status qlinear_quantize_dynamic(const qlinear_tensor* x,
                                                    const qlinear_dynamic_attrs* attrs, void* y,
                                                    size_t y_bytes, void* y_scale,
                                                    size_t y_scale_bytes, void* y_zero_point,
                                                    size_t y_zero_point_bytes);

/* The same split into tasks on group boundaries (qlinear_parallel_options as for
 * qlinear_quantize_linear_parallel); identical bytes to qlinear_quantize_dynamic. */
QLINEAR_API qlinear_status qlinear_quantize_dynamic_parallel(
    const qlinear_tensor* x, const qlinear_dynamic_attrs* attrs, void* y, size_t y_bytes,
    void* y_scale, size_t y_scale_bytes, void* y_zero_point, size_t y_zero_point_bytes,
    const qlinear_parallel_options* options);

/* The QuantizeLinear attributes that reproduce a dynamic quantization from its y_scale and
 * y_zero_point: opset 25, axis, block_size, output_dtype, saturate 1, precision float32. */
QLINEAR_API qlinear_status qlinear_quantize_attrs_for_dynamic(const qlinear_dynamic_attrs* attrs,
                                                              qlinear_quantize_attrs* out);

/* ---- Dynamic quantization of sharded tensors (threads, MPI ranks) ---------------------------
 *
 * When each shard holds whole groups (e.g. rows of [M, K] with per-row or blocked-along-K
 * scales), every shard simply calls qlinear_quantize_dynamic on its own slice. When groups span
 * shards (per tensor, per column, blocks along a sharded axis), the scales depend on every
 * shard's data; three steps give the single-process bytes exactly:
 *   1. qlinear_dynamic_ranges on each shard: 2 floats per group, over the shard's elements;
 *   2. reduce them across shards with max (MPI_Allreduce(MPI_IN_PLACE, ranges, 2 * groups,
 *      MPI_FLOAT, MPI_MAX, comm));
 *   3. qlinear_dynamic_scales with the reduced ranges on every shard (same y_scale and
 *      y_zero_point as qlinear_quantize_dynamic of the whole tensor), then
 *      qlinear_quantize_linear_range on the shard with those scales and the attributes of
 *      qlinear_quantize_attrs_for_dynamic.
 * docs/examples/mpi_dynamic.c does this for per-column uint4 MINMAX scales over 2 ranks.
 */

/* Per-group ranges of elements [first, first + count) of the flattened x (x describes the WHOLE
 * tensor's dtype and shape; x->data points at element `first`, as in the _range calls).
 * ranges: 2 floats per group of the whole tensor (ranges_bytes >= 8 * groups), all written:
 *   ABSMAX          ranges[2g] = ranges[2g + 1] = amax over the slice's finite elements of g;
 *   MX, POW2_CEIL   the same, +Inf when the slice holds a NaN or +-Inf of group g;
 *   MINMAX          ranges[2g] = -lo, ranges[2g + 1] = hi (finite elements of g in the slice);
 * 0 for groups with no element in the slice. Every entry is >= +0: the element-wise max of the
 * arrays of disjoint slices is the array of their union. */
QLINEAR_API qlinear_status qlinear_dynamic_ranges(const qlinear_tensor* x,
                                                  const qlinear_dynamic_attrs* attrs,
                                                  int64_t first, int64_t count, float* ranges,
                                                  size_t ranges_bytes);

/* Writes only y_scale and y_zero_point (as qlinear_quantize_dynamic does). ranges NULL: from x's
 * elements (the whole tensor). ranges non-NULL: from those ranges (layout of
 * qlinear_dynamic_ranges; entries must be >= 0 and not NaN); x->data is then not read and may be
 * NULL. */
QLINEAR_API qlinear_status qlinear_dynamic_scales(const qlinear_tensor* x,
                                                  const qlinear_dynamic_attrs* attrs,
                                                  const float* ranges, size_t ranges_bytes,
                                                  void* y_scale, size_t y_scale_bytes,
                                                  void* y_zero_point, size_t y_zero_point_bytes);

/* ---- Training: QuantizeLinear's backward pass (straight-through estimator) ----------------------
 *
 * Forward y = Q(x) as qlinear_quantize_linear. With q = x / s (the division of the forward pass,
 * in its precision, s = the element's scale by the same granularity rules), element i is
 * "clamped" when
 *   - integer outputs: q is NaN, or round_half_even(q) + zp lies outside [qmin, qmax];
 *   - float8 outputs: q is NaN or |q| > the format's largest finite value (with saturate=1 such
 *     values were clamped to +-max; with saturate=0 they became NaN/Inf; both pass no gradient);
 *   - float4e2m1: the same test on q + zp.
 * The backward pass writes
 *   dx[i] = clamped ? +0 : dy[i] * (lda / s)          (float32: lda / s rounded once per scale
 *                                                      element, one product, then one rounding
 *                                                      to dx's type, which is dy's type)
 * i.e. the derivative of x / s where the quantizer passes x through, and 0 where it saturates.
 * Dividing by the scale (rather than passing dy unchanged) is the derivative of the forward
 * x / s, with s as that division uses it: converted to the precision type when `precision`
 * differs from the scale's type (a float32 scale with precision float16 is rounded). A caller
 * that wants plain STE passes lda = that s for per-tensor scales (the scale itself when it is
 * not rounded).
 * dy and dx: float32, float16 or bfloat16, x's shape; dx_bytes >= elements * sizeof(element).
 * clamp_mask: 1 bit per element (bit i % 8 of byte i / 8, 1 = clamped), ceil(n / 8) bytes.
 */

/* QuantizeLinear that also records the clamp mask (mask_bytes >= ceil(elements / 8)). y is
 * identical to qlinear_quantize_linear's. */
QLINEAR_API qlinear_status qlinear_quantize_linear_masked(const qlinear_tensor* x,
                                                          const qlinear_tensor* y_scale,
                                                          const qlinear_tensor* y_zero_point,
                                                          const qlinear_quantize_attrs* attrs,
                                                          void* y, size_t y_bytes,
                                                          uint8_t* clamp_mask, size_t mask_bytes);

/* The backward pass. clamp_mask: NULL to recompute the clamp test from x, or the mask recorded
 * by qlinear_quantize_linear_masked with the same arguments (both give identical dx). */
QLINEAR_API qlinear_status qlinear_quantize_linear_backward(
    const qlinear_tensor* x, const qlinear_tensor* y_scale, const qlinear_tensor* y_zero_point,
    const qlinear_quantize_attrs* attrs, const qlinear_tensor* dy, float lda,
    const uint8_t* clamp_mask, size_t mask_bytes, void* dx, size_t dx_bytes);

/* "float32", "int4", ... for a dtype code; "unknown" otherwise (QLINEAR_DTYPE_UNDEFINED included).
 * Static storage. */
QLINEAR_API const char* qlinear_dtype_name(int32_t dtype);

/* "ok", "invalid argument", ... Static storage. */
QLINEAR_API const char* qlinear_status_name(qlinear_status status);

/* The message of the calling thread's last failed call ("" if none since the thread's last
 * successful call). Valid until the thread's next qlinear call. */
QLINEAR_API const char* qlinear_last_error(void);

/* "MAJOR.MINOR.PATCH". Static storage. */
QLINEAR_API const char* qlinear_version(void);

/* Name of the SIMD target that a call made now would run on (e.g. "AVX3", "NEON", "SCALAR"),
 * the pinned one if any (qlinear_set_target). With an invalid QLINEAR_TARGET (below), computing
 * calls fail, and this names the CPU's best target (theirs after qlinear_set_target(NULL)).
 * Static storage. */
QLINEAR_API const char* qlinear_active_target(void);

/* Pins every later call of the process to one SIMD target, named as qlinear_compiled_targets
 * spells it, in either case ("AVX2" or "avx2", "SSE4", "NEON", "SVE2", "SCALAR", ...): to
 * benchmark one target, or to reproduce a target's results on a CPU that has a better one (all
 * targets give identical results). NULL or "" unpins: the best target this CPU supports. The
 * environment variable QLINEAR_TARGET=<name> sets the same pin, read once: by the first call
 * that computes, names the target (qlinear_active_target) or pins one; an invalid value there
 * makes every call that computes fail with INVALID_ARGUMENT naming the variable, until this
 * function is called. Fails with INVALID_ARGUMENT (pin unchanged) for a target that is not
 * compiled in or that this CPU cannot run. Thread-safe; affects only qlinear, not a host's own
 * use of Highway. */
QLINEAR_API qlinear_status qlinear_set_target(const char* name);

/* The environment variable QLINEAR_QUANTIZE_PATH=division|reciprocal (either case) forces one
 * of QuantizeLinear's two exact float32 paths (dividing, or multiplying by 1/scale and dividing
 * only near rounding boundaries; both give identical results, only speed differs; unset or
 * empty: the target's own choice, docs/exactness.md). Read once, by the first call that quantizes
 * (QuantizeLinear in every form, its backward pass, dynamic quantization; a call that does not
 * quantize leaves it unread); any other value makes every call that quantizes fail with
 * INVALID_ARGUMENT naming the variable. */

/* Space-separated names of the SIMD targets compiled into the library, best first, and of
 * those this CPU can run. Valid until the calling thread's next call of the same function. */
QLINEAR_API const char* qlinear_compiled_targets(void);
QLINEAR_API const char* qlinear_supported_targets(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QLINEAR_QLINEAR_H_ */
