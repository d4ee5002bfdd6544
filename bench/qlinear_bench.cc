// qlinear benchmarks: one Google Benchmark binary. Rows are
//   <Op>/<x type>-><y type>/<granularity>/<target>/<elements>
// for every SIMD target this CPU supports (forced one by one through Highway) and the scalar
// reference ("REF"), plus a streaming ceiling row (load 4 B, store 1 B per element). Counters:
// items/s (elements) and bytes/s (input + output bytes). Filter with --benchmark_filter.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/qlinear_bench.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "lib/dynamic.h"
#include "lib/kernels.h"
#include "lib/minifloat.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

#ifdef QLINEAR_HAVE_XNNPACK
#include <climits>
#include <type_traits>

#include <xnnpack.h>
#endif

// The ceiling: what memory allows for 4 bytes in and 1 byte out per element, with no arithmetic.
HWY_BEFORE_NAMESPACE();
namespace qlinear {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
void StreamCeiling(const uint32_t* HWY_RESTRICT in, size_t n, uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<int32_t> d32;
  const hn::Rebind<uint8_t, decltype(d32)> d8;
  const size_t N = hn::Lanes(d32);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::DemoteTo(d8, hn::LoadU(d32, reinterpret_cast<const int32_t*>(in + i))), d8, out + i);
  }
  for (; i < n; ++i) out[i] = static_cast<uint8_t>(in[i]);
}
}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {
HWY_EXPORT(StreamCeiling);
namespace {

constexpr int64_t kReference = 0;  // "target" value for reference rows

std::string TargetLabel(int64_t t) { return t == kReference ? "REF" : hwy::TargetName(t); }

struct Case {
  const char* op;  // "Quantize" or "Dequantize"
  int32_t xt, st, yt;
  const char* gran;  // "tensor", "axis0", "axisL", "blockL", "block0"
  QuantizePath path = QuantizePath::kAuto;  // forced: row suffix "-div" / "-recip"
};

// Shapes and scale shapes for a granularity at n elements (rows of 1024 for 2-D layouts).
void LayoutFor(const char* gran, int64_t n, std::vector<int64_t>* xs, std::vector<int64_t>* ss,
               int64_t* axis, int64_t* block) {
  const int64_t cols = 1024, rows = n / cols;
  *axis = 1;
  *block = 0;
  const std::string g = gran;
  if (g == "tensor") {
    *xs = {n};
    *ss = {};
  } else if (g == "axis0") {
    *xs = {rows, cols};
    *ss = {rows};
    *axis = 0;
  } else if (g == "axisL") {
    *xs = {rows, cols};
    *ss = {cols};
  } else if (g == "blockL") {
    *xs = {rows, cols};
    *ss = {rows, cols / 32};
    *block = 32;
  } else {  // block0
    *xs = {rows, cols};
    *ss = {rows / 32, cols};
    *axis = 0;
    *block = 32;
  }
}

size_t Bytes(int32_t t, int64_t n) {
  return static_cast<size_t>(StorageBytes(static_cast<DType>(t), static_cast<uint64_t>(n)));
}

void BM_Op(benchmark::State& state, Case c, int64_t target) {
  const int64_t n = state.range(0);
  std::vector<int64_t> xs, ss;
  int64_t axis, block;
  LayoutFor(c.gran, n, &xs, &ss, &axis, &block);
  int64_t sn = 1;
  for (int64_t d : ss) sn *= d;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<uint8_t> x(Bytes(c.xt, n)), s(Bytes(c.st, sn)), y;
  if (std::string(c.op) == "Quantize") {
    for (int64_t i = 0; i < n; ++i) {
      const float v = normal(rng);
      if (c.xt == QLINEAR_DTYPE_FLOAT) std::memcpy(&x[4 * i], &v, 4);
      else {
        const uint16_t h = c.xt == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(v) : BFloat16::Encode(v);
        std::memcpy(&x[2 * i], &h, 2);
      }
    }
  } else {
    for (uint8_t& b : x) b = static_cast<uint8_t>(rng());
    if (c.xt == QLINEAR_DTYPE_FLOAT8E4M3FN) for (uint8_t& b : x) if ((b & 0x7F) == 0x7F) b = 0;
  }
  for (int64_t k = 0; k < sn; ++k) {
    const float v = 0.02f + 0.001f * static_cast<float>(k % 13);
    std::memcpy(&s[4 * k], &v, 4);
  }
  const qlinear_tensor tx{c.xt, static_cast<int32_t>(xs.size()), xs.data(), x.data()};
  const qlinear_tensor ts{c.st, static_cast<int32_t>(ss.size()), ss.data(), s.data()};
  hwy::SetSupportedTargetsForTest(target == kReference ? 0 : target);
  SetQuantizePathForTest(c.path);
  size_t ybytes = 0;
  bool ok = true;
  if (std::string(c.op) == "Quantize") {
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.axis = axis;
    a.block_size = block;
    a.output_dtype = c.yt;
    ok = qlinear_quantize_output_info(&tx, &ts, nullptr, &a, nullptr, &ybytes) == QLINEAR_OK;
    y.assign(ybytes, 0);
    QuantizePlan plan;
    ok = ok && PlanQuantize(&tx, &ts, nullptr, &a, &plan) == QLINEAR_OK;
    for (auto _ : state) {
      if (target == kReference) {
        QuantizeReference(plan, y.data(), 0, n);
      } else {
        qlinear_quantize_linear(&tx, &ts, nullptr, &a, y.data(), ybytes);
      }
      benchmark::ClobberMemory();
    }
  } else {
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.axis = axis;
    a.block_size = block;
    a.output_dtype = c.yt;
    ok = qlinear_dequantize_output_info(&tx, &ts, nullptr, &a, nullptr, &ybytes) == QLINEAR_OK;
    y.assign(ybytes, 0);
    DequantizePlan plan;
    ok = ok && PlanDequantize(&tx, &ts, nullptr, &a, &plan) == QLINEAR_OK;
    for (auto _ : state) {
      if (target == kReference) {
        DequantizeReference(plan, y.data(), 0, n);
      } else {
        qlinear_dequantize_linear(&tx, &ts, nullptr, &a, y.data(), ybytes);
      }
      benchmark::ClobberMemory();
    }
  }
  if (!ok) state.SkipWithError(qlinear_last_error());
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(x.size() + y.size()));
  state.SetLabel(TargetLabel(target == kReference ? kReference : DispatchedTarget()));
  hwy::SetSupportedTargetsForTest(0);
  SetQuantizePathForTest(QuantizePath::kAuto);
}

void BM_Dynamic(benchmark::State& state, int64_t target) {
  const int64_t n = state.range(0);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  std::vector<uint8_t> y(static_cast<size_t>(n));
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  hwy::SetSupportedTargetsForTest(target);
  float scale;
  uint8_t zp;
  for (auto _ : state) {
    qlinear_dynamic_quantize_linear(&tx, y.data(), y.size(), &scale, &zp);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 5);
  state.SetLabel(TargetLabel(DispatchedTarget()));
  hwy::SetSupportedTargetsForTest(0);
}

// Training backward pass, float32 x and dy, per tensor, int8 output, clamp test recomputed.
void BM_Backward(benchmark::State& state, int64_t target) {
  const int64_t n = state.range(0);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(n)), dy(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  for (float& v : dy) v = normal(rng);
  const float scale = 0.02f;
  const int8_t zp = 0;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor tdy{QLINEAR_DTYPE_FLOAT, 1, &n, dy.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
  const qlinear_tensor tz{QLINEAR_DTYPE_INT8, 0, nullptr, &zp};
  hwy::SetSupportedTargetsForTest(target);
  for (auto _ : state) {
    qlinear_quantize_linear_backward(&tx, &ts, &tz, nullptr, &tdy, 1.0f, nullptr, 0, dx.data(), dx.size() * 4);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 12);
  state.SetLabel(TargetLabel(DispatchedTarget()));
  hwy::SetSupportedTargetsForTest(0);
}

// The parallel entry point with OpenMP (or serial without it) at `threads` threads.
void BM_Parallel(benchmark::State& state, int threads) {
  const int64_t n = state.range(0);
  std::vector<float> x(static_cast<size_t>(n));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& v : x) v = normal(rng);
  std::vector<int8_t> y(static_cast<size_t>(n));
  const float scale = 0.02f;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT8;
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.max_threads = threads;
  for (auto _ : state) {
    qlinear_quantize_linear_parallel(&tx, &ts, nullptr, &a, y.data(), y.size(), &o);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 5);
  state.SetLabel(std::string(qlinear_active_target()) + (qlinear_openmp_enabled() ? " OpenMP" : " serial"));
}

void BM_Ceiling(benchmark::State& state, int64_t target) {
  const int64_t n = state.range(0);
  std::vector<uint32_t> in(static_cast<size_t>(n), 7);
  std::vector<uint8_t> out(static_cast<size_t>(n));
  hwy::SetSupportedTargetsForTest(target);
  for (auto _ : state) {
    HWY_DYNAMIC_DISPATCH(StreamCeiling)(in.data(), in.size(), out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 5);
  state.SetLabel(TargetLabel(target));
  hwy::SetSupportedTargetsForTest(0);
}

// The ceiling at `threads` threads (the best target): each thread streams its half.
void BM_CeilingThreads(benchmark::State& state, int threads) {
  const int64_t n = state.range(0);
  std::vector<uint32_t> in(static_cast<size_t>(n), 7);
  std::vector<uint8_t> out(static_cast<size_t>(n));
  const int64_t per = (n / threads + 63) / 64 * 64;
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
      const int64_t b = std::min<int64_t>(n, t * per), e = std::min<int64_t>(n, b + per);
      HWY_DYNAMIC_DISPATCH(StreamCeiling)(in.data() + b, static_cast<size_t>(e - b), out.data() + b);
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 5);
}

#ifdef QLINEAR_HAVE_XNNPACK
// XNNPACK's converts (Debian's libxnnpack): f32 -> qs8/qu8 multiply by 1/scale, so they are not
// ONNX-exact; the `mismatches` counter is how many outputs differ from qlinear's (= the ONNX
// reference, which the tests check). qs8/qu8 -> f32 are exact products.
// Times an XNNPACK operator set up by `setup` (false: failed); n elements, 5 bytes each.
template <class Setup>
bool TimeXnn(benchmark::State& state, int64_t n, Setup&& setup) {
  xnn_operator_t op = nullptr;
  if (xnn_initialize(nullptr) != xnn_status_success || !setup(&op)) {
    state.SkipWithError("XNNPACK operator setup failed");
    return false;
  }
  for (auto _ : state) {
    xnn_run_operator(op, nullptr);
    benchmark::ClobberMemory();
  }
  xnn_delete_operator(op);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 5);
  state.SetLabel("XNNPACK");
  return true;
}

