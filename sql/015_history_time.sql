-- 014_history_time.sql - history queries that read only the months they ask
-- for (issue 15: history queries over years; docs/history.md has the
-- figures).
--
-- roofline_points and kernel_trend get a last column, `at`: when the
-- points were stored (points.at, the partition key; now() of the ingest
-- transaction, which stores a whole step attempt at once).  run_at (the
-- run's end, else its newest point) is computed after the join with runs,
-- so a condition on it can only be applied once every point of the kernel,
-- of every month, has been read and grouped; a condition on `at` reaches
-- points itself: the months outside it are pruned, and points (kernel, at)
-- is read as a range.
--
-- The view now groups the points first, by (run_id, step, node, gpu_name,
-- gpu_uuid, kernel, precision, at), and joins runs and steps to those rows:
-- the same groups as before (runs and steps are looked up by their keys, so
-- their columns added nothing to the grouping), one more key, and a join
-- with runs of one row per kernel and GPU instead of one per point.  A
-- condition on any grouping column, `at` included, goes below the grouping.
--
-- Rows and the values in the columns they had are unchanged for every row
-- the daemon stores: the points of one row are those of one step, stored in
-- one transaction, so they share `at`.  Points of one kernel, step and GPU
-- stored at different times (written by hand) now make one row per time,
-- where 009 made one.  run_at keeps its meaning: within a row
-- coalesce(ended_at, at) is 009's coalesce(ended_at, max(at)).
--
-- steps is joined `left`: a point's step always exists (points.step is not
-- null, a foreign key to steps), and a user sees a step exactly when they see
-- its run (002's steps_visible), as for the point (points_visible), so the
-- rows are those of the inner join; left, PostgreSQL leaves the join out of
-- the queries that do not use `step` (kernel_trend), instead of reading every
-- step.  runs stays an inner join: it is what row-level security filters a
-- user's rows by, as before.
--
-- create or replace keeps the grants, and security_invoker: row-level
-- security applies to whoever queries, as before.

create or replace view roofline_points with (security_invoker = true) as
select p.run_id, r.pipeline_name, r.owner, p.node, p.gpu_name, p.gpu_uuid,
       coalesce(r.ended_at, p.at) as run_at, p.kernel, p.precision,
       p.ai_l1, p.ai_l2, p.ai_dram, p.gflops, p.time_s, p.invocations,
       p.bound, p.bound_ceiling, p.verdict, p.pct_of_roof, p.alpha,
       p.tensor_uncounted, s.step_id as step, p.at
from (select run_id, step, node, gpu_name, gpu_uuid, kernel, precision, at,
             max(ai) filter (where level = 'l1') as ai_l1,
             max(ai) filter (where level = 'l2') as ai_l2,
             max(ai) filter (where level = 'dram') as ai_dram,
             max(gflops) as gflops, max(time_s) as time_s,
             max(invocations) as invocations,
             max(bound_level) as bound, max(bound_ceiling) as bound_ceiling,
             max(verdict) as verdict, max(pct_of_bound) as pct_of_roof,
             max(alpha) as alpha, max(tensor_uncounted) as tensor_uncounted
      from points
      where invocation = 'all' and is_primary
      group by run_id, step, node, gpu_name, gpu_uuid, kernel, precision, at) p
join runs r on r.id = p.run_id
left join steps s on s.id = p.step;

create or replace view kernel_trend with (security_invoker = true) as
select kernel, run_at, node, gpu_name, gflops, ai_l1, ai_l2, ai_dram,
       pct_of_roof, verdict, run_id, pipeline_name, at
from roofline_points;
