-- 002_users.sql - what users may do, enforced by PostgreSQL itself.
--
-- Users connect over the Unix socket with peer authentication, so their role
-- name is their operating-system user name, vouched for by the kernel.  Every
-- user role is a member of roofline_users (scripts/cluster add-user, or a
-- facility's own provisioning).  A user may queue a run (owner is forced to
-- current_user), see their own runs and the facility's, and ask for their own
-- runs' cancellation.  Nothing else: the daemon does the rest.

do $$
begin
	if not exists (select 1 from pg_roles where rolname = 'roofline_users') then
		create role roofline_users nologin;
	end if;
end
$$;

alter table runs enable row level security;
alter table steps enable row level security;
alter table step_events enable row level security;
alter table step_records enable row level security;

grant usage on schema public to roofline_users;
grant select on runs, steps, step_events, step_records, pipelines to roofline_users;
grant insert (pipeline_name, yaml) on runs to roofline_users;
grant update (cancel_requested) on runs to roofline_users;
grant usage on sequence runs_id_seq to roofline_users;

create policy runs_visible on runs for select to roofline_users
	using (owner = current_user or facility);
create policy runs_queue on runs for insert to roofline_users
	with check (owner = current_user and not facility and state = 'queued'
	            and not cancel_requested);
create policy runs_cancel on runs for update to roofline_users
	using (owner = current_user) with check (owner = current_user);

create policy steps_visible on steps for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));
create policy step_events_visible on step_events for select to roofline_users
	using (exists (select 1 from steps s where s.id = step));
create policy step_records_visible on step_records for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));
