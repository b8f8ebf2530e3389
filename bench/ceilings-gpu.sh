#!/bin/sh
# bench/ceilings-gpu.sh - reproduce the measured ceilings of docs/ceilings.md
# on a GPU node (measured on the H100 SXM and the H200; any sm_80+ GPU runs
# it).  GPU 0 is measured.
#
#   bench/ceilings-gpu.sh [OUTDIR]         (default: $OUT, else ./ceilings-out)
#
# Builds ert-bench (make VARIANT=release) unless $BENCH names one, and the
# comparison program bench/stream-peer.cu (nvcc) unless $PEER names one,
# then runs, leaving the GPU's clocks and settings as they are, with P the
# GPU's short name (h100, h200, ...: $GPU_TAG, else from nvidia-smi):
#   ert-bench --attributes   > P-attributes.tsv
#   stream-peer              > P-peer.tsv         (comparison kernels: the
#                              BabelStream-style loop, a plain read, write
#                              and L2 read; before and after ert-bench)
#   ert-bench --quick        > P-quick.tsv        (the nightly step)
#   ert-bench                > P-full.tsv         (unless FULL=0)
#   (both with ERT_CANDIDATES=1: P-{quick,full}.err list the rate of every
#   geometry candidate tried, the losers too)
#   roofline-job --run ert/spec when the job side is built (plugins from
#   build/release): OUTDIR/spec, OUTDIR/ert and plugin-*.log
# and summarises the SASS of the benchmark loops (sass-summary.txt:
# instruction counts per kernel, to show that no loop was optimised away).
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md; no GPU needed): OUTDIR defaults
# to $BENCH_SMOKE_DIR (else a new temporary directory); what needs no GPU
# runs: make -n of ert-bench (what the build would do), the spec and ert
# plugins (build/$VARIANT's roofline-job) on the recorded H100 quick run
# (tests/fixtures/ert/h100-quick.tsv, replayed), bench/ceilings-table.py on
# the recorded issue-13 run (tests/fixtures/ert/issue13, h100) into
# OUTDIR/tables.md, and the closing summary on the recorded quick run; it
# says what it skipped (nvidia-smi, the nvcc build of stream-peer, every
# ert-bench and stream-peer run, cuobjdump).
set -eu

if [ "${BENCH_SMOKE:-0}" = 1 ]; then
	OUTDIR=${1:-${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/ceilings-gpu-smoke.XXXXXX)}}
else
	OUTDIR=${1:-${OUT:-$PWD/ceilings-out}}
fi
VARIANT=${BENCH_VARIANT:-${VARIANT:-release}}
BENCH=${BENCH:-build/$VARIANT/bin/ert-bench}
PEER=${PEER:-build/$VARIANT/bin/stream-peer}
mkdir -p "$OUTDIR"

if [ "${BENCH_SMOKE:-0}" = 1 ]; then
	F=tests/fixtures/ert
	JOB=build/$VARIANT/bin/roofline-job
	PLUG=build/$VARIANT/plugins
	echo "ceilings-gpu: smoke: make -n $BENCH: $(make -s -n VARIANT="$VARIANT" "$BENCH" | wc -l) commands (not run)"
	"$JOB" --plugin-dir "$PLUG" --run spec --out "$OUTDIR/spec" attributes="$PWD/$F/h100-quick.tsv" \
		>"$OUTDIR/plugin-spec.log" 2>&1
	"$JOB" --plugin-dir "$PLUG" --run ert --out "$OUTDIR/ert" replay="$PWD/$F/h100-quick.tsv" \
		quick=true >"$OUTDIR/plugin-ert.log" 2>&1
	echo "ceilings-gpu: smoke: spec and ert plugins on $F/h100-quick.tsv: $(grep -c '^ceiling' "$OUTDIR/ert/records.tsv") ert ceilings"
	python3 bench/ceilings-table.py "$F/issue13" h100 >"$OUTDIR/tables.md"
	echo "ceilings-gpu: smoke: bench/ceilings-table.py $F/issue13 h100: $(grep -c '^| ' "$OUTDIR/tables.md") table lines in $OUTDIR/tables.md"
	grep -h '^ceiling\|^gpu_done' "$F/h100-quick.tsv" | cut -f3,8,10,11,17
	echo "ceilings-gpu: smoke: skipped nvidia-smi, the nvcc build of stream-peer, ert-bench (--attributes, --quick, full) and stream-peer runs, cuobjdump (they need the GPU)"
	exit 0
fi

if [ ! -x "$BENCH" ]; then
	make -j"$(nproc)" VARIANT="$VARIANT" "$BENCH" >"$OUTDIR/build.log" 2>&1
