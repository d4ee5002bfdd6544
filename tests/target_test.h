// A GoogleTest suite run once per compiled SIMD target (Highway's TestWithParamTarget forces each
// in turn): SetUp checks that the library's dispatch followed the forced target and records its
// float32 lane count, so sizes can straddle the vector length.
#ifndef QLINEAR_TESTS_TARGET_TEST_H_
#define QLINEAR_TESTS_TARGET_TEST_H_

#include <stdint.h>

#include "hwy/tests/hwy_gtest.h"
#include "lib/kernels.h"

namespace qlinear {

class PerTargetTest : public hwy::TestWithParamTarget {
 protected:
  void SetUp() override {
    hwy::TestWithParamTarget::SetUp();
    ASSERT_EQ(DispatchedTarget(), GetParam()) << "dispatch did not follow the forced target";
    lanes_ = DispatchedLanesF32();
  }
  int64_t lanes_ = 1;
};

}  // namespace qlinear

#endif  // QLINEAR_TESTS_TARGET_TEST_H_
