-- 016_history_plans.sql - plans and retention over years of history (issue
-- 15; docs/history.md has the figures, measured over 3 years of 500 GPUs).
--
-- 1. The fleet's ceiling in GPU order.  "Whose HBM ceiling fell"
--    (docs/sql.md) takes a month of one ceiling for every GPU and groups it
--    by (node, gpu_uuid): through ceilings_name_idx (name, measured_at) it
--    had to sort the month's rows by node and gpu_uuid, and that sort, of
--    text under the database's collation, took 17.5 of its 39.6 ms (plan
--    with timing on).  This index
--    hands them over in that order, and holds what the query reads of a
--    ceiling (value, method, and run_id for the join with runs that
--    row-level security filters by), so the partitions' heap is not read.
--    measured_at is the last key: the month's rows of one ceiling are
--    read whole, and the partitions outside the window pruned.
create index ceilings_fleet_idx on ceilings (name, node, gpu_uuid, measured_at)
	include (value, method, run_id);

-- 2. A run's points by run and time.  A query for runs it looks up first
--    (`run_id = any (array(select ...))`, `= (select ...)`) cannot tell
--    PostgreSQL which month holds them, so it plans for a run's points in
--    every month: over 3 years, 40 index lookups of some 6,000 rows each,
--    and a plan with parallel workers, whose start (each opens every
--    partition) took 100 ms for 250 rows.  With `at` in the index, a window
--    on it (docs/sql.md: between the runs' submission and 'infinity') is
--    part of each lookup, PostgreSQL counts on few rows and plans it
--    serially, and the months before the window are not read.  Same size as
--    (run_id) alone: the points of one step share (run_id, at), and B-tree
--    deduplication keeps one key for them.  Everything (run_id) served, it
--    serves.
drop index points_run_idx;
create index points_run_idx on points (run_id, at);

-- 3. Retention one partition at a time.  rl_history_retire(tbl,
--    keep_months, detach) removed every partition due in one transaction:
--    `drop table` of a partition holds an ACCESS EXCLUSIVE lock on the
--    parent (points, ceilings ...) until commit, and the commit removes the
--    files, so the first retention of a large history locked every query of
--    the table out for as long as the file system took to free a year of
--    it.  With max_partitions, at most that many partitions (the oldest
--    first) are removed, and the daemon (daemon/partitions.c) calls it with
--    1 until it returns nothing: one transaction a partition, as safe as
--    before (a partition's rollup, if it had none yet, its removal and its
--    history_partitions row commit together).  max_partitions null: all, as
--    010's three-argument form, which now calls this one.
create function rl_history_retire(tbl text, keep_months integer, detach boolean,
                                  max_partitions integer)
returns table (partition text, month date, rows bigint, action text)
language plpgsql as $$
declare
	p record;
begin
	perform set_config('lock_timeout', '5s', true);
	for p in select a.partition, a.rel, a.lower_bound from history_partitions_attached a
	         where a.tbl = rl_history_retire.tbl
	           and a.upper_bound <= now() - keep_months * interval '1 month'
	         order by a.lower_bound
	         limit max_partitions loop
		partition := p.partition;
		month := rl_month(p.lower_bound);
		rows := (select h.rows from history_partitions h where h.partition = p.partition);
		if rows is null then
			rows := rl_history_rollup(tbl, p.rel, month);
		end if;
		if detach then
			execute format('alter table %I detach partition %s', tbl, p.rel);
			action := 'detached';
		else
			execute format('drop table %s', p.rel);
			action := 'dropped';
		end if;
		update history_partitions h set removed_at = now(), removal = action
		where h.partition = p.partition;
		return next;
	end loop;
end
$$;

create or replace function rl_history_retire(tbl text, keep_months integer, detach boolean)
returns table (partition text, month date, rows bigint, action text)
language sql as $$
	select * from rl_history_retire(tbl, keep_months, detach, null)
$$;

revoke execute on function rl_history_retire(text, integer, boolean, integer) from public;
