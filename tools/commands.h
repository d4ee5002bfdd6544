// Sub-commands of the `qlinear` tool.
#ifndef QLINEAR_TOOLS_COMMANDS_H_
#define QLINEAR_TOOLS_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace qlinear {
namespace tools {

void PrintCpu();
int RunInfo();
// "" when calls can run here; else why they fail (QLINEAR_TARGET set to a value the library
// refuses: every call; QLINEAR_QUANTIZE_PATH: quantizing ones), as the library says it.
std::string CallsFailBecause();
// Quantizes `elements` random floats to several output types and prints elements/s.
int RunDemo(int64_t elements);
// Every supported target against the reference for about `seconds` in all; prints a table.
int RunSelftest(double seconds);

// `qlinear dynamic`: names as the CLI takes them (rule absmax|minmax|mx|pow2_ceil, granularity
// tensor|axis|block, types by qlinear_dtype_name: int8, float8e4m3fn, ...).
struct DynamicCommandOptions {
  std::string rule = "absmax";
  std::string output_type = "int8";
  std::string granularity = "block";
  bool axis_given = false;  // granularity axis needs an explicit axis
  int64_t axis = -1;
  int64_t block_size = 32;
  bool block_size_given = false;  // only with granularity block
  std::string scale_type;     // empty: the rule's default
  bool input_given = false;
  std::string input;          // raw little-endian float32 file (input_given); else random values
  int64_t elements = 1 << 22; // random values
  std::vector<int64_t> shape; // empty: [n / 1024, 1024] when 1024 divides n, else [n]
  int threads = 1;            // > 1: the parallel entry point
  int repeats = 5;            // the rate is the best of these
};
// Quantizes with qlinear_quantize_dynamic and prints max |x - DQ(Q(x))|, SQNR and the rate.
// Returns 0, 2 with a message on stderr for bad options or data, 1 when memory runs out.
int RunDynamic(const DynamicCommandOptions& options);
// Name -> C enum value; false for an unknown name.
bool ParseScaleRule(const std::string& name, int32_t* rule);
bool ParseGranularity(const std::string& name, int32_t* granularity);
bool ParseDataType(const std::string& name, int32_t* dtype);

}  // namespace tools
}  // namespace qlinear

#endif  // QLINEAR_TOOLS_COMMANDS_H_
