#!/usr/bin/env bash
# device_suite.sh's `ncu` step: Nsight Compute on single profiler cases, to say why a kernel misses its target
# (stall reasons, issue rate, occupancy, memory throughput) where a timing alone cannot.
#   tools/gpu/ncu_cases.sh PROFILER OUT CASES
# CASES: a file of "name | kernel-name regex | kernels | profiler arguments" lines (tools/gpu/ncu_cases.txt), or
# such lines separated by ';' (NCU_CASES). For each case the profiler runs the case once after one warm-up, timed
# only (--verify-limit 1: no host check), and ncu profiles the first `kernels` launches whose function name matches
# the regex with its full section set, clocks left alone (METHOD.md: --clock-control none). Writes OUT/ncu.txt
# (per case: the details page, then the SASS instructions with the most stall samples, ncu_top_stalls.py) and
# OUT/ncu.tar.xz (the .ncu-rep reports and the whole per-instruction pages as CSV). A case capped at NCU_CAP seconds
# (default 120).
set -uo pipefail
prof=${1:?usage: ncu_cases.sh PROFILER OUT CASES}
out=${2:?usage: ncu_cases.sh PROFILER OUT CASES}
cases=${3:?usage: ncu_cases.sh PROFILER OUT CASES}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=/tmp/baracuda-ncu
rm -rf "$work" && mkdir -p "$work"
txt=$out/ncu.txt
: > "$txt"
if ! command -v ncu > /dev/null; then
  echo "ncu: not on PATH" | tee -a "$txt"
  exit 0
fi
ncu --version >> "$txt" 2>&1
if [[ -f $cases ]]; then list=$(grep -v '^[[:space:]]*#' "$cases" | grep -v '^[[:space:]]*$'); else list=$(tr ';' '\n' <<< "$cases"); fi
while IFS='|' read -r name regex count args; do
  name=$(xargs <<< "$name"); regex=$(xargs <<< "$regex"); count=$(xargs <<< "$count")
  [[ -n $name ]] || continue
  {
    echo "######## $name: $regex × $count: $args"
    # shellcheck disable=SC2086
    timeout "${NCU_CAP:-120}" ncu --clock-control none --target-processes all --set full --import-source no \
      --kernel-name "regex:$regex" --launch-count "$count" -f -o "$work/$name" \
      "$prof" --device cuda --csv --warmup 1 --repeat 1 --verify-limit 1 $args < /dev/null 2>&1 | grep -v '^==PROF==' | tail -n 20
    echo "ncu $name exit ${PIPESTATUS[0]}"
    if [[ -f $work/$name.ncu-rep ]]; then
      ncu -i "$work/$name.ncu-rep" --page details < /dev/null 2>&1
      ncu -i "$work/$name.ncu-rep" --page source --csv --print-source sass > "$work/$name.source.csv" 2>&1
      python3 "$here/ncu_top_stalls.py" "$work/$name.source.csv" 40 2>&1
    fi
  } >> "$txt"
  grep -E "^ncu $name exit" "$txt"
done <<< "$list"
tar -C "$work" -cf - . | xz -T0 > "$out/ncu.tar.xz"
