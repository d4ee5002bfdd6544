// A one-line progress display on stderr for long commands, shown only when stderr is a
// terminal: logs and pipes get the results alone.
#ifndef QLINEAR_TOOLS_PROGRESS_H_
#define QLINEAR_TOOLS_PROGRESS_H_

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace qlinear {
namespace tools {

class ProgressLine {
 public:
  ProgressLine() : on_(isatty(STDERR_FILENO) != 0) {}
  ~ProgressLine() { Clear(); }
  // Replaces the line with printf-style text.
  void Show(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    if (!on_) return;
    std::fputs("\r\033[K", stderr);
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fflush(stderr);
    shown_ = true;
  }
  // Erases the line (before printing results on stdout).
  void Clear() {
    if (!shown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
};

}  // namespace tools
}  // namespace qlinear

#endif  // QLINEAR_TOOLS_PROGRESS_H_
