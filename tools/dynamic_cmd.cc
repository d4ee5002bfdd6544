// `qlinear dynamic`: dynamic quantization of random data or a raw float32 file with a chosen rule
// and type; prints the reconstruction error (max |x - DQ(Q(x))|, SQNR) and the rate, so a user
// can compare int8 / int4 / MXFP8 / MXFP4 settings on their own tensor.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "qlinear/qlinear.hpp"
#include "tools/commands.h"

namespace qlinear {
namespace tools {

bool ParseScaleRule(const std::string& name, int32_t* rule) {
  static const struct {
    const char* name;
    int32_t rule;
  } kRules[] = {{"absmax", QLINEAR_SCALE_ABSMAX},
                {"minmax", QLINEAR_SCALE_MINMAX},
                {"mx", QLINEAR_SCALE_MX},
                {"pow2_ceil", QLINEAR_SCALE_POW2_CEIL}};
  for (const auto& r : kRules) {
    if (name == r.name) {
      *rule = r.rule;
      return true;
    }
  }
  return false;
}

bool ParseGranularity(const std::string& name, int32_t* granularity) {
  if (name == "tensor") *granularity = QLINEAR_GRANULARITY_TENSOR;
  else if (name == "axis") *granularity = QLINEAR_GRANULARITY_AXIS;
  else if (name == "block") *granularity = QLINEAR_GRANULARITY_BLOCK;
  else return false;
  return true;
}

bool ParseDataType(const std::string& name, int32_t* dtype) {
  for (int32_t code = 1; code < 64; ++code) {
    if (name != "unknown" && name == qlinear_dtype_name(code)) {  // "unknown": codes without a type
      *dtype = code;
      return true;
    }
  }
  return false;
}

namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "qlinear dynamic: %s%s\n", what, detail.c_str());
  return 2;
}

// The library's message with its attribute name replaced by the option that sets it.
int FailWithLibraryMessage(const std::string& message) {
  static const struct {
    const char* field;
    const char* option;
  } kOptions[] = {{"output_dtype: ", "--type: "}, {"scale_dtype: ", "--scale-type: "}, {"axis: ", "--axis: "},
                  {"block_size: ", "--block-size: "}, {"granularity: ", "--granularity: "}, {"rule: ", "--rule: "}};
  for (const auto& o : kOptions) {
    if (message.rfind(o.field, 0) == 0) return Fail(o.option, message.substr(std::strlen(o.field)));
  }
  return Fail("", message);
}

// At most kMaxValues values (1 GiB of float32): a larger file is refused, not read.
constexpr size_t kMaxValues = size_t{1} << 28;

bool ReadFloats(const std::string& path, std::vector<float>* x, std::string* why) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *why = std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxValues * 4) {
    *why = "more than " + std::to_string(kMaxValues) + " values";
    return false;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *why = std::strerror(errno);
    return false;
  }
  std::vector<char> bytes;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    if (bytes.size() + got > kMaxValues * 4) {
      std::fclose(f);
      *why = "more than " + std::to_string(kMaxValues) + " values";
      return false;
    }
    bytes.insert(bytes.end(), buf, buf + got);
  }
  const bool ok = !std::ferror(f) && bytes.size() % 4 == 0;
  *why = std::ferror(f) ? "read error" : "the size is not a multiple of 4 bytes";
  std::fclose(f);
  if (!ok) return false;
  x->resize(bytes.size() / 4);
  if (!bytes.empty()) std::memcpy(x->data(), bytes.data(), bytes.size());
  return true;
}

