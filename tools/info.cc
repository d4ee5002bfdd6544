// `qlinear info`: version, CPU (cpu_features), compiled/supported/dispatched SIMD targets, and
// whether the target is pinned.
#include <cstdio>
#include <cstdlib>

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

// What cpu_features reports. Its microarchitecture name comes from a table of family/model
// numbers that predates newer CPUs (and virtual machines may report another CPU's model), so it
// is printed only when the table has the model, and marked as that table's guess.
void PrintCpu() {
#if defined(CPU_FEATURES_ARCH_X86)
  using namespace cpu_features;
  const X86Info info = GetX86Info();
  std::printf("cpu:       %s\n", info.brand_string[0] ? info.brand_string : "(no brand string)");
  std::printf("           vendor %s, family %d, model %d (0x%x), stepping %d\n", info.vendor,
              info.family, info.model, info.model, info.stepping);
  const X86Microarchitecture uarch = GetX86Microarchitecture(&info);
  if (uarch != X86_UNKNOWN) {
    std::printf("           microarchitecture %s (cpu_features' table of family/model numbers)\n",
                GetX86MicroarchitectureName(uarch));
  }
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
  const char* pin = std::getenv("QLINEAR_TARGET");
  if (pin != nullptr && pin[0] != '\0') {
    std::printf("target pinned:     %s (QLINEAR_TARGET)\n", pin);
  } else {
    std::printf("target pinned:     no (QLINEAR_TARGET=NAME pins one)\n");
  }
  const char* path = std::getenv("QLINEAR_QUANTIZE_PATH");
  if (path != nullptr) std::printf("quantize path:     %s (QLINEAR_QUANTIZE_PATH)\n", path);
  const std::string why = CallsFailBecause();
  if (!why.empty()) {
    std::printf("calls fail:        %s\n", why.c_str());
    return 1;
  }
  return 0;
}

std::string CallsFailBecause() {
  // The variables are checked by the first call that computes: one QuantizeLinear of a float32
  // element (the calls the quantize path applies to) shows whether every such call will fail.
  const float x = 1.0f, scale = 1.0f;
  int8_t y = 0;
  const int64_t one[1] = {1};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, 1, one, &x};
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &scale};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT8;
  if (qlinear_quantize_linear(&tx, &ts, nullptr, &a, &y, 1) != QLINEAR_OK) return qlinear_last_error();
  return "";
}

}  // namespace tools
}  // namespace qlinear
