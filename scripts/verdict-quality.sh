#!/usr/bin/env bash
# verdict-quality.sh — how good are benchgate's verdicts on this machine?
#
#   scripts/verdict-quality.sh N FACTOR [NOISE]
#
# Runs N A/A gates (the demo against itself: any failure is a false one) and
# N A/B gates (the demo against a build whose /search does FACTOR times the
# work per request, e.g. 1.2: every gate should find it), interleaved AA, AB,
# AA, AB… so drift of the machine hits both alike, each gate with its own
# seed (SEED+1, SEED+2, … in run order). With NOISE, a duty cycle such as
# 0.3, a noisy neighbour (internal/cmd/noisy: CPU bursts of 0.1-1.5 s on
# random CPUs) runs beside the whole benchmark. It prints one markdown table
# row:
#
#   | condition | metric | rule/interleave/reps | A/A false failures | A/B runs detected | A/B cells detected | A/A unresolved ties | mean s/gate | broken runs |
#
# A/A false failures: A/A gates that exited 1. A/B runs detected: A/B gates
# with a gated regression; cells: gated cells (class × concurrency) that
# regressed, of all. A/A unresolved ties: gated A/A ties that could not
# have resolved a change of tie_within. A gate that exited other than 0 or
# 1 (budget refused, run failed, timed out) is broken: counted in the last
# column, left out of the others.
#
# The scenario (written per gate into its out dir): CLASSES CPU-bound
# classes that all hit /search, concurrency [1, 2], fail_on only METRIC, the
# targets pinned to TARGET_CPUS and the load generator to GEN_CPUS. The
# knobs below are written into the scenario only when set, so that unset
# they measure the defaults a scenario gets when it sets none.
#
# Environment:
#   PROTO        http (default: the demo's /search) or grpc (the gRPC
#                demo's Search, FACTOR times its work in the A/B candidate;
#                the same classes, pins and knobs)
#   METRIC       gated metric, or a comma list of them (default rps; e.g.
#                cpu_per_req, p95, or rps,cpu_per_req)
#   CLASSES      how many classes, 1-6 (default 2): search, search-long,
#                then search-3 … search-6, each with its own query template;
#                cells = CLASSES × concurrencies
#   RULE         gate.rule (overlap | paired)
#   INTERLEAVE   load.interleave (round | slice)
#   SLICE        load.slice, e.g. 200ms
#   SETTLE       load.settle, e.g. 50ms
#   REPS         load.repetitions
#   MAXREPS      load.max_repetitions
#   CONCURRENCY  load.concurrency, a comma list (default 1, 2)
#   DURATION     load.duration (default 1s)
#   WARMUP       load.warmup (default 500ms)
#   TARGET_CPUS  cpuset of each target (default 1); GEN_CPUS: of the load
#                generator (default 0). PINS=off runs without pins.
#   NOISE_CPUS   CPUs the neighbour may burn, comma list (default: all)
#   SEED         base seed (default 1000); NOISE_SEED (default SEED)
#   KINDS        which gates to run: aa,ab (default), aa or ab; the
#                table counts what ran (an A/A-only run has no detections)
#   BUDGET       benchgate -budget of each gate (default 10m)
#   GATE_TIMEOUT hard limit of one gate in seconds (default 900)
#   OUT          directory kept with every gate's out dir (scenario.yml,
#                results.json, decisions.json, report.md, gate.log),
#                runs.tsv, details.txt, row.md and noisy.log (default: a
#                new temporary directory, printed)
#
# Examples:
#   DURATION=300ms WARMUP=100ms scripts/verdict-quality.sh 2 3      # a quick look
#   scripts/verdict-quality.sh 20 1.25 0.3                          # the defaults under a noisy neighbour
#   CLASSES=4 CONCURRENCY='1, 2, 4' METRIC=rps,cpu_per_req scripts/verdict-quality.sh 20 1.2 0.3   # a 12-cell, 2-metric gate
#   METRIC=cpu_per_req RULE=overlap INTERLEAVE=round scripts/verdict-quality.sh 20 1.25 0.3
#
# Other designs on the same rungs: run one design that measures at least
# as many rounds as any other needs, then re-decide every kept gate under
# another rule, rounds or gated metric (exactly the verdicts that design's
# gate would reach on those rungs; its wall time estimated from the
# sessions it would not have run):
#
#   REPS=6 OUT=/tmp/vq scripts/verdict-quality.sh 20 1.25 0.3
#   go run ./internal/cmd/verdictquality -replay -rule overlap -reps 3 -maxreps 3 /tmp/vq/runs.tsv
#   go run ./internal/cmd/verdictquality -replay -false-failure off /tmp/vq/runs.tsv   # without the whole gate's control
#
# Needs: go, coreutils (timeout), and Linux for the pins and the neighbour.
# Every request goes to 127.0.0.1.
set -euo pipefail

