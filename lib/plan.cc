// Validation (docs/semantics.md, "Granularity", "DequantizeLinear", "Validation rules") and plan
// building for Q and DQ.
#include "plan.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "error.h"
#include "minifloat.h"
#include "reference.h"

namespace qlinear {
namespace {

constexpr int kVersions[] = {10, 13, 19, 21, 23, 24, 25};

// Shape rendered as "[3, 2]" into a small buffer (messages only).
struct ShapeText {
  char text[96];
  explicit ShapeText(const qlinear_tensor& t) {
    size_t n = 0;
    text[n++] = '[';
    for (int32_t i = 0; i < t.rank && n < sizeof(text) - 8; ++i) {
      n += std::snprintf(text + n, sizeof(text) - n, i ? ", %lld" : "%lld",
                         static_cast<long long>(t.shape[i]));
    }
    if (n > sizeof(text) - 8) n = sizeof(text) - 8;
    std::snprintf(text + n, sizeof(text) - n, "]");
  }
};

bool OneOf(DType t, std::initializer_list<DType> list) {
  for (DType d : list) {
    if (d == t) return true;
  }
  return false;
}

qlinear_status ResolveVersion(int32_t opset, int* version) {
  if (opset == 0) opset = QLINEAR_NEWEST_OPSET;
  if (opset < QLINEAR_OLDEST_OPSET || opset > QLINEAR_NEWEST_KNOWN_OPSET) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "opset: %d is outside the ai.onnx opsets qlinear knows, [%d, %d] (0 = the newest)",
                static_cast<int>(opset), QLINEAR_OLDEST_OPSET, QLINEAR_NEWEST_KNOWN_OPSET);
  }
  for (int v : kVersions) {  // opsets above 25 keep the operators at version 25
    if (v <= opset) *version = v;
  }
  return QLINEAR_OK;
}

}  // namespace

// Shape, data pointer and element count of one tensor argument.
qlinear_status CheckTensor(const char* name, const qlinear_tensor& t, int64_t* count) {
  if (t.rank < 0 || t.rank > QLINEAR_MAX_RANK) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: rank %d is outside [0, %d]", name,
                static_cast<int>(t.rank), QLINEAR_MAX_RANK);
  }
  if (t.rank > 0 && t.shape == nullptr) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: shape is NULL with rank %d", name,
                static_cast<int>(t.rank));
  }
  const DTypeInfo* info = FindDType(t.dtype);
  if (info == nullptr) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE, "%s: dtype code %d is not a type qlinear knows", name,
                static_cast<int>(t.dtype));
  }
  // Count must fit int64 and its storage size kMaxBytes (so byte offsets never overflow).
  bool empty = false;
  for (int32_t i = 0; i < t.rank; ++i) {
    if (t.shape[i] < 0) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "%s: dimension %d is negative (%lld)", name,
                  static_cast<int>(i), static_cast<long long>(t.shape[i]));
    }
    empty |= t.shape[i] == 0;
  }
  uint64_t n = empty ? 0 : 1;
  bool wraps = false;
  for (int32_t i = 0; i < t.rank && !empty && !wraps; ++i) {
    wraps = __builtin_mul_overflow(n, static_cast<uint64_t>(t.shape[i]), &n);  // no 64-bit division per call
  }
  if (wraps || n > static_cast<uint64_t>(INT64_MAX)) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: element count of shape %s overflows 64-bit sizes", name,
                ShapeText(t).text);
  }
  // Storage within kMaxBytes (a count that fits int64 may still take too many bytes); CheckBytes
  // (out of line) only for counts near the limit, where it words the failure.
  const int bits = info->bits;
  const uint64_t max_object = bits >= 8 ? kMaxBytes >> __builtin_ctz(static_cast<unsigned>(bits / 8)) : UINT64_MAX;
  if (n > max_object) {
    uint64_t bytes = 0;
    const qlinear_status s = CheckBytes(name, info->type, static_cast<int64_t>(n), &bytes);
    if (s != QLINEAR_OK) return s;
  }
  if (n > 0 && t.data == nullptr) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: data is NULL with %llu elements", name,
                static_cast<unsigned long long>(n));
  }
  *count = static_cast<int64_t>(n);
  return QLINEAR_OK;
}

