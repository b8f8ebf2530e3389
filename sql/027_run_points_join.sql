-- 027_run_points_join.sql - rl_run_points (011) finds each point's roof by
-- one join with the run's own ceilings, not by a subquery per point.
--
-- The subquery asked `ceilings` for the run's latest empirical figure of
-- the point's ceiling, newest id first.  Over the monthly partitions (010)
-- that is a merge of every partition's primary key read backwards, and a
-- partition without a figure of the run was read to its end: at 50,000
-- kernels (325,000 points) beside a fleet of 8,000 GPUs x 90 nights (13
-- million ceilings) the regressions step's history query ran for minutes
-- (docs/benchmarks.md, "A night at scale").  Now the run's empirical
-- ceilings (a few dozen rows, by the run_id index) are read once, and the
-- latest of each (ceiling, GPU) and of each ceiling on any GPU are joined.
--
-- Same contract and result as 011's: for a point with a GPU, that GPU's
-- latest figure of its bound ceiling; for a point without one, the latest
-- figure of that ceiling on any GPU of the run; null where there is none.

create or replace function rl_run_points(run_id bigint)
returns table (kernel text, level text, "precision" text, ai double precision,
	       gflops double precision, time_s double precision,
	       bound_ceiling text, roof double precision, gpu_name text,
	       gpu_uuid text)
language sql stable
set search_path = pg_catalog, public, pg_temp
as $$
	with c as materialized (
		select c.id, c.name, c.gpu_uuid, c.value from ceilings c
		where c.run_id = rl_run_points.run_id and c.method = 'empirical'
	), by_gpu as (
		select distinct on (c.name, c.gpu_uuid) c.name, c.gpu_uuid, c.value
		from c order by c.name, c.gpu_uuid, c.id desc
	), any_gpu as (
		select distinct on (c.name) c.name, c.value
		from c order by c.name, c.id desc
	)
	select distinct on (p.kernel, p.level, p.precision)
	       p.kernel, p.level, p.precision, p.ai, p.gflops, p.time_s,
	       p.bound_ceiling,
	       case when p.gpu_uuid is null then a.value else g.value end,
	       p.gpu_name, p.gpu_uuid
	from points p
	left join by_gpu g on g.name = p.bound_ceiling and g.gpu_uuid = p.gpu_uuid
	left join any_gpu a on a.name = p.bound_ceiling
	where p.run_id = rl_run_points.run_id and p.invocation = 'all'
	  and p.ai is not null and p.gflops is not null
	order by p.kernel, p.level, p.precision, p.id desc
$$;