prog=verdict-quality
usage() {
  [ $# -gt 0 ] && echo "$prog: $*" >&2
  echo "usage: scripts/verdict-quality.sh N FACTOR [NOISE]" >&2
  echo "  N: gates of each kind (1-1000); FACTOR: work per /search request of the A/B candidate, >= 1 (e.g. 1.2);" >&2
  echo "  NOISE: duty cycle of a noisy neighbour, in (0, 1] (e.g. 0.3). Knobs by environment: see the comment at the top." >&2
  exit 2
}

[ $# -ge 2 ] && [ $# -le 3 ] || usage "want 2 or 3 arguments, have $#"
N=$1 FACTOR=$2 NOISE=${3:-}
[[ $N =~ ^[1-9][0-9]{0,3}$ ]] && [ "$N" -le 1000 ] || usage "N $N: want a whole number 1-1000"
[[ $FACTOR =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v f="$FACTOR" 'BEGIN { exit !(f >= 1) }' ||
  usage "FACTOR $FACTOR: want a number >= 1, e.g. 1.2"
if [ -n "$NOISE" ]; then
  [[ $NOISE =~ ^[0-9]*(\.[0-9]+)?$ ]] && awk -v d="$NOISE" 'BEGIN { exit !(d > 0 && d <= 1) }' ||
    usage "NOISE $NOISE: want a duty cycle in (0, 1], e.g. 0.3"
fi

METRIC=${METRIC:-rps}
PROTO=${PROTO:-http}
CLASSES=${CLASSES:-2}
KINDS=${KINDS:-aa,ab}
nkinds=1
if [ "$KINDS" = aa,ab ]; then nkinds=2; fi
CONCURRENCY=${CONCURRENCY:-1, 2}
DURATION=${DURATION:-1s}
WARMUP=${WARMUP:-500ms}
TARGET_CPUS=${TARGET_CPUS-1}
GEN_CPUS=${GEN_CPUS-0}
PINS=${PINS:-on}
NOISE_CPUS=${NOISE_CPUS:-}
SEED=${SEED:-1000}
NOISE_SEED=${NOISE_SEED:-$SEED}
BUDGET=${BUDGET:-10m}
GATE_TIMEOUT=${GATE_TIMEOUT:-900}

# Everything that goes into the scenario is checked first: a value that is
# not what it should be is a usage error, never YAML of its own.
dur='^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$'
check() { # name value regexp what
  [ -z "$2" ] || [[ $2 =~ $3 ]] || usage "$1=$2: want $4"
}
check CONCURRENCY "$CONCURRENCY" '^[0-9]+(, ?[0-9]+)*$' "a comma list of whole numbers such as 1, 2"
check METRIC "$METRIC" '^[a-z0-9_]+(,[a-z0-9_]+)*$' "a metric name such as rps or cpu_per_req, or a comma list of them"
check CLASSES "$CLASSES" '^[1-6]$' "a number of classes, 1-6"
check KINDS "$KINDS" '^(aa,ab|aa|ab)$' "aa,ab, aa or ab"
check PROTO "$PROTO" '^(http|grpc)$' "http or grpc"
check RULE "${RULE:-}" '^[a-z]+$' "overlap or paired"
check INTERLEAVE "${INTERLEAVE:-}" '^[a-z]+$' "round or slice"
for v in SLICE SETTLE DURATION WARMUP BUDGET; do check "$v" "${!v:-}" "$dur" "a duration such as 200ms"; done
for v in REPS MAXREPS GATE_TIMEOUT SEED NOISE_SEED; do check "$v" "${!v:-}" '^[0-9]+$' "a whole number"; done
for v in TARGET_CPUS GEN_CPUS; do check "$v" "${!v}" '^[0-9][0-9,-]*$' "a cpuset such as 1 or 0-1"; done
check NOISE_CPUS "$NOISE_CPUS" '^[0-9]+(,[0-9]+)*$' "a comma list of CPUs such as 0,1"
[ "$GATE_TIMEOUT" -gt 0 ] || usage "GATE_TIMEOUT=0: want seconds > 0"
command -v go >/dev/null || { echo "$prog: go not found" >&2; exit 2; }
command -v timeout >/dev/null || { echo "$prog: timeout (coreutils) not found" >&2; exit 2; }

# OUT is resolved before the cd below.
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  [ ! -e "$OUT/runs.tsv" ] || usage "OUT=$OUT holds an earlier benchmark (runs.tsv): give an empty directory"
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/verdict-quality.XXXXXX")
fi

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/verdict-quality-work.XXXXXX")
gate_pid=""
noise_pid=""
cleanup() {
  local rc=$?
  set +e
  if [ -n "$gate_pid" ]; then
    kill -TERM "$gate_pid" 2>/dev/null
    wait "$gate_pid" 2>/dev/null
  fi
  if [ -n "$noise_pid" ]; then
    kill -TERM "$noise_pid" 2>/dev/null
    wait "$noise_pid" 2>/dev/null
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "$prog: building benchgate, the demo (normal and search=$FACTOR), the neighbour and the aggregator" >&2
go build -o "$work/benchgate" ./cmd/benchgate
if [ "$PROTO" = grpc ]; then
  go build -o "$work/demo" ./examples/grpcdemo
  go build -ldflags "-X main.defaultSlow=Search=$FACTOR" -o "$work/demo-slow" ./examples/grpcdemo
  health="" # the standard health service
else
  go build -o "$work/demo" ./examples/demo
  go build -ldflags "-X main.defaultSlow=search=$FACTOR" -o "$work/demo-slow" ./examples/demo
  health="health: /healthz"
fi
go build -o "$work/noisy" ./internal/cmd/noisy
go build -o "$work/verdictquality" ./internal/cmd/verdictquality

# Pins: a command target is pinned by CPU affinity, which needs the CPUs
# to be ours to use; taskset says whether they are.
pins=""
if [ "$PINS" = off ] || [ -z "$TARGET_CPUS" ]; then
  echo "$prog: note: no pins (PINS=off or TARGET_CPUS empty)" >&2
elif command -v taskset >/dev/null &&
  ! { taskset -c "$TARGET_CPUS" true && { [ -z "$GEN_CPUS" ] || taskset -c "$GEN_CPUS" true; }; } >/dev/null 2>&1; then
  echo "$prog: note: CPUs $TARGET_CPUS/$GEN_CPUS cannot be used here (taskset refused them): running without pins" >&2
else
  pins="pins: {cpus: \"$TARGET_CPUS\"${GEN_CPUS:+, generator_cpus: \"$GEN_CPUS\"}}"
fi

load_extra=""
for kv in "repetitions=${REPS:-}" "max_repetitions=${MAXREPS:-}" "interleave=${INTERLEAVE:-}" "slice=${SLICE:-}" "settle=${SETTLE:-}"; do
  if [ -n "${kv#*=}" ]; then load_extra+="  ${kv%%=*}: ${kv#*=}"$'\n'; fi
done
gate_extra=""
fail_on=""
IFS=, read -r -a metrics <<<"$METRIC"
for m in "${metrics[@]}"; do fail_on+="${fail_on:+, }{metric: $m}"; done
# classes: search and search-long, then search-3 … search-6, each its own
# query so that each is its own cell; all slowed by FACTOR in the A/B
# candidate.
classes=""
for c in $(seq "$CLASSES"); do
  if [ "$PROTO" = grpc ]; then
    case $c in
    1) q='{{pick "term"}}-{{int 1 1000}}' ;;
    2) q='long-{{pick "word"}}-{{pick "word"}}-{{pick "term"}}-{{int 1 1000000}}' ;;
    *) q="c$c-{{pick \"word\"}}-{{int 1 100000}}" ;;
    esac
    name=search-$c
    [ "$c" = 1 ] && name=search
    [ "$c" = 2 ] && name=search-long
    classes+="  - name: $name"$'\n'"    grpc: {method: benchgate.demo.Inventory/Search, message: '{\"query\": \"$q\", \"limit\": 5}'}"$'\n'
    continue
  fi
  case $c in
  1) classes+="  - name: search"$'\n'"    request: {method: GET, path: /search, query: {q: '{{pick \"term\"}}-{{int 1 1000}}'}}"$'\n' ;;
  2) classes+="  - name: search-long"$'\n'"    request: {method: GET, path: /search, query: {q: 'long-{{pick \"word\"}}-{{pick \"word\"}}-{{pick \"term\"}}-{{int 1 1000000}}'}}"$'\n' ;;
  *) classes+="  - name: search-$c"$'\n'"    request: {method: GET, path: /search, query: {q: 'c$c-{{pick \"word\"}}-{{int 1 100000}}'}}"$'\n' ;;
  esac
