#!/bin/bash
# Each kernel's series (sql/030_kernel_series.sql).  A run's 'all' points
# join their kernel's series when the run succeeds, in run order even when
# runs end out of order; a failed run's never do; a series keeps its
# pipeline's latest 100 successful runs, and kernel_series_since says from
# which run they are complete.  rl_kernel_noise answers from the series
# where they cover its window and from the points where they do not, and
# both answers are 011's (two percentile_cont passes), to the bit, for
# every run of a synthetic pipeline of 112 runs at lookbacks 10, 30 and
# 150.  The figures are synthetic (random), labelled so in their verdict.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start
daemon_stop

# 112 runs of pipeline noise-cap (alice's), each with one step and the 'all'
# points of kernels k0-k4 at levels dram and l2 (fp64), random figures with
# ties; k4 only in every third run (the 1st, 4th, ... 109th, 112th: not in
# the last two that end, so its series is not rewritten when they do), k3's
# AI null in every fifth (counted from the pipeline's first run, so that the
# data do not depend on the ids other tests left).  Runs are
# ended one by one: in id order, but each pair 10k+3, 10k+4 the other way
# round, and run 50 fails.  The last run stays running (tonight's).
out=$(psql -X -q -t -A -v ON_ERROR_STOP=1 <<'SQL' 2>&1
\o /dev/null
select setseed(0.4);
-- the months of the nights below have their partitions, as the daemon
-- makes them (daemon/partitions.c)
select count(rl_partition_create(t.name, m::date)) from history_tables t,
	generate_series(rl_month(now() - interval '120 days')::timestamp,
			rl_month(now())::timestamp, interval '1 month') m;
insert into runs (pipeline_name, owner, facility, yaml, trigger, state, night, submitted_at)
select 'noise-cap', 'alice', false, '', 'schedule', 'running',
       current_date - 113 + n, current_date - 113 + n
from generate_series(1, 112) n order by n;
insert into steps (run_id, step_id, node, plugin, on_daemon, state, attempt)
select id, 'roofline', '', 'hierarchical', true, 'succeeded', 1
from runs where pipeline_name = 'noise-cap';
insert into points (run_id, step, attempt, seq, node, kernel, invocation,
		    precision, level, ai, gflops, is_primary, verdict, at)
select r.id, s.id, 1, row_number() over (partition by r.id order by k, l),
       'rl-n01', 'k' || k, 'all', 'fp64', l,
       case when k = 3 and (r.id - f.id + 1) % 5 = 0 then null
	    else 1 + floor(random() * 12) / 8 end,
       100 + floor(random() * 40) * 2.5, true, 'synthetic (kernel-series.t)',
       r.night + interval '4 hours'
from runs r join steps s on s.run_id = r.id,
     (select min(id) as id from runs where pipeline_name = 'noise-cap') f,
     generate_series(0, 4) k, (values ('dram'), ('l2')) v (l)
where r.pipeline_name = 'noise-cap' and (k < 4 or (r.id - f.id + 1) % 3 = 1);
do $$
declare
	run bigint;
	first bigint := (select min(id) from runs where pipeline_name = 'noise-cap');
begin
	for run in select id from runs where pipeline_name = 'noise-cap'
		   and id - first + 1 < 112
		   order by case when (id - first + 1) % 10 in (3, 4)
			    then id + 2 * (3.5 - (id - first + 1) % 10) else id end loop
		update runs set state = case when id - first + 1 = 50
			then 'failed' else 'succeeded' end
		where id = run;
	end loop;
end
$$;
SQL
)
is "$out" "" "112 runs of synthetic points, ended one by one (two of each ten out of order, one failed)"

