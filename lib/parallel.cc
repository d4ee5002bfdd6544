#include "parallel.h"

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "fpenv.h"
#include "kernels.h"

#ifdef QLINEAR_HAVE_OPENMP
#include <omp.h>
#include <pthread.h>
#endif

namespace qlinear {

#ifdef QLINEAR_HAVE_OPENMP
namespace {
// libgomp's threads do not survive fork(): in a child of a process where a team of ours has run,
// the next parallel region waits forever (Python's multiprocessing forks by default on Linux).
// Such a child runs the tasks on the calling thread (the same bytes).
std::atomic<bool> g_team_ran{false};
std::atomic<bool> g_team_lost{false};
void AfterForkInChild() {
  if (g_team_ran.load(std::memory_order_relaxed)) g_team_lost.store(true, std::memory_order_relaxed);
}
[[maybe_unused]] const int g_fork_handler = pthread_atfork(nullptr, nullptr, AfterForkInChild);
}  // namespace

bool OpenMPBuiltIn() { return true; }
int OpenMPMaxThreads() { return omp_get_max_threads(); }
void OpenMPParallelFor(void* context, int64_t count, void (*task)(void*, int64_t), void* task_context) {
  // The team: at most one thread per task (a larger one would only park idle threads), and at
  // most OpenMP's own thread count (OMP_NUM_THREADS, else one per core): max_threads may ask for
  // up to 65536 tasks, and a team that size is thousands of threads the OS may refuse (libgomp
  // then ends the process).
  const int64_t asked = std::min<int64_t>(*static_cast<const int*>(context), count);
  const int threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(asked, omp_get_max_threads())));
  if (threads == 1 || g_team_lost.load(std::memory_order_relaxed)) {
    for (int64_t i = 0; i < count; ++i) task(task_context, i);
    return;
  }
  g_team_ran.store(true, std::memory_order_relaxed);
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

namespace {

// A task that records its index once it has returned (one bit per index).
struct Tracked {
  void (*task)(void*, int64_t);
  void* task_context;
  int64_t count;
  std::atomic<uint64_t>* done;
};

void RunTracked(void* context, int64_t i) {
  const Tracked& k = *static_cast<const Tracked*>(context);
  if (i < 0 || i >= k.count) return;  // outside [0, count): ignored (qlinear.h)
  k.task(k.task_context, i);
  k.done[i / 64].fetch_or(uint64_t{1} << (i % 64), std::memory_order_release);
}

}  // namespace

void TaskSplit::Run(int64_t count, void (*task)(void*, int64_t), void* task_context) const {
  // Task counts are bounded by max_threads: the bits live on the stack, so nothing is allocated
  // here (a second runner call of a dynamic quantization comes after its scales are written).
  constexpr int64_t kWords = (QLINEAR_MAX_THREADS + 63) / 64;
  if (count > QLINEAR_MAX_THREADS) throw RunnerFailed("internal error: more tasks than QLINEAR_MAX_THREADS");
  std::atomic<uint64_t> done[kWords];
  for (int64_t w = 0; w < (count + 63) / 64; ++w) done[w].store(0, std::memory_order_relaxed);
  Tracked tracked{task, task_context, count, done};
  const X87ControlKeeper x87{};  // the caller's, whatever fesetround the runner calls
  try {
    parallel_for(context, count, RunTracked, &tracked);
  } catch (abi::__forced_unwind&) {
    throw;  // the thread is being cancelled or exits (pthread_exit): not an error to report
  } catch (...) {
    FpEnvGuard::Reset();  // the guard puts back only modes that differed from the defaults
    throw RunnerFailed(
        "options->parallel_for: threw an exception (a runner must not throw); the outputs may be "
        "partly written");
  }
  // The call goes on on this thread (scales, a second runner call) under the defaults, whatever
  // modes the runner left.
  FpEnvGuard::Reset();
  int64_t ran = 0;
  for (int64_t w = 0; w < (count + 63) / 64; ++w) {
    ran += __builtin_popcountll(done[w].load(std::memory_order_acquire));
  }
  if (ran != count) {
    char message[320];
    std::snprintf(message, sizeof(message),
                  "options->parallel_for: returned after %lld of its %lld tasks had run (it must call "
                  "task(task_context, i) for every i in [0, task_count) and return when all have "
                  "returned); the outputs may be partly written",
                  static_cast<long long>(ran), static_cast<long long>(count));
    throw RunnerFailed(message);
  }
}

}  // namespace qlinear
