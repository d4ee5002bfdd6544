#!/usr/bin/env bash
# Runs one fuzzer for a bounded time on a corpus seeded from the ONNX node tests and, when given,
# a kept corpus (read only: new inputs go to WORK_DIR/corpus).
# Usage: run_fuzzer.sh FUZZER SECONDS WORK_DIR QLINEAR_CLI NODE_TEST_DIR [SEED_FORMAT [KEPT_CORPUS_DIR]]
# SEED_FORMAT: api (default: calls for api_fuzzer and diff_fuzzer) or reader (the node tests'
# model and tensor files, for reader_fuzzer, which also runs under a tighter memory limit).
# For hours: run_fuzzer.sh build/fuzz/fuzz/api_fuzzer 14400 /tmp/api build/fuzz/tools/qlinear NODE_TEST_DIR api fuzz/corpus/api
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 cli=$4 nodes=$5 format=${6:-api} kept=${7:-}
mkdir -p "$work/corpus" "$work/seeds"
if [[ -d $nodes ]]; then "$cli" fuzz-seed --format "$format" "$nodes" "$work/seeds"; fi
dirs=("$work/corpus" "$work/seeds")
if [[ -n $kept && -d $kept ]]; then dirs+=("$kept"); fi
limits=(-rss_limit_mb=4096)
[[ $format == reader ]] && limits=(-rss_limit_mb=2048 -malloc_limit_mb=600)
# The whole log is kept; on a failure its report (from the first ERROR line) is printed, else the
# final statistics.
rc=0
"$fuzzer" -max_total_time="$seconds" "${limits[@]}" -print_final_stats=1 \
  -artifact_prefix="$work/" "${dirs[@]}" > "$work/fuzz.log" 2>&1 || rc=$?
if ((rc)); then
  sed -n '/ERROR\|runtime error\|check failed/,$p' "$work/fuzz.log" | head -n 80
else
  tail -n 12 "$work/fuzz.log"
fi
exit $rc
