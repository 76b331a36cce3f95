# headroom's image: the `headroom` binary, static (musl), on a minimal base. The segments' pods
# of `headroom k8s` run it (`command: ["headroom"]`), and so does the merge Job.
#
#   docker build -t registry.example/headroom:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t registry.example/headroom:0.1.0 --push .
#
# The build line below is scripts/image-binary.sh's, character for character (a test reads
# both and runs the script: the binary it makes runs a segment from only the ConfigMap's
# files). The target is the build machine's own architecture, so an arm64 build (Graviton)
# is made natively or under buildx's emulation, never cross-compiled.
#
# The bases are pinned by digest with scripts/pin-image-bases.sh (crane, skopeo or docker
# buildx, and a registry within reach): `FROM image:tag@sha256:…`. Until it has been run
# where a registry answers, they are the moving tags below.

FROM rust:1.95-bookworm AS build
# musl-gcc compiles ring's C and assembly for the musl target (bookworm's, pinned).
RUN apt-get update \
    && apt-get install -y --no-install-recommends musl-tools=1.2.3-1 \
    && rm -rf /var/lib/apt/lists/* \
    && rustup target add "$(uname -m)-unknown-linux-musl"
WORKDIR /src
COPY . .
RUN cargo build --locked --release --target "$(uname -m)-unknown-linux-musl" --bin headroom \
    && cp "target/$(uname -m)-unknown-linux-musl/release/headroom" /headroom

# No shell, no libc, no package manager: the binary (prices, page templates and the dashboard
# are inside it), CA certificates for HTTPS targets, and /tmp. Runs as `nonroot` (65532), the
# user the manifests of `headroom k8s` name (runAsUser, and fsGroup so that it can write its
# part on the claim): their pods meet the "restricted" Pod Security Standard.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /headroom /usr/local/bin/headroom
ENTRYPOINT ["headroom"]
