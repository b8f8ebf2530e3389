#!/bin/bash
# bench/collect-h100.sh - capture Nsight Compute fixtures and collection-overhead
# figures for the reference kernels on a GPU node (written for the H100 of the
# device machine; runs on any GPU that etc/ncu-metrics.tsv has rows for).
#
# Usage: bench/collect-h100.sh OUTDIR [BINDIR]
#   BINDIR   where kernel_abc, gsrb, stream_triad, dgemm are (build/release/bin)
#   env NCU  the ncu binary (ncu); NCU_METRICS the table (etc/ncu-metrics.tsv)
#
# The fixtures in tests/fixtures/ncu came from, on the H100 device machine:
#   bench/ncu-passes.sh --select etc/ncu-metrics.tsv /tmp/r/ncu-metrics.tsv build/release/bin
#   NCU_METRICS=/tmp/r/ncu-metrics.tsv bench/collect-h100.sh /tmp/r build/release/bin
# (the chosen table's '*' and arch-90 rows are the committed etc/ncu-metrics.tsv's).
#
# For each program: a plain run (wall time), ncu with the metric set of this
# GPU's rows of etc/ncu-metrics.tsv exactly as plugins/ncu.c runs it
# (--clock-control none --print-units base --csv --page raw --metrics SET
# --log-file LOG -- PROG, stdout captured), and ncu with its own
# --section SpeedOfLight_HierarchicalDoubleRooflineChart for comparison.
# kernel_abc is also exported (-o) and re-read with -i as raw and details CSV
# (the ncu-import inputs).  OUTDIR/summary.tsv gets one line per command:
# label, wall seconds, exit status, replay passes per launch (the CSV's
# profiler__replayer_passes).  When roofline-job and the plugins are built
# beside BINDIR (../bin, ../plugins), the ncu and ncu_import plugins run too.
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): OUTDIR defaults
# to $BENCH_SMOKE_DIR (else a new temporary directory), BINDIR to
# build/$BENCH_VARIANT/bin; the metric sets are made for cc 9.0 (the H100),
# every ncu and program run is recorded as skipped in summary.tsv (they need
# the GPU), and the ncu_import plugin runs on the recorded exports of
# kernel_abc (tests/fixtures/ncu/kernel_abc.import-*.csv) as it runs on this
# script's own.
set -uo pipefail

SMOKE=${BENCH_SMOKE:-0}
OUT=${1:-}
((!SMOKE)) || [[ -n $OUT ]] || OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/collect-h100-smoke.XXXXXX)}
[[ -n $OUT ]] || { echo "usage: bench/collect-h100.sh OUTDIR [BINDIR]" >&2; exit 2; }
BIN=${2:-build/${BENCH_VARIANT:-release}/bin}
NCU=${NCU:-ncu}
TSV=${NCU_METRICS:-etc/ncu-metrics.tsv}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.tsv
printf 'label\twall_s\trc\tpasses_per_kernel\tcommand\n' >"$SUMMARY"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# The profiler__replayer_passes column of an ncu CSV (one value per launch).
passes_of() {
	cat "$@" 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(l for l in sys.stdin if l.startswith("\"")))
if rows and "profiler__replayer_passes" in rows[0]:
    i = rows[0].index("profiler__replayer_passes")
    print(",".join(r[i] for r in rows[1:] if r and r[0]))'
}

# timed LABEL STDOUT_FILE CMD...: run CMD with stdout to STDOUT_FILE, stderr
# to STDOUT_FILE.err, and append a summary line.
timed() {
	local label=$1 out=$2 t0 t1 rc passes log
	shift 2
	if ((SMOKE)) && [[ $label != plugin-import* ]]; then
		printf '%s\t-\tskipped\t\t%s\n' "$label" "$*" >>"$SUMMARY"
		echo "== $label: skipped (smoke: needs the GPU)"
		return 0
	fi
	t0=$(now)
	"$@" >"$out" 2>"$out.err"
	rc=$?
	t1=$(now)
	log=${out%.csv}.log
	passes=$(passes_of "$log" "$out")
	printf '%s\t%s\t%d\t%s\t%s\n' "$label" "$(secs "$t0" "$t1")" \
		"$rc" "${passes:-}" "$*" >>"$SUMMARY"
	echo "== $label: rc=$rc wall=$(secs "$t0" "$t1")s passes=${passes:-}"
}

