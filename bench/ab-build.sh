#!/bin/bash
# bench/ab-build.sh - build another commit of this repository beside the
# working tree, for benchmarks that compare two builds side by side in one
# run (bench/engine-ab.sh, bench/analysis-bench.sh -b, bench/analysis-e2e.sh).
#
# Usage: bench/ab-build.sh REV DIR TARGET...
#
# Exports REV (git archive: the commit's tracked files, nothing of the
# working tree) into DIR, unless DIR already holds that commit, and runs
# `make -j2 VARIANT=release TARGET...` there.  Prints DIR's commit.
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): the export as above, then
# `make -n` (what would be built) instead of the build.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($# >= 3)) || { echo "usage: $0 REV DIR TARGET..." >&2; exit 2; }
rev=$(git -C "$REPO" rev-parse --verify "$1^{commit}")
dir=$2
shift 2
if [[ ! -f $dir/.ab-commit ]] || [[ $(cat "$dir/.ab-commit") != "$rev" ]]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	git -C "$REPO" archive "$rev" | tar -x -C "$dir"
	echo "$rev" >"$dir/.ab-commit"
fi
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	n=$(make -s -n -C "$dir" VARIANT=release "$@" | wc -l)
	echo "ab-build: smoke: skipped the build of $# target(s) ($n commands, make -n)" >&2
else
	make -s -C "$dir" -j2 VARIANT=release "$@" >&2
fi
git -C "$REPO" rev-parse --short "$rev"
