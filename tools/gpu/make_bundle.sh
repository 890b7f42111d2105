#!/usr/bin/env bash
# Packs a `gpu`-preset build (nvcc for sm_90 only) into .gpu-bundle/bundle.tar.xz for a GPU machine that has
# the CUDA toolkit but not the build's other dependencies: the test executables, the profiler, the
# examples and the static library (for the Python extension built there), plus the shared libraries they
# need that such a machine lacks (Boost.Context). The CUDA libraries (cudart, cuBLAS) are the machine's own.
# tools/gpu/device_suite.sh unpacks and runs it.
# Usage: tools/gpu/make_bundle.sh [build dir, default build/gpu]. BUNDLE_PYTHON=0 leaves out the static library and
# headers of the Python step (about half the bundle) when a call does not run that step. BUNDLE_BINS (names, e.g.
# "baracuda-profiler attention_test") keeps only those executables, when the whole set beside the working tree would
# pass the 64 MiB a lent machine's working tree may hold.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=${1:-build/gpu}
out=.gpu-bundle
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
find "$build/tests" "$build/tools" "$build/examples" -type f -executable \
  \( -name '*_test' -o -name sim_selftest -o -name "baracuda-*" -o -name int_gemm_tiles -o -name int4_gemm_configs \) -exec cp {} "$out/bin/" \;
if [[ -n "${BUNDLE_BINS:-}" ]]; then
  for f in "$out"/bin/*; do [[ " $BUNDLE_BINS " == *" $(basename "$f") "* ]] || rm "$f"; done
fi
for lib in $(ldd "$out"/bin/* 2>/dev/null | awk '/libboost/ {print $3}' | sort -u); do cp "$lib" "$out/lib/"; done
# The static library and the generated headers, for the Python extension built there (tools/gpu/python_ext).
mkdir -p "$out/py"
cp "$build/src/libbaracuda.a" "$build/src/sim/libbaracuda_sim_runtime.a" "$out/py/"
cp -r "$build/generated/include" "$out/py/include"
strip --strip-debug "$out"/py/*.a
strip --strip-unneeded "$out"/bin/* 2>/dev/null || true
# The tests read golden data from the source tree they were configured in.
pwd > "$out/source_dir"
git rev-parse HEAD > "$out/commit"
git status --porcelain --untracked-files=no | grep -q . && echo dirty >> "$out/commit"
# Every executable links the static library: a dictionary that spans several of them stores it about once
# (20 MB instead of 58 MB, under the 64 MiB a lent machine's working tree may hold; ~2 minutes, one thread).
parts="bin lib source_dir commit"
[[ "${BUNDLE_PYTHON:-1}" == 0 ]] || parts="py $parts"
# shellcheck disable=SC2086
tar -C "$out" -cf - $parts | xz -T1 --lzma2=preset=6,dict=256MiB > "$out.tar.xz"
rm -rf "$out"
mkdir "$out"
mv "$out.tar.xz" "$out/bundle.tar.xz"
du -sh "$out/bundle.tar.xz"
