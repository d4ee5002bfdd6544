// The caller's floating-point environment (qlinear.h, "Floating-point environment"): with FTZ,
// DAZ, a directed rounding mode (or, on ARM, default-NaN mode) set by the caller, every entry point
// still gives the bytes of the scalar reference computed in the default mode, on every target and
// both QuantizeLinear paths, and leaves the caller's mode as it found it. Parallel calls too,
// when the pool's threads (a caller's, or OpenMP's) run in a mode of their own.
#include <gtest/gtest.h>

#include <atomic>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "lib/kernels.h"
#include "lib/minifloat.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace qlinear {
namespace {

// ---- the caller's mode, set on the control register itself -------------------------------------

struct Mode {
  const char* name;
  uint64_t bits;
};

#if defined(__x86_64__) || defined(__i386__)
constexpr uint64_t kControlMask = 0xFFC0;  // MXCSR without the sticky flags
constexpr uint64_t kDefaultMode = 0x1F80;
uint64_t ReadMode() { return _mm_getcsr() & kControlMask; }
void WriteMode(uint64_t m) { _mm_setcsr(static_cast<unsigned>((_mm_getcsr() & ~kControlMask) | m)); }
const Mode kModes[] = {
    {"FTZ", 0x1F80 | 0x8000},           {"DAZ", 0x1F80 | 0x0040},          {"FTZ+DAZ", 0x1F80 | 0x8040},
    {"round down", 0x1F80 | 0x2000},    {"round up", 0x1F80 | 0x4000},     {"round toward zero", 0x1F80 | 0x6000},
    {"FTZ+DAZ, toward zero", 0xFFC0},
};
// Invalid, divide-by-zero and overflow unmasked: 0/0 or x/0 in a call would raise SIGFPE.
const Mode kTrapMode{"traps on invalid, zero divide, overflow", 0x1F80 & ~uint64_t{0x0680}};
constexpr bool kHaveTrapMode = true;
#elif defined(__aarch64__)
constexpr uint64_t kDefaultMode = 0;
uint64_t ReadMode() {
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
void WriteMode(uint64_t m) { __asm__ __volatile__("msr fpcr, %0" : : "r"(m)); }
const Mode kModes[] = {
    {"FZ", uint64_t{1} << 24},           {"DN", uint64_t{1} << 25},           {"FZ+DN", uint64_t{3} << 24},
    {"round up", uint64_t{1} << 22},     {"round down", uint64_t{2} << 22},   {"round toward zero", uint64_t{3} << 22},
    {"FZ16", uint64_t{1} << 19},         {"FZ, toward zero", (uint64_t{1} << 24) | (uint64_t{3} << 22)},
};
const Mode kTrapMode{"none", 0};
constexpr bool kHaveTrapMode = false;
#else
#define QLINEAR_NO_FP_MODES 1
#endif

#ifndef QLINEAR_NO_FP_MODES

// Runs call() with the caller's mode m; returns the mode found after it (and restores the default).
uint64_t InMode(uint64_t m, const std::function<void()>& call) {
  WriteMode(m);
  call();
  const uint64_t after = ReadMode();
  WriteMode(kDefaultMode);
  return after;
}

// ---- the cases: inputs where FTZ/DAZ and rounding change results ---------------------------------

const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> TiesAndSubnormals(float s) {
  std::vector<float> v{0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), -1e-40f, 1e-39f, -3e-39f,
                       std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(), 1e-30f, 3e38f};
  for (int k = -40; k <= 40; ++k) {
    const float tie = (static_cast<float>(k) + 0.5f) * s;
    v.push_back(tie);
    v.push_back(std::nextafter(tie, kInf));
    v.push_back(std::nextafter(tie, -kInf));
    v.push_back(static_cast<float>(k) * s / 3.0f);
  }
  return v;
}

std::vector<uint8_t> Bytes(const std::vector<float>& v, int32_t type) {
  std::vector<uint8_t> out;
  for (float f : v) {
    if (type == QLINEAR_DTYPE_FLOAT) {
      uint8_t b[4];
      std::memcpy(b, &f, 4);
      out.insert(out.end(), b, b + 4);
    } else {
      const uint16_t h = type == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(f) : BFloat16::Encode(f);
      out.push_back(static_cast<uint8_t>(h));
      out.push_back(static_cast<uint8_t>(h >> 8));
    }
  }
  return out;
}


// One call: run() writes the API's output; want holds the reference's, computed in the default mode.
struct Case {
  std::string name;
  std::function<qlinear_status(std::vector<uint8_t>*)> run;
  std::vector<uint8_t> want;
};

struct QSpec {
  int32_t xt, st, yt;
  std::vector<float> x;
  std::vector<uint8_t> scale;  // per tensor: one element of st
  int32_t precision;
  int saturate;
};

Case QuantizeCase(const QSpec& q) {
  auto keep = std::make_shared<QSpec>(q);
  auto xb = std::make_shared<std::vector<uint8_t>>(Bytes(q.x, q.xt));
  auto n = std::make_shared<int64_t>(static_cast<int64_t>(q.x.size()));
  auto attrs = std::make_shared<qlinear_quantize_attrs>();
  qlinear_quantize_attrs_init(attrs.get());
  attrs->output_dtype = q.yt;
  attrs->precision = q.precision;
  attrs->saturate = q.saturate;
  const qlinear_tensor tx{q.xt, 1, n.get(), xb->data()};
  const qlinear_tensor ts{q.st, 0, nullptr, keep->scale.data()};
  QuantizePlan plan;
  EXPECT_EQ(PlanQuantize(&tx, &ts, nullptr, attrs.get(), &plan), QLINEAR_OK) << qlinear_last_error();
  const size_t bytes = static_cast<size_t>(plan.y_bytes);
  Case c;
  c.name = std::string("quantize ") + qlinear_dtype_name(q.xt) + "/" + qlinear_dtype_name(q.st) + " -> " +
           qlinear_dtype_name(q.yt) + " precision " + std::to_string(q.precision);
  c.want.assign(bytes, 0);
  QuantizeReference(plan, c.want.data(), 0, *n);
  c.run = [keep, xb, n, attrs, tx, ts, bytes](std::vector<uint8_t>* y) {
    y->assign(bytes, 0xCD);
    return qlinear_quantize_linear(&tx, &ts, nullptr, attrs.get(), y->data(), y->size());
  };
  return c;
}

std::vector<Case> QuantizeCases() {
  std::vector<Case> cases;
  const float s = 0.1f;
  const std::vector<float> edges = TiesAndSubnormals(s);
  const std::vector<uint8_t> s32 = Bytes({s}, QLINEAR_DTYPE_FLOAT);
  for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_FLOAT8E4M3FN,
                     QLINEAR_DTYPE_FLOAT8E5M2, QLINEAR_DTYPE_FLOAT4E2M1}) {
    cases.push_back(QuantizeCase({QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, yt, edges, s32, 0, yt == QLINEAR_DTYPE_FLOAT8E5M2 ? 0 : 1}));
  }
  // A float32 subnormal scale: quotients of small x in every binade.
  std::vector<float> small;
  for (int k = -60; k <= 60; ++k) small.push_back(static_cast<float>(k) * 0.5f * 1e-41f);
  for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_FLOAT8E4M3FN}) {
    cases.push_back(QuantizeCase({QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, yt, small, Bytes({1e-41f}, QLINEAR_DTYPE_FLOAT), 0, 1}));
  }
  // float8e8m0 2^-127 (a float32 subnormal) and x around its ties.
  std::vector<float> tiny;
  for (int k = -40; k <= 40; ++k) tiny.push_back(std::ldexp(static_cast<float>(k) + 0.5f, -127));
  for (int k = -40; k <= 40; ++k) tiny.push_back(std::ldexp(static_cast<float>(k), -129));
  for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT4E2M1}) {
    cases.push_back(QuantizeCase({QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT8E8M0, yt, tiny, {0}, 0, 1}));
  }
  // float16 / bfloat16 x, scales and precision (their subnormals and ties).
  std::vector<float> half_edges = TiesAndSubnormals(0.125f);
  for (int k = 1; k < 40; ++k) half_edges.push_back(std::ldexp(static_cast<float>(k), -24));  // f16 subnormals
  for (int32_t t : {QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
    for (float hs : {0.125f, 0.3f, std::ldexp(1.0f, -20)}) {
      cases.push_back(QuantizeCase({t, t, QLINEAR_DTYPE_INT8, half_edges, Bytes({hs}, t), 0, 1}));
      cases.push_back(QuantizeCase({t, t, QLINEAR_DTYPE_FLOAT8E4M3FN, half_edges, Bytes({hs}, t), 0, 1}));
    }
    cases.push_back(QuantizeCase({QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_INT16, half_edges,
                                  Bytes({0.3f}, QLINEAR_DTYPE_FLOAT), t, 1}));
  }
  return cases;
}

