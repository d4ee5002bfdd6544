#!/usr/bin/env bash
# The Python layer's cost next to the C call and next to the NumPy expression, in one run:
# float32 -> int8 per tensor (scale 0.02), 64 and 2^20 elements, on the target dispatched here;
# then int4 codes one per element against packed bytes.
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
# 4-bit codes, 2^20 elements: one code per element (converted by the Python layer) against packed
# bytes (handed to the C call as they are).
setup="import numpy as np, qlinear; n = 1048576; x = np.random.default_rng(1).normal(0, 2, n).astype(np.float32)"
setup+="; y = np.empty(n, np.int8); yp = np.empty(n // 2, np.uint8); z = np.empty(n, np.float32)"
setup+="; q = qlinear.quantize_linear(x, 0.25, output_dtype='int4'); qp = qlinear.pack(q, 'int4')"
echo "== Python, int4, 1048576 elements: quantize to codes, to packed bytes; dequantize codes, packed bytes"
$py -m timeit -p -s "$setup" "qlinear.quantize_linear(x, 0.25, output_dtype='int4', out=y)"
$py -m timeit -p -s "$setup" "qlinear.quantize_linear(x, 0.25, output_dtype='int4', packed=True, out=yp)"
$py -m timeit -p -s "$setup" "qlinear.dequantize_linear(q, 0.25, x_dtype='int4', out=z)"
$py -m timeit -p -s "$setup" "qlinear.dequantize_linear(qp, 0.25, x_dtype='int4', packed=True, shape=(n,), out=z)"
