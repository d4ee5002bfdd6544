// `qlinear info`: version, CPU (cpu_features), compiled/supported/dispatched SIMD targets.
#include <cstdio>

#include "cpu_features_macros.h"
#include "qlinear/qlinear.h"
#include "tools/commands.h"

#if defined(CPU_FEATURES_ARCH_X86)
#include "cpuinfo_x86.h"
#elif defined(CPU_FEATURES_ARCH_AARCH64)
#include "cpuinfo_aarch64.h"
#endif

namespace qlinear {
namespace tools {

void PrintCpu() {
#if defined(CPU_FEATURES_ARCH_X86)
  using namespace cpu_features;
  const X86Info info = GetX86Info();
  std::printf("cpu:       %s (%s), family %d model %d stepping %d, %s\n", info.brand_string,
              info.vendor, info.family, info.model, info.stepping,
              GetX86MicroarchitectureName(GetX86Microarchitecture(&info)));
  std::printf("features: ");
  for (int i = 0; i < X86_LAST_; ++i) {
    const auto f = static_cast<X86FeaturesEnum>(i);
    if (GetX86FeaturesEnumValue(&info.features, f)) std::printf(" %s", GetX86FeaturesEnumName(f));
  }
  std::printf("\n");
#elif defined(CPU_FEATURES_ARCH_AARCH64)
  using namespace cpu_features;
  const Aarch64Info info = GetAarch64Info();
  std::printf("cpu:       aarch64 implementer 0x%x variant %d part 0x%x revision %d\n",
              info.implementer, info.variant, info.part, info.revision);
  std::printf("features: ");
  for (int i = 0; i < AARCH64_LAST_; ++i) {
    const auto f = static_cast<Aarch64FeaturesEnum>(i);
    if (GetAarch64FeaturesEnumValue(&info.features, f)) {
      std::printf(" %s", GetAarch64FeaturesEnumName(f));
    }
  }
  std::printf("\n");
#else
  std::printf("cpu:       (cpu_features does not describe this architecture)\n");
#endif
}

int RunInfo() {
  std::printf("qlinear %s\n", qlinear_version());
  PrintCpu();
  std::printf("targets compiled:  %s\n", qlinear_compiled_targets());
  std::printf("targets supported: %s\n", qlinear_supported_targets());
  std::printf("target dispatched: %s\n", qlinear_active_target());
  return 0;
}

}  // namespace tools
}  // namespace qlinear
