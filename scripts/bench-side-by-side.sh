#!/usr/bin/env bash
# The engine benchmark (benches/engine.rs) of two revisions in one run: both are built (sharing one
# target directory, so dependencies compile once), then run interleaved ROUNDS times (old new, new
# old, ...), so that both see the same machine load. Both builds are forced (the sources' mtimes are
# bumped, the work tree's too). Prints each benchmark's median (the median of the rounds'
# divan medians) on each side and the ratio new/old, then the issue-9 summary: the median ratio over
# the corpus Pods that carry probes (file names without "no-probes"), the MySQL primary, the Airflow
# scheduler and the worst-case review.
#
# Usage: scripts/bench-side-by-side.sh OLD_REV [NEW_REV|WORKTREE] [ROUNDS]
#   e.g. scripts/bench-side-by-side.sh 14624f6 WORKTREE 5
# A benchmark whose name has `_warm` that only the new side has (s25: `evaluate_corpus_pod_warm`,
# `worst_case_exec_review_warm`, with a parse cache) is compared with the old side's row of the
# same name without `_warm` (the old code has no cache: its plain evaluation), in a second table
# and summary. Rows only the new side has otherwise (`admission_sequence_*`) are listed on their own.
# Env: CARGO_TARGET_DIR (default /tmp/probegate-bench-target), PROFILE (default bench; dev only to
#      try the script), FILTER (divan filter, default: evaluate_corpus_pod, worst_case_exec_review and
#      admission_sequence), KEEP (a directory to copy the rounds' raw divan outputs and the two bench binaries to),
#      WORK (a directory for the builds and the rounds instead of a temporary one; kept at the end),
#      REUSE_OLD=1 (with WORK: use the old side's binary a previous run left in WORK, and its
#      source, which the binary reads its fixtures from, instead of building it again),
#      REUSE_NEW=1 (with WORK: the same for the new side's; a work tree's binary reads the work
#      tree's fixtures, so build it from the work tree as it is, e.g. a copy of the
#      engine bench's executable of `cargo build --profile bench --bench engine`).
set -euo pipefail
repo=$(git rev-parse --show-toplevel)
old=${1:?usage: $0 OLD_REV [NEW_REV|WORKTREE] [ROUNDS]}
new=${2:-WORKTREE}
rounds=${3:-5}
target=${CARGO_TARGET_DIR:-/tmp/probegate-bench-target}
profile=${PROFILE:-bench}
filter=${FILTER:-evaluate_corpus_pod|worst_case_exec_review|admission_sequence}
if [ -n "${WORK:-}" ]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d /tmp/bench-side-by-side.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi

