#!/usr/bin/env bash
# action-smoke.sh — run the action's image here, as GitHub would, against the
# docker engine of this machine:
#
#   scripts/action-smoke.sh
#
# It builds the action image the release builds, the same way
# (action-image.sh: release.sh's linux binary in the Dockerfile's FROM
# scratch "release" stage, nothing pulled), builds the two demo images FROM scratch around static demo binaries (the
# normal one and one whose /search does 5× the work), then runs the action
# container with the docker socket mounted and the workspace at
# /github/workspace, inputs in INPUT_*, as the runner does. benchgate inside
# the container starts the two demo containers as siblings, reaches them over
# the run's network, and must end with the regression (exit 1), its outputs
# and its job summary; nothing labelled with the run may be left behind.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"; docker image rm -f benchgate-smoke/demo:base benchgate-smoke/demo:head >/dev/null 2>&1 || true' EXIT

image=$(scripts/action-image.sh benchgate:local)
for variant in base:"" head:"search=5"; do
  tag=${variant%%:*}; slow=${variant#*:}
  mkdir -p "$work/$tag"
  CGO_ENABLED=0 go build -ldflags "-X main.defaultSlow=$slow" -o "$work/$tag/demo" ./examples/demo
  printf 'FROM scratch\nCOPY demo /demo\nEXPOSE 8080\nENTRYPOINT ["/demo","-addr","0.0.0.0:8080"]\n' >"$work/$tag/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "benchgate-smoke/demo:$tag" "$work/$tag" >/dev/null
done

out=action-smoke-results
rm -rf "$out"; touch "$work/output" "$work/summary"
set +e
docker run --rm \
  -v /var/run/docker.sock:/var/run/docker.sock \
  -v "$PWD:/github/workspace" -v "$work:/github/file_commands" \
  -e GITHUB_ACTIONS=true -e GITHUB_REPOSITORY=benchgate/benchgate -e GITHUB_EVENT_NAME=push \
  -e GITHUB_OUTPUT=/github/file_commands/output -e GITHUB_STEP_SUMMARY=/github/file_commands/summary \
  -e INPUT_SCENARIO=examples/demo/benchgate-images.yml -e INPUT_PROFILE=smoke \
  -e INPUT_BASELINE=benchgate-smoke/demo:base -e INPUT_CANDIDATE=benchgate-smoke/demo:head \
  -e INPUT_COMMENT=never -e INPUT_RESULTS-DIR=$out -e INPUT_FAIL-ON-REGRESSION=true \
  "$image" gate
code=$?
set -e
echo "--- exit code: $code (want 1: the candidate's /search regressed)"
echo "--- outputs:"; cat "$work/output"
echo "--- summary (head):"; head -5 "$work/summary"
run_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["environment"]["run_id"])' "$out/results.json")
left=$(docker ps -aq --filter "label=io.benchgate.run=$run_id"; docker network ls -q --filter "label=io.benchgate.run=$run_id")
echo "--- left behind by run $run_id: ${left:-nothing}"
rm -rf "$out"
[ "$code" = 1 ] && [ -z "$left" ]
