#!/usr/bin/env bash
# The install as a user makes it: `cmake --install BUILD --prefix P` of a tree configured without
# an install prefix (the test's own build tree: packaging is under test, and the tree is already
# built); move P (the tree must be relocatable), then build and run the docs/examples consumers:
# CMake with the shared and the static library, pkg-config with both, a C-only CMake project
# under old policies, and a plain `gcc app.c $(pkg-config --cflags --libs qlinear)`.
# Usage: run_install_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "install test: $*"; exit 1; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }

version=$(sed -n 's/^#define QLINEAR_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
          "$src/include/qlinear/qlinear.h" | paste -sd.)
major_minor=${version%.*}
# The smallest configuration a user embeds (no tests, benchmark or Python) still configures.
cmake -S "$src" -B "$work/minimal" -G Ninja -DQLINEAR_BUILD_TESTS=OFF -DQLINEAR_BUILD_BENCH=OFF \
  -DQLINEAR_BUILD_PYTHON=OFF >/dev/null || fail "the minimal configuration does not configure"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
echo "== install --prefix from $build ($build_type): qlinear $version"
cmake --install "$build" --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/moved"  # nothing may remember the install prefix
prefix=$work/moved
libdir=$(dirname "$(ls "$prefix"/lib*/libqlinear.a)")

echo "== installed files"
for f in include/qlinear/qlinear.h include/qlinear/qlinear.hpp bin/qlinear \
         share/doc/qlinear/LICENSE share/doc/qlinear/README.md share/doc/qlinear/CHANGELOG.md \
         share/doc/qlinear/docs/abi.md \
         share/doc/qlinear/docs/examples/example.c; do
  [[ -f $prefix/$f ]] || fail "missing $f"
done
for f in libqlinear.so libqlinear.so.$major_minor libqlinear.so.$version libqlinear.a \
         pkgconfig/qlinear.pc pkgconfig/qlinear-static.pc cmake/qlinear/qlinearConfig.cmake; do
  [[ -e $libdir/$f ]] || fail "missing $libdir/$f"
done
soname=$(readelf -d "$libdir/libqlinear.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == "libqlinear.so.$major_minor" ]] || fail "soname is '$soname'"
# Only the C ABI is exported.
bad=$(nm -D --defined-only "$libdir/libqlinear.so" | awk '{print $3}' | grep -v '^qlinear_' |
      grep -v '^QLINEAR_0$' || true)  # QLINEAR_0: the version script's node
[[ -z $bad ]] || fail "exported symbols besides qlinear_*: $bad"
# A Release install strips the CLI and the shared library (no .symtab).
if [[ $build_type == Release || $build_type == MinSizeRel ]]; then
  for f in "$prefix/bin/qlinear" "$libdir/libqlinear.so.$version"; do
    ! readelf -S "$f" | grep -q '\.symtab' || fail "$f is not stripped"
  done
fi
[[ $("$prefix/bin/qlinear" --version) == "qlinear $version" ]] || fail "qlinear --version"
grep -q "$work" "$libdir"/pkgconfig/*.pc "$libdir"/cmake/qlinear/*.cmake &&
  fail "an installed package file names the install prefix"

for kind in shared static; do
  echo "== CMake consumer, $kind"
  cmake -S "$src/tests/consumer" -B "$work/consumer-$kind" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DQLINEAR_LINK=$kind -DEXAMPLES_DIR="$src/docs/examples" >/dev/null
  cmake --build "$work/consumer-$kind" >/dev/null
  for app in example_c example_cpp training_cpp; do
    "$work/consumer-$kind/$app" >/dev/null || fail "$kind $app failed"
  done
  deps=$(needed "$work/consumer-$kind/example_c")
  if [[ $kind == shared ]]; then
    [[ $deps == *"libqlinear.so.$major_minor"* ]] || fail "shared consumer does not load libqlinear: $deps"
  else
    [[ $deps != *libqlinear* ]] || fail "static consumer loads libqlinear: $deps"
  fi
done

echo "== C-only CMake consumers, old policies"
cmake -Wno-deprecated -S "$src/tests/consumer_c" -B "$work/consumer-c-static" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DQLINEAR_LINK=static -DEXAMPLES_DIR="$src/docs/examples" >/dev/null
cmake --build "$work/consumer-c-static" >/dev/null
"$work/consumer-c-static/example_c" >/dev/null || fail "C-only static example_c failed"
# Without Highway's CMake package the archive is unusable; an optional component must not fail.
cmake -Wno-deprecated -S "$src/tests/consumer_c" -B "$work/consumer-c-nohwy" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DQLINEAR_LINK=shared -DCMAKE_DISABLE_FIND_PACKAGE_hwy=ON -DEXAMPLES_DIR="$src/docs/examples" >/dev/null
cmake --build "$work/consumer-c-nohwy" >/dev/null
"$work/consumer-c-nohwy/example_c" >/dev/null || fail "C-only shared example_c failed"

echo "== pkg-config consumers"
export PKG_CONFIG_PATH=$libdir/pkgconfig
ex=$src/docs/examples
# Exactly what a user types: a plain C program and the shared library.
gcc -o "$work/pc_shared_c" "$ex/example.c" $(pkg-config --cflags --libs qlinear)
LD_LIBRARY_PATH=$libdir "$work/pc_shared_c" >/dev/null || fail "pkg-config shared C example failed"
g++ -std=c++17 -o "$work/pc_shared_cpp" "$ex/example.cpp" $(pkg-config --cflags --libs qlinear) \
  -Wl,-rpath,"$(pkg-config --variable=libdir qlinear)"
"$work/pc_shared_cpp" >/dev/null || fail "pkg-config shared C++ example failed"
# The static archive: a complete link line for C and C++ programs.
gcc -o "$work/pc_static_c" "$ex/example.c" $(pkg-config --cflags --libs qlinear-static)
g++ -std=c++17 -o "$work/pc_static_cpp" "$ex/example.cpp" $(pkg-config --cflags --libs qlinear-static)
for app in pc_static_c pc_static_cpp; do
  "$work/$app" >/dev/null || fail "pkg-config static $app failed"
done
deps=$(needed "$work/pc_static_c")
[[ $deps != *libqlinear* ]] || fail "static pkg-config consumer loads libqlinear: $deps"
echo "a static consumer still loads: $deps"
echo "install test passed"
