#!/bin/bash
# bench/gpp-replay.sh - the GPP recordings of tests/fixtures/gpp through
# roofline-job alone (no daemon, no Slurm, no GPU): ert and spec replayed from
# tests/fixtures/ert/h100-quick.tsv, ncu_import and hierarchical for each of
# the steps nw, nw-nofma, stride, v1..v8, as pipelines/gpp-replay.yaml and
# gpp-versions-replay.yaml do; then bench/gpp-table.py prints docs/gpp.md's
# tables.
#
# Usage: bench/gpp-replay.sh [WORKDIR] [BUILD]
#   WORKDIR  where the steps' outputs go (default /tmp/gpp-replay; emptied)
#   BUILD    build/debug (default; build/$BENCH_VARIANT if set): roofline-job
#            and the plugins
# WORKDIR/h-v1/records.tsv ... h-v8 are tests/fixtures/render/gpp-v*.records.tsv.
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): the same, already small; WORKDIR
# defaults to $BENCH_SMOKE_DIR, else a new temporary directory.
set -euo pipefail
R=$(cd "$(dirname "$0")/.." && pwd)
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	W=${1:-${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/gpp-replay-smoke.XXXXXX)}}
else
	W=${1:-/tmp/gpp-replay}
fi
B=$R/${2:-build/${BENCH_VARIANT:-debug}}
J=("$B/bin/roofline-job" --plugin-dir "$B/plugins")
T=$R/etc/ncu-metrics.tsv
rm -rf "$W" && mkdir -p "$W"
cp "$R"/tests/fixtures/ert/h100-quick.tsv "$R"/tests/fixtures/gpp/*.raw.csv "$W"/
cd "$W"
run() { # run LOG ARGS...: roofline-job, quiet unless it fails
	local log=$1
	shift
	"${J[@]}" "$@" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
}
run ert.log --run ert --out "$W/ceil" replay=h100-quick.tsv
run spec.log --run spec --out "$W/spec" attributes=h100-quick.tsv
for s in nw nw-nofma stride v1 v2 v3 v4 v5 v6 v7 v8; do
	run "p-$s.log" --run ncu_import --out "$W/p-$s" file="$s.raw.csv" metrics_table="$T"
	run "h-$s.log" --run hierarchical --out "$W/h-$s" --input ceilings="$W/ceil" \
		--input spec="$W/spec" --input profile="$W/p-$s" metrics_table="$T"
done
python3 "$R/bench/gpp-table.py" "$W"
