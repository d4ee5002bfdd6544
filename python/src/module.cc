// qlinear for Python: a thin pybind11 layer over the C ABI (include/qlinear/qlinear.h).
//
// This file only converts: NumPy arrays and Python numbers to qlinear_tensor views, type names to
// dtype codes, one-code-per-element sub-byte arrays to the packed layout and back, statuses to
// exceptions. Every rule of the operators is the C library's, and so are its messages.
#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include <qlinear/qlinear.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// ---- messages and exceptions -----------------------------------------------------------------

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

// A rejected C call: the library's message, the exception its status stands for.
[[noreturn]] void RaiseStatus(qlinear_status status) {
  std::string message = qlinear_last_error();
  if (message.empty()) message = qlinear_status_name(status);
  switch (status) {
    case QLINEAR_UNSUPPORTED_TYPE: Raise(PyExc_TypeError, message);
    case QLINEAR_OUT_OF_MEMORY: Raise(PyExc_MemoryError, message);
    case QLINEAR_INVALID_ARGUMENT:
    case QLINEAR_BUFFER_TOO_SMALL: Raise(PyExc_ValueError, message);
    default: Raise(PyExc_RuntimeError, message);
  }
}

void Check(qlinear_status status) {
  if (status != QLINEAR_OK) RaiseStatus(status);
}

// ---- types -------------------------------------------------------------------------------------

// How a NumPy array holds one element of a qlinear type: `storage` is the NumPy type of one
// element (for sub-byte types: one code per element), `alt_storage` a second accepted one.
struct TypeFacts {
  int bits = 0;  // 0: not a type of this library
  int storage = -1;
  int alt_storage = -1;
  int code_min = 0, code_max = 0;  // sub-byte types: the codes an unpacked array may hold
};

TypeFacts Facts(int64_t code) {
  switch (code) {
    case QLINEAR_DTYPE_FLOAT: return {32, NPY_FLOAT32};
    case QLINEAR_DTYPE_UINT8: return {8, NPY_UINT8};
    case QLINEAR_DTYPE_INT8: return {8, NPY_INT8};
    case QLINEAR_DTYPE_UINT16: return {16, NPY_UINT16};
    case QLINEAR_DTYPE_INT16: return {16, NPY_INT16};
    case QLINEAR_DTYPE_INT32: return {32, NPY_INT32};
    case QLINEAR_DTYPE_FLOAT16: return {16, NPY_FLOAT16};
    case QLINEAR_DTYPE_BFLOAT16: return {16, NPY_UINT16, NPY_INT16};
    case QLINEAR_DTYPE_FLOAT8E4M3FN:
    case QLINEAR_DTYPE_FLOAT8E4M3FNUZ:
    case QLINEAR_DTYPE_FLOAT8E5M2:
    case QLINEAR_DTYPE_FLOAT8E5M2FNUZ:
    case QLINEAR_DTYPE_FLOAT8E8M0: return {8, NPY_UINT8};
    case QLINEAR_DTYPE_UINT4:
    case QLINEAR_DTYPE_FLOAT4E2M1: return {4, NPY_UINT8, -1, 0, 15};
    case QLINEAR_DTYPE_INT4: return {4, NPY_INT8, -1, -8, 7};
    case QLINEAR_DTYPE_UINT2: return {2, NPY_UINT8, -1, 0, 3};
    case QLINEAR_DTYPE_INT2: return {2, NPY_INT8, -1, -2, 1};
    default: return {};
  }
}

bool IsSubByte(int32_t code) { return Facts(code).bits > 0 && Facts(code).bits < 8; }

// Bytes that n elements occupy in the C layout (sub-byte types packed).
int64_t StorageBytes(int32_t code, int64_t n) {
  const int bits = Facts(code).bits;
  return bits < 8 ? (n * bits + 7) / 8 : n * (bits / 8);
}

const char* TypeName(int32_t code) { return qlinear_dtype_name(code); }

// ---- sub-byte codes: one per element <-> packed bytes ------------------------------------------
//
// Element i lies in bits [(i % per) * bits, (i % per + 1) * bits) of byte i / per (ONNX's
// packing). Both directions go a packed byte at a time with `per` a constant, in loops the
// compiler vectorizes: a loop that divided by a run-time `per` for every element cost 2.2 ms
// per 2^20 codes, 40 times the library's int4 QuantizeLinear.

// Field k (of `bits` bits) of a packed byte as one code, sign-extended for signed types:
// (v ^ s) - s with `flip` s the sign bit (0 for unsigned types).
constexpr uint8_t FieldOf(unsigned byte, int k, int bits, unsigned flip) {
  return static_cast<uint8_t>(((((byte >> (k * bits)) & ((1u << bits) - 1)) ^ flip) - flip) & 0xFFu);
}

// 4-bit codes from packed bytes to one byte each. The compiler vectorizes it (interleaved stores).
void SpreadNibbles(const uint8_t* packed, int64_t bytes, unsigned flip, uint8_t* out) {
  for (int64_t j = 0; j < bytes; ++j) {
    out[2 * j] = FieldOf(packed[j], 0, 4, flip);
    out[2 * j + 1] = FieldOf(packed[j], 1, 4, flip);
  }
}

// Every byte's four 2-bit codes, sign-extended when kSigned (built by the compiler).
template <bool kSigned>
struct TwoBitFields {
  uint8_t code[256][4] = {};
  constexpr TwoBitFields() {
    for (unsigned b = 0; b < 256; ++b) {
      for (int k = 0; k < 4; ++k) code[b][k] = FieldOf(b, k, 2, kSigned ? 2u : 0u);
    }
  }
};
constexpr TwoBitFields<true> kSignedTwoBit;
constexpr TwoBitFields<false> kUnsignedTwoBit;

// count codes of `bits` bits from packed bytes to one byte each. 2-bit codes go through a
// table of every byte's four codes (4-way interleaved stores vectorized 6 times slower).
void SpreadCodes(const uint8_t* packed, int64_t count, int bits, bool is_signed, uint8_t* out) {
  const int per = 8 / bits;
  const int64_t whole = count / per;
  const unsigned flip = is_signed ? 1u << (bits - 1) : 0u;
  if (bits == 4) {
    SpreadNibbles(packed, whole, flip, out);
  } else {
    const auto& table = is_signed ? kSignedTwoBit.code : kUnsignedTwoBit.code;
    for (int64_t j = 0; j < whole; ++j) std::memcpy(out + 4 * j, table[packed[j]], 4);
  }
  for (int64_t i = whole * per; i < count; ++i) out[i] = FieldOf(packed[whole], static_cast<int>(i - whole * per), bits, flip);
}

// Packs `bytes` whole bytes of codes, kPer per byte.
template <int kBits>
void PackBytes(const uint8_t* codes, int64_t bytes, uint8_t* packed) {
  constexpr int kPer = 8 / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1;
  for (int64_t j = 0; j < bytes; ++j) {
    unsigned b = 0;
    for (int k = 0; k < kPer; ++k) b |= (codes[j * kPer + k] & kMask) << (k * kBits);
    packed[j] = static_cast<uint8_t>(b);
  }
}

// One bit per element, bit i % 8 of byte i / 8, set where flags[i] is nonzero (bool bytes
// other than 0 and 1 included): a byte at a time, in a loop the compiler vectorizes.
void PackFlags(const uint8_t* flags, int64_t count, uint8_t* bits) {
  const int64_t whole = count / 8;
  auto byte_of = [flags](int64_t first, int64_t n) {
    unsigned b = 0;
    for (int64_t k = 0; k < n; ++k) b |= static_cast<unsigned>(flags[first + k] != 0) << k;
    return static_cast<uint8_t>(b);
  };
  for (int64_t j = 0; j < whole; ++j) bits[j] = byte_of(8 * j, 8);
  if (count > whole * 8) bits[whole] = byte_of(8 * whole, count - 8 * whole);
}

// count one-byte codes (raw bytes of int8 or uint8 storage) into packed bytes: -1, or the index
// of the first code outside code_min..code_max (nothing written then). The check is a loop of
// its own, branch-free (uint8(c - low) <= range), and a search only when it failed.
int64_t PackCodeBytes(const uint8_t* codes, int64_t count, int bits, int code_min, int code_max, uint8_t* packed) {
  const uint8_t low = static_cast<uint8_t>(code_min), range = static_cast<uint8_t>(code_max - code_min);
  uint8_t worst = 0;
  for (int64_t i = 0; i < count; ++i) worst = std::max(worst, static_cast<uint8_t>(codes[i] - low));
  if (worst > range) {
    // (Bounded: a caller's thread may change the codes meanwhile.)
    for (int64_t i = 0; i < count; ++i) {
      if (static_cast<uint8_t>(codes[i] - low) > range) return i;
    }
  }
  const int per = 8 / bits;
  const int64_t whole = count / per;
  auto pack = [bits](const uint8_t* c, int64_t bytes, uint8_t* p) {
    return bits == 4 ? PackBytes<4>(c, bytes, p) : PackBytes<2>(c, bytes, p);
  };
  pack(codes, whole, packed);
  if (count > whole * per) {  // the last byte's codes, padded with zero codes
    uint8_t last[4] = {};
    std::memcpy(last, codes + whole * per, static_cast<size_t>(count - whole * per));
    pack(last, 1, packed + whole);
  }
  return -1;
}

std::string NumpyName(int type_num) {
  PyArray_Descr* d = PyArray_DescrFromType(type_num);
  if (d == nullptr) {
    PyErr_Clear();
    return "?";
  }
  std::string name = py::str(reinterpret_cast<PyObject*>(d));
  Py_DECREF(d);
  return name;
}

// A dtype's name with its size where it has one (|S4, <U3), which its type number alone lacks.
std::string DescrName(const PyArray_Descr* d) {
  return py::str(reinterpret_cast<PyObject*>(const_cast<PyArray_Descr*>(d)));
}

std::string StorageNames(int32_t code, bool packed) {
  const TypeFacts f = Facts(code);
  if (packed && f.bits < 8) return "uint8 (packed bytes)";
  std::string s = NumpyName(f.storage);
  if (f.alt_storage >= 0) s += " or " + NumpyName(f.alt_storage);
  if (f.bits < 8) s += " (one code per element)";
  return s;
}

// The qlinear type NumPy's own dtype stands for, or 0.
int32_t TypeOfNumpy(int type_num) {
  switch (type_num) {
    case NPY_FLOAT32: return QLINEAR_DTYPE_FLOAT;
    case NPY_FLOAT16: return QLINEAR_DTYPE_FLOAT16;
    case NPY_UINT8: return QLINEAR_DTYPE_UINT8;
    case NPY_INT8: return QLINEAR_DTYPE_INT8;
    case NPY_UINT16: return QLINEAR_DTYPE_UINT16;
    case NPY_INT16: return QLINEAR_DTYPE_INT16;
    case NPY_INT32: return QLINEAR_DTYPE_INT32;
    default: return 0;
  }
}

