#!/usr/bin/env bash
# action-image.sh — the action's image, built here the ways it is built
# for users:
#
#   scripts/action-image.sh [TAG ...]             # the release's image; default tag benchgate:local
#   SOURCE=classic scripts/action-image.sh [TAG]  # what GitHub builds for "image: Dockerfile"
#
# The release's image (SOURCE unset) is built from the release's own
# binaries, the same way by the release workflow and on a machine with no
# registry:
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
# Its build context holds only linux_<arch>/benchgate, unpacked from the
# release's archives after their SHA-256 is checked against checksums.txt,
# and this machine's CA bundle, linux_<arch>/etc/ssl/certs/; its Dockerfile
# is the repository's "release" stage, from its FROM down, with the one
# COPY that takes the files from the "build" stage taking them from
# linux_<arch>/ instead. It is FROM scratch: no base image is ever pulled,
# and the image keeps the Dockerfile's WORKDIR, ENTRYPOINT and CMD.
#
# SOURCE     classic or buildkit: instead, the image GitHub builds when
#            action.yml says "image: Dockerfile" (main, or a commit before
#            the first release): the repository's Dockerfile, its default
#            stage, the repository as the context, with Docker's classic
#            builder (DOCKER_BUILDKIT=0: Docker 20.10's default, and older
#            self-hosted runners') or BuildKit. DIST and PLATFORMS are not
#            read.
# GO_IMAGE   with SOURCE, the image benchgate is compiled in (the
#            Dockerfile's GO_IMAGE). Unset: the Dockerfile's own, the
#            official Go image, pulled unless the engine has it. "local": a
#            stand-in made here, FROM scratch, with nothing pulled: this
#            machine's Go toolchain (go env GOROOT) as /usr/local/go, a
#            static busybox for the RUN lines (Debian's busybox-static) and
#            the CA bundle. The stand-in, and the build stages made on it,
#            are removed before the script ends.
#
# Prints the image: the first tag, and after a push its digest
# (TAG@sha256:...).
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "action-image: $*" >&2; exit 1; }
[ $# -gt 0 ] || set -- benchgate:local
tags=()
for t in "$@"; do tags+=(-t "$t"); done
tmp=$(mktemp -d)
stand_in_id=""
cleanup() {
  rm -rf "$tmp"
  if [ -n "$stand_in_id" ]; then
    # The stand-in, then the build stages made on it, which inherit its
    # label of this run's own: nothing else is removed.
    docker image rm "benchgate-go-stand-in:$stand_in_id" >/dev/null 2>&1 || true
    docker image prune -f --filter "label=io.benchgate.go-stand-in=$stand_in_id" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
ca=/etc/ssl/certs/ca-certificates.crt

if [ -n "${SOURCE:-}" ]; then
  case "$SOURCE" in
  classic) buildkit=0 ;;
  buildkit) buildkit=1 ;;
  *) die "SOURCE=$SOURCE: want classic or buildkit" ;;
  esac
  args=()
  if [ "${GO_IMAGE:-}" = local ]; then
    [ -s "$ca" ] || die "$ca: no CA bundle on this machine (install ca-certificates)"
    busybox=$(command -v busybox) || die "GO_IMAGE=local needs a static busybox on PATH (Debian: busybox-static)"
    ! ldd "$busybox" >/dev/null 2>&1 || die "$busybox is not statically linked (Debian: busybox-static)"
    goroot=$(go env GOROOT)
    stand_in_id="$(date +%s)-$$"
    stand_in="benchgate-go-stand-in:$stand_in_id"
    echo "action-image: a stand-in for the Go image, $stand_in: $("$goroot/bin/go" version), nothing pulled" >&2
    s="$tmp/go"
    mkdir -p "$s/usr/local" "$s/bin" "$s/etc/ssl/certs" "$s/go" "$s/root/.cache/go-build" "$s/goproxy"
    mkdir -m 1777 "$s/tmp"
    cp -al "$goroot" "$s/usr/local/go" 2>/dev/null || { rm -rf "$s/usr/local/go"; cp -a "$goroot" "$s/usr/local/go"; }
    cp "$busybox" "$s/bin/busybox"
    for applet in $("$busybox" --list); do
      [ "$applet" = busybox ] || ln -s busybox "$s/bin/$applet"
    done
    cp "$ca" "$s/etc/ssl/certs/ca-certificates.crt"
    echo 'root:x:0:0:root:/root:/bin/sh' >"$s/etc/passwd"
    # What this machine's Go caches hold for the build, so that it costs
    # about a link rather than a download and a compile of every package
    # (.ci/run's time): go.mod's modules as a file:// proxy (the network
    # after it, for anything missing), and the build cache's entries for
    # the packages a -trimpath build of cmd/benchgate compiles — with
    # -trimpath an entry does not depend on the directory built in, and
    # the toolchain is this one. Modules are checked against go.sum, and
    # build cache entries are keyed by everything that made them: the
    # image is the one a cold build makes, sooner.
    export GOFLAGS="" GOWORK=off CGO_ENABLED=0
    modcache=$(go env GOMODCACHE)/cache/download
    go mod download -json | sed -n 's/^\t"\(Info\|GoMod\|Zip\)": "\(.*\)",\{0,1\}$/\2/p' | while IFS= read -r f; do
      rel=${f#"$modcache"/}
      mkdir -p "$s/goproxy/$(dirname "$rel")"
      cp "$f" "$s/goproxy/$rel"
    done
    gocache=$(go env GOCACHE)
    go list -trimpath -export -deps -f '{{.Export}}' ./cmd/benchgate | sed -n 's|.*/\([0-9a-f]*\)-d$|\1|p' >"$tmp/outputs"
    find "$gocache" -name '*-a' -print0 |
      xargs -0 awk 'FILENAME == ARGV[1] { want[$1] = 1; next } $3 in want { print FILENAME; print substr($3, 1, 2) "/" $3 "-d"; nextfile }' "$tmp/outputs" |
      while IFS= read -r f; do
        rel=${f#"$gocache"/}
        mkdir -p "$s/root/.cache/go-build/$(dirname "$rel")"
        cp "$gocache/$rel" "$s/root/.cache/go-build/$rel"
      done
    unset GOFLAGS GOWORK CGO_ENABLED
    printf 'Dockerfile\n.dockerignore\n' >"$s/.dockerignore"
    cat >"$s/Dockerfile" <<EOF
FROM scratch
COPY . /
ENV PATH=/go/bin:/usr/local/go/bin:/bin GOPATH=/go GOTOOLCHAIN=local GOPROXY=file:///goproxy,https://proxy.golang.org
LABEL io.benchgate.go-stand-in=$stand_in_id
EOF
    DOCKER_BUILDKIT=0 docker build -q -t "$stand_in" "$s" >/dev/null
    rm -rf "$s"
    args+=(--build-arg "GO_IMAGE=$stand_in")
  elif [ -n "${GO_IMAGE:-}" ]; then
    args+=(--build-arg "GO_IMAGE=$GO_IMAGE")
  fi
  # --force-rm: a failed step's container goes too.
  DOCKER_BUILDKIT=$buildkit docker build --force-rm --file Dockerfile "${args[@]}" "${tags[@]}" . >&2
  echo "$1"
  exit 0
fi

if [ -n "${PLATFORMS:-}" ]; then
  archs=$(echo "$PLATFORMS" | tr ',' '\n' | sed -n 's|^linux/||p')
  [ -n "$archs" ] || die "PLATFORMS=$PLATFORMS: want linux/<arch>[,linux/<arch>...]"
else
  archs=$(docker version --format '{{.Server.Arch}}') || die "no docker engine answers"
fi
ctx="$tmp/context"
mkdir "$ctx"
dist=${DIST:-}
if [ -z "$dist" ]; then
  dist="$tmp/dist"
  version="v0.0.0-dev.$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  targets=()
  for a in $archs; do targets+=("linux/$a"); done
  scripts/release.sh "$version" "$dist" "${targets[@]}" >&2
fi
[ -f "$dist/checksums.txt" ] || die "$dist: no checksums.txt (make it with scripts/release.sh)"
[ -s "$ca" ] || die "$ca: no CA bundle on this machine (install ca-certificates)"
for a in $archs; do
  shopt -s nullglob
  found=("$dist"/benchgate_*_linux_"$a".tar.gz)
  shopt -u nullglob
  [ ${#found[@]} -eq 1 ] || die "$dist: want one benchgate_*_linux_$a.tar.gz, found ${#found[@]}"
  (cd "$dist" && grep -F " $(basename "${found[0]}")" checksums.txt | sha256sum -c --quiet -) ||
    die "${found[0]}: SHA-256 is not the one checksums.txt lists"
  mkdir -p "$ctx/linux_$a/etc/ssl/certs"
  tar -xzf "${found[0]}" -C "$ctx/linux_$a" benchgate
  cp "$ca" "$ctx/linux_$a/etc/ssl/certs/ca-certificates.crt"
done

# The Dockerfile's last stage, its files from the context: the same image
# as GitHub builds from source, around the released binary.
copy='COPY --from=build /rootfs/ /'
stage=$(sed -n '/^FROM scratch AS release$/,$p' Dockerfile)
[ "$(grep -c '^FROM ' <<<"$stage")" = 1 ] || die "Dockerfile: want its last stage to be \"FROM scratch AS release\""
[ "$(grep -cxF "$copy" <<<"$stage")" = 1 ] || die "Dockerfile: want one \"$copy\" in its release stage"
{
  echo "# scripts/action-image.sh: the Dockerfile's release stage, its files from this context"
  while IFS= read -r line; do
    if [ "$line" = "$copy" ]; then
      echo 'ARG TARGETARCH'
      echo 'COPY linux_${TARGETARCH}/ /'
    else
      echo "$line"
    fi
  done <<<"$stage"
} >"$ctx/Dockerfile"

if [ -n "${PLATFORMS:-}" ]; then
  docker buildx build --file "$ctx/Dockerfile" --platform "$PLATFORMS" \
    "${tags[@]}" --metadata-file "$tmp/metadata.json" --push "$ctx" >&2
  digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["containerimage.digest"])' "$tmp/metadata.json")
  echo "$1@$digest"
else
  # BuildKit sets TARGETARCH for each platform; the classic builder is
  # given it.
  DOCKER_BUILDKIT=0 docker build --file "$ctx/Dockerfile" \
    --build-arg TARGETARCH="$archs" "${tags[@]}" "$ctx" >&2
  echo "$1"
fi
