#include "error.h"

#include <cstdarg>
#include <cstdio>

namespace qlinear {
namespace {
// Fixed size: recording an error never allocates (and so never throws).
thread_local char g_message[512];
}  // namespace

qlinear_status Fail(qlinear_status status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(g_message, sizeof(g_message), fmt, args);
  va_end(args);
  return status;
}

void ClearError() { g_message[0] = '\0'; }

const char* LastError() { return g_message; }

}  // namespace qlinear
