#!/usr/bin/env bash
# Disassembles one kernel unit of the library to SASS for sm_90, for static reading of its instruction stream
# (loop_report.py): how many instructions a loop issues per trip, which of them are address arithmetic, what a
# source change did to them. It measures nothing about time: no GPU is involved (docs/perf/2026-11-29-sass).
#
#   tools/sass/disasm.sh src/ops/attention/device_wide.cu OUT_DIR
#
# Writes OUT_DIR/<unit>.cubin, <unit>.sass (nvdisasm -c) and <unit>.ptxas.txt (ptxas's registers and spills per
# kernel). nvcc is the CUDA toolkit's (CUDACXX, else nvcc on PATH, else /usr/local/cuda/bin/nvcc), with the device
# flags of the gpu preset's kernel units, for sm_90 or SASS_ARCH (e.g. sm_80, for that architecture's registers in
# the ptxas report). nvdisasm is taken from PATH, else from the PyPI wheel
# nvidia-cuda-nvdisasm, downloaded once into ${XDG_CACHE_HOME:-~/.cache}/baracuda-nvdisasm (the toolkit on the build
# machines has no nvdisasm or cuobjdump).
set -euo pipefail
unit=${1:?usage: disasm.sh UNIT.cu OUT_DIR}
out=${2:?usage: disasm.sh UNIT.cu OUT_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$out"
name=$(basename "$unit" .cu)
name=$(basename "$(dirname "$unit")")_$name

nvdisasm=$(command -v nvdisasm || true)
if [[ -z $nvdisasm ]]; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/baracuda-nvdisasm
  nvdisasm=$(find "$cache" -name nvdisasm -type f 2>/dev/null | head -n 1 || true)  # no cache yet: empty
  if [[ -z $nvdisasm ]]; then
    mkdir -p "$cache"
    python3 -m pip download --quiet --no-deps --dest "$cache" nvidia-cuda-nvdisasm
    python3 -m zipfile -e "$cache"/nvidia_cuda_nvdisasm-*.whl "$cache/x"
    nvdisasm=$(find "$cache/x" -name nvdisasm -type f | head -n 1)
    chmod +x "$nvdisasm"
  fi
fi

"$nvcc" -DBARACUDA_HAVE_CUDA_KERNELS=1 -I"$root/include" -I"$root/src" -O3 -DNDEBUG -std=c++20 \
  --expt-relaxed-constexpr -arch=${SASS_ARCH:-sm_90} -cubin --resource-usage "$root/$unit" -o "$out/$name.cubin" \
  2> "$out/$name.ptxas.txt"
"$nvdisasm" -c "$out/$name.cubin" > "$out/$name.sass"
echo "$out/$name.sass"
