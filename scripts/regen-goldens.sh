#!/usr/bin/env bash
# Rewrites tests/fixtures/golden/ with what the current binary prints, the way tests/cli.rs runs it.
# Tests never write goldens: run this when an output change is intended, then review
# `git diff tests/fixtures/golden` line by line before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin probegate
bin=target/debug/probegate
golden=tests/fixtures/golden
unset NO_COLOR
# `check` exits 1 on the corpus (one file is denied); anything else is a failure here.
for pair in text:check.txt json:check.json sarif:check.sarif junit:check.xml; do
  code=0
  "$bin" check -o "${pair%%:*}" tests/fixtures/corpus >"$golden/${pair#*:}" || code=$?
  [ "$code" -eq 1 ] || { echo "check -o ${pair%%:*} exited $code (expected 1)" >&2; exit 1; }
done
# Notes of scripts over the analysis bound, in every format (tests/output_s27.rs): exit 0.
for pair in text:txt json:json sarif:sarif junit:xml; do
  "$bin" check -o "${pair%%:*}" tests/fixtures/cli/over-bound-scripts.yaml >"$golden/notes-s27.${pair#*:}"
done
# `fix` exits 1 on app.yaml too: its denial is left to a person.
code=0
"$bin" fix - <tests/fixtures/cli/app.yaml >"$golden/fix-app.yaml" || code=$?
[ "$code" -eq 1 ] || { echo "fix exited $code (expected 1)" >&2; exit 1; }
svg=$(mktemp -d)
trap 'rm -rf "$svg"' EXIT
"$bin" explain --dependency-check liveness --svg "$svg/seed.svg" tests/fixtures/explain/seed-scenario.yaml \
  >"$golden/explain-seed.txt"
git --no-pager diff --stat -- "$golden"
echo "review: git diff $golden"
