#!/usr/bin/env bash
# Measures baracuda on the GPU of this machine and records the results in docs/perf/:
#   docs/perf/<date>-<gpu>.txt   the profiler's table (default suite on the cuda device), with how it was made
#   docs/perf/<date>-<gpu>.json  the same rows as JSON
# It fails (and writes nothing) when no GPU is usable: figures are only ever taken from real GPU runs.
# Usage: bench/run_gpu.sh [PRESET] [extra profiler arguments...]   (PRESET: gpu (sm_90, default) or default)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset=${1:-gpu}
shift || true
jobs=${JOBS:-$(nproc)}

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs" --target baracuda-profiler
profiler=build/$preset/tools/profiler/baracuda-profiler

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
slug=$(echo "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/-*$//')
date=$(date -u +%Y-%m-%d)
out=docs/perf/$date-$slug
tmp=$(mktemp -d)

"$profiler" --device cuda "$@" >"$tmp/table.txt"
"$profiler" --device cuda --json "$@" >"$tmp/rows.json"
{
  echo "# baracuda-profiler default suite on $gpu, $date"
  echo "# commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified)'); preset $preset;" \
       "driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1);" \
       "$(nvcc --version | grep -o 'release [0-9.]*')"
  echo "# command: $profiler --device cuda $*"
  cat "$tmp/table.txt"
} >"$out.txt"
cp "$tmp/rows.json" "$out.json"
echo "wrote $out.txt and $out.json"
