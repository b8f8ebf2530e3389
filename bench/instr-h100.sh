#!/bin/bash
# bench/instr-h100.sh - the recordings of issue 28 on a GPU node (written for
# the H100 of the device machine): the adaptive metric set on cuBLASLt GEMMs
# of each tensor precision, its cost against today's default set and
# `extra: [all]`, the Instruction Roofline's experiments (memory walls,
# shared-memory transpose, GPP's stride, kernel_abc) with the instruction
# rows, and ert-bench's instruction ceiling with the other ceilings.
#
# Usage: bench/instr-h100.sh OUTDIR [BUILD [PARTS]]
#   PARTS  which parts to run (default "gemm instr ceil"): gemm (1), instr
#          (2), ceil (3), adapt (4); the recordings in tests/fixtures/instr
#          came from "gemm instr ceil" and then "ceil adapt" (README there)
#   BUILD  the release build (bin/roofline-job, bin/ert-bench, bin/gemm_lt,
#          bin/inst_walls, bin/gpp, bin/kernel_abc, plugins/*.so); default
#          build/release.  env NCU: the ncu binary (ncu); METRICS: the metric
#          table (etc/ncu-metrics.tsv)
#
# Writes under OUTDIR: env.txt; summary.tsv (label, wall seconds, exit status,
# command); for each job LABEL/ (records.tsv, ncu.csv, ncu-adaptive.csv,
# program logs, job.log); plain-*.txt (the programs without ncu);
# kinst.csv (smsp__inst_executed of ert-bench's instruction kernel, to set
# its count of instructions against ncu's); regex.csv (the demangled-name
# filter of the second pass, tried alone).
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): OUTDIR defaults
# to $BENCH_SMOKE_DIR (else a new temporary directory), BUILD to
# build/$BENCH_VARIANT, PARTS to all four; ncu, nvidia-smi and the programs
# are not run: each job's directory gets its recorded records.tsv
# (tests/fixtures/instr/LABEL.records.tsv, none for a job that has no
# recording) and its summary line says skipped, so that the summary at the
# end runs on what the H100 gave.
set -uo pipefail
SMOKE=${BENCH_SMOKE:-0}
OUT=${1:-}
((!SMOKE)) || [[ -n $OUT ]] || OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/instr-h100-smoke.XXXXXX)}
[[ -n $OUT ]] || { echo "usage: bench/instr-h100.sh OUTDIR [BUILD [PARTS]]" >&2; exit 2; }
B=${2:-build/${BENCH_VARIANT:-release}}
REC=tests/fixtures/instr
PARTS=" ${3:-gemm instr ceil} "
((SMOKE)) && PARTS=" ${3:-gemm instr ceil adapt} "
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
TSV=${METRICS:-etc/ncu-metrics.tsv}
BIN=$(cd "$B/bin" && pwd)
PLUG=$(cd "$B/plugins" && pwd)
TSV=$(cd "$(dirname "$TSV")" && pwd)/$(basename "$TSV")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.tsv
printf 'label\twall_s\trc\tcommand\n' >"$SUMMARY"
export ROOFLINE_LIBEXEC=$BIN
if ((SMOKE)); then
	echo "smoke: skipped ncu --version, nvidia-smi" >"$OUT/env.txt"
else
	{
		"$NCU" --version
		nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,compute_cap,driver_version,clocks.sm,clocks.mem --format=csv
	} >"$OUT/env.txt" 2>&1
fi
cat "$OUT/env.txt"

timed() { # timed LABEL COMMAND... : wall time and status into summary.tsv
	local label=$1 t0 t1 rc
	shift
	if ((SMOKE)); then
		if [[ -s $REC/$label.records.tsv ]]; then
			cp "$REC/$label.records.tsv" "$OUT/$label/records.tsv"
		fi
		printf '%s\t-\tskipped\t%s\n' "$label" "$*" | tee -a "$SUMMARY"
		return
	fi
	t0=$(date +%s.%N)
	"$@"
	rc=$?
	t1=$(date +%s.%N)
	printf '%s\t%s\t%d\t%s\n' "$label" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
		"$rc" "$*" | tee -a "$SUMMARY"
}
job() { # job LABEL PLUGIN KEY=VALUE...
	local label=$1 plugin=$2
	shift 2
	mkdir -p "$OUT/$label"
	((SMOKE)) && { timed "$label" "$plugin" "$@"; return; }
	timed "$label" "$BIN/roofline-job" --plugin-dir "$PLUG" --run "$plugin" \
		--out "$OUT/$label" metrics_table="$TSV" "$@" >"$OUT/$label/job.log" 2>&1
}
ert_job() { # the ert plugin has no metrics_table
	local label=$1
	shift
	mkdir -p "$OUT/$label"
	((SMOKE)) && { timed "$label" ert "$@"; return; }
	timed "$label" "$BIN/roofline-job" --plugin-dir "$PLUG" --run ert --out "$OUT/$label" "$@" \
		>"$OUT/$label/job.log" 2>&1
}