template <class Q>
void BM_XnnQuantize(benchmark::State& state) {
  constexpr bool kSigned = std::is_same<Q, int8_t>::value;
  const int64_t n = state.range(0);
  std::vector<float> x(static_cast<size_t>(n));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& v : x) v = normal(rng);
  std::vector<Q> y(static_cast<size_t>(n)), want(static_cast<size_t>(n));
  const float scale = 0.02f;
  const Q zp = kSigned ? 0 : 128;
  const bool ok = TimeXnn(state, n, [&](xnn_operator_t* op) {
    if (kSigned) {
      return xnn_create_convert_nc_f32_qs8(1, 1, 1, scale, static_cast<int8_t>(zp), INT8_MIN, INT8_MAX, 0, op) == xnn_status_success &&
             xnn_setup_convert_nc_f32_qs8(*op, static_cast<size_t>(n), x.data(), reinterpret_cast<int8_t*>(y.data()), nullptr) == xnn_status_success;
    }
    return xnn_create_convert_nc_f32_qu8(1, 1, 1, scale, static_cast<uint8_t>(zp), 0, UINT8_MAX, 0, op) == xnn_status_success &&
           xnn_setup_convert_nc_f32_qu8(*op, static_cast<size_t>(n), x.data(), reinterpret_cast<uint8_t*>(y.data()), nullptr) == xnn_status_success;
  });
  if (!ok) return;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
  const qlinear_tensor tz{kSigned ? QLINEAR_DTYPE_INT8 : QLINEAR_DTYPE_UINT8, 0, nullptr, &zp};
  qlinear_quantize_linear(&tx, &ts, &tz, nullptr, want.data(), want.size());
  int64_t mismatches = 0;
  for (size_t i = 0; i < want.size(); ++i) mismatches += want[i] != y[i];
  state.counters["mismatches"] = static_cast<double>(mismatches);
}

