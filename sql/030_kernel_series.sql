-- 030_kernel_series.sql - each kernel's figures in its pipeline's latest
-- successful runs, kept when a run succeeds, so that the regressions step
-- reads one row per kernel, level and precision instead of every earlier
-- point (issue 27: regressions of 50,000 kernels in seconds).
--
-- rl_kernel_noise (011, 028) grouped the 'all' points of the `lookback`
-- earlier successful runs.  At 50,000 kernels x 30 runs that is 9.75 M
-- points, joined with the run's 325,000 keys and grouped: 16-26 s, the
-- grouping spilled to disk (docs/benchmarks.md).  kernel_series holds, per
-- (pipeline, owner, facility flag, kernel, level, precision), three
-- parallel arrays in run order: the run id, AI and GFLOP/s of each 'all'
-- point of the pipeline's successful runs.  Only successful runs are ever a
-- kernel's noise, so a run joins the series when it succeeds, in the
-- statement that ends it (daemon/runs.c), never before.
--
-- A series keeps the pipeline's latest KERNEL_SERIES_RUNS (100) successful
-- runs: each append drops the elements of older runs.
-- kernel_series_since records, per pipeline, the oldest run from which its
-- series are complete: every successful run from that id on is in every
-- series of its points (a run that succeeds after it fell out of the
-- latest 100 is not added).  rl_kernel_noise reads the series when its
-- window starts at or after that run, which is every window of a lookback
-- up to 100 judged as the run goes; any other window (a larger lookback, a
-- run judged again long after) is read from the points, as before.  Either
-- way the contract of 011 holds: the same columns, rows and bits
-- (tests/integration/regressions.t compares the two).
--
-- Like ceiling_series (014), a series outlives the points' retention
-- (010): it is history, not a copy of the rows.

create table kernel_series (
	pipeline_name  text not null,
	owner          name not null,
	facility       boolean not null,
	kernel         text collate "C" not null,
	level          text not null,
	precision      text not null,
	run_ids        bigint[] not null,            -- ascending
	ai             double precision[] not null,  -- null where a point had none
	gflops         double precision[] not null,
	primary key (pipeline_name, owner, facility, kernel, level, precision)
);

create table kernel_series_since (
	pipeline_name  text not null,
	owner          name not null,
	facility       boolean not null,
	since          bigint not null,  -- complete from this run id on
	primary key (pipeline_name, owner, facility)
);

alter table kernel_series enable row level security;
alter table kernel_series_since enable row level security;
grant select on kernel_series, kernel_series_since to roofline_users;
create policy kernel_series_visible on kernel_series for select
	to roofline_users using (owner = current_user or facility);
create policy kernel_series_since_visible on kernel_series_since for select
	to roofline_users using (owner = current_user or facility);

-- The run id from which a pipeline's series keep their elements: the
-- 100th newest successful run's, 0 while it has fewer.
create function rl_kernel_series_cutoff(pipeline text, own name, fac boolean)
returns bigint
language sql stable
begin atomic
	select coalesce(min(x.id) filter (where x.k = 100), 0)
	from (select b.id, row_number() over (order by b.id desc) as k
	      from runs b
	      where b.pipeline_name = pipeline and b.owner = own
		and b.facility = fac and b.state = 'succeeded'
	      order by b.id desc limit 100) x;
end;

-- A series (the first three arrays) with a run's elements (the next three)
-- added in run order, less the elements of runs before `cutoff`.  A run
-- after the series' last is appended (a binary search finds the cutoff);
-- one that ended out of order is sorted in.
create function rl_kernel_series_add(
	s_run_ids bigint[], s_ai double precision[], s_gflops double precision[],
	a_run_ids bigint[], a_ai double precision[], a_gflops double precision[],
	cutoff bigint)
returns table (run_ids bigint[], ai double precision[], gflops double precision[])
language sql immutable
begin atomic
	select s_run_ids[width_bucket(cutoff - 1, s_run_ids) + 1:] || a_run_ids,
	       s_ai[width_bucket(cutoff - 1, s_run_ids) + 1:] || a_ai,
	       s_gflops[width_bucket(cutoff - 1, s_run_ids) + 1:] || a_gflops
	where (cardinality(s_run_ids) = 0
	       or a_run_ids[1] > s_run_ids[cardinality(s_run_ids)]) is true
	union all
	select coalesce(array_agg(u.r order by u.r, u.i), '{}'),
	       coalesce(array_agg(u.a order by u.r, u.i), '{}'),
	       coalesce(array_agg(u.g order by u.r, u.i), '{}')
	from unnest(s_run_ids || a_run_ids, s_ai || a_ai, s_gflops || a_gflops)
	     with ordinality as u(r, a, g, i)
	where u.r >= cutoff
	-- (in HAVING: an aggregate without GROUP BY makes a row of nothing)
	having (cardinality(s_run_ids) = 0
		or a_run_ids[1] > s_run_ids[cardinality(s_run_ids)]) is not true;
end;

-- A run that has just succeeded, added to its pipeline's series.
create function rl_kernel_series_add_run(run bigint) returns void
language plpgsql
set search_path = pg_catalog, public, pg_temp
as $$
declare
	r      runs%rowtype;
	cutoff bigint;
