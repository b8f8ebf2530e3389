-- 003_results.sql - typed tables for what plugins measure, filled from
-- step_records by a trigger, in the ingest transaction itself: a record that
-- does not fit (a value that is not a number, say) fails the whole ingest,
-- and nothing of the attempt is stored.

-- One row per ceiling per GPU per run: the history of a node's roofs.
create table ceilings (
	id             bigserial primary key,
	run_id         bigint not null,
	step           bigint not null references steps (id) on delete cascade,
	attempt        integer not null,
	seq            integer not null,
	node           text not null,
	gpu_index      integer,
	gpu_uuid       text,
	gpu_name       text,
	driver         text,
	cuda           text,
	cc             text,
	sm_clock_mhz   double precision,
	mem_clock_mhz  double precision,
	method         text not null check (method in ('empirical', 'theoretical')),
	name           text not null,
	kind           text not null check (kind in ('compute', 'bandwidth')),
	value          double precision not null,
	unit           text not null,
	trials         integer,
	min            double precision,
	median         double precision,
	max            double precision,
	spread_pct     double precision,
	geometry       text,
	ws_min_bytes   bigint,
	ws_max_bytes   bigint,
	measured_at    timestamptz not null default now(),
	unique (step, attempt, seq)
);
create index ceilings_history_idx on ceilings (node, gpu_uuid, name, measured_at);
create index ceilings_name_idx on ceilings (name, measured_at);

-- One row per kernel invocation profiled: every metric as collected.
create table kernel_profiles (
	id            bigserial primary key,
	run_id        bigint not null,
	step          bigint not null references steps (id) on delete cascade,
	attempt       integer not null,
	seq           integer not null,
	node          text not null,
	kernel        text not null,
	invocation    integer,
	gpu_name      text,
	cc            text,
	source        text,
	metrics       jsonb not null,
	missing       text,
	collected_at  timestamptz not null default now(),
	unique (step, attempt, seq)
);
create index kernel_profiles_kernel_idx on kernel_profiles (kernel, collected_at);
create index kernel_profiles_run_idx on kernel_profiles (run_id);

create function rl_num(fields jsonb, key text) returns double precision
language sql immutable as $$
	select nullif(fields ->> key, '')::double precision
$$;

create function step_records_route() returns trigger
language plpgsql as $$
begin
	if new.kind = 'ceiling' then
		insert into ceilings (run_id, step, attempt, seq, node, gpu_index,
			gpu_uuid, gpu_name, driver, cuda, cc, sm_clock_mhz,
			mem_clock_mhz, method, name, kind, value, unit, trials, min,
			median, max, spread_pct, geometry, ws_min_bytes, ws_max_bytes)
		values (new.run_id, new.step, new.attempt, new.seq, new.node,
			rl_num(new.fields, 'gpu_index')::integer,
			new.fields ->> 'gpu_uuid', new.fields ->> 'gpu_name',
			new.fields ->> 'driver', new.fields ->> 'cuda',
			new.fields ->> 'cc', rl_num(new.fields, 'sm_clock_mhz'),
			rl_num(new.fields, 'mem_clock_mhz'), new.fields ->> 'method',
			new.fields ->> 'name', new.fields ->> 'kind',
			rl_num(new.fields, 'value'), new.fields ->> 'unit',
			rl_num(new.fields, 'trials')::integer, rl_num(new.fields, 'min'),
			rl_num(new.fields, 'median'), rl_num(new.fields, 'max'),
			rl_num(new.fields, 'spread_pct'), new.fields ->> 'geometry',
			rl_num(new.fields, 'ws_min_bytes')::bigint,
			rl_num(new.fields, 'ws_max_bytes')::bigint);
	elsif new.kind = 'kernel' then
		insert into kernel_profiles (run_id, step, attempt, seq, node, kernel,
			invocation, gpu_name, cc, source, metrics, missing)
		values (new.run_id, new.step, new.attempt, new.seq, new.node,
			new.fields ->> 'kernel',
			rl_num(new.fields, 'invocation')::integer,
			new.fields ->> 'gpu_name', new.fields ->> 'cc',
			new.fields ->> 'source', new.fields,
			nullif(new.fields ->> 'missing', ''));
	end if;
	return new;
end
$$;

create trigger step_records_route after insert on step_records
	for each row execute function step_records_route();

alter table ceilings enable row level security;
alter table kernel_profiles enable row level security;
grant select on ceilings, kernel_profiles to roofline_users;
create policy ceilings_visible on ceilings for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));
create policy kernel_profiles_visible on kernel_profiles for select
	to roofline_users using (exists (select 1 from runs r where r.id = run_id));
