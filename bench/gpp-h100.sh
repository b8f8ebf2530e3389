#!/bin/bash
# bench/gpp-h100.sh - build GPP and record its experiments on a GPU node through
# roofline-job and the ncu plugin, as a pipeline's Slurm job would run them
# (written for the H100 of the device machine).
#
# Usage: bench/gpp-h100.sh OUTDIR [SIZE...]
#   SIZE   the profiled problem, nbands nvband ncouls nodes_per_group
#          (default 512 2 32768 800: the talks' 512 bands and 32768 G-vectors,
#          ngpown = 40 instead of 1638.  Under ncu the full default is too
#          slow: on the H100 the SASS-counter pass made gpp_v1<1,1> and
#          <2,1> (0.35 s and 0.78 s plain) take about 100 s each.  Every igp
#          does the same work on the same bands and G-vectors, so a smaller
#          ngpown keeps the per-igp traffic, the AI and the rates)
#
# Builds roofline-job, the ncu plugin, bin/gpp and bin/gpp_nofma (sm_90 only),
# then, each step under a time limit and skipped once DEADLINE seconds have
# gone (so that the results still come back):
#   selftest       gpp --selftest on its small problem (every kernel against
#                  a CPU loop), plain
#   ncu-nw         roofline-job --run ncu: gpp --exp nw        (nw = 1..6)
#   ncu-nw-nofma   the same with gpp_nofma (--fmad=false)
#   ncu-stride     gpp --exp stride                           (S = 1, 2, 4, 8)
#   ncu-vK         gpp --exp versions --only K, kernels=gpp_vK, K = 1..8
#   plain-*        the same programs without ncu, 3 launches each (medians),
#                  at SIZE; plain-full-*: at gpp's default 512 2 32768 20
# OUTDIR/summary.tsv: label, wall seconds, exit status.  OUTDIR/env.txt: the
# GPU, driver, ncu version and clocks.
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): OUTDIR defaults
# to $BENCH_SMOKE_DIR (else a new temporary directory), the build step is
# `make -n` of the same targets (what it would build), every other step is
# recorded as skipped in summary.tsv (they run gpp on the GPU); then the
# recorded outputs of the ncu steps (tests/fixtures/gpp/plugin-*.records.tsv)
# go through the hierarchical plugin (build/$BENCH_VARIANT's roofline-job,
# ceilings replayed from tests/fixtures/ert/h100-quick.tsv) and
# bench/gpp-table.py into OUTDIR/tables.md.
set -uo pipefail

