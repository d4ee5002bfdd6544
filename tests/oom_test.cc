// Allocation failures: every allocation a call makes is made to fail in turn (this executable
// replaces operator new), and the call must return QLINEAR_OUT_OF_MEMORY with its outputs
// untouched, or succeed with the right bytes; never throw, abort or write half an output.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "qlinear/qlinear.h"
#include "qlinear/qlinear.hpp"

namespace {

// > 0: the allocation that brings it to 0 fails.
std::atomic<int64_t> g_fail_countdown{0};
// Bytes asked of operator new so far.
std::atomic<uint64_t> g_bytes_asked{0};

void* Allocate(size_t n) {
  if (g_fail_countdown.load(std::memory_order_relaxed) > 0 && g_fail_countdown.fetch_sub(1) == 1) {
    throw std::bad_alloc();
  }
  g_bytes_asked.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(size_t n) { return Allocate(n); }
void* operator new[](size_t n) { return Allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return std::malloc(n == 0 ? 1 : n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return std::malloc(n == 0 ? 1 : n); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

constexpr uint8_t kSentinel = 0xA5;

struct Buffers {
  std::vector<uint8_t> y, scale, zp;
};

// A runner that runs the tasks on the calling thread, last first.
void Backwards(void*, int64_t count, void (*task)(void*, int64_t), void* ctx) {
  for (int64_t i = count - 1; i >= 0; --i) task(ctx, i);
}

// Runs call(out) with the k-th allocation failing, for k = 1, 2, ... until a call makes fewer
// than k allocations; each failed call must leave every output byte as it was.
template <class Call>
void EveryAllocationFails(const Buffers& expected, const char* what, Call call) {
  int64_t failures = 0;
  for (int64_t k = 1; k < 10000; ++k) {
    Buffers b{std::vector<uint8_t>(expected.y.size(), kSentinel), std::vector<uint8_t>(expected.scale.size(), kSentinel),
              std::vector<uint8_t>(expected.zp.size(), kSentinel)};
    // Each attempt on a new thread: its scratch buffer (qlinear.h) is empty, as in a thread's
    // first call, so the call allocates it.
    qlinear_status s = QLINEAR_OK;
    int64_t left = 0;
    std::string message;
    std::thread([&] {
      g_fail_countdown.store(k);
      s = call(&b);
      left = g_fail_countdown.exchange(0);
      message = qlinear_last_error();
    }).join();
    if (s == QLINEAR_OUT_OF_MEMORY) {
      ++failures;
      for (const std::vector<uint8_t>* v : {&b.y, &b.scale, &b.zp}) {
        for (size_t i = 0; i < v->size(); ++i) {
          ASSERT_EQ((*v)[i], kSentinel) << what << ": allocation " << k << " failed, yet byte " << i
                                        << " of an output was written";
        }
      }
      continue;
    }
    ASSERT_EQ(s, QLINEAR_OK) << what << ", allocation " << k << ": " << message;
    if (left > 0) {  // made fewer than k allocations: every one of them has failed once
      EXPECT_EQ(b.y, expected.y) << what;
      EXPECT_EQ(b.scale, expected.scale) << what;
      EXPECT_EQ(b.zp, expected.zp) << what;
      EXPECT_GT(failures, 0) << what << ": no allocation to fail (the test checks nothing)";
      return;
    }
  }
  FAIL() << what << ": more than 10000 allocations";
}

std::vector<float> Values(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * static_cast<float>(i % 23);
  return x;
}

// QuantizeLinear inputs in uint4 with blocks of `block` along axis 0 of a [rows, cols] float32
// x: x, its float32 scales and packed zero points, and the same for its first head_rows rows.
struct Uint4Blocks {
  std::vector<int64_t> shape, sshape, head_shape, head_sshape;
  std::vector<float> x, scales;
  std::vector<uint8_t> zps;
  qlinear_tensor tx, ts, tz, head_x, head_s, head_z;
  Uint4Blocks(int64_t rows, int64_t cols, int64_t block, int64_t head_rows = 0)
      : shape{rows, cols}, sshape{(rows + block - 1) / block, cols}, head_shape{head_rows, cols},
        head_sshape{(head_rows + block - 1) / block, cols}, x(Values(rows * cols)),
        scales(static_cast<size_t>(sshape[0] * cols)), zps((scales.size() + 1) / 2) {
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.01f + 0.001f * static_cast<float>(i % 97);
    for (size_t i = 0; i < zps.size(); ++i) zps[i] = static_cast<uint8_t>(i * 37);
    tx = {QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
    ts = {QLINEAR_DTYPE_FLOAT, 2, sshape.data(), scales.data()};
    tz = {QLINEAR_DTYPE_UINT4, 2, sshape.data(), zps.data()};
    head_x = {QLINEAR_DTYPE_FLOAT, 2, head_shape.data(), x.data()};
    head_s = {QLINEAR_DTYPE_FLOAT, 2, head_sshape.data(), scales.data()};
    head_z = {QLINEAR_DTYPE_UINT4, 2, head_sshape.data(), zps.data()};
  }
  Uint4Blocks(const Uint4Blocks&) = delete;
  Uint4Blocks& operator=(const Uint4Blocks&) = delete;
};

struct DynamicCase {
  const char* what;
  int32_t y, rule, granularity;
  int64_t axis, block;
};

qlinear_dynamic_attrs AttrsOf(const DynamicCase& c) {
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = c.y;
  a.rule = c.rule;
  a.granularity = c.granularity;
  a.axis = c.axis;
  a.block_size = c.block;
  return a;
}

// Several 32K-element chunks (the one-pass loop), per column (two passes), serial and parallel.
TEST(OutOfMemory, DynamicQuantizationWritesNothing) {
  const std::vector<int64_t> shape{300, 1000};
  const std::vector<float> x = Values(300 * 1000);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  const DynamicCase cases[] = {
      {"MX int4 blocks of 7", QLINEAR_DTYPE_INT4, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_BLOCK, -1, 7},
      {"MINMAX uint4 blocks of 32", QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, -1, 32},
      {"ABSMAX int8 per row", QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0},
      {"MINMAX uint8 per column", QLINEAR_DTYPE_UINT8, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_AXIS, 1, 0},
      {"ABSMAX int8 blocks of 4 along the rows", QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_BLOCK, 0, 4},
  };
  for (const DynamicCase& c : cases) {
    const qlinear_dynamic_attrs a = AttrsOf(c);
    size_t yb = 0, sb = 0, zb = 0;
    ASSERT_EQ(qlinear_quantize_dynamic_output_info(&tx, &a, &yb, &sb, &zb), QLINEAR_OK) << qlinear_last_error();
    const bool minmax = c.rule == QLINEAR_SCALE_MINMAX;
    Buffers expected{std::vector<uint8_t>(yb), std::vector<uint8_t>(sb), std::vector<uint8_t>(zb)};
    ASSERT_EQ(qlinear_quantize_dynamic(&tx, &a, expected.y.data(), yb, expected.scale.data(), sb,
                                       minmax ? expected.zp.data() : nullptr, zb),
              QLINEAR_OK)
        << qlinear_last_error();
    auto serial = [&](Buffers* b) {
      return qlinear_quantize_dynamic(&tx, &a, b->y.data(), yb, b->scale.data(), sb, minmax ? b->zp.data() : nullptr, zb);
    };
    EveryAllocationFails(expected, c.what, serial);
    for (bool openmp : {false, true}) {
      qlinear_parallel_options par;
      qlinear_parallel_options_init(&par);
      par.max_threads = openmp ? 2 : 7;
      par.min_elements_per_task = 20000;
      if (!openmp) par.parallel_for = Backwards;
      auto parallel = [&](Buffers* b) {
        return qlinear_quantize_dynamic_parallel(&tx, &a, b->y.data(), yb, b->scale.data(), sb,
                                                 minmax ? b->zp.data() : nullptr, zb, &par);
      };
      EveryAllocationFails(expected, openmp ? "parallel (OpenMP or serial)" : "parallel (caller's runner)", parallel);
    }
  }
}

// QuantizeLinear of x into tz's type, then DequantizeLinear of the result, each with every
// allocation failing in turn; returns the quantized bytes.
std::vector<uint8_t> QuantizeAndDequantizeWriteNothing(const qlinear_tensor& tx, const qlinear_tensor& ts,
                                                       const qlinear_tensor& tz, int64_t axis, int64_t block,
                                                       size_t code_bytes, const std::string& what) {
  qlinear_quantize_attrs qa;
  qlinear_quantize_attrs_init(&qa);
  qa.axis = axis;
  qa.block_size = block;
  Buffers q{std::vector<uint8_t>(code_bytes), {}, {}};
  EXPECT_EQ(qlinear_quantize_linear(&tx, &ts, &tz, &qa, q.y.data(), q.y.size()), QLINEAR_OK) << qlinear_last_error();
  EveryAllocationFails(q, ("QuantizeLinear " + what).c_str(), [&](Buffers* b) {
    return qlinear_quantize_linear(&tx, &ts, &tz, &qa, b->y.data(), b->y.size());
  });
  const qlinear_tensor tq{tz.dtype, tx.rank, tx.shape, q.y.data()};
  qlinear_dequantize_attrs da;
  qlinear_dequantize_attrs_init(&da);
  da.axis = axis;
  da.block_size = block;
  int64_t n = 1;
  for (int32_t k = 0; k < tx.rank; ++k) n *= tx.shape[k];
  Buffers d{std::vector<uint8_t>(static_cast<size_t>(n) * 4), {}, {}};
  EXPECT_EQ(qlinear_dequantize_linear(&tq, &ts, &tz, &da, d.y.data(), d.y.size()), QLINEAR_OK) << qlinear_last_error();
  EveryAllocationFails(d, ("DequantizeLinear " + what).c_str(), [&](Buffers* b) {
    return qlinear_dequantize_linear(&tq, &ts, &tz, &da, b->y.data(), b->y.size());
  });
  return q.y;
}

// QuantizeLinear and DequantizeLinear decode many scales (blocked, per axis) on the heap.
TEST(OutOfMemory, QuantizeAndDequantizeWriteNothing) {
  const std::vector<int64_t> shape{64, 1000};
  const std::vector<int64_t> sshape{64, 32};
  const std::vector<float> x = Values(64 * 1000);
  std::vector<float> scales(64 * 32);
  std::vector<int8_t> zps(scales.size());
  for (size_t i = 0; i < scales.size(); ++i) {
    scales[i] = 0.01f + 0.001f * static_cast<float>(i % 97);
    zps[i] = static_cast<int8_t>(static_cast<int>(i % 11) - 5);
  }
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 2, sshape.data(), scales.data()};
  const qlinear_tensor tz{QLINEAR_DTYPE_INT8, 2, sshape.data(), zps.data()};
  Buffers q{QuantizeAndDequantizeWriteNothing(tx, ts, tz, 1, 32, x.size(), "blocked"), {}, {}};
  qlinear_quantize_attrs qa;
  qlinear_quantize_attrs_init(&qa);
  qa.axis = 1;
  qa.block_size = 32;
  qlinear_parallel_options par;
  qlinear_parallel_options_init(&par);
  par.max_threads = 2;
  par.min_elements_per_task = 10000;
  EveryAllocationFails(q, "QuantizeLinear blocked, parallel", [&](Buffers* b) {
    return qlinear_quantize_linear_parallel(&tx, &ts, &tz, &qa, b->y.data(), b->y.size(), &par);
  });
}

// Calls with more scales than one piece decodes (blocks of 8 along the rows of [256, 1000]:
// 32000 scales) run in pieces, whose buffers are all reserved before the first piece writes.
TEST(OutOfMemory, CallsInPiecesWriteNothing) {
  const Uint4Blocks u(256, 1000, 8);
  QuantizeAndDequantizeWriteNothing(u.tx, u.ts, u.tz, 0, 8, u.x.size() / 2, "in pieces");

  // A range from inside the last row of a block row: its first piece uses 1000 scales, the
  // next ones 3000 each (rows of 3000, blocks of 4 along the rows).
  const std::vector<int64_t> wide{64, 3000}, wide_s{16, 3000};
  const std::vector<float> wx = Values(64 * 3000);
  std::vector<float> wscales(16 * 3000);
  for (size_t i = 0; i < wscales.size(); ++i) wscales[i] = 0.01f + 0.001f * static_cast<float>(i % 89);
  const int64_t first = 3 * 3000 + 2000, count = 64 * 3000 - first;
  const qlinear_tensor twx{QLINEAR_DTYPE_FLOAT, 2, wide.data(), wx.data() + first};
  const qlinear_tensor tws{QLINEAR_DTYPE_FLOAT, 2, wide_s.data(), wscales.data()};
  qlinear_quantize_attrs wa;
  qlinear_quantize_attrs_init(&wa);
  wa.axis = 0;
  wa.block_size = 4;
  wa.output_dtype = QLINEAR_DTYPE_INT4;
  Buffers r{std::vector<uint8_t>(static_cast<size_t>(count / 2)), {}, {}};
  ASSERT_EQ(qlinear_quantize_linear_range(&twx, &tws, nullptr, &wa, first, count, r.y.data(), r.y.size()), QLINEAR_OK)
      << qlinear_last_error();
  EveryAllocationFails(r, "QuantizeLinear range in pieces of growing size", [&](Buffers* b) {
    return qlinear_quantize_linear_range(&twx, &tws, nullptr, &wa, first, count, b->y.data(), b->y.size());
  });
}

// Pieces that decode nothing (int8 DequantizeLinear with float32 scales read in place and no
// zero point) reserve nothing, even for block rows of more scales than a thread keeps.
TEST(OutOfMemory, PiecesThatDecodeNothingAllocateNothing) {
  const std::vector<int64_t> shape{4, 70000}, sshape{2, 70000};
  std::vector<int8_t> x(4 * 70000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 7);
  std::vector<float> scales(2 * 70000);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.01f + 0.001f * static_cast<float>(i % 97);
  const qlinear_tensor tx{QLINEAR_DTYPE_INT8, 2, shape.data(), x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 2, sshape.data(), scales.data()};
  qlinear_dequantize_attrs da;
  qlinear_dequantize_attrs_init(&da);
  da.axis = 0;
  da.block_size = 2;
  std::vector<float> d(x.size());
  std::thread([&] {
    ASSERT_EQ(qlinear_dequantize_linear(&tx, &ts, nullptr, &da, d.data(), d.size() * 4), QLINEAR_OK);
    g_fail_countdown.store(1);  // the next allocation fails
    EXPECT_EQ(qlinear_dequantize_linear(&tx, &ts, nullptr, &da, d.data(), d.size() * 4), QLINEAR_OK)
        << qlinear_last_error();
    EXPECT_EQ(g_fail_countdown.exchange(0), 1) << "a call that decodes nothing allocated";
  }).join();
  for (size_t i = 0; i < d.size(); i += 9973) {
    const size_t k = i / (2 * 70000) * 70000 + i % 70000;
    ASSERT_EQ(d[i], static_cast<float>(x[i]) * scales[k]) << "element " << i;
  }
}

// An empty x has nothing to compute: its scales, however many, are neither decoded nor
// allocated for (70000 float16 scales along the outer axis would otherwise be, for the call).
TEST(OutOfMemory, EmptyTensorsAllocateNothing) {
  const int64_t rows = 70000;
  const std::vector<int64_t> shape{rows, 0}, sshape{rows};
  const std::vector<uint16_t> scales(rows, 0x3C00);  // float16 1.0
  const std::vector<uint8_t> zps(rows, 3);
  float x = 0, dy = 0, dx = 0;
  uint8_t y = 0, mask = 0;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), &x};
  const qlinear_tensor ty{QLINEAR_DTYPE_UINT8, 2, shape.data(), &y};
  const qlinear_tensor tdy{QLINEAR_DTYPE_FLOAT, 2, shape.data(), &dy};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT16, 1, sshape.data(), scales.data()};
  const qlinear_tensor tz{QLINEAR_DTYPE_UINT8, 1, sshape.data(), zps.data()};
  qlinear_quantize_attrs qa;
  qlinear_quantize_attrs_init(&qa);
  qa.axis = 0;
  qlinear_dequantize_attrs da;
  qlinear_dequantize_attrs_init(&da);
  da.axis = 0;
  struct Case {
    const char* what;
    std::function<qlinear_status()> call;
  };
  const std::vector<Case> cases{
      {"QuantizeLinear", [&] { return qlinear_quantize_linear(&tx, &ts, &tz, &qa, &y, 0); }},
      {"DequantizeLinear", [&] { return qlinear_dequantize_linear(&ty, &ts, &tz, &da, &dx, 0); }},
      {"QuantizeLinear with its clamp mask",
       [&] { return qlinear_quantize_linear_masked(&tx, &ts, &tz, &qa, &y, 0, &mask, 0); }},
      {"QuantizeLinear's gradient",
       [&] { return qlinear_quantize_linear_backward(&tx, &ts, &tz, &qa, &tdy, 0.0f, nullptr, 0, &dx, 0); }},
  };
  for (const Case& c : cases) {
    std::thread([&] {  // a new thread: no scratch kept from an earlier call
      g_fail_countdown.store(1);  // the next allocation fails
      EXPECT_EQ(c.call(), QLINEAR_OK) << c.what << ": " << qlinear_last_error();
      EXPECT_EQ(g_fail_countdown.exchange(0), 1) << c.what << ": an empty call allocated";
    }).join();
  }
  EXPECT_EQ(y, 0);
  EXPECT_EQ(mask, 0);
  EXPECT_EQ(dx, 0.0f);
}

// A thread keeps its scratch between calls (qlinear.h): a later call of the same or a smaller
// size allocates nothing; glibc would otherwise map and unmap blocks this large on every call.
TEST(OutOfMemory, LaterCallsOnAThreadAllocateNothing) {
  const Uint4Blocks u(256, 1024, 32, 64);
  const std::vector<int64_t>& shape = u.shape;
  const std::vector<float>& x = u.x;
  const qlinear_tensor &tx = u.tx, &ts = u.ts, &tz = u.tz;
  const qlinear_tensor &small_x = u.head_x, &small_s = u.head_s, &small_z = u.head_z;
  qlinear_quantize_attrs qa;
  qlinear_quantize_attrs_init(&qa);
  qa.axis = 0;
  qa.block_size = 32;
  qlinear_dequantize_attrs da;
  qlinear_dequantize_attrs_init(&da);
  da.axis = 0;
  da.block_size = 32;
  std::vector<uint8_t> q(x.size() / 2), q2(q.size());
  std::vector<float> d(x.size()), d2(d.size());
  std::vector<uint8_t> y8(x.size()), mask((x.size() + 7) / 8);
  qlinear_quantize_attrs qa8 = qa;
  qa8.output_dtype = QLINEAR_DTYPE_INT8;
  std::thread([&] {
    ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, &tz, &qa, q.data(), q.size()), QLINEAR_OK) << qlinear_last_error();
    const qlinear_tensor tq{QLINEAR_DTYPE_UINT4, 2, shape.data(), q.data()};
    ASSERT_EQ(qlinear_dequantize_linear(&tq, &ts, &tz, &da, d.data(), d.size() * 4), QLINEAR_OK);
    g_fail_countdown.store(1);  // the next allocation fails
    EXPECT_EQ(qlinear_quantize_linear(&tx, &ts, &tz, &qa, q2.data(), q2.size()), QLINEAR_OK) << qlinear_last_error();
    EXPECT_EQ(qlinear_dequantize_linear(&tq, &ts, &tz, &da, d2.data(), d2.size() * 4), QLINEAR_OK);
    std::fill(q2.begin(), q2.end(), kSentinel);
    EXPECT_EQ(qlinear_quantize_linear(&small_x, &small_s, &small_z, &qa, q2.data(), q2.size()), QLINEAR_OK);
    EXPECT_EQ(g_fail_countdown.exchange(0), 1) << "a later call allocated";
    // The masked call decodes its parameters twice at once: both sets of arrays are kept (its
    // one allocation later on is the small object that holds the mask pass's parameters).
    EXPECT_EQ(qlinear_quantize_linear_masked(&tx, &ts, nullptr, &qa8, y8.data(), y8.size(), mask.data(), mask.size()),
              QLINEAR_OK);
    g_fail_countdown.store(2);
    EXPECT_EQ(qlinear_quantize_linear_masked(&tx, &ts, nullptr, &qa8, y8.data(), y8.size(), mask.data(), mask.size()),
              QLINEAR_OK);
    EXPECT_EQ(g_fail_countdown.exchange(0), 1) << "a later masked call allocated more than its parameter object";
  }).join();
  const qlinear_tensor tq{QLINEAR_DTYPE_UINT4, 2, shape.data(), q.data()};
  std::vector<float> expected(d.size());
  ASSERT_EQ(qlinear_dequantize_linear(&tq, &ts, &tz, &da, expected.data(), expected.size() * 4), QLINEAR_OK);
  EXPECT_EQ(d2, expected);
  // The small call's rows are the first 64 of the large one's; it writes nothing else.
  const size_t small_bytes = 64 * 1024 / 2;
  EXPECT_TRUE(std::equal(q.begin(), q.begin() + small_bytes, q2.begin()));
  EXPECT_TRUE(std::all_of(q2.begin() + small_bytes, q2.end(), [](uint8_t b) { return b == kSentinel; }));
}