struct DQSpec {
  int32_t xt, st, yt;
  std::vector<uint8_t> x;
  int64_t n;
  std::vector<uint8_t> scale;
};

Case DequantizeCase(const DQSpec& d) {
  auto keep = std::make_shared<DQSpec>(d);
  auto attrs = std::make_shared<qlinear_dequantize_attrs>();
  qlinear_dequantize_attrs_init(attrs.get());
  attrs->output_dtype = d.yt;
  const qlinear_tensor tx{d.xt, 1, &keep->n, keep->x.data()};
  const qlinear_tensor ts{d.st, 0, nullptr, keep->scale.data()};
  DequantizePlan plan;
  EXPECT_EQ(PlanDequantize(&tx, &ts, nullptr, attrs.get(), &plan), QLINEAR_OK) << qlinear_last_error();
  const size_t bytes = static_cast<size_t>(plan.y_bytes);
  Case c;
  c.name = std::string("dequantize ") + qlinear_dtype_name(d.xt) + "/" + qlinear_dtype_name(d.st) + " -> " +
           qlinear_dtype_name(d.yt);
  c.want.assign(bytes, 0);
  DequantizeReference(plan, c.want.data(), 0, d.n);
  c.run = [keep, attrs, tx, ts, bytes](std::vector<uint8_t>* y) {
    y->assign(bytes, 0xCD);
    return qlinear_dequantize_linear(&tx, &ts, nullptr, attrs.get(), y->data(), y->size());
  };
  return c;
}

