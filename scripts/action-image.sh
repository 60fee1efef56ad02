#!/usr/bin/env bash
# action-image.sh — build the action's image here, from a binary built on this
# machine, without pulling any base image:
#
#   scripts/action-image.sh [TAG]        # default tag benchgate:local
#
# It compiles a static benchgate into bin/, copies this machine's CA bundle
# beside it (the image needs one to reach the GitHub API), and builds the
# Dockerfile's "local" stage. GitHub builds the default "release" stage
# instead, which compiles the same binary in the official Go image.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-benchgate:local}
mkdir -p bin
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(git describe --always --dirty 2>/dev/null || echo dev)" \
  -o bin/benchgate ./cmd/benchgate
cp /etc/ssl/certs/ca-certificates.crt bin/ca-certificates.crt
DOCKER_BUILDKIT=0 docker build --target local -t "$tag" . >&2
echo "$tag"