// A call that fails to grow its thread's scratch gives the scratch back: the thread's next call
// of the earlier size allocates nothing.
TEST(OutOfMemory, FailedGrowthKeepsTheThreadsScratch) {
  const Uint4Blocks u(256, 1024, 32, 64);
  qlinear_quantize_attrs qa;
  qlinear_quantize_attrs_init(&qa);
  qa.axis = 0;
  qa.block_size = 32;
  std::vector<uint8_t> q(u.x.size() / 2);
  std::thread([&] {
    ASSERT_EQ(qlinear_quantize_linear(&u.head_x, &u.head_s, &u.head_z, &qa, q.data(), q.size()), QLINEAR_OK);
    g_fail_countdown.store(1);  // growing the scratch for 4096 groups fails
    EXPECT_EQ(qlinear_quantize_linear(&u.tx, &u.ts, &u.tz, &qa, q.data(), q.size()), QLINEAR_OUT_OF_MEMORY);
    g_fail_countdown.store(1);
    EXPECT_EQ(qlinear_quantize_linear(&u.head_x, &u.head_s, &u.head_z, &qa, q.data(), q.size()), QLINEAR_OK)
        << qlinear_last_error();
    EXPECT_EQ(g_fail_countdown.exchange(0), 1) << "the thread's scratch was lost with the failed call";
  }).join();
}

