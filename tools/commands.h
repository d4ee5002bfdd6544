// Sub-commands of the `qlinear` tool.
#ifndef QLINEAR_TOOLS_COMMANDS_H_
#define QLINEAR_TOOLS_COMMANDS_H_

#include <cstdint>

namespace qlinear {
namespace tools {

void PrintCpu();
int RunInfo();
// Quantizes `elements` random floats to several output types and prints elements/s.
int RunDemo(int64_t elements);
// Every supported target against the reference for about `seconds` in all; prints a table.
int RunSelftest(double seconds);

}  // namespace tools
}  // namespace qlinear

#endif  // QLINEAR_TOOLS_COMMANDS_H_
