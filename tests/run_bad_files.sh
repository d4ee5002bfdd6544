#!/usr/bin/env bash
# `qlinear check` on truncated, corrupted, mislabelled and hostile test folders: one clear FAIL
# line per case, no crash, no hang, no unbounded allocation, and it carries on to the summary.
# Files are made with `protoc --encode`. Every run is bounded (timeout, virtual memory limit).
# Usage: run_bad_files.sh QLINEAR_BINARY WORK_DIR
set -euo pipefail
bin=$1 work=$2
proto_dir=/usr/include
rm -rf "$work" && mkdir -p "$work"
enc() { protoc -I"$proto_dir" --encode="$1" onnx/onnx.proto; }
# `qlinear check` with a time and a memory bound: 2 GiB of address space, or for a sanitizer
# build (which reserves far more address space than it uses) a 2 GiB allocation limit.
if (ulimit -v 2097152; "$bin" --version) > /dev/null 2>&1; then
  bounded() { (ulimit -v 2097152; timeout 60 "$bin" "$@"); }
else
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=2048
  bounded() { timeout 60 "$bin" "$@"; }
fi
check() { bounded check "$@"; }

model() {  # model(dir, op_type, [opset], [node attributes], [inputs: 2 or 3])
  local opset=${3:-21} attrs=${4:-} n=${5:-2}
  local inputs="input: \"x\" input: \"s\"" ginputs='input { name: "x" } input { name: "s" }'
  if [[ $n == 3 ]]; then inputs+=' input: "z"'; ginputs+=' input { name: "z" }'; fi
  enc onnx.ModelProto > "$1/model.onnx" <<EOT
ir_version: 8
opset_import { domain: "" version: $opset }
graph {
  name: "g"
  node { op_type: "$2" $inputs output: "y" $attrs }
  $ginputs
  output { name: "y" }
}
EOT
}
tensor() { enc onnx.TensorProto > "$1"; }
good_inputs() {
  mkdir -p "$1/test_data_set_0"
  tensor "$1/test_data_set_0/input_0.pb" <<'EOT'
dims: 2 data_type: 1 float_data: 1.5 float_data: -2.5
EOT
  tensor "$1/test_data_set_0/input_1.pb" <<'EOT'
data_type: 1 float_data: 0.5
EOT
  tensor "$1/test_data_set_0/output_0.pb" <<'EOT'
dims: 2 data_type: 2 int32_data: 3 int32_data: 0
EOT
}
case_dir() {  # case_dir(name, op, [opset], [attributes], [inputs]): a good case to spoil
  mkdir -p "$work/$1" && model "$work/$1" "$2" "${3:-21}" "${4:-}" "${5:-2}" && good_inputs "$work/$1"
}

# ---- Part 1: one folder of spoiled cases, one summary -------------------------------------------
mkdir -p "$work/set"
work_all=$work set_dir=$work/set
work=$set_dir
# 0. A good case (so the runner is shown to work on these files).
case_dir good QuantizeLinear
# 1. Truncated model.
case_dir truncated_model QuantizeLinear
head -c 17 "$work/truncated_model/model.onnx" > "$work/t" && mv "$work/t" "$work/truncated_model/model.onnx"
# 2. raw_data length does not match dims.
case_dir data_length QuantizeLinear
tensor "$work/data_length/test_data_set_0/input_0.pb" <<'EOT'
dims: 6 data_type: 1 raw_data: "\000\000\200?"
EOT
# 3. Unknown dtype code.
case_dir unknown_dtype QuantizeLinear
tensor "$work/unknown_dtype/test_data_set_0/input_1.pb" <<'EOT'
data_type: 99 raw_data: "\000\000\000?"
EOT
# 4. Wrong op.
case_dir wrong_op Relu
# 5. Missing input file.
case_dir missing_input QuantizeLinear
rm "$work/missing_input/test_data_set_0/input_1.pb"
# 6. Corrupted (garbage) tensor file.
case_dir garbage_pb QuantizeLinear
printf '\377\377\377\377\377\377\377\377\017garbage' > "$work/garbage_pb/test_data_set_0/input_0.pb"
# 7. Mislabelled: x says int8, which QuantizeLinear rejects (a library error, not a file error).
case_dir mislabelled QuantizeLinear
tensor "$work/mislabelled/test_data_set_0/input_0.pb" <<'EOT'
dims: 2 data_type: 3 int32_data: 1 int32_data: 2
EOT
work=$work_all

