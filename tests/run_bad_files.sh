#!/usr/bin/env bash
# `qlinear check` on truncated, corrupted and mislabelled test folders: one clear FAIL line per
# case, no crash, and it carries on to the summary. Files are made with `protoc --encode`.
# Usage: run_bad_files.sh QLINEAR_BINARY WORK_DIR
set -euo pipefail
bin=$1 work=$2
proto_dir=/usr/include
rm -rf "$work" && mkdir -p "$work"
enc() { protoc -I"$proto_dir" --encode="$1" onnx/onnx.proto; }

model() {  # model(dir, op_type, n_inputs)
  local inputs="input: \"x\" input: \"s\""
  local ginputs='input { name: "x" } input { name: "s" }'
  enc onnx.ModelProto > "$1/model.onnx" <<EOT
ir_version: 8
opset_import { domain: "" version: 21 }
graph {
  name: "g"
  node { op_type: "$2" $inputs output: "y" }
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

# 0. A good case (so the runner is shown to work on these files).
mkdir -p "$work/good" && model "$work/good" QuantizeLinear && good_inputs "$work/good"
# 1. Truncated model.
mkdir -p "$work/truncated_model" && model "$work/truncated_model" QuantizeLinear && good_inputs "$work/truncated_model"
head -c 17 "$work/truncated_model/model.onnx" > "$work/t" && mv "$work/t" "$work/truncated_model/model.onnx"
# 2. raw_data length does not match dims.
mkdir -p "$work/data_length" && model "$work/data_length" QuantizeLinear && good_inputs "$work/data_length"
tensor "$work/data_length/test_data_set_0/input_0.pb" <<'EOT'
dims: 6 data_type: 1 raw_data: "\000\000\200?"
EOT
# 3. Unknown dtype code.
mkdir -p "$work/unknown_dtype" && model "$work/unknown_dtype" QuantizeLinear && good_inputs "$work/unknown_dtype"
tensor "$work/unknown_dtype/test_data_set_0/input_1.pb" <<'EOT'
data_type: 99 raw_data: "\000\000\000?"
EOT
# 4. Wrong op.
mkdir -p "$work/wrong_op" && model "$work/wrong_op" Relu && good_inputs "$work/wrong_op"
# 5. Missing input file.
mkdir -p "$work/missing_input" && model "$work/missing_input" QuantizeLinear && good_inputs "$work/missing_input"
rm "$work/missing_input/test_data_set_0/input_1.pb"
# 6. Corrupted (garbage) tensor file.
mkdir -p "$work/garbage_pb" && model "$work/garbage_pb" QuantizeLinear && good_inputs "$work/garbage_pb"
printf '\377\377\377\377\377\377\377\377\017garbage' > "$work/garbage_pb/test_data_set_0/input_0.pb"
# 7. Mislabelled: x says int8, which QuantizeLinear rejects (a library error, not a file error).
mkdir -p "$work/mislabelled" && model "$work/mislabelled" QuantizeLinear && good_inputs "$work/mislabelled"
tensor "$work/mislabelled/test_data_set_0/input_0.pb" <<'EOT'
dims: 2 data_type: 3 int32_data: 1 int32_data: 2
EOT

status=0
out=$("$bin" check "$work") && { echo "expected a failing exit status"; status=1; }
echo "$out"
for c in truncated_model data_length unknown_dtype wrong_op missing_input garbage_pb mislabelled; do
  grep -q "^FAIL $work/$c: ." <<<"$out" || { echo "no FAIL line for $c"; status=1; }
done
grep -q "raw_data has 4 bytes" <<<"$out" || { echo "data-length message missing"; status=1; }
grep -q "dtype code 99" <<<"$out" || { echo "unknown-dtype message missing"; status=1; }
grep -q "unsupported op 'Relu'" <<<"$out" || { echo "wrong-op message missing"; status=1; }
[[ $(tail -n 1 <<<"$out") == "1 passed, 7 failed" ]] || { echo "unexpected summary"; status=1; }
# --expect-error: the library's rejection of the mislabelled case is a pass.
"$bin" check --expect-error -v "$work/mislabelled" | tee /dev/stderr | grep -q "^1 passed, 0 failed$" || status=1
exit $status