qlinear_status NormalizeAxis(int64_t axis, int32_t rank, int64_t* out) {
  if (axis < -static_cast<int64_t>(rank) || axis >= rank) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "axis: %lld is out of range [%d, %d] for x of rank %d",
                static_cast<long long>(axis), -static_cast<int>(rank), static_cast<int>(rank) - 1,
                static_cast<int>(rank));
  }
  *out = axis < 0 ? axis + rank : axis;
  return QLINEAR_OK;
}

namespace {

bool SameShape(const qlinear_tensor& a, const qlinear_tensor& b) {
  if (a.rank != b.rank) return false;
  for (int32_t i = 0; i < a.rank; ++i) {
    if (a.shape[i] != b.shape[i]) return false;
  }
  return true;
}

// Granularity from the scale's shape (docs/semantics.md, "Granularity"). `max_granularity` is the richest the
// operator version allows. Names are the op's own input names, for the messages.
qlinear_status PlanLayout(const qlinear_tensor& x, int64_t x_count, const qlinear_tensor& scale,
                          int64_t scale_count, const qlinear_tensor* zp, int64_t zp_count,
                          int64_t axis, int64_t block, Granularity max_granularity,
                          const char* op, const char* scale_name, const char* zp_name,
                          Layout* l) {
  l->count = x_count;
  l->scale_count = scale_count;
  if (scale_count == 0 && x_count > 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: is empty (shape %s)", scale_name,
                ShapeText(scale).text);
  }
  if (block == 0 && scale_count == 1) {
    l->granularity = Granularity::kPerTensor;
    l->outer = 1;
    l->axis_dim = x_count;
    l->inner = 1;
    if (zp != nullptr && zp_count != 1) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "%s: must have the scale's shape (one element for a per-tensor scale), got %s",
                  zp_name, ShapeText(*zp).text);
    }
    return QLINEAR_OK;
  }
  if (max_granularity == Granularity::kPerTensor) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: %s takes a per-tensor scale (one element), got %s",
                scale_name, op, ShapeText(scale).text);
  }
  if (x.rank == 0) {  // (NormalizeAxis would blame `axis`, which the caller may not have set)
    if (block != 0) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "block_size: x of rank 0 has no axis for blocks, got %lld",
                  static_cast<long long>(block));
    }
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: x of rank 0 takes a per-tensor scale (one element), got %s",
                scale_name, ShapeText(scale).text);
  }
  int64_t a = 0;
  qlinear_status s = NormalizeAxis(axis, x.rank, &a);
  if (s != QLINEAR_OK) return s;
  // Products of dimensions that CheckTensor bounded by x_count, except for an empty x, whose
  // other dimensions may multiply beyond int64 (then nothing uses them: saturate).
  auto product = [&](int32_t from, int32_t to) -> int64_t {
    int64_t p = 1;
    for (int32_t i = from; i < to; ++i) {
      if (__builtin_mul_overflow(p, x.shape[i], &p)) return INT64_MAX;
    }
    return p;
  };
  l->outer = product(0, static_cast<int32_t>(a));
  l->inner = product(static_cast<int32_t>(a) + 1, x.rank);
  l->axis_dim = x.shape[a];
  if (block == 0) {
    l->granularity = Granularity::kPerAxis;
    if (scale.rank != 1 || scale.shape[0] != l->axis_dim) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "%s: per-axis quantization needs a 1-D scale of length x.shape[%lld] = %lld, "
                  "got %s",
                  scale_name, static_cast<long long>(a), static_cast<long long>(l->axis_dim),
                  ShapeText(scale).text);
    }
  } else {
    if (max_granularity != Granularity::kBlocked) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "block_size: %s has no blocked quantization", op);
    }
    l->granularity = Granularity::kBlocked;
    l->block = block;
    l->scale_axis = l->axis_dim / block + (l->axis_dim % block != 0);
    if (scale.rank != x.rank) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "%s: blocked quantization needs a scale of x's rank (%d), got %s", scale_name,
                  static_cast<int>(x.rank), ShapeText(scale).text);
    }
    for (int32_t i = 0; i < x.rank; ++i) {
      if (i != a && scale.shape[i] != x.shape[i]) {
        return Fail(QLINEAR_INVALID_ARGUMENT,
                    "%s: blocked quantization needs dimension %d equal to x's (%lld), got %lld",
                    scale_name, static_cast<int>(i), static_cast<long long>(x.shape[i]),
                    static_cast<long long>(scale.shape[i]));
      }
    }
    if (scale.shape[a] != l->scale_axis) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "%s: blocked quantization needs %lld entries on axis %lld (ceil(%lld/%lld)), "
                  "got %lld",
                  scale_name, static_cast<long long>(l->scale_axis), static_cast<long long>(a),
                  static_cast<long long>(l->axis_dim), static_cast<long long>(block),
                  static_cast<long long>(scale.shape[a]));
    }
  }
  if (zp != nullptr && !SameShape(*zp, scale)) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "%s: must have the scale's shape %s, got %s", zp_name,
                ShapeText(scale).text, ShapeText(*zp).text);
  }
  return QLINEAR_OK;
}

