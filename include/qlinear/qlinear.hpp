// qlinear C++ API: a header-only layer over the C ABI in qlinear.h (which holds the contract:
// semantics, aliasing, alignment, thread safety). Calls return a Status; nothing throws but
// std::bad_alloc, where the memory for a Status message or a TensorView shape of rank above 8
// cannot be allocated (QuantizeDynamic's own outputs: a QLINEAR_OUT_OF_MEMORY status).
#ifndef QLINEAR_QLINEAR_HPP_
#define QLINEAR_QLINEAR_HPP_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "qlinear/qlinear.h"

// Built without exceptions (-fno-exceptions), the layer has no try/catch: a ParallelFor cannot
// throw, and a failed allocation ends the program as the build chose.
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define QLINEAR_HPP_EXCEPTIONS 1
#else
#define QLINEAR_HPP_EXCEPTIONS 0
#endif

namespace qlinear {

// ONNX TensorProto.DataType codes, as in qlinear_dtype.
enum class DataType : int32_t {
  kUndefined = QLINEAR_DTYPE_UNDEFINED,  // "not set" in attributes (output_dtype, precision)
  kFloat = QLINEAR_DTYPE_FLOAT,
  kUint8 = QLINEAR_DTYPE_UINT8,
  kInt8 = QLINEAR_DTYPE_INT8,
  kUint16 = QLINEAR_DTYPE_UINT16,
  kInt16 = QLINEAR_DTYPE_INT16,
  kInt32 = QLINEAR_DTYPE_INT32,
  kFloat16 = QLINEAR_DTYPE_FLOAT16,
  kBFloat16 = QLINEAR_DTYPE_BFLOAT16,
  kFloat8E4M3FN = QLINEAR_DTYPE_FLOAT8E4M3FN,
  kFloat8E4M3FNUZ = QLINEAR_DTYPE_FLOAT8E4M3FNUZ,
  kFloat8E5M2 = QLINEAR_DTYPE_FLOAT8E5M2,
  kFloat8E5M2FNUZ = QLINEAR_DTYPE_FLOAT8E5M2FNUZ,
  kUint4 = QLINEAR_DTYPE_UINT4,
  kInt4 = QLINEAR_DTYPE_INT4,
  kFloat4E2M1 = QLINEAR_DTYPE_FLOAT4E2M1,
  kFloat8E8M0 = QLINEAR_DTYPE_FLOAT8E8M0,
  kUint2 = QLINEAR_DTYPE_UINT2,
  kInt2 = QLINEAR_DTYPE_INT2,
};

inline const char* Name(DataType t) { return qlinear_dtype_name(static_cast<int32_t>(t)); }

// A call's result: the C status and, on failure, the message naming the argument and the rule.
class Status {
 public:
  Status() = default;
  Status(qlinear_status code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status FromC(qlinear_status code) {
    Status s;
    s.code_ = code;
    if (code != QLINEAR_OK) s.message_ = qlinear_last_error();
    return s;
  }
  bool ok() const { return code_ == QLINEAR_OK; }
  explicit operator bool() const { return ok(); }
  qlinear_status code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  qlinear_status code_ = QLINEAR_OK;
  std::string message_;
};

// A read-only view of a dense tensor. The data is the caller's and must outlive the view. The
// shape is the view's own copy when given as a braced list or a vector (TensorView(kFloat,
// {2, 4}, p) is safe to keep), and the caller's when given as a pointer and a rank.
class TensorView {
 public:
  DataType dtype = DataType::kFloat;
  const int64_t* shape = nullptr;  // points into the view itself, or at the caller's dims
  int32_t rank = 0;
  const void* data = nullptr;

  TensorView() = default;
  TensorView(DataType t, std::initializer_list<int64_t> dims, const void* d)
      : dtype(t), data(d) {
    Own(dims.begin(), dims.size());
  }
  TensorView(DataType t, const std::vector<int64_t>& dims, const void* d) : dtype(t), data(d) {
    Own(dims.data(), dims.size());
  }
  // Borrows dims: they must outlive the view.
  TensorView(DataType t, const int64_t* dims, int32_t r, const void* d)
      : dtype(t), shape(dims), rank(r), data(d) {}

