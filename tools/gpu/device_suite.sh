#!/usr/bin/env bash
# The whole GPU check in one command, for a lent GPU machine (no network, ~10 minutes a command): unpacks
# .gpu-bundle/bundle.tar.xz (tools/gpu/make_bundle.sh), then
#   1. every test executable's cuda cases (--gtest_filter '*cuda*:*Cuda*'),
#   2. the profiler: the int8 GEMM family (with its cuBLAS fp16 baseline), then every other family,
#   3. compute-sanitizer memcheck and racecheck over the int8 GEMM and PTX-layer GPU tests, memcheck over
#      the quantization families' GPU tests,
#   4. (step `tiles`) the int8 GEMM tile candidates (tools/tuning/int_gemm_tiles.cu) and the resource usage
#      (registers, stack, spills) of every kernel of the bundle,
#   5. (step `int4_configs`) the W4A16 GEMM's candidate block shapes (tools/tuning/int4_gemm_configs.cu) and
#      their kernels' resource usage.
#   6. (step `tma_sass`) the SASS around the tensor copies of tma_test and of the int8 GEMM's TMA kernel,
#   7. (step `python`) the Python extension, built there against the bundle's library, and the pytest suite,
#      whose cuda cases (python/tests/test_cuda.py) run only on a GPU.
#   8. (step `sdpa`, before the profiler) PyTorch's scaled_dot_product_attention, forward and backward, on the
#      attention rows' shapes and a copy of the paged_decode rows' K and V bytes (tools/gpu/sdpa_baseline.py):
#      the attention and decode profiler rows' peers.
#   9. (step `ncu`) Nsight Compute on single profiler cases (tools/gpu/ncu_cases.txt, or NCU_CASES): each case's
#      kernels' speed of light, occupancy, scheduler and warp-state statistics (the stall reasons), memory
#      workload, and the SASS instructions with the most stall samples (tools/gpu/ncu_top_stalls.py). Clocks left
#      alone (--clock-control none, METHOD.md). Needs a machine whose runtime lets ncu read the counters
#      (Firecracker; the device library's KINDS.md); elsewhere the step says so and the others are unaffected.
# Each step has a time cap so that the results of the earlier ones always come back. Results go to $OUT:
# env.txt, tests.log, profile.csv (one CSV, a header per family), profile.err, sanitizer.log, tiles.csv,
# resources.txt (both tuning steps append to it), int4_configs.csv, tma_sass.txt, python.log, sdpa.csv, ncu.txt and
# ncu.tar.xz (the reports and each case's whole per-instruction page).
# Usage (repository root): tools/gpu/device_suite.sh [steps, default "tests profile sanitize"]
# PROFILE_OPS (default: every family) narrows the profiler step, e.g. PROFILE_OPS="int_gemm unary". The
# profiler writes each CSV row as its case finishes, so a family that outruns its cap keeps what it measured;
# the caps are from the 2026-11-26 H100 run (the int4 GEMM's host checks stop at 2e9 flops; the tests check
# the rest). PROFILE_ARGS adds arguments to every profiler call (e.g. "--verify-limit 2e9"). TESTS (default: every
# test executable) narrows the tests step, e.g. TESTS="attention_test rope_test". SANITIZE ("cap:tool:test:filter"
# items) replaces the sanitizer step's list. PROFILE_CAPS ("op=seconds ...") overrides the profiler's caps and TEST_CAP
# (seconds, default 150) each test executable's.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
steps=${1:-tests profile sanitize}
OUT=${OUT:-/tmp/baracuda-gpu-out}
mkdir -p "$OUT" && rm -f "$OUT/resources.txt"
b=/tmp/baracuda-bundle
rm -rf "$b" && mkdir -p "$b" && xz -dc .gpu-bundle/bundle.tar.xz | tar -C "$b" -xf - || exit 1
# Golden data: the tests look for the source tree at the path they were configured in.
src=$(cat "$b/source_dir")
if [[ ! -d "$src/tests/data" ]]; then mkdir -p "$(dirname "$src")" && ln -sfn "$(pwd)" "$src"; fi
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for lib in libcublas.so.13 libcudart.so.13; do
  if ! ldconfig -p | grep -q "$lib" && [[ ! -e /usr/local/cuda/lib64/$lib ]]; then
    f=$(find / -name "$lib" -not -path '*/proc/*' 2>/dev/null | head -1)
    [[ -n "$f" ]] && export LD_LIBRARY_PATH="$(dirname "$f"):$LD_LIBRARY_PATH"
  fi
