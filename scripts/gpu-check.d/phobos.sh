#!/usr/bin/env bash
# Phobos on the GPU (issue 5), run by scripts/gpu-check after the GEMM bench with B (build
# dir), OUT and LOG set: the autotuned Phobos kernels against cuBLAS (tools/phobosc/bench.cpp).
# Prints the ratio table; the autotune tables go to $OUT/phobos_bench.txt. Bounded to 85 s.
set -uo pipefail
BIN=$B/tools/phobosc/phobos_bench
[[ -x $BIN ]] || BIN=$B/phobosc/phobos_bench  # a standalone build of phobos/
if [[ ! -x $BIN ]]; then
  echo "phobos: phobos_bench was not built (needs the CUDA toolkit with cuBLAS)"
  exit 0
fi
export PHOBOS_MODULE_CACHE=$OUT/phobos-modules PHOBOS_AUTOTUNE_CACHE=$OUT/phobos-autotune.json
timeout 85 "$BIN" --quick > "$OUT/phobos_bench.txt" 2>&1
rc=$?
sed -n '/^case /,$p' "$OUT/phobos_bench.txt"
if [[ $rc -ne 0 ]]; then
  echo "phobos_bench exit status $rc (124 = timed out); last lines:"
  tail -8 "$OUT/phobos_bench.txt"
fi
exit 0
