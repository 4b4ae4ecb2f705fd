#!/usr/bin/env bash
# Builds the CUDA GEMM lab for sm_90a on all cores and runs it: run.sh OUTDIR [filter]
# Logs: OUTDIR/build.log (with the ptxas resource report), OUTDIR/lab.log.
set -euo pipefail
out=${1:?usage: run.sh OUTDIR [filter]}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
build=${LAB_BUILD:-$here/../../build-cuda-lab}
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j "$(nproc)"
} >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 2; }
grep -E "registers|spill|Serializ|C7514|C7511|C7508" "$out/build.log" | sort | uniq -c >"$out/resources.txt" || true
"$build/nvrtc_check" "$here/../../src" 2>&1 | tee "$out/nvrtc.log"
"$build/cuda_lab" "${2:-}" 2>&1 | tee "$out/lab.log"
