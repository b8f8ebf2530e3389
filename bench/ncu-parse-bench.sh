#!/bin/bash
# bench/ncu-parse-bench.sh - parse speed of the ncu CSV reader: 100,000
# launches of a raw-page export built from the real H100 capture
# tests/fixtures/ncu/kernel_abc.raw.csv (see bench/ncu-parse-bench.c).
#
# Usage: bench/ncu-parse-bench.sh [N=100000] [REPEATS=3]   (builds VARIANT=release,
#        or BENCH_VARIANT)
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): defaults N=200, REPEATS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
n=100000 repeats=3
[[ ${BENCH_SMOKE:-0} != 1 ]] || n=200 repeats=1
B=build/${BENCH_VARIANT:-release}
make -s VARIANT="${BENCH_VARIANT:-release}" $B/bench/ncu-parse-bench
$B/bench/ncu-parse-bench tests/fixtures/ncu/kernel_abc.raw.csv \
	etc/ncu-metrics.tsv "${1:-$n}" "${2:-$repeats}"
