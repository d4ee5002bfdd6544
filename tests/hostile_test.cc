// Hostile callers: byte sizes that overflow, thread counts that would exhaust the process,
// unaligned caller memory (UndefinedBehaviorSanitizer in the asan preset) and attribute values
// outside their domain. Every rejected call names the argument and leaves the output untouched.
#include <gtest/gtest.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "qlinear/qlinear.h"

namespace qlinear {
namespace {

constexpr uint8_t kSentinel = 0x5A;
constexpr int64_t k2Pow62 = int64_t{1} << 62;

bool Mentions(const std::string& part) { return std::string(qlinear_last_error()).find(part) != std::string::npos; }

bool Untouched(const std::vector<uint8_t>& y) {
  for (uint8_t b : y) {
    if (b != kSentinel) return false;
  }
  return true;
}

qlinear_dequantize_attrs DQAttrs() {
  qlinear_dequantize_attrs a;
  qlinear_dequantize_attrs_init(&a);
  return a;
}
qlinear_quantize_attrs QAttrs() {
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  return a;
}

// ---- 1. byte sizes -------------------------------------------------------------------------

// int8 x of 2^62 elements fits (2^62 bytes); its float32 output would need 2^64 bytes, which
// wrapped to 0 and let the call write past a 64-byte y.
TEST(ByteOverflow, DequantizeOutputWiderThanInput) {
  const int64_t n = k2Pow62;
  std::vector<int8_t> x(64, 1);
  const float s = 1.0f;
  const qlinear_tensor tx{QLINEAR_DTYPE_INT8, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  const qlinear_dequantize_attrs a = DQAttrs();
  int32_t dtype = -7;
  size_t bytes = 12345;
  ASSERT_EQ(qlinear_dequantize_output_info(&tx, &ts, nullptr, &a, &dtype, &bytes), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y:")) << qlinear_last_error();
  EXPECT_EQ(bytes, 12345u);
  std::vector<uint8_t> y(64, kSentinel);
  EXPECT_EQ(qlinear_dequantize_linear(&tx, &ts, nullptr, &a, y.data(), y.size()), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y:")) << qlinear_last_error();
  EXPECT_TRUE(Untouched(y));
  // The same tensor through the range entry point (the whole tensor's output does not fit, so
  // no slice of it is accepted either) and the parallel one.
  EXPECT_EQ(qlinear_dequantize_linear_range(&tx, &ts, nullptr, &a, 0, 16, y.data(), y.size()),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y:")) << qlinear_last_error();
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  EXPECT_EQ(qlinear_dequantize_linear_parallel(&tx, &ts, nullptr, &a, y.data(), y.size(), &o),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Untouched(y));
  // Packed inputs: int4 x of 2^63 - 1 elements is 2^62 bytes, its float16 output 2^64 - 2 bytes
  // (fits size_t, not ptrdiff_t).
  const int64_t n4 = INT64_MAX;
  const qlinear_tensor t4{QLINEAR_DTYPE_INT4, 1, &n4, x.data()};
  qlinear_dequantize_attrs a16 = DQAttrs();
  a16.output_dtype = QLINEAR_DTYPE_FLOAT16;
  EXPECT_EQ(qlinear_dequantize_output_info(&t4, &ts, nullptr, &a16, &dtype, &bytes), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y:")) << qlinear_last_error();
}

// Inputs: a float32 x of 2^61 elements is 2^63 bytes, beyond the largest object (PTRDIFF_MAX).
TEST(ByteOverflow, InputBeyondTheLargestObject) {
  const int64_t n = int64_t{1} << 61;
  std::vector<float> x(16, 1.0f);
  const float s = 1.0f;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  const qlinear_quantize_attrs a = QAttrs();
  size_t bytes = 12345;
  EXPECT_EQ(qlinear_quantize_output_info(&tx, &ts, nullptr, &a, nullptr, &bytes), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("x:")) << qlinear_last_error();
  EXPECT_TRUE(Mentions("largest object")) << qlinear_last_error();
  EXPECT_EQ(bytes, 12345u);
  // 2^62 elements: the count fits int64, the 2^64 bytes do not (the message says which).
  const qlinear_tensor t62{QLINEAR_DTYPE_FLOAT, 1, &k2Pow62, x.data()};
  EXPECT_EQ(qlinear_quantize_output_info(&t62, &ts, nullptr, &a, nullptr, &bytes), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("x:") && Mentions("largest object")) << qlinear_last_error();
  // 2^32 * 2^31 = 2^63 elements: the count itself overflows.
  const int64_t dims[2] = {int64_t{1} << 32, int64_t{1} << 31};
  const qlinear_tensor t63{QLINEAR_DTYPE_UINT8, 2, dims, x.data()};
  EXPECT_EQ(qlinear_quantize_output_info(&t63, &ts, nullptr, &a, nullptr, &bytes), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("x:") && Mentions("element count")) << qlinear_last_error();
}

// The backward pass: dy and dx take dy's type, which may be wider than x's.
TEST(ByteOverflow, BackwardGradientWiderThanInput) {
  std::vector<uint16_t> x(64, 0);
  std::vector<float> dy(64, 1.0f);
  const uint16_t s16 = 0x3C00;  // float16 1.0
  const qlinear_tensor ts16{QLINEAR_DTYPE_FLOAT16, 0, nullptr, &s16};
  const qlinear_quantize_attrs a = QAttrs();
  for (int64_t n : {int64_t{1} << 61, k2Pow62}) {
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT16, 1, &n, x.data()};
    const qlinear_tensor tdy{QLINEAR_DTYPE_FLOAT, 1, &n, dy.data()};
    std::vector<uint8_t> dx(256, kSentinel);
    ASSERT_EQ(qlinear_quantize_linear_backward(&tx, &ts16, nullptr, &a, &tdy, 1.0f, nullptr, 0, dx.data(), dx.size()),
              QLINEAR_INVALID_ARGUMENT)
        << "n " << n;
    EXPECT_TRUE(Mentions("dy") || Mentions("x:")) << qlinear_last_error();
    EXPECT_TRUE(Untouched(dx));
  }
}

// qlinear_dynamic_ranges / _scales: 2 floats per group. float16 x of 2^60 + 1 elements per
// element (per axis of a 1-D tensor) takes 2^61 + 2 bytes, but its ranges would take 2^63 + 8:
// rejected naming ranges, whatever capacity is claimed (SIZE_MAX once made the call zero-fill
// 2^64 bytes).
TEST(ByteOverflow, DynamicRangesBeyondTheLargestObject) {
  const int64_t n = (int64_t{1} << 60) + 1;
  std::vector<uint16_t> x(64, 0x3C00);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT16, 1, &n, x.data()};
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT8;
  a.granularity = QLINEAR_GRANULARITY_AXIS;
  a.block_size = 0;
  a.scale_dtype = QLINEAR_DTYPE_FLOAT16;
  std::vector<float> ranges(8, 7.0f);
  for (size_t claimed : {sizeof(float) * 8, SIZE_MAX}) {
    EXPECT_EQ(qlinear_dynamic_ranges(&tx, &a, 0, 2, ranges.data(), claimed), QLINEAR_INVALID_ARGUMENT);
    EXPECT_TRUE(Mentions("ranges:") && Mentions("PTRDIFF_MAX")) << qlinear_last_error();
    // qlinear_dynamic_scales reads the ranges: checked once y_scale passes (its capacity claimed
    // too, as a hostile caller would).
    std::vector<uint16_t> scales(4, 0xFFFF);
    EXPECT_EQ(qlinear_dynamic_scales(&tx, &a, ranges.data(), claimed, scales.data(), SIZE_MAX, nullptr, 0),
              QLINEAR_INVALID_ARGUMENT);
    EXPECT_TRUE(Mentions("ranges:") && Mentions("PTRDIFF_MAX")) << qlinear_last_error();
    EXPECT_EQ(scales, std::vector<uint16_t>(4, 0xFFFF));
  }
  EXPECT_EQ(ranges, std::vector<float>(8, 7.0f));
}

// ---- 2. threads ----------------------------------------------------------------------------

int ThreadsOfThisProcess() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// A float32 -> uint8 parallel call of 4096 elements.
struct ParallelCall {
  std::vector<float> x = std::vector<float>(4096, 1.0f);
  float s = 1.0f;
  int64_t n = 4096;
  std::vector<uint8_t> y = std::vector<uint8_t>(4096, kSentinel);
  qlinear_status Run(const qlinear_parallel_options& o) {
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
    const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
    return qlinear_quantize_linear_parallel(&tx, &ts, nullptr, nullptr, y.data(), y.size(), &o);
  }
};

TEST(Threads, MaxThreadsAboveTheLimitIsRejected) {
  ParallelCall c;
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  for (int32_t bad : {65537, INT32_MAX, -1, INT32_MIN}) {
    o.max_threads = bad;
    EXPECT_EQ(c.Run(o), QLINEAR_INVALID_ARGUMENT) << bad;
    EXPECT_TRUE(Mentions("max_threads")) << qlinear_last_error();
    EXPECT_TRUE(Mentions("65536")) << qlinear_last_error();
    EXPECT_TRUE(Untouched(c.y));
  }
  o.max_threads = QLINEAR_MAX_THREADS;
  EXPECT_EQ(c.Run(o), QLINEAR_OK) << qlinear_last_error();
}

// 4096 elements in tasks of at least 1024: four tasks, so OpenMP may start at most three more
// threads, not max_threads = 512 (its team stays alive in the process after the call).
TEST(Threads, OpenMPTeamNeverExceedsTheTaskCount) {
  if (!qlinear_openmp_enabled()) GTEST_SKIP() << "built without OpenMP";
  const int before = ThreadsOfThisProcess();
  if (before < 0) GTEST_SKIP() << "no /proc/self/task";
  ParallelCall c;
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.max_threads = 512;
  o.min_elements_per_task = 1024;
  ASSERT_EQ(c.Run(o), QLINEAR_OK) << qlinear_last_error();
  EXPECT_LE(ThreadsOfThisProcess(), before + 3);
}

// max_threads = 65536 in tasks of 64 elements: 64 tasks, but a team no larger than OpenMP's own
// thread count (one per CPU here: OMP_NUM_THREADS unset), not a thread per task.
TEST(Threads, OpenMPTeamNeverExceedsOpenMPThreadCount) {
  if (!qlinear_openmp_enabled()) GTEST_SKIP() << "built without OpenMP";
  if (std::getenv("OMP_NUM_THREADS") != nullptr) GTEST_SKIP() << "OMP_NUM_THREADS is set";
  const int before = ThreadsOfThisProcess();
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (before < 0 || cpus <= 0) GTEST_SKIP() << "no /proc/self/task or CPU count";
  ParallelCall c;
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.max_threads = QLINEAR_MAX_THREADS;
  o.min_elements_per_task = 64;
  ASSERT_EQ(c.Run(o), QLINEAR_OK) << qlinear_last_error();
  EXPECT_LE(ThreadsOfThisProcess(), before + cpus - 1);
  for (uint8_t v : c.y) ASSERT_EQ(v, 1);
}

// A child forked after OpenMP's team has run (Python's multiprocessing, a server's worker
// processes): libgomp's threads are gone there, and its next parallel region waited forever.
// The child's parallel calls run on its calling thread, with the same bytes.
TEST(Threads, ParallelCallsInAForkedChildFinish) {
  if (!qlinear_openmp_enabled()) GTEST_SKIP() << "built without OpenMP";
  const char* omp = std::getenv("OMP_NUM_THREADS");
  if (std::thread::hardware_concurrency() < 2 || (omp != nullptr && std::atoi(omp) == 1)) {
    GTEST_SKIP() << "one OpenMP thread: no team would start in the parent";
  }
  ParallelCall c;
  for (size_t i = 0; i < c.x.size(); ++i) c.x[i] = static_cast<float>(i % 200);
  qlinear_parallel_options o;
  qlinear_parallel_options_init(&o);
  o.max_threads = 2;
  o.min_elements_per_task = 1024;
  ASSERT_EQ(c.Run(o), QLINEAR_OK) << qlinear_last_error();  // the parent's team runs
  const std::vector<uint8_t> parent = c.y;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);  // a hang ends the child by SIGALRM
    ParallelCall d;
    d.x = c.x;
    const bool ok = d.Run(o) == QLINEAR_OK && d.y == parent;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---- 3. undefined behaviour (the asan preset runs these under UBSan) -------------------------

// An empty x whose other dimensions multiply beyond int64: the layout's products overflowed.
TEST(UndefinedBehaviour, EmptyTensorWithHugeDimensions) {
  const int64_t xs[3] = {k2Pow62, 4, 0}, ss[1] = {0};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 3, xs, nullptr};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 1, ss, nullptr};
  qlinear_quantize_attrs a = QAttrs();
  a.axis = 2;
  EXPECT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, &a, nullptr, 0), QLINEAR_OK) << qlinear_last_error();
  const qlinear_tensor tq{QLINEAR_DTYPE_INT8, 3, xs, nullptr};
  qlinear_dequantize_attrs da = DQAttrs();
  da.axis = 2;
  EXPECT_EQ(qlinear_dequantize_linear(&tq, &ts, nullptr, &da, nullptr, 0), QLINEAR_OK) << qlinear_last_error();
}

// 16- and 32-bit zero points (and x) at odd addresses: no pointer needs alignment.
TEST(UndefinedBehaviour, ZeroPointsAtOddAddresses) {
  alignas(8) uint8_t zp_mem[64] = {};
  uint8_t* odd = zp_mem + 1;
  const int64_t n = 5, three = 3;
  alignas(4) float xs[5] = {-2.0f, -1.0f, 0.0f, 1.0f, 300.0f};
  const float s = 1.0f;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, xs};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  for (int32_t t : {QLINEAR_DTYPE_INT16, QLINEAR_DTYPE_UINT16}) {
    const int16_t z = 7;
    std::memcpy(odd, &z, 2);
    const qlinear_tensor tz{t, 0, nullptr, odd};
    std::vector<uint8_t> y(10, 0);
    ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, &tz, nullptr, y.data(), y.size()), QLINEAR_OK) << qlinear_last_error();
    int16_t first;
    std::memcpy(&first, y.data(), 2);
    EXPECT_EQ(first, 5);  // -2 + 7
    // Per-axis zero points (three of them, odd address) for DequantizeLinear of x at an odd address.
    const int64_t shape[2] = {2, 3};
    alignas(8) uint8_t xq[16] = {};
    const qlinear_tensor tq{t, 2, shape, xq + 1};
    const float scales[3] = {1.0f, 2.0f, 4.0f};
    const qlinear_tensor tsc{QLINEAR_DTYPE_FLOAT, 1, &three, scales};
    const qlinear_tensor tz3{t, 1, &three, odd};
    qlinear_dequantize_attrs da = DQAttrs();
    std::vector<float> out(6);
    ASSERT_EQ(qlinear_dequantize_linear(&tq, &tsc, &tz3, &da, out.data(), 24), QLINEAR_OK) << qlinear_last_error();
    EXPECT_EQ(out[0], -7.0f);
  }
  const int32_t zero = 0;
  std::memcpy(odd, &zero, 4);
  const qlinear_tensor tz32{QLINEAR_DTYPE_INT32, 0, nullptr, odd};
  const qlinear_tensor tq32{QLINEAR_DTYPE_INT32, 1, &n, zp_mem + 9};
  std::vector<float> out(5);
  ASSERT_EQ(qlinear_dequantize_linear(&tq32, &ts, &tz32, nullptr, out.data(), 20), QLINEAR_OK) << qlinear_last_error();
}

