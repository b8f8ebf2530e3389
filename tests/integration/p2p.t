#!/bin/bash
# A node of 4 GPUs (issue 29), recorded on 4 x H200 (tests/fixtures/p2p):
# its peer-to-peer matrix and its concurrent run replayed through the ert
# plugin, stored by the daemon and judged by the fleet step.  The p2p rows
# carry their peer and link in the columns of sql/019_p2p.sql, the
# concurrent rows their mode; neither enters a GPU's nightly series; the
# fleet step's records name the mode they were compared within.  Expected
# counts come from the recordings, read here.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

F=$ROOT/tests/fixtures/p2p
count() { grep -c "^$1	" "$2"; }
N_P2P=$(count ceiling "$F/p2p.tsv")
N_PAIRS=$(grep '^ceiling	' "$F/p2p.tsv" | grep -o 'gpu=[0-9]*	peer=[0-9]*' | sort -u | wc -l)
N_CONC=$(count ceiling "$F/concurrent.tsv")
N_GPUS=$(count attr "$F/concurrent.tsv")
like "$N_P2P $N_PAIRS $N_CONC $N_GPUS" '^[1-9][0-9]* [1-9][0-9]* [1-9][0-9]* [1-9]$' \
	"the recordings read ($N_P2P p2p figures over $N_PAIRS ordered pairs, $N_CONC concurrent figures of $N_GPUS GPUs)"

cp "$F/p2p.tsv" "$F/concurrent.tsv" "$ROOT/tests/pipelines/node-p2p.yaml" "$TEST_TMP/"
chmod 0644 "$TEST_TMP"/*.tsv "$TEST_TMP/node-p2p.yaml"
out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/p2p.tsv" \
	--attach "$TEST_TMP/concurrent.tsv" "$TEST_TMP/node-p2p.yaml" 2>&1)
run=$(head -1 <<<"$out")
like "$run" '^[0-9]+$' "the pipeline ran (run $run)" || bail_out "no run: $out"
is "$(run_state "$run")" succeeded "and succeeded"

# ---- p2p: one row per figure, the pair and its link ---------------------------
p2p="run_id = $run and name like 'p2p\\_%'"
is "$(sql "select count(*) from ceilings where $p2p")" "$N_P2P" "every p2p figure is a ceiling row"
is "$(sql "select count(*) from ceilings where $p2p and peer_index is not null and peer_uuid like 'GPU-%' and peer_index <> gpu_index and link = 'NV18'")" \
	"$N_P2P" "each with its peer's index and UUID, and the link nvidia-smi named (NV18)"
is "$(sql "select count(distinct (gpu_index, peer_index)) from ceilings where $p2p")" "$N_PAIRS" "over every ordered pair"
# the peer's UUID is the UUID of the row of the peer's own index
is "$(sql "select count(*) from ceilings a where a.run_id = $run and a.name like 'p2p\\_%' and a.peer_uuid is distinct from (select max(b.gpu_uuid) from ceilings b where b.run_id = $run and b.name like 'p2p\\_%' and b.gpu_index = a.peer_index)")" \
	0 "the peer's UUID is that GPU's"
is "$(sql "select count(*) from ceilings where run_id = $run and name = 'p2p_memcpy' and value = $(grep -P '^ceiling\tgpu=0\tpeer=1\tname=p2p_memcpy\t' "$F/p2p.tsv" | grep -o 'median=[0-9.e+]*' | cut -d= -f2) and gpu_index = 0 and peer_index = 1")" \
	1 "0 -> 1 p2p_memcpy stored with the recorded median"

# ---- the concurrent run: its mode ----------------------------------------------
conc="c.run_id = $run and s.step_id = 'concurrent'"
is "$(sql "select count(*) || ' ' || count(*) filter (where c.mode = 'concurrent') || ' ' || count(distinct c.gpu_uuid) from ceilings c join steps s on s.id = c.step where $conc")" \
	"$N_CONC $N_CONC $N_GPUS" "every concurrent figure of every GPU stored with mode 'concurrent'"
is "$(sql "select count(*) from ceilings where $p2p and mode is not null")" 0 "the p2p run named no mode"

# ---- a GPU's nightly series holds its own sequential figures only --------------
is "$(sql "select count(*) from ceiling_series where gpu_uuid in (select gpu_uuid from ceilings where run_id = $run)")" \
	0 "neither p2p pairs nor concurrent figures enter the nightly series"
is "$(sql "select count(*) || ' ' || count(*) filter (where mode = 'concurrent') from fleet_ceilings where run_id = $run")" \
	"$N_GPUS $N_GPUS" "fleet_ceilings: one row per GPU and mode, the pairs left out"

# ---- the fleet step: like with like --------------------------------------------
fleet="r.run_id = $run and r.kind = 'fleet_gpu'"
is "$(sql "select count(*) filter (where r.fields ->> 'mode' = 'concurrent') || ' ' || count(*) filter (where r.fields ->> 'link' = 'NV18' and r.fields ->> 'peer_index' <> '') from step_records r where $fleet")" \
	"$N_CONC $N_P2P" "fleet_gpu records name their mode, and a pair's peer and link"
done_testing