first=$(sql "select min(id) from runs where pipeline_name = 'noise-cap'")
# The 100th newest successful run: every series keeps the runs from it on.
hundredth=$(sql "select id from runs where pipeline_name = 'noise-cap' and state = 'succeeded'
	order by id desc offset 99 limit 1")
ok "the pipeline has over 100 successful runs" test -n "$hundredth" -a "$hundredth" -gt "$first"
is "$(sql "select since from kernel_series_since where pipeline_name = 'noise-cap'")" "$hundredth" \
	"kernel_series_since: complete from the 100th newest successful run"
is "$(sql "select count(*) from kernel_series where pipeline_name = 'noise-cap'")" 10 \
	"one series per kernel, level and precision"
# Each series is exactly the points of the successful runs from that run on
# (or from its first element, when older: an append drops the runs before the
# cutoff of its time, and k4's series was last appended before the last two
# runs ended), in run order (ids ascending, so a run that ended late was
# sorted in).
is "$(sql "select count(*) from kernel_series s, lateral (
	    select array_agg(p.run_id order by p.run_id, p.id) as r, array_agg(p.ai order by p.run_id, p.id) as a,
		   array_agg(p.gflops order by p.run_id, p.id) as g
	    from points p join runs r on r.id = p.run_id
	    where r.pipeline_name = 'noise-cap' and r.state = 'succeeded'
	      and p.run_id >= least(s.run_ids[1], $hundredth) and p.kernel = s.kernel
	      and p.level = s.level and p.precision = s.precision) x
	where s.pipeline_name = 'noise-cap' and (s.run_ids, s.ai, s.gflops) is distinct from (x.r, x.a, x.g)")" 0 \
	"each series holds the successful runs' points from that run on, sorted by run, the failed run's not"
is "$(sql "select count(*) from kernel_series s, unnest(s.run_ids) r
	where s.pipeline_name = 'noise-cap' and r = $((first + 49))")" 0 "the failed run is in no series"

new_noise() { # new_noise LOOKBACK
	echo "select r.id, x.* from runs r, rl_kernel_noise(r.id, $1) x where r.pipeline_name = 'noise-cap'"
}
old_noise() { # old_noise LOOKBACK: 011's SQL, on the same runs
	echo "$(noise_011_sql "$1") where r.pipeline_name = 'noise-cap'"
}
# covered LOOKBACK: the runs whose window starts at or after $hundredth
covered() {
	sql "select count(*) from runs r where r.pipeline_name = 'noise-cap' and (
		select min(e.id) from (select b.id from runs b where b.pipeline_name = 'noise-cap'
			and b.id < r.id and b.state = 'succeeded' order by b.id desc limit $1) e) >= $hundredth"
}
for lookback in 10 30 150; do
	n=$(sql "select count(*) from ($(new_noise $lookback)) n where n > 1 and gflops_cv > 0")
	ok "lookback $lookback: $n noise rows with a spread" test "$n" -gt 0
	is "$(rows_differ "$(new_noise $lookback)" "$(old_noise $lookback)")" "0 0" \
		"lookback $lookback: rl_kernel_noise answers as 011's SQL on every run ($(covered $lookback) of 112 windows from the series)"
done
ok "lookback 10 and 30: most windows from the series" test "$(covered 30)" -gt 50
is "$(covered 150)" 0 "lookback 150: every window from the points"

# rl_kernel_series_add: series (run ids, AI, GFLOP/s), a run's elements, the
# cutoff; the answer worked out by hand.
series_add() { # series_add S_IDS S_AI A_IDS A_AI CUTOFF: "ids ai gflops"
	sql "select f.run_ids::text || ' ' || f.ai::text || ' ' || f.gflops::text from rl_kernel_series_add(
		'$1', '$2', '$2', '$3', '$4', '$4', $5) f"
}
is "$(series_add '{1,2,4}' '{10,20,40}' '{6}' '{60}' 2)" "{2,4,6} {20,40,60} {20,40,60}" \
	"a run after the series' last is appended, the runs before the cutoff dropped"
is "$(series_add '{1,2,6}' '{10,20,60}' '{4,4}' '{41,42}' 0)" "{1,2,4,4,6} {10,20,41,42,60} {10,20,41,42,60}" \
	"a run that ended late is sorted in, its two points in their order"
is "$(series_add '{1,1,3,7}' '{1,2,3,7}' '{5}' '{5}' 3)" "{3,5,7} {3,5,7} {3,5,7}" \
	"sorted in and cut off at once"
is "$(series_add '{}' '{}' '{3}' '{NULL}' 0)" "{3} {NULL} {NULL}" "a new series; a point without a figure keeps its place"
done_testing