// DynamicQuantizeLinear's range pass read its tail through a float pointer.
TEST(UndefinedBehaviour, DynamicQuantizeOfAnOddAddress) {
  alignas(8) uint8_t mem[4 * 67 + 8] = {};
  std::vector<uint8_t> y(67);
  for (int64_t len : {1, 3, 67}) {
    for (int64_t i = 0; i < len; ++i) {
      const float v = static_cast<float>(i) - 10.0f;
      std::memcpy(mem + 1 + 4 * i, &v, 4);
    }
    const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &len, mem + 1};
    float scale = 0;
    uint8_t zp = 0;
    ASSERT_EQ(qlinear_dynamic_quantize_linear(&tx, y.data(), static_cast<size_t>(len), &scale, &zp), QLINEAR_OK);
    const float hi = std::max(0.0f, static_cast<float>(len - 1) - 10.0f);
    EXPECT_EQ(scale, (hi + 10.0f) / 255.0f) << len;
  }
}

// Dynamic quantization of an empty x whose outer dimensions reach 2^62: the unit count
// (outer times units per outer) overflowed before the empty case returned.
TEST(UndefinedBehaviour, DynamicQuantizeOfAnEmptyTensorWithHugeDimensions) {
  const int64_t xs[3] = {k2Pow62, 5, 0};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 3, xs, nullptr};
  qlinear_dynamic_attrs d;
  qlinear_dynamic_attrs_init(&d);
  d.output_dtype = QLINEAR_DTYPE_INT8;
  d.axis = 1;
  d.block_size = 1;
  EXPECT_EQ(qlinear_quantize_dynamic(&tx, &d, nullptr, 0, nullptr, 0, nullptr, 0), QLINEAR_OK) << qlinear_last_error();
  EXPECT_EQ(qlinear_dynamic_scales(&tx, &d, nullptr, 0, nullptr, 0, nullptr, 0), QLINEAR_OK) << qlinear_last_error();
}