qlinear_status AttrNeedsOpset(const char* attr, const char* op, int version, int needed) {
  return Fail(QLINEAR_INVALID_ARGUMENT, "%s: %s-%d has no such attribute (needs opset >= %d)",
              attr, op, version, needed);
}

qlinear_status WrongType(const char* name, DType t, const char* op, int version,
                         const char* allowed) {
  return Fail(QLINEAR_UNSUPPORTED_TYPE, "%s: %s-%d does not take %s (allowed: %s)", name, op,
              version, Name(t), allowed);
}

bool IsFloat8(DType t) {
  return OneOf(t, {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                   DType::kFloat8E5M2FNUZ});
}

// The quantized type of a call (QuantizeLinear's output, DequantizeLinear's input) in operator
// version v: a quantized type (int32 only as an input) that the opset has (dtype.h `since`).
qlinear_status CheckQuantizedType(const char* name, DType t, bool output, const char* op, int v) {
  const DTypeInfo* info = FindDType(static_cast<int32_t>(t));
  if (info == nullptr || (info->kind != Kind::kInt && info->kind != Kind::kMiniFloat) ||
      (output && t == DType::kInt32)) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE, "%s: %s is not a quantized type", name, Name(t));
  }
  if (v < info->since) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE, "%s: %s %s needs opset >= %d (%s-%d)", name, Name(t),
                output ? "output" : "input", info->since, op, v);
  }
  return QLINEAR_OK;
}

// float8/float4 zero points must be (+-)0 where the rules say so; int32 ones must be 0.
qlinear_status CheckZeroPointIsZero(const char* name, DType t, const void* data, int64_t count,
                                    const char* why) {
  for (int64_t i = 0; i < count; ++i) {
    bool zero;
    long long shown;
    if (t == DType::kInt32) {
      int32_t v;
      std::memcpy(&v, static_cast<const char*>(data) + 4 * i, 4);
      zero = v == 0;
      shown = v;
    } else {
      const uint8_t c = static_cast<uint8_t>(LoadCode(t, data, i));
      zero = DecodeMiniFloat(t, c) == 0.0f;  // NaN compares unequal: rejected
      shown = c;
    }
    if (!zero && t == DType::kInt32) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "%s: must be zero %s, element %lld is %lld", name, why,
                  static_cast<long long>(i), shown);
    }
    if (!zero) {  // a float8/float4 code
      return Fail(QLINEAR_INVALID_ARGUMENT, "%s: must be zero %s, element %lld is code 0x%02llx", name, why,
                  static_cast<long long>(i), static_cast<unsigned long long>(shown));
    }
  }
  return QLINEAR_OK;
}

const char* kQXTypes10 = "float32, int32";
const char* kQXTypes19 = "float32, float16, bfloat16, int32";

}  // namespace

qlinear_status CheckOutput(const void* y, size_t y_bytes, uint64_t needed) {
  if (needed > 0 && y == nullptr) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "y: output pointer is NULL, %llu bytes needed",
                static_cast<unsigned long long>(needed));
  }
  if (static_cast<uint64_t>(y_bytes) < needed) {
    return Fail(QLINEAR_BUFFER_TOO_SMALL, "y_bytes: output needs %llu bytes, got %llu",
                static_cast<unsigned long long>(needed), static_cast<unsigned long long>(y_bytes));
  }
  return QLINEAR_OK;
}