# The metric set: this GPU's rows of the table, a row of the GPU's own cc
# replacing the "*" row of the same role (the rule plugins/ncu.c applies);
# set_of 0: the default rows, set_of 1: default and extra rows.
if ((SMOKE)); then
	CC=90
else
	CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d ' .')
fi
set_of() {
	awk -F'\t' -v cc="$CC" -v extra="$1" '
	/^#/ || NF < 5 { next }
	!extra && $5 == "extra" { next }
	$5 == "instruction" { next }
	$1 == cc { own[$3] = $2; order[++n] = $3 }
	$1 == "*" { any[$3] = $2; order[++n] = $3 }
	END {
		for (i = 1; i <= n; i++) {
			r = order[i]
			if (seen[r]++) continue
			m = (r in own) ? own[r] : any[r]
			out = out (out == "" ? "" : ",") m
		}
		print out
	}' "$TSV"
}
METRICS=$(set_of 0)
FULL=$(set_of 1)
printf 'cc=%s\ndefault=%s\nfull=%s\n' "$CC" "$METRICS" "$FULL" | tee "$OUT/metric-set.txt"

if ((SMOKE)); then
	echo "smoke: skipped ncu --version, nvidia-smi, ncu --list-sections" >"$OUT/env.txt"
	cp tests/fixtures/ncu/kernel_abc.import-raw.csv "$OUT/abc.import-raw.csv"
	cp tests/fixtures/ncu/kernel_abc.import-details-default.csv "$OUT/abc.import-details-default.csv"
else
	{
		"$NCU" --version
		nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem --format=csv
		"$NCU" --list-sections 2>&1 | grep -i roofline
	} >"$OUT/env.txt" 2>&1
fi
cat "$OUT/env.txt"
if ((!SMOKE)); then
	SEC=$(dirname "$(readlink -f "$(command -v "$NCU")")")/sections
	cp "$SEC"/SpeedOfLight_HierarchicalDoubleRooflineChart.section "$SEC"/SpeedOfLight_RooflineChart.section "$OUT"/ 2>/dev/null ||
		find /usr/local /opt -name 'SpeedOfLight_HierarchicalDoubleRooflineChart.section' -exec cp {} "$OUT"/ \; 2>/dev/null
fi

COMMON=(--clock-control none --print-units base --csv --page raw)
SOL=(--clock-control none --print-units base --csv --page raw
	--section SpeedOfLight_HierarchicalDoubleRooflineChart)

# kernel_abc
timed abc-plain "$OUT/abc.plain.txt" "$BIN/kernel_abc"
timed abc-ours "$OUT/abc.ours.csv" "$NCU" "${COMMON[@]}" --metrics "$METRICS" \
	--log-file "$OUT/abc.ours.log" -- "$BIN/kernel_abc"
timed abc-full "$OUT/abc.full.csv" "$NCU" "${COMMON[@]}" --metrics "$FULL" \
	--log-file "$OUT/abc.full.log" -- "$BIN/kernel_abc"
timed abc-sol "$OUT/abc.sol.csv" "$NCU" "${SOL[@]}" \
	--log-file "$OUT/abc.sol.log" -- "$BIN/kernel_abc"
timed abc-export "$OUT/abc.export.txt" "$NCU" --clock-control none \
	--metrics "$METRICS" -f -o "$OUT/abc" --log-file "$OUT/abc.export.log" -- "$BIN/kernel_abc"
timed abc-import-raw "$OUT/abc.import-raw.csv" "$NCU" -i "$OUT/abc.ncu-rep" \
	--csv --page raw --print-units base
timed abc-import-details "$OUT/abc.import-details.csv" "$NCU" -i "$OUT/abc.ncu-rep" \
	--csv --page details --print-units base
timed abc-import-details-default "$OUT/abc.import-details-default.csv" "$NCU" \
	-i "$OUT/abc.ncu-rep" --csv
