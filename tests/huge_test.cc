// 2^31 + 17 float32 elements (8 GiB) to int8 and int4: 64-bit indexing across the 2^31
// boundary, checked at samples against the reference. Skips when the machine lacks the memory.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

namespace qlinear {
namespace {

int64_t AvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

// Anonymous memory in huge pages where the kernel allows them (madvise): first touching 10 GiB
// in 4 KiB pages took 28 s of system time on a virtual machine.
class HugeBuffer {
 public:
  explicit HugeBuffer(size_t bytes) : bytes_((bytes + (size_t{2} << 20) - 1) & ~((size_t{2} << 20) - 1)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: fine if refused
    data_ = static_cast<uint8_t*>(p);
  }
  ~HugeBuffer() { munmap(data_, bytes_); }
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  uint8_t* data() const { return data_; }

 private:
  size_t bytes_;
  uint8_t* data_ = nullptr;
};

TEST(Huge, Over2Pow31Elements) {
  const int64_t n = (int64_t{1} << 31) + 17;
  if (AvailableBytes() < n * 4 + n + n / 2 + (int64_t{2} << 30)) {
    GTEST_SKIP() << "needs about 13 GiB of free memory";
  }
  HugeBuffer x_buffer(static_cast<size_t>(n) * sizeof(float));
  float* const x = reinterpret_cast<float*>(x_buffer.data());
  {  // x[i] = (i % 1999) / 8 - 120, filled by two threads (the test runs alone)
    auto fill = [&](int64_t begin, int64_t end) {
      int64_t k = begin % 1999;
      for (int64_t i = begin; i < end; ++i) {
        x[i] = static_cast<float>(k) * 0.125f - 120.0f;
        if (++k == 1999) k = 0;
      }
    };
    std::thread half(fill, n / 2, n);
    fill(0, n / 2);
    half.join();
  }
  const float s = 0.5f;
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &s};
  for (int32_t yt : {QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_INT4}) {
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.output_dtype = yt;
    size_t bytes = 0;
    ASSERT_EQ(qlinear_quantize_output_info(&tx, &ts, nullptr, &a, nullptr, &bytes), QLINEAR_OK);
    ASSERT_EQ(bytes, yt == QLINEAR_DTYPE_INT8 ? static_cast<size_t>(n) : static_cast<size_t>((n + 1) / 2));
    HugeBuffer y_buffer(bytes);
    uint8_t* const y = y_buffer.data();
    std::memset(y, 0xFF, bytes);  // (a fresh mapping reads as zeros, as the padding should)
    ASSERT_EQ(qlinear_quantize_linear(&tx, &ts, nullptr, &a, y, bytes), QLINEAR_OK);
    QuantizePlan plan;
    ASSERT_EQ(PlanQuantize(&tx, &ts, nullptr, &a, &plan), QLINEAR_OK);
    const int64_t boundary = int64_t{1} << 31;
    for (int64_t i : {int64_t{0}, int64_t{12345}, boundary - 3, boundary - 2, boundary - 1, boundary,
                      boundary + 1, boundary + 2, boundary + 15, n - 2, n - 1}) {
      const int32_t want = QuantizeElement(plan, i);
      const int32_t got = yt == QLINEAR_DTYPE_INT8 ? static_cast<int8_t>(y[i])
                                                   : static_cast<int32_t>(((y[i >> 1] >> (4 * (i & 1))) & 0xF) ^ 8) - 8;
      ASSERT_EQ(got, want) << qlinear_dtype_name(yt) << " element " << i;
    }
    if (yt == QLINEAR_DTYPE_INT4) ASSERT_EQ(y[bytes - 1] >> 4, 0) << "padding nibble";
  }
}

}  // namespace
}  // namespace qlinear
