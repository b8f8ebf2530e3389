#!/bin/bash
# bench/multi-gpu.sh - a node of several GPUs: its GPUs measured all at once
# and one after the other, and the peer-to-peer matrix (docs/fleet.md,
# docs/ceilings.md "Peer to peer").  Leaves the GPUs' clocks and settings as
# they are.
#
#   bench/multi-gpu.sh OUTDIR
#
# $BENCH names ert-bench (default build/release/bin/ert-bench, else
# build/debug's); $DEADLINE_S (default 300) is the wall time the whole script
# may take: a step that would start past it is skipped and said so, and each
# running ert-bench is stopped (timeout) at the deadline.  $FULL=1 also
# measures both modes without --quick.  Writes into OUTDIR:
#   topo.txt            nvidia-smi topo -m
#   gpus.csv            nvidia-smi: index, name, uuid, bus id, power limit,
#                       max SM clock
#   concurrent.tsv      ert-bench --quick --mode concurrent, one process per
#                       GPU, started together (--start-at), outputs joined
#   sequential.tsv      ert-bench --quick --mode sequential (every GPU, one
#                       after the other, one process)
#   p2p.tsv             ert-bench --quick --p2p --topo topo.txt
#   logs.tar.gz         every stderr, the per-GPU outputs, nvidia-smi's
#                       samples (power, SM clock, temperature every 200 ms:
#                       smi-samples.csv) and, with FULL=1,
#                       {concurrent,sequential}-full.tsv
# bench/p2p-table.py OUTDIR makes the tables of the docs from them.
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): OUTDIR defaults
# to $BENCH_SMOKE_DIR; what needs no GPU runs on the recorded 4-GPU node
# (tests/fixtures/p2p): the ert plugin (build/$BENCH_VARIANT's roofline-job)
# replays its p2p and concurrent runs as recorded (OUTDIR/p2p,
# OUTDIR/concurrent), bench/p2p-table.py makes OUTDIR/tables.md; it says
# what it skipped (nvidia-smi and every ert-bench run).
# Exit status: 0, 1 when a run failed or was skipped (the rest still runs),
# 2 usage.
set -u

if [ "${BENCH_SMOKE:-0}" = 1 ] && [ $# -eq 0 ] && [ -n "${BENCH_SMOKE_DIR:-}" ]; then
	set -- "$BENCH_SMOKE_DIR"
fi
if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: bench/multi-gpu.sh OUTDIR  (env: BENCH, DEADLINE_S, FULL, BENCH_SMOKE)" >&2
	exit 2
fi
out=$1
mkdir -p "$out/logs" || exit 1

if [ "${BENCH_SMOKE:-0}" = 1 ]; then
	F=tests/fixtures/p2p
	V=${BENCH_VARIANT:-${VARIANT:-debug}}
	rc=0
	for r in p2p concurrent; do
		build/"$V"/bin/roofline-job --plugin-dir build/"$V"/plugins --run ert \
			--out "$out/$r" replay="$PWD/$F/$r.tsv" replay_as=recorded \
			>"$out/plugin-$r.log" 2>&1 || rc=1
		echo "multi-gpu.sh: smoke: ert plugin on $F/$r.tsv: $(grep -c '^ceiling' "$out/$r/records.tsv" 2>/dev/null) ceilings"
	done
	python3 bench/p2p-table.py "$F" >"$out/tables.md" || rc=1
	echo "multi-gpu.sh: smoke: bench/p2p-table.py $F: $(grep -c '^| ' "$out/tables.md") table lines in $out/tables.md"
	echo "multi-gpu.sh: smoke: skipped nvidia-smi and every ert-bench run (concurrent, sequential, p2p: they need the GPUs)"
	rmdir "$out/logs" 2>/dev/null
	exit "$rc"
fi
bench=${BENCH:-}
if [ -z "$bench" ]; then
	bench=build/release/bin/ert-bench
	[ -x "$bench" ] || bench=build/debug/bin/ert-bench
fi
t_end=$(( $(date +%s) + ${DEADLINE_S:-300} ))
status=0

left() { echo $(( t_end - $(date +%s) )); }

# run NAME NEED_S CMD...: run CMD unless fewer than NEED_S seconds are left,
# stopping it at the deadline; stdout to logs/NAME.tsv, stderr to
# logs/NAME.err.
run() {
	local name=$1 need=$2 rc
	shift 2
	if [ "$(left)" -lt "$need" ]; then
		echo "multi-gpu.sh: $name skipped: $(left) s left, $need needed" >&2
		status=1
		return 1
	fi
	timeout "$(left)" "$@" >"$out/logs/$name.tsv" 2>"$out/logs/$name.err"
	rc=$?
	echo "multi-gpu.sh: $name: exit $rc, $(left) s left" >&2
	[ "$rc" -eq 0 ] || status=1
	return "$rc"
}

nvidia-smi topo -m >"$out/topo.txt" 2>&1 || status=1
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,power.limit,clocks.max.sm \
	--format=csv >"$out/gpus.csv" 2>&1 || status=1
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "multi-gpu.sh: $n GPU(s), ert-bench $bench" >&2
nvidia-smi --query-gpu=timestamp,index,power.draw,clocks.sm,temperature.gpu \
	--format=csv -lms 200 >"$out/logs/smi-samples.csv" 2>&1 &
smi=$!

# both modes; $1 "" (quick) or "-full"
modes() {
	local sfx=$1 q=--quick need=40 g start pids=() rc
	if [ -n "$sfx" ]; then q=; need=90; fi
	start=$(( $(date +%s) + 10 ))
	for ((g = 0; g < n; g++)); do
		run "concurrent$sfx-gpu$g" "$need" "$bench" $q --gpu "$g" \
			--mode concurrent --start-at "$start" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
		rc=$?
		[ "$rc" -eq 0 ] || status=1
	done
	cat "$out"/logs/concurrent"$sfx"-gpu*.tsv >"$out/logs/concurrent$sfx.tsv"
	run "sequential$sfx" $(( need * n / 2 )) "$bench" $q --mode sequential
}

modes ""
cp "$out/logs/concurrent.tsv" "$out/logs/sequential.tsv" "$out/"
if [ "$n" -ge 2 ]; then
	run p2p 60 "$bench" --quick --p2p --topo "$out/topo.txt" && :
	cp "$out/logs/p2p.tsv" "$out/"
fi
[ "${FULL:-0}" = 1 ] && modes -full
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$out/logs"
echo "multi-gpu.sh: done, status $status, $(left) s left" >&2
exit "$status"