// An array's type from its dtype; TypeError for dtypes ONNX Q/DQ has no use for.
int32_t NativeType(const PyArray_Descr* d, const char* arg) {
  if (const int32_t type = TypeOfNumpy(d->type_num)) return type;
  const std::string name = DescrName(d);
  if (d->type_num == NPY_FLOAT64) {
    Raise(PyExc_TypeError, Format("%s: float64 arrays are not accepted (ONNX Q/DQ has no float64 tensors); "
                                  "convert explicitly, e.g. with .astype(numpy.float32)", arg));
  }
  Raise(PyExc_TypeError,
        Format("%s: %s arrays are not accepted (float32, float16, int8, uint8, int16, uint16 and int32 are)",
               arg, name.c_str()));
}

bool StorageFits(int32_t code, int type_num, bool packed) {
  const TypeFacts f = Facts(code);
  if (f.bits == 0) return false;
  if (packed && f.bits < 8) return type_num == NPY_UINT8;
  return type_num == f.storage || (f.alt_storage >= 0 && type_num == f.alt_storage);
}

// A Python or NumPy number as a double; an int beyond double's range is a ValueError naming arg
// (Python's OverflowError names nothing).
double AsDouble(PyObject* obj, const char* arg) {
  const double v = PyFloat_AsDouble(obj);
  if (v == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
    PyErr_Clear();
    Raise(PyExc_ValueError, Format("%s: the number is outside float32's range", arg));
  }
  return v;
}

// A number rounded once to float32 (numpy.longdouble directly: it holds numbers beyond double's
// range); becoming Inf or 0 is a ValueError naming arg, not a rounding.
float AsFloat32(PyObject* obj, const char* arg) {
  long double v = 0;
  float f = 0;
  if (PyArray_IsScalar(obj, LongDouble)) {
    PyArray_ScalarAsCtype(obj, &v);
    f = static_cast<float>(v);
  } else if (PyLong_Check(obj) || PyArray_IsScalar(obj, Integer)) {
    // An int beyond 2^53 is rounded to double first; rounding that to float32 differs from
    // rounding the int once only where the double lies halfway between two float32 values,
    // and there the int's side of the double decides.
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
    if (!i) throw py::error_already_set();
    const double d = AsDouble(i.ptr(), arg);
    v = d;
    // On magnitudes: the float32 values around |d| (the one above FLT_MAX is 2^128).
    const double m = std::fabs(d);
    float fm = static_cast<float>(m);
    const float below = static_cast<double>(fm) <= m ? fm : std::nextafter(fm, 0.0f);
    const float above = std::nextafter(below, INFINITY);
    const double above_m = std::isinf(above) ? std::ldexp(1.0, 128) : static_cast<double>(above);
    if (m - static_cast<double>(below) == above_m - m) {
      py::object dd = py::reinterpret_steal<py::object>(PyLong_FromDouble(d));
      if (!dd) throw py::error_already_set();
      const int farther = PyObject_RichCompareBool(i.ptr(), dd.ptr(), d > 0 ? Py_GT : Py_LT);
      const int nearer = PyObject_RichCompareBool(i.ptr(), dd.ptr(), d > 0 ? Py_LT : Py_GT);
      if (farther < 0 || nearer < 0) throw py::error_already_set();
      if (farther) fm = above;
      if (nearer) fm = below;
    }
    f = std::copysign(fm, static_cast<float>(d));
  } else {
    v = AsDouble(obj, arg);
    f = static_cast<float>(v);
  }
  if ((std::isfinite(v) && !std::isfinite(f)) || (v != 0 && f == 0.0f)) {
    Raise(PyExc_ValueError, Format("%s: %Lg is outside float32's range (it would become %g)", arg, v,
                                   static_cast<double>(f)));
  }
  return f;
}

// A type given by its ONNX name (as qlinear_dtype_name spells it), TensorProto code or NumPy
// dtype; 0 for None.
int32_t ParseType(py::handle spec, const char* arg) {
  if (spec.is_none()) return 0;
  if (PyUnicode_Check(spec.ptr())) {
    Py_ssize_t size = 0;
    const char* name = PyUnicode_AsUTF8AndSize(spec.ptr(), &size);
    if (name == nullptr) {  // not encodable (a lone surrogate): no type's name
      PyErr_Clear();
      name = "";
      size = -1;
    }
    const bool whole = std::strlen(name) == static_cast<size_t>(size);  // no NUL inside
    for (int32_t code = 1; whole && code <= 26; ++code) {
      if (Facts(code).bits != 0 && std::strcmp(name, TypeName(code)) == 0) return code;
    }
    std::string known;
    for (int32_t code = 1; code <= 26; ++code) {
      if (Facts(code).bits != 0) known += (known.empty() ? "" : ", ") + std::string(TypeName(code));
    }
    const std::string shown = py::repr(spec);
    Raise(PyExc_TypeError, Format("%s: unknown type name %s (one of: %s)", arg, shown.c_str(), known.c_str()));
  }
  // A Python or NumPy integer is a TensorProto code (NumPy's dtype of np.uint8(3) is not meant).
  if ((PyLong_Check(spec.ptr()) || PyArray_IsScalar(spec.ptr(), Integer)) && !PyBool_Check(spec.ptr())) {
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(spec.ptr()));
    if (!index) throw py::error_already_set();
    const long long code = PyLong_AsLongLong(index.ptr());
    if (code == -1 && PyErr_Occurred()) PyErr_Clear();  // too large: no type's code either
    if (Facts(code).bits == 0) {
      const std::string text = py::str(spec);
      Raise(PyExc_TypeError, Format("%s: %s is not a TensorProto type code that qlinear handles", arg, text.c_str()));
    }
    return static_cast<int32_t>(code);
  }
  PyArray_Descr* d = nullptr;
  if (PyArray_DescrConverter2(spec.ptr(), &d) == 0 || d == nullptr) {
    PyErr_Clear();
    const std::string r = py::repr(spec);
    Raise(PyExc_TypeError,
          Format("%s: expected an ONNX type name, a TensorProto code or a NumPy dtype, got %s", arg, r.c_str()));
  }
  py::object keep = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(d));
  if (const int32_t type = TypeOfNumpy(d->type_num)) return type;
  const std::string name = DescrName(d);
  Raise(PyExc_TypeError, Format("%s: NumPy's %s is not a type of ONNX QuantizeLinear/DequantizeLinear", arg,
                                name.c_str()));
}

// ---- memory extents (out= must not overlap an input) -------------------------------------------

struct Extent {
  const char* lo = nullptr;
  const char* hi = nullptr;  // one past the last byte
  bool Overlaps(const Extent& o) const { return lo < hi && o.lo < o.hi && lo < o.hi && o.lo < hi; }
};

Extent ExtentOf(PyArrayObject* a) {
  Extent e;
  if (PyArray_SIZE(a) == 0) return e;
  const char* base = PyArray_BYTES(a);
  npy_intp lo = 0, hi = PyArray_ITEMSIZE(a);
  for (int i = 0; i < PyArray_NDIM(a); ++i) {
    const npy_intp span = (PyArray_DIM(a, i) - 1) * PyArray_STRIDE(a, i);
    (span < 0 ? lo : hi) += span;
  }
  e.lo = base + lo;
  e.hi = base + hi;
  return e;
}

// ---- operands ----------------------------------------------------------------------------------

PyArrayObject* Arr(const py::object& o) { return reinterpret_cast<PyArrayObject*>(o.ptr()); }