// A block longer than the axis (block_size up to INT64_MAX) is one block per row: the block
// loop's size test multiplied it by the vector length. Same bytes as a block of the axis length.
TEST(UndefinedBehaviour, DynamicBlocksOfHugeSize) {
  const int64_t rows = 2, cols = 32768;
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int64_t>(i % 997) - 498) * 0.03125f;
  const int64_t xs[2] = {rows, cols};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, xs, x.data()};
  qlinear_dynamic_attrs d;
  qlinear_dynamic_attrs_init(&d);
  d.output_dtype = QLINEAR_DTYPE_INT8;
  std::vector<uint8_t> want(x.size()), got(x.size());
  float want_s[2] = {0, 0}, got_s[2] = {0, 0};
  d.block_size = cols;
  ASSERT_EQ(qlinear_quantize_dynamic(&tx, &d, want.data(), want.size(), want_s, 8, nullptr, 0), QLINEAR_OK)
      << qlinear_last_error();
  EXPECT_EQ(want_s[0], 498.0f * 0.03125f / 127.0f);
  for (int64_t block : {int64_t{INT64_MAX}, INT64_MAX / 8 + 1, INT64_MAX / 16 + 1, int64_t{1} << 40}) {
    d.block_size = block;
    ASSERT_EQ(qlinear_quantize_dynamic(&tx, &d, got.data(), got.size(), got_s, 8, nullptr, 0), QLINEAR_OK)
        << qlinear_last_error();
    EXPECT_EQ(got, want) << block;
    EXPECT_EQ(std::memcmp(got_s, want_s, 8), 0) << block;
  }
}

