#!/usr/bin/env bash
# Instructions per request of a whole server process under load, counted exactly by callgrind
# (user space: every thread of the server, its handler, hyper, rustls, tokio, the allocator; not
# the kernel). Exact on a loaded machine, where CPU time is noise: see docs/benchmarks.md.
#
#   scripts/server-callgrind.sh [h1|h2] [N] [SERVER...]
#
# SERVER is `probegate` (target/release/probegate serve, RUST_LOG=info, the default policy),
# `floor` (the bench's webhook that parses the body as a serde_json::Value and allows it),
# `engine` (the floor's server running probegate's review in its handler), `floor-h2windows`
# (the floor with probegate's HTTP/2 windows) or `library` (probegate's library server, `server::start`
# without logging, in the bench binary). Default: h1, N=500, probegate floor engine.
# Build first: `cargo bench --bench server --no-run` (the release probegate and bench binary).
# SIM=1 adds callgrind's cache and branch simulation: first-level and last-level misses and
# mispredicted branches per request, which instruction counts alone do not show.
# Needs valgrind and h2load (Debian: valgrind, nghttp2-client).
#
# Each server gets the captured Deployment review at /validate from 16 keep-alive HTTPS clients
# (h2load, `--h1` or HTTP/2, one stream at a time): a warm-up, then N requests and 3N requests
# on new connections; the counts are zeroed before and dumped after each, and the difference
# divided by 2N is the cost of one request without the 16 TLS handshakes.
set -euo pipefail
PROTO=${1:-h1}
N=${2:-500}
shift $(( $# < 2 ? $# : 2 ))
SERVERS=("$@")
[ ${#SERVERS[@]} -gt 0 ] || SERVERS=(probegate floor engine)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BODY=$ROOT/tests/fixtures/admission/deployment-create.validating.json
BENCH=$(ls -t "$TARGET"/release/deps/server-* | grep -v '\.d$' | head -1)
H1=()
[ "$PROTO" = h1 ] && H1=(--h1)

load() { # PORT REQUESTS
    h2load "${H1[@]}" -n "$2" -c 16 -m 1 -d "$BODY" -H 'content-type: application/json' \
        "https://127.0.0.1:$1/validate" | grep -q "$2 succeeded, 0 failed" \
        || { echo "h2load: not every request succeeded" >&2; return 1; }
}

count() { # PID PORT REQUESTS: instructions of REQUESTS requests
    callgrind_control -z "$1" >/dev/null
    load "$2" "$3"
    callgrind_control -d "$1" >/dev/null
    local last
    last=$(ls -t "$DIR"/cg.out.* | head -1)
    # Every event's total, space-separated, in the order of the `events:` line.
    awk '/^totals:/ {$1 = ""; print substr($0, 2)}' "$last"
}

# `ONE THREE N`: per request without the handshakes, for each event; instructions in thousands.
per_request() {
    local names
    names=$(awk '/^events:/ {$1 = ""; print substr($0, 2); exit}' "$(ls -t "$DIR"/cg.out.* | head -1)")
    awk -v a="$1" -v b="$2" -v n="$3" -v names="$names" 'BEGIN {
        split(a, x, " "); split(b, y, " "); k = split(names, e, " ")
        for (i = 1; i <= k; i++) {
            v = (y[i] - x[i]) / (2 * n)
            if (e[i] == "Ir") printf "%.1fk instructions", v / 1000
            else printf ", %s %.0f", e[i], v
        }
        printf " per request"
    }'
}

for who in "${SERVERS[@]}"; do
    DIR=$(mktemp -d)
    VG=(valgrind --tool=callgrind --callgrind-out-file="$DIR/cg.out" -q)
    [ "${SIM:-0}" = 1 ] && VG+=(--cache-sim=yes --branch-sim=yes)
    if [ "$who" = probegate ]; then
        RUST_LOG=info "${VG[@]}" "$TARGET/release/probegate" serve --addr 127.0.0.1:0 \
            --write-ca "$DIR/ca.pem" >/dev/null 2>"$DIR/log" </dev/null &
        PID=$!
        for _ in $(seq 600); do grep -q "probegate serving" "$DIR/log" && break; sleep 0.2; done
        PORT=$(grep -o 'addr=127.0.0.1:[0-9]*' "$DIR/log" | head -1 | cut -d: -f2)
        HOLD=""
    else
        role=$who windows=""
        [ "$who" = floor-h2windows ] && role=floor windows=probegate
        mkfifo "$DIR/stdin"
        sleep 100000 >"$DIR/stdin" &
        HOLD=$!
        PROBEGATE_BENCH_ROLE=$role PROBEGATE_BENCH_CA=$DIR/ca.pem \
            PROBEGATE_BENCH_FLOOR_H2_WINDOWS=$windows \
            "${VG[@]}" "$BENCH" <"$DIR/stdin" >"$DIR/log" 2>&1 &
        PID=$!
        for _ in $(seq 600); do grep -q PORT "$DIR/log" && break; sleep 0.2; done
        PORT=$(awk '/^PORT/ {print $2}' "$DIR/log")
    fi
    load "$PORT" 320
    one=$(count "$PID" "$PORT" "$N")
    three=$(count "$PID" "$PORT" $((3 * N)))
    kill -TERM "$PID"
    [ -n "$HOLD" ] && kill "$HOLD"
    wait "$PID" 2>/dev/null || true
    printf '%-16s %s: %s (%.1fk instructions with the handshakes of %d)\n' "$who" "$PROTO" \
        "$(per_request "$one" "$three" "$N")" "$(awk -v a="${one%% *}" -v n="$N" 'BEGIN {print a / n / 1000}')" "$N"
    rm -rf "$DIR"
done
