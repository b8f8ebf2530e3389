-- 037_gpu_history_bitmap.sql - each part of the fleet step's history reads
-- its run's ceilings page by page, not index entry by index entry (issue
-- 27; docs/benchmarks.md, "Ninth pass").
--
-- rl_gpu_history(run_id, nights, part, parts) (032) starts by listing the
-- run's GPUs: the distinct gpu_uuid of its 144,000 ceilings at 8,000 GPUs,
-- read through ceilings_run_idx (run_id, name).  PostgreSQL reads them in
-- that index's order, ceiling name by ceiling name, and each name's rows
-- are spread over all of the run's heap pages: 18 passes over them, 310-
-- 530 ms of a part's 790-1,040 ms, in each of the four parts.  A bitmap
-- scan of the same index reads each page once (75-98 ms).  The planner
-- cannot tell the two apart (the run's rows are contiguous, so it rates
-- the index scan cheap), so the function forbids plain index scans; its
-- other lookups (the run, the GPUs' series by ceiling_series' key) are
-- bitmap scans then, as cheap.  A later `create or replace` of the
-- function must set it again.
alter function rl_gpu_history(bigint, integer, integer, integer)
	set enable_indexscan = off;
