// The `qlinear` command-line tool.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/commands.h"
#include "tools/onnx_check.h"

namespace {

int Usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: qlinear info\n"
               "       qlinear check [--expect-error] [-v] PATH...\n"
               "       qlinear demo [--elements N]\n"
               "       qlinear selftest [--seconds N]\n"
               "\n"
               "info   version, CPU features, SIMD targets compiled/supported/dispatched\n"
               "check  run ONNX backend node tests (folders with model.onnx and\n"
               "       test_data_set_*/); PATH may hold such folders at any depth\n"
               "demo   quantize N random floats (default 4194304) to several types\n"
               "selftest  every supported SIMD target against the scalar reference (default 5 s)\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage(2);
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") return Usage(0);
  if (cmd == "info") return qlinear::tools::RunInfo();
  if (cmd == "check") {
    bool expect_error = false, verbose = false;
    std::vector<std::string> paths;
    for (int i = 2; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--expect-error")) expect_error = true;
      else if (!std::strcmp(argv[i], "-v")) verbose = true;
      else if (argv[i][0] == '-') return Usage(2);
      else paths.push_back(argv[i]);
    }
    if (paths.empty()) return Usage(2);
#if QLINEAR_HAVE_ONNX
    return qlinear::tools::RunCheck(paths, expect_error, verbose);
#else
    std::fprintf(stderr, "qlinear: built without libonnx-dev; `check` is unavailable\n");
    return 2;
#endif
  }
  if (cmd == "demo") {
    long long n = 1 << 22;
    for (int i = 2; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--elements") && i + 1 < argc) {
        n = std::atoll(argv[++i]);
      } else {
        return Usage(2);
      }
    }
    if (n <= 0) return Usage(2);
    return qlinear::tools::RunDemo(n);
  }
#if QLINEAR_HAVE_ONNX
  if (cmd == "fuzz-seed" && argc >= 4) {  // fuzz-seed PATH... OUT_DIR (for fuzz/api_fuzzer)
    return qlinear::tools::WriteFuzzSeeds(std::vector<std::string>(argv + 2, argv + argc - 1), argv[argc - 1]);
  }
#endif
  if (cmd == "selftest") {
    double seconds = 5.0;
    for (int i = 2; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
        seconds = std::atof(argv[++i]);
      } else {
        return Usage(2);
      }
    }
    return qlinear::tools::RunSelftest(seconds);
  }
  std::fprintf(stderr, "qlinear: unknown command '%s'\n", cmd.c_str());
  return Usage(2);
}
