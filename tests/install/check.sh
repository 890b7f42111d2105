#!/usr/bin/env bash
# Checks that baracuda can be consumed as a package and as a subdirectory:
#   1. installs the build in BUILD_DIR to a temporary prefix and builds tests/install against it with
#      find_package(baracuda), then runs the consumer;
#   2. builds tests/install with add_subdirectory(<this source tree>), configured as the `default` preset is
#      (Release, cuda kernels for sm_80 and sm_90), so that with ccache it reuses the default build's
#      objects; then runs it.
# Usage: tests/install/check.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
build_dir=$(cd "$1" && pwd)
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
jobs=${JOBS:-$(nproc)}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

echo "== install $build_dir -> $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"

echo "== consumer via find_package(baracuda)"
rm -rf "$work/package"
cmake -S "$src_dir/tests/install" -B "$work/package" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix"
cmake --build "$work/package" -j "$jobs"
"$work/package/consumer"

echo "== consumer via add_subdirectory(baracuda)"
rm -rf "$work/subdirectory"
cmake -S "$src_dir/tests/install" -B "$work/subdirectory" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBARACUDA_CONSUMER_MODE=subdirectory -DBARACUDA_SOURCE_DIR="$src_dir" -DBARACUDA_CUDA_KERNELS=ON \
  -DBARACUDA_CUDA_ARCHS="80;90"
cmake --build "$work/subdirectory" -j "$jobs"
"$work/subdirectory/consumer"
echo "== install check passed"