  TensorView(const TensorView& o) { *this = o; }
  TensorView& operator=(const TensorView& o) {
    if (this == &o) return *this;
    dtype = o.dtype;
    data = o.data;
    // A shape in o's storage, or in this view's (o borrowed our own dims), is copied, wherever
    // in it o.shape points. A rank beyond the dims held from there copies no shape: the C API
    // then rejects the view by its rank.
    const TensorView* holder = o.Within(o.shape) ? &o : Within(o.shape) ? this : nullptr;
    if (holder == nullptr) {
      Drop();
      shape = o.shape;
      rank = o.rank;
    } else if (o.rank >= 0 && static_cast<size_t>(o.rank) <= holder->HeldFrom(o.shape)) {
      Own(o.shape, static_cast<size_t>(o.rank));
    } else {
      const int32_t r = o.rank;
      Drop();
      shape = nullptr;
      rank = r;
    }
    return *this;
  }

  qlinear_tensor c() const { return qlinear_tensor{static_cast<int32_t>(dtype), rank, shape, data}; }

 private:
  static constexpr size_t kInlineRank = 8;
  // How many of the n slots from b on p points past (p - b + 1 .. n: the count left), or 0.
  static size_t Left(const int64_t* p, const int64_t* b, size_t n) {
    const std::less<const int64_t*> before{};
    return p != nullptr && n != 0 && !before(p, b) && before(p, b + n) ? static_cast<size_t>(b + n - p) : 0;
  }
  // Whether p points into this view's storage for dims (its inline slots or its heap dims).
  bool Within(const int64_t* p) const { return Left(p, inline_, kInlineRank) != 0 || Left(p, heap_.data(), heap_.size()) != 0; }
  // How many dims this view holds from p on; 0 where p points at none of them (slots beyond the
  // dims it was given hold nothing).
  size_t HeldFrom(const int64_t* p) const {
    const size_t in_inline = Left(p, inline_, inline_count_);
    return in_inline != 0 ? in_inline : Left(p, heap_.data(), heap_.size());
  }
  void Drop() {
    heap_.clear();
    inline_count_ = 0;
  }
  void Own(const int64_t* dims, size_t n) {
    rank = static_cast<int32_t>(n);
    if (n <= kInlineRank) {
      int64_t copy[kInlineRank] = {};
      for (size_t i = 0; i < n; ++i) copy[i] = dims[i];  // dims may be our own heap_
      heap_.clear();
      for (size_t i = 0; i < kInlineRank; ++i) inline_[i] = copy[i];  // no dims of an older shape stay
      inline_count_ = n;
      shape = inline_;
    } else {
      std::vector<int64_t> copy(dims, dims + n);  // dims may be our own heap_
      heap_.swap(copy);
      inline_count_ = 0;
      shape = heap_.data();
    }
  }
  int64_t inline_[kInlineRank] = {};
  size_t inline_count_ = 0;  // dims held in inline_
  std::vector<int64_t> heap_;
};

// A dtype-valued attribute (output_dtype, precision): takes a DataType, or a raw ONNX code as
// int32_t (so code written for the int32_t field keeps compiling); 0 = not set.
class TypeCode {
 public:
  TypeCode() = default;
  TypeCode(DataType t) : code_(static_cast<int32_t>(t)) {}  // NOLINT: implicit by design
  TypeCode(int32_t code) : code_(code) {}                    // NOLINT: implicit by design
  // Not from a bool or a floating-point value (they would convert silently to a code).
  template <class T, class = typename std::enable_if<std::is_floating_point<T>::value ||
                                                     std::is_same<T, bool>::value>::type>
  TypeCode(T) = delete;
  operator int32_t() const { return code_; }                 // NOLINT: implicit by design
  DataType type() const { return static_cast<DataType>(code_); }
  friend bool operator==(TypeCode a, DataType b) { return a.code_ == static_cast<int32_t>(b); }
  friend bool operator!=(TypeCode a, DataType b) { return !(a == b); }
  friend bool operator==(DataType a, TypeCode b) { return b == a; }
  friend bool operator!=(DataType a, TypeCode b) { return !(b == a); }