uint64_t SliceBytes(const qlinear_tensor* t, int64_t count) {
  if (t == nullptr || t->data == nullptr) return 0;
  return StorageBytes(static_cast<DType>(t->dtype), static_cast<uint64_t>(count));
}

uint64_t TensorBytes(const qlinear_tensor* t) {
  if (t == nullptr) return 0;
  uint64_t n = 1;  // (validated: the product fits)
  for (int32_t i = 0; i < t->rank; ++i) n *= static_cast<uint64_t>(t->shape[i]);
  return SliceBytes(t, static_cast<int64_t>(n));
}

namespace {
bool Overlap(const ArgumentBytes& a, const ArgumentBytes& b) {
  if (a.data == nullptr || b.data == nullptr || a.bytes == 0 || b.bytes == 0) return false;
  const uintptr_t p = reinterpret_cast<uintptr_t>(a.data), q = reinterpret_cast<uintptr_t>(b.data);
  return p < q + b.bytes && q < p + a.bytes;  // (each range lies within one object)
}
}  // namespace

qlinear_status CheckDisjoint(std::initializer_list<ArgumentBytes> outputs, std::initializer_list<ArgumentBytes> inputs) {
  for (auto o = outputs.begin(); o != outputs.end(); ++o) {
    for (auto other = o + 1; other != outputs.end(); ++other) {
      if (Overlap(*o, *other)) {
        return Fail(QLINEAR_INVALID_ARGUMENT, "%s: overlaps %s (outputs must not share a byte with any argument)",
                    other->name, o->name);
      }
    }
    for (const ArgumentBytes& in : inputs) {
      if (Overlap(*o, in)) {
        return Fail(QLINEAR_INVALID_ARGUMENT, "%s: overlaps input %s (outputs must not share a byte with any argument)",
                    o->name, in.name);
      }
    }
  }
  return QLINEAR_OK;
}

qlinear_status CheckBytes(const char* name, DType t, int64_t count, uint64_t* bytes) {
  const uint64_t n = static_cast<uint64_t>(count);
  const int bits = Info(t).bits;
  uint64_t b = 0;
  bool wraps = false;
  if (bits >= 8) {
    wraps = __builtin_mul_overflow(n, static_cast<uint64_t>(bits / 8), &b);
  } else {
    b = StorageBytes(t, n);  // n < 2^63: rounding up does not wrap
  }
  if (wraps || b > kMaxBytes) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "%s: %llu elements of %s take more than the largest object (%llu bytes)", name,
                static_cast<unsigned long long>(n), Name(t), static_cast<unsigned long long>(kMaxBytes));
  }
  *bytes = b;
  return QLINEAR_OK;
}