status=0
out=$(check "$set_dir") && { echo "expected a failing exit status"; status=1; }
echo "$out"
for c in truncated_model data_length unknown_dtype wrong_op missing_input garbage_pb mislabelled; do
  grep -q "^FAIL $set_dir/$c: ." <<<"$out" || { echo "no FAIL line for $c"; status=1; }
done
grep -q "raw_data has 4 bytes" <<<"$out" || { echo "data-length message missing"; status=1; }
grep -q "dtype code 99" <<<"$out" || { echo "unknown-dtype message missing"; status=1; }
grep -q "unsupported op 'Relu'" <<<"$out" || { echo "wrong-op message missing"; status=1; }
[[ $(tail -n 1 <<<"$out") == "1 passed, 7 failed" ]] || { echo "unexpected summary"; status=1; }
# --expect-error: the library's rejection of the mislabelled case is a pass.
check --expect-error -v "$set_dir/mislabelled" | tee /dev/stderr | grep -q "^1 passed, 0 failed$" || status=1

# ---- Part 2: each hostile case alone: exit status 1 and its message ----------------------------
expect_fail() {  # expect_fail(dir, message): one FAIL line with the message, exit status 1
  local rc=0 got
  got=$(check "$1" 2>&1) || rc=$?
  if [[ $rc -ne 1 ]] || ! grep -q "^FAIL .*$2" <<<"$got"; then
    echo "--- $1: expected exit 1 and a FAIL line with '$2', got exit $rc:"
    echo "$got" | head -n 20
    status=1
  else
    echo "ok $(basename "$1"): $(grep -m1 "^FAIL" <<<"$got")"
  fi
}

# Tensors that declare more than the file holds or the limit allows: refused before allocating.
case_dir huge_declared QuantizeLinear
tensor "$work/huge_declared/test_data_set_0/input_0.pb" <<'EOT'
dims: 268435456 data_type: 1
EOT
expect_fail "$work/huge_declared" "input_0.pb: 268435456 elements of float32 take 1073741824 bytes, over the 256 MiB tensor limit"
case_dir huge_product QuantizeLinear
tensor "$work/huge_product/test_data_set_0/input_0.pb" <<'EOT'
dims: 2147483648 dims: 2147483648 dims: 4 data_type: 1
EOT
expect_fail "$work/huge_product" "input_0.pb: dims declare more elements than the 256 MiB tensor limit allows"
case_dir short_int32_data QuantizeLinear 21 "" 3
tensor "$work/short_int32_data/test_data_set_0/input_2.pb" <<'EOT'
dims: 100000000 data_type: 2 int32_data: 1
EOT
expect_fail "$work/short_int32_data" "int32_data has 1 entries, dims need 100000000"
# A tensor file that is a symlink to an endless device.
case_dir dev_zero QuantizeLinear
ln -sf /dev/zero "$work/dev_zero/test_data_set_0/input_0.pb"
expect_fail "$work/dev_zero" "input_0.pb: not a regular file"
# Models that are empty, not a file, or hold no node.
case_dir empty_model QuantizeLinear
: > "$work/empty_model/model.onnx"
expect_fail "$work/empty_model" "model.onnx: the file is empty"
case_dir model_is_a_folder QuantizeLinear
rm "$work/model_is_a_folder/model.onnx" && mkdir "$work/model_is_a_folder/model.onnx"
expect_fail "$work/model_is_a_folder" "model.onnx: not a regular file"
mkdir -p "$work/no_node"
enc onnx.ModelProto > "$work/no_node/model.onnx" <<'EOT'
ir_version: 8
opset_import { domain: "" version: 21 }
graph { name: "g" }
EOT
expect_fail "$work/no_node" "the graph has no node"
# int64 attributes and opsets that do not fit, or lie outside the attribute's domain.
case_dir opset_wide QuantizeLinear 4294967321
expect_fail "$work/opset_wide" "opset_import: ai.onnx version 4294967321 is outside \[1, 2147483647\]"
case_dir opset_zero QuantizeLinear 0
expect_fail "$work/opset_zero" "opset_import: ai.onnx version 0 is outside"
case_dir output_dtype_wide QuantizeLinear 21 'attribute { name: "output_dtype" i: 4294967298 type: INT }'
expect_fail "$work/output_dtype_wide" "attribute output_dtype: 4294967298 is outside the int32 range"
case_dir precision_wide QuantizeLinear 23 'attribute { name: "precision" i: -4294967295 type: INT }'
expect_fail "$work/precision_wide" "attribute precision: -4294967295 is outside the int32 range"
for v in 2 -1 -2147483648; do
  case_dir "saturate_$v" QuantizeLinear 21 "attribute { name: \"saturate\" i: $v type: INT }"
  expect_fail "$work/saturate_$v" "attribute saturate: must be 0 or 1, got $v"
