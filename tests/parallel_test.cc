// Sub-range and parallel entry points: slices quantized separately (global scales) and joined,
// and parallel calls through OpenMP and a caller's parallel-for, equal the whole-tensor serial
// call bit for bit; bad ranges and options are rejected with the output untouched.
#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lib/dtype.h"
#include "lib/plan.h"
#include "qlinear/qlinear.hpp"

namespace qlinear {
namespace {

struct Layout2D {
  std::vector<int64_t> shape, scale_shape;
  int64_t axis, block;
  const char* what;
};

const Layout2D kSetups[] = {
    {{6000}, {}, 1, 0, "per tensor"},
    {{50, 123}, {123}, 1, 0, "per axis, last"},
    {{50, 123}, {50}, 0, 0, "per axis, first"},
    {{64, 100}, {2, 100}, 0, 32, "blocked, outer axis"},
    {{40, 150}, {40, 5}, 1, 32, "blocked, last axis"},
    {{24, 136}, {24, 5}, 1, 32, "blocked, last axis, rows of whole bytes"},
    {{30, 128}, {30, 4}, 1, 32, "blocked, last axis, rows that blocks tile"},
};

const int32_t kTypes[] = {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_INT4,
                          QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT4E2M1};

int64_t Count(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Call {
  std::vector<float> x, scales;
  qlinear_tensor tx{}, ts{};
  qlinear_quantize_attrs a{};
  size_t y_bytes = 0;
  Call(const Layout2D& st, int32_t yt) {
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    x.resize(static_cast<size_t>(Count(st.shape)));
    for (float& v : x) v = nd(rng);
    scales.resize(static_cast<size_t>(Count(st.scale_shape)));
    for (size_t k = 0; k < scales.size(); ++k) scales[k] = 0.02f + 0.003f * static_cast<float>(k % 7);
    tx = qlinear_tensor{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(st.shape.size()), st.shape.data(), x.data()};
    ts = qlinear_tensor{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(st.scale_shape.size()),
                        st.scale_shape.data(), scales.data()};
    qlinear_quantize_attrs_init(&a);
    a.axis = st.axis;
    a.block_size = st.block;
    a.output_dtype = yt;
    EXPECT_EQ(qlinear_quantize_output_info(&tx, &ts, nullptr, &a, nullptr, &y_bytes), QLINEAR_OK)
        << qlinear_last_error() << " " << st.what;
  }
  std::vector<uint8_t> Whole() {
    std::vector<uint8_t> y(y_bytes, 0xAA);
    EXPECT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, &a, y.data(), y.size()), QLINEAR_OK) << qlinear_last_error();
    return y;
  }
};

TEST(Range, SlicesJoinToTheWholeTensor) {
  std::mt19937 rng(9);
  for (const Layout2D& st : kSetups) {
    for (int32_t yt : kTypes) {
      Call c(st, yt);
      const std::vector<uint8_t> whole = c.Whole();
      const int bits = FindDType(yt)->bits;
      const int64_t per = bits < 8 ? 8 / bits : 1, n = Count(st.shape);
      std::vector<uint8_t> joined;
      for (int64_t first = 0; first < n;) {
        int64_t count = std::min<int64_t>(n - first, 1 + static_cast<int64_t>(rng() % 700));
        if (first + count < n) count = (count + per - 1) / per * per;  // slices own whole bytes
        count = std::min(count, n - first);
        const size_t bytes = static_cast<size_t>(StorageBytes(static_cast<DType>(yt), static_cast<uint64_t>(count)));
        std::vector<uint8_t> part(bytes + 8, 0xEE);
        qlinear_tensor slice = c.tx;
        slice.data = c.x.data() + first;  // x->data points at element `first`
        ASSERT_EQ(qlinear_quantize_linear_range(&slice, &c.ts, nullptr, &c.a, first, count, part.data(), bytes),
                  QLINEAR_OK) << qlinear_last_error() << " " << st.what;
        for (size_t k = bytes; k < part.size(); ++k) ASSERT_EQ(part[k], 0xEE) << "wrote past y_bytes";
        joined.insert(joined.end(), part.begin(), part.begin() + static_cast<std::ptrdiff_t>(bytes));
        first += count;
      }
      ASSERT_EQ(joined, whole) << st.what << " -> " << qlinear_dtype_name(yt);
    }
  }
}

// A sub-range call decodes only the scales in ScaleWindow: every element of the range must use
// one of them (checked against ScaleIndex, the definition, for every range of small layouts).
// Also: ForEachRun's runs cover the range in order, and each element's scale index from its run
// (scale_first + (phase + j) / period) is ScaleIndex's (rows of blocks that tile the last axis
// join into one run: axis_dim 6 with blocks 2 and 3). Per axis, ForEachAxisSweep's runs too.
TEST(Range, ScaleWindowHoldsEveryScaleTheRangeUses) {
  for (Granularity g : {Granularity::kPerTensor, Granularity::kPerAxis, Granularity::kBlocked}) {
    for (int64_t outer : {1, 3}) {
      for (int64_t axis_dim : {1, 5, 6, 7}) {
        for (int64_t inner : {1, 4}) {
          for (int64_t block : {1, 2, 3}) {
            Layout l;
            l.granularity = g;
            l.outer = outer;
            l.axis_dim = axis_dim;
            l.inner = inner;
            l.count = outer * axis_dim * inner;
            l.block = g == Granularity::kBlocked ? block : 0;
            l.scale_axis = g == Granularity::kBlocked ? (axis_dim + block - 1) / block : 1;
            l.scale_count = g == Granularity::kPerAxis ? axis_dim
                            : g == Granularity::kBlocked ? outer * l.scale_axis * inner : 1;
            for (int64_t b = 0; b < l.count; ++b) {
              for (int64_t e = b + 1; e <= l.count; ++e) {
                int64_t first, count;
                ScaleWindow(l, b, e, &first, &count);
                ASSERT_GE(first, 0);
                ASSERT_LE(first + count, l.scale_count);
                for (int64_t i = b; i < e; ++i) {
                  const int64_t k = ScaleIndex(l, i);
                  ASSERT_TRUE(k >= first && k < first + count)
                      << "granularity " << static_cast<int>(g) << " [" << outer << "," << axis_dim << ","
                      << inner << "] block " << block << " range [" << b << "," << e << ") element " << i;
                }
                int64_t next = b;
                auto check = [&](const qlinear::Run& r) {
                  ASSERT_EQ(r.start, next);
                  ASSERT_GT(r.count, 0);
                  ASSERT_TRUE(r.phase >= 0 && r.phase < r.period);
                  for (int64_t j = 0; j < r.count; ++j) {
                    ASSERT_EQ(r.scale_first + (r.phase + j) / r.period, ScaleIndex(l, r.start + j))
                        << "granularity " << static_cast<int>(g) << " [" << outer << "," << axis_dim << ","
                        << inner << "] block " << block << " range [" << b << "," << e << ") element "
                        << r.start + j;
                  }
                  next += r.count;
                };
                ForEachRun(l, b, e, check);
                ASSERT_EQ(next, e);
                if (g == Granularity::kPerAxis) {  // the same for the runs of blocks of `inner`
                  next = b;
                  ForEachAxisSweep(l, b, e, check);
                  ASSERT_EQ(next, e);
                }
              }
            }
          }
        }
      }
    }
  }
}

// Slices with zero points (each slice's decoded window starts elsewhere in the zero points).
TEST(Range, SlicesWithZeroPointsJoinToTheWholeTensor) {
  std::mt19937 rng(11);
  for (const Layout2D& st : kSetups) {
    Call c(st, QLINEAR_DTYPE_INT8);
    std::vector<int8_t> zps(c.scales.size());
    for (int8_t& z : zps) z = static_cast<int8_t>(rng());
    const qlinear_tensor tz{QLINEAR_DTYPE_INT8, c.ts.rank, c.ts.shape, zps.data()};
    const int64_t n = Count(st.shape);
    std::vector<uint8_t> whole(c.y_bytes), joined(c.y_bytes);
    ASSERT_EQ(qlinear_quantize_linear(&c.tx, &c.ts, &tz, &c.a, whole.data(), whole.size()), QLINEAR_OK);
    for (int64_t first = 0; first < n;) {
      const int64_t count = std::min<int64_t>(n - first, 1 + static_cast<int64_t>(rng() % 300));
      qlinear_tensor slice = c.tx;
      slice.data = c.x.data() + first;
      ASSERT_EQ(qlinear_quantize_linear_range(&slice, &c.ts, &tz, &c.a, first, count, joined.data() + first,
                                              static_cast<size_t>(count)), QLINEAR_OK) << qlinear_last_error();
      first += count;
    }
    ASSERT_EQ(joined, whole) << st.what;
  }
}

TEST(Range, DequantizeSlicesJoinToTheWholeTensor) {
  for (int32_t xt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_FLOAT8E4M3FN}) {
    const Layout2D& st = kSetups[4];
    Call q(st, xt);
    const std::vector<uint8_t> codes = q.Whole();
    const qlinear_tensor tx{xt, static_cast<int32_t>(st.shape.size()), st.shape.data(), codes.data()};
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.axis = st.axis;
    a.block_size = st.block;
    const int64_t n = Count(st.shape);
    std::vector<float> whole(static_cast<size_t>(n)), joined(static_cast<size_t>(n), -1.0f);
    ASSERT_EQ(qlinear_dequantize_linear(&tx, &q.ts, nullptr, &a, whole.data(), whole.size() * 4), QLINEAR_OK);
    const int64_t step = 1000;  // even: whole bytes for 4-bit codes
    for (int64_t first = 0; first < n; first += step) {
      const int64_t count = std::min(step, n - first);
      qlinear_tensor slice = tx;
      slice.data = codes.data() + StorageBytes(static_cast<DType>(xt), static_cast<uint64_t>(first));
      ASSERT_EQ(qlinear_dequantize_linear_range(&slice, &q.ts, nullptr, &a, first, count,
                                                joined.data() + first, static_cast<size_t>(count) * 4),
                QLINEAR_OK) << qlinear_last_error();
    }
    ASSERT_EQ(0, std::memcmp(whole.data(), joined.data(), whole.size() * 4)) << qlinear_dtype_name(xt);
  }
}

