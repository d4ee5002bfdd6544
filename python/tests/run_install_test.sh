#!/usr/bin/env bash
# Installs the `python` component of a built tree into a scratch prefix, checks the package's
# files and exports, and imports it from there.
# Usage: run_install_test.sh BUILD_DIR WORK_DIR PYTHON PYTHON_INSTALL_DIR
set -euo pipefail
build=$1 work=$2 python=$3 dir=$4
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" --component python >/dev/null
pkg=$work/prefix/$dir/qlinear
for f in __init__.py __init__.pyi py.typed; do
  [[ -f $pkg/$f ]] || { echo "missing: $pkg/$f"; exit 1; }
done
so=$(ls "$pkg"/_qlinear.*.so)
# The extension exports its init function only (the library's symbols stay inside).
exports=$(nm -D --defined-only "$so" | awk '{print $3}')
if [[ $exports != PyInit__qlinear ]]; then echo "exports besides PyInit__qlinear: $exports"; exit 1; fi
cd "$work"
PYTHONPATH=$work/prefix/$dir "$python" -B -c '
import sys, numpy as np, qlinear
assert qlinear.__file__.startswith(sys.argv[1]), qlinear.__file__
y = qlinear.quantize_linear(np.float32([-1.0, 0.26, 2.5, 9.0]), 0.5, output_dtype="int4")
assert y.tolist() == [-2, 1, 5, 7], y
print("installed package imports from", qlinear.__file__)' "$work/prefix"