done
case_dir axis_float QuantizeLinear 21 'attribute { name: "axis" f: 1 type: FLOAT }'
expect_fail "$work/axis_float" "attribute axis: not an int"
case_dir unknown_attribute QuantizeLinear 21 'attribute { name: "rounding" i: 1 type: INT }'
expect_fail "$work/unknown_attribute" "attribute rounding: QuantizeLinear has no such attribute"
# An int32_data value outside the element type: an error, never its low byte.
case_dir zp_out_of_range QuantizeLinear 21 "" 3
tensor "$work/zp_out_of_range/test_data_set_0/input_2.pb" <<'EOT'
data_type: 2 int32_data: -2147483648
EOT
expect_fail "$work/zp_out_of_range" "int32_data\[0\] = -2147483648 is outside uint8's range \[0, 255\]"
# The same case with a valid zero point passes (the harness is not failing everything).
case_dir zp_in_range QuantizeLinear 21 "" 3
tensor "$work/zp_in_range/test_data_set_0/input_2.pb" <<'EOT'
data_type: 2 int32_data: 0
EOT
check "$work/zp_in_range" | grep -q "^1 passed, 0 failed$" || { echo "zp_in_range did not pass"; status=1; }

# Two sources of values in one tensor, a segment, ai.onnx imported twice: errors, not a choice.
case_dir raw_and_typed QuantizeLinear
tensor "$work/raw_and_typed/test_data_set_0/input_0.pb" <<'EOT'
dims: 2 data_type: 1 raw_data: "\000\000\300?\000\000 \300" float_data: 1.5 float_data: -2.5
EOT
expect_fail "$work/raw_and_typed" "input_0.pb: raw_data and typed data fields both hold values"
case_dir segment QuantizeLinear
tensor "$work/segment/test_data_set_0/input_0.pb" <<'EOT'
dims: 2 data_type: 1 float_data: 1.5 float_data: -2.5 segment { begin: 0 end: 2 }
EOT
expect_fail "$work/segment" "input_0.pb: a segment of a tensor (TensorProto.segment) is not supported"
mkdir -p "$work/two_opsets" && cp -r "$set_dir/good/test_data_set_0" "$work/two_opsets/"
enc onnx.ModelProto > "$work/two_opsets/model.onnx" <<'EOT'
ir_version: 8
opset_import { domain: "" version: 21 }
opset_import { domain: "ai.onnx" version: 10 }
graph { name: "g" node { op_type: "QuantizeLinear" input: "x" input: "s" output: "y" } input { name: "x" } input { name: "s" } output { name: "y" } }
EOT
expect_fail "$work/two_opsets" "opset_import: ai.onnx is imported twice"