namespace {

// The names an operator's messages use.
struct OpNames {
  const char* op;
  const char* scale;
  const char* zero_point;
};

// What both operators check first: x and the scale given, the attributes over their defaults,
// the operator version, and the element counts of x, the scale and the zero point (if given).
template <class Attrs>
struct Start {
  Attrs a;
  int v = 0;
  int64_t x_count = 0, scale_count = 0, zp_count = 0;
  DType xt = DType::kUndefined, st = DType::kUndefined;  // x's and the scale's
};
template <class Attrs>
qlinear_status StartPlan(const qlinear_tensor* x, const qlinear_tensor* scale, const qlinear_tensor* zp,
                         const Attrs* attrs_in, void (*init)(Attrs*), const OpNames& names, PlanBase* p,
                         Start<Attrs>* st) {
  if (x == nullptr) return Fail(QLINEAR_INVALID_ARGUMENT, "x: tensor pointer is NULL");
  if (scale == nullptr) return Fail(QLINEAR_INVALID_ARGUMENT, "%s: tensor pointer is NULL", names.scale);
  qlinear_status s = ReadAttrs(attrs_in, init, &st->a);
  if (s != QLINEAR_OK) return s;
  if ((s = ResolveVersion(st->a.opset, &st->v)) != QLINEAR_OK) return s;
  if ((s = CheckTensor("x", *x, &st->x_count)) != QLINEAR_OK) return s;
  if ((s = CheckTensor(names.scale, *scale, &st->scale_count)) != QLINEAR_OK) return s;
  if (zp != nullptr && (s = CheckTensor(names.zero_point, *zp, &st->zp_count)) != QLINEAR_OK) return s;
  p->version = st->v;
  st->xt = static_cast<DType>(x->dtype);
  st->st = static_cast<DType>(scale->dtype);
  return QLINEAR_OK;
}

// The fields every plan ends with: types, data, y's bytes (overflow-checked: y may be wider
// per element than x, float32 y of int8 x), the whole tensor as the range.
qlinear_status FinishPlan(const qlinear_tensor& x, const qlinear_tensor& scale, const qlinear_tensor* zp,
                          DType y_type, int64_t x_count, PlanBase* p) {
  p->x_type = static_cast<DType>(x.dtype);
  p->scale_type = static_cast<DType>(scale.dtype);
  p->y_type = y_type;
  p->x = x.data;
  p->scale = scale.data;
  p->zero_point = zp != nullptr ? zp->data : nullptr;
  p->begin = 0;
  p->end = x_count;
  return CheckBytes("y", y_type, x_count, &p->y_bytes);
}

constexpr OpNames kQuantizeNames{"QuantizeLinear", "y_scale", "y_zero_point"};
constexpr OpNames kDequantizeNames{"DequantizeLinear", "x_scale", "x_zero_point"};

// QuantizeLinear's own rules: the types of x and the scale, the attributes its version has, the
// output type (*y_type) and the division precision.
qlinear_status OperatorRules(const Start<qlinear_quantize_attrs>& start, const qlinear_tensor* zp,
                             DType* y_type, QuantizePlan* p) {
  const char* kOp = kQuantizeNames.op;
  const auto& a = start.a;
  const int v = start.v;
  const DType xt = start.xt, st = start.st;
  // Types of x and the scale, per operator version.
  if (v < 19 ? !OneOf(xt, {DType::kFloat32, DType::kInt32})
             : !OneOf(xt, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32})) {
    return WrongType("x", xt, kOp, v, v < 19 ? kQXTypes10 : kQXTypes19);
  }
  if (v < 19) {
    if (st != DType::kFloat32) return WrongType("y_scale", st, kOp, v, "float32");
  } else if (v < 23) {
    if (st != xt) {
      return Fail(QLINEAR_UNSUPPORTED_TYPE,
                  "y_scale: %s-%d needs the scale in x's type (%s), got %s (mixed types need "
                  "opset >= 23)",
                  kOp, v, Name(xt), Name(st));
    }
  } else if (!OneOf(st, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32}) &&
             !(v >= 24 && st == DType::kFloat8E8M0)) {
    return WrongType("y_scale", st, kOp, v,
                     v >= 24 ? "float32, float16, bfloat16, int32, float8e8m0"
                             : "float32, float16, bfloat16, int32");
  }

  // Attributes that the operator version does not have must keep their defaults.
  if (a.saturate != 0 && a.saturate != 1) {  // also for outputs it does not apply to
    return Fail(QLINEAR_INVALID_ARGUMENT, "saturate: must be 0 or 1, got %d", static_cast<int>(a.saturate));
  }
  if (v < 13 && a.axis != 1) return AttrNeedsOpset("axis", kOp, v, 13);
  if (v < 19 && a.saturate != 1) return AttrNeedsOpset("saturate", kOp, v, 19);
  if (v < 21 && a.block_size != 0) return AttrNeedsOpset("block_size", kOp, v, 21);
  if (v < 21 && a.output_dtype != 0) return AttrNeedsOpset("output_dtype", kOp, v, 21);
  if (v < 23 && a.precision != 0) return AttrNeedsOpset("precision", kOp, v, 23);
  if (a.block_size < 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "block_size: must be >= 0, got %lld",
                static_cast<long long>(a.block_size));
  }

  // Output type: the zero point's type, else output_dtype, else uint8.
  DType yt = DType::kUint8;
  if (zp != nullptr) {
    yt = static_cast<DType>(zp->dtype);
    if (a.output_dtype != 0 && a.output_dtype != zp->dtype) {
      return Fail(QLINEAR_INVALID_ARGUMENT, "output_dtype: %s (%d) does not match y_zero_point type %s",
                  FindDType(a.output_dtype) ? Name(static_cast<DType>(a.output_dtype)) : "unknown",
                  static_cast<int>(a.output_dtype), Name(yt));
    }
  } else if (a.output_dtype != 0) {
    if (FindDType(a.output_dtype) == nullptr) {
      return Fail(QLINEAR_UNSUPPORTED_TYPE, "output_dtype: %d is not a type qlinear knows",
                  static_cast<int>(a.output_dtype));
    }
    yt = static_cast<DType>(a.output_dtype);
  }
  const char* y_name = zp != nullptr ? "y_zero_point" : "output_dtype";
  const qlinear_status s = CheckQuantizedType(y_name, yt, true, kOp, v);
  if (s != QLINEAR_OK) return s;

  // Division precision (docs/semantics.md).
  Prec prec = Prec::kF32;
  DType prec_type = v >= 23 ? st : xt;
  if (v >= 23 && a.precision != 0) {
    if (!OneOf(static_cast<DType>(a.precision),
               {DType::kFloat32, DType::kFloat16, DType::kBFloat16})) {
      return Fail(QLINEAR_INVALID_ARGUMENT,
                  "precision: must be 0, 1 (float32), 10 (float16) or 16 (bfloat16), got %d",
                  static_cast<int>(a.precision));
    }
    prec_type = static_cast<DType>(a.precision);
  }
  switch (prec_type) {
    case DType::kFloat16: prec = Prec::kF16; break;
    case DType::kBFloat16: prec = Prec::kBF16; break;
    case DType::kInt32: prec = Prec::kF64; break;
    default: prec = Prec::kF32; break;  // float32, float8e8m0
  }
  if (v < 19 && xt == DType::kInt32) prec = Prec::kF64;
  p->prec = prec;
  p->saturate = a.saturate != 0;
  *y_type = yt;
  return QLINEAR_OK;
}