// Any object NumPy can view or convert (ndarray, buffer protocol, __array__, sequences).
py::object ToArray(py::handle obj) {
  if (PyArray_Check(obj.ptr())) return py::reinterpret_borrow<py::object>(obj);
  PyObject* a = nullptr;
  if (PyBytes_Check(obj.ptr())) {
    // Raw bytes (an ONNX TensorProto's raw_data) are uint8, as memoryview reads them; NumPy alone
    // would make them one 0-d string.
    a = PyArray_FromBuffer(obj.ptr(), PyArray_DescrFromType(NPY_UINT8), -1, 0);
  } else {
    a = PyArray_FromAny(obj.ptr(), nullptr, 0, 0, 0, nullptr);
  }
  if (a == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(a);
}

bool IsBool(py::handle o) { return PyBool_Check(o.ptr()) || PyArray_IsScalar(o.ptr(), Bool); }
bool IsIntNumber(py::handle o) {
  return !IsBool(o) && (PyLong_Check(o.ptr()) || PyArray_IsScalar(o.ptr(), Integer));
}
// A number taken by value: Python numbers, and NumPy scalars of types qlinear has no use for
// (numpy.int64(3) is the number 3). NumPy scalars of the accepted dtypes (numpy.int8(3),
// numpy.float16(0.5)) are 0-d arrays of their dtype.
bool IsNumber(py::handle o) {
  if (PyArray_Check(o.ptr())) return false;
  if (!IsIntNumber(o) && !PyFloat_Check(o.ptr()) && !PyArray_IsScalar(o.ptr(), Floating)) return false;
  if (!PyArray_IsScalar(o.ptr(), Generic) || PyFloat_Check(o.ptr())) return true;  // numpy.float64 too
  PyArray_Descr* d = PyArray_DescrFromScalar(o.ptr());
  if (d == nullptr) throw py::error_already_set();
  const int type_num = d->type_num;
  Py_DECREF(d);
  return !(type_num == NPY_FLOAT32 || type_num == NPY_FLOAT16 || type_num == NPY_INT8 || type_num == NPY_UINT8 ||
           type_num == NPY_INT16 || type_num == NPY_UINT16 || type_num == NPY_INT32);
}

// One tensor argument as the C call sees it. Not copyable: `view` points into the object.
class Operand {
 public:
  Operand() = default;
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;

  const qlinear_tensor* get() const { return present_ ? &view_ : nullptr; }
  qlinear_tensor& view() { return view_; }
  int32_t type() const { return view_.dtype; }
  int rank() const { return view_.rank; }
  const int64_t* dims() const { return dims_; }
  int64_t size() const { return size_; }  // elements (packed arrays: bytes) the array holds
  bool packed() const { return packed_; }
  int storage() const { return storage_; }
  const Extent& extent() const { return extent_; }
  PyArrayObject* array() const { return Arr(array_); }

  // An array argument. Its type: `declared` if given, else `hint` when the array's dtype can hold
  // it (a zero point's type follows the output's / x's), else what the NumPy dtype stands for.
  // `packed`: sub-byte types arrive as packed bytes (flat uint8) instead of one code per element.
  void LoadArray(py::handle obj, const char* arg, int32_t declared, int32_t hint, bool packed,
                 const char* type_keyword) {
    if (obj.is_none()) Raise(PyExc_TypeError, Format("%s: an array is required, not None", arg));
    py::object a = ToArray(obj);
    PyArray_Descr* d = PyArray_DESCR(Arr(a));
    const int type_num = d->type_num;
    int32_t type = declared;
    if (type == 0 && hint != 0 && StorageFits(hint, type_num, packed)) type = hint;
    if (type == 0) type = NativeType(d, arg);
    if (!StorageFits(type, type_num, packed)) {
      const std::string got = DescrName(d);
      Raise(PyExc_TypeError,
            Format("%s: %s%s%s is stored as %s, not %s", arg, type_keyword, *type_keyword ? "=" : "",
                   TypeName(type), StorageNames(type, packed).c_str(), got.c_str()));
    }
    extent_ = ExtentOf(Arr(a));
    if (!PyArray_IS_C_CONTIGUOUS(Arr(a)) || !PyArray_ISNOTSWAPPED(Arr(a))) {
      // One copy into native byte order, C order (the C ABI reads dense row-major tensors).
      PyObject* c = PyArray_FromArray(Arr(a), PyArray_DescrFromType(type_num), NPY_ARRAY_C_CONTIGUOUS);
      if (c == nullptr) throw py::error_already_set();
      a = py::reinterpret_steal<py::object>(c);
    }
    Adopt(a, type_num, type);
    packed_ = packed && IsSubByte(type);
  }

  // Any array, as it is (C-contiguous): the clamp mask.
  void LoadRaw(py::handle obj) {
    py::object a = ToArray(obj);
    extent_ = ExtentOf(Arr(a));
    if (!PyArray_IS_C_CONTIGUOUS(Arr(a))) {
      PyObject* c = PyArray_NewCopy(Arr(a), NPY_CORDER);
      if (c == nullptr) throw py::error_already_set();
      a = py::reinterpret_steal<py::object>(c);
    }
    Adopt(a, PyArray_DESCR(Arr(a))->type_num, 0);
  }

  // A Python or NumPy number as a scale: float32 (rank 0).
  void LoadScaleNumber(py::handle obj, int32_t declared) {
    if (declared != 0 && declared != QLINEAR_DTYPE_FLOAT) {
      Raise(PyExc_TypeError,
            Format("scale: a number scale is float32; pass an array for scale_dtype=%s", TypeName(declared)));
    }
    const float f = AsFloat32(obj.ptr(), "scale");  // rounding to float32 is the documented conversion
    std::memcpy(scalar_, &f, sizeof(f));
    LoadScalar(QLINEAR_DTYPE_FLOAT);
  }

  // A Python or NumPy number as a zero point of `type`: an int is range-checked against the type;
  // float8/float4 types take the value (int or float) when the format holds it exactly.
  void LoadZeroPointNumber(py::handle obj, int32_t type);

  template <class Int>  // npy_intp or int64_t
  void SetShape(int rank, const Int* dims) {
    view_.rank = rank;
    for (int i = 0; i < rank; ++i) dims_[i] = dims[i];
    view_.shape = rank > 0 ? dims_ : nullptr;
  }

  // Unpacked sub-byte codes: packs elements [first, first + count) for the C call, each code
  // range-checked (never masked). Run without the GIL.
  int64_t PackCodes(int64_t first, int64_t count);
  [[noreturn]] void RaiseBadCode(const char* arg, int64_t index) const;
  bool NeedsPacking() const { return present_ && IsSubByte(type()) && !packed_; }

  // Data pointer of element `first` (only for types of whole bytes, or after PackCodes).
  void Offset(int64_t first) {
    if (!IsSubByte(type())) view_.data = PyArray_BYTES(array()) + first * (Facts(type()).bits / 8);
  }

 private:
  void Adopt(const py::object& a, int type_num, int32_t type) {
    array_ = a;
    present_ = true;
    storage_ = type_num;
    size_ = PyArray_SIZE(Arr(a));
    SetShape(PyArray_NDIM(Arr(a)), PyArray_DIMS(Arr(a)));
    view_.dtype = type;
    view_.data = PyArray_DATA(Arr(a));
  }

  void LoadScalar(int32_t type) {  // the number is stored in the C layout already
    present_ = true;
    packed_ = true;
    view_.dtype = type;
    view_.rank = 0;
    view_.shape = nullptr;
    view_.data = scalar_;
    size_ = 1;
  }

  qlinear_tensor view_{};
  int64_t dims_[QLINEAR_MAX_RANK];  // the first view_.rank are set
  py::object array_;
  std::vector<uint8_t> packed_codes_;
  alignas(8) unsigned char scalar_[8] = {};
  int64_t size_ = 0;
  int storage_ = -1;
  bool present_ = false;
  bool packed_ = false;
  Extent extent_;
};

int64_t Operand::PackCodes(int64_t first, int64_t count) {
  const TypeFacts f = Facts(type());
  // At least one byte: an empty slice still hands the C call a valid pointer.
  packed_codes_.assign(std::max<size_t>(static_cast<size_t>(StorageBytes(type(), count)), 1), 0);
  const uint8_t* src = static_cast<const uint8_t*>(PyArray_DATA(array())) + first;
  uint8_t* dst = packed_codes_.data();
  const int64_t bad = PackCodeBytes(src, count, f.bits, f.code_min, f.code_max, dst);
  if (bad >= 0) return first + bad;
  view_.data = dst;
  return -1;
}

void Operand::RaiseBadCode(const char* arg, int64_t index) const {
  const TypeFacts f = Facts(type());
  const uint8_t raw = static_cast<const uint8_t*>(PyArray_DATA(array()))[index];
  const int v = f.storage == NPY_INT8 ? static_cast<int8_t>(raw) : raw;
  Raise(PyExc_ValueError, Format("%s: element %lld is %d, outside %s's codes %d..%d", arg,
                                 static_cast<long long>(index), v, TypeName(type()), f.code_min, f.code_max));
}

// Codes of the float8/float4 values, by value (decoded once per type by the library itself).
int FindFloatCode(int32_t type, double value) {
  static float table[32][256];
  static bool ready[32] = {};
  const TypeFacts f = Facts(type);
  const int codes = 1 << f.bits;
  if (!ready[type]) {
    uint8_t x[256];  // every code once (4-bit types: two per byte)
    for (int c = 0; c < codes; ++c) {
      if (f.bits == 4) {
        x[c / 2] = static_cast<uint8_t>(c % 2 ? x[c / 2] | c << 4 : c);
      } else {
        x[c] = static_cast<uint8_t>(c);
      }
    }
    const int64_t n = codes;
    const float one = 1.0f;
    const qlinear_tensor xt{type, 1, &n, x}, st{QLINEAR_DTYPE_FLOAT, 0, nullptr, &one};
    qlinear_dequantize_attrs attrs;
    qlinear_dequantize_attrs_init(&attrs);
    attrs.output_dtype = QLINEAR_DTYPE_FLOAT;
    Check(qlinear_dequantize_linear(&xt, &st, nullptr, &attrs, table[type], sizeof(table[type])));
    ready[type] = true;
  }
  for (int c = 0; c < codes; ++c) {
    if (static_cast<double>(table[type][c]) == value) return c;  // +0 (code 0) comes before -0
  }
  return -1;
}

void Operand::LoadZeroPointNumber(py::handle obj, int32_t type) {
  const TypeFacts f = Facts(type);
  const bool is_float = (type >= QLINEAR_DTYPE_FLOAT8E4M3FN && type <= QLINEAR_DTYPE_FLOAT8E5M2FNUZ) ||
                        type == QLINEAR_DTYPE_FLOAT4E2M1;
  if (is_float) {
    const double v = AsDouble(obj.ptr(), "zero_point");
    if (PyArray_IsScalar(obj.ptr(), LongDouble)) {  // exactly: a longdouble that is not a double is no code
      long double exact = 0;
      PyArray_ScalarAsCtype(obj.ptr(), &exact);
      if (static_cast<long double>(v) != exact) {
        Raise(PyExc_ValueError, Format("zero_point: %.21Lg is not a %s value", exact, TypeName(type)));
      }
    }
    const int code = FindFloatCode(type, v);
    if (code < 0) Raise(PyExc_ValueError, Format("zero_point: %g is not a %s value", v, TypeName(type)));
    scalar_[0] = static_cast<unsigned char>(code);
    LoadScalar(type);
    return;
  }
  long long lo = 0, hi = 0;
  switch (type) {
    case QLINEAR_DTYPE_UINT8: hi = 255; break;
    case QLINEAR_DTYPE_INT8: lo = -128, hi = 127; break;
    case QLINEAR_DTYPE_UINT16: hi = 65535; break;
    case QLINEAR_DTYPE_INT16: lo = -32768, hi = 32767; break;
    case QLINEAR_DTYPE_INT32: lo = INT32_MIN, hi = INT32_MAX; break;
    default:
      if (!IsSubByte(type)) {
        Raise(PyExc_TypeError, Format("zero_point: a number zero point needs an integer, float8 or float4 type, "
                                      "not %s; pass an array", TypeName(type)));
      }
      lo = f.code_min, hi = f.code_max;
      if (type == QLINEAR_DTYPE_UINT4 || type == QLINEAR_DTYPE_UINT2) lo = 0;
  }
  if (!IsIntNumber(obj)) {
    const std::string r = py::repr(obj);
    Raise(PyExc_TypeError, Format("zero_point: a %s zero point must be an int, got %s", TypeName(type), r.c_str()));
  }
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || v < lo || v > hi) {
    const std::string r = py::repr(obj);
    Raise(PyExc_ValueError,
          Format("zero_point: %s is outside %s's range %lld..%lld", r.c_str(), TypeName(type), lo, hi));
  }
  if (f.bits < 8) {
    scalar_[0] = static_cast<unsigned char>(v & ((1 << f.bits) - 1));  // one packed element
  } else {
    const int32_t w = static_cast<int32_t>(v);
    std::memcpy(scalar_, &w, f.bits / 8);  // little-endian: the low bytes
  }
  LoadScalar(type);
}

// scale: a number (float32) or an array.
void LoadScale(Operand& s, py::handle obj, int32_t declared) {
  if (obj.is_none()) Raise(PyExc_TypeError, "scale: must be an array or a number, got None");
  if (IsNumber(obj)) {
    s.LoadScaleNumber(obj, declared);
  } else {
    s.LoadArray(obj, "scale", declared, 0, false, "scale_dtype");
  }
}

// zero_point: None, a number, or an array whose type is `declared`, else `hint` (the output's type
// for QuantizeLinear, x's for DequantizeLinear) when its dtype holds it, else its NumPy dtype's.
// Packed sub-byte zero points have the scale's shape.
void LoadZeroPoint(Operand& z, py::handle obj, int32_t declared, int32_t hint, int32_t number_default,
                   bool packed, const Operand& scale) {
  if (obj.is_none()) return;
  if (IsNumber(obj)) {
    const int32_t type = declared ? declared : hint ? hint : number_default;
    z.LoadZeroPointNumber(obj, type);
    return;
  }
  z.LoadArray(obj, "zero_point", declared, hint, packed, "zero_point_dtype");
  if (z.packed()) {
    if (StorageBytes(z.type(), scale.size()) != z.size()) {
      Raise(PyExc_ValueError, Format("zero_point: a packed %s zero point has the scale's %lld elements in %lld "
                                     "bytes, got %lld bytes",
                                     TypeName(z.type()), static_cast<long long>(scale.size()),
                                     static_cast<long long>(StorageBytes(z.type(), scale.size())),
                                     static_cast<long long>(z.size())));
    }
    z.SetShape(scale.rank(), scale.dims());
  }
}