int RunDynamicUnguarded(const DynamicCommandOptions& o) {
  qlinear_dynamic_attrs c;
  qlinear_dynamic_attrs_init(&c);
  if (!ParseScaleRule(o.rule, &c.rule)) return Fail("unknown rule ", "'" + o.rule + "' (absmax, minmax, mx, pow2_ceil)");
  if (!ParseDataType(o.output_type, &c.output_dtype)) return Fail("unknown output type ", "'" + o.output_type + "'");
  if (!ParseGranularity(o.granularity, &c.granularity)) {
    return Fail("unknown granularity ", "'" + o.granularity + "' (tensor, axis, block)");
  }
  if (!o.scale_type.empty() && !ParseDataType(o.scale_type, &c.scale_dtype)) {
    return Fail("unknown scale type ", "'" + o.scale_type + "'");
  }
  if (c.granularity == QLINEAR_GRANULARITY_TENSOR && o.axis_given) {
    return Fail("granularity tensor takes no --axis ", "(one scale for the whole tensor)");
  }
  if (c.granularity == QLINEAR_GRANULARITY_AXIS && !o.axis_given) {
    return Fail("granularity axis needs --axis ", "(per row of [rows, cols]: 0)");
  }
  if (c.granularity != QLINEAR_GRANULARITY_BLOCK && o.block_size_given) {
    return Fail("--block-size ", "needs granularity block (granularity " + o.granularity + " has no blocks)");
  }
  c.axis = o.axis_given ? o.axis : -1;
  c.block_size = c.granularity == QLINEAR_GRANULARITY_BLOCK ? o.block_size : 0;

  // The data: a raw float32 file, or normal values with an outlier every 997 elements.
  std::vector<float> x;
  std::string source;
  if (o.input_given && o.input.empty()) return Fail("--input: an empty path", "");
  if (o.input_given) {
    std::string why;
    if (!ReadFloats(o.input, &x, &why)) return Fail("cannot read float32 values from ", o.input + ": " + why);
    if (x.empty()) return Fail("no values in ", o.input);
    source = o.input;
  } else {
    if (o.elements <= 0) return Fail("--elements must be > 0", "");
    x.resize(static_cast<size_t>(o.elements));
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = normal(rng) * (i % 997 == 0 ? 20.0f : 1.0f);
    source = "random normal values";
  }
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<int64_t> shape = o.shape;
  if (shape.empty()) shape = n % 1024 == 0 && n >= 1024 ? std::vector<int64_t>{n / 1024, 1024} : std::vector<int64_t>{n};
  if (shape.size() > 64) return Fail("--shape has more than 64 dimensions", "");
  int64_t shape_count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && shape_count > n / d + 1)) return Fail("the shape does not hold the data: ", ShapeText(shape) + " vs " + std::to_string(n) + " values");
    shape_count *= d;
  }
  if (shape_count != n) return Fail("the shape does not hold the data: ", ShapeText(shape) + " vs " + std::to_string(n) + " values");

  // The options as the library sees them (exit 2 when it rejects them), then settings that make
  // every call fail: the environment's fault, not the options' (exit 1).
  const qlinear_tensor cx{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(shape.size()), shape.data(), x.data()};
  if (qlinear_quantize_dynamic_output_info(&cx, &c, nullptr, nullptr, nullptr) != QLINEAR_OK) {
    return FailWithLibraryMessage(qlinear_last_error());
  }
  const std::string broken = CallsFailBecause();
  if (!broken.empty()) {
    std::fprintf(stderr, "qlinear dynamic: calls fail: %s\n", broken.c_str());
    return 1;
  }

  DynamicAttrs a;
  a.output_dtype = static_cast<DataType>(c.output_dtype);
  a.rule = static_cast<ScaleRule>(c.rule);
  a.granularity = static_cast<ScaleGranularity>(c.granularity);
  a.axis = c.axis;
  a.block_size = c.block_size;
  a.scale_dtype = static_cast<DataType>(c.scale_dtype);
  const TensorView tx(DataType::kFloat, shape, x.data());
  ParallelOptions par;
  par.max_threads = o.threads;
  const ParallelOptions* popt = o.threads > 1 ? &par : nullptr;

  DynamicResult r;
  Status s = QuantizeDynamic(tx, a, &r, popt);
  if (!s.ok()) return FailWithLibraryMessage(s.message());
  // The rate: the call on the allocated outputs, best of `repeats`.
  double best = 1e30;
  for (int rep = 0; rep < std::max(1, o.repeats); ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    s = QuantizeDynamic(tx, a, r.y.data(), r.y.size(), r.scale.data(), r.scale.size(),
                        r.has_zero_point ? r.zero_point.data() : nullptr, r.zero_point.size(), popt);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!s.ok()) return Fail("", s.message());
  }

  // DQ(Q(x)) in float32 with the written scales.
  QuantizeAttrs qa;
  QuantizeAttrsForDynamic(a, &qa);
  DequantizeAttrs da;
  da.axis = qa.axis;
  da.block_size = qa.block_size;
  da.output_dtype = QLINEAR_DTYPE_FLOAT;
  const TensorView ty(a.output_dtype, shape, r.y.data());
  TensorView zs;
  std::vector<float> dq(x.size());
  s = DequantizeLinear(ty, r.ScaleView(), r.ZeroPointView(&zs), da, dq.data(), dq.size() * sizeof(float));
  if (!s.ok()) return Fail("", s.message());
  double max_err = 0.0, signal = 0.0, noise = 0.0;
  // NaN/Inf inputs; finite inputs that came back NaN (a NaN scale) or +-Inf (code x scale beyond
  // float32's range)
  int64_t skipped = 0, lost = 0, overflowed = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      ++skipped;
      continue;
    }
    if (!std::isfinite(dq[i])) {
      ++(std::isnan(dq[i]) ? lost : overflowed);
      continue;
    }
    const double e = static_cast<double>(x[i]) - dq[i];
    max_err = std::max(max_err, std::fabs(e));
    signal += static_cast<double>(x[i]) * x[i];
    noise += e * e;
  }
  const int64_t groups = static_cast<int64_t>(r.scale.size()) / (r.scale_dtype == DataType::kFloat ? 4
                                                                  : r.scale_dtype == DataType::kFloat8E8M0 ? 1 : 2);
  std::printf("qlinear %s, target %s: dynamic quantization of %lld float32 values (%s), shape %s\n", Version(),
              ActiveTarget(), static_cast<long long>(n), source.c_str(), ShapeText(shape).c_str());
  std::string groups_text = c.granularity == QLINEAR_GRANULARITY_TENSOR ? "one scale"
                            : c.granularity == QLINEAR_GRANULARITY_AXIS
                                ? "a scale per index along axis " + std::to_string(c.axis)
                                : "blocks of " + std::to_string(c.block_size) + " along axis " + std::to_string(c.axis);
  std::printf("  rule %s -> %s, %s, %s scales (%lld)%s\n", o.rule.c_str(), Name(a.output_dtype),
              groups_text.c_str(), Name(r.scale_dtype), static_cast<long long>(groups),
              r.has_zero_point ? " and zero points" : "");
  const int64_t compared = n - skipped - lost - overflowed;
  std::printf("  max |x - DQ(Q(x))|  %.6g (over %lld finite values that came back finite)\n", max_err,
              static_cast<long long>(compared));
  if (compared == 0) {
    std::printf("  SQNR                none (no value to compare)\n");
  } else if (noise == 0.0) {
    std::printf("  SQNR                %s\n",
                lost + overflowed == 0 ? "exact (no error)" : "no error on the values compared");
  } else {
    std::printf("  SQNR                %.2f dB\n", 10.0 * std::log10(signal / noise));
  }
  if (skipped > 0) std::printf("  %lld NaN/Inf inputs left out\n", static_cast<long long>(skipped));
  if (lost > 0) {
    std::printf("  %lld finite values came back NaN (left out above): their group holds a NaN or Inf,\n"
                "  which gives MX and POW2_CEIL the NaN scale\n", static_cast<long long>(lost));
  }
  if (overflowed > 0) {
    std::printf("  %lld finite values came back +-Inf (left out above): code x scale is beyond float32's\n"
                "  range (values near FLT_MAX)\n", static_cast<long long>(overflowed));
  }
  std::printf("  rate                %.3f G elements/s (best of %d%s)\n", static_cast<double>(n) / best * 1e-9,
              std::max(1, o.repeats), o.threads > 1 ? (", up to " + std::to_string(o.threads) + " threads").c_str() : "");
  return 0;
}

}  // namespace

int RunDynamic(const DynamicCommandOptions& o) {
  try {
    return RunDynamicUnguarded(o);
  } catch (const std::bad_alloc&) {  // x, its outputs and DQ(Q(x)): about 10 bytes per element
    std::fprintf(stderr, "qlinear dynamic: not enough memory for %s\n",
                 o.input_given ? ("the values of " + o.input).c_str()
                               : (std::to_string(o.elements) + " elements").c_str());
    return 1;
  }
}

}  // namespace tools
}  // namespace qlinear