template <class Q>
void BM_XnnDequantize(benchmark::State& state) {
  constexpr bool kSigned = std::is_same<Q, int8_t>::value;
  const int64_t n = state.range(0);
  std::vector<Q> x(static_cast<size_t>(n));
  std::mt19937 rng(1);
  for (Q& v : x) v = static_cast<Q>(rng());
  std::vector<float> y(static_cast<size_t>(n));
  const float scale = 0.02f;
  TimeXnn(state, n, [&](xnn_operator_t* op) {
    if (kSigned) {
      return xnn_create_convert_nc_qs8_f32(1, 1, 1, scale, 0, 0, op) == xnn_status_success &&
             xnn_setup_convert_nc_qs8_f32(*op, static_cast<size_t>(n), reinterpret_cast<const int8_t*>(x.data()), y.data(), nullptr) == xnn_status_success;
    }
    return xnn_create_convert_nc_qu8_f32(1, 1, 1, scale, 128, 0, op) == xnn_status_success &&
           xnn_setup_convert_nc_qu8_f32(*op, static_cast<size_t>(n), reinterpret_cast<const uint8_t*>(x.data()), y.data(), nullptr) == xnn_status_success;
  });
}
#endif

// ---- dynamic quantization -----------------------------------------------------------------------
// Rows QuantizeDynamic/float32-><y>/<groups>/<target>/<n>: scales computed from x and x quantized;
// QuantizeGivenScales/...: qlinear_quantize_linear with the scales (and zero points) those calls
// wrote; REF: QuantizeDynamicReference. x: [n/1024, 1024] normal values (per tensor: [n]).
struct DynamicCase {
  const char* groups;  // row label
  int32_t y, rule, granularity;
  int64_t block;  // along the last axis; per axis: rows (axis 0)
};