# A node that does not name each of the operator's outputs: an error, not a pass.
outputs_case() {  # outputs_case(name, the node's output fields)
  mkdir -p "$work/$1" && cp -r "$set_dir/good/test_data_set_0" "$work/$1/"
  enc onnx.ModelProto > "$work/$1/model.onnx" <<EOT
ir_version: 8
opset_import { domain: "" version: 21 }
graph { name: "g" node { op_type: "QuantizeLinear" input: "x" input: "s" $2 } input { name: "x" } input { name: "s" } output { name: "y" } }
EOT
}
outputs_case no_outputs ""
expect_fail "$work/no_outputs" "QuantizeLinear has 1 output, the node names 0"
outputs_case two_outputs 'output: "y" output: "y2"'
expect_fail "$work/two_outputs" "QuantizeLinear has 1 output, the node names 2"
outputs_case unnamed_output 'output: ""'
expect_fail "$work/unnamed_output" "QuantizeLinear: output 0 has no name (every output is required)"

# Input files numbered with a gap: an error naming the file, never inputs shifted into others.
case_dir numbering_gap QuantizeLinear
mv "$work/numbering_gap/test_data_set_0/input_1.pb" "$work/numbering_gap/test_data_set_0/input_2.pb"
expect_fail "$work/numbering_gap" "input_2.pb: the input_\*.pb files must be numbered 0, 1, ... (expected input_1.pb)"
# Expected float8 codes are compared code for code: a NaN code of the other sign is a mismatch
# (QuantizeLinear of NaN into float8e4m3fn writes 0x7F), not two equal NaNs.
case_dir nan_code QuantizeLinear 21 "" 3
tensor "$work/nan_code/test_data_set_0/input_0.pb" <<'EOT'
dims: 2 data_type: 1 float_data: nan float_data: 1
EOT
tensor "$work/nan_code/test_data_set_0/input_1.pb" <<'EOT'
data_type: 1 float_data: 1
EOT
tensor "$work/nan_code/test_data_set_0/input_2.pb" <<'EOT'
data_type: 17 raw_data: "\000"
EOT
tensor "$work/nan_code/test_data_set_0/output_0.pb" <<'EOT'
dims: 2 data_type: 17 raw_data: "\377\070"
EOT
expect_fail "$work/nan_code" "output_0.pb index 0: expected -nan (0xff), got nan (0x7f)"
# The same case with the code it writes passes.
mkdir -p "$work_all/nan_ok" && cp -r "$work/nan_code" "$work_all/nan_ok/case"
tensor "$work_all/nan_ok/case/test_data_set_0/output_0.pb" <<'EOT'
dims: 2 data_type: 17 raw_data: "\177\070"
EOT
got=$(check "$work_all/nan_ok") || true
[[ $(tail -n 1 <<<"$got") == "1 passed, 0 failed" ]] || { echo "nan_ok: got '$got'"; status=1; }
# Entries that parse into far more memory than their bytes (2 MiB of empty nodes would take
# ~150 MiB; 2 MiB of empty strings ~70 MiB): rejected by the parse budget, not parsed.
case_dir empty_nodes QuantizeLinear
python3 -c 'import sys; b = b"\x0a\x00" * (1 << 20); n = len(b); v = b""
while True:
    v += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)]); n >>= 7
    if not n: break
