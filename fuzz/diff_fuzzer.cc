// Differential fuzzer: arbitrary float32 bit patterns, scales and zero points through every
// output type on every compiled target this CPU supports (forced), compared bit for bit with
// the scalar reference.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hwy/targets.h"
#include "lib/kernels.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

using namespace qlinear;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 12) return 0;
  static const int32_t kOut[] = {QLINEAR_DTYPE_UINT8, QLINEAR_DTYPE_INT8, QLINEAR_DTYPE_UINT16, QLINEAR_DTYPE_INT16,
                                 QLINEAR_DTYPE_UINT4, QLINEAR_DTYPE_INT4, QLINEAR_DTYPE_UINT2, QLINEAR_DTYPE_INT2,
                                 QLINEAR_DTYPE_FLOAT8E4M3FN, QLINEAR_DTYPE_FLOAT8E4M3FNUZ, QLINEAR_DTYPE_FLOAT8E5M2,
                                 QLINEAR_DTYPE_FLOAT8E5M2FNUZ, QLINEAR_DTYPE_FLOAT4E2M1};
  const int32_t yt = kOut[data[0] % 13];
  const bool saturate = data[1] & 1;
  const int32_t precision = (data[1] >> 1) % 3 == 0 ? 0 : ((data[1] >> 1) % 3 == 1 ? QLINEAR_DTYPE_FLOAT16 : QLINEAR_DTYPE_BFLOAT16);
  float scale;
  std::memcpy(&scale, data + 2, 4);
  const uint16_t zp_bits = static_cast<uint16_t>(data[6] | (data[7] << 8));
  std::vector<uint8_t> zp(2);
  std::memcpy(zp.data(), &zp_bits, 2);
  if (FindDType(yt)->kind != Kind::kInt) zp.assign(2, 0);
  else if (FindDType(yt)->bits < 8) zp[0] &= static_cast<uint8_t>((1u << FindDType(yt)->bits) - 1);
  const int64_t n = static_cast<int64_t>((size - 8) / 4);
  std::vector<float> x(static_cast<size_t>(n));
  std::memcpy(x.data(), data + 8, static_cast<size_t>(n) * 4);
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, &n, x.data()};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
  const qlinear_tensor tz{yt, 0, nullptr, zp.data()};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.saturate = saturate;
  a.precision = precision;
  QuantizePlan plan;
  if (PlanQuantize(&tx, &ts, &tz, &a, &plan) != QLINEAR_OK) std::abort();
  const size_t bytes = static_cast<size_t>(plan.y_bytes);
  std::vector<uint8_t> want(bytes + 1, 0);
  QuantizeReference(plan, want.data(), 0, n);
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t t = int64_t{1} << bit;
    if (!(SupportedTargetMask() & t)) continue;
    hwy::SetSupportedTargetsForTest(t);
    std::vector<uint8_t> y(bytes + 1, 0x5A);
    if (qlinear_quantize_linear(&tx, &ts, &tz, &a, y.data(), bytes) != QLINEAR_OK) std::abort();
    if (y[bytes] != 0x5A || std::memcmp(y.data(), want.data(), bytes) != 0) std::abort();
  }
  hwy::SetSupportedTargetsForTest(0);
  return 0;
}
