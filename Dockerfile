# The benchgate action image: one static binary in an otherwise empty image.
#
# Stages, in this order on purpose:
#   prebuilt — what a release publishes: the image around the linux binary
#              that scripts/release.sh made for the platform being built
#              (linux_<arch>/benchgate) and a CA bundle, in a build context
#              of their own that scripts/action-image.sh prepares. It comes
#              first so that the classic builder, which builds the stages
#              before the target, needs no base image at all: the release
#              and a machine with no registry build the same image the same
#              way, nothing pulled.
#   build    — compiles benchgate in the official Go image.
#   release  — the default (last) stage, what GitHub builds for the action
#              when action.yml says "image: Dockerfile" (main, and any ref
#              that is not a release): the same final image around the
#              binary from "build".
FROM scratch AS prebuilt
# Set by BuildKit for each platform of a multi-arch build; the classic
# builder is given it (scripts/action-image.sh).
ARG TARGETARCH
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY linux_${TARGETARCH}/benchgate /benchgate
WORKDIR /github/workspace
ENTRYPOINT ["/benchgate"]
CMD ["gate"]

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/benchgate ./cmd/benchgate

FROM scratch AS release
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/benchgate /benchgate
WORKDIR /github/workspace
ENTRYPOINT ["/benchgate"]
CMD ["gate"]
