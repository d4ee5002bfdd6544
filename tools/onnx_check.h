// `qlinear check`: ONNX backend node tests through the public C API.
#ifndef QLINEAR_TOOLS_ONNX_CHECK_H_
#define QLINEAR_TOOLS_ONNX_CHECK_H_

#include <string>
#include <vector>

namespace qlinear {
namespace tools {

// Runs every test folder under `paths`; prints failures (and with verbose, passes/skips), then
// "N passed, M failed[, K skipped]". Returns the process exit code: 0 when at least one case ran
// and none failed.
int RunCheck(const std::vector<std::string>& paths, bool expect_error, bool verbose);

// Fuzzer seeds from the node-test folders under `paths`: for fuzz/api_fuzzer one call per
// single-node test (fuzz/fuzz_input.h format); for fuzz/reader_fuzzer the model and tensor
// files themselves.
enum class SeedFormat { kApi, kReader };
int WriteFuzzSeeds(const std::vector<std::string>& paths, const std::string& out_dir,
                   SeedFormat format);

}  // namespace tools
}  // namespace qlinear

#endif  // QLINEAR_TOOLS_ONNX_CHECK_H_
