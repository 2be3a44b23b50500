# probegate's image: the binary `cargo build --release --locked` makes, on a distroless base.
#   docker build -t probegate:0.1.0 .
# (Not built by CI: the project's CI machines have no container engine.)

# Build with the project's toolchain (rust-version in Cargo.toml is the minimum; this is the one
# CI uses). Debian bookworm, like the runtime image below, so the binary's glibc matches.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked

# The release profile strips the binary (about 26 MB instead of 112 MB with line tables); a
# check in CI (.ci/run) keeps the release binary under 40 MB.

# Run: glibc and libgcc, CA certificates, no shell, no package manager. :nonroot runs as
# 65532:65532 already; USER below says so explicitly (and matches deploy/'s runAsUser).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/probegate /probegate
USER 65532:65532
# 8443: the webhook (HTTPS). 8080: the admin port (/healthz, /readyz, /metrics, /policy) when
# serve is given --admin-addr 0.0.0.0:8080, as deploy/ does.
EXPOSE 8443 8080
ENTRYPOINT ["/probegate", "serve"]