TEST(Range, BadRangesAreRejectedAndOutputUntouched) {
  Call c(kSetups[0], QLINEAR_DTYPE_INT4);
  std::vector<uint8_t> y(4000, 0x5A);
  struct Bad { int64_t first, count; size_t bytes; const char* word; } bad[] = {
      {-1, 10, 100, "first, count"}, {10, -1, 100, "first, count"}, {5990, 20, 100, "first, count"},
      {3, 10, 100, "first: must be a multiple of 2"}, {2, 9, 100, "count: must be a multiple of 2"},
      {0, 100, 49, "y_bytes"}};
  for (const Bad& b : bad) {
    EXPECT_EQ(qlinear_quantize_linear_range(&c.tx, &c.ts, nullptr, &c.a, b.first, b.count, y.data(), b.bytes),
              b.bytes == 49 ? QLINEAR_BUFFER_TOO_SMALL : QLINEAR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(qlinear_last_error()).find(b.word), std::string::npos) << qlinear_last_error();
    for (uint8_t v : y) ASSERT_EQ(v, 0x5A);
  }
  // The last slice may end mid-byte: 5999 - 5990 = 10 elements from 5990 is the tensor's end.
  EXPECT_EQ(qlinear_quantize_linear_range(&c.tx, &c.ts, nullptr, &c.a, 5990, 10, y.data(), 5), QLINEAR_OK);
  // Empty slices write nothing, wherever they start (an odd tensor's empty last shard).
  std::fill(y.begin(), y.end(), 0x5A);
  for (int64_t first : {int64_t{3}, int64_t{5999}, int64_t{6000}}) {
    EXPECT_EQ(qlinear_quantize_linear_range(&c.tx, &c.ts, nullptr, &c.a, first, 0, y.data(), 0), QLINEAR_OK)
        << qlinear_last_error();
  }
  for (uint8_t v : y) ASSERT_EQ(v, 0x5A);
  // An empty slice has no elements for x->data (or y) to point at: NULL is fine; a slice with
  // elements and no data is not.
  qlinear_tensor no_data = c.tx;
  no_data.data = nullptr;
  EXPECT_EQ(qlinear_quantize_linear_range(&no_data, &c.ts, nullptr, &c.a, 4, 0, nullptr, 0), QLINEAR_OK)
      << qlinear_last_error();
  EXPECT_EQ(qlinear_quantize_linear_range(&no_data, &c.ts, nullptr, &c.a, 4, 2, y.data(), 1), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("x: data is NULL"), std::string::npos) << qlinear_last_error();
  const int64_t n = 6;
  const qlinear_tensor packed{QLINEAR_DTYPE_INT4, 1, &n, nullptr};
  const float one = 1.0f;
  const qlinear_tensor scalar{QLINEAR_DTYPE_FLOAT, 0, nullptr, &one};
  EXPECT_EQ(qlinear_dequantize_linear_range(&packed, &scalar, nullptr, nullptr, 6, 0, nullptr, 0), QLINEAR_OK)
      << qlinear_last_error();
  for (uint8_t v : y) ASSERT_EQ(v, 0x5A);
}

