# edgegrid for linux/amd64 gateways. The linux/arm64 twin is Dockerfile.arm64v8;
# keep the two in step (only the platform lines differ).
#
#   docker build -t edgegrid:amd64 --build-arg VERSION=1.2.3 .
#
# The build stage runs on the builder's own platform and cross-compiles a
# static, stripped binary; the runtime stage holds only that binary, the CA
# bundle and a passwd/group entry for eventgriduser (UID/GID 2000, the
# original module's user). No shell, no package manager, no persistence.
# The image's configuration is the broker's secure default: HTTPS on 4438
# with client certificates required; development settings belong in the
# deployment manifest, never here.

ARG GO_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=scratch
# BuildKit, buildah and podman set BUILDPLATFORM; the classic builder (which
# some IoT Edge tooling drives) does not, hence the fallback. No default on
# the ARG itself: a default would override the builder's value.
ARG BUILDPLATFORM

FROM --platform=${BUILDPLATFORM:-linux/amd64} ${GO_IMAGE} AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \
      go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/app/edgegrid ./module \
 && mkdir -p /out/etc/ssl/certs \
 && cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/ca-certificates.crt \
 && printf 'eventgriduser:x:2000:2000:eventgriduser:/app:/sbin/nologin\n' >/out/etc/passwd \
 && printf 'eventgriduser:x:2000:\n' >/out/etc/group

FROM --platform=linux/amd64 ${RUNTIME_IMAGE}
ARG VERSION=dev
LABEL org.opencontainers.image.title="edgegrid" \
      org.opencontainers.image.description="Event Grid on IoT Edge compatible event broker" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/ /
WORKDIR /app
USER 2000:2000
# 4438: HTTPS (on by default). 5888: HTTP (off unless tlsPolicy is enabled or disabled).
EXPOSE 4438 5888
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["/app/edgegrid", "healthcheck"]
ENTRYPOINT ["/app/edgegrid"]