# Without --log-file: ncu's own lines land in stdout with the CSV.
timed abc-nolog "$OUT/abc.nolog.csv" "$NCU" "${COMMON[@]}" --metrics "$METRICS" \
	-k regex:kernel_C -- "$BIN/kernel_abc" --quick

# GSRB
timed gsrb-plain "$OUT/gsrb.plain.txt" "$BIN/gsrb"
timed gsrb-ours "$OUT/gsrb.ours.csv" "$NCU" "${COMMON[@]}" --metrics "$METRICS" \
	--log-file "$OUT/gsrb.ours.log" -- "$BIN/gsrb"
timed gsrb-sol "$OUT/gsrb.sol.csv" "$NCU" "${SOL[@]}" \
	--log-file "$OUT/gsrb.sol.log" -- "$BIN/gsrb"

# STREAM triad and DGEMM: skip the warm-up launch, profile a few.
timed triad-plain "$OUT/triad.plain.txt" "$BIN/stream_triad"
timed triad-ours "$OUT/triad.ours.csv" "$NCU" "${COMMON[@]}" --metrics "$METRICS" \
	-k regex:triad --launch-skip 1 --launch-count 2 \
	--log-file "$OUT/triad.ours.log" -- "$BIN/stream_triad"
timed dgemm-plain "$OUT/dgemm.plain.txt" "$BIN/dgemm"
timed dgemm-ours "$OUT/dgemm.ours.csv" "$NCU" "${COMMON[@]}" --metrics "$METRICS" \
	-k regex:gemm --launch-skip 1 --launch-count 1 \
	--log-file "$OUT/dgemm.ours.log" -- "$BIN/dgemm"

# What ncu writes when nothing matches, and for a metric it does not know.
timed bad-nomatch "$OUT/bad-nomatch.csv" "$NCU" "${COMMON[@]}" --metrics "$METRICS" \
	-k regex:no_such_kernel --log-file "$OUT/bad-nomatch.log" -- "$BIN/kernel_abc" --quick
timed bad-metric "$OUT/bad-metric.csv" "$NCU" "${COMMON[@]}" \
	--metrics gpu__time_duration.sum,no_such__metric.sum -k regex:kernel_C \
	--log-file "$OUT/bad-metric.log" -- "$BIN/kernel_abc" --quick

# The plugins themselves, through roofline-job, when they are built.
JOB=${JOB:-$(dirname "$BIN")/bin/roofline-job}
PLUG=$(dirname "$BIN")/plugins
if [[ -x $JOB && -f $PLUG/ncu.so ]]; then
	ROOFLINE_LIBEXEC=$(cd "$BIN" && pwd)
	export ROOFLINE_LIBEXEC
	timed plugin-abc "$OUT/plugin-abc.txt" "$JOB" --plugin-dir "$PLUG" --run ncu \
		--out "$OUT/plugin-abc" command=kernel_abc metrics_table="$TSV"
	timed plugin-gsrb "$OUT/plugin-gsrb.txt" "$JOB" --plugin-dir "$PLUG" --run ncu \
		--out "$OUT/plugin-gsrb" command=gsrb metrics_table="$TSV"
	timed plugin-dgemm "$OUT/plugin-dgemm.txt" "$JOB" --plugin-dir "$PLUG" --run ncu \
		--out "$OUT/plugin-dgemm" command=dgemm kernels=gemm launch_skip=1 \
		launch_count=1 metrics_table="$TSV"
	cp "$OUT/abc.import-raw.csv" "$OUT/abc.import-details-default.csv" .
	timed plugin-import "$OUT/plugin-import.txt" "$JOB" --plugin-dir "$PLUG" \
		--run ncu_import --out "$OUT/plugin-import" file=abc.import-raw.csv \
		metrics_table="$TSV"
	timed plugin-import-default "$OUT/plugin-import-default.txt" "$JOB" \
		--plugin-dir "$PLUG" --run ncu_import --out "$OUT/plugin-import-default" \
		file=abc.import-details-default.csv metrics_table="$TSV"
	rm -f abc.import-raw.csv abc.import-details-default.csv
fi

cut -f1-4 "$SUMMARY"
