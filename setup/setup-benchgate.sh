#!/usr/bin/env bash
# setup-benchgate.sh VERSION DIR [BINDIR] — install benchgate's released
# binary for this runner's OS and architecture: download the release's
# checksums file, refuse the archive unless its SHA-256 is the one the
# checksums file lists for it, unpack the binary into BINDIR (default: a
# new temporary directory), and put BINDIR on the workflow's PATH
# ($GITHUB_PATH) when there is one.
#
# setup-benchgate.sh source SRC [BINDIR] — build benchgate from the module
# at SRC (the setup action gives its own checkout: the commit it is named
# by) with the go on PATH, static and -trimpath as a release is, into
# BINDIR, and put BINDIR on PATH the same way. REF, the ref the action is
# named by (github.action_ref; when empty, the name of SRC's directory,
# which the runner names by it), becomes the version the binary says: a
# commit's dev-<its first 12 digits>, a release tag itself; any other
# (a branch, none) stamps nothing. A go of 1.21 or later builds with the
# toolchain SRC's go.mod names, fetching it if need be, for this build
# only.
#
# setup-benchgate.sh go-usable — print usable=true when the go on PATH can
# build benchgate (1.21 or later: it fetches the toolchain go.mod names),
# usable=false otherwise: the setup action then installs one.
#
# DIR is the cache (the setup action's actions/cache path): it keeps the
# verified archive, never the binary. A cached archive is checked against
# checksums.txt on every run, as a download is: a cache entry is files
# that another job, or an earlier job on a self-hosted runner, could have
# written, so what is there is refused (and downloaded again) unless its
# SHA-256 is the release's, and the binary that runs is always unpacked
# from the archive just checked. checksums.txt itself is downloaded on
# every run.
#
# Downloads are https only, redirects included (curl --proto '=https'
# --proto-redir '=https'). BENCHGATE_RELEASE_URL is where releases are
# (default: this repository's GitHub releases); tests point it at a local
# https server, trusted through CURL_CA_BUNDLE.
set -euo pipefail

die() { echo "setup-benchgate: $*" >&2; exit 1; }

if [ "${1:-}" = go-usable ]; then
  # The go's own version, from outside any module (one that asks for a
  # newer Go would make it fetch that just to answer).
  v=$(cd / && GOTOOLCHAIN=local go env GOVERSION 2>/dev/null) || v=""
  if [[ "$v" =~ ^go1\.([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 21 ]; then
    echo usable=true
  else
    echo usable=false
  fi
  exit 0
fi

version=${1:-}
dir=${2:-}
bindir=${3:-}
[ -n "$version" ] && [ -n "$dir" ] || die "usage: setup-benchgate.sh VERSION DIR [BINDIR], or setup-benchgate.sh source SRC [BINDIR]"

if [ "$version" = source ]; then
  src=$dir
  grep -qx 'module github.com/benchgate/benchgate' "$src/go.mod" 2>/dev/null ||
    die "$src: not benchgate's source (no go.mod of module github.com/benchgate/benchgate)"
  command -v go >/dev/null || die "no go on PATH to build benchgate with"
  ldflags="-s -w"
  ref=${REF:-}
  if [ -z "$ref" ]; then
    # The runner fetches an action into a directory named by its ref
    # (_actions/OWNER/REPO/REF): the ref, where github.action_ref is empty.
    ref=$(basename "$(cd "$src" && pwd)")
  fi
  if [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
    ldflags+=" -X main.version=dev-${ref:0:12}"
  elif [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]]; then
    ldflags+=" -X main.version=$ref"
  fi
  [ -n "$bindir" ] || bindir=$(mktemp -d)
  mkdir -p "$bindir"
  bin=benchgate
  case "$(uname -s)" in MINGW* | MSYS* | CYGWIN*) bin=benchgate.exe ;; esac
  echo "setup-benchgate: building benchgate from $src with $(cd / && GOTOOLCHAIN=local go version)" >&2
  # The module's own settings, not the job's: its GOFLAGS (-mod=vendor,
  # say) and go.work are the project's, for the project's builds.
  (cd "$src" && GOFLAGS="" GOWORK=off GOTOOLCHAIN=auto CGO_ENABLED=0 \
    go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$bindir/$bin" ./cmd/benchgate) ||
    die "building benchgate from $src failed"
  if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$bindir" >>"$GITHUB_PATH"
  fi
  "$bindir/$bin" version
  exit 0
fi
# A release tag, nothing else: it becomes part of a URL and of file names.
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || die "version $version: want a release tag such as v1.2.3"
base=${BENCHGATE_RELEASE_URL:-https://github.com/benchgate/benchgate/releases/download}
[[ "$base" == https://* ]] || die "BENCHGATE_RELEASE_URL $base: want an https:// address"

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

fetch() {
  curl -fsSL --retry 3 --proto '=https' --proto-redir '=https' -o "$2" "$1" || die "cannot download $1"
}
sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

asset="benchgate_${version#v}_${os}_${arch}.$ext"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch "$base/$version/checksums.txt" "$tmp/checksums.txt"
want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1; exit }' "$tmp/checksums.txt")
[ -n "$want" ] || die "checksums.txt of $version lists no $asset"

# The cached archive, copied first so that the file checked is the file
# unpacked.
if [ -f "$dir/$asset" ] && cp "$dir/$asset" "$tmp/$asset"; then
  got=$(sha256 "$tmp/$asset")
  if [ "$got" != "$want" ]; then
    echo "setup-benchgate: the cached $dir/$asset has SHA-256 $got, but checksums.txt says $want: refused, downloading it again" >&2
    rm -f "$tmp/$asset" "$dir/$asset"
  fi
fi
if [ ! -f "$tmp/$asset" ]; then
  fetch "$base/$version/$asset" "$tmp/$asset"
  got=$(sha256 "$tmp/$asset")
  [ "$got" = "$want" ] || die "$asset: SHA-256 $got, but checksums.txt says $want: refused"
  mkdir -p "$dir"
  cp "$tmp/$asset" "$dir/$asset.$$" && mv -f "$dir/$asset.$$" "$dir/$asset"
fi

mkdir "$tmp/unpacked"
if [ "$ext" = zip ]; then
  command -v unzip >/dev/null || die "unzip is needed to unpack $asset"
  unzip -q "$tmp/$asset" "$bin" -d "$tmp/unpacked" || die "$asset holds no $bin"
else
  tar -xzf "$tmp/$asset" -C "$tmp/unpacked" "$bin" || die "$asset holds no $bin binary"
fi
[ -n "$bindir" ] || bindir=$(mktemp -d)
mkdir -p "$bindir"
install -m 0755 "$tmp/unpacked/$bin" "$bindir/$bin"
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$bindir" >>"$GITHUB_PATH"
fi
"$bindir/$bin" version
