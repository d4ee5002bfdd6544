#!/usr/bin/env bash
# The Python layer's cost next to the C call and next to the NumPy expression, in one run:
# float32 -> int8 per tensor (scale 0.02), 64 and 2^20 elements, on the target dispatched here.
# Compare CPU times, best of 5 (Google Benchmark's CPU column over 5 repetitions, timeit -p): on a
# shared machine wall times include the time other processes hold the core.
# Usage: python/bench.sh [BUILD_DIR]   (default build/release: the benchmark binary and the module)
set -euo pipefail
build=${1:-build/release}
py=/usr/bin/python3
export PYTHONPATH=$build/python
target=$($py -c 'import qlinear; print(qlinear.active_target())')
echo "== C: $build/bench/qlinear_bench (target $target)"
"$build/bench/qlinear_bench" --benchmark_min_time=0.5 --benchmark_repetitions=5 \
  --benchmark_filter="^(Overhead/float32->int8/tensor/$target/64|Quantize/float32->int8/tensor/$target/1048576)/real_time\$"
for n in 64 1048576; do
  setup="import numpy as np, qlinear; x = np.random.default_rng(1).normal(0, 2, $n).astype(np.float32)"
  setup+="; y = np.empty($n, np.int8); s = np.float32(0.02)"
  echo "== Python, $n elements: qlinear with out=, qlinear with a new array, the NumPy expression"
  $py -m timeit -p -s "$setup" 'qlinear.quantize_linear(x, 0.02, output_dtype=np.int8, out=y)'
  $py -m timeit -p -s "$setup" 'qlinear.quantize_linear(x, 0.02, output_dtype=np.int8)'
  $py -m timeit -p -s "$setup" 'np.clip(np.rint(x / s), -128, 127).astype(np.int8)'
done