// ---- 4. attribute domains ------------------------------------------------------------------

struct QCall {
  std::vector<float> x{-1.5f, 0.25f, 3.0f};
  float s = 0.5f;
  int64_t n = 3;
  qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  qlinear_status Run(const qlinear_quantize_attrs& a, std::vector<uint8_t>* y) const {
    return qlinear_quantize_linear(&tx, &ts, nullptr, &a, y->data(), y->size());
  }
};

TEST(AttributeDomains, SaturateIsZeroOrOne) {
  const QCall c;
  for (int32_t out : {QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_INT8}) {
    for (int opset : {0, 13, 19, 25}) {
      for (int32_t sat : {2, -1, INT32_MIN, INT32_MAX}) {
        qlinear_quantize_attrs a = QAttrs();
        a.opset = opset;
        if (opset >= 21) a.output_dtype = out;
        a.saturate = sat;
        std::vector<uint8_t> y(16, kSentinel);
        EXPECT_EQ(c.Run(a, &y), QLINEAR_INVALID_ARGUMENT) << sat << " opset " << opset;
        EXPECT_TRUE(Mentions("saturate: must be 0 or 1")) << qlinear_last_error();
        EXPECT_TRUE(Untouched(y));
      }
    }
  }
}

TEST(AttributeDomains, OpsetsNewerThanTheOperatorRunAsVersion25) {
  const QCall c;
  std::vector<uint8_t> want(16, 0), got(16, 0);
  qlinear_quantize_attrs a = QAttrs();
  a.opset = 25;
  a.output_dtype = QLINEAR_DTYPE_INT2;  // new in QuantizeLinear-25
  ASSERT_EQ(c.Run(a, &want), QLINEAR_OK) << qlinear_last_error();
  for (int opset : {26, 27, 28, QLINEAR_NEWEST_KNOWN_OPSET}) {
    a.opset = opset;
    ASSERT_EQ(c.Run(a, &got), QLINEAR_OK) << opset << ": " << qlinear_last_error();
    EXPECT_EQ(got, want);
    const int8_t codes[3] = {-3, 0, 6};
    const qlinear_tensor tq{QLINEAR_DTYPE_INT8, 1, &c.n, codes};
    qlinear_dequantize_attrs da = DQAttrs();
    da.opset = opset;
    float out[3];
    ASSERT_EQ(qlinear_dequantize_linear(&tq, &c.ts, nullptr, &da, out, sizeof(out)), QLINEAR_OK) << qlinear_last_error();
  }
  EXPECT_EQ(QLINEAR_NEWEST_OPSET, 25);
  EXPECT_EQ(QLINEAR_OLDEST_OPSET, 10);
  EXPECT_EQ(QLINEAR_NEWEST_KNOWN_OPSET, 28);
}

