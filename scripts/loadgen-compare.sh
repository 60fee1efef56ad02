#!/usr/bin/env bash
# loadgen-compare.sh — is benchgate's load generator ever the bottleneck?
#
# Starts one local HTTP server pinned to SERVER_CPUS — nginx serving a small
# static JSON file (SERVER=nginx, the default when nginx is installed), or
# the bundled demo service (SERVER=demo) — then drives it in turn with wrk,
# bombardier, hey and benchgate (its fast client, and CLIENTS=all adds its
# net/http one), each pinned to GEN_CPUS with taskset, at the same
# concurrency for the same duration, alternated ROUNDS times. For each tool it
# prints the requests per second, the ratio to wrk's in the same round, and
# the generator's CPU per request (its CPU time over the requests it
# completed). A generator that is the bottleneck shows up as fewer requests
# per second than the others against the same server; one that costs more CPU
# per request takes that CPU from the builds it measures.
#
#   scripts/loadgen-compare.sh                       # c=32, 4s, 3 rounds
#   CONC=1 scripts/loadgen-compare.sh
#   GEN_CPUS=0,1 SERVER_CPUS=2,3 THREADS=2 scripts/loadgen-compare.sh
#   SERVER=demo TARGET_PATH=/items?limit=10 scripts/loadgen-compare.sh
#
# Needs: go, taskset (util-linux), python3, wrk and hey (Debian: apt-get
# install wrk hey), nginx for SERVER=nginx (apt-get install nginx).
# bombardier is built from the Go module proxy into a temporary directory.
set -euo pipefail

CONC=${CONC:-32}
DURATION=${DURATION:-4s}
SERVER_CPUS=${SERVER_CPUS:-1}
GEN_CPUS=${GEN_CPUS:-0}
THREADS=${THREADS:-1}     # wrk's threads; GOMAXPROCS of the Go generators
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-fast}  # benchgate's clients: fast, or all (fast and net/http)
BOMBARDIER=${BOMBARDIER:-github.com/codesenberg/bombardier@v1.2.6}
if [ -z "${SERVER:-}" ]; then
  if command -v nginx >/dev/null; then SERVER=nginx; else SERVER=demo; fi
fi
if [ "$SERVER" = nginx ]; then
  TARGET_PATH=${TARGET_PATH:-/small.json}
else
  TARGET_PATH=${TARGET_PATH:-/healthz}
fi

for tool in go taskset python3 wrk hey; do
  command -v "$tool" >/dev/null || { echo "loadgen-compare: $tool not found (apt-get install wrk hey)" >&2; exit 2; }
done

cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/benchgate" ./cmd/benchgate
GOBIN="$work" go install "$BOMBARDIER" 2>/dev/null || { echo "loadgen-compare: cannot build $BOMBARDIER" >&2; exit 2; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port$TARGET_PATH"
case "$SERVER" in
nginx)
  mkdir -p "$work/www" "$work/nginx"
  python3 -c 'import json; print(json.dumps({"id": 42, "name": "benchgate", "tags": ["a", "b", "c"], "ok": True}))' >"$work/www/small.json"
  # nginx's workers run as another user: they must read the file.
  chmod 755 "$work" "$work/www"
  chmod 644 "$work/www/small.json"
  cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 1;
error_log $work/nginx/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx;
  scgi_temp_path $work/nginx;
  types { application/json json; }
  server {
    listen 127.0.0.1:$port;
    root $work/www;
    location = /healthz { return 200 "ok"; }
  }
}
CONF
  taskset -c "$SERVER_CPUS" nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" >"$work/server.log" 2>&1 &
  ;;
demo)
  go build -o "$work/demo" ./examples/demo
  taskset -c "$SERVER_CPUS" "$work/demo" -addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
  ;;
*)
  echo "loadgen-compare: SERVER=$SERVER: want nginx or demo" >&2
  exit 2
  ;;
esac
server_pid=$!
for _ in $(seq 100); do curl -fs "$url" >/dev/null 2>&1 && break; sleep 0.05; done
curl -fs "$url" >/dev/null || { echo "loadgen-compare: the server does not answer $url" >&2; cat "$work/server.log" >&2; exit 1; }

