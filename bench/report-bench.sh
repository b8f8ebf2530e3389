#!/bin/bash
# bench/report-bench.sh - wall time of one run report by the report plugin,
# the way rooflined runs it: `roofline-job --run report` (plugin loaded,
# input records read, model built, page with its SVG chart written
# atomically, report record written), release build.
#
#   kernel_abc   the real H100 records of the demo's run: spec and ert
#                ceilings, the ncu records, the hierarchical plugin's output
#                (3 kernels)
#   500 kernels  SYNTHETIC: the same inputs with the hierarchical records
#                replaced by 500 kernels made from the real kernel_A, B and
#                C records (kernel k copies kernel k mod 3's records under the
#                name synthetic_NNN_<name>, its AIs and GFLOP/s scaled by
#                fixed factors between 0.1 and 1; verdicts and the other
#                fields are left as copied).  Only its size means anything.
#
# Target (issue 14): the report of a 500-kernel run under 1 s.  Prints min /
# median / max of REPEATS runs in milliseconds: wall time, and CPU time (user
# + sys of roofline-job), which a loaded machine disturbs less.
#
# Usage: bench/report-bench.sh [REPEATS=20]   (builds VARIANT=release, or
#        BENCH_VARIANT; the pages go to a temporary directory, removed)
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): REPEATS defaults to 1.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-$([[ ${BENCH_SMOKE:-0} == 1 ]] && echo 1 || echo 20)}
B=build/${BENCH_VARIANT:-release}
F=tests/fixtures
make -s VARIANT="${BENCH_VARIANT:-release}" $B/bin/roofline-job $B/plugins/report.so

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step_dir() { # step_dir NAME FILE: a needed step's directory holding FILE as records.tsv
	mkdir -p "$tmp/in/$1"
	cp "$2" "$tmp/in/$1/records.tsv"
	echo "$tmp/in/$1"
}

# The 500-kernel records: roofs as they are, then 500 kernels' points.
awk -F'\t' -v OFS='\t' '
	$1 == "roof" { print; next }
	$1 == "point" { for (i = 2; i <= NF; i++) if ($i ~ /^kernel=/) k = substr($i, 8)
		if (!(k in seen)) { seen[k] = n++; order[seen[k]] = k }
		lines[seen[k]] = lines[seen[k]] $0 "\n" }
	END {
		for (j = 0; j < 500; j++) {
			src = j % 3; fa = 10 ^ ((j * 53 % 200) / 100 - 1); fg = 10 ^ (-(j * 37 % 100) / 100)
			m = split(lines[src], ls, "\n")
			for (l = 1; l < m; l++) {
				nf = split(ls[l], f, "\t"); out = f[1]
				for (i = 2; i <= nf; i++) {
					if (f[i] ~ /^kernel=/) f[i] = sprintf("kernel=synthetic_%03d_%s", j, substr(f[i], 8))
					else if (f[i] ~ /^ai=/) f[i] = "ai=" substr(f[i], 4) * fa
					else if (f[i] ~ /^gflops=/) f[i] = "gflops=" substr(f[i], 8) * fg
					out = out OFS f[i]
				}
				print out
			}
		}
	}' $F/render/hierarchical-kernel_abc.records.tsv >"$tmp/500.tsv"

spec=$(step_dir spec $F/ert/h100-spec-records.tsv)
ceil=$(step_dir ceilings $F/ert/h100-ert-records.tsv)
prof=$(step_dir profile $F/ncu/plugin-kernel_abc.records.tsv)
abc=$(step_dir roofline $F/render/hierarchical-kernel_abc.records.tsv)
many=$(step_dir roofline500 "$tmp/500.tsv")

time_it() { # time_it NAME CMD...: REPEATS runs; wall and CPU (user + sys) ms
	local name=$1 i t
	shift
	local -a wall=() cpu=()
	for ((i = 0; i < REPEATS; i++)); do
		t=$( { TIMEFORMAT='%3R %3U %3S'; time "$@" >/dev/null 2>&1 || echo FAIL; } 2>&1)
		[[ $t != *FAIL* ]] || { echo "report-bench: $name failed: $*" >&2; exit 1; }
		read -r r u s <<<"$t"
		wall+=("$(awk -v r="$r" 'BEGIN { printf "%d", r * 1000 }')")
		cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%d", (u + s) * 1000 }')")
	done
	stats() { sort -n | awk -v n="$REPEATS" '{ v[NR] = $1 } END { printf "min %5d  median %5d  max %5d ms", v[1], v[int((n + 1) / 2)], v[n] }'; }
	printf '%-12s wall %s   cpu %s   (%d runs)\n' "$name" \
		"$(printf '%s\n' "${wall[@]}" | stats)" "$(printf '%s\n' "${cpu[@]}" | stats)" "$REPEATS"
}

report() { # report OUT ROOFLINE_DIR
	rm -rf "$1"
	$B/bin/roofline-job --plugin-dir $B/plugins --run report --out "$1" \
		--input "spec=$spec" --input "ceilings=$ceil" --input "profile=$prof" --input "roofline=$2"
}

report "$tmp/check" "$many" >/dev/null 2>&1
echo "report-bench: $(nproc) CPUs, $(uname -m), load average $(cut -d' ' -f1-3 /proc/loadavg); 500-kernel input: $(grep -c '^point' "$tmp/500.tsv") point records," \
	"$(grep -o 'kernels=[0-9]*' "$tmp/check/records.tsv"), page $(stat -c %s "$tmp/check/report.html") bytes"
time_it "kernel_abc" report "$tmp/o1" "$abc"
time_it "500 kernels" report "$tmp/o2" "$many"
