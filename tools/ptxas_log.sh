#!/usr/bin/env bash
# CUDA compiler launcher of the baracuda library (tools/ptxas_report.cmake): runs the compile command it is
# given (ccache included) and moves ptxas's per-kernel resource usage (printed by `--resource-usage`) from
# the output into <object>.ptxas.log, so the ptxas report reads the main build's figures instead of
# compiling every kernel again. Other output (warnings, errors) passes through; on failure, all of it.
set -uo pipefail
object=""
prev=""
for arg in "$@"; do
  [[ $prev == "-o" ]] && object=$arg
  prev=$arg
done
output=$(mktemp)
"$@" >"$output" 2>&1
rc=$?
usage='^(ptxas info|    [0-9]+ bytes stack frame)'
if [[ $rc -eq 0 && -n $object ]]; then
  grep -E "$usage" "$output" >"$object.ptxas.log"
  grep -vE "$usage" "$output" >&2
else
  cat "$output" >&2
fi
rm -f "$output"
exit "$rc"
