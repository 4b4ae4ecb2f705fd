#!/usr/bin/env bash
# Focused GEMM check on the H200 (adapted from .deps/gpu_run.sh): builds tc_cuda_tests and the
# CLI only, runs the GEMM row / padding / determinism tests, the TMA-store probe, and the bench
# cells this round touches, each with its knob on and off (same binary, back-to-back processes;
# every process times cuBLASLt beside ours). Usage (device): tests/cuda_lab/gpu_gemm.sh OUTDIR
# Env: GEMM_STEPS (default "build tests probe bench") to run fewer steps.
set -o pipefail
OUT=${1:?usage: gpu_gemm.sh OUTDIR}
mkdir -p "$OUT"
S=$(date +%s)
t() { echo "[$(($(date +%s) - S))s] $*"; }
steps=${GEMM_STEPS:-build tests probe bench}
has() { [[ " $steps " == *" $1 "* ]]; }
mkdir -p /tmp/d
for f in .deps/*.deb; do dpkg -x "$f" /tmp/d; done
D=/tmp/d/usr
A=$D/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$A/openblas-pthread:$A:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if has build; then
  (nvcc -std=c++20 -O2 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude \
    -o /tmp/tma_store_probe tests/cuda_lab/tma_store_probe.cu >"$OUT/probe.log" 2>&1) &
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTC_CUDA=ON -DTC_CUDA_ARCHS=90a \
    -DTC_WERROR=OFF -DTC_BUILD_PHOBOS=OFF -DTC_BUILD_QUANT=OFF -DCMAKE_PREFIX_PATH=$D \
    -DBLAS_LIBRARIES=$A/openblas-pthread/libopenblas.so \
    -DTC_CBLAS_INCLUDE=$D/include/x86_64-linux-gnu/openblas-pthread "-DCMAKE_CXX_FLAGS=-I$D/include" \
    >"$OUT/build.log" 2>&1 || tail -20 "$OUT/build.log"
  timeout 150 ninja -C build-gpu -j16 -k 0 tc_cli tc_cuda_tests >>"$OUT/build.log" 2>&1 ||
    grep -E "error|FAILED" "$OUT/build.log" | head -20
  wait
  t built
fi
export TC_AUTOTUNE_CACHE=$OUT/autotune.json
if has tests; then
  F=${GEMM_TESTS:-'*CPadding*:Rows/CudaRows.*/gemm_wgmma*:Rows/CudaRows.*/gemm_tf32x3*:Rows/CudaRows.*/gemm_skinny*:Dtypes/CudaDeterminism.*'}
  timeout 60 build-gpu/tests/cuda/tc_cuda_tests --gtest_filter="$F" >"$OUT/tests.log" 2>&1
  echo "tests rc $?"
  grep -E "^\[  (FAILED|PASSED)|tests ran|Failure|wrote|outside" "$OUT/tests.log" | head -30
  t tests
fi
if has probe; then
  timeout 20 /tmp/tma_store_probe >>"$OUT/probe.log" 2>&1
  echo "probe rc $?"
  cat "$OUT/probe.log" | tail -6
  t probe
fi
if has bench; then
  B="build-gpu/tools/tc/tc bench gemm --device cuda --vs-cublas --seconds 0.2"
  run() { # name, env..., then bench args after --
    local name=$1
    shift
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    n_run=$((${n_run:-0} + 1))  # each process tunes afresh (its own autotune cache)
    env "${envs[@]}" TC_AUTOTUNE_CACHE=/tmp/autotune_$n_run.json timeout 25 $B "$@" \
      >>"$OUT/bench.txt" 2>>"$OUT/bench.err"
    echo "== $name rc $?" >>"$OUT/bench.txt"
  }
  if [[ ${GEMM_BENCH:-decode} == round5a ]]; then  # the first round-5 run
    for m in 1 4 16; do
      run "decode M=$m persist" TC_SKINNY_PERSIST=1 -- --suites decode --filter "M=$m W"
      run "decode M=$m no persist" TC_SKINNY_PERSIST=0 -- --suites decode --filter "M=$m W"
    done
    run "4095 swap" X=1 -- --suites shapes --filter "4095"
    run "4095 no swap" TC_WGMMA_SWAP=0 -- --suites shapes --filter "4095"
  else  # decode: bulk L2 prefetch before the PDL wait, on and off, and the persistent grid
    for m in 1 16; do
      run "decode M=$m prefetch" X=1 -- --suites decode --filter "M=$m W"
      run "decode M=$m no prefetch" TC_SKINNY_PREFETCH=0 -- --suites decode --filter "M=$m W"
      run "decode M=$m persist+prefetch" TC_SKINNY_PERSIST=1 -- --suites decode --filter "M=$m W"
    done
  fi
  grep -E "^(f16|bf16) |== " "$OUT/bench.txt" | cut -c1-120
  t bench
fi
