#!/usr/bin/env bash
# latency-reach.sh — does a gate with the defaults measure an endpoint of
# any latency?
#
#   scripts/latency-reach.sh [LATENCIES]
#
# For each latency (default "1ms 40ms 150ms 1s 2.5s"), runs two gates of
# the demo's /sleep endpoint with no load settings at all (the defaults:
# concurrency 1, 10s a rung after a 1s warm-up, 5 rounds, 50ms slices):
# A/A (the same build on both sides: it must pass, exit 0) and A/B (the
# candidate waits 40% longer a request: it must fail on rps, exit 1). It
# prints one markdown row per gate: the latency, the kind, the exit code,
# how the cell was cut (from the run's progress), the verdict line and the
# gate's wall time. The demo caps /sleep at 1s; longer waits use its -slow
# factor on both sides.
set -euo pipefail
cd "$(dirname "$0")/.."

lats="${1:-1ms 40ms 150ms 1s 2.5s}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/demo" ./examples/demo
go build -o "$work/benchgate" ./cmd/benchgate

echo "| latency | gate | exit | cut | outcome | wall s |"
echo "|---|---|---|---|---|---|"
for lat in $lats; do
  case "$lat" in
    *ms) ms=${lat%ms}; base=1 ;;
    *s) ms=1000; base=${lat%s} ;;
  esac
  for kind in A/A A/B; do
    cand=$base
    [ "$kind" = A/B ] && cand=$(awk -v b="$base" 'BEGIN { print b * 1.4 }')
    dir="$work/$lat-${kind//\//}"
    mkdir -p "$dir"
    cat >"$dir/s.yml" <<YML
version: 1
name: latency-$lat
targets:
  baseline: {command: ["$work/demo", -addr, "127.0.0.1:{port}", -slow, "sleep=$base"], health: /healthz}
  candidate: {command: ["$work/demo", -addr, "127.0.0.1:{port}", -slow, "sleep=$cand"], health: /healthz}
classes:
  - {name: sleep, request: "GET /sleep?ms=$ms"}
YML
    start=$(date +%s.%N)
    rc=0
    "$work/benchgate" gate -scenario "$dir/s.yml" -out "$dir/out" >"$dir/stdout" 2>"$dir/stderr" || rc=$?
    wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
    cut=$(grep -o 'measured by round interleaving\|slices of [^ ]* ([^)]*) after [^ ]* settle' "$dir/stderr" | head -1 || true)
    [ -n "$cut" ] || cut="50ms slices"
    outcome=$(grep -m1 '^benchgate: latency' "$dir/stdout" | sed 's/^benchgate: [^ ]* — //' || true)
    [ "$rc" = 0 ] || outcome="$outcome; $(tail -1 "$dir/stderr" | sed 's/^benchgate: //')"
    echo "| $lat | $kind | $rc | $cut | $outcome | $wall |"
  done
done
