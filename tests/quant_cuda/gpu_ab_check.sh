#!/usr/bin/env bash
# scripts/gpu-ab end to end without a GPU: a stub `tc` (GPU_AB_TC) prints a decode step row whose
# time depends on a knob, so the table must show each set's values in its own column, alternated
# over the rounds; bad arguments are refused with a message and exit 2.
set -euo pipefail
ROOT=${1:?usage: gpu_ab_check.sh SOURCE_DIR}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat > "$T/tc" <<'STUB'
#!/usr/bin/env bash
# Each run's ms: 2.000 + round-independent knob offset; its arguments echoed for the check.
ms=$(awk -v k="${TC_FAKE_KNOB:-0}" -v n="$(cat "$0.count" 2>/dev/null || echo 0)" \
  'BEGIN { printf "%.3f", 2 + k + n / 1000 }')
echo $(( $(cat "$0.count" 2>/dev/null || echo 0) + 1 )) > "$0.count"
echo "args: $*"
echo "  q4_0 |     8 | f16-q8 |    $ms |   4000.0 |    1900 |  45.0% | cuda_stub(K=4096)"
STUB
chmod +x "$T/tc"
GPU_AB_TC="$T/tc" "$ROOT/scripts/gpu-ab" "$T/out" -r 2 -c "bench decode --batches 8" \
  -- - "TC_FAKE_KNOB=1" > "$T/stdout"
cat "$T/stdout"
# Runs in order: round 1 default (2.000), knob (3.001), round 2 default (2.002), knob (3.003).
grep -q "^=== round 2: TC_FAKE_KNOB=1$" "$T/out/runs.txt"
grep -q "args: bench decode --batches 8" "$T/out/runs.txt"
row=$(grep "step ms" "$T/out/summary.txt" | tr -d ' ')
[[ "$row" == "q4_0|8|f16-q8|stepms|2.000-2.002|3.001-3.003" ]] || { echo "bad row: $row"; exit 1; }
for bad in "-r 0 -c x" "-c" "-q 1 -c x" "-r 2"; do
  # shellcheck disable=SC2086  # the bad argument lists, split on spaces
  if GPU_AB_TC="$T/tc" "$ROOT/scripts/gpu-ab" "$T/bad" $bad > "$T/bad.out" 2>&1; then
    echo "accepted: $bad"; exit 1
  fi
  grep -q "scripts/gpu-ab" "$T/bad.out" || { echo "no message for: $bad"; cat "$T/bad.out"; exit 1; }
done
echo "gpu-ab check: ok"
