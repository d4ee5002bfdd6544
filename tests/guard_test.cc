// Guard pages: the output (and the input) end right before an inaccessible page, so any
// over-read or over-write faults instead of passing. Every output type, sizes 0 .. 4*lanes+3,
// every target.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "lib/kernels.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

namespace qlinear {
namespace {

// `bytes` usable bytes ending exactly at a PROT_NONE page.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pages_ = (bytes + page - 1) / page + 1;
    size_ = pages_ * page;
    base_ = static_cast<uint8_t*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base_ + size_ - page, page, PROT_NONE);
    data_ = base_ + size_ - page - bytes;
  }
  ~GuardedBuffer() { munmap(base_, size_); }
  uint8_t* data() { return data_; }

 private:
  uint8_t* base_;
  uint8_t* data_;
  size_t pages_, size_;
};

class GuardTest : public hwy::TestWithParamTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(GuardTest);

TEST_P(GuardTest, QuantizeAndDequantizeStayInBounds) {
  const int64_t lanes = DispatchedLanesF32();
  const int32_t outs[] = {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_INT16,
                          QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_INT2,
                          QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  for (int32_t yt : outs) {
    for (int32_t xt : {QLINEAR_DTYPE_FLOAT, QLINEAR_DTYPE_FLOAT16}) {
      for (int64_t n = 0; n <= 4 * lanes + 3; ++n) {
        const size_t xsize = xt == QLINEAR_DTYPE_FLOAT ? 4 : 2;
        GuardedBuffer xb(static_cast<size_t>(n) * xsize);
        for (int64_t i = 0; i < n * static_cast<int64_t>(xsize); ++i) xb.data()[i] = static_cast<uint8_t>(i * 37 + 11);
        const float s = 0.37f;
        const qlinear_tensor tx{xt, 1, &n, xb.data()};
        const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
        qlinear_quantize_attrs a;
        qlinear_quantize_attrs_init(&a);
        a.output_dtype = yt;
        size_t ybytes = 0;
        ASSERT_EQ(qlinear_quantize_output_info(&tx, &ts, nullptr, &a, nullptr, &ybytes), QLINEAR_OK);
        GuardedBuffer yb(ybytes);
        ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, &a, yb.data(), ybytes), QLINEAR_OK);
        QuantizePlan plan;
        ASSERT_EQ(PlanQuantize(&tx, &ts, nullptr, &a, &plan), QLINEAR_OK);
        std::vector<uint8_t> want(ybytes + 1);
        QuantizeReference(plan, want.data(), 0, n);
        ASSERT_EQ(std::memcmp(yb.data(), want.data(), ybytes), 0) << qlinear_dtype_name(yt) << " n " << n;
        // And back: the packed codes (input) and the float32 output both end at a guard page.
        if (yt == QLINEAR_DTYPE_UINT16 || yt == QLINEAR_DTYPE_INT16 || xt != QLINEAR_DTYPE_FLOAT) continue;
        const qlinear_tensor tq{yt, 1, &n, yb.data()};
        GuardedBuffer db(static_cast<size_t>(n) * 4);
        qlinear_dequantize_attrs da;
        qlinear_dequantize_attrs_init(&da);
        ASSERT_EQ(qlinear_dequantize_linear(&tq, &ts, nullptr, &da, db.data(), static_cast<size_t>(n) * 4), QLINEAR_OK);
      }
    }
  }
}

}  // namespace
}  // namespace qlinear
