#!/usr/bin/env bash
# Runs one fuzzer for a bounded time on a corpus seeded from the ONNX node tests.
# Usage: run_fuzzer.sh FUZZER SECONDS WORK_DIR QLINEAR_CLI NODE_TEST_DIR
# For hours: run_fuzzer.sh build/fuzz/fuzz/api_fuzzer 14400 /tmp/api build/fuzz/tools/qlinear ../shared/onnx-node-tests
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 cli=$4 nodes=$5
mkdir -p "$work/corpus" "$work/seeds"
if [[ -d $nodes ]]; then "$cli" fuzz-seed "$nodes" "$work/seeds"; fi
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/corpus" "$work/seeds" 2>&1 | tail -n 25