const DynamicCase kDynamicCases[] = {
    {"row", QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0},
    {"block32", QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 32},
    {"block128", QLINEAR_DTYPE_INT4, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 128},
    {"block32-minmax", QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 32},
    {"block128-minmax", QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, 128},
    {"mx32", QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_BLOCK, 32},
    {"mx32", QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_BLOCK, 32},
    {"tensor", QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_TENSOR, 0},
};

enum class DynamicRow { kDynamic, kGivenScales, kScalarReference };

void BM_QuantizeDynamic(benchmark::State& state, DynamicCase c, DynamicRow row, int64_t target) {
  const int64_t n = state.range(0);
  const std::vector<int64_t> shape = c.granularity == QLINEAR_GRANULARITY_TENSOR
                                         ? std::vector<int64_t>{n}
                                         : std::vector<int64_t>{n / 1024, 1024};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = c.y;
  a.rule = c.rule;
  a.granularity = c.granularity;
  a.axis = c.granularity == QLINEAR_GRANULARITY_AXIS ? 0 : -1;
  a.block_size = c.block;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(shape.size()), shape.data(), x.data()};
  size_t yb = 0, sb = 0, zb = 0;
  bool ok = qlinear_quantize_dynamic_output_info(&tx, &a, &yb, &sb, &zb) == QLINEAR_OK;
  std::vector<uint8_t> y(yb), s(sb), z(zb);
  void* zp = c.rule == QLINEAR_SCALE_MINMAX ? z.data() : nullptr;
  hwy::SetSupportedTargetsForTest(target == kReference ? 0 : target);
  ok = ok && qlinear_quantize_dynamic(&tx, &a, y.data(), yb, s.data(), sb, zp, zb) == QLINEAR_OK;
  // The scale tensor as QuantizeLinear takes it (qlinear.h), for the given-scales row.
  std::vector<int64_t> ss;
  if (c.granularity == QLINEAR_GRANULARITY_AXIS) ss = {shape[0]};
  if (c.granularity == QLINEAR_GRANULARITY_BLOCK) ss = {shape[0], shape[1] / c.block};
  const int32_t st = c.rule == QLINEAR_SCALE_MX ? QLINEAR_DTYPE_FLOAT8E8M0 : QLINEAR_DTYPE_FLOAT;
  const qlinear_tensor ts{st, static_cast<int32_t>(ss.size()), ss.data(), s.data()};
  const qlinear_tensor tz{c.y, static_cast<int32_t>(ss.size()), ss.data(), z.data()};
  qlinear_quantize_attrs qa;
  ok = ok && qlinear_quantize_attrs_for_dynamic(&a, &qa) == QLINEAR_OK;
  DynamicPlan plan;
  ok = ok && PlanDynamic(&tx, &a, true, &plan) == QLINEAR_OK;
  DynamicOutputs out;
  out.y = y.data();
  out.scale = s.data();
  out.zero_point = zp;
  for (auto _ : state) {
    switch (row) {
      case DynamicRow::kDynamic:
        qlinear_quantize_dynamic(&tx, &a, y.data(), yb, s.data(), sb, zp, zb);
        break;
      case DynamicRow::kGivenScales:
        qlinear_quantize_linear(&tx, &ts, zp ? &tz : nullptr, &qa, y.data(), yb);
        break;
      case DynamicRow::kScalarReference:
        QuantizeDynamicReference(plan, out);
        break;
    }
    benchmark::ClobberMemory();
  }
  if (!ok) state.SkipWithError(qlinear_last_error());
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(x.size() * 4 + yb + sb + zb));
  state.SetLabel(TargetLabel(target == kReference ? kReference : DispatchedTarget()));
  hwy::SetSupportedTargetsForTest(0);
}