std::vector<Case> DequantizeCases() {
  std::vector<Case> cases;
  std::vector<uint8_t> codes;
  for (int k = 0; k < 256; ++k) codes.push_back(static_cast<uint8_t>(k));
  for (int32_t yt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16}) {
    // Products below the smallest normal of the output type.
    const float s = yt == QLINEAR_DTYPE_FLOAT ? 3e-41f : yt == QLINEAR_DTYPE_FLOAT16 ? std::ldexp(1.3f, -22) : 3e-41f;
    cases.push_back(DequantizeCase({QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_FLOAT, yt, codes, 256, Bytes({s}, QLINEAR_DTYPE_FLOAT)}));
    cases.push_back(DequantizeCase({QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT, yt, codes, 256,
                                    Bytes({std::ldexp(1.0f, -125)}, QLINEAR_DTYPE_FLOAT)}));
    cases.push_back(DequantizeCase({QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_FLOAT8E8M0, yt, codes, 256, {0}}));
    cases.push_back(DequantizeCase({QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_FLOAT16, yt, codes, 256, Bytes({0.3f}, QLINEAR_DTYPE_FLOAT16)}));
  }
  return cases;
}

// The backward pass: a subnormal scale and dy, and the dynamic quantizer on subnormal x.
std::vector<Case> OtherCases() {
  std::vector<Case> cases;
  {
    auto x = std::make_shared<std::vector<float>>();
    auto dy = std::make_shared<std::vector<float>>();
    for (int k = -50; k <= 50; ++k) {
      x->push_back(static_cast<float>(k) * 1e-39f);
      dy->push_back(static_cast<float>(k) * 3e-39f + 1e-42f);
    }
    auto n = std::make_shared<int64_t>(static_cast<int64_t>(x->size()));
    auto s = std::make_shared<float>(2e-40f);
    auto attrs = std::make_shared<qlinear_quantize_attrs>();
    qlinear_quantize_attrs_init(attrs.get());
    attrs->output_dtype = QLINEAR_DTYPE_INT8;
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, n.get(), x->data()};
    const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, s.get()};
    const qlinear_tensor tdy{QLINEAR_DTYPE_FLOAT, 1, n.get(), dy->data()};
    QuantizePlan plan;
    EXPECT_EQ(PlanQuantize(&tx, &ts, nullptr, attrs.get(), &plan), QLINEAR_OK);
    Case c;
    c.name = "backward with a subnormal scale";
    c.want.assign(x->size() * 4, 0);
    BackwardArgs b;
    b.dy = dy->data();
    b.lda = 1e-3f;
    b.dx = c.want.data();
    BackwardReference(plan, b, 0, *n);
    c.run = [x, dy, n, s, attrs, tx, ts, tdy](std::vector<uint8_t>* out) {
      out->assign(x->size() * 4, 0xCD);
      return qlinear_quantize_linear_backward(&tx, &ts, nullptr, attrs.get(), &tdy, 1e-3f, nullptr, 0, out->data(),
                                              out->size());
    };
    cases.push_back(std::move(c));
  }
  {
    auto x = std::make_shared<std::vector<float>>();
    for (int k = -70; k <= 60; ++k) x->push_back(static_cast<float>(k) * 7e-41f);
    auto n = std::make_shared<int64_t>(static_cast<int64_t>(x->size()));
    Case c;
    c.name = "dynamic quantize of subnormals";
    float scale;
    uint8_t zp;
    DynamicScaleReference(x->data(), *n, &scale, &zp);
    const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
    const qlinear_tensor tz{QLINEAR_DTYPE_UINT8, 0, nullptr, &zp};
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, n.get(), x->data()};
    QuantizePlan plan;
    EXPECT_EQ(PlanQuantize(&tx, &ts, &tz, nullptr, &plan), QLINEAR_OK);
    c.want.assign(x->size() + 5, 0);
    QuantizeReference(plan, c.want.data(), 0, *n);
    std::memcpy(c.want.data() + x->size(), &scale, 4);
    c.want[x->size() + 4] = zp;
    c.run = [x, n, tx](std::vector<uint8_t>* out) {
      out->assign(x->size() + 5, 0xCD);
      float sc;
      uint8_t z;
      const qlinear_status st = qlinear_dynamic_quantize_linear(&tx, out->data(), x->size(), &sc, &z);
      std::memcpy(out->data() + x->size(), &sc, 4);
      (*out)[x->size() + 4] = z;
      return st;
    };
    cases.push_back(std::move(c));
  }
  return cases;
}