sys.stdout.buffer.write(b"\x3a" + v + b)' > "$work/empty_nodes/model.onnx"
expect_fail "$work/empty_nodes" "model.onnx: its 2097157 bytes would take more than 4 bytes of memory each to parse"
case_dir empty_strings QuantizeLinear
python3 -c 'import sys; sys.stdout.buffer.write(b"\x32\x00" * (16 << 20))' > "$work/empty_strings/test_data_set_0/input_0.pb"
expect_fail "$work/empty_strings" "input_0.pb: its 33554432 bytes would take more than 4 bytes of memory each to parse"
# Fields the ONNX schema does not have (ModelProto field 9), and a known field with another wire
# type (TensorProto's name as a varint): protobuf keeps both on the heap, outside the parse
# budget's arena (about 50 bytes per 2-byte field: 64 MiB of them would take over 1.5 GiB).
case_dir unknown_fields QuantizeLinear
python3 -c 'import sys; sys.stdout.buffer.write(b"\x4a\x00" * (32 << 20))' >> "$work/unknown_fields/model.onnx"
expect_fail "$work/unknown_fields" "model.onnx: its [0-9]* bytes would take more than 4 bytes of memory each to parse"
case_dir wrong_wire_type QuantizeLinear
python3 -c 'import sys; sys.stdout.buffer.write(b"\x40\x00" * (32 << 20))' >> "$work/wrong_wire_type/test_data_set_0/input_0.pb"
expect_fail "$work/wrong_wire_type" "input_0.pb: its [0-9]* bytes would take more than 4 bytes of memory each to parse"
# 16-character values, unknown (ModelProto field 9) or known (TensorProto string_data): each
# also takes a heap buffer of 48 bytes, outside the arena.
case_dir unknown_strings QuantizeLinear
python3 -c 'import sys; sys.stdout.buffer.write((b"\x4a\x10" + b"s" * 16) * (2 << 20))' >> "$work/unknown_strings/model.onnx"
expect_fail "$work/unknown_strings" "model.onnx: its [0-9]* bytes would take more than 4 bytes of memory each to parse"
case_dir long_strings QuantizeLinear
python3 -c 'import sys; sys.stdout.buffer.write((b"\x32\x10" + b"s" * 16) * (2 << 20))' >> "$work/long_strings/test_data_set_0/input_0.pb"
expect_fail "$work/long_strings" "input_0.pb: its [0-9]* bytes would take more than 4 bytes of memory each to parse"

# Repeated numbers are budgeted by what they take once parsed (4 bytes per int32_data entry, in
# an array that doubles as it grows): 9M int8 elements in int32_data (a 9 MB file) are read;
# repeated numbers beyond the 256 MiB a tensor may take (34M int64_data entries) are refused
# before the parse.
mkdir -p "$work/int32_data/case/test_data_set_0" "$work/int64_data/case/test_data_set_0"
model "$work/int32_data/case" DequantizeLinear
cp "$work/int32_data/case/model.onnx" "$work/int64_data/case/"
python3 - "$work" <<'EOT'
import struct, sys
def varint(n):
    b = b""
    while True:
        b += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)]); n >>= 7
        if not n: return b
