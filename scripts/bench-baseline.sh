#!/usr/bin/env bash
# Builds an earlier commit next to this checkout for the benches' before/after rows:
#   scripts/bench-baseline.sh <commit> [dir]   -> dir (default .tmp/baseline, gitignored), then
#   BENCH_BASELINE=.tmp/baseline npm run bench
# The baseline shares this checkout's node_modules and native addon (same dependencies), so only the
# TypeScript differs between the two builds.
set -euo pipefail
cd "$(dirname "$0")/.."
commit="${1:?usage: scripts/bench-baseline.sh <commit> [dir]}"
out="${2:-.tmp/baseline}"
rm -rf "$out"
mkdir -p "$out"
git archive "$commit" | tar -x -C "$out"
ln -s "$(cd node_modules && pwd -P)" "$out/node_modules"
cp native/*.node "$out/native/" 2>/dev/null || true
(cd "$out" && npx tsc -p tsconfig.json)
git rev-parse --short "$commit" > "$out/BASELINE_COMMIT"
echo "baseline $(git rev-parse --short "$commit") built in $out (BENCH_BASELINE=$out)"