class FpEnvTest : public hwy::TestWithParamTarget {
 protected:
  void SetUp() override {
    hwy::TestWithParamTarget::SetUp();
    ASSERT_EQ(DispatchedTarget(), GetParam());
    ASSERT_EQ(ReadMode(), kDefaultMode) << "the test runner's own mode is not the default";
  }
  void TearDown() override {
    SetQuantizePathForTest(QuantizePath::kAuto);
    WriteMode(kDefaultMode);
    hwy::TestWithParamTarget::TearDown();
  }
  // Every case in every mode (and on both quantize paths) equals its reference; the mode survives.
  void RunAll(const std::vector<Case>& cases, const Mode* modes, size_t count) {
    for (QuantizePath path : {QuantizePath::kDivision, QuantizePath::kReciprocal}) {
      SetQuantizePathForTest(path);
      for (const Case& c : cases) {
        for (size_t m = 0; m < count; ++m) {
          std::vector<uint8_t> got;
          qlinear_status st = QLINEAR_INTERNAL_ERROR;
          const uint64_t after = InMode(modes[m].bits, [&] { st = c.run(&got); });
          ASSERT_EQ(st, QLINEAR_OK) << c.name << " in " << modes[m].name;
          EXPECT_EQ(after, modes[m].bits) << c.name << ": the caller's mode " << modes[m].name << " was not restored";
          ASSERT_EQ(got.size(), c.want.size());
          for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(got[i], c.want[i]) << c.name << " in " << modes[m].name << ", byte " << i
                                         << (path == QuantizePath::kDivision ? " (division)" : " (reciprocal)");
          }
        }
      }
    }
  }
};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(FpEnvTest);

// Every entry point's cases in every caller mode; then, with invalid, divide-by-zero and overflow
// exceptions unmasked, 0/0, x/0 and overflows inside a call must not trap.
TEST_P(FpEnvTest, EveryEntryPointInEveryCallerMode) {
  const size_t modes = sizeof(kModes) / sizeof(kModes[0]);
  RunAll(QuantizeCases(), kModes, modes);
  RunAll(DequantizeCases(), kModes, modes);
  RunAll(OtherCases(), kModes, modes);
  if (!kHaveTrapMode) return;
  std::vector<Case> cases;
  const std::vector<float> x{0.0f, 1.0f, -1.0f, 3e38f, kInf, std::numeric_limits<float>::quiet_NaN()};
  for (float s : {0.0f, 1e-40f, kInf}) {
    cases.push_back(QuantizeCase({QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT8E4M3FN, x,
                                  Bytes({s}, QLINEAR_DTYPE_FLOAT), 0, 1}));
  }
  RunAll(cases, &kTrapMode, 1);
}