begin
	select * into r from runs where id = run;
	cutoff := rl_kernel_series_cutoff(r.pipeline_name, r.owner, r.facility);
	insert into kernel_series_since as k values
		(r.pipeline_name, r.owner, r.facility, cutoff)
	on conflict (pipeline_name, owner, facility) do update
	set since = greatest(k.since, excluded.since);
	if run < cutoff then
		return; -- it fell out of the latest 100 before it ended
	end if;
	insert into kernel_series as s (pipeline_name, owner, facility, kernel,
		level, precision, run_ids, ai, gflops)
	select r.pipeline_name, r.owner, r.facility, p.kernel, p.level,
	       p.precision, array_agg(p.run_id order by p.id),
	       array_agg(p.ai order by p.id), array_agg(p.gflops order by p.id)
	from points p
	where p.run_id = run and p.invocation = 'all'
	group by p.kernel, p.level, p.precision
	on conflict (pipeline_name, owner, facility, kernel, level, precision)
	do update set (run_ids, ai, gflops) = (
		select * from rl_kernel_series_add(s.run_ids, s.ai, s.gflops,
			excluded.run_ids, excluded.ai, excluded.gflops, cutoff));
end
$$;

create function runs_kernel_series() returns trigger
language plpgsql
set search_path = pg_catalog, public, pg_temp
as $$
begin
	perform rl_kernel_series_add_run(new.id);
	return null;
end
$$;

create trigger runs_kernel_series after update of state on runs
	for each row when (new.state = 'succeeded' and old.state <> 'succeeded')
	execute function runs_kernel_series();

-- The series of the runs that have succeeded so far: each pipeline's
-- cutoff, then its points from that run on, in one pass.
insert into kernel_series_since
select distinct r.pipeline_name, r.owner, r.facility,
       rl_kernel_series_cutoff(r.pipeline_name, r.owner, r.facility)
from runs r where r.state = 'succeeded';
insert into kernel_series
select r.pipeline_name, r.owner, r.facility, p.kernel, p.level, p.precision,
       array_agg(p.run_id order by p.run_id, p.id),
       array_agg(p.ai order by p.run_id, p.id),
       array_agg(p.gflops order by p.run_id, p.id)
from points p
join runs r on r.id = p.run_id
join kernel_series_since k on k.pipeline_name = r.pipeline_name
	and k.owner = r.owner and k.facility = r.facility
where r.state = 'succeeded' and p.invocation = 'all' and p.run_id >= k.since
group by r.pipeline_name, r.owner, r.facility, p.kernel, p.level, p.precision;
analyze kernel_series, kernel_series_since;

-- 028's function, reading the series when they cover its window.  The
-- run's 325,000 keys are hashed: work_mem is set for the call so that
-- the hash stays in memory (4 MB, the default, spilled it to disk in 8
-- batches: 1.8 s against 2.7 s at 50,000 kernels).
create or replace function rl_kernel_noise(run_id bigint, lookback integer)
returns table (kernel text, level text, "precision" text, n bigint,
	       ai_cv double precision, gflops_cv double precision)
language sql stable
set search_path = pg_catalog, public, pg_temp
set work_mem = '64MB'
as $$
	with me as materialized (
		select r.pipeline_name, r.id, r.owner, r.facility
		from runs r where r.id = rl_kernel_noise.run_id
	), earlier as materialized (
		select b.id from runs b, me
		where b.pipeline_name = me.pipeline_name and b.id < me.id
		  and b.owner = me.owner and b.facility = me.facility
		  and b.state = 'succeeded'
		order by b.id desc limit rl_kernel_noise.lookback
	), w as materialized (
		-- the window: every successful run from lo on, before me; covered
		-- when the series are complete from lo on
		select min(e.id) as lo,
		       coalesce(min(e.id) >= (select k.since from kernel_series_since k, me
					      where k.pipeline_name = me.pipeline_name
						and k.owner = me.owner
						and k.facility = me.facility), false) as covered
		from earlier e
	), from_series as (
		select s.kernel, s.level, s.precision, (b.hi - b.lo)::bigint as n,
		       rl_median_mad(s.ai[b.lo + 1:b.hi]) as ai,
		       rl_median_mad(s.gflops[b.lo + 1:b.hi]) as gflops
		from me, w, kernel_series s,
		lateral (
			select width_bucket(w.lo - 1, s.run_ids) as lo,
			       width_bucket(me.id - 1, s.run_ids) as hi
			offset 0
		) b
		where w.covered and s.pipeline_name = me.pipeline_name
		  and s.owner = me.owner and s.facility = me.facility
		  and exists (select 1 from points q
			      where q.run_id = rl_kernel_noise.run_id
				and q.kernel = s.kernel and q.level = s.level
				and q.precision = s.precision)
		  and b.hi > b.lo
	), from_points as (
		select p.kernel, p.level, p.precision, count(*) as n,
		       rl_median_mad_agg(p.ai) as ai, rl_median_mad_agg(p.gflops) as gflops
		from points p
		where not (select w.covered from w)
		  and p.run_id in (select e.id from earlier e) and p.invocation = 'all'
		  and (p.kernel, p.level, p.precision) in
		      (select q.kernel, q.level, q.precision from points q
		       where q.run_id = rl_kernel_noise.run_id)
		group by p.kernel, p.level, p.precision
	), g as (
		select * from from_series union all select * from from_points
	)
	select g.kernel, g.level, g.precision, g.n,
	       coalesce(1.4826 * g.ai[2] / nullif(g.ai[1], 0), 0),
	       coalesce(1.4826 * g.gflops[2] / nullif(g.gflops[1], 0), 0)
	from g
$$;
