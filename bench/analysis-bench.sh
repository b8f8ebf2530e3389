#!/bin/bash
# bench/analysis-bench.sh - speed of the hierarchical plugin on 1,000,000
# invocation records made from the real H100 rows of
# tests/fixtures/analysis/{kernel_abc,gsrb}.records.tsv (21 launches, repeated
# with new invocation IDs) and the H100 ERT ceilings (bench/analysis-bench.c).
#
# Usage: bench/analysis-bench.sh [ROWS=1000000] [REPEATS=5] [INVOCATION_ROWS=100000]
#
# Prints, for ROWS rows: the plugin's run with the records parsed the way
# roofline-job parses them (in memory, no disk), and with them parsed
# beforehand (the plugin alone); then, for INVOCATION_ROWS rows (0: skip),
# the plugin with invocations: true.  Builds VARIANT=release.  Needs about
# 3.5 GB of memory for a million rows (the records text, a copy to parse,
# the parsed fields).  BENCH_VARIANT names another build than release.
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): defaults 2000 1 200.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	rows=${1:-2000} repeats=${2:-1} inv_rows=${3:-200}
else
	rows=${1:-1000000} repeats=${2:-5} inv_rows=${3:-100000}
fi
B=build/${BENCH_VARIANT:-release}
make -s VARIANT="${BENCH_VARIANT:-release}" $B/bench/analysis-bench
bin=$B/bench/analysis-bench
inputs=(tests/fixtures/ert/h100-ert-records.tsv
	tests/fixtures/analysis/kernel_abc.records.tsv
	tests/fixtures/analysis/gsrb.records.tsv)
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
ROOFLINE_ETC=etc "$bin" -n "$rows" -r "$repeats" "${inputs[@]}" 2>/dev/null
if [ "$inv_rows" -gt 0 ]; then
	ROOFLINE_ETC=etc "$bin" -P -i -n "$inv_rows" -r "$repeats" "${inputs[@]}" 2>/dev/null
fi