 private:
  int32_t code_ = 0;
};

// QuantizeLinear attributes with the ONNX defaults (opset 0 = newest).
struct QuantizeAttrs {
  int32_t opset = 0;
  int64_t axis = 1;
  int64_t block_size = 0;
  TypeCode output_dtype;  // not set: from the zero point, else uint8
  bool saturate = true;
  TypeCode precision;     // not set: y_scale's type
  qlinear_quantize_attrs c() const {
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.opset = opset;
    a.axis = axis;
    a.block_size = block_size;
    a.output_dtype = output_dtype;
    a.saturate = saturate ? 1 : 0;
    a.precision = precision;
    return a;
  }
};

struct DequantizeAttrs {
  int32_t opset = 0;
  int64_t axis = 1;
  int64_t block_size = 0;
  TypeCode output_dtype;  // not set: the scale's type
  qlinear_dequantize_attrs c() const {
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.opset = opset;
    a.axis = axis;
    a.block_size = block_size;
    a.output_dtype = output_dtype;
    return a;
  }
};

// General QuantizeLinear; zero_point may be nullptr. y_bytes: capacity of y.
inline Status QuantizeLinear(const TensorView& x, const TensorView& scale,
                             const TensorView* zero_point, const QuantizeAttrs& attrs, void* y,
                             size_t y_bytes) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_quantize_attrs ca = attrs.c();
  return Status::FromC(
      qlinear_quantize_linear(&cx, &cs, zero_point ? &cz : nullptr, &ca, y, y_bytes));
}

inline Status DequantizeLinear(const TensorView& x, const TensorView& scale,
                               const TensorView* zero_point, const DequantizeAttrs& attrs, void* y,
                               size_t y_bytes) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_dequantize_attrs ca = attrs.c();
  return Status::FromC(
      qlinear_dequantize_linear(&cx, &cs, zero_point ? &cz : nullptr, &ca, y, y_bytes));
}

// QuantizeLinear that also records the clamp mask (1 bit per element; see qlinear.h "Training").
inline Status QuantizeLinearMasked(const TensorView& x, const TensorView& scale,
                                   const TensorView* zero_point, const QuantizeAttrs& attrs,
                                   void* y, size_t y_bytes, uint8_t* clamp_mask, size_t mask_bytes) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_quantize_attrs ca = attrs.c();
  return Status::FromC(qlinear_quantize_linear_masked(&cx, &cs, zero_point ? &cz : nullptr, &ca,
                                                      y, y_bytes, clamp_mask, mask_bytes));
}

// Backward pass: dx = clamped ? 0 : dy * (lda / scale), dx in dy's type (qlinear.h "Training").
// clamp_mask: nullptr to recompute from x, or the mask of QuantizeLinearMasked.
inline Status QuantizeLinearBackward(const TensorView& x, const TensorView& scale,
                                     const TensorView* zero_point, const QuantizeAttrs& attrs,
                                     const TensorView& dy, float lda, const uint8_t* clamp_mask,
                                     size_t mask_bytes, void* dx, size_t dx_bytes) {
  const qlinear_tensor cx = x.c(), cs = scale.c(), cdy = dy.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_quantize_attrs ca = attrs.c();
  return Status::FromC(qlinear_quantize_linear_backward(&cx, &cs, zero_point ? &cz : nullptr, &ca,
                                                        &cdy, lda, clamp_mask, mask_bytes, dx,
                                                        dx_bytes));
}

// ---- Sharding and threads (qlinear.h "Sharding and threads") ----------------------------------

// Elements [first, first + count) of the flattened tensor x (x.data points at element `first`),
// with the whole tensor's scales and zero points.
inline Status QuantizeLinearRange(const TensorView& x, const TensorView& scale,
                                  const TensorView* zero_point, const QuantizeAttrs& attrs,
                                  int64_t first, int64_t count, void* y, size_t y_bytes) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_quantize_attrs ca = attrs.c();
  return Status::FromC(qlinear_quantize_linear_range(&cx, &cs, zero_point ? &cz : nullptr, &ca,
                                                     first, count, y, y_bytes));
}

inline Status DequantizeLinearRange(const TensorView& x, const TensorView& scale,
                                    const TensorView* zero_point, const DequantizeAttrs& attrs,
                                    int64_t first, int64_t count, void* y, size_t y_bytes) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_dequantize_attrs ca = attrs.c();
  return Status::FromC(qlinear_dequantize_linear_range(&cx, &cs, zero_point ? &cz : nullptr, &ca,
                                                       first, count, y, y_bytes));
}

// The runner of a thread pool: must call task(i) once for every i in [0, count), on any threads,
// and return when all have returned; it may throw only once every task it started has returned.
// Such an exception ends the call with QLINEAR_INTERNAL_ERROR naming it (tasks that ran may have
// written part of the output).
using ParallelFor = std::function<void(int64_t count, const std::function<void(int64_t)>& task)>;

struct ParallelOptions {
  int32_t max_threads = 0;            // 0: OpenMP's thread count, or 64
  int64_t min_elements_per_task = 0;  // 0: the library default (qlinear.h)
  ParallelFor parallel_for;           // empty: OpenMP if built in, else serial
};

