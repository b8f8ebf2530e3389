#!/bin/bash
# bench/analysis-e2e.sh - issue 13's analysis target end to end: the analyze
# step as roofline-job runs it (read the needed steps' records.tsv files,
# parse them, run the hierarchical plugin, write records.tsv and exit.tsv),
# two builds side by side in one run: a base commit (-b, default the merge
# base with main) and the working tree.
#
#   check  both builds on every fixture of tests/fixtures/analysis with the
#          ERT ceilings and the spec ceilings, under several option sets
#          (defaults; invocations: true; bytes: ncu; methods: theoretical
#          first; time: cycles), on three malformed files (cut short, a bad
#          escape, a bad key), and on ROWS/50 benchmark rows with
#          invocations: true: records.tsv must be byte-for-byte the same,
#          and so must the log lines (time stamps and process ids taken out)
#   time   R rounds over ROWS `kernel` records (bench/analysis-bench -w: the
#          21 real H100 rows of kernel_abc and gsrb repeated with new
#          invocation IDs, after their two `device` records, 1.15 GB for a
#          million) and the H100 ERT ceilings, both builds in each round, the
#          order alternating; per run wall time, user + system CPU time and
#          peak RSS (/usr/bin/time), and records.tsv compared with cmp.  The
#          input stays in the page cache (one untimed run of each build
#          first): what is measured is the step, not the disk.
#
# Prints medians (and all values) per build and the ratio new / base.
#
# Usage: bench/analysis-e2e.sh [-b BASE] [-n ROWS] [-r ROUNDS] [-o DIR]
#   -b  base commit (default: merge-base of HEAD and main)
#   -n  rows (default 1000000)
#   -r  rounds (default 7)
#   -o  work directory: builds, input, outputs (default /tmp/analysis-e2e;
#       the input is kept there and reused when its size matches)
# Needs about 2.5 GB of disk in DIR for a million rows.
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): "base" is the working tree's
# build too (BENCH_VARIANT, default release; no second commit built: -b is
# ignored), defaults -n 5000 -r 1 -o $BENCH_SMOKE_DIR (else a new temporary
# directory), and the check runs the first two option sets only.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE_REV='' ROWS=1000000 ROUNDS=7 DIR=/tmp/analysis-e2e
SMOKE=${BENCH_SMOKE:-0}
V=${BENCH_VARIANT:-release}
if ((SMOKE)); then
	ROWS=5000 ROUNDS=1 DIR=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/analysis-e2e-smoke.XXXXXX)}
fi
while getopts b:n:r:o:h opt; do
	case $opt in
	b) BASE_REV=$OPTARG ;;
	n) ROWS=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	o) DIR=$OPTARG ;;
	h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done
cd "$REPO"
((SMOKE)) || [[ $BASE_REV ]] || BASE_REV=$(git merge-base HEAD main)
mkdir -p "$DIR"
TARGETS=(bin/roofline-job plugins/hierarchical.so)

# ---- the two builds, copied so that a rebuild meanwhile changes nothing ----
base_src=$DIR/base-src
if ((SMOKE)); then
	echo "analysis-e2e: smoke: base = the working tree's build/$V (skipped the build of another commit)" >&2
	BASE_SHORT="working-tree(smoke)"
	base_src=$REPO
else
	BASE_SHORT=$(bench/ab-build.sh "$BASE_REV" "$DIR/base-src" "${TARGETS[@]/#/build/release/}")
fi
make -s -j2 VARIANT="$V" "${TARGETS[@]/#/build/$V/}" "build/$V/bench/analysis-bench" >&2
NEW_SHORT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- common plugins jobs || echo +)"
for b in base new; do
	src=$REPO
	[[ $b == base ]] && src=$base_src
	rm -rf "${DIR:?}/$b"
	mkdir -p "$DIR/$b/plugins"
	cp "$src/build/$V/bin/roofline-job" "$DIR/$b/"
	cp "$src/build/$V/plugins/hierarchical.so" "$DIR/$b/plugins/"