// A caller's runner: one std::thread per task, counting the tasks.
struct ThreadRunner {
  std::atomic<int64_t> tasks{0};
  static void ParallelFor(void* self, int64_t count, qlinear_task_fn task, void* ctx) {
    static_cast<ThreadRunner*>(self)->tasks += count;
    std::vector<std::thread> threads;
    for (int64_t i = 0; i < count; ++i) threads.emplace_back([=] { task(ctx, i); });
    for (std::thread& t : threads) t.join();
  }
};

TEST(Parallel, CallerRunnerAndOpenMPMatchSerial) {
  const Layout2D big{{700, 1001}, {1001}, 1, 0, "per axis, last"};
  for (int32_t yt : kTypes) {
    Call c(big, yt);
    const std::vector<uint8_t> whole = c.Whole();
    ThreadRunner runner;
    qlinear_parallel_options o;
    qlinear_parallel_options_init(&o);
    o.max_threads = 5;
    o.min_elements_per_task = 10000;
    o.parallel_for = ThreadRunner::ParallelFor;
    o.runner_context = &runner;
    std::vector<uint8_t> y(c.y_bytes, 0);
    ASSERT_EQ(qlinear_quantize_linear_parallel(&c.tx, &c.ts, nullptr, &c.a, y.data(), y.size(), &o), QLINEAR_OK)
        << qlinear_last_error();
    EXPECT_EQ(runner.tasks.load(), 5);
    ASSERT_EQ(y, whole) << qlinear_dtype_name(yt);
    qlinear_parallel_options_init(&o);  // OpenMP if built in, else serial
    o.min_elements_per_task = 10000;
    o.max_threads = 3;
    std::fill(y.begin(), y.end(), 0);
    ASSERT_EQ(qlinear_quantize_linear_parallel(&c.tx, &c.ts, nullptr, &c.a, y.data(), y.size(), &o), QLINEAR_OK);
    ASSERT_EQ(y, whole) << qlinear_dtype_name(yt) << " (OpenMP " << qlinear_openmp_enabled() << ")";
    // Dequantize back, in parallel and serially.
    const qlinear_tensor tq{yt, 2, big.shape.data(), whole.data()};
    qlinear_dequantize_attrs da;
    qlinear_dequantize_attrs_init(&da);
    std::vector<float> serial(c.x.size()), par(c.x.size(), -1.0f);
    ASSERT_EQ(qlinear_dequantize_linear(&tq, &c.ts, nullptr, &da, serial.data(), serial.size() * 4), QLINEAR_OK);
    ASSERT_EQ(qlinear_dequantize_linear_parallel(&tq, &c.ts, nullptr, &da, par.data(), par.size() * 4, &o), QLINEAR_OK);
    ASSERT_EQ(0, std::memcmp(serial.data(), par.data(), par.size() * 4));
  }
}

