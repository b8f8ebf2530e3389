#!/bin/bash
# The database side of issue 21: what a user connected to PostgreSQL with
# their own role can do to the root daemon and to other people's data.
# Each block below plays one attack of the issue against the real daemon
# and database and checks that it fails:
#   7  a user's finding takes the facility's key (folds or overwrites it)
#   9  a user's row lock on their own run stops every run
#   10 a user queues for the daemon's lock and keeps the daemon out
#   11 `set role roofline_users` makes runs every user shares
#   12 a user's public.width_bucket(date, date[]) runs as the daemon's role
#   13 NOTIFY spam forces full passes; staff change findings they cannot
#      see; attachments and YAML without limits
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

# hold NAME USER SQL: a session of USER that runs SQL in a transaction and
# stays in it (pg_sleep) until unhold NAME ends it.  Waits until SQL ran.
hold() {
	local name=$1 user=$2
	{ printf 'begin;\n%s\nselect pg_sleep(600);\n' "$3"; } |
		as "$user" env PGAPPNAME="$name" psql -X -q -v ON_ERROR_STOP=1 \
			>"$TEST_TMP/$name.out" 2>&1 &
	wait_for "[[ \$(pg_admin \"select count(*) from pg_stat_activity where application_name = '$name' and query like '%pg_sleep(600)%'\") == 1 ]]" 30 ||
		diag "session $name did not get there: $(cat "$TEST_TMP/$name.out")"
}
unhold() {
	pg_admin "select pg_terminate_backend(pid) from pg_stat_activity where application_name = '$1'" >/dev/null
}
on_exit "pg_admin \"select pg_terminate_backend(pid) from pg_stat_activity where application_name like 'secdb-%'\" >/dev/null"

# try_daemon_start: like daemon_start, but says whether it started instead
# of bailing out.
try_daemon_start() {
	"$BIN/rooflined" --foreground --config "$DAEMON_CONF" >>"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	if wait_for "grep -q 'started (pid $DAEMON_PID' '$DAEMON_LOG' || ! kill -0 $DAEMON_PID" 40 &&
		grep -q "started (pid $DAEMON_PID" "$DAEMON_LOG"; then
		return 0
	fi
	daemon_stop
	return 1
}

yaml() { printf '%s\n' "$2" >"$TEST_TMP/$1.yaml" && chmod 0644 "$TEST_TMP/$1.yaml"; }
yaml quick 'name: quick
steps:
  - { id: local, plugin: smoke, on: daemon }'
yaml slowish 'name: slowish
steps:
  - { id: local, plugin: smoke, on: daemon, with: { sleep: 4 } }'

# ---- 9. a row lock on one's own run stops nobody ------------------------------
# alice's queued run, locked by alice's open transaction before the daemon
# saw it: the daemon used to wait for the lock for ever, in the statement
# that starts every queued run at once, and so started nothing at all.
daemon_stop
locked=$(submit_as alice "$TEST_TMP/quick.yaml")
like "$locked" '^[0-9]+$' "alice queued run $locked (no daemon runs)"
hold secdb-lock1 alice "select 1 from runs where id = $locked for update;"
other=$(submit_as bob "$TEST_TMP/quick.yaml")
daemon_start
ok "bob's run $other succeeds while alice holds her queued run's row" wait_run "$other" 60
is "$(run_state "$other")" succeeded "bob's run succeeded"
is "$(run_state "$locked")" queued "alice's locked run waits, queued"
ok "the daemon lives" kill -0 "$DAEMON_PID"
is "$(pg_admin "select array_to_string(setconfig, ',') from pg_db_role_setting
	where setrole = 'alice'::regrole and setdatabase = 0")" "idle_in_transaction_session_timeout=5min" \
	"alice's role (scripts/cluster add-user) ends her idle transactions after 5 minutes"
unhold secdb-lock1
ok "once the lock is gone, alice's run starts and ends" wait_run "$locked" 60
is "$(run_state "$locked")" succeeded "alice's run succeeded"

# The same for a running run whose steps ended: finishing runs (one
# statement for all of them) waited on alice's lock.
running=$(submit_as alice "$TEST_TMP/slowish.yaml")
ok "alice's slow run runs" wait_for "[[ \$(run_state $running) == running ]]" 60
hold secdb-lock2 alice "select 1 from runs where id = $running for update;"
sleep 5 # its step ends meanwhile
after=$(submit_as bob "$TEST_TMP/quick.yaml")
ok "bob's later run $after succeeds while alice holds her running run's row" wait_run "$after" 60
is "$(run_state "$after")" succeeded "bob's later run succeeded"
ok "the daemon lives" kill -0 "$DAEMON_PID"
unhold secdb-lock2
ok "alice's run ends once her lock is gone" wait_run "$running" 60
is "$(run_state "$running")" succeeded "and it succeeded"
is "$(sql "select count(*) from pg_stat_activity where application_name like 'rooflined pid $DAEMON_PID %'
	and backend_type = 'client backend'")" 2 "the daemon has its two sessions"