namespace detail {
// Calls the caller's ParallelFor for the C library. An exception it throws is noted and rethrown:
// the library ends the call there (QLINEAR_INTERNAL_ERROR), and Result names the exception.
struct Runner {
  const ParallelFor* parallel_for;
  bool threw = false;
  char what[200] = {};
  static void Run(void* self, int64_t count, qlinear_task_fn task, void* task_context) {
    Runner* r = static_cast<Runner*>(self);
#if QLINEAR_HPP_EXCEPTIONS
    try {
      (*r->parallel_for)(count, [=](int64_t i) { task(task_context, i); });
    } catch (const std::exception& e) {
      r->Threw(e.what());
      throw;
    } catch (...) {
      r->Threw("an exception that is not a std::exception");
      throw;
    }
#else
    (*r->parallel_for)(count, [=](int64_t i) { task(task_context, i); });
#endif
  }
  void Threw(const char* message) {
    threw = true;
    std::strncpy(what, message, sizeof(what) - 1);
  }
  Status Result(qlinear_status code) const {
    if (!threw) return Status::FromC(code);
    return Status(QLINEAR_INTERNAL_ERROR, std::string("parallel_for: threw (") + what +
                                              "); the output may be partly written");
  }
};
inline qlinear_parallel_options ParallelC(const ParallelOptions& o, Runner* runner) {
  qlinear_parallel_options c;
  qlinear_parallel_options_init(&c);
  c.max_threads = o.max_threads;
  c.min_elements_per_task = o.min_elements_per_task;
  if (o.parallel_for) {
    runner->parallel_for = &o.parallel_for;
    c.parallel_for = Runner::Run;
    c.runner_context = runner;
  }
  return c;
}
}  // namespace detail

inline Status QuantizeLinearParallel(const TensorView& x, const TensorView& scale,
                                     const TensorView* zero_point, const QuantizeAttrs& attrs,
                                     void* y, size_t y_bytes, const ParallelOptions& options = {}) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_quantize_attrs ca = attrs.c();
  detail::Runner runner{nullptr};
  const qlinear_parallel_options co = detail::ParallelC(options, &runner);
  return runner.Result(qlinear_quantize_linear_parallel(&cx, &cs, zero_point ? &cz : nullptr, &ca,
                                                        y, y_bytes, &co));
}

inline Status DequantizeLinearParallel(const TensorView& x, const TensorView& scale,
                                       const TensorView* zero_point, const DequantizeAttrs& attrs,
                                       void* y, size_t y_bytes,
                                       const ParallelOptions& options = {}) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const qlinear_dequantize_attrs ca = attrs.c();
  detail::Runner runner{nullptr};
  const qlinear_parallel_options co = detail::ParallelC(options, &runner);
  return runner.Result(qlinear_dequantize_linear_parallel(&cx, &cs, zero_point ? &cz : nullptr,
                                                          &ca, y, y_bytes, &co));
}

inline bool OpenMPEnabled() { return qlinear_openmp_enabled() != 0; }

