#!/bin/bash
# bench/tensor-h100.sh - the tensor-core recordings on a GPU node (written for
# the H100 of the device machine): replay passes of the default set, then the
# tensor kernels through the same job path a cluster uses (roofline-job with
# the ncu plugin), and the ERT ceilings of the same GPU.
#
# Usage: bench/tensor-h100.sh OUTDIR [BUILD]
#   BUILD  the release build (build/release): bin/roofline-job, bin/ert-bench,
#          bin/tensor_gemm, bin/tensor_mixed, bin/kernel_abc, plugins/*.so
#   env NCU the ncu binary (ncu)
#
# 1. passes.tsv: profiler__replayer_passes of kernel_C (kernel_abc --quick)
#    under the table's default set of this GPU, the set before the BF16 row
#    was added, the default set plus tensor_inst_hfma2, and every row.
# 2. ncu-metrics.tsv: etc/ncu-metrics.tsv, with tensor_inst_hfma2 moved to
#    the default set when that costs no pass (this is how the committed
#    table's set column was chosen).
# 3. ert/: roofline-job --run ert quick=true (this GPU's ceilings).
# 4. gemm-TYPE/ (bf16 fp16 tf32 int8, n = 4096), mixed/ (device=0),
#    mixed-bf16/ (tensor_mixed ... bf16), and
#    gemm-fp16-all/, mixed-all/ (extra=all): roofline-job --run ncu with
#    that table: records.tsv, ncu.csv, program.log, job.log.
# 5. summary.tsv: label, wall seconds, exit status; sass.txt: tensor_mixed's
#    MMA and FP32 instructions (cuobjdump).
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): OUTDIR defaults
# to $BENCH_SMOKE_DIR (else a new temporary directory), BUILD to
# build/$BENCH_VARIANT; cc 9.0; ncu, nvidia-smi, cuobjdump and the jobs are
# not run: each probe's pass count is the one recorded on the H100
# (tests/fixtures/tensor/passes.tsv, "none" if not recorded), each job's
# directory gets its recorded records.tsv (tests/fixtures/tensor/LABEL.records.tsv,
# its summary line says skipped), so that the choice of the table, the
# summary and the per-job counts run as they did there.
set -uo pipefail
SMOKE=${BENCH_SMOKE:-0}
OUT=${1:-}
((!SMOKE)) || [[ -n $OUT ]] || OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/tensor-h100-smoke.XXXXXX)}
[[ -n $OUT ]] || { echo "usage: bench/tensor-h100.sh OUTDIR [BUILD]" >&2; exit 2; }
B=${2:-build/${BENCH_VARIANT:-release}}
REC=tests/fixtures/tensor
NCU=${NCU:-ncu}
BIN=$B/bin
JOB=$BIN/roofline-job
PLUG=$B/plugins
TSV_IN=etc/ncu-metrics.tsv
mkdir -p "$OUT"
SUMMARY=$OUT/summary.tsv
printf 'label\twall_s\trc\n' >"$SUMMARY"

if ((SMOKE)); then
	echo "smoke: skipped ncu --version, nvidia-smi" >"$OUT/env.txt"
	CC=90
else
	{
		"$NCU" --version
		nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,compute_cap,driver_version,clocks.sm,clocks.mem --format=csv
	} >"$OUT/env.txt" 2>&1
	CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d ' .')
fi
cat "$OUT/env.txt"

# The metric set of this GPU (a row of its own cc replaces the "*" row of the
# same role; every part of a datapath kept), as plugins/ncu.c selects it
# (the instruction rows only with extra: [instruction], never here).
set_of() { # set_of TSV EXTRA(0/1)
	awk -F'\t' -v cc="$CC" -v extra="$2" '
	/^#/ || NF < 5 { next }
	!extra && $5 == "extra" { next }
	$5 == "instruction" { next }
	$1 == cc { own[$3] = 1 }
	{ row[++n] = $0 }
	END {
		for (i = 1; i <= n; i++) {
			split(row[i], f, "\t")
			if (f[1] == cc || (f[1] == "*" && !(f[3] in own)))
				out = out (out == "" ? "" : ",") f[2]
		}
		print out
	}' "$1"
}

