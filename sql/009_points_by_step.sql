-- 009_points_by_step.sql - roofline_points keeps the steps of a run apart.
--
-- A run may profile the same kernel in two steps (gpp.yaml: `nw` with FMA
-- contraction and `nw-nofma` without): grouped by run and kernel alone, the
-- view merged them, taking the larger of each column.  It now groups by the
-- analysis step too and names it in a last column, `step`.
create or replace view roofline_points with (security_invoker = true) as
select p.run_id, r.pipeline_name, r.owner, p.node, p.gpu_name, p.gpu_uuid,
       coalesce(r.ended_at, max(p.at)) as run_at, p.kernel, p.precision,
       max(p.ai) filter (where p.level = 'l1') as ai_l1,
       max(p.ai) filter (where p.level = 'l2') as ai_l2,
       max(p.ai) filter (where p.level = 'dram') as ai_dram,
       max(p.gflops) as gflops, max(p.time_s) as time_s,
       max(p.invocations) as invocations,
       max(p.bound_level) as bound, max(p.bound_ceiling) as bound_ceiling,
       max(p.verdict) as verdict, max(p.pct_of_bound) as pct_of_roof,
       max(p.alpha) as alpha,
       max(p.tensor_uncounted) as tensor_uncounted,
       s.step_id as step
from points p join runs r on r.id = p.run_id join steps s on s.id = p.step
where p.invocation = 'all' and p.is_primary
group by p.run_id, r.pipeline_name, r.owner, r.ended_at, p.node, p.gpu_name,
         p.gpu_uuid, p.kernel, p.precision, p.step, s.step_id;
