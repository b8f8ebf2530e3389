-- 028_robust_stats.sql - the median and the median absolute deviation of
-- each GPU's and each kernel's history in C (the server extension
-- rooflined_stats, pgext/), not in two ordered-set aggregates apiece
-- (issue 27: the fleet step over 8,000 GPUs in seconds).
--
-- percentile_cont(0.5) sets up a sort for every group it is asked about:
-- rl_gpu_history (014) asked twice per GPU and ceiling, 144,000 series at
-- 8,000 GPUs: the query was 9.2 s of the fleet step's 11.9 s, and at 1,000
-- GPUs the same query without the two aggregates took 45 ms of its 1.1 s
-- (docs/benchmarks.md);
-- rl_kernel_noise (011) sorted every earlier point of the run's kernels by
-- kernel name twice, and joined the two passes.  rl_median_mad(float8[])
-- and the aggregate rl_median_mad_agg(float8) give {median, MAD} in one
-- call, the same bits as percentile_cont (pgext/robust.h; tests/integration/
-- robust-stats.t compares them with the SQL they replace).  Both functions
-- keep their contracts (011): the same columns, rows and values.
--
-- The extension is trusted: the database's owner (the daemon's role)
-- creates it, and a superuser only installs its files on the database's
-- host (the package postgresql-15-rooflined, docs/install.md).  Its
-- functions are C, owned by the bootstrap superuser, and resolve no names.

do $$
begin
	if not exists (select 1 from pg_available_extensions
		       where name = 'rooflined_stats') then
		-- all in the message: the daemon logs the message alone
		raise exception 'the PostgreSQL server has no extension '
			'rooflined_stats: install the package postgresql-15-rooflined '
			'on the database''s host (docs/install.md), then start '
			'rooflined again';
	end if;
end
$$;
create extension if not exists rooflined_stats;

-- 014's query, the median and the deviation from one call on the window
-- (in a materialized CTE, so that the call is made once per series, not
-- once per column that reads it).
create or replace function rl_gpu_history(run_id bigint, nights integer)
returns table (gpu_uuid text, name text, n bigint, median double precision,
	       sd double precision, last_value double precision,
	       last_driver text, last_night date)
language sql stable
set search_path = pg_catalog, public, pg_temp
as $$
	with me as materialized (
		select r.pipeline_name, r.night, r.owner, r.facility
		from runs r where r.id = rl_gpu_history.run_id
	), gpus as materialized (
		select distinct c.gpu_uuid from ceilings c
		where c.run_id = rl_gpu_history.run_id and c.method = 'empirical'
	), h as materialized (
		select s.gpu_uuid, s.name, (w.hi - w.lo)::bigint as n,
		       rl_median_mad(s.vals[w.lo + 1:w.hi]) as mm,
		       s.vals[w.hi] as last_value, s.drivers[w.hi] as last_driver,
		       s.nights[w.hi] as last_night
		from me, ceiling_series s,
		lateral (
			select width_bucket(me.night - 1, s.nights) as hi,
			       width_bucket(me.night - rl_gpu_history.nights - 1,
					    s.nights) as lo
		) w
		where s.pipeline_name = me.pipeline_name and s.owner = me.owner
		  and s.facility = me.facility
		  and s.gpu_uuid in (select g.gpu_uuid from gpus g) and w.hi > w.lo
	)
	select h.gpu_uuid, h.name, h.n, h.mm[1], 1.4826 * h.mm[2], h.last_value,
	       h.last_driver, h.last_night
	from h
	order by 1, 2
$$;

-- 011's query, one pass over the earlier points: both statistics of both
-- figures per kernel, level and precision from the aggregate.
create or replace function rl_kernel_noise(run_id bigint, lookback integer)
returns table (kernel text, level text, "precision" text, n bigint,
	       ai_cv double precision, gflops_cv double precision)
language sql stable
set search_path = pg_catalog, public, pg_temp
as $$
	with me as (
		select r.pipeline_name, r.id, r.owner, r.facility
		from runs r where r.id = rl_kernel_noise.run_id
	), earlier as (
		select b.id from runs b, me
		where b.pipeline_name = me.pipeline_name and b.id < me.id
		  and b.owner = me.owner and b.facility = me.facility
		  and b.state = 'succeeded'
		order by b.id desc limit rl_kernel_noise.lookback
	), g as (
		select p.kernel, p.level, p.precision, count(*) as n,
		       rl_median_mad_agg(p.ai) as ai, rl_median_mad_agg(p.gflops) as gflops
		from points p
		where p.run_id in (select e.id from earlier e) and p.invocation = 'all'
		  and (p.kernel, p.level, p.precision) in
		      (select q.kernel, q.level, q.precision from points q
		       where q.run_id = rl_kernel_noise.run_id)
		group by p.kernel, p.level, p.precision
	)
	select g.kernel, g.level, g.precision, g.n,
	       coalesce(1.4826 * g.ai[2] / nullif(g.ai[1], 0), 0),
	       coalesce(1.4826 * g.gflops[2] / nullif(g.gflops[1], 0), 0)
	from g
$$;
