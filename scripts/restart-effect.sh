#!/usr/bin/env bash
# restart-effect.sh — do instance effects exist for the demo on this machine?
#
#   scripts/restart-effect.sh N [ROUNDS]
#
# Runs N pairs of A/A runs of the demo against a second instance of
# itself, each pair one run with the targets kept up (the default) and one
# with load.restart: round, interleaved kept, restart, kept, restart… (the
# first of each pair alternating) so drift of the machine hits both
# designs alike, each run with its own seed. Then
# internal/cmd/restartspread compares, through benchgate's own decision
# path, the spread of the rounds' mean log ratios of the two designs: if a
# process's own state (heap layout, GC pacing, caches) shifts one instance
# against the other for a whole run, the kept-up design's rounds share that
# shift and their spread misses it, while restarts draw it anew each round
# and their spread grows by it.
#
# The scenario: the demo's CPU-bound /search and /items classes at
# concurrency 1 and 2 (4 cells), ROUNDS rounds (default 8), duration and
# warmup from DURATION and WARMUP (default 500ms and 200ms), the defaults
# otherwise (slices of 50 ms, the paired rule), the targets pinned to
# TARGET_CPUS (default 1) and the generator to GEN_CPUS (default 0) where
# taskset allows. OUT keeps every run (default: a new temporary directory).
#
# Needs: go, Linux. Every request goes to 127.0.0.1.
set -euo pipefail

prog="restart-effect"
usage() {
  [ $# -gt 0 ] && echo "$prog: $*" >&2
  echo "usage: scripts/restart-effect.sh N [ROUNDS]   (N pairs of runs, 1-100; ROUNDS 3-50, default 8)" >&2
  exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage "want 1 or 2 arguments, have $#"
N=$1 ROUNDS=${2:-8}
[[ $N =~ ^[1-9][0-9]?$|^100$ ]] || usage "N $N: want a whole number 1-100"
[[ $ROUNDS =~ ^[0-9]+$ ]] && [ "$ROUNDS" -ge 3 ] && [ "$ROUNDS" -le 50 ] || usage "ROUNDS $ROUNDS: want 3-50"
DURATION=${DURATION:-500ms}
WARMUP=${WARMUP:-200ms}
TARGET_CPUS=${TARGET_CPUS-1}
GEN_CPUS=${GEN_CPUS-0}
SEED=${SEED:-2000}
dur='^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$'
[[ $DURATION =~ $dur ]] && [[ $WARMUP =~ $dur ]] || usage "DURATION, WARMUP: want durations such as 500ms"
[[ $SEED =~ ^[0-9]+$ ]] || usage "SEED: want a whole number"
for v in TARGET_CPUS GEN_CPUS; do [ -z "${!v}" ] || [[ ${!v} =~ ^[0-9][0-9,-]*$ ]] || usage "$v: want a cpuset such as 1"; done

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/restart-effect.XXXXXX")
fi
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/restart-effect-work.XXXXXX")
run_pid=""
cleanup() {
  local rc=$?
  set +e
  if [ -n "$run_pid" ]; then kill -TERM "$run_pid" 2>/dev/null; wait "$run_pid" 2>/dev/null; fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "$prog: building benchgate, the demo and restartspread" >&2
go build -o "$work/benchgate" ./cmd/benchgate
go build -o "$work/demo" ./examples/demo
go build -o "$work/restartspread" ./internal/cmd/restartspread

pins=""
if [ -n "$TARGET_CPUS" ] && command -v taskset >/dev/null &&
  { taskset -c "$TARGET_CPUS" true && { [ -z "$GEN_CPUS" ] || taskset -c "$GEN_CPUS" true; }; } >/dev/null 2>&1; then
  pins="pins: {cpus: \"$TARGET_CPUS\"${GEN_CPUS:+, generator_cpus: \"$GEN_CPUS\"}}"
else
  echo "$prog: note: running without pins" >&2
fi

scenario() { # SEED RESTART
  cat <<YAML
version: 1
name: restart-effect
seed: $1
targets:
  baseline:
    command: ["$work/demo", -addr, "127.0.0.1:{port}"]
    health: /healthz
  candidate:
    command: ["$work/demo", -addr, "127.0.0.1:{port}"]
    health: /healthz
$pins
load:
  concurrency: [1, 2]
  repetitions: $ROUNDS
  duration: $DURATION
  warmup: $WARMUP
  timeout: 5s
  restart: $2
data:
  term: [alpha, beta, gamma, delta, epsilon]
classes:
  - name: search
    request: {method: GET, path: /search, query: {q: '{{pick "term"}}-{{int 1 1000}}'}}
  - name: items
    request: GET /items?limit={{int 5 50}}
agreement: {mode: off}
YAML
}

files=()
k=0
for i in $(seq "$N"); do
  designs="never round"
  if [ $((i % 2)) -eq 0 ]; then designs="round never"; fi
  for restart in $designs; do
    k=$((k + 1))
    dir="$OUT/$(printf '%02d' "$i")-$restart"
    mkdir -p "$dir"
    scenario $((SEED + k)) "$restart" >"$dir/scenario.yml"
    "$work/benchgate" run -scenario "$dir/scenario.yml" -out "$dir" >"$dir/run.log" 2>&1 &
    run_pid=$!
    rc=0
    wait "$run_pid" || rc=$?
    run_pid=""
    echo "$prog: [$k/$((2 * N))] restart: $restart, exit $rc" >&2
    [ "$rc" -eq 0 ] && files+=("$dir/results.json")
  done
done
"$work/restartspread" -metric "${METRIC:-rps}" "${files[@]}" | tee "$OUT/spread.txt"
echo "$prog: every run is in $OUT" >&2
