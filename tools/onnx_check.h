// `qlinear check`: ONNX backend node tests through the public C API.
#ifndef QLINEAR_TOOLS_ONNX_CHECK_H_
#define QLINEAR_TOOLS_ONNX_CHECK_H_

#include <string>
#include <vector>

namespace qlinear {
namespace tools {

// Runs every test folder under `paths`; prints failures (and with verbose, passes/skips), then
// "N passed, M failed[, K skipped]". Returns the process exit code (0: nothing failed).
int RunCheck(const std::vector<std::string>& paths, bool expect_error, bool verbose);

// Seeds for fuzz/api_fuzzer (fuzz/fuzz_input.h format), one per single-node test folder.
int WriteFuzzSeeds(const std::vector<std::string>& paths, const std::string& out_dir);

}  // namespace tools
}  // namespace qlinear

#endif  // QLINEAR_TOOLS_ONNX_CHECK_H_