TEST(AttributeDomains, OpsetsOutsideTheKnownRange) {
  const QCall c;
  for (int32_t opset : {-1, 1, 9, 29, 1000, INT32_MIN, INT32_MAX}) {
    qlinear_quantize_attrs a = QAttrs();
    a.opset = opset;
    std::vector<uint8_t> y(16, kSentinel);
    EXPECT_EQ(c.Run(a, &y), QLINEAR_INVALID_ARGUMENT) << opset;
    EXPECT_TRUE(Mentions("opset:") && Mentions("[10, 28]")) << qlinear_last_error();
    EXPECT_TRUE(Untouched(y));
    const int8_t codes[3] = {-3, 0, 6};
    const qlinear_tensor tq{QLINEAR_DTYPE_INT8, 1, &c.n, codes};
    qlinear_dequantize_attrs da = DQAttrs();
    da.opset = opset;
    EXPECT_EQ(qlinear_dequantize_linear(&tq, &c.ts, nullptr, &da, y.data(), y.size()), QLINEAR_INVALID_ARGUMENT);
    EXPECT_TRUE(Mentions("opset:") && Mentions("[10, 28]")) << qlinear_last_error();
    EXPECT_TRUE(Untouched(y));
  }
}

// Every other field across its whole range: accepted values are exactly the documented ones.
TEST(AttributeDomains, OtherFieldsAcrossTheirRange) {
  const QCall c;
  const int32_t wide[] = {INT32_MIN, -65536, -17, -1, 2, 3, 5, 6, 9, 11, 17, 24, 27, 99, 65536, INT32_MAX};
  for (int32_t v : wide) {
    qlinear_quantize_attrs a = QAttrs();
    a.precision = v;
    std::vector<uint8_t> y(16, kSentinel);
    EXPECT_NE(c.Run(a, &y), QLINEAR_OK) << "precision " << v;
    EXPECT_TRUE(Mentions("precision:")) << qlinear_last_error();
    EXPECT_TRUE(Untouched(y));
    a = QAttrs();
    a.output_dtype = v;
    const bool output_type = v == QLINEAR_DTYPE_UINT8 || v == QLINEAR_DTYPE_INT8 || v == QLINEAR_DTYPE_INT16 ||
                             v == QLINEAR_DTYPE_FLOAT8E4M3FN;
    if (!output_type) {
      EXPECT_NE(c.Run(a, &y), QLINEAR_OK) << "output_dtype " << v;
      EXPECT_TRUE(Mentions("output_dtype:")) << qlinear_last_error();
      EXPECT_TRUE(Untouched(y));
    }
    const int8_t codes[3] = {-3, 0, 6};
    const qlinear_tensor tq{QLINEAR_DTYPE_INT8, 1, &c.n, codes};
    qlinear_dequantize_attrs da = DQAttrs();
    da.output_dtype = v;
    EXPECT_NE(qlinear_dequantize_linear(&tq, &c.ts, nullptr, &da, y.data(), y.size()), QLINEAR_OK);
    EXPECT_TRUE(Mentions("output_dtype:")) << qlinear_last_error();
    da = DQAttrs();
    da.reserved = v;
    EXPECT_EQ(qlinear_dequantize_linear(&tq, &c.ts, nullptr, &da, y.data(), y.size()), QLINEAR_INVALID_ARGUMENT);
    EXPECT_TRUE(Mentions("reserved")) << qlinear_last_error();
    EXPECT_TRUE(Untouched(y));
  }
  for (int64_t b : {INT64_MIN, int64_t{-1}}) {
    qlinear_quantize_attrs a = QAttrs();
    a.block_size = b;
    std::vector<uint8_t> y(16, kSentinel);
    EXPECT_EQ(c.Run(a, &y), QLINEAR_INVALID_ARGUMENT);
    EXPECT_TRUE(Mentions("block_size:")) << qlinear_last_error();
  }
  // axis is used (and checked) for per-axis and blocked scales only.
  const float scales[3] = {1.0f, 1.0f, 1.0f};
  const int64_t three = 3;
  const qlinear_tensor tsc{QLINEAR_DTYPE_FLOAT, 1, &three, scales};
  for (int64_t axis : {INT64_MIN, int64_t{-2}, int64_t{1}, INT64_MAX}) {
    qlinear_quantize_attrs a = QAttrs();
    a.axis = axis;
    std::vector<uint8_t> y(16, kSentinel);
    EXPECT_EQ(qlinear_quantize_linear(&c.tx, &tsc, nullptr, &a, y.data(), y.size()), QLINEAR_INVALID_ARGUMENT);
    EXPECT_TRUE(Mentions("axis:")) << qlinear_last_error();
    EXPECT_TRUE(Untouched(y));
  }
}