// After the layout: a float8 output's zero point must be zero.
qlinear_status ZeroPointRule(const Start<qlinear_quantize_attrs>& start, const qlinear_tensor& zp, DType y_type) {
  if (!IsFloat8(y_type)) return QLINEAR_OK;
  return CheckZeroPointIsZero("y_zero_point", y_type, zp.data, start.zp_count, "for float8 outputs (it is not added)");
}

// DequantizeLinear's own rules: the types of x, the scale and the zero point, the attributes its
// version has, the output type (*y_type).
qlinear_status OperatorRules(const Start<qlinear_dequantize_attrs>& start, const qlinear_tensor* zp,
                             DType* y_type, DequantizePlan*) {
  const char* kOp = kDequantizeNames.op;
  const auto& a = start.a;
  const int v = start.v;
  const DType xt = start.xt, st = start.st;
  const qlinear_status s = CheckQuantizedType("x", xt, false, kOp, v);
  if (s != QLINEAR_OK) return s;
  if (v < 19) {
    if (st != DType::kFloat32) return WrongType("x_scale", st, kOp, v, "float32");
  } else if (!OneOf(st, {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) &&
             !(v >= 24 && st == DType::kFloat8E8M0)) {
    return WrongType("x_scale", st, kOp, v,
                     v >= 24 ? "float32, float16, bfloat16, float8e8m0"
                             : "float32, float16, bfloat16");
  }
  if (zp != nullptr && zp->dtype != static_cast<int32_t>(xt)) {
    return Fail(QLINEAR_UNSUPPORTED_TYPE, "x_zero_point: type %s must be x's type %s",
                FindDType(zp->dtype) ? Name(static_cast<DType>(zp->dtype)) : "unknown", Name(xt));
  }

  if (v < 13 && a.axis != 1) return AttrNeedsOpset("axis", kOp, v, 13);
  if (v < 21 && a.block_size != 0) return AttrNeedsOpset("block_size", kOp, v, 21);
  if (v < 23 && a.output_dtype != 0) return AttrNeedsOpset("output_dtype", kOp, v, 23);
  if (a.reserved != 0) return Fail(QLINEAR_INVALID_ARGUMENT, "attrs: reserved must be 0");
  if (a.block_size < 0) {
    return Fail(QLINEAR_INVALID_ARGUMENT, "block_size: must be >= 0, got %lld",
                static_cast<long long>(a.block_size));
  }

  DType yt = v < 19 ? DType::kFloat32 : st;
  if (a.output_dtype != 0) {
    yt = static_cast<DType>(a.output_dtype);
    if (!OneOf(yt, {DType::kFloat32, DType::kFloat16, DType::kBFloat16})) {
      return Fail(QLINEAR_UNSUPPORTED_TYPE,
                  "output_dtype: must be 1 (float32), 10 (float16) or 16 (bfloat16), got %d",
                  static_cast<int>(a.output_dtype));
    }
  } else if (yt == DType::kFloat8E8M0) {
    return Fail(QLINEAR_INVALID_ARGUMENT,
                "output_dtype: required with a float8e8m0 scale (float8e8m0 is not an output "
                "type)");
  }
  *y_type = yt;
  return QLINEAR_OK;
}

// After the layout: the zero point of int32, float8 and float4 inputs must be zero.
qlinear_status ZeroPointRule(const Start<qlinear_dequantize_attrs>& start, const qlinear_tensor& zp, DType) {
  if (start.xt == DType::kInt32) {
    return CheckZeroPointIsZero("x_zero_point", start.xt, zp.data, start.zp_count, "for int32 input");
  }
  if (IsFloat8(start.xt) || start.xt == DType::kFloat4E2M1) {
    return CheckZeroPointIsZero("x_zero_point", start.xt, zp.data, start.zp_count, "for float8/float4 input");
  }
  return QLINEAR_OK;
}

// Both operators plan alike: the common checks, the operator's own rules, the layout (per tensor
// before opset 13, per axis before 21, blocks from 21), its zero-point rule, the common fields.
template <class Attrs, class Plan>
qlinear_status PlanOperator(const qlinear_tensor* x, const qlinear_tensor* scale, const qlinear_tensor* zp,
                            const Attrs* attrs_in, void (*init)(Attrs*), const OpNames& names, Plan* p) {
  Start<Attrs> start;
  qlinear_status s = StartPlan(x, scale, zp, attrs_in, init, names, p, &start);
  if (s != QLINEAR_OK) return s;
  DType yt = DType::kUndefined;
  if ((s = OperatorRules(start, zp, &yt, p)) != QLINEAR_OK) return s;
  const int v = start.v;
  const Granularity max_g =
      v < 13 ? Granularity::kPerTensor : (v < 21 ? Granularity::kPerAxis : Granularity::kBlocked);
  // Before blocked quantization (versions 10, 13, 19) the scale and the zero point are a scalar
  // or 1-D, as those schemas, their reference and ONNX Runtime have them; from 21 a one-element
  // tensor of any shape is per tensor.
  if (v < 21) {
    for (const auto& [t, name] : {std::pair<const qlinear_tensor*, const char*>{scale, names.scale}, {zp, names.zero_point}}) {
      if (t != nullptr && t->rank > 1) {
        return Fail(QLINEAR_INVALID_ARGUMENT, "%s: %s-%d takes a scalar or 1-D tensor (any shape from opset 21), got %s",
                    name, names.op, v, ShapeText(*t).text);
      }
    }
  }
  if ((s = PlanLayout(*x, start.x_count, *scale, start.scale_count, zp, start.zp_count, start.a.axis,
                      start.a.block_size, max_g, names.op, names.scale, names.zero_point, &p->layout)) != QLINEAR_OK) {
    return s;
  }
  if (zp != nullptr && (s = ZeroPointRule(start, *zp, yt)) != QLINEAR_OK) return s;
  return FinishPlan(*x, *scale, zp, yt, start.x_count, p);
}

}  // namespace

qlinear_status PlanQuantize(const qlinear_tensor* x, const qlinear_tensor* scale, const qlinear_tensor* zp,
                            const qlinear_quantize_attrs* attrs, QuantizePlan* p) {
  return PlanOperator(x, scale, zp, attrs, qlinear_quantize_attrs_init, kQuantizeNames, p);
}

qlinear_status PlanDequantize(const qlinear_tensor* x, const qlinear_tensor* scale, const qlinear_tensor* zp,
                              const qlinear_dequantize_attrs* attrs, DequantizePlan* p) {
  return PlanOperator(x, scale, zp, attrs, qlinear_dequantize_attrs_init, kDequantizeNames, p);
}

}  // namespace qlinear