// Parallel calls: a caller's pool whose threads run in FTZ+DAZ / toward-zero mode themselves, and
// OpenMP's workers (created by, or inheriting from, a caller in that mode).
struct ModalPool {
  uint64_t mode;
  std::atomic<int> restored{0}, tasks{0};
  static void ParallelFor(void* self, int64_t count, qlinear_task_fn task, void* context) {
    ModalPool* pool = static_cast<ModalPool*>(self);
    std::vector<std::thread> threads;
    for (int64_t i = 0; i < count; ++i) {
      threads.emplace_back([pool, task, context, i] {
        WriteMode(pool->mode);
        task(context, i);
        pool->tasks += 1;
        pool->restored += ReadMode() == pool->mode;
      });
    }
    for (std::thread& t : threads) t.join();
  }
};

TEST_P(FpEnvTest, ParallelTasksInTheirThreadsMode) {
  const std::vector<float> edges = TiesAndSubnormals(1e-39f);
  std::vector<float> x;
  while (x.size() < 20000) x.insert(x.end(), edges.begin(), edges.end());
  const int64_t n = static_cast<int64_t>(x.size());
  const float s = 1e-39f;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_FLOAT8E4M3FN}) {
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.output_dtype = yt;
    QuantizePlan plan;
    ASSERT_EQ(PlanQuantize(&tx, &ts, nullptr, &a, &plan), QLINEAR_OK);
    std::vector<uint8_t> want(static_cast<size_t>(n));
    QuantizeReference(plan, want.data(), 0, n);
    for (const Mode& m : kModes) {
      ModalPool pool;
      pool.mode = m.bits;
      qlinear_parallel_options o;
      qlinear_parallel_options_init(&o);
      o.max_threads = 4;
      o.min_elements_per_task = 1000;
      o.parallel_for = ModalPool::ParallelFor;
      o.runner_context = &pool;
      std::vector<uint8_t> y(static_cast<size_t>(n), 0xCD);
      ASSERT_EQ(qlinear_quantize_linear_parallel(&tx, &ts, nullptr, &a, y.data(), y.size(), &o), QLINEAR_OK);
      EXPECT_EQ(pool.tasks.load(), 4);
      EXPECT_EQ(pool.restored.load(), pool.tasks.load()) << m.name << ": a task left its thread's mode changed";
      ASSERT_EQ(y, want) << m.name << " in the pool's threads, " << qlinear_dtype_name(yt);
      // OpenMP (if built in) with the calling thread in the mode: its workers inherit or keep theirs.
      qlinear_parallel_options_init(&o);
      o.max_threads = 2;
      o.min_elements_per_task = 1000;
      std::fill(y.begin(), y.end(), 0xCD);
      qlinear_status st = QLINEAR_INTERNAL_ERROR;
      const uint64_t after = InMode(m.bits, [&] {
        st = qlinear_quantize_linear_parallel(&tx, &ts, nullptr, &a, y.data(), y.size(), &o);
      });
      ASSERT_EQ(st, QLINEAR_OK);
      EXPECT_EQ(after, m.bits);
      ASSERT_EQ(y, want) << m.name << " on the calling thread (OpenMP " << qlinear_openmp_enabled() << ")";
    }
  }
}