// A shard's ranges (qlinear_dynamic_ranges) are an output too: its statistics are allocated
// before the ranges are cleared.
TEST(OutOfMemory, DynamicRangesWriteNothing) {
  const std::vector<int64_t> shape{40, 64};
  const std::vector<float> x = Values(40 * 64);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  const DynamicCase cases[] = {
      {"ranges, ABSMAX int8 per row", QLINEAR_DTYPE_INT8, QLINEAR_SCALE_ABSMAX, QLINEAR_GRANULARITY_AXIS, 0, 0},
      {"ranges, MINMAX uint4 blocks of 32", QLINEAR_DTYPE_UINT4, QLINEAR_SCALE_MINMAX, QLINEAR_GRANULARITY_BLOCK, -1, 32},
      {"ranges, MX float8e4m3fn blocks of 32", QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_SCALE_MX, QLINEAR_GRANULARITY_BLOCK,
       -1, 32},
  };
  for (const DynamicCase& c : cases) {
    const qlinear_dynamic_attrs a = AttrsOf(c);
    const size_t groups = c.granularity == QLINEAR_GRANULARITY_AXIS ? 40 : 40 * 2;
    Buffers expected{std::vector<uint8_t>(2 * groups * sizeof(float)), {}, {}};
    // Elements [64, 2560): the ranges of the groups outside the shard are zero.
    auto call = [&](Buffers* b) {
      return qlinear_dynamic_ranges(&tx, &a, 64, 40 * 64 - 64, reinterpret_cast<float*>(b->y.data()), b->y.size());
    };
    ASSERT_EQ(call(&expected), QLINEAR_OK) << qlinear_last_error();
    EveryAllocationFails(expected, c.what, call);
  }
}

