-- 036_ceilings_in_time_order.sql - the two indexes of `ceilings` that each
-- night's ceilings entered at random places go; one that they enter at its
-- end replaces them (issue 27: a night of 144,000 ceilings ingested in
-- seconds; docs/benchmarks.md, "Ninth pass", has the figures).
--
-- ceilings_gpu_history_idx (gpu_uuid, name, run_id, 013) and
-- ceilings_fleet_idx (name, node, gpu_uuid, measured_at, 016) are ordered
-- by GPU: a night's 144,000 ceilings of 8,000 GPUs are 144,000 insertions
-- spread over the whole of each index (1.2 GB for a month's partition at
-- that size), whose pages no cache of a database server's usual size
-- holds.  On the benchmark's machine those reads and writes of index pages
-- were a large part of a night's server time, and what made it depend
-- most on what else the machine's memory held.
--
-- What they served is served otherwise:
-- - one GPU's ceilings, night by night (`roofline plot --gpu`,
--   cli/plot_series.c): ceiling_series (014) holds them, its key leads
--   with the GPU; the GPU's fleet those nights is read by run
--   (ceilings_run_idx);
-- - one ceiling across the fleet over a time (docs/sql.md's "HBM ceiling
--   fell"): ceilings_name_time_idx (name, measured_at), which a night's
--   ceilings enter at the end of each name's range: a few pages, always
--   in memory;
-- - rl_gpu_history, rl_run_points, rl_kernel_noise, fleet_ceilings and
--   the site read ceilings by run (ceilings_run_idx), as before.
--
-- Building the new index reads every partition once: on a year of a large
-- facility's ceilings that is minutes, in the migration's transaction.

drop index if exists ceilings_gpu_history_idx;
drop index if exists ceilings_fleet_idx;
create index if not exists ceilings_name_time_idx on ceilings (name, measured_at);
