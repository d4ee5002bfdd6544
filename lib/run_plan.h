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
    int64_t per_task, tasks;
  } ctx{&p, y, &prm, split->per_task, (p.end - p.begin + split->per_task - 1) / split->per_task};
  split->Run(ctx.tasks, [](void* c, int64_t t) {
    const Context& k = *static_cast<const Context*>(c);
    if (t < 0 || t >= k.tasks) return;  // a runner's index outside [0, tasks): ignored (qlinear.h)
    const FpEnvGuard fp_env;  // the pool thread's own modes (qlinear.h)
    Plan piece = *k.plan;
    piece.begin = k.plan->begin + t * k.per_task;
    piece.end = std::min(k.plan->end, piece.begin + k.per_task);
    const int64_t skip = piece.begin - k.plan->begin;
    piece.x = static_cast<const char*>(k.plan->x) + ByteOffset(piece.x_type, skip);
    kPiece(piece, *k.prm, static_cast<char*>(k.y) + ByteOffset(piece.y_type, skip));
  }, &ctx);
}

// The bounds [b, e) of the consecutive pieces of a plan, each using at most about kWindowGroups
// scale indices (WindowPieceEnd), and whether the piece is a straddle byte. A packed tensor's
// pieces start on a byte of it, so a group end inside a byte leaves that byte (elements of two
// groups) as a piece of its own, run without decoded parameters: a byte that ends one sweep of a
// per-axis layout and starts the next would use every scale of the axis, and one across two block
// rows both rows. Returns false when the whole plan is one piece (fn not called).
template <class Plan, class Fn>
bool ForEachPieceBounds(const Plan& p, Fn&& fn) {
  if (WindowPieceEnd(p.layout, p.begin, p.end, kWindowGroups) == p.end) return false;
  const int bits = std::min(Info(p.x_type).bits, Info(p.y_type).bits);
  const int64_t per_byte = bits < 8 ? 8 / bits : 1;
  for (int64_t b = p.begin; b < p.end;) {  // b - p.begin: a multiple of per_byte
    const int64_t e = WindowPieceEnd(p.layout, b, p.end, kWindowGroups);
    const int64_t into_byte = (e - p.begin) % per_byte;
    if (e == p.end || into_byte == 0) {
      fn(b, e, false);
      b = e;
      continue;
    }
    const int64_t byte_begin = e - into_byte;  // >= b
    if (byte_begin > b) fn(b, byte_begin, false);
    b = std::min(p.end, byte_begin + per_byte);
    fn(byte_begin, b, true);
  }
  return true;
}

// run(piece, piece_y, workspace) over the plan in pieces (ForEachPieceBounds) on the calling
// thread, their decoded parameters (the arrays need(groups) names) in one workspace reserved
// before the first piece writes (may throw std::bad_alloc before that), and run_byte(piece,
// piece_y) for the straddle bytes; or run(p, y, nullptr) when the plan is one piece.
template <class Plan, class Need, class Fn, class ByteFn>
void RunInWindowPieces(const Plan& p, void* y, Need&& need, Fn&& run, ByteFn&& run_byte) {
  int64_t most = 0;
  const bool pieces = ForEachPieceBounds(p, [&](int64_t b, int64_t e, bool straddle) {
    int64_t first, count;
    ScaleWindow(p.layout, b, e, &first, &count);
    if (!straddle) most = std::max(most, count);
  });
  if (!pieces) return run(p, y, static_cast<ParamsWorkspace*>(nullptr));
  CallWorkspace ws(need(most));
  ForEachPieceBounds(p, [&](int64_t b, int64_t e, bool straddle) {
    Plan piece = p;
    piece.begin = b;
    piece.end = e;
    piece.call_elements = ElementsForChoices(p);
    piece.x = static_cast<const char*>(p.x) + ByteOffset(p.x_type, b - p.begin);
    void* piece_y = static_cast<char*>(y) + ByteOffset(p.y_type, b - p.begin);
    if (straddle) {
      run_byte(static_cast<const Plan&>(piece), piece_y);
    } else {
      run(static_cast<const Plan&>(piece), piece_y, ws.get());
    }
  });
}

}  // namespace qlinear

#endif  // QLINEAR_LIB_RUN_PLAN_H_
