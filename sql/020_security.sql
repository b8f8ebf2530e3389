-- 020_security.sql - the database side of issue 21: users are untrusted,
-- and the daemon that runs what this schema says is root.
-- docs/security.md (the database's boundaries) says what each part holds
-- and tests/integration/security-db.t tries each attack.

-- ---- who a user is: the session's role, not the current one ----------------
-- `set role roofline_users` changes current_user to the group role, which
-- every user's runs would then share.  session_user is the role the user
-- logged in as (peer authentication: the kernel's word), which SET ROLE does
-- not change.  Every policy that named current_user names session_user from
-- here on (rewritten from the catalog, so no policy is missed), and a new
-- run's owner defaults to it.
alter table runs alter column owner set default session_user;

do $$
declare
	p    record;
	sql  text;
begin
	for p in select pol.polname, c.oid::regclass as tbl,
			pg_get_expr(pol.polqual, pol.polrelid) as qual,
			pg_get_expr(pol.polwithcheck, pol.polrelid) as chk
		 from pg_policy pol join pg_class c on c.oid = pol.polrelid
		 where c.relnamespace = 'public'::regnamespace
	loop
		if coalesce(p.qual, '') !~* '\mcurrent_user\M' and
		   coalesce(p.chk, '') !~* '\mcurrent_user\M' then
			continue;
		end if;
		sql := format('alter policy %I on %s', p.polname, p.tbl);
		if p.qual is not null then
			sql := sql || format(' using (%s)', regexp_replace(p.qual,
				'\mcurrent_user\M', 'SESSION_USER', 'gi'));
		end if;
		if p.chk is not null then
			sql := sql || format(' with check (%s)', regexp_replace(p.chk,
				'\mcurrent_user\M', 'SESSION_USER', 'gi'));
		end if;
		execute sql;
	end loop;
	if exists (select 1 from pg_policy pol join pg_class c on c.oid = pol.polrelid
		   where c.relnamespace = 'public'::regnamespace
		     and (coalesce(pg_get_expr(pol.polqual, pol.polrelid), '') ~* '\mcurrent_user\M'
		       or coalesce(pg_get_expr(pol.polwithcheck, pol.polrelid), '') ~* '\mcurrent_user\M')) then
		raise exception 'a policy still names current_user';
	end if;
end
$$;

-- Staff change the findings they see (their own and the facility's), not
-- every finding: without a USING of its own, `update findings set state =
-- 'resolved'` without a WHERE reached users' private findings too.
alter policy findings_change on findings
	using (owner = session_user or
	       (facility and pg_has_role(session_user, 'roofline_staff', 'member')))
	with check (state in ('acknowledged', 'resolved', 'new'));

-- ---- findings are the owner's: a user's run cannot fold into the facility's -
-- A finding was one row per (scope, subject, measure, pipeline name): a
-- user's run named like a facility pipeline made the row first (owner the
-- user, facility false), the facility's critical finding on the same GPU
-- then folded into it, hidden from everyone else and never notified as the
-- facility's.  The key now includes the owner and the facility flag, as the
-- histories the findings come from do (rl_gpu_history, rl_baseline_run).
drop index findings_open_idx;
create unique index findings_open_idx on findings
	(scope, subject, measure, pipeline_name, owner, facility)
	where state <> 'resolved';

create or replace function step_records_findings() returns trigger
language plpgsql as $$
declare
	f      jsonb := new.fields;
	r      runs%rowtype;
	fid    bigint;
	nnight date;
begin
	select * into r from runs where id = new.run_id;
	nnight := coalesce(nullif(f ->> 'night', '')::date, r.night);
	select id into fid from findings
	where scope = f ->> 'scope' and subject = f ->> 'subject'
	  and measure = f ->> 'measure' and pipeline_name = r.pipeline_name
	  and owner = r.owner and facility = r.facility
	  and state <> 'resolved'
	for update;
	if fid is null then
		insert into findings (scope, subject, measure, pipeline_name,
			class, severity, owner, facility, node, gpu_uuid, gpu_name,
			kernel, first_run, last_run, first_night, last_night,
			value, reference, drop_pct, threshold_pct, noise_pct,
			cause, detail)
		values (f ->> 'scope', f ->> 'subject', f ->> 'measure',
			r.pipeline_name, f ->> 'class', f ->> 'severity', r.owner,
			r.facility, nullif(f ->> 'node', ''),
			nullif(f ->> 'gpu_uuid', ''), nullif(f ->> 'gpu_name', ''),
			nullif(f ->> 'kernel', ''), new.run_id, new.run_id,
			nnight, nnight, rl_num(f, 'value'), rl_num(f, 'reference'),
			rl_num(f, 'drop_pct'), rl_num(f, 'threshold_pct'),
			rl_num(f, 'noise_pct'), nullif(f ->> 'cause', ''), f)
		returning id into fid;
	end if;
	insert into finding_nights (finding_id, night, run_id, step, value,
		reference, drop_pct)
	values (fid, nnight, new.run_id, new.step, rl_num(f, 'value'),
		rl_num(f, 'reference'), rl_num(f, 'drop_pct'))
	on conflict do nothing;
	if found then
		-- a night seen for the first time: the finding's latest figures
		update findings set
			nights = (select count(*) from finding_nights where finding_id = fid),
			last_run = case when nnight >= last_night then new.run_id else last_run end,
			last_night = greatest(last_night, nnight),
			first_night = least(first_night, nnight),
			value = case when nnight >= last_night then rl_num(f, 'value') else value end,
			reference = case when nnight >= last_night then rl_num(f, 'reference') else reference end,
			drop_pct = case when nnight >= last_night then rl_num(f, 'drop_pct') else drop_pct end,
			severity = case when nnight >= last_night then f ->> 'severity' else severity end,
			cause = case when nnight >= last_night then coalesce(nullif(f ->> 'cause', ''), cause) else cause end
		where id = fid;
	end if;
	return new;
end
$$;

-- ---- what a user can make the root daemon load ------------------------------
-- A run's YAML: 1 MiB (a pipeline is a page or two; `roofline submit` says
-- so before sending).  NOT VALID: older rows are not re-read.
alter table runs add constraint runs_yaml_size
	check (octet_length(yaml) <= 1024 * 1024) not valid;

-- A run's attachments: at most 16 files and 256 MiB together (each file
-- at most 64 MiB, 004).  The run's row is locked while its files are
-- counted, so two sessions attaching at once count each other's.
create function run_files_limit() returns trigger
language plpgsql as $$
declare
	n      bigint;
	total  bigint;
