#!/bin/bash
# The fleet tonight at facility scale (issue 27): a SYNTHETIC night of 8,000
# GPUs (tests/tools/synth-night: 2,000 nodes x 4 GPUs, H100 and H200 from
# their recordings, mixed nodes, declared perturbations), judged by the real
# fleet plugin (roofline-job), its records loaded as a facility run's, the
# site rebuilt by the daemon; then the tonight page in headless Chromium:
# it loads, filters (model, partition, node, ceiling, flagged) and sorts
# through its URL fragment, stays under its size limit, and every row's
# history page exists.  Also `roofline fleet --json` on the same night.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
command -v chromium >/dev/null || bail_out "chromium not installed (scripts/deps)"
daemon_setup
SITE=$TEST_TMP/site
printf 'web_root: %s\n' "$SITE" >>"$DAEMON_CONF"
daemon_start
T0=$(date +%s.%N)
# The limit docs/fleet.md states: tonight.html + tonight.js at 8,000 GPUs
SIZE_LIMIT=$((1536 * 1024))

N=$TEST_TMP/night
"$ROOT/tests/tools/synth-night" --nodes 2000 "$N"
is "$?" 0 "synth-night made a synthetic night"
note "generated in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
is "$(wc -l <"$N/nodes.tsv")" 2000 "of 2,000 nodes"
is "$(grep -c '^ceiling' "$N/ert/records.tsv")" 139000 \
	"139,000 ceiling figures (5,000 H100 x 17 + 3,000 H200 x 18)"
ok "every figure is labelled synthetic" bash -c "! grep -v 'synthetic=synthetic night: ' '$N/ert/records.tsv' | grep -q ."

t=$(date +%s.%N)
"$BIN/roofline-job" --plugin-dir "$BUILD/plugins" --run fleet --out "$N/fleet" \
	--input ert="$N/ert" 2>"$TEST_TMP/fleet.log"
is "$?" 0 "the fleet plugin judged the night"
note "fleet step: $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
like "$(cat "$TEST_TMP/fleet.log")" "8000 GPUs of 2 models, 139000 figures judged, 68 flagged" \
	"8,000 GPUs of 2 models, 68 figures flagged"
# exactly the declared (GPU, ceiling) pairs: each model judged against its own
is "$(awk -F'\t' '$1 == "finding" { u = ""; m = ""; for (i = 2; i <= NF; i++) {
		if ($i ~ /^subject=/) u = substr($i, 9); if ($i ~ /^measure=/) m = substr($i, 9) }
		print u " " m }' "$N/fleet/records.tsv" | sort)" \
	"$(awk -F'\t' '{ print $3 " " $5 }' "$N/perturbed.tsv" | sort)" \
	"the findings are exactly the perturbed (GPU, ceiling) pairs"
like "$(grep -c 'subject=GPU-synth-gpu-n1901-2' "$N/fleet/records.tsv")" '^[1-9]' \
	"the mixed node's perturbed H200 (gpu-n1901/2) is found among H100s on its node"

# ---- tonight's records, as the daemon would have ingested them -------------------
run=$(sql "insert into runs (pipeline_name, owner, facility, yaml, trigger, state, night,
	submitted_at, started_at, ended_at) values ('fleet-synthetic', 'rlfacility', true, '',
	'schedule', 'succeeded', '2026-11-27', now(), now(), now()) returning id")
