#!/usr/bin/env bash
# setup-benchgate.sh VERSION DIR — install benchgate's released binary for
# this runner's OS and architecture into DIR: download the release's archive
# and its checksums file, refuse the archive unless its SHA-256 is the one
# the checksums file lists for it, unpack the binary, and put DIR on the
# workflow's PATH ($GITHUB_PATH) when there is one. A DIR that already holds
# the binary (a cache hit) is used as it is.
#
# BENCHGATE_RELEASE_URL is where releases are (default: this repository's
# GitHub releases); tests point it at a local server.
set -euo pipefail

die() { echo "setup-benchgate: $*" >&2; exit 1; }

version=${1:-}
dir=${2:-}
[ -n "$version" ] && [ -n "$dir" ] || die "usage: setup-benchgate.sh VERSION DIR"
# A release tag, nothing else: it becomes part of a URL and of file names.
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || die "version $version: want a release tag such as v1.2.3"
base=${BENCHGATE_RELEASE_URL:-https://github.com/benchgate/benchgate/releases/download}

bin=benchgate ext=tar.gz
case "$(uname -s)" in
Linux) os=linux ;;
Darwin) os=darwin ;;
# Git Bash, the bash of GitHub's Windows runners. benchgate there compares,
# merges and keeps history; running targets needs Linux.
MINGW* | MSYS* | CYGWIN*) os=windows bin=benchgate.exe ext=zip ;;
*) die "no released binary for $(uname -s): build from source (go install github.com/benchgate/benchgate/cmd/benchgate@$version)" ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no released binary for $(uname -m)" ;;
esac
[ "$os/$arch" != windows/arm64 ] || die "no released binary for windows/arm64: the release has windows/amd64"

if [ ! -x "$dir/$bin" ]; then
  asset="benchgate_${version#v}_${os}_${arch}.$ext"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for f in "$asset" checksums.txt; do
    curl -fsSL --retry 3 --proto '=https,http' -o "$tmp/$f" "$base/$version/$f" || die "cannot download $base/$version/$f"
  done
  want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1; exit }' "$tmp/checksums.txt")
  [ -n "$want" ] || die "checksums.txt of $version lists no $asset"
  if command -v sha256sum >/dev/null; then
    got=$(sha256sum "$tmp/$asset" | cut -d' ' -f1)
  else
    got=$(shasum -a 256 "$tmp/$asset" | cut -d' ' -f1)
  fi
  [ "$got" = "$want" ] || die "$asset: SHA-256 $got, but checksums.txt says $want: refused"
  if [ "$ext" = zip ]; then
    command -v unzip >/dev/null || die "unzip is needed to unpack $asset"
    unzip -q "$tmp/$asset" "$bin" -d "$tmp" || die "$asset holds no $bin"
  else
    tar -xzf "$tmp/$asset" -C "$tmp" "$bin" || die "$asset holds no $bin binary"
  fi
  mkdir -p "$dir"
  install -m 0755 "$tmp/$bin" "$dir/$bin"
fi
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dir" >>"$GITHUB_PATH"
fi
"$dir/$bin" version
