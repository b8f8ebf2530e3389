#!/bin/bash
# bench/ncu-passes.sh - how many replay passes Nsight Compute needs for each
# metric of the roofline set and for candidate sets, on one small kernel
# (kernel_C of kernel_abc --quick).  Prints "passes<TAB>label<TAB>metrics".
#
# Usage: bench/ncu-passes.sh [BINDIR]            survey, one line per probe
#        bench/ncu-passes.sh --select TSV_IN TSV_OUT [BINDIR]
#            probe the candidate default sets below in order of preference,
#            take the first that needs at most 3 passes, and write TSV_IN with
#            the set column rewritten (chosen metrics "default", other metrics
#            of the probed families "extra") to TSV_OUT; prints the choice.
# env NCU: the ncu binary.  This is how etc/ncu-metrics.tsv's set column was
# chosen on the H100 (docs/collect.md).
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): ncu is not run;
# each probe's pass count is the one recorded on the H100 for the same label
# and metrics (tests/fixtures/ncu/ncu-passes.{survey.tsv,select.txt}; "none"
# for a probe not recorded), so the survey and the --select choice and
# rewrite run as they did there.
set -uo pipefail
SMOKE=${BENCH_SMOKE:-0}
RECORDED=(tests/fixtures/ncu/ncu-passes.survey.tsv tests/fixtures/ncu/ncu-passes.select.txt)
SELECT=
if [[ ${1:-} == --select ]]; then
	SELECT=1
	TSV_IN=$2
	TSV_OUT=$3
	shift 3
fi
BIN=${1:-build/release/bin}
NCU=${NCU:-ncu}

passes() { # passes LABEL METRICS
	local p
	if ((SMOKE)); then
		p=$(cat "${RECORDED[@]}" | awk -F'\t' -v l="$1" -v m="$2" '$2 == l && $3 == m { p = $1 } END { print (p == "" ? "none" : p) }')
		printf '%s\t%s\t%s\n' "$p" "$1" "$2"
		return
	fi
	p=$("$NCU" --clock-control none --print-units base --csv --page raw \
		--metrics "$2,profiler__replayer_passes" -k regex:kernel_C \
		-- "$BIN/kernel_abc" --quick 2>&1 | python3 -c '
import csv, sys
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
h = rows[0]
print(rows[2][h.index("profiler__replayer_passes")] if len(rows) > 2 else "none")')
	printf '%s\t%s\t%s\n' "$p" "$1" "$2"
}

T=gpu__time_duration.sum
CYC=sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second
DCLK=dram__cycles_elapsed.avg.per_second
SASS=$(for p in d f h; do for o in add mul fma; do
	printf 'sm__sass_thread_inst_executed_op_%s%s_pred_on.sum,' $p $o; done; done)
SASS=${SASS%,}
NERSC=dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum
NCUB=l1tex__lsu_writeback_active_mem_lgds.sum,lts__lts2xbar_cycles_active.sum
TEN6=sm__ops_path_tensor_src_fp64.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum,sm__ops_path_tensor_src_fp8.sum,sm__ops_path_tensor_src_int8.sum
BASE=$T,$CYC,$DCLK,$NERSC,$NCUB

PIPE=sm__inst_executed_pipe_tensor.sum
FP64=sm__ops_path_tensor_src_fp64.sum
ALWAYS=profiler__replayer_passes,device__attribute_display_name

if [[ -n $SELECT ]]; then
	# Candidates, most complete first.
	CANDIDATES=(
		"all-levels-both-defs+clocks+fp64+pipe:$T,$CYC,$DCLK,$NERSC,$NCUB,$SASS,$PIPE,$FP64"
		"no-dram-clock:$T,$CYC,$NERSC,$NCUB,$SASS,$PIPE,$FP64"
		"no-duration:$CYC,$DCLK,$NERSC,$NCUB,$SASS,$PIPE,$FP64"
		"no-clocks:$T,$NERSC,$NCUB,$SASS,$PIPE,$FP64"
		"no-tensor:$T,$CYC,$DCLK,$NERSC,$NCUB,$SASS"
		"no-tensor-no-dram-clock:$T,$CYC,$NERSC,$NCUB,$SASS"
		"no-tensor-no-clocks:$T,$NERSC,$NCUB,$SASS"
		"nersc-bytes-only+fp64+pipe:$T,$CYC,$DCLK,$NERSC,$SASS,$PIPE,$FP64"
		"nersc-bytes-only:$T,$CYC,$DCLK,$NERSC,$SASS"
	)
	chosen=
	for c in "${CANDIDATES[@]}"; do
		line=$(passes "${c%%:*}" "${c#*:}")
		echo "$line" >&2
		p=${line%%$'\t'*}
		if [[ -z $chosen && $p =~ ^[0-9]+$ && $p -le 3 ]]; then
			chosen=${c#*:}
			echo "chosen: ${c%%:*} ($p passes)" >&2
		fi
	done
	if [[ -z $chosen ]]; then
		echo "no candidate within 3 passes: keeping $TSV_IN's default set" >&2
		cp "$TSV_IN" "$TSV_OUT"
		exit 0
	fi
	awk -F'\t' -v OFS='\t' -v keep="$chosen,$ALWAYS" '
		BEGIN { n = split(keep, k, ","); for (i = 1; i <= n; i++) want[k[i]] = 1 }
		/^#/ || NF < 5 { print; next }
		($1 == "*" || $1 == "90") && $5 != "instruction" { $5 = ($2 in want) ? "default" : "extra" }
		{ print }' "$TSV_IN" >"$TSV_OUT"
	echo "$chosen,$ALWAYS"
	exit 0
fi

for m in $T $CYC $DCLK ${NERSC//,/ } ${NCUB//,/ } ${TEN6//,/ } \
	sm__inst_executed_pipe_tensor.sum sm__ops_path_tensor_op_hgmma_src_fp16.sum \
	sm__inst_executed_pipe_tensor_op_dmma.sum sm__inst_executed_pipe_tensor_op_hmma.sum \
	sm__inst_executed_pipe_tensor_op_gmma.sum; do
	passes "one" "$m"
done
passes sass "$SASS"
passes nersc "$NERSC"
passes ncu-bytes "$NCUB"
passes tensor6 "$TEN6"
passes tensor-fp64+fp16 sm__ops_path_tensor_src_fp64.sum,sm__ops_path_tensor_src_fp16.sum
passes tensor-4 sm__ops_path_tensor_src_fp64.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum
passes base "$BASE"
passes base+sass "$BASE,$SASS"
passes base+sass+fp64+fp16 "$BASE,$SASS,sm__ops_path_tensor_src_fp64.sum,sm__ops_path_tensor_src_fp16.sum"
passes base+sass+tensor6 "$BASE,$SASS,$TEN6"
passes base+sass+pipe_tensor "$BASE,$SASS,sm__inst_executed_pipe_tensor.sum"
passes nersc-only+sass "$T,$CYC,$DCLK,$NERSC,$SASS"
passes ncu-only+sass "$T,$CYC,$DCLK,$NCUB,$SASS"