namespace detail {
template <class T> struct QType;
template <> struct QType<uint8_t> { static constexpr DataType kType = DataType::kUint8; };
template <> struct QType<int8_t> { static constexpr DataType kType = DataType::kInt8; };
template <> struct QType<uint16_t> { static constexpr DataType kType = DataType::kUint16; };
template <> struct QType<int16_t> { static constexpr DataType kType = DataType::kInt16; };

// Bits per element and signedness of the integer types; 0 bits for the others.
inline int IntegerBits(DataType t, bool* is_signed) {
  *is_signed = t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32 ||
               t == DataType::kInt4 || t == DataType::kInt2;
  switch (t) {
    case DataType::kUint2: case DataType::kInt2: return 2;
    case DataType::kUint4: case DataType::kInt4: return 4;
    case DataType::kUint8: case DataType::kInt8: return 8;
    case DataType::kUint16: case DataType::kInt16: return 16;
    case DataType::kInt32: return 32;
    default: return 0;
  }
}

// A per-tensor zero point of type t holding `value`, in `storage` (at least 2 bytes); false
// with a message when t cannot hold it (float8/float4 zero points must be 0: no zero point).
// quantize: for QuantizeLinear (whose float4e2m1 zero point a TensorView may carry).
inline Status EncodeZeroPoint(DataType t, int64_t value, bool quantize, uint8_t* storage, bool* present) {
  bool is_signed = false;
  const int bits = IntegerBits(t, &is_signed);
  *present = bits != 0 && bits != 32;
  if (!*present) {
    if (value == 0) return Status();
    return Status(QLINEAR_INVALID_ARGUMENT,
                  std::string("zero_point: ") + Name(t) + " takes no zero point other than 0" +
                      (quantize && t == DataType::kFloat4E2M1 ? " in this call (the TensorView overload takes one)"
                                                              : ""));
  }
  const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
  const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  if (value < lo || value > hi) {
    return Status(QLINEAR_INVALID_ARGUMENT, "zero_point: " + std::to_string(value) +
                                                " is outside " + Name(t) + "'s range [" +
                                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  const uint32_t bits_value = static_cast<uint32_t>(value) & ((uint32_t{1} << bits) - 1);
  if (bits == 16) {
    const uint16_t v16 = static_cast<uint16_t>(bits_value);
    std::memcpy(storage, &v16, 2);  // host byte order, as tensors are
  } else {
    storage[0] = static_cast<uint8_t>(bits_value);  // element 0 in the low bits
  }
  return Status();
}
}  // namespace detail

// Bytes that n elements of type t occupy (packed for the 4- and 2-bit types); SIZE_MAX when the
// count does not fit in size_t.
inline size_t StorageBytes(DataType t, size_t n) {
  switch (t) {
    case DataType::kUint2: case DataType::kInt2: return n / 4 + (n % 4 != 0);
    case DataType::kUint4: case DataType::kInt4: case DataType::kFloat4E2M1:
      return n / 2 + (n % 2 != 0);
    case DataType::kUint16: case DataType::kInt16: case DataType::kFloat16: case DataType::kBFloat16:
      return n > SIZE_MAX / 2 ? SIZE_MAX : n * 2;
    case DataType::kFloat: case DataType::kInt32:
      return n > SIZE_MAX / 4 ? SIZE_MAX : n * 4;
    default: return n;  // the 8-bit types
  }
}

// What a call would produce: the output's dtype and the bytes it occupies (the call is
// validated as if made; nothing is computed or written).
struct OutputInfo {
  DataType dtype = DataType::kUndefined;
  size_t bytes = 0;
};

namespace detail {
template <class Attrs, class InfoFn>
Status OutputInfoOf(InfoFn info_fn, const TensorView& x, const TensorView& scale,
                    const TensorView* zero_point, const Attrs& attrs, OutputInfo* info) {
  const qlinear_tensor cx = x.c(), cs = scale.c();
  const qlinear_tensor cz = zero_point ? zero_point->c() : qlinear_tensor{};
  const auto ca = attrs.c();
  int32_t dtype = 0;
  size_t bytes = 0;
  const Status s =
      Status::FromC(info_fn(&cx, &cs, zero_point ? &cz : nullptr, &ca, &dtype, &bytes));
  if (s && info != nullptr) *info = OutputInfo{static_cast<DataType>(dtype), bytes};
  return s;
}
}  // namespace detail

inline Status QuantizeOutputInfo(const TensorView& x, const TensorView& scale,
                                 const TensorView* zero_point, const QuantizeAttrs& attrs,
                                 OutputInfo* info) {
  return detail::OutputInfoOf(qlinear_quantize_output_info, x, scale, zero_point, attrs, info);
}

inline Status DequantizeOutputInfo(const TensorView& x, const TensorView& scale,
                                   const TensorView* zero_point, const DequantizeAttrs& attrs,
                                   OutputInfo* info) {
  return detail::OutputInfoOf(qlinear_dequantize_output_info, x, scale, zero_point, attrs, info);
}

// ---- One-liners: per-tensor, n elements, float32 on the float side -----------------------------

namespace detail {
// n as a dimension: more than INT64_MAX elements is an error naming n.
inline Status CountOf(size_t n, int64_t* dim) {
  if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status(QLINEAR_INVALID_ARGUMENT, "n: " + std::to_string(n) + " elements exceed INT64_MAX");
  }
  *dim = static_cast<int64_t>(n);
  return Status();
}
// A zero point given as a floating-point value or a bool (often the scale and the zero point
// swapped): the one-liners below reject it at compile time.
template <class Z>
using NotAnIntegerZeroPoint =
    typename std::enable_if<std::is_floating_point<Z>::value || std::is_same<Z, bool>::value>::type;
}  // namespace detail

// float32 -> any quantized type y_type, including the packed ones (uint4, int4, uint2, int2,
// float4e2m1: element 0 in the low bits) and float8: y receives StorageBytes(y_type, n) bytes
// (y_bytes: its capacity). zero_point: a value of y_type for the integer types; 0 for float8
// and float4e2m1 (a non-zero float4 zero point needs the TensorView overload).
inline Status QuantizeLinearTo(DataType y_type, const float* x, size_t n, float scale,
                               int64_t zero_point, void* y, size_t y_bytes) {
  if (y_type == DataType::kUndefined) {
    return Status(QLINEAR_INVALID_ARGUMENT, "y_type: not set (kUndefined); name the output type");
  }
  int64_t dims[1];
  const Status ns = detail::CountOf(n, dims);
  if (!ns) return ns;
  uint8_t zp[2] = {0, 0};
  bool has_zp = false;
  const Status zs = detail::EncodeZeroPoint(y_type, zero_point, true, zp, &has_zp);
  const TensorView tx(DataType::kFloat, dims, 1, x);
  const TensorView ts(DataType::kFloat, nullptr, 0, &scale);
  const TensorView tz(y_type, nullptr, 0, zp);
  QuantizeAttrs attrs;
  attrs.output_dtype = y_type;
  if (!zs) {  // the library's verdict on the type first (an unsupported type whatever the zero point)
    OutputInfo info;
    const Status verdict = QuantizeOutputInfo(tx, ts, nullptr, attrs, &info);
    return verdict ? zs : verdict;
  }
  return QuantizeLinear(tx, ts, has_zp ? &tz : nullptr, attrs, y, y_bytes);
}

// x_type (any quantized type, packed for the 4- and 2-bit ones; StorageBytes(x_type, n) bytes
// at x) -> float32: y[i] = float(x[i] - zero_point) * scale. zero_point as in QuantizeLinearTo.
inline Status DequantizeLinearFrom(DataType x_type, const void* x, size_t n, float scale,
                                   int64_t zero_point, float* y) {
  int64_t dims[1];
  const Status ns = detail::CountOf(n, dims);
  if (!ns) return ns;
  uint8_t zp[2] = {0, 0};
  bool has_zp = false;
  const Status zs = detail::EncodeZeroPoint(x_type, zero_point, false, zp, &has_zp);
  const TensorView tx(x_type, dims, 1, x);
  const TensorView ts(DataType::kFloat, nullptr, 0, &scale);
  const TensorView tz(x_type, nullptr, 0, zp);
  if (!zs) {  // as in QuantizeLinearTo
    OutputInfo info;
    const Status verdict = DequantizeOutputInfo(tx, ts, nullptr, DequantizeAttrs{}, &info);
    return verdict ? zs : verdict;
  }
  return DequantizeLinear(tx, ts, has_zp ? &tz : nullptr, DequantizeAttrs{}, y, n * sizeof(float));
}

// float32 -> uint8/int8/uint16/int16: y[i] = saturate(rint(x[i] / scale) + zero_point). Q comes
// from y alone, so QuantizeLinear(x, n, 0.1f, 0, y_int8) compiles; a zero point outside Q's range
// is rejected (as by QuantizeLinearTo), not converted.
template <class Q>
Status QuantizeLinear(const float* x, size_t n, float scale, int64_t zero_point, Q* y) {
  return QuantizeLinearTo(detail::QType<Q>::kType, x, n, scale, zero_point, y, n * sizeof(Q));
}

// uint8/int8/uint16/int16 -> float32: y[i] = float(x[i] - zero_point) * scale (zero point as above).
template <class Q>
Status DequantizeLinear(const Q* x, size_t n, float scale, int64_t zero_point, float* y) {
  return DequantizeLinearFrom(detail::QType<Q>::kType, x, n, scale, zero_point, y);
}

// Not callable with a floating-point or bool zero point (detail::NotAnIntegerZeroPoint).
template <class Z, class = detail::NotAnIntegerZeroPoint<Z>>
Status QuantizeLinearTo(DataType, const float*, size_t, float, Z, void*, size_t) = delete;
template <class Z, class = detail::NotAnIntegerZeroPoint<Z>>
Status DequantizeLinearFrom(DataType, const void*, size_t, float, Z, float*) = delete;
template <class Q, class Z, class = detail::NotAnIntegerZeroPoint<Z>>
Status QuantizeLinear(const float*, size_t, float, Z, Q*) = delete;
template <class Q, class Z, class = detail::NotAnIntegerZeroPoint<Z>>
Status DequantizeLinear(const Q*, size_t, float, Z, float*) = delete;

// DynamicQuantizeLinear of n float32 values (n >= 1) into uint8.
inline Status DynamicQuantizeLinear(const float* x, size_t n, uint8_t* y, float* scale,
                                    uint8_t* zero_point) {
  int64_t dims[1];
  const Status ns = detail::CountOf(n, dims);
  if (!ns) return ns;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, dims, x};
  return Status::FromC(qlinear_dynamic_quantize_linear(&tx, y, n, scale, zero_point));
}