// Packs every unpacked sub-byte operand (all elements) without the GIL; raises on a bad code.
void PackWhole(Operand& op, const char* arg) {
  if (!op.NeedsPacking()) return;
  int64_t bad;
  {
    py::gil_scoped_release release;
    bad = op.PackCodes(0, op.size());
  }
  if (bad >= 0) op.RaiseBadCode(arg, bad);
}

// ---- which elements: shape=, first=, count= ------------------------------------------------------

int64_t OptionalInt(py::handle obj, const char* arg, int64_t fallback) {
  if (obj.is_none()) return fallback;
  if (!IsIntNumber(obj)) Raise(PyExc_TypeError, Format("%s: must be an int", arg));
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) Raise(PyExc_ValueError, Format("%s: out of the int64 range", arg));
  return v;
}

// What a Q/DQ call covers: x's logical (whole-tensor) shape, the element range, the result's shape.
struct Coverage {
  int64_t dims[QLINEAR_MAX_RANK];  // the first `rank` are set
  int rank = 0;
  int64_t total = 0;
  int64_t first = 0, count = 0;
  bool range = false;  // not the whole tensor: the *_range entry points
  int64_t out_dims[QLINEAR_MAX_RANK];
  int out_rank = 0;
};

void RangeInside(int64_t first, int64_t count, int64_t total) {
  if (first < 0 || count < 0 || first > total || count > total - first) {
    Raise(PyExc_ValueError, Format("first, count: [%lld, %lld + %lld) must lie within the tensor's %lld elements",
                                   static_cast<long long>(first), static_cast<long long>(first),
                                   static_cast<long long>(count), static_cast<long long>(total)));
  }
}

// A bool argument: True/False, or an int 0 or 1 (the C API rejects saturate = 2 too).
bool BoolArg(py::handle v, const char* name) {
  if (!IsBool(v) && !IsIntNumber(v)) Raise(PyExc_TypeError, Format("%s: must be a bool", name));
  const int truth = PyObject_IsTrue(v.ptr());
  if (truth < 0) throw py::error_already_set();
  if (!IsBool(v) && OptionalInt(v, name, 0) != truth) {
    Raise(PyExc_ValueError, Format("%s: must be a bool (or 0 or 1)", name));
  }
  return truth == 1;
}

// A shape= argument: a sequence of non-negative ints whose non-zero ones multiply to an array's
// size at most (rank, dims, total).
void ParseShape(py::handle shape, int* rank, int64_t* dims, int64_t* total) {
  const bool zero_d = PyArray_Check(shape.ptr()) && PyArray_NDIM(reinterpret_cast<PyArrayObject*>(shape.ptr())) == 0;
  if (!py::isinstance<py::sequence>(shape) || PyUnicode_Check(shape.ptr()) || zero_d) {
    Raise(PyExc_TypeError, "shape: must be a sequence of ints (the whole tensor's shape)");
  }
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(shape);
  if (seq.size() > QLINEAR_MAX_RANK) {
    Raise(PyExc_ValueError, Format("shape: rank %zu exceeds %d", seq.size(), QLINEAR_MAX_RANK));
  }
  *rank = static_cast<int>(seq.size());
  // The product of the non-zero dimensions is bounded whatever the count: NumPy cannot make an
  // array (even an empty one) of a shape beyond it, and a 0 anywhere must not decide.
  int64_t nonzero = 1;
  bool empty = false;
  for (int i = 0; i < *rank; ++i) {
    const int64_t d = OptionalInt(seq[i], "shape", -1);
    if (d < 0) Raise(PyExc_ValueError, Format("shape: dimension %d is negative or missing", i));
    dims[i] = d;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > std::numeric_limits<int64_t>::max() / 64 / d) {
      Raise(PyExc_ValueError, "shape: the product of the non-zero dimensions overflows (an array's size)");
    }
    nonzero *= d;
  }
  *total = empty ? 0 : nonzero;
}

// Without shape=, x is the whole tensor and first/count select elements of it. With shape=, x
// holds elements [first, first + count) of a tensor of that shape (a shard; count defaults to
// x.size, or for packed bytes to the rest of the tensor); a packed sub-byte x always needs shape=.
// Sets x's view (whole shape, data at element `first`) and packs one-code-per-element input.
Coverage Cover(Operand& x, py::handle shape, py::handle first_obj, py::handle count_obj, const char* arg = "x") {
  Coverage c;
  const int64_t first = OptionalInt(first_obj, "first", 0);
  if (shape.is_none()) {
    if (x.packed()) {
      Raise(PyExc_ValueError,
            Format("%s: a packed %s input needs shape= (the tensor's logical shape)", arg, TypeName(x.type())));
    }
    c.rank = x.rank();
    std::copy(x.dims(), x.dims() + c.rank, c.dims);
    c.total = x.size();
    c.first = first;
    c.count = OptionalInt(count_obj, "count", first >= 0 && first <= c.total ? c.total - first : 0);
    RangeInside(c.first, c.count, c.total);
  } else {
    ParseShape(shape, &c.rank, c.dims, &c.total);
    c.first = first;
    if (x.packed()) {
      // Packed bytes do not say how many elements they hold: the rest of the tensor unless count=.
      c.count = OptionalInt(count_obj, "count", first >= 0 && first <= c.total ? c.total - first : 0);
      RangeInside(c.first, c.count, c.total);
      if (StorageBytes(x.type(), c.count) != x.size()) {
        Raise(PyExc_ValueError, Format("%s: holds %lld bytes; %lld packed %s elements take %lld", arg,
                                       static_cast<long long>(x.size()), static_cast<long long>(c.count),
                                       TypeName(x.type()), static_cast<long long>(StorageBytes(x.type(), c.count))));
      }
    } else {
      c.count = OptionalInt(count_obj, "count", x.size());
      if (c.count != x.size()) {
        Raise(PyExc_ValueError, Format("count: x holds %lld elements, count is %lld",
                                       static_cast<long long>(x.size()), static_cast<long long>(c.count)));
      }
      RangeInside(c.first, c.count, c.total);
    }
  }
  c.range = c.first != 0 || c.count != c.total;
  // The result: x's shape when it covers all of x (unpacked; without shape=, only when neither
  // first= nor count= selects elements: a selection is 1-D even when it is all of x), the logical
  // shape for a whole packed tensor, else the count elements in one dimension.
  const bool selects = shape.is_none() && !(first_obj.is_none() && count_obj.is_none());
  if (selects) c.range = true;  // (the C call is the same either way)
  const bool all_of_x = !shape.is_none() ? !x.packed() : !c.range;
  if (all_of_x) {
    c.out_rank = x.rank();
    std::copy(x.dims(), x.dims() + x.rank(), c.out_dims);
  } else if (!c.range) {
    c.out_rank = c.rank;
    std::copy(c.dims, c.dims + c.rank, c.out_dims);
  } else {
    c.out_rank = 1;
    c.out_dims[0] = c.count;
  }
  // x as the C call sees it: the whole tensor's shape, data at element `first`.
  const int64_t in_x = shape.is_none() ? c.first : 0;  // where the covered elements start in x
  if (x.NeedsPacking()) {
    int64_t bad;
    {
      py::gil_scoped_release release;
      bad = x.PackCodes(in_x, c.count);
    }
    if (bad >= 0) x.RaiseBadCode(arg, bad);
  } else {
    x.Offset(in_x);
  }
  x.SetShape(c.rank, c.dims);
  return c;
}

// ---- outputs -----------------------------------------------------------------------------------

// Where a C call writes its result: a new array, or out=; unpacked sub-byte results go through a
// packed staging buffer and are spread to one code per element afterwards.
struct Output {
  py::object array;
  void* dest = nullptr;
  size_t bytes = 0;
  std::vector<uint8_t> staging;
  int32_t type = 0;
  int64_t count = 0;

  void Prepare(py::handle out, int32_t result_type, int64_t n, bool packed, int rank, const int64_t* dims,
               int storage, std::initializer_list<const Operand*> inputs) {
    type = result_type;
    count = n;
    const bool sub = IsSubByte(type);
    const bool as_bytes = sub && packed;
    const int64_t elements = as_bytes ? StorageBytes(type, n) : n;
    if (storage < 0) storage = as_bytes ? NPY_UINT8 : Facts(type).storage;
    if (out.is_none()) {
      npy_intp shape[QLINEAR_MAX_RANK];
      if (as_bytes) {
        rank = 1;
        shape[0] = elements;
      } else {
        for (int i = 0; i < rank; ++i) shape[i] = dims[i];
      }
      PyObject* a = PyArray_SimpleNew(rank, shape, storage);
      if (a == nullptr) throw py::error_already_set();
      array = py::reinterpret_steal<py::object>(a);
    } else {
      if (!PyArray_Check(out.ptr())) Raise(PyExc_TypeError, "out: must be a NumPy array");
      PyArrayObject* o = reinterpret_cast<PyArrayObject*>(out.ptr());
      const int got = PyArray_DESCR(o)->type_num;
      if (as_bytes ? got != NPY_UINT8 : !StorageFits(type, got, false)) {
        const std::string want = as_bytes ? "uint8" : StorageNames(type, false);
        const std::string have = NumpyName(got);
        Raise(PyExc_TypeError, Format("out: the %s result is stored as %s, not %s", TypeName(type),
                                      want.c_str(), have.c_str()));
      }
      if (!PyArray_ISNOTSWAPPED(o)) Raise(PyExc_TypeError, "out: must be in native byte order");
      if (!PyArray_IS_C_CONTIGUOUS(o)) Raise(PyExc_ValueError, "out: must be C-contiguous");
      if (!PyArray_ISWRITEABLE(o)) Raise(PyExc_ValueError, "out: must be writeable");
      if (PyArray_SIZE(o) != elements) {
        Raise(PyExc_ValueError, Format("out: holds %lld elements, the result has %lld",
                                       static_cast<long long>(PyArray_SIZE(o)), static_cast<long long>(elements)));
      }
      const Extent e = ExtentOf(o);
      const char* names[] = {"x", "scale", "zero_point", "dy", "mask"};
      int i = 0;
      for (const Operand* in : inputs) {
        if (in != nullptr && e.Overlaps(in->extent())) {
          Raise(PyExc_ValueError, Format("out: overlaps %s (the output must not share memory with an input)",
                                         names[i]));
        }
        ++i;
      }
      array = py::reinterpret_borrow<py::object>(out);
    }
    bytes = static_cast<size_t>(StorageBytes(type, n));
    if (sub && !packed) {
      staging.resize(std::max<size_t>(bytes, 1));  // a valid pointer for an empty result too
      dest = staging.data();
    } else {
      dest = PyArray_DATA(Arr(array));
    }
  }