// A caller's runner over at most four tasks of at least 10000 elements.
qlinear_parallel_options FourTasks(qlinear_parallel_for_fn parallel_for, void* context) {
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.max_threads = 4;
  o.min_elements_per_task = 10000;
  o.parallel_for = parallel_for;
  o.runner_context = context;
  return o;
}

// Dynamic int8 scales per row (axis 0) or per tensor.
qlinear_dynamic_attrs Int8OnAxis0(int32_t granularity) {
  qlinear_dynamic_attrs d;
  qlinear_dynamic_attrs_init(&d);
  d.output_dtype = QLINEAR_DTYPE_INT8;
  d.granularity = granularity;
  d.axis = 0;
  d.block_size = 0;
  return d;
}

// A runner that also calls the task with indexes outside [0, count): those calls return at once
// (before, they computed pieces beyond the tensor: a heap corruption or a segfault).
struct StrayIndexRunner {
  static void ParallelFor(void*, int64_t count, qlinear_task_fn task, void* ctx) {
    for (int64_t i : {int64_t{-1}, count, count + 1, INT64_MAX, INT64_MIN}) task(ctx, i);
    for (int64_t i = 0; i < count; ++i) task(ctx, i);
  }
};

TEST(Parallel, TaskIndexesOutsideTheCountAreIgnored) {
  const Layout2D big{{700, 1001}, {1001}, 1, 0, "per axis, last"};
  Call c(big, QLINEAR_DTYPE_INT4);
  const std::vector<uint8_t> whole = c.Whole();
  const qlinear_parallel_options o = FourTasks(StrayIndexRunner::ParallelFor, nullptr);
  std::vector<uint8_t> y(c.y_bytes, 0);
  ASSERT_EQ(qlinear_quantize_linear_parallel(&c.tx, &c.ts, nullptr, &c.a, y.data(), y.size(), &o), QLINEAR_OK)
      << qlinear_last_error();
  EXPECT_EQ(y, whole);
  const qlinear_tensor tq{QLINEAR_DTYPE_INT4, 2, big.shape.data(), whole.data()};
  std::vector<float> serial(c.x.size()), par(c.x.size(), -1.0f);
  ASSERT_EQ(qlinear_dequantize_linear(&tq, &c.ts, nullptr, nullptr, serial.data(), serial.size() * 4), QLINEAR_OK);
  ASSERT_EQ(qlinear_dequantize_linear_parallel(&tq, &c.ts, nullptr, nullptr, par.data(), par.size() * 4, &o),
            QLINEAR_OK);
  EXPECT_EQ(0, std::memcmp(serial.data(), par.data(), par.size() * 4));
  // Dynamic quantization: per row (one pass over chunks) and per tensor (statistics in tasks).
  for (int32_t granularity : {QLINEAR_GRANULARITY_AXIS, QLINEAR_GRANULARITY_TENSOR}) {
    const qlinear_dynamic_attrs d = Int8OnAxis0(granularity);
    const size_t groups = granularity == QLINEAR_GRANULARITY_AXIS ? 700 : 1;
    std::vector<int8_t> y1(c.x.size()), y2(c.x.size(), 0);
    std::vector<float> s1(groups), s2(groups, 0.0f);
    ASSERT_EQ(qlinear_quantize_dynamic(&c.tx, &d, y1.data(), y1.size(), s1.data(), groups * 4, nullptr, 0), QLINEAR_OK)
        << qlinear_last_error();
    ASSERT_EQ(qlinear_quantize_dynamic_parallel(&c.tx, &d, y2.data(), y2.size(), s2.data(), groups * 4, nullptr, 0, &o),
              QLINEAR_OK)
        << qlinear_last_error();
    EXPECT_EQ(y1, y2) << granularity;
    EXPECT_EQ(0, std::memcmp(s1.data(), s2.data(), groups * 4)) << granularity;
  }
}

