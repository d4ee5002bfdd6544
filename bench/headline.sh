#!/usr/bin/env bash
# The headline benchmark subset (under two minutes), per tensor on every target and the
# reference: float32 -> int8 and the other output types, int8 -> float32, DynamicQuantizeLinear,
# the backward pass, and the ceiling.
# Usage: bench/headline.sh [BUILD_DIR] [extra benchmark flags, e.g. --benchmark_format=json]
# BUILD_DIR defaults to build/release (the release preset's, from the repository's root).
set -euo pipefail
build=build/release
if [[ $# -gt 0 && $1 != -* ]]; then build=$1; shift; fi
if [[ ! -x $build/bench/qlinear_bench ]]; then
  echo "headline.sh: no $build/bench/qlinear_bench (give the build folder: bench/headline.sh BUILD_DIR)" >&2
  exit 2
fi
"$build/bench/qlinear_bench" --benchmark_min_time=0.1 \
  --benchmark_filter='^(Quantize/float32->int8/tensor|Ceiling/load4store1/tensor|Quantize/float32->(uint8|int16|int4|uint2|float8e4m3fn|float4e2m1)/tensor|Dequantize/int8->float32/tensor|DynamicQuantize/float32->uint8/tensor|Backward/float32->int8/tensor)/[A-Z0-9_]+/(4096|65536|1048576|16777216)/real_time$' "$@"