// ---- 5. overlapping buffers ----------------------------------------------------------------
//
// An output that shares a byte with another output or with an input is rejected (qlinear.h),
// naming both, before anything is written; adjacent buffers are fine.

// One allocation that every buffer of a test lies in, filled with kSentinel.
struct Arena {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(4096, kSentinel);
  uint8_t* at(size_t offset) { return bytes.data() + offset; }
  bool Untouched(size_t first, size_t count) const {
    return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(first),
                       bytes.begin() + static_cast<std::ptrdiff_t>(first + count), [](uint8_t b) { return b == kSentinel; });
  }
};

TEST(Overlap, QuantizeOutputOverInputs) {
  std::vector<float> x(64, 1.5f);
  const float s = 0.5f;
  const int64_t n = 64;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  // y inside x: x would be read after being overwritten.
  const std::vector<float> before = x;
  uint8_t* inside = reinterpret_cast<uint8_t*>(x.data()) + 100;
  EXPECT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, nullptr, inside, 64), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y: overlaps input x")) << qlinear_last_error();
  EXPECT_EQ(x, before);
  // y over the scale.
  EXPECT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, nullptr, const_cast<float*>(&s), 64), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y: overlaps input y_scale")) << qlinear_last_error();
  // The range form: y over the slice it reads.
  EXPECT_EQ(qlinear_quantize_linear_range(&tx, &ts, nullptr, nullptr, 16, 32, inside, 32), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y: overlaps input x")) << qlinear_last_error();
  EXPECT_EQ(x, before);
  // Adjacent: y right after x in one allocation is accepted.
  Arena a;
  std::memcpy(a.at(0), x.data(), 256);
  const qlinear_tensor ta{QLINEAR_DTYPE_FLOAT, 1, &n, a.at(0)};
  ASSERT_EQ(qlinear_quantize_linear(&ta, &ts, nullptr, nullptr, a.at(256), 64), QLINEAR_OK) << qlinear_last_error();
  EXPECT_EQ(*a.at(256), 3);  // 1.5 / 0.5
}

