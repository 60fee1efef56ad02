#!/usr/bin/env bash
# stamp-action.sh IMAGE [FILE] — make an action.yml run a prebuilt image:
# its one "image: Dockerfile" line (the container action built from source)
# becomes "image: docker://IMAGE". The release workflow runs it on the
# release's own commit, so that the tag's action.yml names the image that
# release pushed, by version and by digest:
#
#   scripts/stamp-action.sh ghcr.io/benchgate/benchgate:v1.2.3@sha256:<64 hex>
#
# FILE defaults to action.yml. It refuses an IMAGE that is not
# REGISTRY/OWNER/NAME:vX.Y.Z[@sha256:...] and a FILE that does not say
# "image: Dockerfile" exactly once (one already stamped, say), changing
# nothing then.
set -euo pipefail
die() { echo "stamp-action: $*" >&2; exit 1; }
image=${1:-}
file=${2:-action.yml}
[ -n "$image" ] || die "usage: stamp-action.sh IMAGE [FILE]"
[[ "$image" =~ ^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+:v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?(@sha256:[0-9a-f]{64})?$ ]] ||
  die "image $image: want REGISTRY/OWNER/NAME:vX.Y.Z, optionally @sha256:<digest>"
[ -f "$file" ] || die "$file: no such file"
n=$(grep -cE '^  image: Dockerfile$' "$file" || true)
[ "$n" = 1 ] || die "$file: want one line \"  image: Dockerfile\" under runs, found $n (already stamped?)"
tmp="$file.stamp.$$"
trap 'rm -f "$tmp"' EXIT
sed -E "s|^  image: Dockerfile\$|  image: docker://$image|" "$file" >"$tmp"
mv "$tmp" "$file"
echo "$file: image: docker://$image"
