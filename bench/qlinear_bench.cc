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
// DequantizeLinear's ceiling for packed 4-bit weights: read n / 2 bytes, store 4 B per element
// (each byte widened to a float32 lane's bits: no decoding).
void StreamCeilingDequantize(const uint8_t* HWY_RESTRICT in, size_t n, float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::Rebind<uint8_t, decltype(du)> d8;
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto v = hn::BitCast(df, hn::PromoteTo(du, hn::LoadU(d8, in + i / 2)));
    hn::StoreU(v, df, out + i);
    hn::StoreU(v, df, out + i + N);
  }
  for (; i < n; ++i) out[i] = static_cast<float>(in[i / 2]);
}
}  // namespace HWY_NAMESPACE
}  // namespace qlinear
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qlinear {
HWY_EXPORT(StreamCeiling);
HWY_EXPORT(StreamCeilingDequantize);
namespace {

constexpr int64_t kReference = 0;  // "target" value for reference rows

std::string TargetLabel(int64_t t) { return t == kReference ? "REF" : hwy::TargetName(t); }

struct Case {
  const char* op;  // "Quantize" or "Dequantize"
  int32_t xt, st, yt;
  const char* gran;  // "tensor", "axis0", "axisL", "blockL", "block0" (blocks of 32), "blockL128", "block0128"
  QuantizePath path = QuantizePath::kAuto;  // forced: row suffix "-div" / "-recip"
  bool zero_point = false;  // Dequantize: random zero points of x's type (row name "x-zp")
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
  } else {
    const int64_t b = g.size() > 6 ? std::stoll(g.substr(6)) : 32;  // "blockL128": 128
    *block = b;
    *xs = {rows, cols};
    if (g.compare(0, 6, "blockL") == 0) {
      *ss = {rows, cols / b};
    } else {  // block0: blocks along the outer axis (a [K, N] weight with blocks along K)
      *ss = {(rows + b - 1) / b, cols};
      *axis = 0;
    }
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
    if (c.st == QLINEAR_DTYPE_FLOAT) {
      std::memcpy(&s[4 * k], &v, 4);
    } else if (c.st == QLINEAR_DTYPE_FLOAT8E8M0) {
      s[k] = static_cast<uint8_t>(120 + k % 8);  // 2^-7 .. 2^0
    } else {
      const uint16_t h = c.st == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(v) : BFloat16::Encode(v);
      std::memcpy(&s[2 * k], &h, 2);
    }
  }
  std::vector<uint8_t> z(c.zero_point ? Bytes(c.xt, sn) : 0);
  for (uint8_t& b : z) b = static_cast<uint8_t>(rng());
  const qlinear_tensor tx{c.xt, static_cast<int32_t>(xs.size()), xs.data(), x.data()};
  const qlinear_tensor ts{c.st, static_cast<int32_t>(ss.size()), ss.data(), s.data()};
  const qlinear_tensor tz{c.xt, static_cast<int32_t>(ss.size()), ss.data(), z.data()};
  const qlinear_tensor* zp = c.zero_point ? &tz : nullptr;
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
    ok = qlinear_dequantize_output_info(&tx, &ts, zp, &a, nullptr, &ybytes) == QLINEAR_OK;
    y.assign(ybytes, 0);
    DequantizePlan plan;
    ok = ok && PlanDequantize(&tx, &ts, zp, &a, &plan) == QLINEAR_OK;
    for (auto _ : state) {
      if (target == kReference) {
        DequantizeReference(plan, y.data(), 0, n);
      } else {
        qlinear_dequantize_linear(&tx, &ts, zp, &a, y.data(), ybytes);
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

void BM_CeilingDequantize(benchmark::State& state, int64_t target) {
  const int64_t n = state.range(0);
  std::vector<uint8_t> in(static_cast<size_t>(n / 2), 7);
  std::vector<float> out(static_cast<size_t>(n));
  hwy::SetSupportedTargetsForTest(target);
  for (auto _ : state) {
    HWY_DYNAMIC_DISPATCH(StreamCeilingDequantize)(in.data(), out.size(), out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * (n / 2 + 4 * n));
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
  for (int32_t xt : {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT16}) {
    cases.push_back({"Dequantize", xt, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, "tensor"});
  }
  // The weight formats of inference, every granularity of a [K, 1024] matrix, each output type.
  struct Weight {
    int32_t xt, st;
    bool zero_point;
  };
  const Weight weights[] = {{QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_FLOAT, false},
                            {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT, false},
                            {QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT, false},
                            {QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_FLOAT, false},
                            {QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_FLOAT, true},
                            {QLINEAR_DTYPE_INT2, QLINEAR_DTYPE_FLOAT, false},
                            {QLINEAR_DTYPE_FLOAT4E2M1, QLINEAR_DTYPE_FLOAT8E8M0, false}};
  for (const Weight& w : weights) {
    for (const char* g : {"tensor", "axis0", "axisL", "blockL", "block0", "blockL128", "block0128"}) {
      for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
        cases.push_back({"Dequantize", w.xt, w.st, yt, g, QuantizePath::kAuto, w.zero_point});
      }
    }
  }
  targets.push_back(kReference);
  for (const Case& c : cases) {
    for (int64_t t : targets) {
      std::string x = Short(c.xt);
      if (c.zero_point) x += "-zp";
      if (std::string(c.op) == "Dequantize" && c.st != QLINEAR_DTYPE_FLOAT) x += std::string("-") + Short(c.st);
      const std::string name = std::string(c.op) + "/" + x + "->" + Short(c.yt) + "/" +
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
    auto* cd = benchmark::RegisterBenchmark(("Ceiling/load0.5store4/tensor/" + TargetLabel(t)).c_str(),
                                            BM_CeilingDequantize, t);
    auto* bw = benchmark::RegisterBenchmark(("Backward/float32->int8/tensor/" + TargetLabel(t)).c_str(), BM_Backward, t);
    for (int64_t s : sizes) {
      d->Arg(s);
      c->Arg(s);
      cd->Arg(s);
      bw->Arg(s);
    }
  }
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