# ---- 10. the daemon's lock is not a user's to take ----------------------------
# alice holds the migrations' advisory lock and queues for the daemon's; a
# restart (stop, start) must not leave the database to her session.
hold secdb-adv alice "select pg_advisory_lock(7316431); select pg_advisory_lock(1919905638, 1);"
# the table lock: nothing alice may do takes it
out=$(as alice psql -X -q -c "begin" -c "lock table rooflined_lock in share update exclusive mode" 2>&1)
like "$out" "permission denied" "alice cannot lock the daemon's lock table ($out)"
hold secdb-prep alice "prepare p as select * from rooflined_lock for update; prepare q as insert into rooflined_lock default values;"
daemon_stop
if try_daemon_start; then pass "the daemon starts while alice holds and waits for its old advisory locks"
else
	fail "the daemon starts while alice holds and waits for its old advisory locks"
	diag "$(tail -3 "$DAEMON_LOG")"
fi
holder=$(as alice psql -X -q -t -A -c "select rooflined_daemon_pid()")
is "$(sql "select usename || ' ' || application_name from pg_stat_activity where pid = ${holder:-0}")" \
	"rooflined rooflined pid ${DAEMON_PID:-?} on $(hostname)" \
	"rooflined_daemon_pid() names the daemon's session, not alice's"
unhold secdb-adv
unhold secdb-prep
[[ -n ${DAEMON_PID:-} ]] || daemon_start
# a second daemon is still refused, naming the first
out=$(timeout 60 "$BIN/rooflined" --foreground --no-standby --config "$DAEMON_CONF" 2>&1)
like "$out" "another rooflined already runs on this database \\(rooflined pid $DAEMON_PID on [^,]*, PostgreSQL backend [0-9]+, role rooflined\\)" \
	"a second daemon is refused and names the first"

# ---- 11. policies follow the session's role -----------------------------------
out=$(as alice psql -X -q -t -A -c "set role roofline_users" \
	-c "insert into runs (pipeline_name, yaml) values ('as-group', 'name: as-group') returning owner" 2>&1)
is "$(sql "select count(*) from runs where owner = 'roofline_users'")" 0 \
	"no run is owned by the group role after alice's insert under 'set role roofline_users' ($out)"
is "$(as bob psql -X -q -t -A -c "set role roofline_users" -c "select count(*) from runs where pipeline_name = 'as-group'")" 0 \
	"bob, as the group role, sees none of it"
is "$(as bob psql -X -q -t -A -c "set role roofline_users" \
	-c "update runs set cancel_requested = true where owner <> 'bob' returning id" | grep -c .)" 0 \
	"bob, as the group role, cancels nothing of anyone else's"
wait_for "[[ \$(sql \"select count(*) from runs where pipeline_name = 'as-group' and state in ('queued', 'running')\") == 0 ]]" 30

# ---- 7. findings are keyed by owner and facility -------------------------------
# alice's run named like the facility's pipeline records a finding on a GPU
# first; the facility's run then records its critical finding on the same
# GPU and ceiling.  Records go in as the daemon's ingest puts them (a
# user's step writes its own records.tsv; sql/011's trigger folds them).
fake_run() { # fake_run OWNER FACILITY: a succeeded run of 'secdb-fleet' with one step
	sql "with r as (insert into runs (pipeline_name, yaml, owner, facility, state)
		values ('secdb-fleet', 'name: secdb-fleet', '$1', $2, 'succeeded') returning id)
	     insert into steps (run_id, step_id, plugin, on_daemon, state)
		select id, 'fleet', 'fleet', true, 'succeeded' from r returning run_id || ' ' || id"
}
finding() { # finding RUN STEP SEVERITY VALUE
	sql "insert into step_records (step, attempt, seq, run_id, kind, node, fields)
	     values ($2, 1, 1, $1, 'finding', 'rl-node1', jsonb_build_object('scope', 'gpu',
		'subject', 'GPU-secdb', 'measure', 'hbm_triad', 'class', 'fleet outlier',
		'severity', '$3', 'value', '$4', 'reference', '3000', 'drop_pct', '50'))" >/dev/null
}
# (removed at the end: later tests in this cluster see the findings)
on_exit "sql \"delete from findings where subject = 'GPU-secdb'; delete from runs where pipeline_name = 'secdb-fleet'\" >/dev/null"
read -r urun ustep <<<"$(fake_run alice false)"
finding "$urun" "$ustep" warning 2900
read -r frun fstep <<<"$(fake_run rlfacility true)"
finding "$frun" "$fstep" critical 1500
is "$(sql "select count(*) from findings where subject = 'GPU-secdb' and facility and owner = 'rlfacility'")" 1 \
	"the facility's finding is a row of its own"
