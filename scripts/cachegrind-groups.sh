#!/usr/bin/env bash
# Per-evaluation cache and branch simulation of one workload, by group of functions (docs/benchmarks.md
# s24): valgrind's cachegrind (--cache-sim=yes --branch-sim=yes) of N evaluations and of 0, the
# difference (cg_diff) divided by N, summed into groups (tree-sitter's parse, its node and cursor
# calls, its releases and Parser::new, redaction, malloc, libc mem*, the rest), with two cycle models:
# A = instructions / 4 + 12 an L1 miss + 15 a mispredict, B = instructions / 4 + 15 a mispredict.
# Also dhat's heap blocks per evaluation. Deterministic: load on the machine changes nothing.
#
# Usage: scripts/cachegrind-groups.sh EVALCOUNT WORKLOAD [N]
#   EVALCOUNT: an `examples/evalcount.rs` binary with symbols, built e.g. with
#     cargo build --profile bench --example evalcount --config 'profile.bench.package.probegate.strip=false'
#     (for an old revision: its tree with today's examples/evalcount.rs and
#     benches/support/workloads.rs copied in); run it from that tree's root (fixtures by path).
#   WORKLOAD: a tests/fixtures/corpus file name, as evalcount takes it. N: default 300.
# Env: OUT (default a new directory under /tmp) keeps cachegrind's and dhat's files; the per-function
#   listing is $OUT/functions.txt.
set -euo pipefail
bin=${1:?usage: $0 EVALCOUNT WORKLOAD [N]}
what=${2:?usage: $0 EVALCOUNT WORKLOAD [N]}
n=${3:-300}
out=${OUT:-$(mktemp -d /tmp/cachegrind-groups.XXXXXX)}
mkdir -p "$out"
for k in 0 "$n"; do
  valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --cachegrind-out-file="$out/cg.$k" \
    "$bin" "$what" "$k" > /dev/null 2> "$out/cg.$k.err"
  valgrind --tool=dhat --dhat-out-file="$out/dhat.$k" "$bin" "$what" "$k" > /dev/null 2> "$out/dhat.$k.err"
done
cg_diff "$out/cg.0" "$out/cg.$n" > "$out/cg.diff"
cg_annotate --show-percs=no --auto=no --threshold=0 "$out/cg.diff" > "$out/functions.txt"
python3 - "$out" "$n" <<'PY'
import re, sys
out, n = sys.argv[1], int(sys.argv[2])
# Columns: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim
rows = []
for line in open(f"{out}/functions.txt"):
    m = re.match(r"^\s*((?:[-\d,.]+\s+){12}[-\d,.]+)\s+(\S.*)$", line)
    if m and "PROGRAM TOTALS" not in m.group(2):
        nums = [0 if x == "." else int(x.replace(",", "")) for x in m.group(1).split()]
        rows.append((m.group(2).split(":", 1)[-1], m.group(2), nums))

def group(fn, full):
    if "malloc.c" in full or fn.startswith("__rustc::__rdl"):
        return "malloc, realloc, free"
    if re.match(r"(ts_|tree_sitter|stack_|stack__|_array__|reusable_node)", fn) or "tree_sitter::" in fn:
        if "cursor" in fn or fn.startswith("ts_node") or "tree_sitter::Node" in fn:
            return "tree-sitter: node and cursor calls"
        if "release" in fn or "delete" in fn or "Drop" in fn or ("new" in fn and "stack_node_new" not in fn):
            return "tree-sitter: releases, Parser::new"
        return "tree-sitter: the parse"
    if re.search(r"mem(move|cpy|cmp|chr|set)|strlen", full):
        return "libc mem*"
    if "engine::exec::redact" in fn or "opaque_script_summary" in fn:
        return "redaction"
    return "the rest"

groups = {}
for fn, full, nums in rows:
    g = groups.setdefault(group(fn, full), [0] * 13)
    for i, v in enumerate(nums):
        g[i] += v
total = [sum(g[i] for g in groups.values()) for i in range(13)]
model_a = lambda v: v[0] / 4 + 12 * (v[1] + v[4] + v[7]) + 15 * (v[10] + v[12])
model_b = lambda v: v[0] / 4 + 15 * (v[10] + v[12])
print(f"per evaluation (N = {n} minus N = 0)")
print(f"{'group':38} {'instr':>9} {'L1i miss':>9} {'L1d r+w':>13} {'mispred c+i':>13} {'model A':>9} {'model B':>9}")
for name, v in sorted(groups.items(), key=lambda kv: -kv[1][0]) + [("TOTAL", total)]:
    print(f"{name:38} {v[0] / n / 1e3:8.1f}k {v[1] / n:9.0f} {v[4] / n:6.0f} +{v[7] / n:5.0f} "
          f"{v[10] / n:6.0f} +{v[12] / n:5.0f} {model_a(v) / n / 1e3:8.1f}k {model_b(v) / n / 1e3:8.1f}k")
blocks = []
for k in (0, n):
    m = re.search(r"Total:\s+([\d,]+) bytes in ([\d,]+) blocks", open(f"{out}/dhat.{k}.err").read())
    blocks.append((int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))))
print(f"heap: {(blocks[1][1] - blocks[0][1]) / n:.1f} blocks, {(blocks[1][0] - blocks[0][0]) / n / 1e3:.1f} KB")
print(f"per function: {out}/functions.txt (totals of all {n} evaluations)")
PY