def field(number, payload): return varint(number << 3 | 2) + varint(len(payload)) + payload
def write(path, data): open(path, "wb").write(data)
n = 9_000_000
d = sys.argv[1] + "/int32_data/case/test_data_set_0/"
write(d + "input_0.pb", b"\x08" + varint(n) + b"\x10\x03" + field(5, b"\x01" * n))  # int8 ones
write(d + "input_1.pb", b"\x10\x01\x25" + struct.pack("<f", 0.5))
write(d + "output_0.pb", b"\x08" + varint(n) + b"\x10\x01" + field(9, struct.pack("<f", 0.5) * n))
n = 34_000_000
d = sys.argv[1] + "/int64_data/case/test_data_set_0/"
write(d + "input_0.pb", b"\x08\x01\x10\x03" + field(7, b"\x01" * n))
write(d + "input_1.pb", b"\x10\x01\x25" + struct.pack("<f", 0.5))
EOT
got=$(check "$work/int32_data") || true
[[ $(tail -n 1 <<<"$got") == "1 passed, 0 failed" ]] || { echo "int32_data of 9M elements: got '$got'"; status=1; }
expect_fail "$work/int64_data" "input_0.pb: a tensor's repeated numbers (int32_data, float_data, dims, ...) would take more than 256 MiB once parsed"
rm -rf "$work/int32_data" "$work/int64_data"
# A folder with two symlinks to itself around a good case: every folder is entered once, so the
# search ends at once and finds the case once.
mkdir -p "$work/loop" && cp -r "$set_dir/good" "$work/loop/good"
ln -s . "$work/loop/a" && ln -s . "$work/loop/b" && ln -s .. "$work/loop/good/up"
got=$(check "$work/loop") || true
[[ $(tail -n 1 <<<"$got") == "1 passed, 0 failed" ]] || { echo "symlink loop: got '$got'"; status=1; }
# A PATH that cannot be examined (a link to itself on the way): a FAIL line, not an abort.
mkdir -p "$work/selfloop" && ln -s me "$work/selfloop/me"
expect_fail "$work/selfloop/me/x" "Too many levels of symbolic links"
# A data set that is not a folder (a dangling link, a file): a FAIL line, not a skipped set.
mkdir -p "$work/badset" && cp -r "$set_dir/good" "$work/badset/good"
ln -s nowhere "$work/badset/good/test_data_set_1"
expect_fail "$work/badset" "test_data_set_1: No such file or directory"
rm "$work/badset/good/test_data_set_1" && echo junk > "$work/badset/good/test_data_set_1"
expect_fail "$work/badset" "test_data_set_1: not a folder"
# output_k.pb holds graph output k, whatever the node's order (ONNX's runner): DynamicQuantizeLinear
# with its graph outputs listed zero point, scale, y. x = [0, 255]: scale 1, zero point 0.
dql_case() {  # dql_case(dir, graph outputs): the model and that data set
  mkdir -p "$1/test_data_set_0"
  enc onnx.ModelProto > "$1/model.onnx" <<EOT
ir_version: 8
opset_import { domain: "" version: 11 }
graph {
  name: "g"
  node { op_type: "DynamicQuantizeLinear" input: "x" output: "y" output: "ys" output: "yz" }
  input { name: "x" }
  $2
}
EOT
  tensor "$1/test_data_set_0/input_0.pb" <<<'dims: 2 data_type: 1 float_data: 0 float_data: 255'
  tensor "$1/test_data_set_0/output_0.pb" <<<'data_type: 2 int32_data: 0'
  tensor "$1/test_data_set_0/output_1.pb" <<<'data_type: 1 float_data: 1'
  tensor "$1/test_data_set_0/output_2.pb" <<<'dims: 2 data_type: 2 int32_data: 0 int32_data: 255'
}
dql_case "$work/outputs/reordered" 'output { name: "yz" } output { name: "ys" } output { name: "y" }'
got=$(check "$work/outputs/reordered") || true
[[ $(tail -n 1 <<<"$got") == "1 passed, 0 failed" ]] || { echo "reordered graph outputs: got '$got'"; status=1; }
# A graph output that no node output is, and a graph without outputs: FAIL, not a pass.
dql_case "$work/outputs/unknown" 'output { name: "q" } output { name: "ys" } output { name: "y" }'
expect_fail "$work/outputs/unknown" "graph output 'q' is not an output of the node"
dql_case "$work/outputs/none" ''
expect_fail "$work/outputs/none" "the graph declares no outputs"
# Folders nested deeper than the search goes: a FAIL line naming the limit.
deep=$work/deep
for i in $(seq 1 40); do deep+=/d; done
mkdir -p "$deep" && cp -r "$set_dir/good" "$deep/good"
expect_fail "$work/deep" "levels below the PATH are not searched"
# A run that executes no case (only a multi-node graph: skipped) exits non-zero.
mkdir -p "$work/only_skipped/case"
enc onnx.ModelProto > "$work/only_skipped/case/model.onnx" <<'EOT'
ir_version: 8
opset_import { domain: "" version: 21 }
graph { name: "g" node { op_type: "Identity" input: "x" output: "t" } node { op_type: "Identity" input: "t" output: "y" } }
EOT
rc=0
got=$(check "$work/only_skipped") || rc=$?
if [[ $rc -ne 1 || $got != *"0 passed, 0 failed, 1 skipped"* || $got != *"no test case ran"* ]]; then
  echo "only skipped cases: expected exit 1 and 'no test case ran', got exit $rc: $got"
  status=1