TEST(Overlap, DequantizeOutputOverZeroPoints) {
  Arena a;
  const int64_t n = 32, c = 4;
  const qlinear_tensor tx{QLINEAR_DTYPE_UINT8, 1, &n, a.at(0)};
  std::vector<float> s(4, 1.0f);
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 1, &c, s.data()};
  const qlinear_tensor tz{QLINEAR_DTYPE_UINT8, 1, &c, a.at(200)};
  qlinear_dequantize_attrs at = DQAttrs();
  at.axis = 0;
  at.block_size = 8;
  EXPECT_EQ(qlinear_dequantize_linear(&tx, &ts, &tz, &at, a.at(100), 128), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y: overlaps input x_zero_point")) << qlinear_last_error();
  EXPECT_TRUE(a.Untouched(0, a.bytes.size()));
  EXPECT_EQ(qlinear_dequantize_linear(&tx, &ts, &tz, &at, a.at(1000), 128), QLINEAR_OK) << qlinear_last_error();
}

TEST(Overlap, DynamicOutputsOverEachOther) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) - 20.5f;
  const int64_t n = 64;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  qlinear_dynamic_attrs d;
  qlinear_dynamic_attrs_init(&d);
  d.output_dtype = QLINEAR_DTYPE_INT8;
  Arena a;
  // y_scale (two floats) inside y.
  EXPECT_EQ(qlinear_quantize_dynamic(&tx, &d, a.at(0), 64, a.at(8), 8, nullptr, 0), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y_scale: overlaps y")) << qlinear_last_error();
  EXPECT_TRUE(a.Untouched(0, a.bytes.size()));
  // MINMAX: the zero points over the scales' last byte.
  d.output_dtype = QLINEAR_DTYPE_UINT8;
  d.rule = QLINEAR_SCALE_MINMAX;
  EXPECT_EQ(qlinear_quantize_dynamic(&tx, &d, a.at(0), 64, a.at(64), 8, a.at(71), 2), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y_zero_point: overlaps y_scale")) << qlinear_last_error();
  EXPECT_TRUE(a.Untouched(0, a.bytes.size()));
  EXPECT_EQ(qlinear_dynamic_scales(&tx, &d, nullptr, 0, a.at(64), 8, a.at(71), 2), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y_zero_point: overlaps y_scale")) << qlinear_last_error();
  // Packed end to end: accepted.
  EXPECT_EQ(qlinear_quantize_dynamic(&tx, &d, a.at(0), 64, a.at(64), 8, a.at(72), 2), QLINEAR_OK) << qlinear_last_error();
  // Ranges written over x, and scales over the ranges they are made from.
  std::vector<float> ranges(4, 0.0f);
  EXPECT_EQ(qlinear_dynamic_ranges(&tx, &d, 0, 64, x.data() + 60, 16), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("ranges: overlaps input x")) << qlinear_last_error();
  ASSERT_EQ(qlinear_dynamic_ranges(&tx, &d, 0, 64, ranges.data(), 16), QLINEAR_OK) << qlinear_last_error();
  EXPECT_EQ(qlinear_dynamic_scales(&tx, &d, ranges.data(), 16, ranges.data(), 8, a.at(2000), 2), QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y_scale: overlaps input ranges")) << qlinear_last_error();
  // DynamicQuantizeLinear: its zero point inside y.
  EXPECT_EQ(qlinear_dynamic_quantize_linear(&tx, a.at(0), 64, reinterpret_cast<float*>(a.at(64)), a.at(10)),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("y_zero_point: overlaps y")) << qlinear_last_error();
}

TEST(Overlap, MaskedAndBackward) {
  Arena a;
  std::vector<float> x(64, 1.0f), dy(64, 1.0f);
  const float s = 1.0f;
  const int64_t n = 64;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  EXPECT_EQ(qlinear_quantize_linear_masked(&tx, &ts, nullptr, nullptr, a.at(0), 64, a.at(60), 8),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("clamp_mask: overlaps y")) << qlinear_last_error();
  EXPECT_TRUE(a.Untouched(0, a.bytes.size()));
  const qlinear_tensor tdy{QLINEAR_DTYPE_FLOAT, 1, &n, dy.data()};
  EXPECT_EQ(qlinear_quantize_linear_backward(&tx, &ts, nullptr, nullptr, &tdy, 0.0f, nullptr, 0, dy.data(), 256),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("dx: overlaps input dy")) << qlinear_last_error();
  EXPECT_EQ(qlinear_quantize_linear_backward(&tx, &ts, nullptr, nullptr, &tdy, 0.0f, a.at(0), 8, a.at(4), 256),
            QLINEAR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions("dx: overlaps input clamp_mask")) << qlinear_last_error();
  EXPECT_EQ(qlinear_quantize_linear_backward(&tx, &ts, nullptr, nullptr, &tdy, 0.0f, a.at(0), 8, a.at(8), 256),
            QLINEAR_OK) << qlinear_last_error();
}

}  // namespace
}  // namespace qlinear
