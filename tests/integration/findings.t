#!/bin/bash
# Findings on the multi-node cluster (issue 11): 20 replayed nights of the
# nightly ceilings pipeline, every GPU given the noise of the recorded
# trial spreads (ert `noise: true`, drawn anew per run, node and GPU), and
# perturbations declared here on some GPUs.  Exactly the perturbed (GPU,
# ceiling) pairs are flagged, each once (one findings row, one night per
# night it was seen), the notify hook runs once per finding, no other GPU
# is flagged in any night, and a kill -9 of rooflined while the fleet step
# runs plus a restart change nothing.  Then the people's side: roofline
# findings (table, --json, --state), ack by the owner, refused for bob.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
# carol: a user no other test uses, so that what she sees is this test's
"$ROOT/scripts/cluster" add-user carol >/dev/null || bail_out "cannot add user carol"
NIGHTS=${FINDINGS_NIGHTS:-20}

HOOKS=$TEST_TMP/hooks
mkdir -p "$HOOKS" && chown rlfacility "$HOOKS" && chmod 0755 "$HOOKS" # the hook's user
touch "$HOOKS/fail-once" # the first finding's first try fails
# The hook: one file per successful call (a second call for a finding
# would add one); while $HOOKS/slow exists it then sleeps, so the test can
# kill -9 the daemon in the middle of it; $HOOKS/fail-once makes the next
# call fail (exit 3) before it writes anything, so the daemon retries.
cat >>"$DAEMON_CONF" <<CONF
notify_command: "if [ -e $HOOKS/fail-once ]; then rm -f $HOOKS/fail-once; exit 3; fi; cat > $HOOKS/finding-\$ROOFLINE_FINDING_ID.\$\$.json; if [ -e $HOOKS/slow ]; then sleep 5; fi"
notify_tries: 2
notify_backoff: 1s
CONF
daemon_start
pg_admin "do \$\$ begin if not exists (select 1 from pg_roles where rolname = 'carol') then create role carol login in role roofline_users; end if; end \$\$" >/dev/null

