#!/usr/bin/env bash
# Runs `qlinear check` over the ONNX node tests and expects the exact summary line.
# Usage: run_onnx_check.sh QLINEAR_BINARY NODE_TEST_DIR EXPECTED_SUMMARY
set -u
bin=$1 dir=$2 want=$3
if [[ ! -d $dir ]]; then
  echo "skipped: $dir is absent (QLINEAR_SHARED_DIR names the folder that holds onnx-node-tests/;"
  echo "README, 'The qlinear tool', says where ONNX's node tests come from)"
  exit 77
fi
out=$("$bin" check "$dir"); rc=$?
echo "$out"
last=$(tail -n 1 <<<"$out")
if [[ $rc -ne 0 || $last != "$want" ]]; then
  echo "expected exit 0 and summary '$want', got exit $rc and '$last'"
  exit 1
fi
