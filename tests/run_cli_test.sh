#!/usr/bin/env bash
# The `qlinear` tool's arguments and output: every bad argument is named on stderr with exit
# status 2; --help and --version go to stdout with status 0; `selftest` writes each target's row
# when it finishes, also into a pipe or file; progress appears on a terminal only; `info` prints no
# unknown microarchitecture and shows the target pin.
# Usage: run_cli_test.sh QLINEAR_BINARY VERSION
set -uo pipefail
bin=$1 version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

# expect(code, stream, regex, args...): exit status `code` and a line of `stream` (out|err)
# matching `regex`; a usage error also leaves stdout empty.
expect() {
  local code=$1 stream=$2 regex=$3
  shift 3
  local rc=0
  timeout 60 "$bin" "$@" > "$work/out" 2> "$work/err" || rc=$?
  if [[ $rc -ne $code ]] || ! grep -Eq -- "$regex" "$work/$stream" ||
     { [[ $code -eq 2 ]] && [[ -s $work/out ]]; }; then
    echo "FAIL qlinear $*: expected exit $code and $stream matching /$regex/, got exit $rc"
    echo "  stdout: $(head -c 400 "$work/out")"
    echo "  stderr: $(head -c 400 "$work/err")"
    status=1
  else
    echo "ok   qlinear $* -> $rc"
  fi
}

# Bad arguments: named, exit 2.
expect 2 err "--seconds: 'abc' is not a number of seconds" selftest --seconds abc
expect 2 err "--seconds: -1 is outside" selftest --seconds -1
expect 2 err "--seconds: 'nan' is not a number" selftest --seconds nan
expect 2 err "--seconds: 0 is outside" selftest --seconds 0
expect 2 err "--elements: '1e3' is not a whole number" demo --elements 1e3
expect 2 err "--elements: 1000000000 is outside \[1, 268435456\]" demo --elements 1000000000
expect 2 err "--elements: '0x10' is not a whole number" demo --elements 0x10
expect 2 err "--elements: '-5' is not a whole number" demo --elements=-5
expect 2 err "--bogus" demo --bogus
expect 2 err "extra" info extra
expect 2 err "--elements" demo --elements
expect 2 err "PATH is required|PATH" check
expect 2 err "OUT_DIR: At least 2 required" fuzz-seed only-one
expect 2 err "--format" fuzz-seed --format xml a b
mkdir -p "$work/no_tests"
expect 1 err "no single-node QuantizeLinear, DequantizeLinear or DynamicQuantizeLinear test" fuzz-seed "$work/no_tests" "$work/no_seeds"
expect 2 err "frobnicate" frobnicate
expect 2 err "[Uu]sage|COMMAND|Subcommands"
# --version and --help: stdout, exit 0.
expect 0 out "^qlinear $version\$" --version
expect 0 out "Subcommands|SUBCOMMAND" --help
for c in info check demo selftest fuzz-seed dynamic; do
  expect 0 out "Usage|Options" "$c" --help
done
expect 0 out "at most 256 MiB" check --help
# fuzz-seed's positional spells its own arity: no "(2x)" or "x 2" added to it.
expect 0 out "fuzz-seed \[OPTIONS\] PATH\.\.\. OUT_DIR\$" fuzz-seed --help
expect 0 out "^  PATH\.\.\. OUT_DIR REQUIRED " fuzz-seed --help
expect 0 out "32 folder levels" check --help
# A valid demo (a small one) still works.
expect 0 out "float32 -> int8" demo --elements 1000