mapfile -t NODES < <(scontrol show hostnames "$(sinfo -h -p gpu -o '%N' | head -1)")
((${#NODES[@]} >= 4)) || bail_out "findings.t needs a cluster of 4 nodes or more"

REC=$ROOT/tests/fixtures/ert/h100-quick.tsv
cp "$REC" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/h100-quick.tsv"
REC_UUID=$(awk -F'\t' '$1 == "attr" { for (i = 2; i <= NF; i++) if ($i ~ /^uuid=/) { print substr($i, 6); exit } }' "$REC")
uuid_of() { echo "GPU-replay-$1-$2-of-$REC_UUID"; } # uuid_of NODE INDEX

# The declared perturbations: an HBM triad 12 % low on every night; an
# FP64 FMA clock capped at 1410 MHz from night 11 (of 20) on (its own
# history and the fleet both see it); a driver change on a whole node from
# night 6 on, which moves no figure and so must flag nothing.
CLK_FROM=$((NIGHTS / 2 + 1))
DRV_FROM=$((NIGHTS / 4 + 1))
P_HBM="${NODES[1]}/1 hbm_triad -12%"
P_CLK="${NODES[2]}/0 fp64_fma sm_clock=1410"
P_DRV="${NODES[3]}/* driver=535.54"
EXPECTED=$(printf '%s hbm_triad\n%s fp64_fma\n' "$(uuid_of "${NODES[1]}" 1)" \
	"$(uuid_of "${NODES[2]}" 0)" | sort)

night_yaml() { # night_yaml N: the pipeline of night N
	local n=$1 rules="\"$P_HBM\""
	((n >= DRV_FROM)) && rules+=", \"$P_DRV\""
	((n >= CLK_FROM)) && rules+=", \"$P_CLK\""
	sed -E "s|^( +)replay: inputs/h100-quick.tsv\$|&\n\1perturb: [$rules]|" \
		"$ROOT/tests/pipelines/fleet-night.yaml" >"$TEST_TMP/night-$n.yaml"
	chmod 0644 "$TEST_TMP/night-$n.yaml"
	echo "$TEST_TMP/night-$n.yaml"
}
# night N of NIGHTS: the last one is today (UTC), so "this month" has it
# (today as of the test's start: a test that runs over midnight keeps its dates)
TODAY=$(date -u +%F)
night_date() { date -u -d "$TODAY - $((NIGHTS - $1)) days" +%F; }
submit_night() { # submit_night N FILE: the run id, after it ended
	local out
	out=$(as carol "$BIN/roofline" submit --wait --night "$(night_date "$1")" \
		--attach "$TEST_TMP/h100-quick.tsv" "$2" 2>&1)
	head -1 <<<"$out"
}
flagged() { # the flagged (GPU, ceiling) pairs, sorted
	sql "select gpu_uuid || ' ' || measure from findings where pipeline_name = 'fleet-night' and scope = 'gpu' order by 1" | sort
}

is "$(grep -c 'perturb: ' "$(night_yaml 1)")" 1 "the perturbations go to ert"

# Two crashes: kill -9 of the daemon while the fleet step runs (night
# KILL_NIGHT), and while the notify hook of the clock finding runs (its
# first night): a restart must change nothing and run no hook twice.
KILL_NIGHT=$((CLK_FROM + 1))
fleet_state() { sql "select state from steps where run_id = $1 and step_id = 'fleet'"; }
for ((n = 1; n <= NIGHTS; n++)); do
	yaml=$(night_yaml "$n")
	if ((n == KILL_NIGHT || n == CLK_FROM)); then
		((n == CLK_FROM)) && touch "$HOOKS/slow"
		run=$(as carol "$BIN/roofline" submit --night "$(night_date "$n")" \
			--attach "$TEST_TMP/h100-quick.tsv" "$yaml")
		if ((n == KILL_NIGHT)); then
			# The moment the daemon has prepared the fleet attempt (its
			# params.tsv, written just before the child starts), stop it,
			# then kill -9 it: the analysis runs (or is about to) and
			# nothing of it is ingested yet.
			params=$SPOOL/run-$run/fleet/attempt-1/params.tsv
			end=$((SECONDS + 120))
			until [[ -e $params ]] || ((SECONDS > end)); do read -rt 0.002 <> <(:) || true; done
			kill -STOP "$DAEMON_PID"
			seen=$(fleet_state "$run")
			daemon_kill9
			ok "night $n: rooflined killed (-9) with the fleet step $seen, before its ingest" \
				test "$seen" = submitting -o "$seen" = running
		else
			wait_for "[[ \$(ls $HOOKS | grep -c json) == 2 ]]" 120
			daemon_kill9
			ok "night $n: rooflined killed (-9) while the clock finding's hook ran" \
				test "$(sql "select notify_state from findings where pipeline_name = 'fleet-night' and measure = 'fp64_fma'")" = sending
			rm -f "$HOOKS/slow"
		fi
		daemon_start
		wait_run "$run" 180
	else
		run=$(submit_night "$n" "$yaml")
	fi
	state=$(run_state "$run")
	[[ $state == succeeded ]] || { diag "$(tail -30 "$DAEMON_LOG")"; bail_out "night $n (run $run): $state"; }
	# after each night: never a GPU that was not perturbed
	extra=$(comm -23 <(flagged) <(echo "$EXPECTED"))
	[[ -z $extra ]] || { is "$extra" "" "night $n flags no unperturbed GPU"; break; }
done
ok "$NIGHTS replayed nights ran (runs up to $run)" test "$n" -gt "$NIGHTS"
is "$(sql "select count(distinct night) from runs where pipeline_name = 'fleet-night'")" "$NIGHTS" \
	"each run stands for its own night"
ok "the noisy figures are labelled synthetic" test \
	"$(sql "select count(*) from ceilings c join runs r on r.id = c.run_id where r.pipeline_name = 'fleet-night' and c.method = 'empirical' and c.synthetic like '%trial noise x%'")" -gt 0
ok "figures differ from night to night (noise)" test \
	"$(sql "select count(distinct value) from ceilings where method = 'empirical' and name = 'fp64_fma' and gpu_uuid = '$(uuid_of "${NODES[0]}" 0)'")" -gt $((NIGHTS / 2))

# ---- exactly the perturbed pairs, each once -----------------------------------
is "$(flagged)" "$EXPECTED" "exactly the perturbed (GPU, ceiling) pairs are flagged"
is "$(sql "select count(*) from findings where pipeline_name = 'fleet-night' and scope = 'gpu'")" 2 "each once (one finding each)"
is "$(sql "select nights from findings where pipeline_name = 'fleet-night' and measure = 'hbm_triad'")" "$NIGHTS" \
	"the HBM finding was seen every night: one finding, its count $NIGHTS"
is "$(sql "select nights || ' ' || first_night from findings where pipeline_name = 'fleet-night' and measure = 'fp64_fma'")" \
	"$((NIGHTS - CLK_FROM + 1)) $(night_date "$CLK_FROM")" "the clock finding from night $CLK_FROM on, once per night"
is "$(sql "select count(*) from finding_nights n join findings f on f.id = n.finding_id where f.pipeline_name = 'fleet-night'")" "$((NIGHTS + NIGHTS - CLK_FROM + 1))" \
	"one finding_nights row per finding and night (the killed night counted once)"
like "$(sql "select class || '|' || severity || '|' || round(drop_pct) from findings where pipeline_name = 'fleet-night' and measure = 'hbm_triad'")" \
	'^fleet outlier\|critical\|1[12]$' "HBM: a fleet outlier about 12 % down, critical"
like "$(sql "select cause from findings where pipeline_name = 'fleet-night' and measure = 'fp64_fma'")" \
	'SM clock 1410 MHz, below its maximum 1980 MHz' "the clock cap is named as the likely cause"
ok "thresholds come from measured noise, never below the floor" test \
	"$(sql "select count(*) from findings where pipeline_name = 'fleet-night' and threshold_pct >= 3 and noise_pct > 0")" -eq 2

# ---- the hook: once per finding --------------------------------------------------
wait_for "[[ \$(sql \"select count(*) from findings where pipeline_name = 'fleet-night' and notify_state = 'sent'\") == 1 ]]" 30
is "$(sql "select string_agg(measure || ' ' || notify_state || ':' || notify_tries, ',' order by measure) from findings where pipeline_name = 'fleet-night'")" \
	"fp64_fma interrupted:1,hbm_triad sent:2" \
	"HBM notified on the second try; the clock finding's hook, cut by the crash, not run again"
like "$(grep 'notify command failed' "$DAEMON_LOG")" 'failed \(exit status 3\), try 1 of 2; next in 1 s' \
	"the failed try is logged with its retry"
like "$(grep "finding $(sql "select id from findings where pipeline_name = 'fleet-night' and measure = 'fp64_fma'"): the daemon stopped" "$DAEMON_LOG")" 'not run again' \
	"the restart says so"
is "$(ls "$HOOKS" | grep -c json)" 2 "the notify hook ran once per finding (and for no other)"
for id in $(sql "select id from findings where pipeline_name = 'fleet-night' order by id"); do
	is "$(ls "$HOOKS"/finding-"$id".*.json | wc -l)" 1 "finding $id: one hook call"
	is "$(jq -r '.id' "$HOOKS"/finding-"$id".*.json)" "$id" "finding $id: the hook read it as JSON"
done
is "$(jq -r '.measure + " " + .class' "$HOOKS"/finding-*.json | sort | paste -sd,)" \
	"fp64_fma fleet outlier,hbm_triad fleet outlier" "the hook's JSON names the ceiling and the class"
is "$(grep -c 'finding [0-9]* ([a-z]*, fleet-night)' "$DAEMON_LOG")" 2 "one log (syslog) line per finding"

# ---- re-running an analysis, replaying a night: nothing new ---------------------------
before=$(sql "select string_agg(id || ':' || nights, ',' order by id) from findings where pipeline_name = 'fleet-night'")
run=$(submit_night "$NIGHTS" "$(night_yaml "$NIGHTS")")
is "$(run_state "$run")" succeeded "night $NIGHTS replayed (run $run)"
is "$(sql "select string_agg(id || ':' || nights, ',' order by id) from findings where pipeline_name = 'fleet-night'")" "$before" \
	"a replayed night adds no finding and no count"
sleep 1
is "$(ls "$HOOKS" | grep -c json)" 2 "and calls no hook"

# ---- the GPUs' series kept at ingest (sql/014) against the figures -------------
# rl_gpu_history reads ceiling_series, which the ingests of these 20 nights
# (kill -9 and replays included) kept; the same history recomputed from the
# ceilings themselves, as 011 did, must agree for every run's every window.
last=$(sql "select max(id) from runs where pipeline_name = 'fleet-night'")
# The median and the deviation (sd: 1.4826 x MAD) as percentile_cont gives
# them; rl_gpu_history takes both from rooflined_stats (sql/028).
from_ceilings="with c as (select distinct on (c.gpu_uuid, c.name, r.night) c.gpu_uuid, c.name, c.value
	      from ceilings c join runs r on r.id = c.run_id, runs me
	      where me.id = $last and r.pipeline_name = me.pipeline_name and r.owner = me.owner
	        and r.night < me.night and r.night >= me.night - 30 and c.method = 'empirical'
	      order by c.gpu_uuid, c.name, r.night, r.id desc, c.id desc),
	m as (select c.gpu_uuid, c.name, count(*) n, percentile_cont(0.5) within group (order by c.value) median
	      from c group by 1, 2)
	select m.gpu_uuid, m.name, m.n, m.median,
	       1.4826 * percentile_cont(0.5) within group (order by abs(c.value - m.median))
	from m join c using (gpu_uuid, name) group by 1, 2, 3, 4"
from_series="select gpu_uuid, name, n, median, sd from rl_gpu_history($last, 30)"
n=$(sql "select count(*) from ($from_series) s")
ok "ceiling_series: the last night has a history ($n GPU-ceiling rows)" test "$n" -gt 0
is "$n" "$(sql "select count(*) from ($from_ceilings) c")" \
	"ceiling_series: one history row per GPU and ceiling, as from the ceilings"
is "$(sql "select count(*) from (($from_series) except all ($from_ceilings)) d")" 0 \
	"ceiling_series: the same nights, medians and deviations as recomputed from the ceilings"
# A series is kept inline (sql/033: toast_tuple_target): a synthetic
# year of nights with two drivers, appended as a night's ingest appends,
# adds nothing to the TOAST table (before 033 its arrays went there).
toast=$(pg_admin "select reltoastrelid::regclass from pg_class where oid = 'ceiling_series'::regclass")
is "$(pg_admin "begin;
	create temp table n0 as select count(*) as n from $toast;
	insert into ceiling_series (pipeline_name, owner, facility, gpu_uuid, name, nights, run_ids, vals, drivers)
	select 'toast-check (synthetic)', 'rooflined', true, 'GPU-toast-check', 'hbm_triad',
	       array_agg(d::date order by d), array_agg(1000000 + i order by d),
	       array_agg(3000 + i % 7 order by d),
	       array_agg(case when i < 200 then '535.104.05' else '550.54.15' end order by d)
	from generate_series('2025-01-01'::date, '2025-12-31', '1 day') with ordinality g(d, i);
	update ceiling_series s set (nights, run_ids, vals, drivers) = (select * from rl_series_merge(s.nights, s.run_ids, s.vals, s.drivers, '{2026-01-01}', '{2000000}', '{3100}', '{550.54.15}'))
	where gpu_uuid = 'GPU-toast-check';
	select cardinality(nights) || ' nights, ' || (pg_column_size(s.*) < 8160) || ', ' || ((select count(*) from $toast) - (select n from n0)) || ' TOAST chunks'
	from ceiling_series s where gpu_uuid = 'GPU-toast-check';
	rollback;" | tail -1)" "366 nights, true, 0 TOAST chunks" \
	"a series of a year, appended to, stays inline: a row under 8 kB, nothing in the TOAST table"
# A record's fields are compressed with lz4 in every partition, the ones
# made after the migration too (sql/035; Debian's PostgreSQL has lz4), and
# a sweep stored tonight was (pg_column_compression).
is "$(pg_admin "select string_agg(distinct coalesce(nullif(a.attcompression, ''), '-'), ',')
	from pg_attribute a
	where a.attname = 'fields'
	  and a.attrelid in (select 'step_records'::regclass union all
			     select inhrelid from pg_inherits where inhparent = 'step_records'::regclass)")" "l" \
	"step_records.fields: lz4 in the table and each of its partitions"
is "$(pg_admin "begin;
	select rl_partition_create('step_records', date '2040-01-01');
	select a.attcompression from pg_attribute a
	where a.attname = 'fields' and a.attrelid = 'step_records_2040_01'::regclass;
	rollback;" | tail -1)" "l" "a partition made later takes lz4 from the table"
is "$(pg_admin "select coalesce(string_agg(distinct coalesce(pg_column_compression(fields), 'inline'), ','), 'none')
	from step_records where kind = 'sweep' and octet_length(fields::text) > 2100")" "lz4" \
	"the sweeps the nights stored over the TOAST threshold are compressed with lz4"

# The daemon reads a fleet step's history in parts of the run's GPUs, one
# session a part (sql/032, daemon/step_inputs.c; db_sessions, 4 by
# default): the parts read in order are the whole (one part of one, which
# the checks against the ceilings above hold), row for row.
cols="(x.g, x.c, x.n, x.m, x.s, x.v, x.d, x.t)::text"
whole=$(sql "select count(*) || ' ' || md5(string_agg($cols, '|' order by o)) from rl_gpu_history($last, 30) with ordinality x(g, c, n, m, s, v, d, t, o)")
like "$whole" '^[1-9][0-9]* [0-9a-f]{32}$' "rl_gpu_history of the last night: $whole"
for p in 2 3 4; do
	is "$(sql "select count(*) || ' ' || md5(string_agg($cols, '|' order by k, o)) from generate_series(1, $p) k, rl_gpu_history($last, 30, k, $p) with ordinality x(g, c, n, m, s, v, d, t, o)")" \
		"$whole" "in $p part(s), read in order: the same rows in the same order"
done
is "$(sql "select count(*) from rl_gpu_history($last, 30, 5, 4)")" 0 "a part past the last holds nothing"
# ... and the history file the daemon wrote for the fleet step, in four
# parts, is what reading it whole on one session writes (bench/findings-bench
# links the daemon's step_inputs.c), byte for byte
sql "select 'ert@' || node || E'\t$SPOOL/run-$last/ert@' || node || '/attempt-' || attempt from steps where run_id = $last and step_id = 'ert' and state = 'succeeded'" >"$TEST_TMP/fleet-inputs.tsv"
mkdir "$TEST_TMP/fleet-1"
"$BUILD/bench/findings-bench" -P fleet -r "$last" -d "$TEST_TMP/fleet-1" -I "$TEST_TMP/fleet-inputs.tsv" \
	-j "$BIN/roofline-job" -p "$BUILD/plugins" -o nights=14 -n 1 -s 1 >/dev/null 2>"$TEST_TMP/fleet-1.err" ||
	diag "$(cat "$TEST_TMP/fleet-1.err")"
hist=$(ls -d "$SPOOL/run-$last"/fleet/attempt-*/history/records.tsv | tail -1)
ok "the fleet step's history file ($(grep -c '^gpu_history' "$hist") GPU-ceiling rows) is one session's, byte for byte" \
	cmp "$hist" "$TEST_TMP/fleet-1/attempt-1/history/records.tsv"
# rl_series_merge (sql/026) takes a shortcut for a night after the
# series' last; on every kind of series and addition it must answer what
# the sorting merge of 014 (rl_series_merge_sorted) answers: empty, short, more than a year long (the
# oldest nights fall out), a later night, the same night again, an
# earlier one, two at once.
pairs=$(sql "with s(k, n) as (values (0, '{}'::date[]),
		(1, array['2026-01-01', '2026-01-02']::date[]),
		(2, array(select d::date from generate_series('2025-01-01'::date, '2026-01-10', '7 days') d))),
	a(k, n) as (values (0, array['2026-01-20']::date[]), (1, array['2026-01-02']::date[]),
		(2, array['2025-06-01']::date[]), (3, array['2026-01-21', '2026-01-22']::date[]),
		(4, array['2027-01-05']::date[])),
	c as (select s.k as sk, a.k as ak,
		(select row(x.*) from rl_series_merge(s.n, array(select 1000 + i from generate_subscripts(s.n, 1) i),
			array(select i * 1.5 from generate_subscripts(s.n, 1) i), array(select 'd' || i from generate_subscripts(s.n, 1) i),
			a.n, array(select 2000 + i from generate_subscripts(a.n, 1) i),
			array(select i * 2.5 from generate_subscripts(a.n, 1) i), array(select 'e' || i from generate_subscripts(a.n, 1) i)) x)::text as fast,
		(select row(y.*) from rl_series_merge_sorted(s.n, array(select 1000 + i from generate_subscripts(s.n, 1) i),
			array(select i * 1.5 from generate_subscripts(s.n, 1) i), array(select 'd' || i from generate_subscripts(s.n, 1) i),
			a.n, array(select 2000 + i from generate_subscripts(a.n, 1) i),
			array(select i * 2.5 from generate_subscripts(a.n, 1) i), array(select 'e' || i from generate_subscripts(a.n, 1) i)) y)::text as slow
		from s, a)
	select count(*) || ' ' || count(*) filter (where fast is distinct from slow) from c")
is "$pairs" "15 0" "rl_series_merge's shortcut answers as the sorting merge on all 15 cases"
# 54 weekly nights from 2025-01-01 to 2026-01-07, then 2026-01-20: the
# nights before 2025-01-19 (366 days earlier) fall out, 3 of them
is "$(sql "select cardinality(nights) || ' ' || nights[1] from rl_series_merge(
	array(select d::date from generate_series('2025-01-01'::date, '2026-01-10', '7 days') d),
	array(select i::bigint from generate_series(1, 54) i), array(select 1.0::float8 from generate_series(1, 54)),
	array(select 'd' from generate_series(1, 54)),
	array['2026-01-20']::date[], array[55]::bigint[], array[2.0]::float8[], array['d'])")" "52 2025-01-22" \
	"rl_series_merge: a later night drops the nights more than 366 days before it"

# ---- the docs' question, run as written there ----------------------------------
query=$(awk '/<!-- findings.t: hbm-query -->/ { f = 1; next } f && /^```sql/ { q = 1; next } q && /^```/ { exit } q' "$ROOT/docs/findings.md")
like "$query" 'from fleet_outliers' "docs/findings.md has the HBM question"
is "$(as carol psql -X -q -t -A -F '|' -c "$query" | cut -d'|' -f1,2,4)" \
	"${NODES[1]}|$(uuid_of "${NODES[1]}" 1)|$(sql "select round(drop_pct::numeric, 1) from findings where pipeline_name = 'fleet-night' and measure = 'hbm_triad'")" \
	"which GPUs lost HBM bandwidth this month: the perturbed one, as carol"

# ---- people: findings, ack ----------------------------------------------------------
out=$(as carol "$BIN/roofline" findings --since 60d)
like "$out" 'hbm_triad +fleet outlier' "roofline findings lists the HBM finding"
like "$out" '2 findings$' "and says how many"
is "$(as carol "$BIN/roofline" findings --since 60d --json | jq '.findings | length')" 2 \
	"--json: the same two"
is "$(as carol "$BIN/roofline" findings --since 60d --json | jq -r '[.findings[].drop_pct] | sort | map(floor) | join(",")')" \
	"$(sql "select string_agg(floor(round(drop_pct::numeric, 2))::text, ',' order by floor(drop_pct)) from findings where pipeline_name = 'fleet-night'")" \
	"--json figures match the table's"
id=$(sql "select id from findings where pipeline_name = 'fleet-night' and measure = 'hbm_triad'")
is "$(as bob "$BIN/roofline" findings --since 60d --json | jq '[.findings[] | select(.pipeline == "fleet-night")] | length')" 0 \
	"bob sees none of carol's findings"
as bob "$BIN/roofline" ack "$id" >/dev/null 2>&1
is "$?" 1 "bob may not acknowledge carol's finding"
ok "carol acknowledges it" as carol "$BIN/roofline" ack "$id"
is "$(sql "select state || ' ' || state_by from findings where pipeline_name = 'fleet-night' and id = $id")" "acknowledged carol" \
	"state and who changed it recorded"
is "$(as carol "$BIN/roofline" findings --since 60d --state new --json | jq '.findings | length')" 1 \
	"--state new leaves it out"
as carol "$BIN/roofline" findings --since yesterdayish >/dev/null 2>&1
is "$?" 2 "a bad --since is a usage error"

done_testing
