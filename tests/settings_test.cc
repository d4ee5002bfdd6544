// Execution settings: pinning the SIMD target through the C API (the environment variables have
// their own processes: settings_env_test.c).
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "qlinear/qlinear.h"

namespace {

std::vector<std::string> Words(const char* list) {
  std::istringstream in(list);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<int8_t> QuantizeRamp() {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 150.5f;
  const int64_t n = static_cast<int64_t>(x.size());
  const float scale = 0.5f;
  const int8_t zp = 3;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
  const qlinear_tensor tz{QLINEAR_DTYPE_INT8, 0, nullptr, &zp};
  std::vector<int8_t> y(x.size());
  EXPECT_EQ(qlinear_quantize_linear(&tx, &ts, &tz, nullptr, y.data(), y.size()), QLINEAR_OK) << qlinear_last_error();
  return y;
}

TEST(Settings, PinnedTargetRunsAndUnpinningRestoresTheBest) {
  const std::string best = qlinear_active_target();
  const std::vector<int8_t> want = QuantizeRamp();
  for (const std::string& t : Words(qlinear_supported_targets())) {
    ASSERT_EQ(qlinear_set_target(t.c_str()), QLINEAR_OK) << t << ": " << qlinear_last_error();
    EXPECT_EQ(std::string(qlinear_active_target()), t);
    EXPECT_EQ(QuantizeRamp(), want) << t;
  }
  ASSERT_EQ(qlinear_set_target(nullptr), QLINEAR_OK);
  EXPECT_EQ(std::string(qlinear_active_target()), best);
  ASSERT_EQ(qlinear_set_target(""), QLINEAR_OK);
  EXPECT_EQ(std::string(qlinear_active_target()), best);
}

TEST(Settings, TargetNamesMatchInEitherCase) {
  for (const std::string& t : Words(qlinear_supported_targets())) {
    std::string mixed = t;
    for (size_t i = 0; i < mixed.size(); i += 2) {
      const char c = mixed[i];
      if (c >= 'A' && c <= 'Z') mixed[i] = static_cast<char>(c - 'A' + 'a');
    }
    ASSERT_EQ(qlinear_set_target(mixed.c_str()), QLINEAR_OK) << mixed << ": " << qlinear_last_error();
    EXPECT_EQ(std::string(qlinear_active_target()), t) << mixed;
  }
  EXPECT_EQ(qlinear_set_target("avx9"), QLINEAR_INVALID_ARGUMENT);
  // A name that only starts like a target is not one.
  const std::vector<std::string> supported = Words(qlinear_supported_targets());
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(qlinear_set_target((supported.front() + "x").c_str()), QLINEAR_INVALID_ARGUMENT);
  ASSERT_EQ(qlinear_set_target(nullptr), QLINEAR_OK);
}

TEST(Settings, UnknownOrUnsupportedTargetsAreRejectedAndLeaveThePin) {
  const std::vector<std::string> supported = Words(qlinear_supported_targets());
  ASSERT_FALSE(supported.empty());
  const std::string last = supported.back();  // the fallback, always supported
  ASSERT_EQ(qlinear_set_target(last.c_str()), QLINEAR_OK);
  EXPECT_EQ(qlinear_set_target("AVX9"), QLINEAR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(qlinear_last_error(), "qlinear_set_target: 'AVX9' is not a SIMD target"), nullptr)
      << qlinear_last_error();
  EXPECT_EQ(std::string(qlinear_active_target()), last);
  // A compiled target this CPU cannot run, if there is one.
  for (const std::string& t : Words(qlinear_compiled_targets())) {
    bool runs = false;
    for (const std::string& s : supported) runs = runs || s == t;
    if (runs) continue;
    EXPECT_EQ(qlinear_set_target(t.c_str()), QLINEAR_INVALID_ARGUMENT) << t;
    EXPECT_NE(std::strstr(qlinear_last_error(), "this CPU cannot run"), nullptr) << qlinear_last_error();
  }
  ASSERT_EQ(qlinear_set_target(nullptr), QLINEAR_OK);
}

}  // namespace