void RegisterDynamic() {
  const std::vector<int64_t> sizes = {1 << 16, 1 << 20, 1 << 24};
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  targets.push_back(kReference);
  for (const DynamicCase& c : kDynamicCases) {
    for (int64_t t : targets) {
      const std::string rest = std::string("/float32->") + qlinear_dtype_name(c.y) + "/" + c.groups + "/" + TargetLabel(t);
      if (t == kReference) {
        benchmark::RegisterBenchmark(("QuantizeDynamic" + rest).c_str(), BM_QuantizeDynamic, c, DynamicRow::kScalarReference, t)
            ->Arg(1 << 16);  // the reference is slow by design
        continue;
      }
      auto* d = benchmark::RegisterBenchmark(("QuantizeDynamic" + rest).c_str(), BM_QuantizeDynamic, c, DynamicRow::kDynamic, t);
      auto* g = benchmark::RegisterBenchmark(("QuantizeGivenScales" + rest).c_str(), BM_QuantizeDynamic, c, DynamicRow::kGivenScales, t);
      for (int64_t s : sizes) {
        d->Arg(s);
        g->Arg(s);
      }
    }
  }
}

const char* Short(int32_t t) { return qlinear_dtype_name(t); }

void RegisterAll() {
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  const std::vector<int64_t> sizes = {1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 26};
  std::vector<Case> cases;
  const int32_t ys[] = {QLINEAR_DTYPE_INT8,  QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16,
                        QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT4,
                        QLINEAR_DTYPE_INT2,  QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_FLOAT8E4M3FN,
                        QLINEAR_DTYPE_FLOAT8E4M3FNUZ, QLINEAR_DTYPE_FLOAT8E5M2,
                        QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  for (int32_t yt : ys) cases.push_back({"Quantize", QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, yt, "tensor"});
  for (int32_t xt : {QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
    cases.push_back({"Quantize", xt, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_INT8, "tensor"});
  }
  // The same calls with each exact path forced (the plain rows use the one chosen at run time).
  for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_FLOAT8E4M3FN}) {
    for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
      cases.push_back({"Quantize", QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, yt, "tensor", path});
    }
  }
  for (const char* g : {"axis0", "axisL", "blockL", "block0"}) {
    cases.push_back({"Quantize", QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_INT8, g});
  }
  for (int32_t xt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_INT4,
                     QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT4E2M1}) {
    cases.push_back({"Dequantize", xt, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, "tensor"});
  }
  for (const char* g : {"axis0", "axisL", "blockL", "block0"}) {
    cases.push_back({"Dequantize", QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, g});
  }
  targets.push_back(kReference);
  for (const Case& c : cases) {
    for (int64_t t : targets) {
      const std::string name = std::string(c.op) + "/" + Short(c.xt) + "->" + Short(c.yt) + "/" +
                               c.gran + "/" + TargetLabel(t) +
                               (c.path == QuantizePath::kDivision ? "-div"
                                : c.path == QuantizePath::kReciprocal ? "-recip" : "");
      if (c.path != QuantizePath::kAuto && t == kReference) continue;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Op, c, t);
      for (int64_t s : sizes) {
        if (t == kReference && s > (1 << 20)) continue;  // the reference is slow by design
        b->Arg(s);
      }
    }
  }
  // Per-call overhead (validation, plan, dispatch): a per-tensor call on 64 elements.
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) {
    const Case c{"Quantize", QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_INT8, "tensor"};
    benchmark::RegisterBenchmark(("Overhead/float32->int8/tensor/" + TargetLabel(t)).c_str(), BM_Op, c, t)->Arg(64);
  }
  for (int threads : {1, 2}) {
    const std::string suffix = "/threads:" + std::to_string(threads);
    auto* q = benchmark::RegisterBenchmark(("QuantizeParallel/float32->int8/tensor" + suffix).c_str(), BM_Parallel, threads);
    auto* c = benchmark::RegisterBenchmark(("Ceiling/load4store1/tensor" + suffix).c_str(), BM_CeilingThreads, threads);
    for (int64_t s : {int64_t{1} << 24, int64_t{1} << 26}) {
      q->Arg(s)->UseRealTime();
      c->Arg(s)->UseRealTime();
    }
  }
