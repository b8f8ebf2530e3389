#!/bin/bash
# bench/night-scale-plot.sh - the poll figure of docs/benchmarks.md from a
# bench/night-scale.sh summary: per poll, the bytes the daemon received from
# slurmctld and slurmctld's time, before (whole table) and after (the
# daemon's jobs only), with 0 and with N foreign jobs.
#
# Usage: bench/night-scale-plot.sh SUMMARY.txt OUT.png
# Smoke (BENCH_SMOKE=1): the same on the smoke's summary (the caller names it).
set -euo pipefail
(($# == 2)) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
summary=$1 png=$2
tsv=$(mktemp)
trap 'rm -f "$tsv"' EXIT
# "  before 20000 foreign  matched ... received/poll B bytes ..." then its
# sdiag lines: the job-reading RPC's total_time over the polls
awk -v OFS='\t' '
	/^  (before|after) +[0-9]+ foreign/ {
		if (mode != "") print mode, n, bytes, t / polls / 1000
		mode = $1; n = $2; t = 0
		for (i = 1; i <= NF; i++) if ($i == "received/poll") bytes = $(i + 1)
		next }
	/^== slurm:/ { for (i = 1; i <= NF; i++) if ($i == "polls") polls = $(i - 1) }
	/sdiag: REQUEST_JOB_(INFO|USER_INFO)/ && mode != "" {
		for (i = 1; i <= NF; i++) if ($i ~ /^total_time:/) { v = $i; sub(/total_time:/, "", v); t += v } }
	END { if (mode != "") print mode, n, bytes, t / polls / 1000 }' "$summary" >"$tsv"
[[ $(wc -l <"$tsv") == 4 ]] || { echo "night-scale-plot: no four poll lines in $summary" >&2; exit 1; }
gnuplot <<GP
set terminal pngcairo size 900,360 font ",10"
set output "$png"
set datafile separator "\t"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set multiplot layout 1,2 title "the daemon's Slurm poll, 2,000 own jobs (bench/night-scale.sh, SYNTHETIC background)"
set ylabel "MB received per poll"
set yrange [0:*]
plot "< awk -F'\t' '\$1 == \"before\"' $tsv" using (\$3 / 1e6):xtic(sprintf("%s foreign", stringcolumn(2))) title "before: whole table", \
     "< awk -F'\t' '\$1 == \"after\"' $tsv" using (\$3 / 1e6) title "after: own jobs only"
set ylabel "slurmctld ms per poll (sdiag)"
plot "< awk -F'\t' '\$1 == \"before\"' $tsv" using 4:xtic(sprintf("%s foreign", stringcolumn(2))) title "before: whole table", \
     "< awk -F'\t' '\$1 == \"after\"' $tsv" using 4 title "after: own jobs only"
unset multiplot
GP
cut -f1-4 "$tsv"