// The clamp mask's pass decodes its parameters before y is written.
TEST(OutOfMemory, MaskedQuantizeWritesNothing) {
  const std::vector<int64_t> shape{2, 64};
  const std::vector<int64_t> sshape{64};
  std::vector<float> x = Values(2 * 64);
  x[5] = 1e6f;  // clamped
  std::vector<float> scales(64, 0.5f);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape.data(), x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 1, sshape.data(), scales.data()};
  qlinear_quantize_attrs qa;
  qlinear_quantize_attrs_init(&qa);
  qa.axis = 1;
  Buffers expected{std::vector<uint8_t>(x.size()), std::vector<uint8_t>((x.size() + 7) / 8), {}};
  auto call = [&](Buffers* b) {
    return qlinear_quantize_linear_masked(&tx, &ts, nullptr, &qa, b->y.data(), b->y.size(), b->scale.data(),
                                          b->scale.size());
  };
  ASSERT_EQ(call(&expected), QLINEAR_OK) << qlinear_last_error();
  EveryAllocationFails(expected, "QuantizeLinear with its clamp mask", call);
}

// The C++ layer reports a failed allocation as a status and leaves its result as it was.
TEST(OutOfMemory, CppQuantizeDynamicReturnsAStatus) {
  const std::vector<float> x = Values(4096);
  const qlinear::TensorView tx(qlinear::DataType::kFloat, {4, 1024}, x.data());
  qlinear::DynamicAttrs a;
  a.output_dtype = qlinear::DataType::kInt4;
  qlinear::DynamicResult r;
  ASSERT_TRUE(qlinear::QuantizeDynamic(tx, a, &r).ok());
  const std::vector<uint8_t> y = r.y, scale = r.scale;
  int64_t failures = 0;
  for (int64_t k = 1; k < 1000; ++k) {
    qlinear::DynamicResult got;
    got.y.assign(3, kSentinel);
    g_fail_countdown.store(k);
    qlinear::Status s;
    try {
      s = qlinear::QuantizeDynamic(tx, a, &got);
    } catch (...) {
      g_fail_countdown.store(0);
      FAIL() << "an exception escaped QuantizeDynamic at allocation " << k;
    }
    const int64_t left = g_fail_countdown.exchange(0);
    if (s.code() == QLINEAR_OUT_OF_MEMORY) {
      ++failures;
      EXPECT_EQ(got.y, std::vector<uint8_t>(3, kSentinel)) << "allocation " << k;
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.message();
    if (left > 0) {
      EXPECT_EQ(got.y, y);
      EXPECT_EQ(got.scale, scale);
      EXPECT_GT(failures, 0);
      return;
    }
  }
  FAIL() << "more than 1000 allocations";
}

// A parallel call over groups strided in memory keeps partial statistics per task; with as many
// tasks as allowed, each as short as allowed, they stay within qlinear.h's bound: 8 bytes for
// max(2^20, 64 x groups) groups, about 150 bytes per task, 36 per group (not x's size: 4M
// elements here, whose 65536 tasks of 64 would otherwise keep 64 groups each).
TEST(OutOfMemory, ParallelStatisticsStayWithinTheirBound) {
  const int64_t rows = 65536, cols = 64;
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1021) * 0.01f - 5.0f;
  const int64_t shape[2] = {rows, cols};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, shape, x.data()};
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_UINT8;
  a.rule = QLINEAR_SCALE_MINMAX;
  a.granularity = QLINEAR_GRANULARITY_AXIS;
  a.axis = 1;
  a.block_size = 0;
  std::vector<uint8_t> y(x.size()), want_y(x.size()), s(cols * 4), want_s(cols * 4), z(cols), want_z(cols);
  ASSERT_EQ(qlinear_quantize_dynamic(&tx, &a, want_y.data(), want_y.size(), want_s.data(), want_s.size(),
                                     want_z.data(), want_z.size()),
            QLINEAR_OK);
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.max_threads = QLINEAR_MAX_THREADS;
  o.min_elements_per_task = 1;
  o.parallel_for = Backwards;
  const uint64_t before = g_bytes_asked.load();
  ASSERT_EQ(qlinear_quantize_dynamic_parallel(&tx, &a, y.data(), y.size(), s.data(), s.size(), z.data(), z.size(), &o),
            QLINEAR_OK);
  const uint64_t asked = g_bytes_asked.load() - before;
  const uint64_t bound = 8 * (uint64_t{1} << 20) + 150 * uint64_t{QLINEAR_MAX_THREADS} + 36 * cols + (64 << 10);
  EXPECT_LE(asked, bound) << "bytes allocated by the call";
  EXPECT_EQ(y, want_y);
  EXPECT_EQ(s, want_s);
  EXPECT_EQ(z, want_z);
}

// x without data: the call's own error, before QuantizeDynamic allocates x's outputs.
TEST(OutOfMemory, CppQuantizeDynamicChecksXBeforeAllocating) {
  const qlinear::TensorView tx(qlinear::DataType::kFloat, {int64_t{1} << 40}, nullptr);
  qlinear::DynamicAttrs a;
  a.output_dtype = qlinear::DataType::kInt8;
  qlinear::DynamicResult r;
  qlinear::Status s;
  EXPECT_NO_THROW(s = qlinear::QuantizeDynamic(tx, a, &r));
  EXPECT_EQ(s.code(), QLINEAR_INVALID_ARGUMENT) << s.message();
  EXPECT_NE(s.message().find("x"), std::string::npos) << s.message();
  EXPECT_TRUE(r.y.empty());
}

}  // namespace
