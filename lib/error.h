// The calling thread's last error message.
#ifndef QLINEAR_LIB_ERROR_H_
#define QLINEAR_LIB_ERROR_H_

#include "qlinear/qlinear.h"

namespace qlinear {

// Sets the thread's message (printf-style) and returns `status`, so a check reads
// `return Fail(QLINEAR_INVALID_ARGUMENT, "y_scale: ...", ...)`.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
qlinear_status Fail(qlinear_status status, const char* fmt, ...);

void ClearError();
const char* LastError();

}  // namespace qlinear

#endif  // QLINEAR_LIB_ERROR_H_
