-- 035_step_records_lz4.sql - a record's fields compressed with lz4, not
-- pglz (issue 27: a night of 144,000 ceilings ingested in seconds; the
-- figures are in docs/benchmarks.md, "Eighth pass").
--
-- A record's fields over PostgreSQL's 2 kB threshold are compressed when
-- it is stored: ert's `sweep` records (one per series, its points as lists,
-- 2.5 kB of text; 16,000 of a night's 160,000 records at 8,000 GPUs) are.
-- pglz_compress was 4 % of the server's CPU in a profile of a night's
-- ingest at 8,000 GPUs; lz4 compresses several times faster (029 chose it
-- for the series for the same reason).  Measured side by side at 8,000
-- GPUs, the night's 2,000 attempts in one transaction rolled back, eight
-- alternated rounds: median 16.3 s (14.3-16.9) against 17.1 s (15.7-18.1),
-- lower in seven of the eight.  (At 1,000 GPUs, in the fifth pass, the
-- difference was within that machine's noise.)
--
-- A partitioned table's setting is what its new partitions take (010's
-- rl_partition_create); the partitions that exist are set one by one.
-- Records already stored keep pglz; a server built without lz4 keeps pglz
-- and says so.

do $$
declare
	part regclass;
begin
	alter table step_records alter column fields set compression lz4;
	for part in select inhrelid::regclass from pg_inherits
		    where inhparent = 'step_records'::regclass
	loop
		execute format('alter table %s alter column fields set compression lz4',
			       part);
	end loop;
exception when feature_not_supported then
	raise notice 'this PostgreSQL has no lz4: step_records keeps pglz, '
		'and a night''s ingest is slower (docs/benchmarks.md)';
end
$$;
