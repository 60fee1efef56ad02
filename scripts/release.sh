#!/usr/bin/env bash
# release.sh VERSION OUTDIR [OS/ARCH ...] — the release's binaries and their
# checksums, as the release workflow publishes them and the setup action
# (setup/setup-benchgate.sh) downloads them: for each target a static binary
# built with -trimpath and the version stamped (main.version), packed as
# benchgate_<version without v>_<os>_<arch>.tar.gz (.zip for windows), and
# checksums.txt, the SHA-256 of each archive. The default targets are the
# release's: linux and darwin on amd64 and arm64, windows on amd64 (off
# Linux the CLI compares results files; running targets needs Linux).
set -euo pipefail

die() { echo "release: $*" >&2; exit 1; }
version=${1:-}
out=${2:-}
[ -n "$version" ] && [ -n "$out" ] || die "usage: release.sh VERSION OUTDIR [OS/ARCH ...]"
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || die "version $version: want a release tag such as v1.2.3"
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64)

cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in "${targets[@]}"; do
  os=${t%/*} arch=${t#*/}
  name="benchgate_${version#v}_${os}_${arch}"
  mkdir -p "$tmp/$name"
  bin=benchgate
  [ "$os" = windows ] && bin=benchgate.exe
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$tmp/$name/$bin" ./cmd/benchgate
  if [ "$os" = windows ]; then
    (cd "$tmp/$name" && python3 -m zipfile -c "$out/$name.zip" "$bin")
  else
    tar -czf "$out/$name.tar.gz" -C "$tmp/$name" "$bin"
  fi
done
(cd "$out" && sha256sum benchgate_*.tar.gz benchgate_*.zip 2>/dev/null >checksums.txt || true)
[ -s "$out/checksums.txt" ] || die "no archive was made"
echo "release $version: $(ls "$out" | tr '\n' ' ')"
