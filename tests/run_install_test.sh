#!/usr/bin/env bash
# Builds and installs qlinear static and shared, then builds the README examples against each
# installed tree with find_package(qlinear) and with pkg-config, and runs them.
# Usage: run_install_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
rm -rf "$work"
for kind in static shared; do
  shared=OFF; [[ $kind == shared ]] && shared=ON
  prefix=$work/$kind/prefix
  echo "== $kind: build and install"
  # Packaging is under test here, not the kernels: two Highway targets keep the two builds short.
  cmake -S "$src" -B "$work/$kind/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=$shared \
    -DQLINEAR_HWY_DISABLED_TARGETS="HWY_SSSE3|HWY_SSE4|HWY_AVX3_DL|HWY_AVX3" \
    -DQLINEAR_BUILD_TESTS=OFF -DQLINEAR_BUILD_TOOLS=OFF -DQLINEAR_BUILD_BENCH=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
  cmake --build "$work/$kind/build" -j 2 >/dev/null
  cmake --install "$work/$kind/build" >/dev/null
  if [[ $kind == shared ]]; then
    # Only the C ABI may be exported.
    lib=$(ls "$prefix"/lib*/libqlinear.so.[0-9]* | head -n 1)
    bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^qlinear_' | grep -v '^QLINEAR_' || true)
    if [[ -n $bad ]]; then echo "exported symbols besides qlinear_*: $bad"; exit 1; fi
  fi
  echo "== $kind: find_package consumer"
  cmake -S "$src/tests/consumer" -B "$work/$kind/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DEXAMPLES_DIR="$src/docs/examples" >/dev/null
  cmake --build "$work/$kind/consumer" >/dev/null
  "$work/$kind/consumer/example_c"
  "$work/$kind/consumer/example_cpp"
  "$work/$kind/consumer/training_cpp"
  echo "== $kind: pkg-config consumer"
  export PKG_CONFIG_PATH=$(dirname "$(ls "$prefix"/lib*/pkgconfig/qlinear.pc)")
  if [[ $kind == static ]]; then
    flags=$(pkg-config --static --cflags --libs qlinear)
  else
    flags="$(pkg-config --cflags --libs qlinear) -Wl,-rpath,$(pkg-config --variable=libdir qlinear)"
  fi
  cc -std=c99 -Wall -o "$work/$kind/pc_example_c" "$src/docs/examples/example.c" $flags
  c++ -std=c++17 -Wall -o "$work/$kind/pc_example_cpp" "$src/docs/examples/example.cpp" $flags
  "$work/$kind/pc_example_c" >/dev/null
  "$work/$kind/pc_example_cpp" >/dev/null
done
echo "install test passed"
