#!/usr/bin/env bash
# Checks that baracuda can be consumed as a package and as a subdirectory:
#   1. installs the build in BUILD_DIR to a temporary prefix and builds tests/install against it with
#      find_package(baracuda), then runs the consumer;
#   2. builds tests/install with add_subdirectory(<this source tree>), configured as BUILD_DIR is (its
#      compiler, build type, compiler flags, cuda kernels and architectures, sanitizers, fuzzer coverage), so
#      that with ccache it reuses BUILD_DIR's objects; then runs it.
# Usage: tests/install/check.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
build_dir=$(cd "$1" && pwd)
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
jobs=${JOBS:-$(nproc)}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# BUILD_DIR's value of a cache variable (empty when unset).
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" | head -n 1; }
build_type=$(cached CMAKE_BUILD_TYPE)
build_type=${build_type:-Release}
type_upper=$(echo "$build_type" | tr '[:lower:]' '[:upper:]')
same_config=(-DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_FLAGS_"$type_upper"="$(cached CMAKE_CXX_FLAGS_"$type_upper")"
             -DCMAKE_CUDA_FLAGS_"$type_upper"="$(cached CMAKE_CUDA_FLAGS_"$type_upper")"
             -DBARACUDA_SANITIZE="$(cached BARACUDA_SANITIZE)" -DCMAKE_CXX_COMPILER="$(cached CMAKE_CXX_COMPILER)")

echo "== install $build_dir -> $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"

echo "== consumer via find_package(baracuda)"
rm -rf "$work/package"
cmake -S "$src_dir/tests/install" -B "$work/package" "${gen[@]}" "${same_config[@]}" \
  -DCMAKE_PREFIX_PATH="$work/prefix"
cmake --build "$work/package" -j "$jobs"
"$work/package/consumer"

echo "== consumer via add_subdirectory(baracuda)"
rm -rf "$work/subdirectory"
cmake -S "$src_dir/tests/install" -B "$work/subdirectory" "${gen[@]}" "${same_config[@]}" \
  -DBARACUDA_CONSUMER_MODE=subdirectory -DBARACUDA_SOURCE_DIR="$src_dir" \
  -DBARACUDA_CUDA_KERNELS="$(cached BARACUDA_CUDA_KERNELS)" -DBARACUDA_CUDA_ARCHS="$(cached BARACUDA_CUDA_ARCHS)" \
  -DBARACUDA_BUILD_FUZZERS="$(cached BARACUDA_BUILD_FUZZERS)" \
  -DBARACUDA_FATBIN_NO_COMPRESS="$(cached BARACUDA_FATBIN_NO_COMPRESS)"
# With debug info (the `asan` preset's -g1) ccache serves this build BUILD_DIR's objects only when both
# were built with CCACHE_NOHASHDIR set (.ci/run sets it).
cmake --build "$work/subdirectory" -j "$jobs"
"$work/subdirectory/consumer"
echo "== install check passed"
