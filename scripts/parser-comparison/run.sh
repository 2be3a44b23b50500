#!/usr/bin/env bash
# The comparison behind docs/shell-parser.md. Needs python3 with PyYAML and
# crates.io. Usage: scripts/parser-comparison/run.sh [SHARED_DIR]   (default ../shared next to the repo)
# Timings are only comparable within one run; the hostile inputs report CPU time and peak memory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${1:-$repo/../shared}
work=$(mktemp -d /tmp/parser-comparison.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$here/extract.py" "$repo" "$shared" "$work/scripts"
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/parser-comparison-target} cargo build --release --quiet --manifest-path "$here/Cargo.toml"
bin=${CARGO_TARGET_DIR:-/tmp/parser-comparison-target}/release/parser-comparison
"$bin" compare "$work/scripts" | tail -2
"$bin" steps "$work/scripts" | tail -12
for kind in parens subst dquote braces pipes heredocs case backticks arith ifs expansions; do
  for parser in ts brush; do
    # A separate process each: brush-parser aborts on some of them; 60 s at most.
    /usr/bin/time -f "  cpu %U s, peak %M KB, exit %x" timeout 60 "$bin" hostile "$kind" "$parser" 2>&1 | tail -2 || true
  done
done