inline const char* Version() { return qlinear_version(); }
inline const char* ActiveTarget() { return qlinear_active_target(); }

// ---- Dynamic quantization (qlinear.h "Dynamic quantization") ----------------------------------

enum class ScaleRule : int32_t {
  kAbsMax = QLINEAR_SCALE_ABSMAX,
  kMinMax = QLINEAR_SCALE_MINMAX,
  kMx = QLINEAR_SCALE_MX,
  kPow2Ceil = QLINEAR_SCALE_POW2_CEIL,
};

enum class ScaleGranularity : int32_t {
  kTensor = QLINEAR_GRANULARITY_TENSOR,
  kAxis = QLINEAR_GRANULARITY_AXIS,
  kBlock = QLINEAR_GRANULARITY_BLOCK,
};

// qlinear_dynamic_attrs with its defaults; output_dtype must be set (0 is rejected).
struct DynamicAttrs {
  DataType output_dtype = static_cast<DataType>(0);
  ScaleRule rule = ScaleRule::kAbsMax;
  ScaleGranularity granularity = ScaleGranularity::kBlock;
  int64_t axis = -1;
  int64_t block_size = 32;                         // 0 unless granularity is kBlock
  DataType scale_dtype = static_cast<DataType>(0);  // 0: the rule's default
  qlinear_dynamic_attrs c() const {
    qlinear_dynamic_attrs a;
    qlinear_dynamic_attrs_init(&a);
    a.output_dtype = static_cast<int32_t>(output_dtype);
    a.rule = static_cast<int32_t>(rule);
    a.granularity = static_cast<int32_t>(granularity);
    a.axis = axis;
    a.block_size = block_size;
    a.scale_dtype = static_cast<int32_t>(scale_dtype);
    return a;
  }
};

