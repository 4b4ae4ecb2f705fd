#!/usr/bin/env bash
# Installs the built tc into a temporary prefix, builds tests/install as a consumer through
# find_package(tc) and pkg-config, and runs both consumers.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
cmake -S "$src/tests/install" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DEXAMPLE_SOURCE="$src/examples/gemm_c.c" > "$tmp/configure.log"
cmake --build "$tmp/consumer" > "$tmp/build.log"
export LD_LIBRARY_PATH=$tmp/prefix/lib:${LD_LIBRARY_PATH:-}
"$tmp/consumer/consumer_cmake"
"$tmp/consumer/consumer_pkgconfig"
