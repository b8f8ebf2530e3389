#!/bin/bash
# bench/ncu-parse-bench.sh - parse speed of the ncu CSV reader: 100,000
# launches of a raw-page export built from the real H100 capture
# tests/fixtures/ncu/kernel_abc.raw.csv (see bench/ncu-parse-bench.c).
#
# Usage: bench/ncu-parse-bench.sh [N=100000] [REPEATS=3]   (builds VARIANT=release)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s VARIANT=release build/release/bench/ncu-parse-bench
build/release/bench/ncu-parse-bench tests/fixtures/ncu/kernel_abc.raw.csv \
	etc/ncu-metrics.tsv "${1:-100000}" "${2:-3}"
