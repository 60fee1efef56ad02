#!/usr/bin/env bash
# loadgen-compare.sh — is benchgate's load generator ever the bottleneck?
#
# Starts one local HTTP server (the bundled demo) pinned to SERVER_CPUS, then
# drives it in turn with wrk, hey and benchgate, each pinned to GEN_CPUS with
# taskset, at the same concurrency for the same duration, and prints the three
# throughputs. A generator that is the bottleneck shows up as a lower number
# than the others against the same server.
#
#   scripts/loadgen-compare.sh                      # defaults below
#   CONC=32 DURATION=20s TARGET_PATH=/items?limit=10 scripts/loadgen-compare.sh
#
# Needs: go, taskset (util-linux), wrk and hey (Debian: apt-get install wrk hey).
set -euo pipefail

CONC=${CONC:-8}
DURATION=${DURATION:-10s}
SERVER_CPUS=${SERVER_CPUS:-1}
GEN_CPUS=${GEN_CPUS:-0}
TARGET_PATH=${TARGET_PATH:-/healthz}
ROUNDS=${ROUNDS:-3}

for tool in go taskset wrk hey; do
  command -v "$tool" >/dev/null || { echo "loadgen-compare: $tool not found (apt-get install wrk hey)" >&2; exit 2; }
done

cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/demo" ./examples/demo
go build -o "$work/benchgate" ./cmd/benchgate

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port$TARGET_PATH"
taskset -c "$SERVER_CPUS" "$work/demo" -addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.05; done

cat >"$work/scenario.yml" <<YAML
version: 1
name: loadgen-compare
targets:
  baseline: {url: "http://127.0.0.1:$port", health: /healthz}
  candidate: {url: "http://127.0.0.1:$port", health: /healthz}
load:
  concurrency: [$CONC]
  duration: $DURATION
  warmup: 1s
  repetitions: 1
classes:
  - name: probe
    request: GET $TARGET_PATH
gate:
  fail_on: []
YAML

echo "server: demo on CPU $SERVER_CPUS; generators on CPU $GEN_CPUS; c=$CONC; $DURATION per run; $ROUNDS rounds; GET $TARGET_PATH"
printf '%-6s %12s %12s %12s\n' round wrk hey benchgate
for r in $(seq "$ROUNDS"); do
  w=$(taskset -c "$GEN_CPUS" wrk -t1 -c"$CONC" -d"$DURATION" "$url" | awk '/Requests\/sec/ {print $2}')
  h=$(taskset -c "$GEN_CPUS" hey -z "$DURATION" -c "$CONC" "$url" | awk '/Requests\/sec/ {print $2}')
  rm -rf "$work/out"
  taskset -c "$GEN_CPUS" "$work/benchgate" run -scenario "$work/scenario.yml" -out "$work/out" 2>/dev/null
  b=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f" % (sum(g["rps"] for g in r["rungs"])/len(r["rungs"])))' "$work/out/results.json")
  printf '%-6s %12s %12s %12s\n' "$r" "$w" "$h" "$b"
done