// Runners that break their contract: one skips a task (once, or on every call), one throws
// after running half of them. The call must not report success: QLINEAR_INTERNAL_ERROR with a
// message naming parallel_for (never QLINEAR_OUT_OF_MEMORY, whose outputs are untouched).
struct BrokenRunner {
  enum Kind { kSkipFirstCallsTaskZero, kSkipLastTaskAlways, kThrowHalfway } kind;
  int calls = 0;
  static void ParallelFor(void* self, int64_t count, qlinear_task_fn task, void* ctx) {
    BrokenRunner& r = *static_cast<BrokenRunner*>(self);
    const int call = r.calls++;
    switch (r.kind) {
      case kSkipFirstCallsTaskZero:
        for (int64_t i = call == 0 ? 1 : 0; i < count; ++i) task(ctx, i);
        break;
      case kSkipLastTaskAlways:
        for (int64_t i = 0; i + 1 < count; ++i) task(ctx, i);
        task(ctx, 0);  // a repeat does not make up for the missing one
        break;
      case kThrowHalfway:
        for (int64_t i = 0; i < count / 2; ++i) task(ctx, i);
        throw std::bad_alloc();  // a pool that cannot grow
    }
  }
};

TEST(Parallel, RunnersThatSkipTasksOrThrowFailTheCall) {
  const Layout2D big{{700, 1001}, {1001}, 1, 0, "per axis, last"};
  Call c(big, QLINEAR_DTYPE_INT8);
  for (BrokenRunner::Kind kind :
       {BrokenRunner::kSkipFirstCallsTaskZero, BrokenRunner::kSkipLastTaskAlways, BrokenRunner::kThrowHalfway}) {
    BrokenRunner runner{kind};
    const qlinear_parallel_options o = FourTasks(BrokenRunner::ParallelFor, &runner);
    auto expect_runner_error = [&](qlinear_status s, const char* call) {
      EXPECT_EQ(s, QLINEAR_INTERNAL_ERROR) << call << ", runner " << kind;
      EXPECT_NE(std::string(qlinear_last_error()).find("parallel_for"), std::string::npos)
          << call << ": " << qlinear_last_error();
    };
    std::vector<uint8_t> y(c.y_bytes, 0);
    runner.calls = 0;
    expect_runner_error(qlinear_quantize_linear_parallel(&c.tx, &c.ts, nullptr, &c.a, y.data(), y.size(), &o),
                        "quantize");
    const qlinear_tensor tq{QLINEAR_DTYPE_INT8, 2, big.shape.data(), y.data()};
    std::vector<float> back(c.x.size());
    runner.calls = 0;
    expect_runner_error(
        qlinear_dequantize_linear_parallel(&tq, &c.ts, nullptr, nullptr, back.data(), back.size() * 4, &o),
        "dequantize");
    for (int32_t granularity : {QLINEAR_GRANULARITY_AXIS, QLINEAR_GRANULARITY_TENSOR}) {
      const qlinear_dynamic_attrs d = Int8OnAxis0(granularity);
      const size_t groups = granularity == QLINEAR_GRANULARITY_AXIS ? 700 : 1;
      std::vector<int8_t> yd(c.x.size(), 0x11);
      std::vector<float> sd(groups, -7.0f);
      runner.calls = 0;
      expect_runner_error(
          qlinear_quantize_dynamic_parallel(&c.tx, &d, yd.data(), yd.size(), sd.data(), groups * 4, nullptr, 0, &o),
          granularity == QLINEAR_GRANULARITY_AXIS ? "dynamic, per row" : "dynamic, per tensor");
      if (granularity == QLINEAR_GRANULARITY_TENSOR) {
        // The statistics' runner call fails before any output is written.
        EXPECT_EQ(sd[0], -7.0f);
        EXPECT_EQ(yd, std::vector<int8_t>(c.x.size(), 0x11));
      }
    }
  }
  // Per tensor, a runner that fails only in the second call (the codes, after the scale is
  // written) fails the call too.
  BrokenRunner second{BrokenRunner::kSkipFirstCallsTaskZero};
  const qlinear_parallel_options o = FourTasks(BrokenRunner::ParallelFor, &second);
  const qlinear_dynamic_attrs d = Int8OnAxis0(QLINEAR_GRANULARITY_TENSOR);
  std::vector<int8_t> yd(c.x.size());
  float sd = 0.0f;
  second.calls = -1;  // call -1 runs every task, call 0 skips task 0
  EXPECT_EQ(qlinear_quantize_dynamic_parallel(&c.tx, &d, yd.data(), yd.size(), &sd, 4, nullptr, 0, &o),
            QLINEAR_INTERNAL_ERROR);
  EXPECT_EQ(second.calls, 1);
  EXPECT_NE(std::string(qlinear_last_error()).find("parallel_for"), std::string::npos) << qlinear_last_error();
}

