// A plan run whole on the calling thread, or in pieces through a caller's parallel-for.
// Owns: cutting a plan into pieces. Must not know: what a piece computes (the drivers' kPiece).
#ifndef QLINEAR_LIB_RUN_PLAN_H_
#define QLINEAR_LIB_RUN_PLAN_H_

#include <stdint.h>

#include <algorithm>

#include "dtype.h"
#include "fpenv.h"
#include "kernels.h"

namespace qlinear {

// kPiece(plan, params, y) over the whole plan, or over its pieces through split's parallel-for.
template <auto kPiece, class Plan>
void RunPlan(const Plan& p, void* y, const QuantParams& prm, const TaskSplit* split) {
  if (split == nullptr) return kPiece(p, prm, y);
  struct Context {
    const Plan* plan;
    void* y;
    const QuantParams* prm;
    int64_t per_task;
  } ctx{&p, y, &prm, split->per_task};
  const int64_t tasks = (p.end - p.begin + split->per_task - 1) / split->per_task;
  split->parallel_for(split->context, tasks, [](void* c, int64_t t) {
    const FpEnvGuard fp_env;  // the pool thread's own modes (qlinear.h)
    const Context& k = *static_cast<const Context*>(c);
    Plan piece = *k.plan;
    piece.begin = k.plan->begin + t * k.per_task;
    piece.end = std::min(k.plan->end, piece.begin + k.per_task);
    const int64_t skip = piece.begin - k.plan->begin;
    piece.x = static_cast<const char*>(k.plan->x) + ByteOffset(piece.x_type, skip);
    kPiece(piece, *k.prm, static_cast<char*>(k.y) + ByteOffset(piece.y_type, skip));
  }, &ctx);
}

}  // namespace qlinear

#endif  // QLINEAR_LIB_RUN_PLAN_H_
