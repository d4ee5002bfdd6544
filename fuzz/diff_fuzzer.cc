// Differential fuzzer: arbitrary float32 bit patterns, scales and zero points through every
// output type on every compiled target this CPU supports (forced), compared bit for bit with
// the scalar reference.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hwy/targets.h"
#include "lib/kernels.h"
#include "qlinear/qlinear.h"
#include "tests/harness.h"

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
  const uint16_t zp_bits = static_cast<uint16_t>(data[6] | (data[7] << 8));
  std::vector<uint8_t> zp(2);
  std::memcpy(zp.data(), &zp_bits, 2);
  if (FindDType(yt)->kind != Kind::kInt) zp.assign(2, 0);
  else if (FindDType(yt)->bits < 8) zp[0] &= static_cast<uint8_t>((1u << FindDType(yt)->bits) - 1);
  const int64_t n = static_cast<int64_t>((size - 8) / 4);
  harness::QuantizeCall call({QLINEAR_DTYPE_FLOAT, {n}, std::vector<uint8_t>(data + 8, data + 8 + n * 4)},
                             {QLINEAR_DTYPE_FLOAT, {}, std::vector<uint8_t>(data + 2, data + 6)});
  call.SetZeroPoint({yt, {}, zp});
  call.attrs.saturate = saturate;
  call.attrs.precision = precision;
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t t = int64_t{1} << bit;
    if (!(SupportedTargetMask() & t)) continue;
    hwy::SetSupportedTargetsForTest(t);
    const std::string difference = harness::CheckQuantize(call, static_cast<size_t>(data[1] >> 3));
    if (!difference.empty()) {
      std::fprintf(stderr, "%s: %s\n", hwy::TargetName(t), difference.c_str());
      std::abort();
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  return 0;
}