is "$(sql "select severity || ' ' || value from findings where subject = 'GPU-secdb' and facility")" "critical 1500" \
	"with the facility's severity and figure"
is "$(sql "select severity || ' ' || value || ' ' || nights from findings where subject = 'GPU-secdb' and owner = 'alice'")" \
	"warning 2900 1" "alice's finding is untouched by the facility's"
is "$(as bob psql -X -q -t -A -c "select count(*) from findings where subject = 'GPU-secdb'")" 1 \
	"bob sees the facility's finding (and not alice's)"
# and the other way round: a later night of alice's does not overwrite the facility's
read -r urun2 ustep2 <<<"$(fake_run alice false)"
sql "update runs set night = night + 1 where id = $urun2" >/dev/null
finding "$urun2" "$ustep2" warning 2950
is "$(sql "select severity || ' ' || value || ' ' || nights from findings where subject = 'GPU-secdb' and facility")" \
	"critical 1500 1" "alice's next night leaves the facility's finding as it was"

# ---- 13. staff change only the findings they see -------------------------------
pg_admin "grant roofline_staff to bob" >/dev/null
on_exit "pg_admin 'revoke roofline_staff from bob' >/dev/null"
as bob psql -X -q -c "update findings set state = 'acknowledged' where subject = 'GPU-secdb'" >/dev/null 2>&1
is "$(sql "select state from findings where subject = 'GPU-secdb' and facility")" acknowledged \
	"bob (staff) acknowledges the facility's finding, which he sees"
is "$(sql "select state from findings where subject = 'GPU-secdb' and owner = 'alice'")" new \
	"and not alice's (his WHERE sees only what he sees)"
# An UPDATE that reads no column is not filtered by what one may see, only
# by the policy's USING: bob's `update findings set state = 'resolved'`
# (rolled back: other tests' findings stay as they are) must touch only
# the findings he sees, and alice's is not one of them.
out=$(as bob psql -X -t -A -c "begin" -c "select count(*) from findings" \
	-c "update findings set state = 'resolved'" -c "rollback" 2>&1)
visible=$(sed -n 2p <<<"$out")
updated=$(sed -n 's/^UPDATE \([0-9]*\)$/\1/p' <<<"$out")
like "$visible" '^[0-9]+$' "bob sees $visible findings"
is "$updated" "$visible" "bob's update without WHERE changes those, not the ones he cannot see"
pg_admin "revoke roofline_staff from bob" >/dev/null

# ---- 13. attachments and YAML have limits -----------------------------------
files_sql="begin;
insert into runs (pipeline_name, yaml) values ('files', 'name: files');
insert into run_files (run_id, name, content)
	select currval('runs_id_seq'), 'f' || i, '\\x00' from generate_series(1, 16) i;
select 'sixteen ok';
insert into run_files (run_id, name, content) values (currval('runs_id_seq'), 'f17', '\\x00');
rollback;"
out=$(as alice psql -X -q -t -A -v ON_ERROR_STOP=1 <<<"$files_sql" 2>&1)
like "$out" "sixteen ok" "a run takes 16 attachments"
like "$out" "16 attached files already" "not a 17th ($out)"
size_sql="begin;
insert into runs (pipeline_name, yaml) values ('big', 'name: big');
insert into run_files (run_id, name, content)
	select currval('runs_id_seq'), 'g' || i, convert_to(repeat('x', 60 * 1024 * 1024), 'UTF8')
	from generate_series(1, 4) i;
select 'four ok';
insert into run_files (run_id, name, content)
	values (currval('runs_id_seq'), 'g5', convert_to(repeat('x', 60 * 1024 * 1024), 'UTF8'));
rollback;"
out=$(as alice psql -X -q -t -A -v ON_ERROR_STOP=1 <<<"$size_sql" 2>&1)
like "$out" "four ok" "four attachments of 60 MiB go"
like "$out" "would exceed 256 MiB" "a fifth (300 MiB together) does not"
out=$(as alice psql -X -q -t -A -c "begin" \
	-c "insert into runs (pipeline_name, yaml) values ('huge', 'name: huge' || repeat(chr(10) || '#', 1024 * 1024)) returning id" \
	-c "rollback" 2>&1)
like "$out" "runs_yaml_size" "a run's YAML over 1 MiB is refused ($out)"

