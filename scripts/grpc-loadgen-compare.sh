#!/usr/bin/env bash
# grpc-loadgen-compare.sh — is benchgate's gRPC load generator ever the
# bottleneck? The same question as loadgen-compare.sh, against ghz.
#
# Starts the gRPC demo (examples/grpcdemo) pinned to SERVER_CPUS, then drives
# its unary Get with ghz and with benchgate in turn, each pinned to GEN_CPUS
# with taskset, at the same concurrency for the same duration, and prints
# both throughputs. A generator that is the
# bottleneck shows up as the lower number against the same server.
#
#   scripts/grpc-loadgen-compare.sh
#   CONC=50 DURATION=20s scripts/grpc-loadgen-compare.sh
#
# Needs: go, taskset, python3; ghz is installed from the Go module proxy
# into a temporary directory (go install github.com/bojand/ghz/cmd/ghz).
set -euo pipefail

CONC=${CONC:-8}
DURATION=${DURATION:-10s}
SERVER_CPUS=${SERVER_CPUS:-0}
GEN_CPUS=${GEN_CPUS:-1}
ROUNDS=${ROUNDS:-3}
GHZ_VERSION=${GHZ_VERSION:-v0.93.0}

cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

GOBIN="$work/bin" go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION"
go build -o "$work/grpcdemo" ./examples/grpcdemo
go build -o "$work/benchgate" ./cmd/benchgate

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPUS" "$work/grpcdemo" -addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server_pid=$!
sleep 0.5

cat >"$work/scenario.yml" <<YAML
version: 1
name: grpc-loadgen-compare
targets:
  baseline: {url: "http://127.0.0.1:$port", health: grpc}
  candidate: {url: "http://127.0.0.1:$port", health: grpc}
load: {concurrency: [$CONC], duration: $DURATION, warmup: 1s, repetitions: 1}
agreement: off
classes:
  - name: get
    grpc: {method: benchgate.demo.Inventory/Get, message: '{"id": 7}'}
gate: {fail_on: []}
YAML

echo "server CPUs $SERVER_CPUS, generators on $GEN_CPUS, c=$CONC, $DURATION, $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  ghz_rps=$(GOMAXPROCS=1 taskset -c "$GEN_CPUS" "$work/bin/ghz" --insecure \
    --call benchgate.demo.Inventory/Get -d '{"id": 7}' -c "$CONC" -z "$DURATION" --format json "127.0.0.1:$port" |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["rps"]))')
  GOMAXPROCS=1 taskset -c "$GEN_CPUS" "$work/benchgate" run -scenario "$work/scenario.yml" -out "$work/out" 2>/dev/null
  bg_rps=$(python3 -c "import json; r=json.load(open('$work/out/results.json')); print(round(r['rungs'][0]['rps']))")
  echo "round $round: ghz $ghz_rps calls/s, benchgate $bg_rps calls/s"
done