done
bin=$b/bin

{
  date -u; cat "$b/commit"; nvidia-smi; nvcc --version | tail -2
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; ldd "$bin/baracuda-profiler" | grep -E 'cuda|cublas|boost|not found'
} > "$OUT/env.txt" 2>&1

if [[ " $steps " == *" tests "* ]]; then
  echo "== tests (cuda cases)"
  logs=/tmp/baracuda-test-logs && rm -rf $logs && mkdir -p $logs
  # shellcheck disable=SC2086
  { if [[ -n "${TESTS:-}" ]]; then printf '%s\n' $TESTS; else ls "$bin" | grep -E '_test$'; fi; } | xargs -P 8 -I{} sh -c \
    "timeout ${TEST_CAP:-150} $bin/{} --gtest_filter='*cuda*:*Cuda*' > $logs/{}.log 2>&1; echo \"{} exit \$?\" >> $logs/{}.log"
  timeout 60 "$bin/baracuda-smooth-quant" > $logs/example_smooth_quant.log 2>&1; echo "example exit $?" >> $logs/example_smooth_quant.log
  # Whole logs (every case's name: a crash shows which case it was in), the passing cases' lines dropped.
  for f in $logs/*.log; do echo "### $(basename "$f")"; grep -v '^\[       OK \]' "$f"; done > "$OUT/tests.log"
  grep -E ' exit [0-9]+$' "$OUT/tests.log"
fi

if [[ " $steps " == *" tma_sass "* ]]; then
  echo "== SASS around the tensor copies of tma_test and of the int8 GEMM's TMA kernel"
  {
    # tma_test: every function that issues a tensor copy, whole; the GEMM: 60 instructions before each copy.
    echo "### tma_test"
    cuobjdump -sass "$bin/tma_test" | awk '/Function :/ {if (f ~ /UTMALDG/) printf "%s", f; f=""} {f = f $0 "\n"}
      END {if (f ~ /UTMALDG/) printf "%s", f}' | head -n 3000
    echo "### int_gemm_test"
    cuobjdump -sass "$bin/int_gemm_test" | grep -E 'Function :|^ +/\*[0-9a-f]+\*/' | grep -B60 -A8 UTMALDG | head -n 600
  } > "$OUT/tma_sass.txt" 2>&1
  wc -l "$OUT/tma_sass.txt"
fi

if [[ " $steps " == *" python "* ]]; then
  echo "== python (the extension built here against the bundle's library; pytest, cuda cases included)"
  py=/tmp/baracuda-python
  rm -rf "$py"
  { timeout 240 cmake -S tools/gpu/python_ext -B "$py" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUNDLE="$b" \
      -DPython_EXECUTABLE="$(command -v python3)" && timeout 240 cmake --build "$py" -j 16; } > "$OUT/python.log" 2>&1
  echo "python build exit $?"
  cp python/baracuda/*.py "$py/python/baracuda/"
  # jax on the CPU: the host/sim tests hand jax arrays to the CPU devices (CUDA arrays are torch's and cupy's).
  (cd python/tests && PYTHONPATH="$py/python" JAX_PLATFORMS=cpu timeout 300 python3 -m pytest -q -p no:cacheprovider \
     -n 8 -rfEs . ) >> "$OUT/python.log" 2>&1
  echo "pytest exit $?"; grep -E '^(FAILED|ERROR)|passed|failed' "$OUT/python.log" | tail -n 40
fi

if [[ " $steps " == *" sdpa "* ]]; then
  echo "== PyTorch SDPA on the attention_prefill shapes"
  timeout 180 python3 tools/gpu/sdpa_baseline.py > "$OUT/sdpa.csv" 2>&1; echo "sdpa exit $?"
  cat "$OUT/sdpa.csv"
fi

if [[ " $steps " == *" profile "* ]]; then
  echo "== profiler"
  : > "$OUT/profile.csv"; : > "$OUT/profile.err"
  prof() {  # cap, then profiler arguments
    local cap=$1; shift
    echo "# $*" >> "$OUT/profile.csv"
    # shellcheck disable=SC2086
    timeout "$cap" "$bin/baracuda-profiler" --device cuda --csv "$@" ${PROFILE_ARGS:-} >> "$OUT/profile.csv" 2>> "$OUT/profile.err"
    echo "profiler $* exit $?"
  }
  # Every family with a scenario file (a new family is profiled without a line here), alphabetically;
  # a family's cap (seconds) and extra arguments where the defaults (60 s) do not fit.
  declare -A cap=([int_gemm]=120 [int4_gemm]=90 [int4_marlin_repack]=30 [gated_activation]=150 [quantize]=40
                  [fp8]=20 [dynamic_range_quantize]=30 [cast]=25 [fill]=10 [affine]=10 [ternary]=90 [unary]=150
                  [binary]=150 [paged_prefill]=90 [attention_prefill]=120)
  # shellcheck disable=SC2086
  for item in ${PROFILE_CAPS:-}; do cap[${item%%=*}]=${item#*=}; done  # "op=seconds ...": this call's caps
  declare -A extra=([int4_gemm]="--verify-limit 2e9" [unary]="--repeat 10 --warmup 2" [binary]="--repeat 10 --warmup 2")
  all=$(ls tools/profiler/scenarios/*.cpp | xargs -n1 basename | sed 's/\.cpp$//' | grep -vx 'common\|registry')
  for op in ${PROFILE_OPS:-$all}; do
    # shellcheck disable=SC2086
    prof "${cap[$op]:-60}" --op "$op" ${extra[$op]:-}
  done
fi

if [[ " $steps " == *" ncu "* ]]; then
  echo "== Nsight Compute"
  tools/gpu/ncu_cases.sh "$bin/baracuda-profiler" "$OUT" "${NCU_CASES:-tools/gpu/ncu_cases.txt}"
fi

if [[ " $steps " == *" tiles "* ]]; then
  echo "== int8 GEMM tiles"
  timeout 240 "$bin/int_gemm_tiles" 10 > "$OUT/tiles.csv" 2>&1; echo "int_gemm_tiles exit $?"
  for f in int_gemm_tiles baracuda-profiler; do
    echo "### $f"
    cuobjdump --dump-resource-usage "$bin/$f" 2>&1 | grep -E 'Function|REG' | paste - - | \
      sed -E 's/.*Function ([^:]*):.*REG:([0-9]+) STACK:([0-9]+) SHARED:([0-9]+) LOCAL:([0-9]+).*/\2 regs \3 stack \5 local \1/' | \
      c++filt | grep -E 'int_gemm|local [1-9]|stack [1-9]'
  done >> "$OUT/resources.txt" 2>&1