# dynamic: bad options named; values on the grid of their scale come back exactly.
expect 2 err "--rule" dynamic --rule bogus
expect 2 err "--granularity" dynamic --granularity row
expect 2 err "needs --axis" dynamic --granularity axis
expect 2 err "--axis 'x' is not an axis" dynamic --axis x
expect 2 err "--axis ' 1' is not an axis" dynamic --axis " 1"
expect 2 err "--axis '\+1' is not an axis" dynamic --axis +1
expect 2 err "--axis '-' is not an axis" dynamic --axis=-
expect 2 err "unknown output type 'int7'" dynamic --type int7
expect 2 err "--type: rule ABSMAX" dynamic --type uint8 --elements 64
expect 2 err "--scale-type: rule MX" dynamic --rule mx --scale-type float32 --elements 64
expect 2 err "unknown scale type 'float'" dynamic --scale-type float
expect 2 err "--block-size: 0 is outside" dynamic --block-size 0
expect 2 err "--threads" dynamic --threads 0
expect 2 err "shape does not hold the data" dynamic --elements 16 --shape 3,5
expect 2 err "shape does not hold the data" dynamic --elements 16 --shape 200000000,200000000,200000000
expect 2 err "cannot read float32 values from .*/missing" dynamic --input "$work/missing"
expect 2 err "--type: float32 is not" dynamic --type float32 --elements 64
expect 2 err "unknown output type 'unknown'" dynamic --type unknown
expect 2 err "--axis: an empty value" dynamic --axis ""
expect 2 err "--scale-type: an empty value" dynamic --scale-type ""
expect 2 err "--input excludes --elements" dynamic --input "$work/missing" --elements 5
expect 2 err "tensor takes no --axis" dynamic --granularity tensor --axis 0
expect 2 err "--shape: 'x' is not a whole number" dynamic --elements 2 --shape 1,x
expect 2 err "--shape: '2,,4' has an empty dimension" dynamic --elements 8 --shape 2,,4
expect 2 err "--shape: '8,' has an empty dimension" dynamic --elements 8 --shape 8,
expect 2 err "--shape: ',8' has an empty dimension" dynamic --elements 8 --shape ,8
expect 2 err "--shape: 9223372036854775807 is outside" dynamic --elements 8 --shape 9223372036854775807
expect 2 err "--block-size: 99999999999999999999999 is outside" dynamic --block-size 99999999999999999999999
expect 0 out "shape \\[2, 4\\]" dynamic --elements 8 --shape 0002,4 --block-size 4
expect 2 err "--input: an empty path" dynamic --input ""
expect 2 err "not a regular file" dynamic --input /dev/zero
expect 2 err "not a regular file" dynamic --input "$work"
printf 'abcdefg' > "$work/seven.raw"
expect 2 err "not a multiple of 4 bytes" dynamic --input "$work/seven.raw"
# 32 integers with |x| <= 127 and 127 among them: ABSMAX int8 and POW2_CEIL int8 give scale 1,
# so no error. 32 values m * 2^k (m < 8, k < 3) with amax 28: the MX scale is 2^(4 - 8) and each
# x / 2^-4 is a float8e4m3fn value no larger than 448.
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<32f", *[127, -127] + [((-1)**i) * (i % 16) * (1 << (i % 3)) for i in range(30)]))' > "$work/grid.raw"
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<32f", *[28, -28] + [((-1)**i) * (i % 8) * (1 << (i % 3)) for i in range(30)]))' > "$work/mx.raw"
expect 0 out "SQNR +exact" dynamic --input "$work/grid.raw" --repeats 1
# A NaN gives its MX block the NaN scale: the block's finite values are reported lost, not exact.
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<4f", float("nan"), 1, 2, 3))' > "$work/nan.raw"
expect 0 out "^  3 finite values came back NaN \(left out above\): their group holds a NaN or Inf" dynamic --input "$work/nan.raw" --rule mx --type float8e4m3fn --repeats 1
# Values near FLT_MAX whose code x scale overflows float32: named as such, not as NaN groups.
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<64f", *[3.4028235e38, -3.4028235e38] * 32))' > "$work/big.raw"
expect 0 out "^  64 finite values came back \+-Inf \(left out above\): code x scale is beyond" dynamic --input "$work/big.raw" --type int8 --repeats 1
expect 2 err "--block-size needs granularity block \(granularity tensor has no blocks\)" dynamic --granularity tensor --block-size 64
# Output that cannot be written is a failure (exit 1, named on stderr), not a silent success.
rc=0
"$bin" info > /dev/full 2> "$work/err" || rc=$?
if [[ $rc -ne 1 ]] || ! grep -q "writing the output failed" "$work/err"; then
  echo "FAIL qlinear info > /dev/full: expected exit 1 and a message, got exit $rc: $(cat "$work/err")"
  status=1
else
  echo "ok   qlinear info > /dev/full -> 1"
