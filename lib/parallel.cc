#include "parallel.h"

#include <algorithm>

#ifdef QLINEAR_HAVE_OPENMP
#include <omp.h>
#endif

namespace qlinear {

#ifdef QLINEAR_HAVE_OPENMP
bool OpenMPBuiltIn() { return true; }
int OpenMPMaxThreads() { return omp_get_max_threads(); }
void OpenMPParallelFor(void* context, int64_t count, void (*task)(void*, int64_t), void* task_context) {
  // The team: at most one thread per task (a larger one would only park idle threads), and at
  // most OpenMP's own thread count (OMP_NUM_THREADS, else one per core): max_threads may ask for
  // up to 65536 tasks, and a team that size is thousands of threads the OS may refuse (libgomp
  // then ends the process).
  const int64_t asked = std::min<int64_t>(*static_cast<const int*>(context), count);
  const int threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(asked, omp_get_max_threads())));
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < count; ++i) task(task_context, i);
}
#else
bool OpenMPBuiltIn() { return false; }
int OpenMPMaxThreads() { return 1; }
void OpenMPParallelFor(void*, int64_t count, void (*task)(void*, int64_t), void* task_context) {
  for (int64_t i = 0; i < count; ++i) task(task_context, i);
}
#endif

}  // namespace qlinear
