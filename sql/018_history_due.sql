-- 018_history_due.sql - the retention finds the partitions it removes once
-- a pass, not once a partition (issue 15: retention of a year under a
-- second; docs/history.md has the figures).
--
-- rl_history_retire(tbl, months, detach, 1) (016), which the daemon called
-- until it removed nothing, looked the oldest due partition up again at each
-- call: history_partitions_attached reads every partition's bounds back from
-- the catalog as text (pg_get_expr, a regular expression), 2.6 ms for the 40
-- partitions of 3 years of one table, 13 calls a table for a year.  With a
-- fifth table (kernel_points, 017) that was 170 ms of the year's second.
-- Now the daemon (daemon/partitions.c) asks rl_history_due() once per table
-- and pass, then removes each partition it lists with rl_history_remove(),
-- one partition a transaction as before.

-- tbl's attached partitions whose whole month is older than keep_months
-- months, the oldest first.
create function rl_history_due(tbl text, keep_months integer)
returns table (partition text, month date)
language sql stable as $$
	select a.partition, rl_month(a.lower_bound)
	from history_partitions_attached a
	where a.tbl = rl_history_due.tbl
	  and a.upper_bound <= now() - keep_months * interval '1 month'
	order by a.lower_bound
$$;

-- Remove partition part of tbl (drop, or with detach detach it and keep it as
-- a plain table of the same name), rolling it up first if it was not:
-- rl_history_retire's work for one partition, in the caller's transaction.
-- An error when part is not an attached partition of tbl (a name the list
-- gave that another session removed meanwhile).
create function rl_history_remove(tbl text, part text, detach boolean)
returns table (partition text, month date, rows bigint, action text)
language plpgsql as $$
declare
	p record;
begin
	perform set_config('lock_timeout', '5s', true);
	select a.partition, a.rel, a.lower_bound into p
	from history_partitions_attached a
	where a.tbl = rl_history_remove.tbl and a.partition = part;
	if not found then
		raise exception '% is not an attached partition of %', part, tbl;
	end if;
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
end
$$;

-- 016's function, on the two above: at most max_partitions (null: all) of
-- the due partitions, the oldest first, in the caller's transaction.
create or replace function rl_history_retire(tbl text, keep_months integer,
                                             detach boolean, max_partitions integer)
returns table (partition text, month date, rows bigint, action text)
language plpgsql as $$
declare
	d record;
begin
	for d in select * from rl_history_due(tbl, keep_months) limit max_partitions loop
		return query select * from rl_history_remove(tbl, d.partition, detach);
	end loop;
end
$$;

revoke execute on function rl_history_due(text, integer),
	rl_history_remove(text, text, boolean) from public;
