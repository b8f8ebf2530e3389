-- 017_kernel_points.sql - each kernel's aggregate point per run, step, GPU
-- and precision, kept at ingest, so that a kernel's history reads one row
-- per answer row instead of grouping three points into it (issue 15;
-- docs/history.md has the figures, over 3 years of 500 GPUs).
--
-- roofline_points (015) grouped `points` at every query: the primary
-- precision's 'all' points of one (run, step, GPU, kernel, precision,
-- time), one per level, made one row.  "A kernel's GFLOP/s over 30 nights on
-- H100 nodes" (docs/sql.md) read 36,000 points for its 12,000 rows, grouped
-- them and sorted them: 55 ms, 88 ms through row-level security, where the
-- grouping was planned as a sort that spilled to disk.  kernel_points holds
-- those groups: one row each, with the same columns as the view's
-- aggregates, and roofline_points (so kernel_trend) reads it instead.  The
-- views' rows and columns are unchanged.
--
-- Kept by a statement-level trigger on `points`: every insert's primary
-- 'all' points are grouped as the view grouped them and merged into their
-- row (insert, or on conflict each column the greater of the stored value
-- and the new one: max() over the points of a group, in any number of
-- statements; greatest() ignores NULLs as max() does).  It runs in the
-- ingest transaction, so the row is there with its points.  Points are
-- written once: nothing in rooflined updates or deletes one; they leave with
-- their step (the foreign key's cascade, which takes the step's
-- kernel_points rows too) or with their month's partition (the retention:
-- kernel_points is a history table with the retention of `points`,
-- daemon/partitions.c).  A point updated or deleted by hand is not
-- reflected here.
--
-- Partitioned by month on `at` like points, so a window on `at` prunes
-- months here as it did there.  Its monthly aggregates are points_monthly,
-- rolled up from points: rolling up a kernel_points month only seals it.

create table kernel_points (
	run_id            bigint not null,
	step              bigint not null,
	owner             text not null,     -- runs.owner (as text: 64 bytes less)
	facility          boolean not null,  -- runs.facility
	node              text not null,
	gpu_name          text,
	gpu_uuid          text,
	kernel            text collate "C" not null,
	precision         text not null,
	at                timestamptz not null,
	ai_l1             double precision,  -- max(ai) of the 'l1' points
	ai_l2             double precision,
	ai_dram           double precision,
	gflops            double precision,  -- the others: max() over the group
	time_s            double precision,
	invocations       integer,
	bound             text,              -- points.bound_level
	bound_ceiling     text,
	verdict           text,
	pct_of_roof       double precision,  -- points.pct_of_bound
	alpha             double precision,
	tensor_uncounted  text
) partition by range (at);

-- The partitions of every month points has, and those ahead.
do $$
begin
	perform rl_partition_create('kernel_points', rl_month(a.lower_bound))
	from history_partitions_attached a where a.tbl = 'points';
end
$$;

