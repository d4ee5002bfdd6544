// The OpenMP task runner (lib/parallel.cc, built with -fopenmp when QLINEAR_OPENMP is on).
#ifndef QLINEAR_LIB_PARALLEL_H_
#define QLINEAR_LIB_PARALLEL_H_

#include <stdint.h>

namespace qlinear {

bool OpenMPBuiltIn();
int OpenMPMaxThreads();  // 1 without OpenMP
// context: an int, the largest team (capped at count). Calls task(task_context, i) for i in
// [0, count).
void OpenMPParallelFor(void* context, int64_t count, void (*task)(void*, int64_t), void* task_context);

}  // namespace qlinear

#endif  // QLINEAR_LIB_PARALLEL_H_
