// Configure-time probe for QLINEAR_HOST_TARGETS_ONLY: prints the Highway targets this build would
// compile that the CPU running the probe lacks, as "HWY_A|HWY_B" (empty when it runs them all);
// with the argument "best", also those it runs except the best one (the fallback, the static
// target, is never listed: Highway always compiles it).
// Compiled with the library's Highway defines, so HWY_TARGETS is the library's list.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "hwy/targets.h"

int main(int argc, char** argv) {
  int64_t keep = hwy::SupportedTargets() & HWY_TARGETS;
  if (argc > 1 && std::strcmp(argv[1], "best") == 0) keep &= -keep;  // lowest bit: the best target
  const char* separator = "";
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t target = int64_t{1} << bit;
    if ((HWY_TARGETS & target) == 0 || (keep & target) != 0 || target == HWY_STATIC_TARGET) continue;
    std::printf("%sHWY_%s", separator, hwy::TargetName(target));
    separator = "|";
  }
  return 0;
}
