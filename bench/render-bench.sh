#!/bin/bash
# bench/render-bench.sh - wall time of one chart render by the gnuplot
# plugin, the way rooflined runs it: `roofline-job --run gnuplot` (plugin
# loaded, input records read, script and data written, gnuplot run, chart
# records written), on the charts of tests/fixtures/render/:
#
#   kernel_abc     the hierarchical plugin's output for the H100 kernel_abc
#                  capture: 3 kernels x 3 levels, PNG + SVG (the demo's chart)
#   kernel_abc png the same, PNG only
#   50 kernels     50 long templated names, 4 precisions, 150 points, PNG + SVG
#   compare        the 8 GPP versions on one chart, arrows, PNG + SVG
#   history        60 nights x 2 nodes of one kernel, PNG + SVG
#   gnuplot alone  gnuplot -d roofline.gp on the kernel_abc script (its share)
#
# Target (issue 6): one chart under 0.5 s.  Prints min / median / max of
# REPEATS runs in milliseconds.
#
# Usage: bench/render-bench.sh [REPEATS=20]   (builds VARIANT=release, or
#        BENCH_VARIANT; the charts go to a temporary directory, removed)
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): REPEATS defaults to 1.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-$([[ ${BENCH_SMOKE:-0} == 1 ]] && echo 1 || echo 20)}
B=build/${BENCH_VARIANT:-release}
FIX=tests/fixtures/render
make -s VARIANT="${BENCH_VARIANT:-release}" $B/bin/roofline-job $B/plugins/gnuplot.so
command -v gnuplot >/dev/null || { echo "render-bench: gnuplot not in PATH" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A needed step's output directory holding one fixture file as records.tsv.
step_dir() {
	mkdir -p "$tmp/in/$1"
	cp "$2" "$tmp/in/$1/records.tsv"
	echo "$tmp/in/$1"
}

now_ns() { date +%s%N; }

# time NAME CMD...: REPEATS runs of CMD, min / median / max in ms.
time_it() {
	local name=$1 t0 t1 i
	shift
	local -a ms=()
	for ((i = 0; i < REPEATS; i++)); do
		t0=$(now_ns)
		"$@" >/dev/null 2>&1 || { echo "render-bench: $name failed: $*" >&2; exit 1; }
		t1=$(now_ns)
		ms+=($(((t1 - t0) / 1000000)))
	done
	printf '%s\n' "${ms[@]}" | sort -n | awk -v name="$name" -v n="$REPEATS" '
		{ v[NR] = $1 }
		END { printf "%-16s min %5d ms   median %5d ms   max %5d ms   (%d runs)\n",
		      name, v[1], v[int((n + 1) / 2)], v[n], n }'
}

render() {
	local out=$1
	shift
	rm -rf "$out"
	$B/bin/roofline-job --plugin-dir $B/plugins --run gnuplot --out "$out" "$@"
}

abc=$(step_dir roofline $FIX/hierarchical-kernel_abc.records.tsv)
many=$(step_dir many $FIX/many-kernels.records.tsv)
trend=$(step_dir trend $FIX/trend-kernel_A.records.tsv)
gpp=()
for v in 1 2 3 4 5 6 7 8; do
	gpp+=(--input "v$v=$(step_dir v$v $FIX/gpp-v$v.records.tsv)")
done

echo "render-bench: $(gnuplot -V), $(nproc) CPUs, $(uname -m)"
time_it "kernel_abc" render "$tmp/o1" --input "roofline=$abc"
time_it "kernel_abc png" render "$tmp/o2" --input "roofline=$abc" formats=png
time_it "50 kernels" render "$tmp/o3" --input "many=$many"
time_it "compare" render "$tmp/o4" "${gpp[@]}"
time_it "history" render "$tmp/o5" --input "trend=$trend"
render "$tmp/o6" --input "roofline=$abc" >/dev/null 2>&1
time_it "gnuplot alone" bash -c "cd '$tmp/o6' && gnuplot -d roofline.gp"