fi
# A pinned or forced setting that makes every call fail is reported by `info` (exit 1); selftest
# runs every target itself and refuses a pin.
QLINEAR_TARGET=bogus expect 1 out "^calls fail: +QLINEAR_TARGET: 'bogus' is not a SIMD target" info
QLINEAR_QUANTIZE_PATH=bogus expect 1 out "^calls fail: +QLINEAR_QUANTIZE_PATH: 'bogus' is not one of" info
# check: settings that make calls fail are a FAIL before any case (under --expect-error those
# cases would pass, rejected).
QLINEAR_TARGET=bogus expect 1 out "^FAIL the environment: calls fail: QLINEAR_TARGET: 'bogus'" check --expect-error "$work"
# demo and dynamic: the environment's failure (exit 1) before any output, not a bad option (2).
QLINEAR_TARGET=bogus expect 1 err "^qlinear demo: calls fail: QLINEAR_TARGET: 'bogus'" demo --elements 1000
QLINEAR_QUANTIZE_PATH=bogus expect 1 err "^qlinear dynamic: calls fail: QLINEAR_QUANTIZE_PATH: 'bogus'" dynamic --elements 1000 --repeats 1
QLINEAR_TARGET=bogus expect 2 err "^qlinear dynamic: --axis: 5 is out of range" dynamic --elements 1000 --shape 10,100 --granularity axis --axis 5
QLINEAR_TARGET=bogus expect 2 err "^qlinear dynamic: unknown output type" dynamic --type bogus
QLINEAR_TARGET=SCALAR expect 2 err "runs every target itself; unset QLINEAR_TARGET \(set to 'SCALAR'\)" selftest --seconds 1
expect 0 out "SQNR +none" dynamic --input "$work/nan.raw" --rule mx --type float8e4m3fn --repeats 1
expect 0 out "SQNR +exact" dynamic --input "$work/mx.raw" --rule mx --type float8e4m3fn --repeats 1
expect 0 out "max \|x - DQ\(Q\(x\)\)\| +0 \(over 32 " dynamic --input "$work/grid.raw" --rule pow2_ceil --type int8 --repeats 1
expect 0 out "float8e8m0 scales \(2048\)" dynamic --elements 65536 --rule mx --type float4e2m1 --repeats 1
expect 0 out "scale per index along axis 0, float32 scales \(64\) and zero points" \
  dynamic --elements 65536 --rule minmax --type uint4 --granularity axis --axis 0 --threads 2 --repeats 1
expect 0 out "best of 1, up to 2 threads" dynamic --elements 4096 --threads 2 --repeats 1

# info: no unknown microarchitecture; the pin.
expect 0 out "target pinned: +no" info
if grep -q "UNKNOWN" "$work/out"; then echo "FAIL info prints an unknown microarchitecture"; status=1; fi
pin=$(sed -n 's/^target dispatched: *//p' "$work/out")  # compiled in every build of any preset
[[ -n $pin ]] || { echo "FAIL info: no dispatched target"; status=1; }
rc=0
QLINEAR_TARGET=$pin "$bin" info > "$work/out" || rc=$?
grep -q "^target pinned: *$pin (QLINEAR_TARGET)$" "$work/out" || { echo "FAIL info: no pin line"; status=1; }

# selftest into a file: the first target's row is there while later targets still run.
"$bin" selftest --seconds 4 > "$work/selftest.out" 2> "$work/selftest.err" &
pid=$!
rows=0
for _ in $(seq 1 60); do
  rows=$(grep -cE '^[A-Z0-9_]+ +[0-9]+ +[0-9]+ +pass' "$work/selftest.out" || true)
  ((rows > 0)) && break
  sleep 0.1
done
if ((rows == 0)) || ! kill -0 "$pid" 2>/dev/null; then
  echo "FAIL selftest: no row in its output file while it ran (rows: $rows)"
  status=1
else
  echo "ok   selftest wrote a row while running"
fi
wait "$pid" || { echo "FAIL selftest exit status"; status=1; }
grep -q "^selftest passed$" "$work/selftest.out" || { echo "FAIL selftest result"; status=1; }
# No progress text in a log (stderr is a file here) ...
[[ ! -s $work/selftest.err ]] || { echo "FAIL selftest wrote to stderr: $(head -c 200 "$work/selftest.err")"; status=1; }
# ... but on a terminal.
if command -v script > /dev/null; then
  script -qec "$bin selftest --seconds 1" /dev/null > "$work/tty.out" 2>&1 || true
  grep -q "cases" "$work/tty.out" && grep -q $'\r' "$work/tty.out" ||
    { echo "FAIL selftest shows no progress on a terminal"; status=1; }
fi
exit $status
