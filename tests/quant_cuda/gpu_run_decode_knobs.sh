#!/usr/bin/env bash
# Focused device run of the decode kernels' fifth-session knobs (run from the repository root
# with $OUT set, e.g. by the `run` tool): builds tc_cli and test_quant_cuda in build-gpu, runs
# the quant CUDA tests (the b32 helper's excluded: their own run covers them), then
# `tc bench decode` (batch 1 and 8, one process per knob set, new and old interleaved twice)
# and `tc bench quant` rows of the two kernels. Summary on stdout, full logs in $OUT.
set -uo pipefail
S=$(date +%s)
t() { echo "[$(($(date +%s) - S))s $(date -u +%H:%M:%S)] $*"; }
# BASE=dir (optional): files to restore (dir/restore.txt, contents under dir/files) and to delete
# (dir/delete.txt) in this copy before building, so that others' unfinished edits in a shared
# checkout do not enter the build.
if [[ -n "${BASE:-}" && -d "$BASE" ]]; then
  while read -r p; do cp "$BASE/files/$p" "$p"; done < "$BASE/restore.txt"
  while read -r p; do rm -f "$p"; done < "$BASE/delete.txt"
  echo "restored $(wc -l < "$BASE/restore.txt") files, deleted $(wc -l < "$BASE/delete.txt")"
fi
L=$OUT/l
mkdir -p "$L" /tmp/d
for f in .deps/*.deb; do dpkg -x "$f" /tmp/d; done
D=/tmp/d/usr
A=$D/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$A/openblas-pthread:$A:${LD_LIBRARY_PATH:-}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTC_CUDA=ON -DTC_CUDA_ARCHS=90a \
  -DTC_WERROR=OFF -DTC_BUILD_PHOBOS=OFF -DCMAKE_PREFIX_PATH="$D" \
  -DBLAS_LIBRARIES="$A/openblas-pthread/libopenblas.so" \
  -DTC_CBLAS_INCLUDE="$D/include/x86_64-linux-gnu/openblas-pthread" \
  "-DCMAKE_CXX_FLAGS=-I$D/include" > "$L/build.log" 2>&1 || tail -20 "$L/build.log"
timeout "${BUILD_T:-120}" ninja -C build-gpu -j16 tc_cli test_quant_cuda >> "$L/build.log" 2>&1 ||
  grep -E "error|FAILED" "$L/build.log" | head -30
t built
TC=build-gpu/tools/tc/tc
T=build-gpu/tests/quant_cuda/test_quant_cuda
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [[ -z "${NOTESTS:-}" ]]; then
  timeout "${TEST_T:-75}" $T --gtest_filter='-QuantCudaB32.*' > "$L/tests.txt" 2>&1
  echo "tests rc $?"
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |^\[       OK|Failure|rms|Which is|Expected|differs" \
    "$L/tests.txt" | head -40
  TC_Q4_USE_V1=1 TC_EXPECT_ROW=cuda_quant_v1 timeout 20 $T --gtest_filter='QuantCuda.Every*' \
    > "$L/tests_v1.txt" 2>&1
  echo "v1 rerun rc $?"
  t tests
fi
# One decode process per knob set: label, batches, formats, then VAR=value pairs.
dec() {
  local label=$1 b=$2 f=$3
  shift 3
  env "$@" timeout 30 $TC bench decode --device cuda --batches "$b" --formats "$f" \
    --seconds 0.05 > "$L/dec_$label.txt" 2>&1
  awk -v l="$label" -F'|' '/copy bandwidth/ {c=$0} /\| +q8 \|/ && $0 !~ /queued|no flag/ {
    gsub(/ /, "", $1); gsub(/ /, "", $2); k = ($8 ~ /public/) ? "api" : "graph";
    printf "%-22s %s b%s %s %s ms\n", l, $1, $2, k, $4 }' "$L/dec_$label.txt"
}
ALL=q4_0,q8_0,q4_k
dec new 1,8 $ALL
dec old 1,8 $ALL TC_QUANT_BULK_XPAIRS=0 TC_QUANT_F16_HOIST=0
t "decode new/old"
dec pace2 1 q4_0,q4_k TC_QUANT_BULK_PACE=2
dec pace3_f0 1 q4_0,q4_k TC_QUANT_BULK_PACE=3 TC_QUANT_BULK_FIRST=0
dec pace2_f0 1 q4_0,q4_k TC_QUANT_BULK_PACE=2 TC_QUANT_BULK_FIRST=0
dec xfirst2 8 $ALL TC_QUANT_F16_XFIRST=2
dec xpace2 8 $ALL TC_QUANT_F16_XPACE=2
dec xcl2 8 $ALL TC_QUANT_F16_XCL=2
dec xcl2_xpace2 8 $ALL TC_QUANT_F16_XCL=2 TC_QUANT_F16_XPACE=2
dec xfirst1 8 q4_0,q4_k TC_QUANT_F16_XFIRST=1
t "decode knobs"
dec new_2 1,8 $ALL
dec old_2 1,8 $ALL TC_QUANT_BULK_XPAIRS=0 TC_QUANT_F16_HOIST=0
t "decode new/old again"
# Kernel rows (+pdl), M = 1 bulk GEMV and M = 8 f16 MMA, new vs old (and the cluster knob).
kq() {
  local label=$1 ms=$2 only=$3
  shift 3
  env TC_BENCH_QUANT_ONLY=$only "$@" timeout 30 $TC bench quant --device cuda --ms "$ms" \
    --seconds 0.03 > "$L/kq_$label.txt" 2>&1
  grep -E "\+pdl" "$L/kq_$label.txt" | awk -v l="$label" -F'|' '{
    gsub(/^ +| +$/, "", $1); gsub(/^ +| +$/, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $5);
    gsub(/ /, "", $7); printf "%-10s %s %-19s M%s %s us %s\n", l, $1, $2, $3, $5, $7 }'
}
kq new 1 gemv_bulk
kq old 1 gemv_bulk TC_QUANT_BULK_XPAIRS=0
kq new 8 mma_f16
kq old 8 mma_f16 TC_QUANT_F16_HOIST=0
kq xcl2 8 mma_f16 TC_QUANT_F16_XCL=2
t "bench quant"
tar czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
