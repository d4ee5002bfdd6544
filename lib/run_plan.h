// A plan run whole on the calling thread, or in pieces through a caller's parallel-for.
// Owns: cutting a plan into pieces. Must not know: what a piece computes (the drivers' kPiece).
#ifndef QLINEAR_LIB_RUN_PLAN_H_
#define QLINEAR_LIB_RUN_PLAN_H_

#include <stdint.h>

#include <algorithm>

#include "dtype.h"
#include "fpenv.h"
#include "kernels.h"
#include "params.h"

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

// The bounds [b, e) of the consecutive pieces of a plan, each using at most about kWindowGroups
// scale indices (WindowPieceEnd); a packed tensor's pieces start on a byte of it. Returns false
// when the whole plan is one piece (fn not called).
template <class Plan, class Fn>
bool ForEachPieceBounds(const Plan& p, Fn&& fn) {
  if (WindowPieceEnd(p.layout, p.begin, p.end, kWindowGroups) == p.end) return false;
  const int bits = std::min(Info(p.x_type).bits, Info(p.y_type).bits);
  const int64_t per_byte = bits < 8 ? 8 / bits : 1;
  for (int64_t b = p.begin; b < p.end;) {
    int64_t e = WindowPieceEnd(p.layout, b, p.end, kWindowGroups);
    if (e < p.end && (e - p.begin) % per_byte != 0) {
      const int64_t down = e - (e - p.begin) % per_byte;
      e = down > b ? down : std::min(p.end, down + per_byte);
    }
    fn(b, e);
    b = e;
  }
  return true;
}

// run(piece, piece_y, workspace) over the plan in pieces (ForEachPieceBounds) on the calling
// thread, their decoded parameters in one workspace reserved before the first piece writes (may
// throw std::bad_alloc before that); or run(p, y, nullptr) when it is one piece.
template <class Plan, class Fn>
void RunInWindowPieces(const Plan& p, void* y, Fn&& run) {
  int64_t most = 0;
  const bool pieces = ForEachPieceBounds(p, [&](int64_t b, int64_t e) {
    int64_t first, count;
    ScaleWindow(p.layout, b, e, &first, &count);
    most = std::max(most, count);
  });
  if (!pieces) return run(p, y, static_cast<ParamsWorkspace*>(nullptr));
  CallWorkspace ws(most);
  ForEachPieceBounds(p, [&](int64_t b, int64_t e) {
    Plan piece = p;
    piece.begin = b;
    piece.end = e;
    piece.call_elements = ElementsForChoices(p);
    piece.x = static_cast<const char*>(p.x) + ByteOffset(p.x_type, b - p.begin);
    run(static_cast<const Plan&>(piece), static_cast<void*>(static_cast<char*>(y) + ByteOffset(p.y_type, b - p.begin)),
        ws.get());
  });
}

}  // namespace qlinear

#endif  // QLINEAR_LIB_RUN_PLAN_H_