fi
if [ ! -x "$PEER" ]; then
	mkdir -p "$(dirname "$PEER")"
	nvcc -O3 -arch=sm_90 -o "$PEER" bench/stream-peer.cu >>"$OUTDIR/build.log" 2>&1
fi
if [ -z "${GPU_TAG:-}" ]; then
	GPU_TAG=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 |
		sed -n 's/.*\(H[0-9][0-9]*\).*/\1/p' | tr 'H' 'h')
	GPU_TAG=${GPU_TAG:-gpu}
fi
P=$GPU_TAG

smi() {
	nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
		--format=csv >>"$OUTDIR/nvidia-smi.csv" 2>&1 || true
}

now() { date +%s.%N; }

smi
"$BENCH" --attributes >"$OUTDIR/$P-attributes.tsv"
# the comparison kernels before and after ert-bench, in the same run
"$PEER" >"$OUTDIR/$P-peer.tsv" 2>&1 || echo "stream-peer failed: $?" >>"$OUTDIR/$P-peer.tsv"
t0=$(now)
ERT_CANDIDATES=1 "$BENCH" --quick >"$OUTDIR/$P-quick.tsv" 2>"$OUTDIR/$P-quick.err"
t1=$(now)
smi
echo "quick wall_s $(awk "BEGIN{print $t1 - $t0}")" >"$OUTDIR/times.txt"
if [ "${FULL:-1}" != 0 ]; then
	t0=$(now)
	ERT_CANDIDATES=1 "$BENCH" >"$OUTDIR/$P-full.tsv" 2>"$OUTDIR/$P-full.err"
	t1=$(now)
	smi
	echo "full wall_s $(awk "BEGIN{print $t1 - $t0}")" >>"$OUTDIR/times.txt"
fi
"$PEER" >>"$OUTDIR/$P-peer.tsv" 2>&1 || echo "stream-peer failed: $?" >>"$OUTDIR/$P-peer.tsv"

# SASS: opcode counts per kernel of the sm_90a code (cuobjdump ships with CUDA)
if command -v cuobjdump >/dev/null 2>&1; then
	cuobjdump -sass "$BENCH" >"$OUTDIR/sass.txt" 2>&1 || true
	python3 - "$OUTDIR/sass.txt" >"$OUTDIR/sass-summary.txt" <<'EOF' || true
import re, sys, collections
ops = ["DFMA", "DADD", "FFMA", "FADD", "HFMA2", "HADD2", "HMMA", "DMMA",
       "IMMA", "HGMMA", "IGMMA", "QGMMA", "LDG", "LDS", "STG", "LDL", "STL"]
arch, fn, counts = None, None, collections.OrderedDict()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"arch = (sm_\w+)", line)
    if m:
        arch = m.group(1)
    m = re.search(r"Function : (\S+)", line)
    if m:
        fn = (arch, m.group(1))
        counts[fn] = collections.Counter()
        continue
    m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
    if m and fn:
        counts[fn][m.group(1)] += 1
for (a, f), c in counts.items():
    if a not in ("sm_90a", "sm_90") or not f.startswith("_Z"):
        continue
    shown = " ".join("%s=%d" % (o, c[o]) for o in ops if c[o])
    print("%s\t%s\t%s" % (a, f, shown))
# the whole SASS of the L1 and shared-memory loops, to see the loads stay
# inside them
keep, arch = False, None
with open(sys.argv[1].replace("sass.txt", "sass-loops.txt"), "w") as out:
    for line in open(sys.argv[1], errors="replace"):
        m = re.search(r"arch = (sm_\w+)", line)
        if m:
            arch = m.group(1)
        m = re.search(r"Function : (\S+)", line)
        if m:
            keep = arch == "sm_90a" and re.match(r"_Z(4k_l1|8k_shared)I", m.group(1))
        if keep:
            out.write(line)
EOF
fi

# The plugins over the real output, when the job side is built.
JOB=build/$VARIANT/bin/roofline-job
if [ -x "$JOB" ] && [ -f "build/$VARIANT/plugins/ert.so" ]; then
	ROOFLINE_LIBEXEC=$(dirname "$BENCH") "$JOB" --plugin-dir "build/$VARIANT/plugins" \
		--run spec --out "$OUTDIR/spec" >"$OUTDIR/plugin-spec.log" 2>&1 || true
	ROOFLINE_LIBEXEC=$(dirname "$BENCH") "$JOB" --plugin-dir "build/$VARIANT/plugins" \
		--run ert --out "$OUTDIR/ert" quick=true >"$OUTDIR/plugin-ert.log" 2>&1 || true
fi
cat "$OUTDIR/times.txt"
grep -h '^ceiling\|^gpu_done' "$OUTDIR/$P-quick.tsv" | cut -f3,8,10,11,17 || true