SMOKE=${BENCH_SMOKE:-0}
OUT=${1:-}
((!SMOKE)) || [[ -n $OUT ]] || OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/gpp-h100-smoke.XXXXXX)}
[[ -n $OUT ]] || { echo "usage: bench/gpp-h100.sh OUTDIR [SIZE...]" >&2; exit 2; }
shift
SIZE=("$@")
((${#SIZE[@]})) || SIZE=(512 2 32768 800)
DEADLINE=${DEADLINE:-500}
B=build/release
mkdir -p "$OUT"
SUMMARY=$OUT/summary.tsv
printf 'label\twall_s\trc\tcommand\n' >"$SUMMARY"
T0=$(date +%s)

step() { # step LABEL LIMIT_S LOGFILE CMD...
	local label=$1 limit=$2 log=$3 t0 t1 rc
	shift 3
	if ((SMOKE)); then
		if [[ $label != build ]]; then
			printf '%s\t-\tskipped\t%s\n' "$label" "$*" >>"$SUMMARY"
			echo "== $label: skipped (smoke: needs the GPU)"
			return
		fi
		set -- "$1" -n "${@:2}" # make -n: what the build would run
	fi
	if (($(date +%s) - T0 > DEADLINE)); then
		printf '%s\t-\tskipped\t%s\n' "$label" "$*" >>"$SUMMARY"
		echo "== $label: skipped (deadline)"
		return
	fi
	t0=$(date +%s.%N)
	timeout "$limit" "$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	printf '%s\t%.3f\t%d\t%s\n' "$label" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$rc" "$*" >>"$SUMMARY"
	echo "== $label: rc=$rc wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')s"
}

{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi --query-gpu=name,uuid,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit --format=csv
	ncu --version
	nvcc --version | tail -2
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

step build 300 "$OUT/build.log" make -j16 VARIANT=release CUDA_ARCHS=90 \
	$B/bin/roofline-job $B/plugins/ncu.so $B/bin/gpp $B/bin/gpp_nofma
tail -3 "$OUT/build.log"
ROOFLINE_LIBEXEC=$(cd $B/bin && pwd)
export ROOFLINE_LIBEXEC

# the self-test, then the versions on the same small problem
step selftest 120 "$OUT/selftest.txt" $B/bin/gpp --selftest --exp all 8 2 600 10
step selftest-nofma 120 "$OUT/selftest-nofma.txt" $B/bin/gpp_nofma --selftest --exp all 8 2 600 10
((SMOKE)) || grep -E "self-test|all sums|FAILED" "$OUT/selftest.txt" "$OUT/selftest-nofma.txt"

# command=... once per word: the plugin's list option
cmd_of() { local w; for w in "$@"; do printf 'command=%s\n' "$w"; done; }
ncu_step() { # ncu_step NAME LIMIT [kernels=...] -- PROGRAM ARGS...
	local name=$1 limit=$2 opts=()
	shift 2
	while [[ $1 != -- ]]; do opts+=("$1"); shift; done
	shift
	mapfile -t c < <(cmd_of "$@" "${SIZE[@]}")
	step "ncu-$name" "$limit" "$OUT/ncu-$name.txt" $B/bin/roofline-job --plugin-dir $B/plugins \
		--run ncu --out "$OUT/ncu-$name" metrics_table="$PWD/etc/ncu-metrics.tsv" "${c[@]}" "${opts[@]}"
}
ncu_step nw 150 kernels=gpp_v1 -- gpp --exp nw
ncu_step nw-nofma 150 kernels=gpp_v1 -- gpp_nofma --exp nw
ncu_step stride 150 kernels=gpp_v1 -- gpp --exp stride
for k in 1 2 3 4 5 6 7 8; do
	ncu_step v$k 60 kernels=gpp_v$k -- gpp --exp versions --only $k
done

step plain-versions 120 "$OUT/plain-versions.txt" $B/bin/gpp --exp versions --reps 3 "${SIZE[@]}"
step plain-nw 120 "$OUT/plain-nw.txt" $B/bin/gpp --exp nw --reps 3 "${SIZE[@]}"
step plain-stride 120 "$OUT/plain-stride.txt" $B/bin/gpp --exp stride --reps 3 "${SIZE[@]}"
step plain-nw-nofma 120 "$OUT/plain-nw-nofma.txt" $B/bin/gpp_nofma --exp nw --reps 3 "${SIZE[@]}"
step plain-full-versions 120 "$OUT/plain-full-versions.txt" $B/bin/gpp --exp versions --reps 3
step plain-full-nw 120 "$OUT/plain-full-nw.txt" $B/bin/gpp --exp nw

cat "$SUMMARY"
for f in "$OUT"/plain-*.txt; do
	[[ -e $f ]] || continue
	echo "--- $f"
	grep -E "^gpp_v|^gpp:" "$f"
done
if ((SMOKE)); then
	# the recorded ncu steps' records, analysed, and docs/gpp.md's tables
	SB=build/${BENCH_VARIANT:-release}
	J=("$SB/bin/roofline-job" --plugin-dir "$SB/plugins")
	"${J[@]}" --run ert --out "$OUT/ceil" replay="$PWD/tests/fixtures/ert/h100-quick.tsv" >"$OUT/ert.log" 2>&1
	"${J[@]}" --run spec --out "$OUT/spec" attributes="$PWD/tests/fixtures/ert/h100-quick.tsv" >"$OUT/spec.log" 2>&1
	for f in tests/fixtures/gpp/plugin-*.records.tsv; do
		s=${f##*/plugin-}
		s=${s%.records.tsv}
		mkdir -p "$OUT/ncu-$s"
		cp "$f" "$OUT/ncu-$s/records.tsv"
		"${J[@]}" --run hierarchical --out "$OUT/h-$s" --input ceilings="$OUT/ceil" \
			--input spec="$OUT/spec" --input profile="$OUT/ncu-$s" \
			metrics_table="$PWD/etc/ncu-metrics.tsv" >"$OUT/h-$s.log" 2>&1 ||
			{ echo "smoke: hierarchical on $f failed: $(tail -3 "$OUT/h-$s.log")" >&2; exit 1; }
	done
	python3 bench/gpp-table.py "$OUT" >"$OUT/tables.md" || exit 1
	echo "smoke: bench/gpp-table.py on tests/fixtures/gpp: $(grep -c '^| gpp_v' "$OUT/tables.md") kernel rows in $OUT/tables.md"
fi