done
if [ -n "${RULE:-}" ]; then gate_extra="  rule: $RULE"; fi

# scenario SEED CANDIDATE_BINARY: the scenario of one gate.
scenario() {
  cat <<YAML
# verdict-quality.sh: N=$N FACTOR=$FACTOR NOISE=${NOISE:-none}; the binaries lived in a temporary directory
version: 1
name: verdict-quality
seed: $1
targets:
  baseline:
    command: ["$work/demo", -addr, "127.0.0.1:{port}"]
    $health
  candidate:
    command: ["$2", -addr, "127.0.0.1:{port}"]
    $health
$pins
load:
  concurrency: [$CONCURRENCY]
  duration: $DURATION
  warmup: $WARMUP
  timeout: 5s
${load_extra}data:
  term: [alpha, beta, gamma, delta, epsilon]
  word: [red, green, blue, cyan, magenta, yellow, black, white]
classes:
${classes}agreement: {mode: required, requests: 5}
# No CPU profiles of the regressed cells: they decide nothing, and would
# add their minutes to the A/B gates' wall time (docs/profiling.md).
profiling: {when: never}
gate:
  fail_on: [$fail_on]
$gate_extra
YAML
}

condition=quiet
if [ -n "$NOISE" ]; then
  condition="noisy $(awk -v d="$NOISE" 'BEGIN { printf "%g%%", d * 100 }')"
  # Bounded by itself too, should this script die without its trap.
  noise_for=$((2 * N * GATE_TIMEOUT + 120))
  [ "$noise_for" -le 86400 ] || noise_for=86400
  "$work/noisy" -duty "$NOISE" -for "${noise_for}s" -seed "$NOISE_SEED" ${NOISE_CPUS:+-cpus "$NOISE_CPUS"} >"$OUT/noisy.log" 2>&1 &
  noise_pid=$!
  sleep 0.2
  kill -0 "$noise_pid" 2>/dev/null || { cat "$OUT/noisy.log" >&2; echo "$prog: the noisy neighbour did not start" >&2; noise_pid=""; exit 1; }
