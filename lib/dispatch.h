// qlinear's own dispatch: every foreach_target unit picks its driver through this, so that the
// pinned target (qlinear_set_target, QLINEAR_TARGET) applies to every operation alike.
// Owns: the index into a Highway dispatch table. Must not know: what the drivers do.
#ifndef QLINEAR_LIB_DISPATCH_H_
#define QLINEAR_LIB_DISPATCH_H_

#include <stddef.h>

namespace qlinear {

// The index of the pinned target's entry in a Highway dispatch table, or of Highway's own choice
// when nothing is pinned (kernels.cc). Applies QLINEAR_TARGET from the first call on.
size_t DispatchIndex();

template <class Fn, size_t kEntries>
Fn Dispatch(Fn const (&table)[kEntries]) {
  return table[DispatchIndex()];
}

}  // namespace qlinear

// The driver FUNC (exported with HWY_EXPORT) of the target that runs calls now.
#define QLINEAR_DISPATCH(FUNC) (*::qlinear::Dispatch(HWY_DISPATCH_TABLE(FUNC)))

#endif  // QLINEAR_LIB_DISPATCH_H_
