-- 001_core.sql - pipelines, runs, steps and their history.
--
-- The daemon (role rooflined, owner of every table) is the only writer except
-- for the two things users may do through row-level security (002_users.sql):
-- queue a run and ask for its cancellation.

create table pipelines (
	id            bigserial primary key,
	name          text not null,
	source        text not null,           -- file it was loaded from
	yaml          text not null,
	schedule      text,                     -- cron, 5 fields; null: none
	next_fire_at  timestamptz,              -- next scheduled slot
	loaded_at     timestamptz not null default now(),
	active        boolean not null default true,
	unique (name)
);

create table runs (
	id                bigserial primary key,
	pipeline_name     text not null,
	pipeline_id       bigint references pipelines (id),
	owner             name not null default current_user,
	facility          boolean not null default false,
	yaml              text not null,
	trigger           text not null default 'submit'
	                  check (trigger in ('submit', 'schedule')),
	state             text not null default 'queued'
	                  check (state in ('queued', 'running', 'succeeded',
	                                   'failed', 'cancelled')),
	cancel_requested  boolean not null default false,
	spool_dir         text,
	submitted_at      timestamptz not null default now(),
	started_at        timestamptz,
	ended_at          timestamptz,
	error             text
);
create index runs_active_idx on runs (state) where state in ('queued', 'running');
create index runs_owner_idx on runs (owner, submitted_at);

-- One row per step instance: a step of a `nodes: each` pipeline has one per
-- node (node <> ''); `attempt` counts Slurm submissions / daemon launches.
create table steps (
	id            bigserial primary key,
	run_id        bigint not null references runs (id) on delete cascade,
	step_id       text not null,
	node          text not null default '',
	plugin        text not null,
	on_daemon     boolean not null,
	needs         bigint[] not null default '{}',  -- steps.id it waits for
	state         text not null default 'waiting'
	              check (state in ('waiting', 'retry_wait', 'submitting',
	                               'pending', 'running', 'succeeded',
	                               'failed', 'skipped', 'cancelled')),
	attempt       integer not null default 0,
	retries       integer not null default 0,
	timeout_s     integer,
	next_try_at   timestamptz,
	slurm_job_id  bigint,
	daemon_pid    integer,
	exec_node     text,
	started_at    timestamptz,
	ended_at      timestamptz,
	error         text,
	unique (run_id, step_id, node)
);
create index steps_active_idx on steps (state)
	where state in ('waiting', 'retry_wait', 'submitting', 'pending', 'running');
create index steps_run_idx on steps (run_id);

-- Every state change of every step, written by the one function that changes
-- it (daemon/engine.c: step_set_state).
create table step_events (
	id        bigserial primary key,
	step      bigint not null references steps (id) on delete cascade,
	at        timestamptz not null default clock_timestamp(),
	state     text not null,
	attempt   integer not null,
	detail    text
);
create index step_events_step_idx on step_events (step);

-- What steps emitted (common/records.h), one row per record.  The primary key
-- makes ingest idempotent: a step attempt is ingested in one transaction, and
-- an attempt already ingested cannot be ingested again.
create table step_records (
	step      bigint not null references steps (id) on delete cascade,
	attempt   integer not null,
	seq       integer not null,
	run_id    bigint not null,
	kind      text not null,
	node      text not null,
	fields    jsonb not null,
	primary key (step, attempt, seq)
);
create index step_records_run_kind_idx on step_records (run_id, kind);

-- The options a step instance is launched with, as `option` records
-- (common/records.h), fixed when the run starts.
alter table steps add column options text not null default '';