fi

if [[ " $steps " == *" int4_configs "* ]]; then
  echo "== W4A16 GEMM block shapes"
  timeout 400 "$bin/int4_gemm_configs" 20 > "$OUT/int4_configs.csv" 2>&1; echo "int4_gemm_configs exit $?"
  cuobjdump --dump-resource-usage "$bin/int4_gemm_configs" 2>&1 | grep -E 'Function|REG' | paste - - | \
    sed -E 's/.*Function ([^:]*):.*REG:([0-9]+) STACK:([0-9]+) SHARED:([0-9]+) LOCAL:([0-9]+).*/\2 regs \3 stack \5 local \1/' | \
    c++filt | grep -E 'w4a16_kernel' | sed 's/^/int4_gemm_configs: /' >> "$OUT/resources.txt" 2>&1
fi

if [[ " $steps " == *" sanitize "* ]]; then
  echo "== compute-sanitizer"
  cs() {  # cap, tool, test, filter
    echo "### $2 $3 $4"
    timeout "$1" compute-sanitizer --tool "$2" --error-exitcode 9 "$bin/$3" --gtest_filter="$4" --gtest_brief=1 2>&1 | tail -n 25
    echo "$2 $3 exit ${PIPESTATUS[0]}"
  }
  {
    if [[ -n "${SANITIZE:-}" ]]; then
      set -f; for item in $SANITIZE; do IFS=: read -r c t x f <<< "$item"; cs "$c" "$t" "$x" "$f"; done; set +f
    else
    cs 60 memcheck int_gemm_test '*cuda*'
    cs 60 racecheck int_gemm_test '*IntGemmOnDevice.ExactOnRagged*cuda*'
    cs 30 memcheck ptx_test '*cuda*'
    cs 30 racecheck ptx_test '*cuda*'
    cs 30 memcheck wgmma_test '*cuda*'
    cs 30 memcheck tma_test '*cuda*'
    cs 40 memcheck dynamic_range_quantize_test '*cuda*'
    cs 40 memcheck fp8_test '*cuda*'
    cs 60 memcheck int4_gemm_test '*cuda*'
    cs 30 memcheck int4_marlin_repack_test '*cuda*'
    fi
  } > "$OUT/sanitizer.log" 2>&1
  grep -E ' exit [0-9]+$' "$OUT/sanitizer.log"
fi
echo "== done"
