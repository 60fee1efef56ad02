# The benchgate action image: one static binary in an otherwise empty image.
#
# Stages, in this order on purpose:
#   local    — the final image around a binary built beforehand on the host
#              (bin/benchgate and bin/ca-certificates.crt, see
#              scripts/action-image.sh). It comes first so that the classic
#              builder, which builds the stages before the target, needs no
#              base image at all: this is how the image is built where no
#              registry can be reached.
#   build    — compiles benchgate in the official Go image.
#   release  — the default (last) stage, what GitHub builds for the action:
#              the same final image around the binary from "build".
FROM scratch AS local
COPY bin/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY bin/benchgate /benchgate
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
