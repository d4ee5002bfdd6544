// The floating-point environment of a call (qlinear.h, "Floating-point environment"): the IEEE
// defaults -- round to nearest even, subnormal inputs and results kept, no traps, no default-NaN
// mode -- for as long as a guard lives on this thread, whatever the caller set (a host built with
// -ffast-math starts with FTZ/DAZ; fesetround changes the rounding). The control register is read
// first and written only when it differs (a write serializes the FP pipeline), and the caller's
// value is put back when the guard ends. The API entry points hold one for the whole call and
// every parallel task holds its own (OpenMP workers and a caller's pool threads have theirs).
#ifndef QLINEAR_LIB_FPENV_H_
#define QLINEAR_LIB_FPENV_H_

#include <stdint.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define QLINEAR_FPENV_MXCSR 1
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define QLINEAR_FPENV_FPCR 1
#else
#include <cfenv>
#endif

namespace qlinear {

#if defined(QLINEAR_FPENV_MXCSR)

// MXCSR: bits 0-5 are sticky exception flags (left as they are), bits 6-15 control: DAZ (6), the
// six exception masks (7-12), rounding (13-14), FTZ (15). Default: all masked, nearest, no
// flushing. (x87 is not used for float math on x86-64.)
class FpEnvGuard {
 public:
  FpEnvGuard() : saved_(__builtin_ia32_stmxcsr()) {
    if ((saved_ & kControl) != kDefault) __builtin_ia32_ldmxcsr((saved_ & ~kControl) | kDefault);
  }
  ~FpEnvGuard() {
    if ((saved_ & kControl) != kDefault) {
      __builtin_ia32_ldmxcsr((__builtin_ia32_stmxcsr() & ~kControl) | (saved_ & kControl));
    }
  }
  // The defaults again, where code the library does not own (a caller's runner) may have left
  // other modes; the caller's are still put back when the guard ends.
  static void Reset() {
    const unsigned now = __builtin_ia32_stmxcsr();
    if ((now & kControl) != kDefault) __builtin_ia32_ldmxcsr((now & ~kControl) | kDefault);
  }
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  static constexpr unsigned kControl = 0xFFC0u;
  static constexpr unsigned kDefault = 0x1F80u;
  unsigned saved_;
};

#elif defined(QLINEAR_FPENV_FPCR)

// FPCR holds only controls (the flags are in FPSR): FZ (24), DN (25), AHP (26), RMode (22-23),
// FZ16 (19), trap enables (8-12, 15), and FEAT_AFP's FIZ/AH/NEP (0-2). All zero is the default.
class FpEnvGuard {
 public:
  FpEnvGuard() : saved_(Read()) {
    if (saved_ != 0) Write(0);
  }
  ~FpEnvGuard() {
    if (saved_ != 0) Write(saved_);
  }
  static void Reset() {
    if (Read() != 0) Write(0);
  }
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  static uint64_t Read() {
    uint64_t v;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(v) : : "memory");
    return v;
  }
  static void Write(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v) : "memory"); }
  uint64_t saved_;
};

#else

// Elsewhere only the rounding mode can be set portably.
class FpEnvGuard {
 public:
  FpEnvGuard() : saved_(std::fegetround()) {
    if (saved_ != FE_TONEAREST) std::fesetround(FE_TONEAREST);
  }
  ~FpEnvGuard() {
    if (saved_ != FE_TONEAREST) std::fesetround(saved_);
  }
  static void Reset() {
    if (std::fegetround() != FE_TONEAREST) std::fesetround(FE_TONEAREST);
  }
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  int saved_;
};

#endif

#if defined(QLINEAR_FPENV_MXCSR)
// Around a caller's runner: x87's control word, which the library never changes but a runner's
// fesetround does (fegetround reads it), is put back as it was.
class X87ControlKeeper {
 public:
  X87ControlKeeper() : saved_(Read()) {}
  ~X87ControlKeeper() {
    if (Read() != saved_) __asm__ __volatile__("fldcw %0" : : "m"(saved_));
  }
  X87ControlKeeper(const X87ControlKeeper&) = delete;
  X87ControlKeeper& operator=(const X87ControlKeeper&) = delete;

 private:
  static unsigned short Read() {
    unsigned short cw;
    __asm__ __volatile__("fnstcw %0" : "=m"(cw));
    return cw;
  }
  unsigned short saved_;
};
#else
// Only x86 has a second control word for a runner to change. (A destructor of its own: not an
// unused variable where it is used.)
class X87ControlKeeper {
 public:
  X87ControlKeeper() {}
  ~X87ControlKeeper() {}
};
#endif

}  // namespace qlinear

#endif  // QLINEAR_LIB_FPENV_H_
