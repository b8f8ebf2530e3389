-- 013_findings_bench.sql - the findings' history queries at a facility's
-- scale: 1,000 GPUs x 90 nights of ceilings, 500 kernels x 30 runs of
-- points (bench/findings-bench.sh, docs/findings-bench.md).  Same results
-- as 010's functions; only the plans change.

-- A run's ceilings (rl_gpu_history's GPUs of tonight, and rl_run_points'
-- roof of each point: run and ceiling name).  Without it both scanned the
-- whole table, or ANDed bitmaps of every run's figures for one name.
create index ceilings_run_idx on ceilings (run_id, name);

-- One GPU's measured figures, name by name, read from the index alone
-- (value and driver included): rl_gpu_history reads 90 nights of 18
-- ceilings of a GPU without touching the table's wide rows.
create index ceilings_gpu_history_idx on ceilings (gpu_uuid, name, run_id)
	include (value, driver) where method = 'empirical';

-- A GPU's own history, as in 010, computed GPU by GPU: each GPU's rows come
-- from ceilings_gpu_history_idx and are sorted and aggregated in memory,
-- instead of one sort of every GPU's every night (1.6 million rows, on disk
-- with the default work_mem) and a second pass for the medians.  The
-- earlier runs in the window are found once (w).  A GPU's last figure is
-- the one of its latest night: max() over (night, value) pairs, the nights
-- being distinct after the distinct on.
create or replace function rl_gpu_history(run_id bigint, nights integer)
returns table (gpu_uuid text, name text, n bigint, median double precision,
	       sd double precision, last_value double precision,
	       last_driver text, last_night date)
language sql stable as $$
	with me as (
		select r.pipeline_name, r.night, r.owner, r.facility
		from runs r where r.id = rl_gpu_history.run_id
	), w as materialized (
		select r.id, r.night from runs r, me
		where r.pipeline_name = me.pipeline_name
		  and r.owner = me.owner and r.facility = me.facility
		  and r.night < me.night
		  and r.night >= me.night - nights
	), gpus as materialized (
		select distinct c.gpu_uuid from ceilings c
		where c.run_id = rl_gpu_history.run_id and c.method = 'empirical'
	)
	select g.gpu_uuid, h.* from gpus g, lateral (
		with e as materialized (
			select distinct on (c.name, w.night)
			       c.name, c.value, c.driver, w.night
			from ceilings c join w on w.id = c.run_id
			where c.gpu_uuid = g.gpu_uuid and c.method = 'empirical'
			order by c.name, w.night, w.id desc
		), mid as (
			select e.name,
			       percentile_cont(0.5) within group (order by e.value) as median
			from e group by e.name
		)
		select e.name, count(*), m.median,
		       1.4826 * percentile_cont(0.5) within group (order by abs(e.value - m.median)),
		       (max(array[e.night - date '2000-01-01', e.value]))[2],
		       (max(array[to_char(e.night, 'YYYYMMDD'), e.driver]))[2],
		       max(e.night)
		from e join mid m on m.name = e.name
		group by e.name, m.median
	) h
	order by 1, 2
$$;

-- The baseline run, as in 010.  The test for points on the same GPU model
-- is a subquery per candidate run (newest first: 30 index probes), not a
-- semi join, which PostgreSQL planned as a hash of every point of every
-- run.
create or replace function rl_baseline_run(run_id bigint) returns bigint
language sql stable as $$
	select b.id from runs b, runs me
	where me.id = run_id and b.pipeline_name = me.pipeline_name
	  and b.owner = me.owner and b.facility = me.facility
	  and b.id < me.id and b.state = 'succeeded'
	  and coalesce((select true from points pb where pb.run_id = b.id
	                and pb.invocation = 'all'
	                and pb.gpu_name in (select pm.gpu_name from points pm
	                                    where pm.run_id = me.id)
	                limit 1), false)
	order by b.night desc, b.id desc limit 1
$$;