# 1. GEMMs: plain, today's default set (adaptive off), the adaptive default,
#    every extra row.
part_gemm() {
for t in fp16 bf16 tf32 int8 fp8; do
	timed plain-$t "$BIN/gemm_lt" $t 4096 20 >"$OUT/plain-$t.txt" 2>&1
	job gemm-$t-default ncu command=gemm_lt command=$t command=4096 adaptive=false
	job gemm-$t-adaptive ncu command=gemm_lt command=$t command=4096
	job gemm-$t-all ncu command=gemm_lt command=$t command=4096 extra=all adaptive=false
done
# kernel_abc (kernel_C's HFMA2.MMA moves wake the second pass)
timed plain-abc "$BIN/kernel_abc" --quick >"$OUT/plain-abc.txt" 2>&1
job abc-default ncu command=kernel_abc command=--quick adaptive=false
job abc-adaptive ncu command=kernel_abc command=--quick
}

# 2. The instruction roofline's experiments (instruction rows on top of the
#    default set).
part_instr() {
timed plain-walls "$BIN/inst_walls" all >"$OUT/plain-walls.txt" 2>&1
job walls-instr ncu command=inst_walls command=all extra=instruction
job abc-instr ncu command=kernel_abc command=--quick extra=instruction
job gpp-stride-instr ncu command=gpp command=--exp command=stride command=512 command=2 \
	command=32768 command=800 kernels=gpp_v1 extra=instruction
job gemm-fp16-instr ncu command=gemm_lt command=fp16 command=4096 extra=instruction
}

# 3. Ceilings: the usual quick set plus the instruction benchmark.
part_ceil() {
ert_job ert quick=true precisions=fp32 precisions=inst
# ert-bench's instruction kernel under ncu: issued warp instructions
timed kinst "$NCU" --clock-control none --csv --page raw --print-units base \
	--metrics smsp__inst_executed.sum,gpu__time_duration.sum -k regex:k_inst --launch-count 2 \
	"$BIN/ert-bench" --quick --only inst >"$OUT/kinst.csv" 2>&1
# the second pass's kernel filter, alone
timed regex "$NCU" --clock-control none --csv --page raw --print-units base \
	--metrics smsp__inst_executed.sum --kernel-name-base demangled \
	-k 'regex:(^(void )?walls_global<1>\(const float \*, float \*, unsigned int\)$)|(^transpose_naive\(const float \*, float \*, int\)$)' \
	"$BIN/inst_walls" all >"$OUT/regex.csv" 2>&1
}

# 4. The second pass on template kernels (walls_shared's HFMA2.MMA moves),
#    and the replay passes of the instruction rows alone (kernel_C).
part_adapt() {
job walls-adaptive ncu command=inst_walls command=all
job abc-adaptive2 ncu command=kernel_abc command=--quick
local m
m=$(awk -F'\t' '$5 == "instruction" { printf "%s%s", sep, $2; sep = "," }' "$TSV")
timed passes-instr "$NCU" --clock-control none --csv --page raw --print-units base \
	--metrics "$m,profiler__replayer_passes" -k regex:kernel_C \
	"$BIN/kernel_abc" --quick >"$OUT/passes-instr.csv" 2>&1
}

for p in gemm instr ceil adapt; do
	[[ $PARTS == *" $p "* ]] && "part_$p"
done

cat "$SUMMARY"
for d in "$OUT"/*/; do
	echo "== $d"
	grep -o 'kernel=[^	]*\|profiler__replayer_passes=[^	]*\|adaptive_passes=[^	]*\|tensor_not_collected=[^	]*\|sm__ops_path_tensor_src_[a-z0-9_]*\.sum=[^	]*' \
		"$d/records.tsv" 2>/dev/null | sort | uniq -c | head -20
	[[ -f $d/job.log ]] && grep -i 'error\|warn\|second pass\|instruction pass' "$d/job.log" | head -5
done
# the exit status: 1 when a job failed
awk -F'\t' 'NR > 1 && $3 != "0" && $3 != "skipped" { bad = 1 } END { exit bad }' "$SUMMARY"