-- Every group of the points stored so far (015's grouping).
insert into kernel_points
select p.run_id, p.step, r.owner, r.facility, p.node, p.gpu_name, p.gpu_uuid,
       p.kernel, p.precision, p.at,
       max(p.ai) filter (where p.level = 'l1'), max(p.ai) filter (where p.level = 'l2'),
       max(p.ai) filter (where p.level = 'dram'), max(p.gflops), max(p.time_s),
       max(p.invocations), max(p.bound_level), max(p.bound_ceiling), max(p.verdict),
       max(p.pct_of_bound), max(p.alpha), max(p.tensor_uncounted)
from points p join runs r on r.id = p.run_id
where p.invocation = 'all' and p.is_primary
group by p.run_id, p.step, r.owner, r.facility, p.node, p.gpu_name, p.gpu_uuid,
         p.kernel, p.precision, p.at;

-- One row per group: the key of the merge (NULL GPU names and UUIDs are
-- one group, as in the view's GROUP BY).  Leads with step for the foreign
-- key's cascade.
create unique index kernel_points_group_idx on kernel_points
	(step, run_id, kernel, precision, node, gpu_uuid, gpu_name, at) nulls not distinct;
-- A kernel's history (docs/sql.md; `roofline history` reads it newest
-- first), a run's rows (016's points_run_idx: a window on `at` narrows a
-- run found in the query), a kernel's history on one node (`roofline
-- history --node`, newest first).
create index kernel_points_kernel_idx on kernel_points (kernel, at);
create index kernel_points_run_idx on kernel_points (run_id, at);
create index kernel_points_node_idx on kernel_points (node, kernel, at);
alter table kernel_points add foreign key (step) references steps (id) on delete cascade;
-- What points' partial (kernel, at) and (node, gpu_uuid, at) indexes served
-- (005: the views' history of a kernel, of a node) the two above serve now,
-- from a third of the rows; they would only cost every ingest its upkeep.
drop index points_kernel_idx, points_node_idx;

create function points_kernel_points() returns trigger
language plpgsql as $$
begin
	insert into kernel_points as k
	select p.run_id, p.step, r.owner, r.facility, p.node, p.gpu_name, p.gpu_uuid,
	       p.kernel, p.precision, p.at,
	       max(p.ai) filter (where p.level = 'l1'), max(p.ai) filter (where p.level = 'l2'),
	       max(p.ai) filter (where p.level = 'dram'), max(p.gflops), max(p.time_s),
	       max(p.invocations), max(p.bound_level), max(p.bound_ceiling), max(p.verdict),
	       max(p.pct_of_bound), max(p.alpha), max(p.tensor_uncounted)
	from new_points p join runs r on r.id = p.run_id
	where p.invocation = 'all' and p.is_primary
	group by p.run_id, p.step, r.owner, r.facility, p.node, p.gpu_name, p.gpu_uuid,
	         p.kernel, p.precision, p.at
	on conflict (step, run_id, kernel, precision, node, gpu_uuid, gpu_name, at)
	do update set
		ai_l1 = greatest(k.ai_l1, excluded.ai_l1),
		ai_l2 = greatest(k.ai_l2, excluded.ai_l2),
		ai_dram = greatest(k.ai_dram, excluded.ai_dram),
		gflops = greatest(k.gflops, excluded.gflops),
		time_s = greatest(k.time_s, excluded.time_s),
		invocations = greatest(k.invocations, excluded.invocations),
		bound = greatest(k.bound, excluded.bound),
		bound_ceiling = greatest(k.bound_ceiling, excluded.bound_ceiling),
		verdict = greatest(k.verdict, excluded.verdict),
		pct_of_roof = greatest(k.pct_of_roof, excluded.pct_of_roof),
		alpha = greatest(k.alpha, excluded.alpha),
		tensor_uncounted = greatest(k.tensor_uncounted, excluded.tensor_uncounted);
	return null;
end
$$;

create trigger points_kernel_points after insert on points
	referencing new table as new_points
	for each statement execute function points_kernel_points();

-- A history table: partitions made ahead and removed with the retention of
-- points (daemon/partitions.c); its aggregates are points_monthly's.
create function rl_rollup_kernel_points(part regclass, m date) returns void
language sql as $$ select $$;

insert into history_tables (name, time_column, rollup)
values ('kernel_points', 'at', 'rl_rollup_kernel_points');
revoke execute on function rl_rollup_kernel_points(regclass, date),
	points_kernel_points() from public;

-- Users see the rows of the runs they see: runs_visible (002) on the run's
-- owner and facility flag, copied here (a run's never change), as the
-- monthly aggregates (010) have them.  Not `exists (select 1 from runs ...)`
-- as points has it: PostgreSQL cannot estimate how many rows such a policy
-- lets through (97 of 12,000 for docs/sql.md's 30 nights of a kernel), and
-- planned a lookup of runs per row where a hash of them takes a fraction of
-- the time (docs/history.md).  The flag first: most rows are the facility's,
-- and their test then ends there.
alter table kernel_points enable row level security;
grant select on kernel_points to roofline_users;
create policy kernel_points_visible on kernel_points for select to roofline_users
	using (facility or owner = current_user);

-- The views read it; their columns, rows, grants and security_invoker as
-- 015 left them.
create or replace view roofline_points with (security_invoker = true) as
select k.run_id, r.pipeline_name, r.owner, k.node, k.gpu_name, k.gpu_uuid,
       coalesce(r.ended_at, k.at) as run_at, k.kernel, k.precision,
       k.ai_l1, k.ai_l2, k.ai_dram, k.gflops, k.time_s, k.invocations,
       k.bound, k.bound_ceiling, k.verdict, k.pct_of_roof, k.alpha,
       k.tensor_uncounted, s.step_id as step, k.at
from kernel_points k
join runs r on r.id = k.run_id
left join steps s on s.id = k.step;

analyze kernel_points;
