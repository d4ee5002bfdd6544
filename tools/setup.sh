#!/usr/bin/env bash
# qlinear set-up on a fresh Debian 12 machine.
#   tools/setup.sh run    install packages, build the release preset, run `qlinear info` + demo
#   tools/setup.sh test   install packages, then the ci, asan (with the fuzzers), tsan and
#                         aarch64 (qemu) workflows
# As root, missing Debian packages are installed; otherwise the exact apt-get line is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
[[ $mode == run || $mode == test ]] || { echo "usage: $0 run|test" >&2; exit 2; }

apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
need=(g++ cmake ninja-build pkg-config libhwy-dev libcpu-features-dev libcli11-dev libgtest-dev libgmock-dev
      libbenchmark-dev libonnx-dev libprotobuf-dev protobuf-compiler
      libxnnpack-dev libpthreadpool-dev libopenmpi-dev openmpi-bin
      python3-dev python3-numpy pybind11-dev python3-pytest python3-venv python3-setuptools python3-wheel python3-onnx)
need_arm=()
if [[ $mode == test ]]; then
  need+=(g++-aarch64-linux-gnu qemu-user clang libclang-rt-14-dev)
  # qemu runs the tests with the arm64 loader and libraries from these (see cmake/aarch64-linux-gnu.cmake).
  need_arm=(libhwy-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libcpu-features-dev:arm64
            libstdc++6:arm64 libgomp1:arm64)
fi

missing() { for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"; done; }
miss=($(missing "${need[@]}"))
miss_arm=()
if ((${#need_arm[@]})); then miss_arm=($(missing "${need_arm[@]}")); fi
if ((${#miss[@]} + ${#miss_arm[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "Missing Debian packages. Run as root:"
    ((${#miss_arm[@]})) && echo "  dpkg --add-architecture arm64"
    echo "  apt-get update && apt-get install -y ${miss[*]} ${miss_arm[*]}"
    exit 1
  fi
  ((${#miss_arm[@]})) && dpkg --add-architecture arm64
  apt_get update
  DEBIAN_FRONTEND=noninteractive apt_get install -y --no-install-recommends "${miss[@]}" "${miss_arm[@]}"
fi

if [[ $mode == run ]]; then
  cmake --workflow --preset release
  build/release/tools/qlinear info
  build/release/tools/qlinear demo
  PYTHONPATH=build/release/python /usr/bin/python3 docs/examples/example.py
  exit 0
fi

start=$SECONDS
times=()
for preset in ci asan tsan aarch64; do
  t=$SECONDS
  cmake --workflow --preset "$preset"
  times+=("$preset $((SECONDS - t)) s")
done
printf 'workflow time: %s\n' "${times[@]}"
echo "all test workflows passed in $((SECONDS - start)) s"
