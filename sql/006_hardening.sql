-- 006_hardening.sql - one daemon per database, wake-ups, and what Slurm says
-- about a step's node.

-- One rooflined per database: the daemon holds the session advisory lock
-- (1919905638, 1) ("roof", 1) for its whole life (daemon/engine.c,
-- ENGINE_LOCK_KEYS).  Anyone may ask which backend holds it: `roofline
-- submit --wait` uses this to say at once that nobody will run the run.
create function rooflined_daemon_pid() returns integer
	language sql stable
	as $$ select pid from pg_locks where locktype = 'advisory'
	      and classid = 1919905638 and objid = 1 and objsubid = 2
	      and granted limit 1 $$;
grant execute on function rooflined_daemon_pid() to public;

-- New runs and cancellations wake the daemon at once (it LISTENs on
-- 'rooflined') instead of at its next poll.
create function runs_notify() returns trigger
	language plpgsql
	as $$ begin perform pg_notify('rooflined', ''); return null; end $$;
create trigger runs_notify_insert after insert on runs
	for each statement execute function runs_notify();
create trigger runs_notify_cancel after update of cancel_requested on runs
	for each statement execute function runs_notify();

-- What Slurm says of a step's job while it waits or after it failed: the
-- pending reason ("Nodes required for job are DOWN, DRAINED ...") or the
-- node's state and reason.  Shown by `roofline status`.
alter table steps add column slurm_reason text;

-- How long an attempt may stay pending before it is cancelled and counted
-- as failed (seconds; the step's `pending_limit`, else the daemon's).
alter table steps add column pending_limit_s integer;

-- Nodes a retry must avoid: those where an earlier attempt died with its
-- node (NODE_FAIL, node down).  Slurm's exc_nodes, comma-separated.
alter table steps add column avoid_nodes text not null default '';

-- When the step entered its current state: pending and timeout limits count
-- from here (set by every state change, daemon/engine.c).
alter table steps add column state_since timestamptz not null default now();

-- The nodes of a `nodes: each` run's partition that it did not use, with
-- what Slurm said of them when the run started (issue 10: a skipped node is
-- a fact, not an absence).  Users see those of the runs they see.
create table run_nodes (
	run_id      bigint not null references runs (id) on delete cascade,
	node        text not null,
	used        boolean not null,
	slurm_state text not null,               -- "IDLE", "DRAINED", "DOWN*"
	reason      text not null default '',    -- Slurm's, or why not used
	primary key (run_id, node)
);
alter table run_nodes enable row level security;
grant select on run_nodes to roofline_users;
create policy run_nodes_visible on run_nodes for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));

-- A step that needs a fanned-out step (one instance per node) runs over the
-- instances that succeeded, when at least this fraction of each such step's
-- instances did (and at least one); null: at least one.
alter table steps add column min_success real
	check (min_success > 0 and min_success <= 1);

-- How many of the instances a waiting step needs still hold it back: a
-- need releases it by succeeding, or, for a fan-in (a step without a node
-- needing a per-node instance), by ending at all.  Kept by the trigger
-- below on every state change, whoever makes it, so that finding the ready
-- steps costs one index scan however long the chain (daemon/engine.c).
alter table steps add column waiting_on integer not null default 0;
update steps s set waiting_on = (select count(*) from steps n
	where n.id = any(s.needs) and not (n.state = 'succeeded' or
	(n.state in ('failed', 'skipped', 'cancelled') and n.node <> ''
	 and s.node = '')))
	where s.state = 'waiting';

create function steps_release_dependents() returns trigger
	language plpgsql
	as $$ begin
		update steps d set waiting_on = d.waiting_on - 1
		 where d.run_id = new.run_id and new.id = any(d.needs)
		   and d.state = 'waiting'
		   and (new.state = 'succeeded' or (new.node <> '' and d.node = ''));
		return null;
	end $$;
create trigger steps_release after update of state on steps for each row
	when (old.state is distinct from new.state and new.state in
	      ('succeeded', 'failed', 'skipped', 'cancelled'))
	execute function steps_release_dependents();