// The outputs of QuantizeDynamic, shaped as QuantizeLinear/DequantizeLinear take them.
struct DynamicResult {
  DataType output_dtype = DataType::kInt8;
  DataType scale_dtype = DataType::kFloat;
  std::vector<uint8_t> y;            // x's shape in output_dtype, packed for sub-byte types
  std::vector<uint8_t> scale;        // scale_shape in scale_dtype
  std::vector<uint8_t> zero_point;   // MINMAX only: scale_shape in output_dtype; else empty
  std::vector<int64_t> scale_shape;  // {} per tensor, {D} per axis, blocked: x's with ceil(D/B)
  bool has_zero_point = false;       // MINMAX
  TensorView ScaleView() const { return TensorView(scale_dtype, scale_shape, scale.data()); }
  // The zero point's view in *storage, or nullptr when the rule writes none.
  const TensorView* ZeroPointView(TensorView* storage) const {
    if (!has_zero_point) return nullptr;
    *storage = TensorView(output_dtype, scale_shape, zero_point.data());
    return storage;
  }
};

// Over caller buffers (capacities in bytes; zero_point nullptr unless the rule is MINMAX).
inline Status QuantizeDynamic(const TensorView& x, const DynamicAttrs& attrs, void* y, size_t y_bytes,
                              void* scale, size_t scale_bytes, void* zero_point = nullptr,
                              size_t zero_point_bytes = 0, const ParallelOptions* options = nullptr) {
  const qlinear_tensor cx = x.c();
  const qlinear_dynamic_attrs ca = attrs.c();
  if (options == nullptr) {
    return Status::FromC(qlinear_quantize_dynamic(&cx, &ca, y, y_bytes, scale, scale_bytes, zero_point,
                                                  zero_point_bytes));
  }
  detail::Runner runner{nullptr};
  const qlinear_parallel_options co = detail::ParallelC(*options, &runner);
  return runner.Result(qlinear_quantize_dynamic_parallel(&cx, &ca, y, y_bytes, scale, scale_bytes,
                                                         zero_point, zero_point_bytes, &co));
}

