#!/usr/bin/env bash
# Issue 24's before/after measurement in one command: builds the baseline (main before the redesign,
# 74e466c; another commit as $1) beside this checkout, builds this checkout, then measures block
# production, HTTP reads and the devnet rows of both builds in one run (bench/ab-arch.ts).
#   scripts/bench-ab-arch.sh [commit] [--write]   (--write replaces its section of bench/RESULTS.md)
# ~10 minutes on the dev machine's 2 cores when quiet, ~14 at load 20-30 (tried 2026-11-28). The table is
# printed and kept in .tmp/bench-ab-arch.md, the log (with the devnet rows' notes) in .tmp/bench-ab-arch.log.
set -euo pipefail
cd "$(dirname "$0")/.."
base=74e466c
if [ $# -gt 0 ] && [ "$1" != --write ]; then base="$1"; shift; fi
short="$(git rev-parse --short "$base")"
dir=".tmp/baseline-$short"
scripts/bench-baseline.sh "$short" "$dir"
npx tsc -p tsconfig.json
mkdir -p .tmp
BENCH_BASELINE="$dir" node dist/bench/ab-arch.js "$@" 2> >(tee .tmp/bench-ab-arch.log >&2)
