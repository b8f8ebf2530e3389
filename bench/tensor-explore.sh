#!/bin/bash
# bench/tensor-explore.sh - what the tensor-core metrics of Nsight Compute
# count and cost, on a GPU node (written for the H100 of the device machine).
#
# Usage: bench/tensor-explore.sh OUTDIR [BINDIR]
#   BINDIR  where kernel_abc, tensor_gemm, tensor_mixed are (build/release/bin)
#   env NCU the ncu binary (ncu)
#
# Writes under OUTDIR:
#   env.txt           ncu --version, nvidia-smi (index, uuid, PCI bus id, cc)
#   chips/CHIP.txt    `ncu --query-metrics --chip CHIP` lines naming tensor,
#                     for every chip `ncu --list-chips` prints (names per arch)
#   sections/         the ncu section files that mention tensor metrics
#   sass.txt          MMA/FFMA instruction counts of tensor_mixed (cuobjdump)
#   passes.tsv        replay passes of single metrics and candidate sets on
#                     kernel_C of kernel_abc --quick (as bench/ncu-passes.sh)
#   truth/*.csv       every tensor metric of the GPU on each tensor_gemm type
#                     and tensor_mixed (raw page), with the program's output
#   devices.txt       the same kernel profiled with CUDA_VISIBLE_DEVICES=<uuid>
#                     and --devices 0 (several-GPU collection)
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): OUTDIR defaults
# to $BENCH_SMOKE_DIR (else a new temporary directory); ncu, nvidia-smi,
# cuobjdump and the programs are not run: the chips are those of the
# recorded `ncu --list-chips` (tests/fixtures/tensor/explore/chips-list.txt,
# their metric queries skipped), each probe's pass count is the one recorded
# on the H100 (explore/passes.tsv, "none" if not recorded), and the
# sections, SASS counts, truth runs and device masks are skipped (said in
# their files).
set -uo pipefail
SMOKE=${BENCH_SMOKE:-0}
REC=tests/fixtures/tensor/explore
OUT=${1:-}
((!SMOKE)) || [[ -n $OUT ]] || OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/tensor-explore-smoke.XXXXXX)}
[[ -n $OUT ]] || { echo "usage: bench/tensor-explore.sh OUTDIR [BINDIR]" >&2; exit 2; }
BIN=${2:-build/${BENCH_VARIANT:-release}/bin}
NCU=${NCU:-ncu}
mkdir -p "$OUT/chips" "$OUT/sections" "$OUT/truth"

if ((SMOKE)); then
	echo "smoke: skipped ncu --version, nvidia-smi" >"$OUT/env.txt"
	cp "$REC/chips-list.txt" "$OUT/chips/list.txt"
	echo "smoke: skipped the sections, the SASS counts (cuobjdump), the truth runs and the device masks (need ncu and the GPU)" |
		tee "$OUT/sass.txt" "$OUT/devices.txt" "$OUT/truth/skipped.txt"