// Dynamic quantization's tasks (statistics, scales and codes) in pool threads whose modes flush
// subnormals: the bytes of the serial call, for one-pass (blocks) and two-pass (per tensor)
// layouts of subnormal x.
TEST_P(FpEnvTest, ParallelDynamicTasksInTheirThreadsMode) {
  const std::vector<float> edges = TiesAndSubnormals(1e-39f);
  std::vector<float> x;
  while (x.size() < 20000) x.insert(x.end(), edges.begin(), edges.end());
  for (float& v : x) v *= 1e-3f;  // subnormal amax: a flushed statistic would give the empty scale
  const int64_t n = static_cast<int64_t>(x.size());
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  for (int32_t granularity : {QLINEAR_GRANULARITY_BLOCK, QLINEAR_GRANULARITY_TENSOR}) {
    qlinear_dynamic_attrs a;
    qlinear_dynamic_attrs_init(&a);
    a.output_dtype = QLINEAR_DTYPE_INT8;
    a.granularity = granularity;
    if (granularity != QLINEAR_GRANULARITY_BLOCK) a.block_size = 0;
    size_t yb = 0, sb = 0, zb = 0;
    ASSERT_EQ(qlinear_quantize_dynamic_output_info(&tx, &a, &yb, &sb, &zb), QLINEAR_OK);
    std::vector<uint8_t> want_y(yb), want_s(sb);
    ASSERT_EQ(qlinear_quantize_dynamic(&tx, &a, want_y.data(), yb, want_s.data(), sb, nullptr, 0), QLINEAR_OK);
    for (const Mode& m : kModes) {
      ModalPool pool;
      pool.mode = m.bits;
      qlinear_parallel_options o;
      qlinear_parallel_options_init(&o);
      o.max_threads = 4;
      o.min_elements_per_task = 1024;
      o.parallel_for = ModalPool::ParallelFor;
      o.runner_context = &pool;
      std::vector<uint8_t> y(yb, 0xCD), sc(sb, 0xCD);
      ASSERT_EQ(qlinear_quantize_dynamic_parallel(&tx, &a, y.data(), yb, sc.data(), sb, nullptr, 0, &o), QLINEAR_OK);
      EXPECT_EQ(pool.restored.load(), pool.tasks.load()) << m.name << ": a task left its thread's mode changed";
      EXPECT_EQ(sc, want_s) << m.name << " in the pool's threads, granularity " << granularity;
      EXPECT_EQ(y, want_y) << m.name << " in the pool's threads, granularity " << granularity;
      // OpenMP (if built in) with the calling thread in the mode.
      qlinear_parallel_options_init(&o);
      o.max_threads = 2;
      o.min_elements_per_task = 1024;
      std::fill(y.begin(), y.end(), 0xCD);
      std::fill(sc.begin(), sc.end(), 0xCD);
      qlinear_status st = QLINEAR_INTERNAL_ERROR;
      InMode(m.bits, [&] {
        st = qlinear_quantize_dynamic_parallel(&tx, &a, y.data(), yb, sc.data(), sb, nullptr, 0, &o);
      });
      ASSERT_EQ(st, QLINEAR_OK);
      EXPECT_EQ(sc, want_s) << m.name << " on the calling thread, granularity " << granularity;
      EXPECT_EQ(y, want_y) << m.name << " on the calling thread, granularity " << granularity;
    }
  }
}

// A runner that runs the tasks on the calling thread and leaves it in another mode (a pool that
// sets its modes on the threads it works on). The runner is entered under the defaults each
// time, and what the call computes on the calling thread after it returns (a two-pass call's
// scales, its second runner call) is the serial call's.
struct ModeLeavingRunner {
  uint64_t mode;
  bool throws = false;  // then throws after leaving the mode: the caller's mode comes back too
  int calls = 0, entered_in_default = 0;
  static void ParallelFor(void* self, int64_t count, qlinear_task_fn task, void* context) {
    ModeLeavingRunner& r = *static_cast<ModeLeavingRunner*>(self);
    r.calls += 1;
    r.entered_in_default += ReadMode() == kDefaultMode;
    for (int64_t i = 0; i < count; ++i) task(context, i);
    WriteMode(r.mode);
    if (r.throws) throw std::runtime_error("pool shut down");
  }
};

