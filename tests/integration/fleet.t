#!/bin/bash
# The nightly ceilings pipeline over the multi-node local cluster, replayed
# (issue 10, items 4 and 5): every stand-in GPU of every node gets the
# recorded H100's ceilings under its own index and UUID, each job ran on the
# node it was pinned to (no accounting storage here: the node the job's exit
# record names, steps.exec_node, against steps.node), declared perturbations land in exactly the rows of
# their GPU, labelled synthetic; with a node drained, it is recorded as not
# used, the other GPUs get rows and the daemon step after them lists it.
# Expected values are computed here from the recording and the spec table.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

mapfile -t NODES < <(scontrol show hostnames "$(sinfo -h -p gpu -o '%N' | head -1)")
((${#NODES[@]} >= 4)) || bail_out "fleet.t needs a cluster of 4 nodes or more, not ${#NODES[@]}"
resume_all() {
	local n
	for n in $(sinfo -h -p gpu -t drain,down -o '%N' | xargs -r scontrol show hostnames); do
		scontrol update nodename="$n" state=resume >/dev/null 2>&1 || true
	done
}
on_exit resume_all

# The stand-in GPUs Slurm knows of, "NODE:INDEX" sorted (gres gpu:[TYPE:]N).
gpus_of() { # gpus_of NODE...
	local n count
	for n in "$@"; do
		count=$(sinfo -h -N -n "$n" -o '%G' | head -1 | sed -E 's/^gpu:([^:(]*:)?([0-9]+).*/\2/')
		for ((i = 0; i < count; i++)); do echo "$n:$i"; done
	done | sort | paste -sd,
}
ALL_GPUS=$(gpus_of "${NODES[@]}")
N_GPUS=$(tr ',' '\n' <<<"$ALL_GPUS" | wc -l)
ok "the cluster has 2 stand-in GPUs per node ($N_GPUS: $ALL_GPUS)" test "$N_GPUS" -eq $((2 * ${#NODES[@]}))

# ---- the recording, read here ------------------------------------------------
REC=$ROOT/tests/fixtures/ert/h100-quick.tsv
field() { # field TYPE NAME KEY: KEY of the recording's TYPE line named NAME (or the first)
	awk -F'\t' -v t="$1" -v n="$2" -v k="$3" '$1 == t {
		delete v; for (i = 2; i <= NF; i++) { p = index($i, "="); v[substr($i, 1, p - 1)] = substr($i, p + 1) }
		if (n == "" || v["name"] == n) { print v[k]; exit } }' "$REC"
}
REC_UUID=$(field attr "" uuid)
REC_DRIVER=$(field attr "" driver)
REC_CC=$(field attr "" cc)
# ert: one row per recorded ceiling line, plus the L2 plateau of the cg sweep
N_ERT=$(awk -F'\t' '$1 == "ceiling" { n++ } $1 == "sweep" && /\tseries=cg\t/ { cg = 1 } END { print n + cg }' "$REC")
# spec: one row per table row of the recorded GPU's compute capability
N_SPEC=$(awk -F'\t' -v cc="$REC_CC" '!/^#/ && $1 == cc { n++ } END { print n }' "$ROOT/etc/spec-ceilings.tsv")
like "$REC_UUID $N_ERT $N_SPEC" '^GPU-[0-9a-f-]+ [0-9]+ [0-9]+$' "the recording read ($REC_UUID, $N_ERT measured and $N_SPEC theoretical ceilings per GPU)"

cp "$REC" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/h100-quick.tsv"
PIPE=$ROOT/pipelines/nightly-ceilings-replay.yaml
# The test's perturbations, added to both steps' options.
P_HBM="${NODES[1]}/1 hbm_triad -12%"
P_CLK="${NODES[2]}/0 fp64_fma sm_clock=1410"
P_DRV="${NODES[3]}/* driver=535.54"
sed -E "s|^( +)(attributes\|replay): inputs/h100-quick.tsv\$|&\n\1perturb: [\"$P_HBM\", \"$P_CLK\", \"$P_DRV\"]|" \
	"$PIPE" >"$TEST_TMP/perturbed.yaml"
cp "$PIPE" "$TEST_TMP/plain.yaml"
chmod 0644 "$TEST_TMP/perturbed.yaml" "$TEST_TMP/plain.yaml"
is "$(grep -c '^ *perturb: ' "$TEST_TMP/perturbed.yaml")" 2 "the perturbations go to spec and ert"

submit() { # submit FILE: the run id, after it ended
	local out
	out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/h100-quick.tsv" "$1" 2>&1)
	head -1 <<<"$out"
}

# ---- every GPU of every node -------------------------------------------------
run=$(submit "$TEST_TMP/perturbed.yaml")
like "$run" '^[0-9]+$' "the replayed nightly pipeline ran (run $run)"
is "$(run_state "$run")" succeeded "and succeeded"
is "$(sql "select string_agg(step_id || '@' || node || ':' || state, ',' order by step_id, node) from steps where run_id = $run and slurm_job_id is not null")" \
	"$(for s in ert spec; do for n in "${NODES[@]}"; do printf '%s@%s:succeeded\n' "$s" "$n"; done; done | paste -sd,)" \
	"spec and ert ran as one Slurm job per node"
is "$(sql "select count(*) from steps where run_id = $run and slurm_job_id is not null and (exec_node is null or exec_node <> node)")" 0 \
	"each job ran on the node it was pinned to (steps.exec_node = steps.node)"
# Slurm's own record of each job (kept MinJobAge=300 s after its end; the
# local cluster has no accounting storage): the node it ran on
mismatch=""
while read -r job node; do
	got=$(scontrol show job "$job" 2>/dev/null | sed -n 's/^ *NodeList=\([^ ]*\).*/\1/p')
	[[ $got == "$node" ]] || mismatch+=" job $job: Slurm says '$got', pinned to '$node';"
done < <(sql "select slurm_job_id, node from steps where run_id = $run and slurm_job_id is not null" | tr '|' ' ')
is "$mismatch" "" "Slurm's record of each job names the node it was meant for"
is "$(sql "select count(*) from ceilings c join steps s on s.id = c.step where c.run_id = $run and c.node <> s.node")" 0 \
	"and every ceiling row carries the node its job recorded"
is "$(sql "select string_agg(distinct node || ':' || gpu_index, ',' order by node || ':' || gpu_index) from ceilings where run_id = $run and method = 'empirical'")" \
	"$ALL_GPUS" "measured ceilings for every stand-in GPU of every node"
is "$(sql "select count(distinct gpu_uuid) || ' ' || count(distinct (node, gpu_index)) from ceilings where run_id = $run")" \
	"$N_GPUS $N_GPUS" "each GPU with its own UUID"
is "$(sql "select count(*) from ceilings where run_id = $run and gpu_uuid is distinct from 'GPU-replay-' || node || '-' || gpu_index || '-of-$REC_UUID'")" 0 \
	"which names the node, the index and the recorded GPU"
is "$(sql "select string_agg(distinct n::text, ',') from (select count(*) as n from ceilings where run_id = $run group by gpu_uuid, method order by 1) x")" \
	"$(printf '%s\n' "$N_ERT" "$N_SPEC" | sort -n | uniq | paste -sd,)" \
	"every GPU has all $N_ERT measured and $N_SPEC theoretical ceilings"
is "$(sql "select count(*) from ceilings where run_id = $run and synthetic is null")" 0 \
	"every replayed row is labelled synthetic"
is "$(sql "select count(*) from ceilings where run_id = $run and synthetic = 'replay of $REC_UUID (h100-quick.tsv gpu 0)'")" \
	"$(((N_ERT + N_SPEC) * N_GPUS - 1 - 1 - N_ERT * 2 - N_SPEC * 2))" \
	"unperturbed rows: 'replay of' the recorded GPU, and nothing else"

# -- the perturbations, each in exactly the rows of its GPU
want=$(awk -v m="$(field ceiling hbm_triad median)" 'BEGIN { printf "%.6e", m * 0.88 }')
is "$(sql "select node || '/' || gpu_index || ' ' || name || ' ' || to_char(value, '9.999999EEEE') from ceilings where run_id = $run and synthetic like '%perturbed:%hbm_triad -12\%%'" | tr -s ' ')" \
	"${NODES[1]}/1 hbm_triad $want" "$P_HBM: that GPU's measured triad 12 % lower, and only there"
is "$(sql "select count(*) from ceilings where run_id = $run and method = 'empirical' and name = 'hbm_triad' and value = $(field ceiling hbm_triad median)")" \
	"$((N_GPUS - 1))" "the other GPUs' triad as recorded"
want=$(awk -v m="$(field ceiling fp64_fma median)" -v c="$(field ceiling fp64_fma sm_clock_mhz)" 'BEGIN { printf "%.6e", m * 1410 / c }')
is "$(sql "select node || '/' || gpu_index || ' ' || name || ' ' || to_char(value, '9.999999EEEE') || ' ' || sm_clock_mhz from ceilings where run_id = $run and synthetic like '%perturbed:%sm_clock=1410%'" | tr -s ' ')" \
	"${NODES[2]}/0 fp64_fma $want 1410" "$P_CLK: that GPU's FP64 FMA at 1410 MHz, the clock recorded"
is "$(sql "select string_agg(distinct node || ':' || driver, ',') from ceilings where run_id = $run and synthetic like '%perturbed:%driver=535.54'")" \
	"${NODES[3]}:535.54" "$P_DRV: the older driver on that node only"
is "$(sql "select count(*) from ceilings where run_id = $run and node = '${NODES[3]}' and driver = '535.54'")" \
	"$(((N_ERT + N_SPEC) * 2))" "on all its rows, measured and theoretical"
is "$(sql "select string_agg(distinct driver, ',') from ceilings where run_id = $run and node <> '${NODES[3]}'")" \
	"$REC_DRIVER" "the others report the recorded driver"

# -- the docs' query (docs/fleet.md): one row per GPU tonight
is "$(sql "select count(*) || ' ' || count(*) filter (where synthetic) || ' ' || count(*) filter (where perturbed is not null) from fleet_ceilings where run_id = $run")" \
	"$N_GPUS $N_GPUS 4" "fleet_ceilings: one row per GPU, all synthetic, 4 perturbed (1 + 1 + the 2 of ${NODES[3]})"
is "$(sql "select node || '/' || gpu_index || ': ' || perturbed from fleet_ceilings where run_id = $run and perturbed is not null order by node, gpu_index" | paste -sd'|')" \
	"${NODES[1]}/1: $P_HBM|${NODES[2]}/0: $P_CLK|${NODES[3]}/0: $P_DRV|${NODES[3]}/1: $P_DRV" \
	"naming each GPU's perturbations"
# docs/fleet.md's query of tonight's fleet, run as written there
awk '/<!-- fleet.t: query -->/ { on = 1; next } on && /^```sql/ { inq = 1; next } inq && /^```/ { exit } inq' \
	"$ROOT/docs/fleet.md" >"$TEST_TMP/query.sql"
like "$(cat "$TEST_TMP/query.sql")" "fleet_ceilings" "the query taken from docs/fleet.md"
psql -X -q -t -A -F' ' -v ON_ERROR_STOP=1 -v pipeline=nightly-ceilings-replay -f "$TEST_TMP/query.sql" >"$TEST_TMP/query.out" 2>&1
is "$(cut -d' ' -f1,2 "$TEST_TMP/query.out" | tr ' ' ':' | paste -sd,)" "$ALL_GPUS" "it gives one row per GPU"
is "$(awk '$9 != "100.0" || $8 != "100.0" { print $1 "/" $2, $8, $9 }' "$TEST_TMP/query.out" | paste -sd'|')" \
	"${NODES[1]}/1 100.0 88.0|${NODES[2]}/0 $(awk -v c="$(field ceiling fp64_fma sm_clock_mhz)" 'BEGIN { printf "%.1f", 100 * 1410 / c }') 100.0" \
	"and shows the two GPUs below the fleet's median, by how much"
is "$(sql "select state from steps where run_id = $run and step_id = 'summary'")" succeeded \
	"the daemon step after the fan-out ran"
is "$(sql "select count(*) from step_records r join steps s on s.id = r.step where s.run_id = $run and r.kind = 'missing_input'")" 0 \
	"and missed nothing"

# ---- one node drained --------------------------------------------------------
drained=${NODES[3]}
scontrol update nodename="$drained" state=drain reason="fleet test drain"
run=$(submit "$TEST_TMP/plain.yaml")
like "$run" '^[0-9]+$' "with $drained drained, the pipeline ran (run $run)"
is "$(sql "select count(*) filter (where used) || ' used, ' || string_agg(case when not used then node || ' ' || slurm_state || ' (' || reason || ')' end, ',') from run_nodes where run_id = $run")" \
	"$((${#NODES[@]} - 1)) used, $drained DRAINED (fleet test drain)" \
	"the drained node is recorded as not used, with Slurm's state and reason"
is "$(sql "select string_agg(distinct partition, ',') from run_nodes where run_id = $run")" gpu \
	"every node is recorded with the run's partition (run_nodes.partition, sql/023)"
like "$(as alice "$BIN/roofline" status "$run")" "node $drained not used: DRAINED \(fleet test drain\)" \
	"roofline status shows it"
is "$(sql "select string_agg(distinct node || ':' || gpu_index, ',' order by node || ':' || gpu_index) from ceilings where run_id = $run and method = 'empirical'")" \
	"$(gpus_of "${NODES[@]:0:3}" "${NODES[@]:4}")" "the other $((N_GPUS - 2)) GPUs are measured"
is "$(sql "select count(distinct gpu_uuid) from ceilings where run_id = $run")" "$((N_GPUS - 2))" "each with its UUID"
is "$(sql "select count(*) from ceilings where run_id = $run and synthetic like '%perturbed%'")" 0 \
	"no perturbation declared, none applied"
is "$(sql "select state from steps where run_id = $run and step_id = 'summary'")" succeeded \
	"the daemon step after them ran"
is "$(sql "select string_agg(fields->>'step' || ' ' || (fields->>'why'), '|' order by fields->>'step') from step_records r join steps s on s.id = r.step where s.run_id = $run and s.step_id = 'summary' and r.kind = 'missing_input'")" \
	"ert@$drained node not used: DRAINED (fleet test drain)|spec@$drained node not used: DRAINED (fleet test drain)" \
	"and lists the missing node, for both steps"
resume_all

done_testing