begin
	perform 1 from runs where id = new.run_id for no key update;
	select count(*), coalesce(sum(octet_length(content)), 0) into n, total
	from run_files where run_id = new.run_id;
	if n + 1 > 16 then
		raise exception 'run % has 16 attached files already (the most a run may have)',
			new.run_id using errcode = 'program_limit_exceeded';
	end if;
	if total + octet_length(new.content) > 256 * 1024 * 1024 then
		raise exception 'the attached files of run % would exceed 256 MiB together',
			new.run_id using errcode = 'program_limit_exceeded';
	end if;
	return new;
end
$$;
create trigger run_files_limit before insert on run_files
	for each row execute function run_files_limit();

-- ---- the one-daemon lock ------------------------------------------------------
-- Advisory locks are anyone's: a user could queue for (1919905638, 1) and
-- win it when the daemon's session ended, then no daemon could start.  The
-- daemon now holds SHARE UPDATE EXCLUSIVE on table rooflined_lock for its
-- whole life, in a session of its own (daemon/engine.c; the table is made
-- there, before the migrations, which the lock serialises).  Nobody else
-- has any privilege on the table, and the lock modes that need none
-- (ACCESS SHARE, ROW SHARE, ROW EXCLUSIVE, taken by parsing a statement)
-- do not conflict with it; LOCK TABLE, VACUUM, ANALYZE and DDL check the
-- privilege or ownership before they wait.  The holder named is the table
-- owner's session only.
create or replace function rooflined_daemon_pid() returns integer
	language sql stable
	as $$ select l.pid from pg_locks l join pg_stat_activity a on a.pid = l.pid
	      where l.locktype = 'relation' and l.granted
	        and l.relation = to_regclass('public.rooflined_lock')
	        and l.mode = 'ShareUpdateExclusiveLock'
	        and a.usename = (select pg_get_userbyid(c.relowner) from pg_class c
	                         where c.oid = to_regclass('public.rooflined_lock'))
	      limit 1 $$;

-- ---- name resolution: nothing a user made is ever run by the daemon -------
-- Every function of the schema runs with search_path pg_catalog, public,
-- pg_temp (temporary objects last, so they never shadow); with CREATE on
-- public revoked (the daemon revokes it at every start and refuses to run
-- while public holds another role's objects, daemon/migrate.c), nothing in
-- that path is a user's.  The three one-line helpers become SQL-standard
-- bodies instead: resolved once, here, and still inlined into the queries
-- that call them (a function with its own search_path is not).
set local search_path = pg_catalog, public, pg_temp;
create or replace function public.rl_num(fields jsonb, key text) returns double precision
language sql immutable
return nullif(fields ->> key, '')::double precision;
create or replace function public.rl_month(t timestamptz) returns date
language sql immutable
return date_trunc('month', t at time zone 'UTC')::date;
create or replace function public.rl_month_start(m date) returns timestamptz
language sql immutable
return m::timestamp at time zone 'UTC';

-- The one function that creates a relation names its schema: with
-- pg_catalog first in the path, an unqualified CREATE would aim there.
create or replace function public.rl_partition_create(tbl text, m date) returns text
language plpgsql as $f$
declare
	part text := tbl || '_' || to_char(m, 'YYYY_MM');
	rel regclass := to_regclass('public.' || quote_ident(part));
begin
	if rel is not null then
		if not exists (select 1 from pg_inherits
		               where inhrelid = rel and inhparent = to_regclass('public.' || quote_ident(tbl))) then
			raise exception 'table % exists but is not a partition of %', part, tbl;
		end if;
		return null;
	end if;
	execute format('create table public.%I partition of public.%I for values from (%L) to (%L)',
		part, tbl, rl_month_start(m), rl_month_start((m + interval '1 month')::date));
	return part;
end
$f$;

do $$
declare
	f regprocedure;
begin
	for f in select p.oid::regprocedure from pg_proc p
		 where p.pronamespace = 'public'::regnamespace
		   and p.proowner = (select oid from pg_roles where rolname = current_user)
		   and p.prokind in ('f', 'p') and p.prosqlbody is null
		   and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass
				   and d.objid = p.oid and d.deptype = 'e')
	loop
		execute format('alter function %s set search_path = pg_catalog, public, pg_temp', f);
	end loop;
end
$$;

-- ---- the daemon's role creates no roles ---------------------------------------
-- CREATEROLE on PostgreSQL 15 grants any non-superuser role, including
-- pg_execute_server_program (a shell as the server's OS user).  Users are
-- provisioned by the database superuser (docs/install.md); the daemon's
-- role gives the attribute up here.
do $$
begin
	if (select rolcreaterole from pg_roles where rolname = current_user) then
		execute format('alter role %I nocreaterole', current_user);
	end if;
end
$$;
