// 8 threads call the C API at once on shared inputs (different output types and granularities)
// and must get the serial results. The first calls race on the settings read once
// (QLINEAR_TARGET, QLINEAR_QUANTIZE_PATH): this is its own process, and the threads start before
// any other call. Run under ThreadSanitizer by the `tsan` preset.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "qlinear/qlinear.h"

namespace {

struct Job {
  int32_t out_type;
  int64_t axis, block;
  std::vector<int64_t> scale_shape;
};

constexpr int64_t kRows = 64, kCols = 1000;

std::vector<uint8_t> Run(const std::vector<float>& x, const std::vector<float>& scales, const Job& j) {
  const int64_t xs[2] = {kRows, kCols};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 2, xs, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, static_cast<int32_t>(j.scale_shape.size()), j.scale_shape.data(), scales.data()};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.axis = j.axis;
  a.block_size = j.block;
  a.output_dtype = j.out_type;
  size_t bytes = 0;
  if (qlinear_quantize_output_info(&tx, &ts, nullptr, &a, nullptr, &bytes) != QLINEAR_OK) return {};
  std::vector<uint8_t> y(bytes);
  if (qlinear_quantize_linear(&tx, &ts, nullptr, &a, y.data(), bytes) != QLINEAR_OK) return {};
  return y;
}

}  // namespace

int main() {
  std::vector<float> x(kRows * kCols), scales(kRows * kCols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 2001) * 0.01f - 10.0f;
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.01f + 0.001f * static_cast<float>(i % 17);
  const std::vector<Job> jobs = {
      {QLINEAR_DTYPE_INT8, 1, 0, {}},          {QLINEAR_DTYPE_UINT4, 0, 0, {kRows}},
      {QLINEAR_DTYPE_INT16, 1, 0, {kCols}},    {QLINEAR_DTYPE_FLOAT8E4M3FN, 1, 32, {kRows, 32}},
      {QLINEAR_DTYPE_INT2, 0, 8, {8, kCols}},  {QLINEAR_DTYPE_FLOAT4E2M1, 1, 0, {}},
      {QLINEAR_DTYPE_UINT8, 1, 3, {kRows, 334}}, {QLINEAR_DTYPE_FLOAT8E5M2, 0, 0, {kRows}}};
  std::vector<std::vector<uint8_t>> got(jobs.size() * 4);
  std::atomic<int> go{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < jobs.size(); ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();  // all threads start together
      for (int rep = 0; rep < 4; ++rep) got[t * 4 + rep] = Run(x, scales, jobs[(t + rep) % jobs.size()]);
    });
  }
  go.store(1);
  for (auto& th : threads) th.join();
  int failures = 0;
  for (size_t t = 0; t < jobs.size(); ++t) {
    for (int rep = 0; rep < 4; ++rep) {
      const std::vector<uint8_t> serial = Run(x, scales, jobs[(t + rep) % jobs.size()]);
      if (serial.empty() || got[t * 4 + rep] != serial) {
        std::printf("thread %zu call %d differs from the serial result\n", t, rep);
        ++failures;
      }
    }
  }
  std::printf("%zu passed, %d failed\n", jobs.size() * 4 - failures, failures);
  return failures == 0 ? 0 : 1;
}
