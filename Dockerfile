# The benchgate action image: one static binary and a CA bundle in an
# otherwise empty image.
#
# This file is what GitHub builds when action.yml says "image: Dockerfile"
# (main, and any commit that is not a release: before the first release,
# docs/action.md#before-the-first-release): its default (last) stage,
# "release", around the binary that "build" compiles in the official Go
# image. Every stage builds from the repository as its context, so Docker's
# classic builder, which builds every stage before the target whether the
# target uses it or not, makes the same image as BuildKit (.ci/run builds
# it with the classic builder).
#
# A release's image is this file's "release" stage too, from its FROM
# down, around the binary scripts/release.sh made: scripts/action-image.sh
# builds it with its one COPY taking the files from a context of their own
# (linux_<arch>/, the binary and a CA bundle) instead of from "build", so
# it pulls no image and compiles nothing, and keeps this WORKDIR,
# ENTRYPOINT and CMD.
#
# GO_IMAGE is the image benchgate is compiled in. GitHub gives no build
# arguments: it is the official Go image. Where no registry can be reached,
# scripts/action-image.sh gives a stand-in made from this machine's Go
# (SOURCE=… GO_IMAGE=local).
ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /rootfs/benchgate ./cmd/benchgate && \
    mkdir -p /rootfs/etc/ssl/certs && \
    cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt

FROM scratch AS release
COPY --from=build /rootfs/ /
WORKDIR /github/workspace
ENTRYPOINT ["/benchgate"]
CMD ["gate"]