  // After the call (without the GIL): one code per element from the packed staging buffer.
  void Finish() {
    if (staging.empty()) return;
    const TypeFacts f = Facts(type);
    SpreadCodes(staging.data(), count, f.bits, f.storage == NPY_INT8, static_cast<uint8_t*>(PyArray_DATA(Arr(array))));
  }
};

// Runs a C call without the GIL (it only touches buffers this call holds references to), then
// spreads sub-byte codes; raises on a rejected call.
template <class Call>
void Run(Output& y, Call&& call) {
  qlinear_status status;
  {
    py::gil_scoped_release release;
    status = call();
    if (status == QLINEAR_OK) y.Finish();
  }
  Check(status);
}

// ---- keyword arguments ---------------------------------------------------------------------------
//
// The Q/DQ functions take their many keywords through one dict parsed here: pybind11 looks every
// declared argument up by a freshly made string (about 40 ns each), which for 19 arguments was
// most of a small call's cost. Names are interned, so a call site's keywords match by pointer.

enum Kw : int {
  kAxis, kBlockSize, kOutputDtype, kSaturate, kPrecision, kOpset, kXDtype, kScaleDtype, kZeroPointDtype,
  kPacked, kShape, kFirst, kCount, kThreads, kOut, kDy, kLda, kMask, kDyDtype, kKeywordCount
};
const char* const kKeywordNames[kKeywordCount] = {
    "axis", "block_size", "output_dtype", "saturate", "precision", "opset", "x_dtype", "scale_dtype",
    "zero_point_dtype", "packed", "shape", "first", "count", "threads", "out", "dy", "lda", "mask", "dy_dtype"};

constexpr uint32_t Bits(std::initializer_list<Kw> ks) {
  uint32_t m = 0;
  for (Kw k : ks) m |= 1u << k;
  return m;
}
constexpr uint32_t kQuantizeKeywords = Bits({kAxis, kBlockSize, kOutputDtype, kSaturate, kPrecision, kOpset,
                                             kXDtype, kScaleDtype, kZeroPointDtype, kPacked, kOut});
constexpr uint32_t kRangeKeywords = Bits({kShape, kFirst, kCount, kThreads});
constexpr uint32_t kDequantizeKeywords = Bits({kAxis, kBlockSize, kOutputDtype, kOpset, kXDtype, kScaleDtype,
                                               kZeroPointDtype, kPacked, kOut}) | kRangeKeywords;
constexpr uint32_t kBackwardKeywords = kQuantizeKeywords | Bits({kDy, kLda, kMask, kDyDtype});

PyObject* g_keyword_names[kKeywordCount];  // interned at import

class Keywords {
 public:
  Keywords(const py::kwargs& kwargs, uint32_t allowed, const char* function) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs.ptr(), &pos, &key, &value)) {
      int k = 0;
      while (k < kKeywordCount && key != g_keyword_names[k]) ++k;
      for (int j = 0; k == kKeywordCount && j < kKeywordCount; ++j) {
        if (PyUnicode_Compare(key, g_keyword_names[j]) == 0) k = j;
      }
      if (k == kKeywordCount || !(allowed >> k & 1)) {
        const std::string name = py::repr(key);  // (repr: a lone surrogate has no UTF-8)
        Raise(PyExc_TypeError, Format("%s() got an unexpected keyword argument %s", function, name.c_str()));
      }
      values_[k] = value;
    }
  }
  py::handle operator[](Kw k) const { return values_[k] ? py::handle(values_[k]) : py::handle(Py_None); }
  bool given(Kw k) const { return values_[k] != nullptr; }
  int64_t Int(Kw k, int64_t fallback) const {
    if (!given(k)) return fallback;
    if (!IsIntNumber(values_[k])) Raise(PyExc_TypeError, Format("%s: must be an int", kKeywordNames[k]));
    return OptionalInt(values_[k], kKeywordNames[k], fallback);
  }
  bool Bool(Kw k, bool fallback) const {
    if (!given(k)) return fallback;
    return BoolArg(values_[k], kKeywordNames[k]);
  }
  // A number passed on as float32: rounding is the conversion, becoming Inf or 0 is an error.
  float Float32(Kw k, float fallback) const {
    if (!given(k)) return fallback;
    CheckRealNumber(k);
    return AsFloat32(values_[k], kKeywordNames[k]);
  }
  int32_t Type(Kw k) const { return ParseType((*this)[k], kKeywordNames[k]); }

 private:
  // Python numbers and NumPy's integer and real scalars (numpy.float32 too); not complex.
  void CheckRealNumber(Kw k) const {
    PyObject* v = values_[k];
    if (!IsNumber(values_[k]) && !PyArray_IsScalar(v, Integer) && !PyArray_IsScalar(v, Floating)) {
      Raise(PyExc_TypeError, Format("%s: must be a number", kKeywordNames[k]));
    }
  }
  PyObject* values_[kKeywordCount] = {};
};

// ---- the parts every QuantizeLinear / DequantizeLinear binding shares ----------------------------

int32_t AsInt32(int64_t v, const char* arg) {
  if (v < INT32_MIN || v > INT32_MAX) Raise(PyExc_ValueError, Format("%s: out of the int32 range", arg));
  return static_cast<int32_t>(v);
}

// QuantizeLinear's operands: x (whole tensor), scale, zero point, attributes.
struct QuantizeOperands {
  Operand x, scale, zp;
  qlinear_quantize_attrs attrs;
  bool packed = false;
};

void LoadQuantize(QuantizeOperands& q, py::handle x, py::handle scale, py::handle zero_point, const Keywords& k) {
  qlinear_quantize_attrs_init(&q.attrs);
  q.attrs.opset = AsInt32(k.Int(kOpset, QLINEAR_NEWEST_OPSET), "opset");
  q.attrs.axis = k.Int(kAxis, 1);
  q.attrs.block_size = k.Int(kBlockSize, 0);
  q.attrs.output_dtype = k.Type(kOutputDtype);
  q.attrs.saturate = k.Bool(kSaturate, true) ? 1 : 0;
  q.attrs.precision = k.Type(kPrecision);
  q.packed = k.Bool(kPacked, false);
  q.x.LoadArray(x, "x", k.Type(kXDtype), 0, false, "x_dtype");
  LoadScale(q.scale, scale, k.Type(kScaleDtype));
  LoadZeroPoint(q.zp, zero_point, k.Type(kZeroPointDtype), q.attrs.output_dtype, QLINEAR_DTYPE_UINT8, q.packed,
                q.scale);
  PackWhole(q.zp, "zero_point");
}

int32_t QuantizeResultType(QuantizeOperands& q) {
  int32_t y_type = 0;
  Check(qlinear_quantize_output_info(&q.x.view(), q.scale.get(), q.zp.get(), &q.attrs, &y_type, nullptr));
  return y_type;
}

// threads=: None (serial), else the parallel entry point's options. Range calls are serial.
bool ParallelOptions(const Keywords& k, const Coverage& c, qlinear_parallel_options* o) {
  if (k[kThreads].is_none()) return false;
  if (c.range || !k[kFirst].is_none() || !k[kCount].is_none()) {  // even a range covering all of x
    Raise(PyExc_ValueError, "threads: a first=/count= call runs serially (the range entry points); drop threads=");
  }
  const int64_t threads = k.Int(kThreads, 0);
  if (threads < 0 || threads > 65536) Raise(PyExc_ValueError, "threads: must be None or 0..65536");
  qlinear_parallel_options_init(o);
  o->max_threads = static_cast<int32_t>(threads);
  return true;
}

// ---- the bindings ------------------------------------------------------------------------------

py::object QuantizeLinear(py::handle x, py::handle scale, py::handle zero_point, const py::kwargs& kwargs) {
  const Keywords k(kwargs, kQuantizeKeywords | kRangeKeywords, "quantize_linear");
  QuantizeOperands q;
  LoadQuantize(q, x, scale, zero_point, k);
  const Coverage c = Cover(q.x, k[kShape], k[kFirst], k[kCount]);
  qlinear_parallel_options o;
  const bool parallel = ParallelOptions(k, c, &o);
  Output y;
  y.Prepare(k[kOut], QuantizeResultType(q), c.count, q.packed, c.out_rank, c.out_dims, -1, {&q.x, &q.scale, &q.zp});
  Run(y, [&] {
    if (c.range) {
      return qlinear_quantize_linear_range(q.x.get(), q.scale.get(), q.zp.get(), &q.attrs, c.first, c.count, y.dest,
                                           y.bytes);
    }
    if (parallel) {
      return qlinear_quantize_linear_parallel(q.x.get(), q.scale.get(), q.zp.get(), &q.attrs, y.dest, y.bytes, &o);
    }
    return qlinear_quantize_linear(q.x.get(), q.scale.get(), q.zp.get(), &q.attrs, y.dest, y.bytes);
  });
  return y.array;
}

py::object DequantizeLinear(py::handle x, py::handle scale, py::handle zero_point, const py::kwargs& kwargs) {
  const Keywords k(kwargs, kDequantizeKeywords, "dequantize_linear");
  qlinear_dequantize_attrs attrs;
  qlinear_dequantize_attrs_init(&attrs);
  attrs.opset = AsInt32(k.Int(kOpset, QLINEAR_NEWEST_OPSET), "opset");
  attrs.axis = k.Int(kAxis, 1);
  attrs.block_size = k.Int(kBlockSize, 0);
  attrs.output_dtype = k.Type(kOutputDtype);
  const bool packed = k.Bool(kPacked, false);
  Operand xo, so, zo;
  xo.LoadArray(x, "x", k.Type(kXDtype), 0, packed, "x_dtype");
  LoadScale(so, scale, k.Type(kScaleDtype));
  LoadZeroPoint(zo, zero_point, k.Type(kZeroPointDtype), xo.type(), xo.type(), packed, so);
  PackWhole(zo, "zero_point");
  const Coverage c = Cover(xo, k[kShape], k[kFirst], k[kCount]);
  qlinear_parallel_options o;
  const bool parallel = ParallelOptions(k, c, &o);
  int32_t y_type = 0;
  Check(qlinear_dequantize_output_info(xo.get(), so.get(), zo.get(), &attrs, &y_type, nullptr));
  Output y;
  y.Prepare(k[kOut], y_type, c.count, packed, c.out_rank, c.out_dims, -1, {&xo, &so, &zo});
  Run(y, [&] {
    if (c.range) {
      return qlinear_dequantize_linear_range(xo.get(), so.get(), zo.get(), &attrs, c.first, c.count, y.dest,
                                             y.bytes);
    }
    if (parallel) return qlinear_dequantize_linear_parallel(xo.get(), so.get(), zo.get(), &attrs, y.dest, y.bytes, &o);
    return qlinear_dequantize_linear(xo.get(), so.get(), zo.get(), &attrs, y.dest, y.bytes);
  });
  return y.array;
}