done
export ROOFLINE_ETC=$REPO/etc

# job BUILD OUT INPUT... -- OPTION...: one analyze step; its log is OUT.log.
job() {
	local build=$1 out=$2 inputs=() opts=()
	shift 2
	while (($#)) && [[ $1 != -- ]]; do inputs+=(--input "$1"); shift; done
	shift
	opts=("$@")
	rm -rf "$out"
	"$DIR/$build/roofline-job" --plugin-dir "$DIR/$build/plugins" --run hierarchical \
		--out "$out" "${inputs[@]}" "${opts[@]}" 2>"$out.log.raw" || true
	# time stamps, pids and the attempt's directory differ from run to run
	sed -E 's/^[0-9T:-]+ roofline-job\[[0-9]+\]: //; s#'"$DIR"'/(base|new)/#BUILD/#g' \
		"$out.log.raw" >"$out.log"
}

# same NAME INPUT... -- OPTION...: both builds; fail when they differ.
CHECKS=0
same() {
	local name=$1 c=$DIR/check
	shift
	job base "$c/base-$name" "$@"
	job new "$c/new-$name" "$@"
	for f in records.tsv log; do
		local a=$c/base-$name/$f b=$c/new-$name/$f
		[[ $f == log ]] && a=$c/base-$name.log b=$c/new-$name.log
		if [[ -e $a || -e $b ]] && ! cmp -s "$a" "$b"; then
			echo "DIFFERENT: $name: $f" >&2
			diff "$a" "$b" | head -20 >&2
			exit 1
		fi
	done
	CHECKS=$((CHECKS + 1))
}

# ---- check ------------------------------------------------------------------
rm -rf "$DIR/check"
mkdir -p "$DIR/check/in"
for c in ert spec; do
	mkdir -p "$DIR/check/in/$c"
	cp "tests/fixtures/ert/h100-$c-records.tsv" "$DIR/check/in/$c/records.tsv"
done
opt_sets=("" "invocations=true" "bytes=ncu" "methods=theoretical methods=empirical"
	  "time=cycles invocations=true" "missing_ceilings=skip precisions=all,tc_int8")
((!SMOKE)) || opt_sets=("${opt_sets[@]:0:2}")
for f in tests/fixtures/analysis/*.records.tsv; do
	k=$(basename "$f" .records.tsv)
	mkdir -p "$DIR/check/in/$k"
	cp "$f" "$DIR/check/in/$k/records.tsv"
	for i in "${!opt_sets[@]}"; do
		# shellcheck disable=SC2086 # the option sets are words
		same "$k-ert-$i" "ceilings=$DIR/check/in/ert" "profile=$DIR/check/in/$k" -- ${opt_sets[$i]}
		# shellcheck disable=SC2086
		same "$k-both-$i" "ert=$DIR/check/in/ert" "spec=$DIR/check/in/spec" \
			"profile=$DIR/check/in/$k" -- ${opt_sets[$i]}
	done
done
same "spec-only" "spec=$DIR/check/in/spec" "profile=$DIR/check/in/kernel_abc" --
# malformed inputs: the same error, at the same line and column
mkdir -p "$DIR/check/in/cut" "$DIR/check/in/escape" "$DIR/check/in/key"
head -c -1 tests/fixtures/analysis/gsrb.records.tsv >"$DIR/check/in/cut/records.tsv"
sed '3s/\tpid=/\tpid=1\\q/' tests/fixtures/analysis/gsrb.records.tsv >"$DIR/check/in/escape/records.tsv"
sed '4s/\tpid=/\tp id=/' tests/fixtures/analysis/gsrb.records.tsv >"$DIR/check/in/key/records.tsv"
for k in cut escape key; do
	same "malformed-$k" "ceilings=$DIR/check/in/ert" "profile=$DIR/check/in/$k" --
done

# ---- the benchmark input -------------------------------------------------
IN=$DIR/input
mkdir -p "$IN/ceilings" "$IN/profile" "$IN/small"
cp tests/fixtures/ert/h100-ert-records.tsv "$IN/ceilings/records.tsv"
gen() { # gen ROWS FILE
	"build/$V/bench/analysis-bench" -n "$1" -w "$2" tests/fixtures/ert/h100-ert-records.tsv \
		tests/fixtures/analysis/kernel_abc.records.tsv tests/fixtures/analysis/gsrb.records.tsv
}
if [[ ! -s $IN/profile/records.tsv ]] || [[ $(cat "$IN/rows" 2>/dev/null) != "$ROWS" ]]; then
	gen "$ROWS" "$IN/profile/records.tsv" >&2
	echo "$ROWS" >"$IN/rows"
fi
gen $((ROWS / 50)) "$IN/small/records.tsv" >/dev/null
same "bench-$((ROWS / 50))-invocations" "ceilings=$IN/ceilings" "profile=$IN/small" -- invocations=true
same "bench-$((ROWS / 50))" "ceilings=$IN/ceilings" "profile=$IN/small" --
echo "check: $CHECKS runs, base $BASE_SHORT and new $NEW_SHORT: records.tsv and logs identical"

# ---- time -------------------------------------------------------------------
# timed BUILD: one run over the benchmark input; appends "wall cpu rss_kB".
timed() {
	local out=$DIR/out-$1
	rm -rf "$out"
	/usr/bin/time -f "%e %U %S %M" -o "$DIR/time.$1" "$DIR/$1/roofline-job" \
		--plugin-dir "$DIR/$1/plugins" --run hierarchical --out "$out" \
		--input "ceilings=$IN/ceilings" --input "profile=$IN/profile" 2>"$out.log"
	awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' "$DIR/time.$1" >>"$DIR/times.$1"
	grep -q 'status=ok' "$out/exit.tsv"
}
rm -f "$DIR/times.base" "$DIR/times.new"
timed base && timed new # untimed: the page cache
rm -f "$DIR/times.base" "$DIR/times.new"
echo "input: $ROWS kernel records, $(du -m "$IN/profile/records.tsv" | cut -f1) MiB; \
machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order=(base new); else order=(new base); fi
	for b in "${order[@]}"; do timed "$b"; done
	cmp -s "$DIR/out-base/records.tsv" "$DIR/out-new/records.tsv" ||
		{ echo "DIFFERENT: round $r: records.tsv" >&2; exit 1; }
	echo "round $r: load $(cut -d' ' -f1 /proc/loadavg); base $(tail -1 "$DIR/times.base"); new $(tail -1 "$DIR/times.new")"
done

# median COLUMN FILE
median() { cut -d' ' -f"$1" "$2" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
all() { cut -d' ' -f"$1" "$2" | paste -sd' '; }
echo
printf '%-6s %-9s %-24s %-24s %s\n' build commit "wall median (all) s" "CPU median (all) s" "peak RSS median kB"
for b in base new; do
	c=$BASE_SHORT
	[[ $b == new ]] && c=$NEW_SHORT
	printf '%-6s %-9s %-24s %-24s %s\n' "$b" "$c" "$(median 1 "$DIR/times.$b") ($(all 1 "$DIR/times.$b"))" \
		"$(median 2 "$DIR/times.$b") ($(all 2 "$DIR/times.$b"))" "$(median 3 "$DIR/times.$b")"
done
awk -v wb="$(median 1 "$DIR/times.base")" -v wn="$(median 1 "$DIR/times.new")" \
    -v cb="$(median 2 "$DIR/times.base")" -v cn="$(median 2 "$DIR/times.new")" \
    -v rb="$(median 3 "$DIR/times.base")" -v rn="$(median 3 "$DIR/times.new")" \
    'function r(a, b) { return b ? sprintf("%.2f", a / b) : "n/a (base 0)" }
     BEGIN { printf "new / base: wall %s, CPU %s, peak RSS %s\n", r(wn, wb), r(cn, cb), r(rn, rb) }'
echo "records.tsv identical in all $ROUNDS rounds ($(wc -l <"$DIR/out-new/records.tsv") records)"