fi

{
  echo "N=$N FACTOR=$FACTOR NOISE=${NOISE:-} PROTO=$PROTO METRIC=$METRIC CLASSES=$CLASSES KINDS=$KINDS RULE=${RULE:-} INTERLEAVE=${INTERLEAVE:-} SLICE=${SLICE:-} SETTLE=${SETTLE:-}"
  echo "REPS=${REPS:-} MAXREPS=${MAXREPS:-} CONCURRENCY=$CONCURRENCY DURATION=$DURATION WARMUP=$WARMUP pins=${pins:-none} NOISE_CPUS=${NOISE_CPUS:-all} SEED=$SEED NOISE_SEED=$NOISE_SEED"
  echo "BUDGET=$BUDGET GATE_TIMEOUT=$GATE_TIMEOUT commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +changes) $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/params.txt"
echo "$prog: $condition, $N gates of each of $KINDS, candidate search=$FACTOR, gating $METRIC; kept in $OUT" >&2

printf '# kind\tindex\tseed\texit\twall_s\tdir\n' >"$OUT/runs.tsv"
k=0
for i in $(seq "$N"); do
  for kind in ${KINDS//,/ }; do
    k=$((k + 1))
    seed=$((SEED + k))
    tag=$(printf '%s-%02d' "$kind" "$i")
    dir="$OUT/$tag"
    mkdir -p "$dir"
    cand="$work/demo"
    if [ "$kind" = ab ]; then cand="$work/demo-slow"; fi
    scenario "$seed" "$cand" >"$dir/scenario.yml"
    start=$(date +%s%N)
    timeout -k 10s "${GATE_TIMEOUT}s" "$work/benchgate" gate -scenario "$dir/scenario.yml" -out "$dir" -budget "$BUDGET" \
      >"$dir/gate.log" 2>&1 &
    gate_pid=$!
    rc=0
    wait "$gate_pid" || rc=$?
    gate_pid=""
    end=$(date +%s%N)
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    printf '%s\t%d\t%d\t%d\t%s\t%s\n' "$kind" "$i" "$seed" "$rc" "$wall" "$tag" >>"$OUT/runs.tsv"
    last=$(grep -E '^gate (passed|failed|inconclusive)|^benchgate:|error' "$dir/gate.log" | tail -n 1 || true)
    printf '%s: [%d/%d] %s seed %d: exit %d in %ss: %s\n' "$prog" "$k" "$((N * nkinds))" "$tag" "$seed" "$rc" "$wall" "${last:-see $dir/gate.log}" >&2
  done
done

"$work/verdictquality" -header -condition "$condition" -metric "$METRIC" -rule "${RULE:-}" -interleave "${INTERLEAVE:-}" \
  -reps "${REPS:-}" -maxreps "${MAXREPS:-}" "$OUT/runs.tsv" >"$OUT/row.md" 2>"$OUT/details.txt"
cat "$OUT/details.txt" >&2
echo "$prog: every gate's results are in $OUT" >&2
cat "$OUT/row.md"
