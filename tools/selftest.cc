// `qlinear selftest [--seconds N]`: every compiled target this CPU supports against the scalar
// reference, on random and edge data, for every input/output type and granularity, through the
// public C API. What a user runs first on a new CPU.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "lib/dtype.h"
#include "lib/kernels.h"
#include "lib/minifloat.h"
#include "qlinear/qlinear.h"
#include "tests/harness.h"
#include "tools/commands.h"
#include "tools/progress.h"

namespace qlinear {
namespace tools {
namespace {

struct Tally {
  int64_t cases = 0, elements = 0, failures = 0;
  std::string first_failure;
};

// A float32 value: edge values (ties, bounds, specials, denormals) mixed with random ones.
float Value(std::mt19937& rng, float s) {
  static const float kEdges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-40f,
                                 1.17549435e-38f, 3e38f, -3e38f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f,
                                 127.5f, -128.5f, 255.5f, 448.0f, 464.0f, 240.0f, 248.0f,
                                 57344.0f, 61440.0f, 6.0f, 5.0f, 0.25f, 0.75f};
  std::uniform_int_distribution<int> pick(0, 3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  switch (pick(rng)) {
    case 0: {
      const float e = kEdges[rng() % (sizeof(kEdges) / sizeof(kEdges[0]))];
      return (rng() & 1) ? e * s : e;
    }
    case 1: {
      uint32_t u = static_cast<uint32_t>(rng());
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case 2: return std::nearbyint(normal(rng) * 300.0f) * 0.5f * s;
    default: return normal(rng) * 100.0f * s;
  }
}

void Put(std::vector<uint8_t>* out, int32_t t, float v) {
  if (t == QLINEAR_DTYPE_FLOAT) {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    out->insert(out->end(), b, b + 4);
  } else if (t == QLINEAR_DTYPE_INT32) {
    const int32_t i = std::isfinite(v) ? static_cast<int32_t>(std::fmax(-2e9f, std::fmin(2e9f, v))) : 7;
    uint8_t b[4];
    std::memcpy(b, &i, 4);
    out->insert(out->end(), b, b + 4);
  } else {
    const uint16_t h = t == QLINEAR_DTYPE_FLOAT16 ? Half::Encode(v) : BFloat16::Encode(v);
    out->push_back(static_cast<uint8_t>(h));
    out->push_back(static_cast<uint8_t>(h >> 8));
  }
}

// One checked case: counted, and its difference (if any) kept when it is the first.
void Record(Tally* tally, int64_t elements, const std::string& what, const std::string& difference) {
  ++tally->cases;
  tally->elements += elements;
  if (difference.empty()) return;
  ++tally->failures;
  if (tally->first_failure.empty()) tally->first_failure = what + difference;
}

size_t Bytes(int32_t t, int64_t n) { return static_cast<size_t>(StorageBytes(static_cast<DType>(t), static_cast<uint64_t>(n))); }

// One random QuantizeLinear and one DequantizeLinear case; mismatches are recorded in tally.
void RunCase(std::mt19937& rng, Tally* tally) {
  static const int32_t kX[] = {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16, QLINEAR_DTYPE_INT32};
  static const int32_t kS[] = {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16, QLINEAR_DTYPE_BFLOAT16, QLINEAR_DTYPE_FLOAT8E8M0};
  static const int32_t kY[] = {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_INT16,
                               QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_INT2,
                               QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ, QLINEAR_DTYPE_FLOAT8E5M2,
                               QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  const int32_t xt = kX[rng() % 4], st = kS[rng() % 4], yt = kY[rng() % 13];
  // Shape [rows, cols] with odd sizes; granularity per tensor, per axis (0/1) or blocked (0/1).
  const int64_t rows = 1 + rng() % 9, cols = 1 + rng() % 300;
  const int g = static_cast<int>(rng() % 5);
  const int64_t axis = (g == 1 || g == 3) ? 0 : 1, block = g >= 3 ? 1 + rng() % 40 : 0;
  std::vector<int64_t> xs{rows, cols}, ss;
  if (g == 1) ss = {rows};
  if (g == 2) ss = {cols};
  if (g >= 3) {
    ss = xs;
    ss[axis] = (xs[axis] + block - 1) / block;
  }
  int64_t sn = 1;
  for (int64_t d : ss) sn *= d;
  const float base = std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
  std::vector<uint8_t> x, s, zp(Bytes(yt, sn), 0);
  for (int64_t i = 0; i < rows * cols; ++i) Put(&x, xt, Value(rng, base));
  for (int64_t k = 0; k < sn; ++k) {
    const float v = base * (0.5f + static_cast<float>(rng() % 100) / 50.0f) * ((rng() % 8) ? 1.0f : -1.0f);
    if (st == QLINEAR_DTYPE_FLOAT8E8M0) {
      s.push_back(static_cast<uint8_t>(127 + std::ilogb(base)));
    } else {
      Put(&s, st, v);
    }
  }
  if (Info(static_cast<DType>(yt)).kind == Kind::kInt) {
    for (uint8_t& b : zp) b = static_cast<uint8_t>(rng());
  }
  harness::QuantizeCall q({xt, xs, std::move(x)}, {st, ss, std::move(s)}, axis, block);
  q.SetZeroPoint({yt, ss, std::move(zp)});
  q.attrs.saturate = static_cast<int32_t>(rng() & 1);
  q.attrs.precision = (rng() % 3 == 0) ? QLINEAR_DTYPE_FLOAT16 : 0;
  char where[160];
  std::snprintf(where, sizeof(where), " (scale %s, precision %d, saturate %d, shape [%lld, %lld], axis %lld, block %lld): ",
                Name(static_cast<DType>(st)), static_cast<int>(q.attrs.precision), static_cast<int>(q.attrs.saturate),
                static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(axis),
                static_cast<long long>(block));
  std::vector<uint8_t> y;
  Record(tally, rows * cols, "QuantizeLinear " + std::string(Name(static_cast<DType>(xt))) + " -> " +
                                 Name(static_cast<DType>(yt)) + where, harness::CheckQuantize(q, rng() % 8, &y));
  // DequantizeLinear of the reference's result back to float32/float16/bfloat16.
  if (y.empty()) return;
  const int32_t ot = kX[rng() % 3];
  harness::DequantizeCall d({yt, xs, std::move(y)}, std::move(q.scale), axis, block);
  if (Info(static_cast<DType>(yt)).kind == Kind::kInt) d.SetZeroPoint(std::move(q.zero_point));
  d.attrs.output_dtype = ot;
  Record(tally, rows * cols, "DequantizeLinear " + std::string(Name(static_cast<DType>(yt))) + " -> " +
                                 Name(static_cast<DType>(ot)) + where, harness::CheckDequantize(d, 0, -1, rng() % 8));
}

}  // namespace

int RunSelftest(double seconds) {
  const char* pin = std::getenv("QLINEAR_TARGET");
  if (pin != nullptr && pin[0] != '\0') {  // a pin would replace every target the test selects
    std::fprintf(stderr, "qlinear selftest: runs every target itself; unset QLINEAR_TARGET (set to '%s')\n", pin);
    return 2;
  }
  std::printf("qlinear %s selftest: every supported target against the scalar reference\n", qlinear_version());
  PrintCpu();
  std::printf("\n%-10s %8s %12s %9s  %s\n", "target", "cases", "elements", "result", "first failure");
  std::fflush(stdout);
  bool all_ok = true;
  std::vector<int64_t> targets;
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t t = int64_t{1} << bit;
    if (SupportedTargetMask() & t) targets.push_back(t);
  }
  const double per_target = seconds / static_cast<double>(targets.size());
  for (int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    Tally tally;
    std::mt19937 rng(12345);
    const auto start = std::chrono::steady_clock::now();
    ProgressLine progress;
    double elapsed = 0.0, shown = 0.0;
    do {
      for (int i = 0; i < 50; ++i) RunCase(rng, &tally);
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed - shown >= 0.25) {
        shown = elapsed;
        progress.Show("%s: %.1f of %.1f s, %lld cases", hwy::TargetName(t), elapsed, per_target,
                      static_cast<long long>(tally.cases));
      }
    } while (elapsed < per_target);
    progress.Clear();
    const bool ok = tally.failures == 0 && DispatchedTarget() == t;
    all_ok &= ok;
    std::printf("%-10s %8lld %12lld %9s  %s\n", hwy::TargetName(t), static_cast<long long>(tally.cases),
                static_cast<long long>(tally.elements), ok ? "pass" : "FAIL", tally.first_failure.c_str());
    std::fflush(stdout);  // a row as soon as its target is done, also into pipes and logs
  }
  hwy::SetSupportedTargetsForTest(0);
  std::printf("\n%s\n", all_ok ? "selftest passed" : "selftest FAILED");
  return all_ok ? 0 : 1;
}

}  // namespace tools
}  // namespace qlinear
