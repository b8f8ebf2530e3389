#!/bin/bash
# bench/history-bench.sh - one kernel's history over 10,000,000 roofline
# points, with and without the indexes (issue 6's history target: < 20 ms).
#
# Usage: bench/history-bench.sh [ROWS=10000000] [REPEATS=7]
#
# Starts a private cluster in var/bench-history, applies sql/*.sql, fills
# the points table with ROWS synthetic aggregate points (2,000 nightly runs on
# 50 nodes, 1,667 kernels, 3 levels; generated here by SQL), then times, by
# EXPLAIN ANALYZE's execution time (median of REPEATS):
#   Q1  a kernel's GFLOP/s over the last 30 nights on H100 nodes (docs/sql.md)
#   Q2  `roofline history`'s own query (cli/cmd_history.c) for one kernel
# first with the migrations' indexes, then with points_kernel_idx and
# points_node_idx dropped.  Stops the cluster and removes its directory.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-10000000} repeats=${2:-7}
export ROOFLINE_VAR=$PWD/var/bench-history
trap 'scripts/cluster stop >/dev/null 2>&1 || true; rm -rf "$ROOFLINE_VAR"' EXIT
scripts/cluster start >/dev/null
eval "$(scripts/cluster env)"
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }

for f in sql/[0-9]*.sql; do q -f "$f" >/dev/null; done
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
q <<SQL
set synchronous_commit = off;
insert into runs (pipeline_name, owner, facility, yaml, state, trigger, ended_at)
select 'nightly', 'rooflined', true, '', 'succeeded', 'schedule',
       date_trunc('day', now()) - (i / 50) * interval '1 day' + interval '2 hours'
from generate_series(0, 1999) i;
insert into steps (run_id, step_id, node, plugin, on_daemon, state)
select id, 'roofline', 'node' || lpad((id % 50)::text, 2, '0'), 'hierarchical', true, 'succeeded'
from runs;
insert into points (run_id, step, attempt, seq, node, kernel, invocation,
                    invocations, precision, level, ai, gflops, pct_of_roof,
                    bound_level, verdict, is_primary, gpu_name, at)
select s.run_id, s.id, 1, g, s.node,
       'kernel_' || ((g / 3 / 2000) % 1667) || '(double *, long)', 'all', 1,
       'fp64', (array['l1', 'l2', 'dram'])[g % 3 + 1],
       1 + (g % 997) / 10.0, 100 + (g % 7919), 50, 'dram', 'bandwidth-bound',
       true, case when s.node < 'node40' then 'NVIDIA H100 80GB HBM3'
                  else 'NVIDIA A100-SXM4-80GB' end, r.ended_at
from generate_series(0, $rows - 1) g
join steps s on s.run_id = (g / 3) % 2000 + (select min(id) from runs)
join runs r on r.id = s.run_id;
analyze runs, steps, points;
SQL
echo "generated $(q -c 'select count(*) from points') points in $(( $(date +%s) - start )) s; table $(q -c "select pg_size_pretty(pg_total_relation_size('points'))")"

Q1="select run_at::date, node, gflops from kernel_trend where kernel = 'kernel_42(double *, long)' and gpu_name like '%H100%' and run_at > now() - interval '30 days' order by run_at"
Q2="select * from (select run_at, node, gflops, ai_l1, ai_l2, ai_dram, pct_of_roof, verdict, run_id from kernel_trend where (kernel = 'kernel_42' or (kernel >= 'kernel_42' || '(' and kernel < 'kernel_42' || ')') or (kernel >= 'kernel_42' || '<' and kernel < 'kernel_42' || '=')) order by run_at desc limit 1000) x order by run_at"

# median execution time (ms) of EXPLAIN ANALYZE over $repeats runs
time_query() {
	local i t all=()
	q -c "$1" >/dev/null # warm the cache
	for ((i = 0; i < repeats; i++)); do
		t=$(q -c "explain (analyze, timing off) $1" | sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p')
		all+=("$t")
	done
	printf '%s\n' "${all[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }'
}
echo "rows returned: Q1 $(q -c "$Q1" | wc -l), Q2 $(q -c "$Q2" | wc -l)"
echo "with indexes:    Q1 $(time_query "$Q1") ms   Q2 $(time_query "$Q2") ms   (median of $repeats)"
q -c "drop index points_kernel_idx; drop index points_node_idx;" >/dev/null
echo "without indexes: Q1 $(time_query "$Q1") ms   Q2 $(time_query "$Q2") ms   (median of $repeats)"
