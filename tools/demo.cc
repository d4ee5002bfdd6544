// `qlinear demo`: a short demonstration of the library's speed on this machine (the
// benchmark binary is the measuring tool; this is what a new user runs first).
#include <algorithm>
#include <chrono>
#include <new>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "qlinear/qlinear.hpp"
#include "tools/commands.h"

namespace qlinear {
namespace tools {

int RunDemo(int64_t n) {
  const std::string broken = CallsFailBecause();
  if (!broken.empty()) {
    std::fprintf(stderr, "qlinear demo: calls fail: %s\n", broken.c_str());
    return 1;
  }
  std::printf("qlinear %s, target %s: QuantizeLinear of %lld float32 values (per tensor)\n",
              Version(), ActiveTarget(), static_cast<long long>(n));
  std::vector<float> x;
  std::vector<uint8_t> y;
  try {
    x.resize(static_cast<size_t>(n));
    y.resize(static_cast<size_t>(n) * 2);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "qlinear demo: not enough memory for %lld elements (%lld bytes)\n",
                 static_cast<long long>(n), static_cast<long long>(n) * 6);
    return 1;
  }
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (float& v : x) v = dist(rng);
  const std::vector<int64_t> shape{n};
  const TensorView tx(DataType::kFloat, shape, x.data());
  const float scale = 0.05f;
  const TensorView ts(DataType::kFloat, nullptr, 0, &scale);
  const struct {
    DataType type;
  } outputs[] = {{DataType::kUint8},       {DataType::kInt8},       {DataType::kInt16},
                 {DataType::kInt4},        {DataType::kUint2},      {DataType::kFloat8E4M3FN},
                 {DataType::kFloat8E5M2},  {DataType::kFloat4E2M1}};
  for (const auto& o : outputs) {
    QuantizeAttrs attrs;
    attrs.output_dtype = o.type;
    double best = 1e30;
    Status s;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      s = QuantizeLinear(tx, ts, nullptr, attrs, y.data(), y.size());
      const auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
      if (!s.ok()) break;
    }
    if (!s.ok()) {
      std::printf("  %-16s error: %s\n", Name(o.type), s.message().c_str());
      return 1;
    }
    std::printf("  float32 -> %-15s %8.3f G elements/s\n", Name(o.type), n / best * 1e-9);
  }
  return 0;
}

}  // namespace tools
}  // namespace qlinear