# build REV NAME: the engine bench binary of REV (or of the work tree) at $work/NAME.
build() {
  local src=$repo
  local reuse=${REUSE_OLD:-}
  [ "$2" = new ] && reuse=${REUSE_NEW:-}
  if [ "$reuse" = 1 ] && [ -n "${WORK:-}" ] && [ -x "$work/$2" ]; then
    echo "reusing the $2 side's binary $work/$2" >&2
    return
  fi
  if [ "$1" != WORKTREE ]; then
    src=$work/src-$2
    rm -rf "$src"
    mkdir -p "$src"
    git -C "$repo" archive "$1" | tar -x -C "$src"
  fi
  # Both sides are the same package to cargo, which keeps one set of its artifacts and finds sources
  # fresh by mtime (relative to the package root): every build is forced, and its binary copied.
  find "$src/src" "$src/benches" -name '*.rs' -exec touch {} +
  echo "building the engine bench of $1 ..." >&2
  local exe
  exe=$(cd "$src" && CARGO_TARGET_DIR=$target cargo bench --profile "$profile" --bench engine --no-run \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "engine" and m.get("executable"):
        print(m["executable"])' | tail -1)
  [ -n "$exe" ] || { echo "no engine bench binary for $1" >&2; exit 1; }
  # The bench reads tests/fixtures through CARGO_MANIFEST_DIR, fixed at build time: the source stays
  # in $work until the end.
  cp "$exe" "$work/$2"
  grep -q "$src/tests/fixtures" "$work/$2" || grep -q "$src" "$work/$2" \
    || { echo "the binary of $1 was not built from $src" >&2; exit 1; }
}
build "$old" old
build "$new" new

for r in $(seq 1 "$rounds"); do
  # old new, new old, ...: a load that drifts during a round weighs on both sides alike.
  order="old new"
  [ $((r % 2)) -eq 0 ] && order="new old"
  for side in $order; do
    echo "round $r/$rounds: $side" >&2
    "$work/$side" --bench "$filter" > "$work/$side.$r.txt"
  done
done

if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work"/old.*.txt "$work"/new.*.txt "$work"/old "$work"/new "$KEEP"/; fi

python3 - "$work" "$rounds" <<'PY'
import re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
UNIT = {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}

def medians(path):
    """Benchmark name -> median in ns, from divan's table (the tree's group names joined with /)."""
    out, stack = {}, []
    for line in open(path, encoding="utf-8"):
        # "│  ├─ name   fastest │ slowest │ median │ mean │ samples │ iters": three characters of tree
        # a level, then the name, then the columns.
        m = re.match(r"^((?:[│ ]  )*)(?:[├╰]─ )?(\S+)(.*)$", line.rstrip("\n"))
        if not m:
            continue
        depth = len(m.group(1)) // 3
        stack = stack[:depth] + [m.group(2)]
        cols = m.group(3).split("│")
        t = re.match(r"\s*([\d.]+)\s*(ns|µs|us|ms|s)\s*$", cols[2]) if len(cols) > 2 else None
        if t:
            out["/".join(stack)] = float(t.group(1)) * UNIT[t.group(2)]
    return out

runs = {side: [medians(f"{work}/{side}.{r}.txt") for r in range(1, rounds + 1)] for side in ("old", "new")}
names = sorted(set(runs["old"][0]) & set(runs["new"][0]))
med = {side: {n: statistics.median(run[n] for run in runs[side] if n in run) for n in names} for side in runs}
fmt = lambda ns: f"{ns / 1e3:10.1f} µs"
print(f"{'benchmark':90} {'old':>13} {'new':>13}  new/old")
for n in names:
    print(f"{n[-90:]:90} {fmt(med['old'][n])} {fmt(med['new'][n])}  {med['new'][n] / med['old'][n]:.2f}")
def summary(pairs, label):
    # pairs: (old name, new name) of the compared rows.
    pods = [(o, n) for o, n in pairs if "evaluate_corpus_pod" in n and "no-probes" not in n]
    if pods:
        ratios = [newmed[n] / med["old"][o] for o, n in pods]
        print(f"\n{label}median new/old over the {len(pods)} probe-carrying corpus Pods: {statistics.median(ratios):.2f}")
    for key in ("mysql-primary", "airflow-scheduler", "worst_case_exec_review"):
        for o, n in pairs:
            if key in n:
                print(f"{label}{n[-80:]}: {fmt(med['old'][o])} -> {fmt(newmed[n])} ({newmed[n] / med['old'][o]:.2f}x)")

newall = sorted(set(runs["new"][0]))
newmed = {n: statistics.median(run[n] for run in runs["new"] if n in run) for n in newall}
summary([(n, n) for n in names], "")
warm = [(n.replace("_warm", ""), n) for n in newall if "_warm" in n and n not in names]
warm = [(o, n) for o, n in warm if o in med["old"]]
if warm:
    print(f"\nwarm (new with a parse cache that saw the object) against old's plain evaluation:")
    for o, n in warm:
        print(f"{n[-90:]:90} {fmt(med['old'][o])} {fmt(newmed[n])}  {newmed[n] / med['old'][o]:.2f}")
    summary(warm, "warm: ")
warm_names = {n for _, n in warm}
only = [n for n in newall if n not in names and n not in warm_names]
if only:
    print("\nnew side only:")
    for n in only:
        print(f"{n[-90:]:90} {fmt(newmed[n])}")
PY