// Allocates and fills *out (left as it was when the call fails; a failed allocation is
// a QLINEAR_OUT_OF_MEMORY status, not an exception).
inline Status QuantizeDynamic(const TensorView& x, const DynamicAttrs& attrs, DynamicResult* out,
                              const ParallelOptions* options = nullptr) {
  if (out == nullptr) return Status(QLINEAR_INVALID_ARGUMENT, "out: pointer is NULL");
  const qlinear_tensor cx = x.c();
  const qlinear_dynamic_attrs ca = attrs.c();
  size_t yb = 0, sb = 0, zb = 0;
  Status s = Status::FromC(qlinear_quantize_dynamic_output_info(&cx, &ca, &yb, &sb, &zb));
  if (!s.ok()) return s;
  // The options' own rules, before the outputs are allocated (as the call would check them).
  if (options != nullptr && (options->max_threads < 0 || options->max_threads > QLINEAR_MAX_THREADS)) {
    return Status(QLINEAR_INVALID_ARGUMENT, "options: max_threads must be in [0, " +
                                                std::to_string(QLINEAR_MAX_THREADS) + "], got " +
                                                std::to_string(options->max_threads));
  }
  if (options != nullptr && options->min_elements_per_task < 0) {
    return Status(QLINEAR_INVALID_ARGUMENT, "options: min_elements_per_task must be >= 0, got " +
                                                std::to_string(options->min_elements_per_task));
  }
  const bool minmax = attrs.rule == ScaleRule::kMinMax;
  // x without data (output_info reads only its shape) fails the call itself before anything is
  // allocated for it.
  bool has_elements = true;
  for (int32_t i = 0; i < x.rank; ++i) has_elements &= x.shape[i] != 0;
  if (x.data == nullptr && has_elements) {
    uint8_t none = 0;
    return QuantizeDynamic(x, attrs, &none, 0, &none, 0, minmax ? &none : nullptr, 0, options);
  }
  DynamicResult r;
#if QLINEAR_HPP_EXCEPTIONS
  try {
#endif
    r.y.assign(yb, 0);
    r.scale.assign(sb, 0);
    r.zero_point.assign(minmax ? zb : 0, 0);
    if (attrs.granularity != ScaleGranularity::kTensor) {
      const int64_t axis = attrs.axis < 0 ? attrs.axis + x.rank : attrs.axis;  // validated above
      const int64_t d = x.shape[axis];
      if (attrs.granularity == ScaleGranularity::kAxis) {
        r.scale_shape.push_back(d);
      } else {
        r.scale_shape.assign(x.shape, x.shape + x.rank);
        r.scale_shape[static_cast<size_t>(axis)] = d / attrs.block_size + (d % attrs.block_size != 0);
      }
    }
#if QLINEAR_HPP_EXCEPTIONS
  } catch (const std::bad_alloc&) {
    return Status(QLINEAR_OUT_OF_MEMORY, "out of memory: QuantizeDynamic's outputs need " +
                                             std::to_string(yb + sb + zb) + " bytes");
  }
#endif
  // A MINMAX call always passes a zero-point pointer, even for 0 bytes.
  uint8_t no_groups = 0;
  s = QuantizeDynamic(x, attrs, r.y.data(), yb, r.scale.data(), sb,
                      minmax ? (zb ? r.zero_point.data() : &no_groups) : nullptr, zb, options);
  if (!s.ok()) return s;
  const bool pow2 = attrs.rule == ScaleRule::kMx || attrs.rule == ScaleRule::kPow2Ceil;
  out->y.swap(r.y);
  out->scale.swap(r.scale);
  out->zero_point.swap(r.zero_point);
  out->scale_shape.swap(r.scale_shape);
  out->output_dtype = attrs.output_dtype;
  out->has_zero_point = minmax;
  out->scale_dtype = static_cast<int32_t>(attrs.scale_dtype) != 0 ? attrs.scale_dtype
                     : pow2 ? DataType::kFloat8E8M0 : DataType::kFloat;
  return s;
}

// The QuantizeLinear attributes that reproduce a dynamic quantization from its scales.
inline Status QuantizeAttrsForDynamic(const DynamicAttrs& attrs, QuantizeAttrs* out) {
  if (out == nullptr) return Status(QLINEAR_INVALID_ARGUMENT, "out: pointer is NULL");
  const qlinear_dynamic_attrs ca = attrs.c();
  qlinear_quantize_attrs q;
  const Status s = Status::FromC(qlinear_quantize_attrs_for_dynamic(&ca, &q));
  if (!s.ok()) return s;
  out->opset = q.opset;
  out->axis = q.axis;
  out->block_size = q.block_size;
  out->output_dtype = q.output_dtype;
  out->saturate = q.saturate != 0;
  out->precision = q.precision;
  return s;
}

}  // namespace qlinear

#endif  // QLINEAR_QLINEAR_HPP_