scenario() { # scenario CLIENT
  cat <<YAML
version: 1
name: loadgen-compare
targets:
  baseline: {url: "http://127.0.0.1:$port", health: $TARGET_PATH}
  candidate: {url: "http://127.0.0.1:$port", health: $TARGET_PATH}
load:
  concurrency: [$CONC]
  duration: $DURATION
  warmup: 1s
  repetitions: 1
  http_client: $1
classes:
  - name: probe
    request: GET $TARGET_PATH
gate:
  fail_on: []
YAML
}
benchgate_clients=(fast)
[ "$CLIENTS" = all ] && benchgate_clients=(fast net/http)
for c in "${benchgate_clients[@]}"; do scenario "$c" >"$work/scenario-${c//\//-}.yml"; done

# cpu_of CMD...: runs CMD, its output in $work/out.txt, and prints the CPU
# seconds (user and system) it and its children spent.
cpu_of() {
  python3 - "$work/out.txt" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (r.ru_utime + r.ru_stime))
PY
}

secs=$(python3 -c 'import re,sys; m=re.fullmatch(r"([0-9.]+)(ms|s|m)", sys.argv[1]); print(float(m[1])*{"ms":1e-3,"s":1,"m":60}[m[2]])' "$DURATION")
gen=(taskset -c "$GEN_CPUS" env GOMAXPROCS="$THREADS")

echo "server: $SERVER on CPU $SERVER_CPUS; generators on CPU $GEN_CPUS ($THREADS threads); c=$CONC; $DURATION per run; $ROUNDS rounds; GET $TARGET_PATH"
printf '%-6s %-22s %12s %8s %14s\n' round tool rps "x wrk" "CPU us/req"
for r in $(seq "$ROUNDS"); do
  results=()
  cpu=$(cpu_of taskset -c "$GEN_CPUS" wrk -t"$THREADS" -c"$CONC" -d"$DURATION" "$url")
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/out.txt")
  results+=("wrk $rps $cpu")

  cpu=$(cpu_of "${gen[@]}" "$work/bombardier" -c "$CONC" -d "$DURATION" -l -p r -o json "$url")
  rps=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["result"]["rps"]["mean"])' "$work/out.txt")
  results+=("bombardier $rps $cpu")

  cpu=$(cpu_of "${gen[@]}" hey -z "$DURATION" -c "$CONC" "$url")
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/out.txt")
  results+=("hey $rps $cpu")

  for c in "${benchgate_clients[@]}"; do
    rm -rf "$work/res"
    "${gen[@]}" "$work/benchgate" run -scenario "$work/scenario-${c//\//-}.yml" -out "$work/res" >/dev/null 2>&1
    # rps and the generator's own CPU in the measured windows, from the
    # results file: the CPU of the plan, the health checks and the
    # warmup is not counted against it.
    read -r rps cpu_req < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
g = r["rungs"]
rps = sum(x["rps"] for x in g) / len(g)
req = sum(x["rps"] * x["duration_s"] for x in g)
print("%.2f %.2f" % (rps, 1e6 * sum(x.get("generator_cpu_s", 0) for x in g) / req))' "$work/res/results.json")
    results+=("benchgate/$c $rps cpu_req:$cpu_req")
  done

  wrk_rps=${results[0]#wrk }
  wrk_rps=${wrk_rps%% *}
  for line in "${results[@]}"; do
    read -r tool rps cpu <<<"$line"
    case "$cpu" in
    cpu_req:*) per=${cpu#cpu_req:} ;;
    *) per=$(python3 -c 'import sys; print("%.2f" % (1e6*float(sys.argv[1])/(float(sys.argv[2])*float(sys.argv[3]))))' "$cpu" "$rps" "$secs") ;;
    esac
    ratio=$(python3 -c 'import sys; print("%.2f" % (float(sys.argv[1])/float(sys.argv[2])))' "$rps" "$wrk_rps")
    printf '%-6s %-22s %12s %8s %14s\n' "$r" "$tool" "$rps" "$ratio" "$per"
  done
done