// A runner whose thread ends inside it (pthread_exit; pthread_cancel unwinds the same way): the
// thread ends as its runner asked, and the process goes on. glibc aborts the process when the
// unwinding is caught and not rethrown.
void ExitingRunner(void*, int64_t count, qlinear_task_fn task, void* ctx) {
  for (int64_t i = 0; i < count; ++i) task(ctx, i);
  pthread_exit(reinterpret_cast<void*>(42));
}

TEST(Parallel, ARunnerThatEndsItsThreadEndsOnlyThatThread) {
  const Layout2D rows{{100, 1001}, {1001}, 1, 0, "per axis, last"};  // four tasks (FourTasks)
  Call c(rows, QLINEAR_DTYPE_INT8);
  const qlinear_parallel_options o = FourTasks(ExitingRunner, nullptr);
  std::vector<uint8_t> y(c.y_bytes, 0);
  const qlinear_dynamic_attrs d = Int8OnAxis0(QLINEAR_GRANULARITY_TENSOR);
  std::vector<int8_t> yd(c.x.size());
  float sd = 0.0f;
  for (int call = 0; call < 2; ++call) {
    pthread_t thread;
    struct Args {
      Call* c;
      const qlinear_parallel_options* o;
      std::vector<uint8_t>* y;
      const qlinear_dynamic_attrs* d;
      std::vector<int8_t>* yd;
      float* sd;
      int call;
    } args{&c, &o, &y, &d, &yd, &sd, call};
    ASSERT_EQ(pthread_create(
                  &thread, nullptr,
                  [](void* p) -> void* {
                    const Args& a = *static_cast<const Args*>(p);
                    if (a.call == 0) {
                      qlinear_quantize_linear_parallel(&a.c->tx, &a.c->ts, nullptr, &a.c->a, a.y->data(), a.y->size(),
                                                       a.o);
                    } else {
                      qlinear_quantize_dynamic_parallel(&a.c->tx, a.d, a.yd->data(), a.yd->size(), a.sd, 4, nullptr,
                                                        0, a.o);
                    }
                    return nullptr;  // not reached: the runner ends the thread
                  },
                  &args),
              0);
    void* result = nullptr;
    ASSERT_EQ(pthread_join(thread, &result), 0);
    EXPECT_EQ(result, reinterpret_cast<void*>(42)) << call;
  }
  // The library still serves this thread, in parallel too.
  const std::vector<uint8_t> whole = c.Whole();
  const qlinear_parallel_options openmp = FourTasks(nullptr, nullptr);
  std::vector<uint8_t> again(c.y_bytes, 0);
  ASSERT_EQ(qlinear_quantize_linear_parallel(&c.tx, &c.ts, nullptr, &c.a, again.data(), again.size(), &openmp),
            QLINEAR_OK);
  EXPECT_EQ(again, whole);
}