#ifdef QLINEAR_HAVE_XNNPACK
  {
    auto* a = benchmark::RegisterBenchmark("Quantize/float32->int8/tensor/XNNPACK", BM_XnnQuantize<int8_t>);
    auto* b = benchmark::RegisterBenchmark("Quantize/float32->uint8/tensor/XNNPACK", BM_XnnQuantize<uint8_t>);
    auto* c = benchmark::RegisterBenchmark("Dequantize/int8->float32/tensor/XNNPACK", BM_XnnDequantize<int8_t>);
    auto* d = benchmark::RegisterBenchmark("Dequantize/uint8->float32/tensor/XNNPACK", BM_XnnDequantize<uint8_t>);
    for (int64_t s : sizes) {
      a->Arg(s);
      b->Arg(s);
      c->Arg(s);
      d->Arg(s);
    }
  }
#endif
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) {
    auto* d = benchmark::RegisterBenchmark(("DynamicQuantize/float32->uint8/tensor/" + TargetLabel(t)).c_str(), BM_Dynamic, t);
    auto* c = benchmark::RegisterBenchmark(("Ceiling/load4store1/tensor/" + TargetLabel(t)).c_str(), BM_Ceiling, t);
    auto* bw = benchmark::RegisterBenchmark(("Backward/float32->int8/tensor/" + TargetLabel(t)).c_str(), BM_Backward, t);
    for (int64_t s : sizes) {
      d->Arg(s);
      c->Arg(s);
      bw->Arg(s);
    }
  }
  RegisterDynamic();
}

}  // namespace
}  // namespace qlinear

#include "cpu_features_macros.h"
#if defined(CPU_FEATURES_ARCH_X86)
#include "cpuinfo_x86.h"
#elif defined(CPU_FEATURES_ARCH_AARCH64)
#include "cpuinfo_aarch64.h"
#endif

static std::string CpuDescription() {
#if defined(CPU_FEATURES_ARCH_X86)
  const cpu_features::X86Info info = cpu_features::GetX86Info();
  return std::string(info.brand_string) + " (" +
         cpu_features::GetX86MicroarchitectureName(cpu_features::GetX86Microarchitecture(&info)) + ")";
#elif defined(CPU_FEATURES_ARCH_AARCH64)
  const cpu_features::Aarch64Info info = cpu_features::GetAarch64Info();
  return "aarch64 implementer " + std::to_string(info.implementer) + " part " + std::to_string(info.part);
#else
  return "unknown";
#endif
}

int main(int argc, char** argv) {
  benchmark::AddCustomContext("cpu", CpuDescription());
  benchmark::AddCustomContext("qlinear_version", qlinear_version());
  benchmark::AddCustomContext("targets_compiled", qlinear_compiled_targets());
  benchmark::AddCustomContext("targets_supported", qlinear_supported_targets());
  benchmark::AddCustomContext("target_dispatched", qlinear_active_target());
  qlinear::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
#endif  // HWY_ONCE
