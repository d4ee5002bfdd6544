// Configure-time probe for QLINEAR_HOST_TARGETS_ONLY: prints the Highway targets this build would
// compile that the CPU running the probe lacks, as "HWY_A|HWY_B" (empty when it runs them all).
// Compiled with the library's Highway defines, so HWY_TARGETS is the library's list.
#include <cstdint>
#include <cstdio>

#include "hwy/targets.h"

int main() {
  const int64_t supported = hwy::SupportedTargets();
  const char* separator = "";
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t target = int64_t{1} << bit;
    if ((HWY_TARGETS & target) == 0 || (supported & target) != 0 || target == HWY_STATIC_TARGET) continue;
    std::printf("%sHWY_%s", separator, hwy::TargetName(target));
    separator = "|";
  }
  return 0;
}