// A caller's parallel-for that runs the tasks on the calling thread and, before each, makes
// calls of its own there (a pool that works on other jobs while it waits): the per-group
// parameters the outer call decoded (scales, zero points, reciprocals, offsets) must survive
// the nested calls, which decode others, of other sizes, on the same thread.
struct NestingRunner {
  Call* inner;
  const qlinear_tensor* inner_zp;
  std::vector<uint8_t> inner_whole;
  std::vector<float> inner_back;
  int64_t tasks = 0;
  static void ParallelFor(void* self, int64_t count, qlinear_task_fn task, void* ctx) {
    NestingRunner& r = *static_cast<NestingRunner*>(self);
    for (int64_t i = 0; i < count; ++i) {
      Call& c = *r.inner;
      std::vector<uint8_t> y(c.y_bytes, 0x55);
      EXPECT_EQ(qlinear_quantize_linear(&c.tx, &c.ts, r.inner_zp, &c.a, y.data(), y.size()), QLINEAR_OK);
      EXPECT_EQ(y, r.inner_whole) << "nested quantize, task " << i;
      const qlinear_tensor tq{c.a.output_dtype, c.tx.rank, c.tx.shape, y.data()};
      qlinear_dequantize_attrs da;
      qlinear_dequantize_attrs_init(&da);
      da.axis = c.a.axis;
      da.block_size = c.a.block_size;
      std::vector<float> back(c.x.size(), -1.0f);
      EXPECT_EQ(qlinear_dequantize_linear(&tq, &c.ts, r.inner_zp, &da, back.data(), back.size() * 4), QLINEAR_OK);
      EXPECT_EQ(0, std::memcmp(back.data(), r.inner_back.data(), back.size() * 4)) << "nested dequantize, task " << i;
      task(ctx, i);
      ++r.tasks;
    }
  }
};

TEST(Parallel, NestedCallsOnTheCallingThreadKeepTheirOwnParameters) {
  const Layout2D outer_layout{{256, 1000}, {8, 1000}, 0, 32, "blocked, outer axis"};
  const Layout2D inner_layouts[] = {{{40, 150}, {40, 5}, 1, 32, "blocked, last axis"},
                                    {{64, 5000}, {2, 5000}, 0, 32, "blocked, outer axis, more groups"}};
  for (const Layout2D& inner_layout : inner_layouts) {
    for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT8}) {
      Call outer(outer_layout, yt), inner(inner_layout, yt);
      for (size_t k = 0; k < inner.scales.size(); ++k) inner.scales[k] = 0.5f + 0.25f * static_cast<float>(k % 3);
      // Zero points that differ between the calls (and so do their offsets).
      std::vector<uint8_t> outer_z(outer.scales.size()), inner_z(inner.scales.size());
      for (size_t k = 0; k < outer_z.size(); ++k) outer_z[k] = static_cast<uint8_t>(k % 9 + 1);
      for (size_t k = 0; k < inner_z.size(); ++k) inner_z[k] = static_cast<uint8_t>(k % 4 + 20);
      const qlinear_tensor oz{yt, outer.ts.rank, outer.ts.shape, outer_z.data()};
      const qlinear_tensor iz{yt, inner.ts.rank, inner.ts.shape, inner_z.data()};
      std::vector<uint8_t> whole(outer.y_bytes), inner_whole(inner.y_bytes);
      ASSERT_EQ(qlinear_quantize_linear(&outer.tx, &outer.ts, &oz, &outer.a, whole.data(), whole.size()), QLINEAR_OK);
      ASSERT_EQ(qlinear_quantize_linear(&inner.tx, &inner.ts, &iz, &inner.a, inner_whole.data(), inner_whole.size()),
                QLINEAR_OK);
      const qlinear_tensor tq{yt, inner.tx.rank, inner.tx.shape, inner_whole.data()};
      qlinear_dequantize_attrs da;
      qlinear_dequantize_attrs_init(&da);
      da.axis = inner.a.axis;
      da.block_size = inner.a.block_size;
      std::vector<float> inner_back(inner.x.size());
      ASSERT_EQ(qlinear_dequantize_linear(&tq, &inner.ts, &iz, &da, inner_back.data(), inner_back.size() * 4),
                QLINEAR_OK);
      NestingRunner runner{&inner, &iz, inner_whole, inner_back};
      qlinear_parallel_options o;
      qlinear_parallel_options_init(&o);
      o.max_threads = 4;
      o.min_elements_per_task = 10000;
      o.parallel_for = NestingRunner::ParallelFor;
      o.runner_context = &runner;
      std::vector<uint8_t> y(outer.y_bytes, 0);
      ASSERT_EQ(qlinear_quantize_linear_parallel(&outer.tx, &outer.ts, &oz, &outer.a, y.data(), y.size(), &o),
                QLINEAR_OK)
          << qlinear_last_error();
      EXPECT_EQ(runner.tasks, 4);
      ASSERT_EQ(y, whole) << qlinear_dtype_name(yt) << ", nested: " << inner_layout.what;
    }
  }
}