py::tuple DynamicQuantizeLinear(py::handle x, py::handle out) {
  Operand xo;
  xo.LoadArray(x, "x", 0, 0, false, "");
  Output y;
  y.Prepare(out, QLINEAR_DTYPE_UINT8, xo.size(), false, xo.rank(), xo.dims(), -1, {&xo});
  float scale = 0;
  uint8_t zero_point = 0;
  Run(y, [&] {
    return qlinear_dynamic_quantize_linear(xo.get(), static_cast<uint8_t*>(y.dest), y.bytes, &scale, &zero_point);
  });
  py::object s = py::reinterpret_steal<py::object>(PyArray_SimpleNew(0, nullptr, NPY_FLOAT32));
  if (!s) throw py::error_already_set();
  py::object z = py::reinterpret_steal<py::object>(PyArray_SimpleNew(0, nullptr, NPY_UINT8));
  if (!z) throw py::error_already_set();
  *static_cast<float*>(PyArray_DATA(Arr(s))) = scale;
  *static_cast<uint8_t*>(PyArray_DATA(Arr(z))) = zero_point;
  return py::make_tuple(y.array, s, z);
}

// A name among `names` (index + 1 is the C enum value); TypeError / ValueError otherwise.
int32_t ParseChoice(py::handle obj, const char* arg, std::initializer_list<const char*> names) {
  std::string list;
  for (const char* n : names) list += std::string(list.empty() ? "" : ", ") + "\"" + n + "\"";
  if (!PyUnicode_Check(obj.ptr())) Raise(PyExc_TypeError, Format("%s: must be one of %s", arg, list.c_str()));
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
  if (utf8 == nullptr) PyErr_Clear();  // a lone surrogate: no name matches
  const std::string value = utf8 != nullptr ? std::string(utf8, static_cast<size_t>(size)) : std::string();
  int32_t i = 1;
  for (const char* n : names) {
    if (utf8 != nullptr && value == n) return i;
    ++i;
  }
  const std::string shown = py::repr(obj);
  Raise(PyExc_ValueError, Format("%s: %s is not one of %s", arg, shown.c_str(), list.c_str()));
  return 0;
}

// The attributes of the dynamic calls, from their keywords.
qlinear_dynamic_attrs DynamicAttrs(py::handle output_dtype, py::handle rule, py::handle granularity, py::handle axis,
                                   py::handle block_size, py::handle scale_dtype) {
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = ParseType(output_dtype, "output_dtype");
  if (a.output_dtype == 0) Raise(PyExc_TypeError, "output_dtype: required (e.g. \"int8\", \"float8e4m3fn\")");
  a.rule = ParseChoice(rule, "rule", {"absmax", "minmax", "mx", "pow2_ceil"});
  a.granularity = ParseChoice(granularity, "granularity", {"tensor", "axis", "block"});
  if (a.granularity == QLINEAR_GRANULARITY_AXIS && axis.is_none()) {
    Raise(PyExc_ValueError, "axis: granularity \"axis\" needs an axis (a scale per row of [rows, cols]: axis=0)");
  }
  if (!axis.is_none() && !IsIntNumber(axis)) Raise(PyExc_TypeError, "axis: must be an int or None");
  if (a.granularity == QLINEAR_GRANULARITY_TENSOR && !axis.is_none()) {
    Raise(PyExc_ValueError, "axis: granularity \"tensor\" takes no axis (one scale for the whole tensor)");
  }
  a.axis = OptionalInt(axis, "axis", -1);
  if (!block_size.is_none() && !IsIntNumber(block_size)) Raise(PyExc_TypeError, "block_size: must be an int or None");
  a.block_size = OptionalInt(block_size, "block_size", a.granularity == QLINEAR_GRANULARITY_BLOCK ? 32 : 0);
  a.scale_dtype = ParseType(scale_dtype, "scale_dtype");
  return a;
}

// The scale's (and zero point's) shape and type of a dynamic call on a tensor of `rank` dims
// (valid: the library accepted the axis and block size).
struct DynamicScaleShape {
  int rank = 0;
  int64_t dims[QLINEAR_MAX_RANK] = {};
  int64_t groups = 1;
  int32_t type = 0;
  DynamicScaleShape(const qlinear_dynamic_attrs& a, int x_rank, const int64_t* x_dims) {
    const int64_t ax = a.axis < 0 ? a.axis + x_rank : a.axis;
    if (a.granularity == QLINEAR_GRANULARITY_AXIS) {
      rank = 1;
      dims[0] = x_dims[ax];
    } else if (a.granularity == QLINEAR_GRANULARITY_BLOCK) {
      rank = x_rank;
      for (int i = 0; i < x_rank; ++i) dims[i] = x_dims[i];
      dims[ax] = dims[ax] / a.block_size + (dims[ax] % a.block_size != 0);
    }
    for (int i = 0; i < rank; ++i) groups *= dims[i];
    type = a.scale_dtype != 0 ? a.scale_dtype
           : a.rule == QLINEAR_SCALE_MX || a.rule == QLINEAR_SCALE_POW2_CEIL ? QLINEAR_DTYPE_FLOAT8E8M0
                                                                              : QLINEAR_DTYPE_FLOAT;
  }
};

// Scales computed from the data: qlinear_quantize_dynamic (or _parallel with threads=).
py::tuple QuantizeDynamic(py::handle x, py::handle output_dtype, py::handle rule, py::handle granularity,
                          py::handle axis, py::handle block_size, py::handle scale_dtype, py::handle x_dtype,
                          py::handle packed_obj, py::handle threads) {
  qlinear_dynamic_attrs a = DynamicAttrs(output_dtype, rule, granularity, axis, block_size, scale_dtype);
  const bool packed = BoolArg(packed_obj, "packed");
  qlinear_parallel_options o;
  const bool parallel = !threads.is_none();
  if (parallel) {
    if (!IsIntNumber(threads)) Raise(PyExc_TypeError, "threads: must be an int or None");
    const int64_t n = OptionalInt(threads, "threads", 0);
    if (n < 0 || n > 65536) Raise(PyExc_ValueError, "threads: must be None or 0..65536");
    qlinear_parallel_options_init(&o);
    o.max_threads = static_cast<int32_t>(n);
  }
  Operand xo;
  xo.LoadArray(x, "x", ParseType(x_dtype, "x_dtype"), 0, false, "x_dtype");
  size_t y_bytes = 0, scale_bytes = 0, zp_bytes = 0;
  Check(qlinear_quantize_dynamic_output_info(xo.get(), &a, &y_bytes, &scale_bytes, &zp_bytes));
  const DynamicScaleShape ss(a, xo.rank(), xo.dims());
  Output y, scale, zp;
  y.Prepare(py::none(), a.output_dtype, xo.size(), packed, xo.rank(), xo.dims(), -1, {&xo});
  scale.Prepare(py::none(), ss.type, ss.groups, false, ss.rank, ss.dims, -1, {});
  const bool has_zp = a.rule == QLINEAR_SCALE_MINMAX;
  if (has_zp) zp.Prepare(py::none(), a.output_dtype, ss.groups, packed, ss.rank, ss.dims, -1, {});
  if (y.bytes != y_bytes || scale.bytes != scale_bytes || zp.bytes != zp_bytes) {
    Raise(PyExc_RuntimeError, "quantize_dynamic: output sizes disagree with the library's");
  }
  qlinear_status status;
  {
    py::gil_scoped_release release;
    void* zp_dest = has_zp ? zp.dest : nullptr;
    status = parallel ? qlinear_quantize_dynamic_parallel(xo.get(), &a, y.dest, y.bytes, scale.dest, scale.bytes,
                                                          zp_dest, zp.bytes, &o)
                      : qlinear_quantize_dynamic(xo.get(), &a, y.dest, y.bytes, scale.dest, scale.bytes, zp_dest,
                                                 zp.bytes);
    if (status == QLINEAR_OK) {
      y.Finish();
      if (has_zp) zp.Finish();
    }
  }
  Check(status);
  return py::make_tuple(y.array, scale.array, has_zp ? zp.array : py::object(py::none()));
}

