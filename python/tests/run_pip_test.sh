#!/usr/bin/env bash
# `pip install .` as docs/python.md shows it, from a copy of the sources: a virtual environment
# over Debian's packages, offline (--no-index, --no-build-isolation), setup.py driving the CMake
# build; then the pytest suite against the installed package.
# Usage: run_pip_test.sh SOURCE_DIR WORK_DIR PYTHON [CMAKE_ARGS]
set -euo pipefail
src=$1 work=$2 python=$3
unset PYTHONPATH  # the installed package, not a build tree's
rm -rf "$work"
mkdir -p "$work/src"
tar -C "$src" --exclude=./build --exclude=./.git --exclude='*.egg-info' -cf - . | tar -C "$work/src" -xf -
"$python" -m venv --system-site-packages "$work/venv"
cd "$work"
CMAKE_ARGS=${4:-} "$work/venv/bin/pip" install --no-index --no-build-isolation "$work/src"
"$work/venv/bin/python" -B -c 'import qlinear, sys; assert qlinear.__file__.startswith(sys.argv[1]), qlinear.__file__' \
  "$work/venv"
"$work/venv/bin/python" -B -m pytest -p no:cacheprovider -q "$src/python/tests"