TEST(Parallel, SmallTensorsStayOnTheCallingThreadAndBadOptionsFail) {
  Call c(kSetups[0], QLINEAR_DTYPE_INT8);
  ThreadRunner runner;
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.parallel_for = ThreadRunner::ParallelFor;
  o.runner_context = &runner;
  std::vector<uint8_t> y(c.y_bytes);
  ASSERT_EQ(qlinear_quantize_linear_parallel(&c.tx, &c.ts, nullptr, &c.a, y.data(), y.size(), &o), QLINEAR_OK);
  EXPECT_EQ(runner.tasks.load(), 0) << "6000 elements are below the default threshold";
  EXPECT_EQ(y, c.Whole());
  o.struct_size = 8;
  std::vector<uint8_t> untouched(y.size(), 0x77);
  EXPECT_EQ(qlinear_quantize_linear_parallel(&c.tx, &c.ts, nullptr, &c.a, untouched.data(), untouched.size(), &o),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qlinear_last_error()).find("struct_size"), std::string::npos);
  for (uint8_t v : untouched) ASSERT_EQ(v, 0x77);
}

// The C++ layer: the same results through ParallelOptions with a std::function runner, and the
// range wrappers report the C status and message.
TEST(Parallel, CppWrappersMatchTheCCalls) {
  const Layout2D big{{700, 1001}, {1001}, 1, 0, "per axis, last"};
  Call c(big, QLINEAR_DTYPE_INT4);
  const std::vector<uint8_t> whole = c.Whole();
  const TensorView x(DataType::kFloat, big.shape, c.x.data());
  const TensorView s(DataType::kFloat, big.scale_shape, c.scales.data());
  QuantizeAttrs a;
  a.axis = 1;
  a.output_dtype = QLINEAR_DTYPE_INT4;
  std::atomic<int64_t> tasks{0};
  ParallelOptions o;
  o.max_threads = 4;
  o.min_elements_per_task = 10000;
  o.parallel_for = [&](int64_t count, const std::function<void(int64_t)>& task) {
    tasks += count;
    std::vector<std::thread> threads;
    for (int64_t i = 0; i < count; ++i) threads.emplace_back([&task, i] { task(i); });
    for (std::thread& t : threads) t.join();
  };
  std::vector<uint8_t> y(c.y_bytes, 0);
  Status st = QuantizeLinearParallel(x, s, nullptr, a, y.data(), y.size(), o);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(tasks.load(), 4);
  EXPECT_EQ(y, whole);

  // Slices of 1000 elements (even: whole bytes of int4) joined.
  std::vector<uint8_t> joined(c.y_bytes, 0);
  const int64_t n = Count(big.shape);
  for (int64_t first = 0; first < n; first += 1000) {
    const int64_t count = std::min<int64_t>(1000, n - first);
    const TensorView slice(DataType::kFloat, big.shape, c.x.data() + first);
    st = QuantizeLinearRange(slice, s, nullptr, a, first, count, joined.data() + first / 2,
                             joined.size() - static_cast<size_t>(first / 2));
    ASSERT_TRUE(st.ok()) << st.message();
  }
  EXPECT_EQ(joined, whole);
  st = QuantizeLinearRange(x, s, nullptr, a, 3, 10, joined.data(), joined.size());
  EXPECT_EQ(st.code(), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find("first"), std::string::npos) << st.message();

  // Dequantize: default options (OpenMP or serial) and a range, against the whole serial call.
  const TensorView q(DataType::kInt4, big.shape, whole.data());
  DequantizeAttrs da;
  da.axis = 1;
  std::vector<float> serial(static_cast<size_t>(n)), par(static_cast<size_t>(n), -1.0f);
  ASSERT_TRUE(DequantizeLinear(q, s, nullptr, da, serial.data(), serial.size() * 4).ok());
  ASSERT_TRUE(DequantizeLinearParallel(q, s, nullptr, da, par.data(), par.size() * 4).ok());
  EXPECT_EQ(0, std::memcmp(serial.data(), par.data(), par.size() * 4));
  std::vector<float> tail(1000, -1.0f);
  const TensorView qslice(DataType::kInt4, big.shape, whole.data() + (n - 1000) / 2);
  ASSERT_TRUE(DequantizeLinearRange(qslice, s, nullptr, da, n - 1000, 1000, tail.data(), 4000).ok());
  EXPECT_EQ(0, std::memcmp(serial.data() + (n - 1000), tail.data(), 4000));
}

}  // namespace
}  // namespace qlinear