fi
# fuzz-seed --format reader: a model the parse budget refuses (a good node, then 1M empty nodes
# merged into its graph) is copied as a file but never parsed whole into a runnable seed; a good
# case beside it still gets one.
seeds=$work/seeds
mkdir -p "$seeds/in" && cp -r "$set_dir/good" "$seeds/in/good"
case_dir seeds/in/merged QuantizeLinear
python3 -c 'import sys; b = b"\x0a\x00" * (1 << 20); n = len(b); v = b""
while True:
    v += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)]); n >>= 7
    if not n: break
sys.stdout.buffer.write(b"\x3a" + v + b)' >> "$work/seeds/in/merged/model.onnx"
bounded fuzz-seed --format reader "$seeds/in" "$seeds/out" > /dev/null 2>&1 || true
for f in good_runnable.onnx good_model.onnx merged_model.onnx merged_input_0.pb; do
  [[ -s $seeds/out/$f ]] || { echo "fuzz-seed: $f missing"; status=1; }
done
[[ ! -e $seeds/out/merged_runnable.onnx ]] || { echo "fuzz-seed: runnable seed from a refused model"; status=1; }
# A seed that cannot be written (a folder in its place): exit 1, a message with the reason, the
# folder left alone, the other seeds written.
mkdir -p "$seeds/blocked/good_model.onnx"
rc=0
got=$(bounded fuzz-seed --format reader "$seeds/in/good" "$seeds/blocked" 2>&1 >/dev/null) || rc=$?
if [[ $rc -ne 1 || $got != *"could not write $seeds/blocked/good_model.onnx: Is a directory"* ||
      ! -d $seeds/blocked/good_model.onnx || ! -s $seeds/blocked/good_runnable.onnx ]]; then
  echo "fuzz-seed into a blocked name: exit $rc: $got"
  status=1
fi
# The api seed format holds dimensions up to 39: a case of 64 elements is skipped with a reason
# (its dimension byte read back as 24), and the run still succeeds on the others.
mkdir -p "$seeds/wide" && cp -r "$seeds/in/good" "$seeds/wide/good"
mkdir -p "$seeds/wide/wide64/test_data_set_0" && model "$seeds/wide/wide64" QuantizeLinear
tensor "$seeds/wide/wide64/test_data_set_0/input_0.pb" <<<"dims: 64 data_type: 1 $(printf 'float_data: 1 %.0s' {1..64})"
cp "$seeds/in/good/test_data_set_0/input_1.pb" "$seeds/wide/wide64/test_data_set_0/"
rc=0
got=$(bounded fuzz-seed "$seeds/wide" "$seeds/wide_out" 2>&1 >/dev/null) || rc=$?
if [[ $rc -ne 0 || $got != *"skipped $seeds/wide/wide64: input_0.pb: a shape beyond the api seed format"* ||
      -e $seeds/wide_out/wide64 || ! -s $seeds/wide_out/good ]]; then
  echo "fuzz-seed of a wide case: exit $rc: $got"
  status=1
fi
# A FIFO in a seed's place: opening it would wait for a reader forever.
mkdir -p "$seeds/fifo" && mkfifo "$seeds/fifo/good_model.onnx"
rc=0
got=$(bounded fuzz-seed --format reader "$seeds/in/good" "$seeds/fifo" 2>&1 >/dev/null) || rc=$?
if [[ $rc -ne 1 || $got != *"could not write $seeds/fifo/good_model.onnx: not a regular file"* ]]; then
  echo "fuzz-seed into a FIFO: exit $rc: $got"
  status=1
fi
exit $status