# ---- 13. NOTIFY from anyone forces no full pass ---------------------------------
# A full pass reads table steps (Slurm's jobs, daemon children, ready
# steps); deciding that a notification announced nothing reads runs only.
# Counted: the scans of steps (pg_stat_user_tables) in 4 quiet seconds,
# and in 4 seconds of alice's NOTIFYs (separate transactions, each one
# delivered).
wait_for "[[ \$(sql \"select count(*) from runs where state in ('queued', 'running')\") == 0 ]]" 60
steps_scans() { sql "select pg_stat_force_next_flush(); select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) from pg_stat_user_tables where relname = 'steps'" | tail -1; }
sleep 2
a=$(steps_scans); sleep 4; sleep 1.5; b=$(steps_scans)
quiet=$((b - a))
yes 'notify rooflined;' | head -100000 >"$TEST_TMP/spam.sql"
a=$(steps_scans)
as alice timeout 4 psql -X -q -f "$TEST_TMP/spam.sql" >/dev/null 2>&1
sleep 1.5
b=$(steps_scans)
spam=$((b - a))
note "scans of steps: $quiet in 4 quiet seconds, $spam in 4 seconds of NOTIFY spam"
ok "NOTIFY spam makes no more full passes than the poll interval does ($spam vs $quiet quiet)" \
	test "$spam" -le $((2 * quiet + 20))

# ---- 12. nothing a user makes in public runs as the daemon's role -------------
is "$(sql "select rolcreaterole from pg_roles where rolname = current_user")" f \
	"the daemon's role has no CREATEROLE"
is "$(sql "select string_agg(p.oid::regprocedure::text, ', ') from pg_proc p
	where p.pronamespace = 'public'::regnamespace and p.proowner = current_user::regrole
	  and p.prosqlbody is null and not coalesce(p.proconfig @> '{\"search_path=pg_catalog, public, pg_temp\"}', false)")" "" \
	"every function of the schema pins its search_path (or has an SQL-standard body)"
# A cluster upgraded from PostgreSQL 14 lets everyone create in public.
daemon_stop
pg_admin "grant create on schema public to public" >/dev/null
on_exit "pg_admin 'revoke create on schema public from public; drop function if exists public.width_bucket(date, date[]); drop table if exists public.pwned' >/dev/null"
shadow_sql="create table public.pwned (who name);
grant insert, select on public.pwned to public;
create function public.width_bucket(d date, b date[]) returns integer
language plpgsql as \$f\$ begin insert into public.pwned values (current_user);
	return pg_catalog.width_bucket(d, b); end \$f\$;"
out=$(as alice psql -X -q -v ON_ERROR_STOP=1 -c "$shadow_sql" 2>&1)
is "$out" "" "alice made her width_bucket(date, date[]) in public while she could"
if try_daemon_start; then
	fail "the daemon refuses to run while public holds alice's function"
else
	pass "the daemon refuses to run while public holds alice's function"
	like "$(grep 'refusing' "$DAEMON_LOG" | tail -1)" "function width_bucket\\(date,date\\[\\]\\) \\(owner alice\\)" \
		"and says which"
	pg_admin "drop function public.width_bucket(date, date[]); drop table public.pwned" >/dev/null
	daemon_start
fi
is "$(pg_admin "select has_schema_privilege('alice', 'public', 'CREATE')")" f \
	"the daemon revoked CREATE on public at its start"
out=$(as alice psql -X -q -v ON_ERROR_STOP=1 -c "$shadow_sql" 2>&1)
like "$out" "permission denied for schema public" "alice can no longer make it ($out)"
# The history function the fleet analysis runs as the daemon's role, on a
# series of alice's: alice's width_bucket, if any, would run there.
on_exit "sql \"delete from ceiling_series where pipeline_name = 'secdb-shadow'; delete from runs where pipeline_name = 'secdb-shadow'\" >/dev/null"
series_run=$(sql "with r as (insert into runs (pipeline_name, yaml, owner, facility, state)
		values ('secdb-shadow', 'name: secdb-shadow', 'alice', false, 'succeeded') returning id),
	s as (insert into steps (run_id, step_id, plugin, on_daemon, state)
		select id, 'ert', 'ert', false, 'succeeded' from r returning id, run_id)
	insert into ceilings (run_id, step, attempt, seq, node, gpu_uuid, method, name, kind, value, unit)
		select run_id, id, 1, 1, 'rl-node1', 'GPU-shadow', 'empirical', 'fp32', 'compute', 1, 'GFLOP/s'
		from s returning run_id")
sql "select count(*) from rl_gpu_history($series_run, 30)" >/dev/null
is "$(sql "select count(*) from pg_class where relname = 'pwned'")$(sql "select count(*) from pwned where who = 'rooflined'" 2>/dev/null | grep -x '[0-9]*')" "0" \
	"rl_gpu_history, run as the daemon's role, ran nothing of alice's"

done_testing