passes() { # passes LABEL METRICS
	local p
	if ((SMOKE)); then
		p=$(awk -F'\t' -v l="$1" -v m="$2" '$2 == l && $3 == m { p = $1 } END { print (p == "" ? "none" : p) }' "$REC/passes.tsv")
		printf '%s\t%s\t%s\n' "$p" "$1" "$2" | tee -a "$OUT/passes.tsv"
		return
	fi
	p=$("$NCU" --clock-control none --print-units base --csv --page raw \
		--metrics "$2,profiler__replayer_passes" -k regex:kernel_C \
		-- "$BIN/kernel_abc" --quick 2>&1 | python3 -c '
import csv, sys
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
h = rows[0] if rows else []
print(rows[2][h.index("profiler__replayer_passes")] if len(rows) > 2 and "profiler__replayer_passes" in h else "none")')
	printf '%s\t%s\t%s\n' "$p" "$1" "$2" | tee -a "$OUT/passes.tsv"
}

: >"$OUT/passes.tsv"
DEF=$(set_of "$TSV_IN" 0)
HF2=sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum
BF16=sm__ops_path_tensor_src_bf16_dst_fp32.sum
passes default "$DEF"
passes default-without-bf16 "$(tr ',' '\n' <<<"$DEF" | grep -v -x "$BF16" | paste -sd,)"
passes default+hfma2 "$DEF,$HF2"
passes all "$(set_of "$TSV_IN" 1)"

TSV=$OUT/ncu-metrics.tsv
p=$(awk -F'\t' '$2 == "default+hfma2" { print $1 }' "$OUT/passes.tsv")
d=$(awk -F'\t' '$2 == "default" { print $1 }' "$OUT/passes.tsv")
if [[ $p =~ ^[0-9]+$ && $d =~ ^[0-9]+$ && $p -le $d ]]; then
	echo "tensor_inst_hfma2 costs no pass ($p): default"
	awk -F'\t' -v OFS='\t' -v cc="$CC" '$1 == cc && $3 == "tensor_inst_hfma2" { $5 = "default" } { print }' \
		"$TSV_IN" >"$TSV"
else
	echo "tensor_inst_hfma2 costs a pass ($d -> $p): extra"
	cp "$TSV_IN" "$TSV"
fi
passes chosen-default "$(set_of "$TSV" 0)"

ROOFLINE_LIBEXEC=$(cd "$BIN" && pwd)
export ROOFLINE_LIBEXEC
job() { # job LABEL PLUGIN KEY=VALUE...
	local label=$1 plugin=$2 t0 t1 rc
	shift 2
	if ((SMOKE)); then
		mkdir -p "$OUT/$label"
		cp "$REC/$label.records.tsv" "$OUT/$label/records.tsv"
		echo "smoke: not run (needs the GPU); records.tsv is $REC/$label.records.tsv" >"$OUT/$label/job.log"
		printf '%s\t-\tskipped\n' "$label" | tee -a "$SUMMARY"
		return
	fi
	t0=$(date +%s.%N)
	"$JOB" --plugin-dir "$PLUG" --run "$plugin" --out "$OUT/$label" "$@" \
		>"$OUT/$label.job.log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	mv "$OUT/$label.job.log" "$OUT/$label/job.log" 2>/dev/null
	printf '%s\t%s\t%d\n' "$label" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$rc" | tee -a "$SUMMARY"
}

job ert ert quick=true
for t in bf16 fp16 tf32 int8; do
	job gemm-$t ncu command=tensor_gemm command=$t command=4096 metrics_table="$TSV"
done
job mixed ncu command=tensor_mixed device=0 metrics_table="$TSV"
job mixed-bf16 ncu command=tensor_mixed command=528 command=2048 command=4096 command=bf16 \
	metrics_table="$TSV"
job gemm-fp16-all ncu command=tensor_gemm command=fp16 command=4096 extra=all metrics_table="$TSV"
job mixed-all ncu command=tensor_mixed extra=all metrics_table="$TSV"

if ((SMOKE)); then
	echo "smoke: skipped cuobjdump of tensor_mixed (recorded: $REC/sass.txt)" >"$OUT/sass.txt"
else
	{
		echo "== tensor_mixed (cuobjdump -sass, sm_90)"
		cuobjdump -sass -arch sm_90 "$BIN/tensor_mixed" 2>/dev/null |
			grep -E -o '\b(HMMA|FFMA|FADD|FMUL|HFMA2)[.A-Z0-9_]*' | sort | uniq -c
	} >"$OUT/sass.txt" 2>&1
fi
cat "$OUT/sass.txt"
cat "$SUMMARY"
for d in "$OUT"/gemm-* "$OUT"/mixed*; do
	echo "== $d"
	grep -o 'tensor_not_collected=[^	]*\|gpu_uuid=[^	]*\|profiler__replayer_passes=[^	]*\|sm__ops_path_tensor_src_[a-z0-9_]*\.sum=[^	]*' \
		"$d/records.tsv" 2>/dev/null | sort | uniq -c
	tail -3 "$d/job.log"
done