# the suite's later tests share the database: leave no synthetic fleet behind
cleanup() {
	sql "delete from findings where pipeline_name = 'fleet-synthetic'" >/dev/null
	sql "delete from ceiling_series where pipeline_name = 'fleet-synthetic'" >/dev/null
	sql "delete from runs where pipeline_name = 'fleet-synthetic'" >/dev/null
}
on_exit cleanup
ert=$(sql "insert into steps (run_id, step_id, plugin, on_daemon, state, attempt)
	values ($run, 'ert', 'ert', false, 'succeeded', 1) returning id")
fleet=$(sql "insert into steps (run_id, step_id, plugin, on_daemon, state, attempt)
	values ($run, 'fleet', 'fleet', true, 'succeeded', 1) returning id")
awk -F'\t' -v OFS='\t' -v r="$run" '{ print r, $1, "true", "IDLE", "", $2 }' "$N/nodes.tsv" |
	psql -X -q -v ON_ERROR_STOP=1 -c "copy run_nodes (run_id, node, used, slurm_state, reason, partition) from stdin"
is "$?" 0 "run $run: its 2,000 nodes and their partitions"
to_copy() { # to_copy STEP RUN < records.tsv: step_records rows for COPY
	python3 -c '
import json, sys
step, run = sys.argv[1], sys.argv[2]
def unesc(v):
    out, i = [], 0
    while i < len(v):
        if v[i] == "\\" and i + 1 < len(v):
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(v[i + 1], v[i + 1])); i += 2
        else:
            out.append(v[i]); i += 1
    return "".join(out)
for seq, line in enumerate(sys.stdin, 1):
    p = line.rstrip("\n").split("\t")
    f = dict((k, unesc(v)) for k, v in (x.split("=", 1) for x in p[1:]))
    j = json.dumps(f).replace("\\", "\\\\")
    print("\t".join([step, "1", str(seq), run, p[0], f.get("node", ""), j]))' "$@"
}
# The ceilings of the perturbed GPUs' nodes go in through ingest's routing
# triggers (ceilings, ceiling_series: their history pages); all 139,000
# take minutes here (nightscale's benchmark measures the ingest at scale).
t=$(date +%s.%N)
cut -f1 "$N/perturbed.tsv" | sort -u | sed 's/^/\tnode=/; s/$/\t/' >"$TEST_TMP/pnodes"
grep -F -f "$TEST_TMP/pnodes" "$N/ert/records.tsv" >"$TEST_TMP/pceilings.tsv"
nceil=$(wc -l <"$TEST_TMP/pceilings.tsv")
to_copy "$ert" "$run" <"$TEST_TMP/pceilings.tsv" |
	psql -X -q -v ON_ERROR_STOP=1 -c "copy step_records (step, attempt, seq, run_id, kind, node, fields) from stdin"
is "$?" 0 "the perturbed nodes' $nceil ceiling records ingested (COPY, the routing triggers)"
grep -v '^missing_input' "$N/fleet/records.tsv" | to_copy "$fleet" "$run" |
	psql -X -q -v ON_ERROR_STOP=1 -c "copy step_records (step, attempt, seq, run_id, kind, node, fields) from stdin"
is "$?" 0 "and the fleet step's records"
note "records loaded in $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
is "$(sql "select count(*) from ceiling_series where run_ids[cardinality(run_ids)] = $run")" "$nceil" \
	"ceiling_series holds their night"
is "$(sql "select count(*) from findings where first_run = $run")" 68 "68 findings"

# ---- the SQL function and the CLI --------------------------------------------------
is "$(sql "select count(*), count(*) filter (where flagged), count(distinct gpu_uuid),
	count(distinct gpu_name), count(distinct partition) from rl_fleet_tonight('fleet-synthetic')")" \
	"139000|68|8000|2|3" "rl_fleet_tonight: 139,000 figures, 68 flagged, 8,000 GPUs, 2 models, 3 partitions"
is "$(sql "select node || '/' || gpu_index || ' ' || ceiling from rl_fleet_tonight('fleet-synthetic') limit 1")" \
	"$(sql "select node || '/' || gpu_index || ' ' || ceiling from rl_fleet_tonight('fleet-synthetic')
		where flagged order by pct limit 1")" "its first row is the lowest flagged figure"
is "$(sql "select round(percentile_cont(0.5) within group (order by pct))::int
	from rl_fleet_tonight('fleet-synthetic') where gpu_name like '%H200%' and ceiling = 'hbm_triad'")" 100 \
	"the H200s' HBM median is 100 % of their own model's (not the H100s')"

# ---- the site: rebuilt when a run ends ---------------------------------------------
printf 'name: poke\nsteps:\n  - { id: hello, plugin: smoke, on: daemon }\n' >"$TEST_TMP/poke.yaml"
chmod 0644 "$TEST_TMP/poke.yaml"
t=$(date +%s.%N)
poke=$(as alice "$BIN/roofline" submit --wait "$TEST_TMP/poke.yaml" 2>&1)
poke=$(head -1 <<<"$poke")
is "$(run_state "$poke")" succeeded "a run ended (run $poke): the site is rebuilt"
# index.html is written last, after tonight's, the GPUs' and the fleet's pages
wait_for "grep -q 'id=\"tonight-data\"' '$SITE/tonight.html' 2>/dev/null && grep -q 'section id=\"tonight\"' '$SITE/index.html' 2>/dev/null" 60
note "run and site rebuild: $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
size=$(( $(stat -c %s "$SITE/tonight.html") + $(stat -c %s "$SITE/tonight.js") ))
note "tonight.html + tonight.js: $size bytes"
ok "tonight.html + tonight.js: $size bytes, under the limit ($SIZE_LIMIT)" test "$size" -lt "$SIZE_LIMIT"
is "$(ls "$SITE/gpus" | wc -l)" 8000 "a history page per GPU"
is "$(grep -c '<tr class="flag">' "$SITE/tonight.html")" 68 "the static flagged table: 68 rows"
is "$(sed -n 's/.*<meta http-equiv="Content-Security-Policy" content="\([^"]*\)".*/\1/p' "$SITE/tonight.html")" \
	"default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'" \
	"its CSP: no script but its own file"
unlike "$(grep -o '<script[^>]*>' "$SITE/tonight.html" | grep -v 'src="tonight.js"\|type="application/json"')" "." \
	"no inline script (the data block is JSON, not run)"
is "$(grep -o 'script-src [^;]*' "$SITE/fleet.html")" "script-src 'none'" "the other pages still run none"

# ---- in the browser ---------------------------------------------------------------
dom() { # dom FRAGMENT: the page's DOM once tonight.js has drawn it
	env -u DBUS_SESSION_BUS_ADDRESS chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TEST_TMP/chromium" --virtual-time-budget=10000 \
		--dump-dom "file://$SITE/tonight.html#$1" 2>>"$TEST_TMP/chromium.log"
}
rows() { grep -o '<tr data-node="[^"]*" data-gpu="[^"]*" data-pct="[^"]*" data-flagged="[01]"' |
	sed 's/<tr data-node="\([^"]*\)" data-gpu="\([^"]*\)" data-pct="\([^"]*\)" data-flagged="\(.\)"/\1 \2 \3 \4/'; }
count() { sed -n 's/.*<p id="count" class="note">\([0-9]*\) GPUs match.*/\1/p'; }

t=$(date +%s.%N)
d=$(dom "")
is "$(count <<<"$d")" 8000 "the page loads: 8,000 GPUs match"
is "$(rows <<<"$d" | wc -l)" 100 "one page of 100 rows drawn"
is "$(rows <<<"$d" | awk '$4 == 1' | wc -l)" 39 "flagged first: the 39 flagged GPUs lead"
is "$(rows <<<"$d" | head -39 | awk '{ print $3 }' | sort -n -c 2>&1 && echo sorted)" sorted \
	"lowest % first among them"
is "$(grep -o '<tr data-model="[^"]*" data-ceiling="[^"]*"' <<<"$d" | wc -l)" 35 \
	"the summary: a row per model and ceiling (17 + 18)"

d=$(dom "model=NVIDIA%20H200&part=mixed&ceiling=hbm_triad&sort=pct")
is "$(count <<<"$d")" 200 "model H200, partition mixed: 200 GPUs (2 per mixed node)"
is "$(rows <<<"$d" | awk '$2 < 2' | wc -l)" 0 "none of them is GPU 0 or 1 (the mixed nodes' H100s)"
is "$(rows <<<"$d" | head -1 | awk '{ print $1 "/" $2 }')" \
	"$(awk -F'\t' '$5 == "hbm_triad" && $1 >= "gpu-n1901" && $2 >= 2 { print $1 "/" $2 }' "$N/perturbed.tsv" | head -1)" \
	"sorted by %: the mixed partition's perturbed H200 HBM first"
is "$(rows <<<"$d" | awk '{ print $3 }' | sort -n -c 2>&1 && echo sorted)" sorted "ascending"

d=$(dom "node=gpu-n0058&sort=node")
is "$(rows <<<"$d" | awk '{ print $1 "/" $2 }' | tr '\n' ' ')" \
	"gpu-n0058/0 gpu-n0058/1 gpu-n0058/2 gpu-n0058/3 " "node filter and node sort"

d=$(dom "flagged=1&ceiling=tc_fp16")
is "$(count <<<"$d")" "$(awk -F'\t' '$5 == "tc_fp16"' "$N/perturbed.tsv" | wc -l)" \
	"flagged only, ceiling tc_fp16: the perturbed tc_fp16 GPUs"
d=$(dom "sort=pct-desc&page=80")
is "$(count <<<"$d" )" 8000 "page 80 of the descending sort"
like "$(grep -o 'page 80 of 80' <<<"$d")" "page 80 of 80" "the last page"
is "$(rows <<<"$d" | awk '$4 == 1' | wc -l)" 39 "holds the 39 flagged GPUs (the lowest, last)"
note "browser: $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"

# one click away: the flagged row's history page
f=$(grep -o 'href="gpus/G[0-9a-f]*\.html"' "$SITE/tonight.html" | head -1 | sed 's/href="//; s/"$//')
ok "the first flagged row links $f, which exists" test -s "$SITE/$f"
like "$(cat "$SITE/$f")" "GPU-synth-gpu-n" "it names the GPU's UUID"
like "$(grep -c '<tr><td>' "$SITE/$f")" '^1[78]$' "and has a row per ceiling (its node was loaded)"

# ---- roofline fleet --json ------------------------------------------------------------
j=$(as alice "$BIN/roofline" fleet --json --flagged --pipeline fleet-synthetic)
is "$?" 0 "roofline fleet --json --flagged"
is "$(jq '.gpus | length' <<<"$j")" 68 "68 flagged figures"
is "$(jq -r '.gpus[0] | "\(.node)/\(.gpu_index) \(.ceiling)"' <<<"$j")" \
	"$(sql "select node || '/' || gpu_index || ' ' || ceiling from rl_fleet_tonight('fleet-synthetic') limit 1")" \
	"lowest first, as the function orders them"
is "$(jq '.synthetic' <<<"$j")" true "and it says the night is synthetic"
is "$(as alice "$BIN/roofline" fleet --json --model 'NVIDIA H200' --partition mixed --ceiling hbm_triad --pipeline fleet-synthetic | jq '.gpus | length')" \
	200 "--model --partition --ceiling filter as the page does"
cleanup
is "$(sql "select (select count(*) from runs where pipeline_name = 'fleet-synthetic') + (select count(*) from findings where pipeline_name = 'fleet-synthetic') + (select count(*) from ceiling_series where pipeline_name = 'fleet-synthetic')")" 0 \
	"the synthetic fleet is removed (later tests share the database)"
note "test time: $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
done_testing
