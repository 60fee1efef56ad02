#!/usr/bin/env bash
# action-image.sh — the action's image, built from the release's own
# binaries, the same way by the release workflow and on a machine with no
# registry:
#
#   scripts/action-image.sh [TAG ...]            # default tag benchgate:local
#
# DIST       a directory made by scripts/release.sh. Unset: release.sh makes
#            one here for the engine's architecture, as version
#            v0.0.0-dev.<commit>.
# PLATFORMS  unset: the classic builder builds the engine's own platform into
#            the local engine (nothing pulled, nothing pushed), as tests and
#            scripts/action-smoke.sh do. Set (linux/amd64,linux/arm64): buildx
#            builds every platform and pushes the multi-arch image, as the
#            release does.
#
# The build context holds only linux_<arch>/benchgate, unpacked from the
# release's archives after their SHA-256 is checked against checksums.txt,
# and this machine's CA bundle; the Dockerfile's "prebuilt" stage is FROM
# scratch, so no base image is ever pulled. Prints the image: the first tag,
# and after a push its digest (TAG@sha256:...).
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "action-image: $*" >&2; exit 1; }
[ $# -gt 0 ] || set -- benchgate:local
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ctx="$tmp/context"
mkdir "$ctx"

if [ -n "${PLATFORMS:-}" ]; then
  archs=$(echo "$PLATFORMS" | tr ',' '\n' | sed -n 's|^linux/||p')
  [ -n "$archs" ] || die "PLATFORMS=$PLATFORMS: want linux/<arch>[,linux/<arch>...]"
else
  archs=$(docker version --format '{{.Server.Arch}}') || die "no docker engine answers"
fi
dist=${DIST:-}
if [ -z "$dist" ]; then
  dist="$tmp/dist"
  version="v0.0.0-dev.$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  targets=()
  for a in $archs; do targets+=("linux/$a"); done
  scripts/release.sh "$version" "$dist" "${targets[@]}" >&2
fi
[ -f "$dist/checksums.txt" ] || die "$dist: no checksums.txt (make it with scripts/release.sh)"
for a in $archs; do
  shopt -s nullglob
  found=("$dist"/benchgate_*_linux_"$a".tar.gz)
  shopt -u nullglob
  [ ${#found[@]} -eq 1 ] || die "$dist: want one benchgate_*_linux_$a.tar.gz, found ${#found[@]}"
  (cd "$dist" && grep -F " $(basename "${found[0]}")" checksums.txt | sha256sum -c --quiet -) ||
    die "${found[0]}: SHA-256 is not the one checksums.txt lists"
  mkdir -p "$ctx/linux_$a"
  tar -xzf "${found[0]}" -C "$ctx/linux_$a" benchgate
done
ca=/etc/ssl/certs/ca-certificates.crt
[ -s "$ca" ] || die "$ca: no CA bundle on this machine (install ca-certificates)"
cp "$ca" "$ctx/ca-certificates.crt"

tags=()
for t in "$@"; do tags+=(-t "$t"); done
if [ -n "${PLATFORMS:-}" ]; then
  docker buildx build --file Dockerfile --target prebuilt --platform "$PLATFORMS" \
    "${tags[@]}" --metadata-file "$tmp/metadata.json" --push "$ctx" >&2
  digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["containerimage.digest"])' "$tmp/metadata.json")
  echo "$1@$digest"
else
  DOCKER_BUILDKIT=0 docker build --file Dockerfile --target prebuilt \
    --build-arg TARGETARCH="$archs" "${tags[@]}" "$ctx" >&2
  echo "$1"
fi
