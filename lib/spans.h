// A run (plan.h) as the spans the per-target loops take: a stretch with one scale, or with a
// scale per element. Shared by the QuantizeLinear, DequantizeLinear and backward loops.
// Owns: how scales are laid out along a run. Must not know: types, vectors.
#ifndef QLINEAR_LIB_SPANS_H_
#define QLINEAR_LIB_SPANS_H_

#include <stdint.h>

#include <algorithm>

#include "hwy/base.h"
#include "kernels.h"
#include "plan.h"

namespace qlinear {

// How a span's scales and zero points vary: one for the span, or one per element.
enum class Scales { kUniform, kPerElement };

// Elements [j, j + len) of a run with one scale (s[0], r[0], z[0]) or one per element
// (s[k], r[k], z[k]). r: reciprocals of the scales, or null (divide). off: the fixed-point
// offsets of the zero points (QuantParams::offsets), or null.
struct Span {
  int64_t j, len;
  const float* s;
  const float* r;
  const int32_t* z;
  bool per_element;
  const float* off = nullptr;
};

// The decoded parameters of a run's first scale index.
struct RunParams {
  const float* s;
  const float* r;  // or null
  const int32_t* z;  // or null (QuantParams::zps)
  const float* off;  // or null
};
inline RunParams ParamsOfRun(const Run& run, const QuantParams& prm) {
  const int64_t k = run.scale_first - prm.first;
  return {prm.scales + k, prm.recips != nullptr ? prm.recips + k : nullptr, prm.zps != nullptr ? prm.zps + k : nullptr,
          prm.offsets != nullptr ? prm.offsets + k : nullptr};
}

// Calls fn(const Span&) for the spans of a run, in order: the whole run when it holds one scale
// or a scale per element; one span per block for blocks along the run; short blocks expanded to
// a scale per element through a stack buffer.
template <class Fn>
HWY_INLINE void ForEachSpan(const Run& run, const QuantParams& prm, Fn&& fn) {
  const RunParams p = ParamsOfRun(run, prm);
  if (run.phase + run.count <= run.period) {  // one scale (a run may start mid-block)
    fn(Span{0, run.count, p.s, p.r, p.z, false});
  } else if (run.period == 1) {
    fn(Span{0, run.count, p.s, p.r, p.z, true, p.off});
  } else if (run.period >= kMinBlockSpan) {  // one uniform span per block
    int64_t j = 0, len = run.period - run.phase;
    for (int64_t k = 0; j < run.count; ++k) {
      len = std::min(len, run.count - j);
      fn(Span{j, len, p.s + k, p.r != nullptr ? p.r + k : nullptr, p.z != nullptr ? p.z + k : nullptr, false});
      j += len;
      len = run.period;
    }
  } else {
    constexpr int64_t kStage = 256;
    HWY_ALIGN float sb[kStage];
    HWY_ALIGN float rb[kStage];
    HWY_ALIGN int32_t zb[kStage];
    for (int64_t j0 = 0; j0 < run.count; j0 += kStage) {
      const int64_t len = std::min(kStage, run.count - j0);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t k = (run.phase + j0 + j) / run.period;
        sb[j] = p.s[k];
        if (p.r != nullptr) rb[j] = p.r[k];
        if (p.z != nullptr) zb[j] = p.z[k];
      }
      fn(Span{j0, len, sb, p.r != nullptr ? rb : nullptr, p.z != nullptr ? zb : nullptr, true});
    }
  }
}

// For the runs covering [begin, end) in order: four(first) for each four consecutive runs that
// hold a scale per element (period 1), have the same scales and length, follow each other and
// pass grouped(run) (first: the first of them; they are rows of a kPerElement layout), one(run)
// for every other run. Loops that load each scale vector once for four rows use it.
template <class Grouped, class Four, class One>
void ForEachRowGroup(const Layout& l, int64_t begin, int64_t end, Grouped&& grouped, Four&& four, One&& one) {
  Run group{};
  int64_t rows = 0;
  auto flush = [&] {
    if (rows == 4) {
      four(static_cast<const Run&>(group));
    } else {
      for (int64_t row = 0; row < rows; ++row) {
        Run r = group;
        r.start += row * group.count;
        one(static_cast<const Run&>(r));
      }
    }
    rows = 0;
  };
  ForEachRun(l, begin, end, [&](const Run& r) {
    if (r.period != 1 || !grouped(r)) {
      flush();
      return one(r);
    }
    if (rows > 0 && (r.scale_first != group.scale_first || r.count != group.count ||
                     r.start != group.start + rows * group.count)) {
      flush();
    }
    if (rows == 0) group = r;
    if (++rows == 4) flush();
  });
  flush();
}

}  // namespace qlinear

#endif  // QLINEAR_LIB_SPANS_H_