// A new float32 array of `groups` rows of 2 (qlinear_dynamic_ranges' layout).
py::object NewRanges(int64_t groups) {
  npy_intp d[2] = {static_cast<npy_intp>(groups), 2};
  PyObject* a = PyArray_SimpleNew(2, d, NPY_FLOAT32);
  if (a == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(a);
}

// A sharded tensor's per-group ranges: qlinear_dynamic_ranges over the elements x covers.
py::object DynamicRanges(py::handle x, py::handle output_dtype, py::handle rule, py::handle granularity,
                         py::handle axis, py::handle block_size, py::handle scale_dtype, py::handle x_dtype,
                         py::handle shape, py::handle first, py::handle count) {
  const qlinear_dynamic_attrs a = DynamicAttrs(output_dtype, rule, granularity, axis, block_size, scale_dtype);
  Operand xo;
  xo.LoadArray(x, "x", ParseType(x_dtype, "x_dtype"), 0, false, "x_dtype");
  const Coverage c = Cover(xo, shape, first, count);
  size_t y_bytes = 0, scale_bytes = 0, zp_bytes = 0;
  Check(qlinear_quantize_dynamic_output_info(xo.get(), &a, &y_bytes, &scale_bytes, &zp_bytes));
  const DynamicScaleShape ss(a, c.rank, c.dims);
  py::object ranges = NewRanges(ss.groups);
  float* r = static_cast<float*>(PyArray_DATA(Arr(ranges)));
  const size_t bytes = static_cast<size_t>(ss.groups) * 2 * sizeof(float);
  qlinear_status status;
  {
    py::gil_scoped_release release;
    status = qlinear_dynamic_ranges(xo.get(), &a, c.first, c.count, r, bytes);
  }
  Check(status);
  return ranges;
}

// Scales and zero points from reduced ranges: qlinear_dynamic_scales (x's data not read).
py::tuple DynamicScales(py::handle ranges, py::handle output_dtype, py::handle shape, py::handle rule,
                        py::handle granularity, py::handle axis, py::handle block_size, py::handle scale_dtype,
                        py::handle x_dtype, py::handle packed_obj) {
  const bool packed = BoolArg(packed_obj, "packed");
  const qlinear_dynamic_attrs a = DynamicAttrs(output_dtype, rule, granularity, axis, block_size, scale_dtype);
  // The tensor's dtype and shape only.
  const int32_t xt = ParseType(x_dtype, "x_dtype");
  if (xt != 0 && xt != QLINEAR_DTYPE_FLOAT && xt != QLINEAR_DTYPE_FLOAT16 && xt != QLINEAR_DTYPE_BFLOAT16) {
    Raise(PyExc_TypeError, Format("x_dtype: dynamic quantization takes float32, float16 or bfloat16, not %s",
                                  TypeName(xt)));
  }
  qlinear_tensor xv{xt != 0 ? xt : QLINEAR_DTYPE_FLOAT, 0, nullptr, nullptr};
  int64_t dims[QLINEAR_MAX_RANK] = {};
  int rank = 0;
  int64_t total = 0;
  ParseShape(shape, &rank, dims, &total);
  xv.rank = rank;
  xv.shape = dims;
  size_t y_bytes = 0, scale_bytes = 0, zp_bytes = 0;
  Check(qlinear_quantize_dynamic_output_info(&xv, &a, &y_bytes, &scale_bytes, &zp_bytes));
  const DynamicScaleShape ss(a, xv.rank, dims);
  // ranges: float32, 2 per group (NewRanges' layout, or flat); any other layout, byte order or
  // alignment is copied once, as every array input is (a float* must be aligned for float).
  py::object ranges_array = ToArray(ranges);
  PyArrayObject* ra = Arr(ranges_array);
  if (PyArray_DESCR(ra)->type_num != NPY_FLOAT32) {
    Raise(PyExc_TypeError, Format("ranges: must be float32, as dynamic_ranges returns it, not %s",
                                  DescrName(PyArray_DESCR(ra)).c_str()));
  }
  if (PyArray_SIZE(ra) != 2 * ss.groups) {
    Raise(PyExc_ValueError, Format("ranges: holds %lld values; %lld groups take 2 each (%lld)",
                                   static_cast<long long>(PyArray_SIZE(ra)), static_cast<long long>(ss.groups),
                                   static_cast<long long>(2 * ss.groups)));
  }
  if (!PyArray_ISCARRAY_RO(ra) || !PyArray_ISNOTSWAPPED(ra)) {
    PyObject* c = PyArray_FromArray(ra, PyArray_DescrFromType(NPY_FLOAT32), NPY_ARRAY_CARRAY_RO);
    if (c == nullptr) throw py::error_already_set();
    ranges_array = py::reinterpret_steal<py::object>(c);
    ra = Arr(ranges_array);
  }
  const float* r = static_cast<const float*>(PyArray_DATA(ra));
  Output scale, zp;
  scale.Prepare(py::none(), ss.type, ss.groups, false, ss.rank, ss.dims, -1, {});
  const bool has_zp = a.rule == QLINEAR_SCALE_MINMAX;
  if (has_zp) zp.Prepare(py::none(), a.output_dtype, ss.groups, packed, ss.rank, ss.dims, -1, {});
  if (scale.bytes != scale_bytes || zp.bytes != zp_bytes) {
    Raise(PyExc_RuntimeError, "dynamic_scales: output sizes disagree with the library's");
  }
  qlinear_status status;
  {
    py::gil_scoped_release release;
    status = qlinear_dynamic_scales(&xv, &a, r, static_cast<size_t>(PyArray_SIZE(ra)) * sizeof(float), scale.dest,
                                    scale.bytes, has_zp ? zp.dest : nullptr, zp.bytes);
    if (status == QLINEAR_OK && has_zp) zp.Finish();
  }
  Check(status);
  return py::make_tuple(scale.array, has_zp ? zp.array : py::object(py::none()));
}

py::object NewBytes(int64_t n) {
  npy_intp d = n;
  PyObject* a = PyArray_SimpleNew(1, &d, NPY_UINT8);
  if (a == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(a);
}

py::tuple QuantizeLinearMasked(py::handle x, py::handle scale, py::handle zero_point, const py::kwargs& kwargs) {
  const Keywords k(kwargs, kQuantizeKeywords, "quantize_linear_masked");
  QuantizeOperands q;
  LoadQuantize(q, x, scale, zero_point, k);
  Output y;
  y.Prepare(k[kOut], QuantizeResultType(q), q.x.size(), q.packed, q.x.rank(), q.x.dims(), -1,
            {&q.x, &q.scale, &q.zp});
  py::object mask = NewBytes((q.x.size() + 7) / 8);
  uint8_t* m = static_cast<uint8_t*>(PyArray_DATA(Arr(mask)));
  const size_t mask_bytes = static_cast<size_t>(PyArray_SIZE(Arr(mask)));
  Run(y, [&] {
    return qlinear_quantize_linear_masked(q.x.get(), q.scale.get(), q.zp.get(), &q.attrs, y.dest, y.bytes, m,
                                          mask_bytes);
  });
  return py::make_tuple(y.array, mask);
}

py::object QuantizeLinearBackward(py::handle x, py::handle scale, py::handle zero_point, const py::kwargs& kwargs) {
  const Keywords k(kwargs, kBackwardKeywords, "quantize_linear_backward");
  if (!k.given(kDy)) Raise(PyExc_TypeError, "quantize_linear_backward() missing required keyword argument 'dy'");
  QuantizeOperands q;
  LoadQuantize(q, x, scale, zero_point, k);
  Operand g;
  g.LoadArray(k[kDy], "dy", k.Type(kDyDtype), 0, false, "dy_dtype");
  // The clamp mask: None (recomputed), the uint8 bit mask quantize_linear_masked returned, or
  // one bool per element.
  Operand m;
  std::vector<uint8_t> bits;
  const uint8_t* mask_data = nullptr;
  size_t mask_bytes = 0;
  if (!k[kMask].is_none()) {
    m.LoadRaw(k[kMask]);
    mask_data = static_cast<const uint8_t*>(m.view().data);
    mask_bytes = static_cast<size_t>(m.size());
    if (m.storage() == NPY_BOOL) {
      if (m.size() != q.x.size()) {
        Raise(PyExc_ValueError, Format("mask: a bool mask has one element per element of x (%lld), got %lld",
                                       static_cast<long long>(q.x.size()), static_cast<long long>(m.size())));
      }
      bits.resize(static_cast<size_t>((m.size() + 7) / 8));
      PackFlags(mask_data, m.size(), bits.data());
      mask_data = bits.data();
      mask_bytes = bits.size();
    } else if (m.storage() != NPY_UINT8) {
      Raise(PyExc_TypeError, "mask: must be the uint8 bit mask quantize_linear_masked returned, or a bool array");
    }
  }
  const float lda = k.Float32(kLda, 1.0f);
  Output dx;
  dx.Prepare(k[kOut], g.type(), g.size(), false, g.rank(), g.dims(), g.storage(), {&q.x, &q.scale, &q.zp, &g, &m});
  Run(dx, [&] {
    return qlinear_quantize_linear_backward(q.x.get(), q.scale.get(), q.zp.get(), &q.attrs, g.get(), lda, mask_data,
                                            mask_bytes, dx.dest, dx.bytes);
  });
  return dx.array;
}

int32_t SubByteType(py::handle dtype) {
  const int32_t type = ParseType(dtype, "dtype");
  if (!IsSubByte(type)) {
    Raise(PyExc_TypeError, Format("dtype: pack and unpack take a 4- or 2-bit type, got %s", TypeName(type)));
  }
  return type;
}

py::object Pack(py::handle codes, py::handle dtype) {
  const int32_t type = SubByteType(dtype);
  Operand c;
  c.LoadArray(codes, "codes", type, 0, false, "dtype");
  PackWhole(c, "codes");
  py::object bytes = NewBytes(StorageBytes(type, c.size()));
  if (PyArray_SIZE(Arr(bytes)) > 0) {
    std::memcpy(PyArray_DATA(Arr(bytes)), c.view().data, static_cast<size_t>(PyArray_SIZE(Arr(bytes))));
  }
  return bytes;
}

py::object Unpack(py::handle packed, py::handle dtype, py::handle shape) {
  const int32_t type = SubByteType(dtype);
  Operand p;
  p.LoadArray(packed, "packed", type, 0, true, "dtype");
  const Coverage c = Cover(p, shape, py::none(), py::none(), "packed");
  Output y;
  y.Prepare(py::none(), type, c.count, false, c.rank, c.dims, -1, {});
  {
    py::gil_scoped_release release;  // the codes are spread without Python objects (as Pack's are)
    if (y.bytes > 0) std::memcpy(y.dest, p.view().data, y.bytes);
    y.Finish();
  }
  return y.array;
}

py::list TargetList(const char* names) {
  py::list list;
  std::string s = names;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t end = std::min(s.find(' ', pos), s.size());
    if (end > pos) list.append(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return list;
}

}  // namespace

PYBIND11_MODULE(_qlinear, m) {
  if (_import_array() < 0) throw py::error_already_set();
  for (int k = 0; k < kKeywordCount; ++k) {
    g_keyword_names[k] = PyUnicode_InternFromString(kKeywordNames[k]);
    if (g_keyword_names[k] == nullptr) throw py::error_already_set();
  }
  m.doc() = "qlinear: ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear on NumPy arrays, "
            "bit-exact, on the best SIMD target of this CPU.";
  m.attr("__version__") = qlinear_version();
  m.attr("NEWEST_OPSET") = QLINEAR_NEWEST_OPSET;

  // Each docstring starts with the signature in the form CPython reads as __text_signature__
  // (inspect.signature and help() show the keywords, which arrive as **kwargs).
  py::options options;
  options.disable_function_signatures();
  using py::arg;
  const py::none none;
  m.def("quantize_linear", &QuantizeLinear, arg("x"), arg("scale"), arg("zero_point") = none,
        R"doc(quantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None, saturate=True, precision=None, opset=25, x_dtype=None, scale_dtype=None, zero_point_dtype=None, packed=False, shape=None, first=None, count=None, threads=None, out=None)
--

ONNX QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point).

x: float32, float16, int32 array, or bfloat16 bits (uint16/int16 array with x_dtype="bfloat16").
scale: a number (float32) or an array: one element (per tensor), 1-D of x.shape[axis] (per axis),
    or x's rank with ceil(D / block_size) on the axis (blocked). float32, float16, bfloat16 bits
    (scale_dtype="bfloat16"), float8e8m0 codes (uint8, scale_dtype="float8e8m0").
zero_point: None, a number (an int range-checked against the output type; float8/float4 take a
    value the format holds exactly) or an array of the scale's shape. Its type is the output type.
axis, block_size, saturate, precision, opset: the ONNX attributes (precision by type name).
output_dtype: the output type (ONNX name, TensorProto code or NumPy dtype); default: the zero
    point's type, else uint8.
x_dtype, scale_dtype, zero_point_dtype: what an array holds when its NumPy dtype does not say it
    (bfloat16 bits, float8 codes, 4-/2-bit codes).
packed: sub-byte outputs and zero points as ONNX raw_data bytes (flat uint8) instead of one code
    per element (int8 for int4/int2, uint8 for uint4/uint2/float4e2m1).
shape, first, count: compute elements [first, first + count) of the flattened tensor. Without
    shape=, x is the whole tensor; with shape= (the whole tensor's shape), x holds just those
    elements (a shard). Such calls run serially.
threads: None runs on the calling thread; N uses the parallel entry point with at most N threads
    (0: one per core). Small tensors still run on one thread.
out: an array to write the result into (dtype, size, C-contiguity checked; must not overlap an
    input); returned.

Returns the quantized array in x's shape (1-D for a sub-range; flat uint8 bytes when packed).
Raises TypeError for types, ValueError for shapes, attributes and values, MemoryError.)doc");

  m.def("dequantize_linear", &DequantizeLinear, arg("x"), arg("scale"), arg("zero_point") = none,
        R"doc(dequantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None, opset=25, x_dtype=None, scale_dtype=None, zero_point_dtype=None, packed=False, shape=None, first=None, count=None, threads=None, out=None)
--

ONNX DequantizeLinear: y = (x - zero_point) * scale.

x: int8, uint8, int16, uint16, int32 array; float8 codes (uint8, x_dtype="float8e4m3fn", ...);
    4-/2-bit codes, one per element (x_dtype="int4", "uint4", "float4e2m1", "int2", "uint2"), or
    with packed=True the ONNX raw_data bytes (flat uint8), which need shape=.
scale: a number (float32) or an array (per tensor, per axis, blocked as for quantize_linear):
    float32, float16, bfloat16 bits (scale_dtype="bfloat16"), float8e8m0 codes (needs output_dtype).
zero_point: None, a number or an array of x's type and the scale's shape.
output_dtype: float32, float16 or bfloat16 (opset >= 23); default the scale's type. bfloat16
    results are uint16 arrays of the bits.
shape, first, count, threads, out, packed, opset, axis, block_size: as for quantize_linear; shape=
    is also the logical shape of a packed x (a packed shard's count defaults to the rest of the
    tensor).

Returns the dequantized array in x's (logical) shape.)doc");

  m.def("dynamic_quantize_linear", &DynamicQuantizeLinear, arg("x"), py::kw_only(), arg("out") = none,
        R"doc(dynamic_quantize_linear(x, *, out=None)
--

ONNX DynamicQuantizeLinear (opset 11) on a float32 array (at least one element).

Returns (y, scale, zero_point): y uint8 in x's shape (or out=), scale a 0-d float32 array,
zero_point a 0-d uint8 array.)doc");

  m.def("quantize_dynamic", &QuantizeDynamic, arg("x"), arg("output_dtype"), py::kw_only(), arg("rule") = "absmax",
        arg("granularity") = "block", arg("axis") = none, arg("block_size") = none, arg("scale_dtype") = none,
        arg("x_dtype") = none, arg("packed") = false, arg("threads") = none,
        R"doc(quantize_dynamic(x, output_dtype, *, rule="absmax", granularity="block", axis=None, block_size=None, scale_dtype=None, x_dtype=None, packed=False, threads=None)
--

Quantization with scales computed from the data, per tensor, per axis or per block.

x: float32, float16, or bfloat16 bits (uint16/int16 array with x_dtype="bfloat16").
output_dtype: the quantized type (ONNX name, TensorProto code or NumPy dtype).
rule: "absmax" (symmetric: scale = amax / P, signed outputs), "minmax" (asymmetric with a zero
    point, integer outputs), "mx" (OCP Microscaling: float8e8m0 scale 2^(floor(log2 amax) - emax)),
    "pow2_ceil" (the smallest power of two with which nothing saturates).
granularity: "block" (block_size elements along axis; default 32 along axis -1), "axis" (a scale
    per index along axis, which must be given: per row of [rows, cols] is axis=0), "tensor".
scale_dtype: float32, float16 or bfloat16 for absmax/minmax (default float32); float8e8m0 for
    mx/pow2_ceil (the default there).
packed: sub-byte y and zero point as ONNX raw_data bytes (flat uint8).
threads: None runs on the calling thread; N uses at most N threads (0: one per core); the same
    bytes either way.

Returns (y, scale, zero_point): y in x's shape; scale per tensor a 0-d array, per axis
[x.shape[axis]], blocked x's shape with ceil(D / block_size) on the axis (bfloat16 scales as
uint16 bits, float8e8m0 as uint8 codes); zero_point (the scale's shape, output_dtype) for
"minmax", else None. quantize_linear(x, scale, zero_point, axis=..., block_size=...,
output_dtype=..., precision="float32") gives y back exactly; dequantize_linear gives x back within
about half a step where it did not saturate (x / scale is rounded to float32 before it is rounded
to an integer, so the error can exceed half a step by that rounding).)doc");

  m.def("dynamic_ranges", &DynamicRanges, arg("x"), arg("output_dtype"), py::kw_only(), arg("rule") = "absmax",
        arg("granularity") = "block", arg("axis") = none, arg("block_size") = none, arg("scale_dtype") = none,
        arg("x_dtype") = none, arg("shape") = none, arg("first") = none, arg("count") = none,
        R"doc(dynamic_ranges(x, output_dtype, *, rule="absmax", granularity="block", axis=None, block_size=None, scale_dtype=None, x_dtype=None, shape=None, first=None, count=None)
--

Per-group ranges of a shard, for quantize_dynamic's scales of a tensor split across processes.

x, shape, first, count: as for quantize_linear (with shape=, the whole tensor's shape, x holds
    elements [first, first + x.size) of it). The other arguments: as for quantize_dynamic (no
    packed=, no threads=: the call runs on the calling thread).
Returns a float32 array [groups, 2] over the whole tensor's groups: absmax, mx, pow2_ceil
    [amax, amax] of the shard's elements of each group (mx, pow2_ceil: +inf where it holds a NaN
    or an infinity); minmax [-lo, hi]; 0 for groups the shard does not touch. numpy.maximum over
    the shards' arrays (MPI: Allreduce with MAX) gives the whole tensor's; dynamic_scales turns it
    into quantize_dynamic's scale and zero point.)doc");

  m.def("dynamic_scales", &DynamicScales, arg("ranges"), arg("output_dtype"), py::kw_only(), arg("shape"),
        arg("rule") = "absmax", arg("granularity") = "block", arg("axis") = none, arg("block_size") = none,
        arg("scale_dtype") = none, arg("x_dtype") = none, arg("packed") = false,
        R"doc(dynamic_scales(ranges, output_dtype, *, shape, rule="absmax", granularity="block", axis=None, block_size=None, scale_dtype=None, x_dtype=None, packed=False)
--

quantize_dynamic's scale and zero point from the reduced ranges of dynamic_ranges.

ranges: float32, 2 values per group of the whole tensor (entries >= 0, not NaN). shape: the
whole tensor's shape. x_dtype: the tensor's type (float32 if None; the scales do not depend on
it). The other arguments: as for quantize_dynamic (no threads=: the call is per group, not per
element). Returns (scale, zero_point or None), the arrays quantize_dynamic of the whole tensor
returns with the same packed=; quantize_linear(shard, scale, zero_point, axis=...,
block_size=..., output_dtype=..., precision="float32", shape=..., first=...) then gives each
shard's part of y (axis=-1 for blocks when axis was left at None: quantize_linear's default
axis is 1; block_size=0 unless the granularity is "block").)doc");

  m.def("quantize_linear_masked", &QuantizeLinearMasked, arg("x"), arg("scale"), arg("zero_point") = none,
        R"doc(quantize_linear_masked(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None, saturate=True, precision=None, opset=25, x_dtype=None, scale_dtype=None, zero_point_dtype=None, packed=False, out=None)
--

QuantizeLinear that also records where the quantizer clamped (for the backward pass).

Arguments as quantize_linear (whole tensors, serial). Returns (y, mask): y as quantize_linear's,
mask a uint8 array of ceil(x.size / 8) bytes, bit i % 8 of byte i // 8 set where element i was
clamped (numpy.unpackbits(mask, count=x.size, bitorder="little") gives one 0/1 per element).)doc");

  m.def("quantize_linear_backward", &QuantizeLinearBackward, arg("x"), arg("scale"), arg("zero_point") = none,
        R"doc(quantize_linear_backward(x, scale, zero_point=None, *, dy, lda=1.0, mask=None, axis=1, block_size=0, output_dtype=None, saturate=True, precision=None, opset=25, x_dtype=None, scale_dtype=None, zero_point_dtype=None, dy_dtype=None, packed=False, out=None)
--

QuantizeLinear's backward pass (straight-through estimator).

dx = 0 where the forward pass clamped, else dy * (lda / scale) (one float32 product, rounded once
to dy's type). dy: float32, float16 or bfloat16 bits (dy_dtype="bfloat16"), x's shape. mask: None
(recomputed from x), the bit mask quantize_linear_masked returned, or a bool array, one element
per element of x. The other arguments are the forward call's. Returns dx (dy's dtype, x's shape).)doc");

  m.def("pack", &Pack, arg("codes"), arg("dtype"),
        R"doc(pack(codes, dtype)
--

One code per element (int8 for int4/int2, uint8 for uint4/uint2/float4e2m1) to the ONNX
raw_data packing: a flat uint8 array, element 0 in the low bits, padding bits zero. Codes outside
the type's range raise ValueError.)doc");
  m.def("unpack", &Unpack, arg("packed"), arg("dtype"), arg("shape"),
        R"doc(unpack(packed, dtype, shape)
--

ONNX raw_data bytes of a 4- or 2-bit type to one code per element, in `shape`.)doc");

  m.def("active_target", [] { return std::string(qlinear_active_target()); },
        "active_target()\n--\n\nName of the SIMD target the calls run on here (e.g. \"AVX3_DL\", \"NEON\").");
  m.def("compiled_targets", [] { return TargetList(qlinear_compiled_targets()); },
        "compiled_targets()\n--\n\nSIMD targets compiled into the library, best first.");
  m.def("supported_targets", [] { return TargetList(qlinear_supported_targets()); },
        "supported_targets()\n--\n\nCompiled SIMD targets this CPU can run, best first.");
  m.def("set_target",
        [](py::handle name) {
          if (!name.is_none() && !PyUnicode_Check(name.ptr())) Raise(PyExc_TypeError, "name: must be a str or None");
          std::string s;
          if (!name.is_none()) {
            Py_ssize_t n = 0;
            const char* utf8 = PyUnicode_AsUTF8AndSize(name.ptr(), &n);
            if (utf8 == nullptr) {
              PyErr_Clear();
              Raise(PyExc_ValueError, "name: not encodable as UTF-8");
            }
            s.assign(utf8, static_cast<size_t>(n));
          }
          if (s.find('\0') != std::string::npos) Raise(PyExc_ValueError, "name: contains a NUL character");
          Check(qlinear_set_target(name.is_none() ? nullptr : s.c_str()));
        },
        arg("name"),
        "set_target(name)\n--\n\nPins every later call of the process to one SIMD target (a name from "
        "supported_targets(), in either case);\nNone or \"\" unpins. All targets give identical results.");
  m.def("openmp_enabled", [] { return qlinear_openmp_enabled() != 0; },
        "openmp_enabled()\n--\n\nWhether threads=N runs on OpenMP (otherwise such calls run serially).");
  m.def("dtype_name",
        [](py::handle dtype) {
          if (dtype.is_none()) {
            Raise(PyExc_TypeError, "dtype: expected an ONNX type name, a TensorProto code or a NumPy dtype, got None");
          }
          return std::string(TypeName(ParseType(dtype, "dtype")));
        },
        arg("dtype"),
        "dtype_name(dtype)\n--\n\nThe ONNX name of a type given by name, TensorProto code or NumPy dtype.");
}