TEST_P(FpEnvTest, RunnerThatLeavesItsThreadInAnotherMode) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const int64_t shape[2] = {64, 1000};  // four tasks of 16000 (small: every target, qemu too)
  std::vector<float> x(64 * 1000);
  for (float& v : x) v = normal(rng);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape, x.data()};
  struct Setting {
    int32_t y, granularity;
    int64_t axis;
  };
  for (const Setting& g : {Setting{QLINEAR_DTYPE_UINT4, QLINEAR_GRANULARITY_AXIS, 1},
                           Setting{QLINEAR_DTYPE_UINT8, QLINEAR_GRANULARITY_TENSOR, -1}}) {
    qlinear_dynamic_attrs a;
    qlinear_dynamic_attrs_init(&a);
    a.output_dtype = g.y;
    a.rule = QLINEAR_SCALE_MINMAX;
    a.granularity = g.granularity;
    a.axis = g.axis;
    a.block_size = 0;
    size_t yb = 0, sb = 0, zb = 0;
    ASSERT_EQ(qlinear_quantize_dynamic_output_info(&tx, &a, &yb, &sb, &zb), QLINEAR_OK);
    std::vector<uint8_t> want_y(yb), want_s(sb), want_z(zb);
    ASSERT_EQ(qlinear_quantize_dynamic(&tx, &a, want_y.data(), yb, want_s.data(), sb, want_z.data(), zb), QLINEAR_OK);
    for (const Mode& m : kModes) {
      ModeLeavingRunner runner{m.bits};
      qlinear_parallel_options o;
      qlinear_parallel_options_init(&o);
      o.max_threads = 4;
      o.min_elements_per_task = 4096;
      o.parallel_for = ModeLeavingRunner::ParallelFor;
      o.runner_context = &runner;
      std::vector<uint8_t> y(yb, 0xCD), sc(sb, 0xCD), z(zb, 0xCD);
      const uint64_t after = InMode(kDefaultMode, [&] {
        ASSERT_EQ(qlinear_quantize_dynamic_parallel(&tx, &a, y.data(), yb, sc.data(), sb, z.data(), zb, &o),
                  QLINEAR_OK);
      });
      EXPECT_EQ(after, kDefaultMode) << m.name << ": the caller's mode is not back";
      EXPECT_EQ(runner.calls, 2) << m.name;
      EXPECT_EQ(runner.entered_in_default, runner.calls) << m.name << ": a runner call began in another mode";
      EXPECT_EQ(sc, want_s) << m.name << " left by the runner, granularity " << g.granularity;
      EXPECT_EQ(z, want_z) << m.name << " left by the runner, granularity " << g.granularity;
      EXPECT_EQ(y, want_y) << m.name << " left by the runner, granularity " << g.granularity;
      runner.throws = true;
      const uint64_t after_throw = InMode(kDefaultMode, [&] {
        EXPECT_EQ(qlinear_quantize_dynamic_parallel(&tx, &a, y.data(), yb, sc.data(), sb, z.data(), zb, &o),
                  QLINEAR_INTERNAL_ERROR);
      });
      EXPECT_EQ(after_throw, kDefaultMode) << m.name << ": a throwing runner's mode outlived the call";
    }
  }
}

#endif  // QLINEAR_NO_FP_MODES

// A runner that calls fesetround changes every rounding control the C library knows (on x86 the
// x87 control word as well as MXCSR; fegetround reads the x87 one): the caller's rounding, as
// fegetround reports it, is back when the call returns, and the bytes are the serial call's.
void UpwardRunner(void*, int64_t count, qlinear_task_fn task, void* ctx) {
  std::fesetround(FE_UPWARD);
  for (int64_t i = 0; i < count; ++i) task(ctx, i);
}

TEST(FpEnvRunner, FesetroundInARunnerLeavesTheCallersRounding) {
  const int64_t shape[2] = {64, 1000};
  std::vector<float> x(64 * 1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * static_cast<float>(1 + i % 13);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape, x.data()};
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_UINT4;
  a.rule = QLINEAR_SCALE_MINMAX;
  a.granularity = QLINEAR_GRANULARITY_AXIS;
  a.axis = 1;
  a.block_size = 0;
  size_t yb = 0, sb = 0, zb = 0;
  ASSERT_EQ(qlinear_quantize_dynamic_output_info(&tx, &a, &yb, &sb, &zb), QLINEAR_OK);
  std::vector<uint8_t> want_y(yb), want_s(sb), want_z(zb);
  ASSERT_EQ(qlinear_quantize_dynamic(&tx, &a, want_y.data(), yb, want_s.data(), sb, want_z.data(), zb), QLINEAR_OK);
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.max_threads = 4;
  o.min_elements_per_task = 4096;
  o.parallel_for = UpwardRunner;
  for (const int callers : {FE_TOWARDZERO, FE_TONEAREST}) {
    std::vector<uint8_t> y(yb, 0xCD), sc(sb, 0xCD), z(zb, 0xCD);
    ASSERT_EQ(std::fesetround(callers), 0);
    const qlinear_status s = qlinear_quantize_dynamic_parallel(&tx, &a, y.data(), yb, sc.data(), sb, z.data(), zb, &o);
    const int after = std::fegetround();
    std::fesetround(FE_TONEAREST);
    EXPECT_EQ(s, QLINEAR_OK) << qlinear_last_error();
    EXPECT_EQ(after, callers) << "the runner's FE_UPWARD outlived the call";
    EXPECT_EQ(y, want_y);
    EXPECT_EQ(sc, want_s);
    EXPECT_EQ(z, want_z);
  }
}

}  // namespace
}  // namespace qlinear