fi
((SMOKE)) || {
	"$NCU" --version
	nvidia-smi -L
	nvidia-smi --query-gpu=index,uuid,pci.bus_id,compute_cap,name --format=csv
	echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

# Metric names per chip, from ncu itself (no GPU of that chip needed).
((SMOKE)) || "$NCU" --list-chips >"$OUT/chips/list.txt" 2>&1
for c in $(grep -oE '\b[a-z]{2}[0-9]{2,3}[a-z]?\b' "$OUT/chips/list.txt" | sort -u); do
	if ((SMOKE)); then
		echo "chip $c: smoke: query skipped"
		continue
	fi
	"$NCU" --query-metrics --chip "$c" 2>&1 |
		grep -E -i 'tensor|uuid|pci_bus|ops_path|^Device|error' >"$OUT/chips/$c.txt"
	echo "chip $c: $(wc -l <"$OUT/chips/$c.txt") lines"
done

if ((!SMOKE)); then
SEC=$(dirname "$(readlink -f "$(command -v "$NCU")")")/sections
[[ -d $SEC ]] || SEC=$(find / -name 'SpeedOfLight.section' -printf '%h\n' 2>/dev/null | head -1)
grep -l -i 'tensor' "$SEC"/*.section 2>/dev/null | while read -r f; do cp "$f" "$OUT/sections/"; done
ls "$OUT/sections"

{
	for p in tensor_mixed tensor_gemm; do
		echo "== $p"
		cuobjdump -sass "$BIN/$p" 2>/dev/null | grep -E -o '\b(HMMA|HGMMA|IMMA|IGMMA|DMMA|FFMA|FADD|FMUL|HFMA2)[.A-Z0-9_]*' |
			sort | uniq -c
	done
} >"$OUT/sass.txt" 2>&1
fi

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

T=gpu__time_duration.sum
CYC=sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second
DCLK=dram__cycles_elapsed.avg.per_second
SASS=$(for p in d f h; do for o in add mul fma; do
	printf 'sm__sass_thread_inst_executed_op_%s%s_pred_on.sum,' $p $o; done; done)
SASS=${SASS%,}
NERSC=dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum
PIPE=sm__inst_executed_pipe_tensor.sum
HF2=sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum
P=sm__ops_path_tensor
FP64=${P}_src_fp64.sum
FP16=${P}_src_fp16.sum
FP16P=${P}_op_hmma_src_fp16.sum,${P}_op_hgmma_src_fp16.sum
FP16Q=smsp__ops_path_tensor_op_hmma_src_fp16_dst_fp16.sum,smsp__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum,${P}_op_hgmma_src_fp16.sum
BF16=${P}_src_bf16_dst_fp32.sum
TF32=${P}_src_tf32_dst_fp32.sum
FP8=${P}_src_fp8.sum
INT8=${P}_src_int8.sum
INT8P=${P}_op_imma_src_int8.sum,${P}_op_igmma_src_int8.sum
INT8Q=smsp__ops_path_tensor_op_imma_src_int8.sum,${P}_op_igmma_src_int8.sum
BASE=$T,$CYC,$DCLK,$NERSC,$SASS
DEF=$BASE,$PIPE,$FP64

: >"$OUT/passes.tsv"
for m in ${FP16P//,/ } ${FP16Q//,/ } ${INT8P//,/ } ${INT8Q//,/ } $FP64 $BF16 $TF32 $FP8 \
	smsp__ops_path_tensor_src_fp64.sum $HF2 \
	${P}_op_hgmma_src_bf16_dst_fp32.sum ${P}_op_hmma_src_bf16_dst_fp32.sum; do
	passes one "$m"
done
passes default "$DEF"
passes fp16-parts "$FP16P"
passes int8-parts "$INT8P"
passes six-agg "$FP64,$FP16,$BF16,$TF32,$FP8,$INT8"
passes six-parts "$FP64,$FP16P,$BF16,$TF32,$FP8,$INT8P"
passes six-smsp "smsp__ops_path_tensor_src_fp64.sum,$FP16Q,$BF16,$TF32,$FP8,$INT8Q"
passes def+six-agg "$DEF,$FP16,$BF16,$TF32,$FP8,$INT8"
passes def+six-parts "$DEF,$FP16P,$BF16,$TF32,$FP8,$INT8P"
passes def+six-smsp "$BASE,$PIPE,smsp__ops_path_tensor_src_fp64.sum,$FP16Q,$BF16,$TF32,$FP8,$INT8Q"
passes base+six-agg "$BASE,$FP64,$FP16,$BF16,$TF32,$FP8,$INT8"
passes base+six-parts "$BASE,$FP64,$FP16P,$BF16,$TF32,$FP8,$INT8P"
passes def+fp16 "$DEF,$FP16"
passes def+fp16p "$DEF,$FP16P"
passes def+bf16 "$DEF,$BF16"
passes def+bf16+tf32 "$DEF,$BF16,$TF32"
passes def+bf16+tf32+fp8 "$DEF,$BF16,$TF32,$FP8"
passes def+fp16+bf16 "$DEF,$FP16,$BF16"
passes def+fp16+bf16+tf32 "$DEF,$FP16,$BF16,$TF32"
passes def+fp16+bf16+tf32+fp8 "$DEF,$FP16,$BF16,$TF32,$FP8"
passes def+fp16p+bf16+tf32+fp8 "$DEF,$FP16P,$BF16,$TF32,$FP8"
passes def+int8 "$DEF,$INT8"
passes def+int8p "$DEF,$INT8P"
passes nersc-no-dclk+six-parts "$T,$CYC,$NERSC,$SASS,$PIPE,$FP64,$FP16P,$BF16,$TF32,$FP8,$INT8P"
passes def-no-pipe+six-parts "$BASE,$FP64,$FP16P,$BF16,$TF32,$FP8,$INT8P"

# What each tensor metric counts, on known work.
ALLT=$(grep -v '^#' <<<"
${P}_src_fp64.sum,${P}_src_fp16.sum,${P}_src_bf16_dst_fp32.sum,${P}_src_tf32_dst_fp32.sum,${P}_src_fp8.sum,${P}_src_int8.sum,${P}_src_int1.sum
${P}_op_hmma_src_fp16.sum,${P}_op_hmma_src_fp16_dst_fp16.sum,${P}_op_hmma_src_fp16_dst_fp32.sum,${P}_op_hgmma_src_fp16.sum
${P}_op_hmma_src_bf16_dst_fp32.sum,${P}_op_hgmma_src_bf16_dst_fp32.sum,${P}_op_hmma_src_tf32_dst_fp32.sum,${P}_op_hgmma_src_tf32_dst_fp32.sum
${P}_op_imma_src_int8.sum,${P}_op_igmma_src_int8.sum
smsp__ops_path_tensor_op_hmma_src_fp16_dst_fp16.sum,smsp__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum,smsp__ops_path_tensor_src_fp64.sum,smsp__ops_path_tensor_op_imma_src_int8.sum
$PIPE,$HF2,sm__inst_executed_pipe_tensor_op_hmma.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__inst_executed_pipe_tensor_op_imma.sum,sm__inst_executed_pipe_tensor_op_dmma.sum
$T,$SASS,profiler__replayer_passes" | tr '\n' ',' | sed 's/^,*//; s/,*$//')
((!SMOKE)) || exit 0
truth() { # truth LABEL PROG ARGS...
	local label=$1
	shift
	"$NCU" --clock-control none --print-units base --csv --page raw --metrics "$ALLT" \
		--log-file "$OUT/truth/$label.csv" -- "$@" >"$OUT/truth/$label.program.txt" 2>&1
	echo "== truth $label rc=$? $(tail -1 "$OUT/truth/$label.program.txt")"
}
for t in bf16 fp16 tf32 int8; do
	truth gemm-$t "$BIN/tensor_gemm" $t 4096
done
truth mixed "$BIN/tensor_mixed"
for t in bf16 fp16; do "$BIN/tensor_gemm" $t 8192 5; done >"$OUT/truth/gemm-timed.txt" 2>&1

# Several GPUs per node: mask by UUID, profile device 0 of the mask.
UUID=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | head -1)
{
	echo "uuid=$UUID"
	CUDA_VISIBLE_DEVICES=$UUID "$NCU" --clock-control none --print-units base --csv \
		--page raw --devices 0 --metrics "$T,$PIPE" -- "$BIN/tensor_mixed" 2>&1 |
		python3 -c '
import csv, sys
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
h = rows[0]
for k in ("Device", "device__attribute_pci_bus_id", "device__attribute_pci_device_id",
          "device__attribute_pci_domain_id", "device__attribute_display_name", "gpu__time_duration.sum"):
    print(k, [r[h.index(k)] for r in rows[1:]] if k in h else "absent")'
	echo "rc=$?"
} >"$OUT/devices.txt" 2>&1
cat "$OUT/devices.txt"
