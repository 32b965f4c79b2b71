# rayboot's image: the two static binaries and nothing else.
#
#   docker build -t registry.example.com/rayboot:0.1.0 .
#
# The builder runs the very target `make test` builds (`make all`), on the Debian release the
# project is developed on; the dependencies come from Debian's source packages, as in
# scripts/bootstrap.sh and deps/build.sh. The binaries need no libc, CA bundle or shell: the
# sidecar reads its CA from the service-account mount.
FROM debian:bookworm AS builder
WORKDIR /src
COPY . .
RUN scripts/bootstrap.sh --build-only && make all

FROM scratch
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="rayboot" \
      org.opencontainers.image.description="Static entrypoint and sidecar that bring up Ray clusters in Kubernetes pods" \
      org.opencontainers.image.source="https://github.com/rayboot/rayboot" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder /src/build/bin/rayboot /rayboot
COPY --from=builder /src/build/bin/rayboot-sidecar /rayboot-sidecar
ENTRYPOINT ["/rayboot"]
