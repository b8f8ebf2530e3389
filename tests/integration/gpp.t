#!/bin/bash
# The GPP case studies of the seeds, replayed from the H100 recordings of
# tests/fixtures/gpp through the real Slurm job path (pipelines/gpp-replay.yaml
# and gpp-versions-replay.yaml: spec, ert and ncu-import as Slurm jobs, the
# analyses and charts on the daemon side), and the seeds' qualitative claims
# checked on what reached the database:
#   GTC 2019 slides 61-65: AI at HBM rises monotonically with nw, HBM and L1
#   bytes stay; no-FMA GFLOP/s stay under the no-FMA ceiling; stride 2 has
#   about twice stride 1's L1 bytes and stride 4 about stride 2's;
#   SC20: v8 is faster than v1.
# The stored values are first checked against the recordings, read here with
# perl independently of the plugins' parsers, so the claims are about the
# measurements and not about what a parser made of them.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

F=$ROOT/tests/fixtures
G=$F/gpp
for f in "$F/ert/h100-quick.tsv" "$G"/nw.raw.csv "$G"/nw-nofma.raw.csv "$G"/stride.raw.csv "$G"/v[1-8].raw.csv \
	"$ROOT"/pipelines/gpp-replay.yaml "$ROOT"/pipelines/gpp-versions-replay.yaml; do
	cp "$f" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/$(basename "$f")"
done

for p in gpp gpp-versions gpp-replay gpp-versions-replay; do
	is "$("$BIN/roofline" validate "$ROOT/pipelines/$p.yaml" 2>&1)" "$ROOT/pipelines/$p.yaml: ok" \
		"roofline validate pipelines/$p.yaml"
done

# csv_col FILE KERNEL METRIC: METRIC of the launch named KERNEL (exactly, as
# ncu printed it) in the recording FILE, thousands separators removed.
csv_col() {
	perl -ne 'BEGIN { ($k, $m) = splice(@ARGV, 0, 2) } next unless /^"/;
		chomp; s/\r$//; my @c = map { s/^"|"$//gr } split /,(?=(?:[^"]*"[^"]*")*[^"]*$)/;
		if (!@h) { @h = @c; next }
		my %r; @r{@h} = @c; print $r{$m} =~ s/,//gr, "\n" if $r{"Kernel Name"} eq $k' "$2" "$3" "$1"
}
# FP64 FLOPs of a launch in a recording: DADD + 2 DFMA + DMUL
csv_flops() {
	local m=sm__sass_thread_inst_executed_op_
	perl -e 'print $ARGV[0] + 2 * $ARGV[1] + $ARGV[2], "\n"' \
		"$(csv_col "$1" "$2" ${m}dadd_pred_on.sum)" "$(csv_col "$1" "$2" ${m}dfma_pred_on.sum)" \
		"$(csv_col "$1" "$2" ${m}dmul_pred_on.sum)"
}
# point RUN STEP KERNEL LEVEL COLUMN: the fp64 aggregate point's COLUMN
point() {
	sql "select p.$5 from points p join steps s on s.id = p.step where p.run_id = $1 and s.step_id = '$2'
		and p.kernel = '$3' and p.level = '$4' and p.precision = 'fp64' and p.invocation = 'all'"
}
# profile RUN STEP KERNEL METRIC: the stored metric of the launch
profile() {
	sql "select k.metrics->>'$4' from kernel_profiles k join steps s on s.id = k.step
		where k.run_id = $1 and s.step_id = '$2' and k.kernel = '$3'"
}
# close A B REL: |A - B| <= REL |B|
close() { perl -e 'exit !($ARGV[1] != 0 && abs($ARGV[0] - $ARGV[1]) <= $ARGV[2] * abs($ARGV[1]))' "$@"; }
lt() { perl -e 'exit !($ARGV[0] < $ARGV[1])' "$@"; }

# ---- GTC 2019: nw sweep, FMA on/off, stride -------------------------------------
out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/h100-quick.tsv" \
	--attach "$TEST_TMP/nw.raw.csv" --attach "$TEST_TMP/nw-nofma.raw.csv" \
	--attach "$TEST_TMP/stride.raw.csv" "$TEST_TMP/gpp-replay.yaml" 2>&1)
is "$?" 0 "the GPP replay pipeline succeeded"
run=$(head -1 <<<"$out")
is "$(sql "select count(*) from steps where run_id = $run and slurm_job_id is not null and state = 'succeeded'")" 5 \
	"spec, ert and the three ncu-import steps ran as Slurm jobs"
is "$(sql "select count(*) from steps where run_id = $run and on_daemon and state = 'succeeded'")" 6 \
	"three analyses and three charts ran on the daemon side"

k() { printf 'void gpp_v1<%d, %d>(gpp_args)' "$1" "$2"; }
like "$(csv_col "$G/nw.raw.csv" "$(k 6 1)" dram__bytes.sum)" '^[0-9]+$' "the recording is read here (nw = 6's DRAM bytes)"

# -- experiment 1: AI at HBM rises monotonically with nw
prev=0
mono=1
for nw in 1 2 3 4 5 6; do
	want=$(perl -e 'printf "%.17g", $ARGV[0] / $ARGV[1]' "$(csv_flops "$G/nw.raw.csv" "$(k $nw 1)")" \
		"$(csv_col "$G/nw.raw.csv" "$(k $nw 1)" dram__bytes.sum)")
	got=$(point "$run" roofline-nw "$(k $nw 1)" dram ai)
	ok "nw = $nw: stored HBM AI $got is the recording's FLOPs / DRAM bytes ($want)" close "$got" "$want" 1e-9
	lt "$prev" "$got" || mono=0
	diag "nw = $nw: AI(HBM) $got"
	prev=$got
done
is "$mono" 1 "AI at HBM increases monotonically with nw (GTC slide 61)"
d1=$(point "$run" roofline-nw "$(k 1 1)" dram bytes)
d6=$(point "$run" roofline-nw "$(k 6 1)" dram bytes)
ok "HBM bytes stay constant with nw: nw = 6 moves $d6, nw = 1 $d1 (within 5%)" close "$d6" "$d1" 0.05
l1=$(point "$run" roofline-nw "$(k 1 1)" l1 bytes)
l6=$(point "$run" roofline-nw "$(k 6 1)" l1 bytes)
ok "L1 bytes stay constant with nw: $l6 against $l1 (within 1%) (slide 64)" close "$l6" "$l1" 0.01
f1=$(point "$run" roofline-nw "$(k 1 1)" dram flops)
f6=$(point "$run" roofline-nw "$(k 6 1)" dram flops)
ok "FLOPs grow with nw: nw = 6 does more than 4 x nw = 1's ($f6, $f1)" lt "$(perl -e 'print 4 * $ARGV[0]' "$f1")" "$f6"
is "$(point "$run" roofline-nw "$(k 1 1)" dram verdict)" bandwidth-bound "nw = 1 is bandwidth-bound"
is "$(point "$run" roofline-nw "$(k 6 1)" dram verdict)" compute-bound "nw = 6 is compute-bound (slide 61)"

# -- experiment 2: no-FMA GFLOP/s never above the no-FMA ceiling
add=$(sql "select value from ceilings where run_id = $run and method = 'empirical' and name = 'fp64_add'")
like "$add" '^[0-9.e+]+$' "the no-FMA ceiling (fp64_add) of the replayed ert run is stored ($add FLOP/s)"
for nw in 1 2 3 4 5 6; do
	want=$(perl -e 'printf "%.17g", $ARGV[0] / ($ARGV[1] * 1e-9) / 1e9' "$(csv_flops "$G/nw-nofma.raw.csv" "$(k $nw 1)")" \
		"$(csv_col "$G/nw-nofma.raw.csv" "$(k $nw 1)" gpu__time_duration.sum)")
	got=$(point "$run" roofline-nofma "$(k $nw 1)" dram gflops)
	ok "no-FMA nw = $nw: stored $got GFLOP/s are the recording's FLOPs / time ($want)" close "$got" "$want" 1e-9
	ok "no-FMA nw = $nw: $got GFLOP/s <= the no-FMA ceiling" perl -e 'exit !($ARGV[0] * 1e9 <= $ARGV[1])' "$got" "$add"
	af=$(point "$run" roofline-nw "$(k $nw 1)" dram alpha)
	an=$(point "$run" roofline-nofma "$(k $nw 1)" dram alpha)
	ok "nw = $nw: --fmad=false lowers the FMA ratio ($af -> $an)" lt "$an" "$af"
done

# -- experiment 3: stride doubles the L1 bytes from 1 to 2, then they stay
s1=$(profile "$run" stride "$(k 6 1)" l1tex__t_bytes.sum)
s2=$(profile "$run" stride "$(k 6 2)" l1tex__t_bytes.sum)
s4=$(profile "$run" stride "$(k 6 4)" l1tex__t_bytes.sum)
is "$s2" "$(csv_col "$G/stride.raw.csv" "$(k 6 2)" l1tex__t_bytes.sum)" "stride 2's L1 bytes stored as recorded"
is "$s1" "$(csv_col "$G/stride.raw.csv" "$(k 6 1)" l1tex__t_bytes.sum)" "stride 1's too"
ok "stride 2 has about twice stride 1's L1 bytes ($s2 / $s1, within 10%) (slide 65)" \
	close "$(perl -e 'print $ARGV[0] / $ARGV[1]' "$s2" "$s1")" 2 0.1
ok "stride 4's L1 bytes stay at stride 2's ($s4, $s2, within 10%)" close "$s4" "$s2" 0.1

for c in chart-nw chart-fma chart-stride; do
	f=$(sql "select r.fields->>'file' from step_records r join steps s on s.id = r.step where s.run_id = $run
		and s.step_id = '$c' and r.kind = 'chart' and r.fields->>'format' = 'png'")
	d=$(sql "select spool_dir from runs where id = $run")/$c/attempt-1
	is "$(head -c 4 "$d/$f" 2>/dev/null | od -An -c | tr -d ' ')" "211PNG" "$c drew a PNG ($f)"
done
is "$(sql "select r.fields->>'series' from step_records r join steps s on s.id = r.step where s.run_id = $run
	and s.step_id = 'chart-fma' and r.kind = 'chart' and r.fields->>'format' = 'png'")" 2 \
	"the FMA chart compares two series"

# -- the view keeps the FMA and no-FMA analyses of one kernel apart
is "$(sql "select count(*) from roofline_points where run_id = $run and kernel = '$(k 6 1)'")" \
	"$(grep -c 'plugin: hierarchical' "$ROOT/pipelines/gpp-replay.yaml")" \
	"roofline_points has a row of $(k 6 1) per analysis step"
fma=$(sql "select gflops from roofline_points where run_id = $run and kernel = '$(k 6 1)' and step = 'roofline-nw'")
nofma=$(sql "select gflops from roofline_points where run_id = $run and kernel = '$(k 6 1)' and step = 'roofline-nofma'")
ok "and their GFLOP/s differ ($fma with FMA, $nofma without)" test "$fma" != "$nofma"
like "$(as alice "$BIN/roofline" show "$run")" "\[roofline-nofma\]
void gpp_v1<1, 1>\(gpp_args\)" \
	"roofline show heads each analysis step's rows with its name"

# ---- SC20: v1 .. v8 -----------------------------------------------------------
att=(--attach "$TEST_TMP/h100-quick.tsv")
for v in 1 2 3 4 5 6 7 8; do att+=(--attach "$TEST_TMP/v$v.raw.csv"); done
out=$(as alice "$BIN/roofline" submit --wait "${att[@]}" "$TEST_TMP/gpp-versions-replay.yaml" 2>&1)
is "$?" 0 "the GPP versions replay pipeline succeeded"
run=$(head -1 <<<"$out")
is "$(sql "select count(*) from steps where run_id = $run and slurm_job_id is not null and state = 'succeeded'")" 10 \
	"spec, ert and eight ncu-import steps ran as Slurm jobs"
v1='void gpp_v1<3, 1>(gpp_args)'
v8='void gpp_v8<3>(gpp_args)'
t1=$(point "$run" v1 "$v1" dram time_s)
t8=$(point "$run" v8 "$v8" dram time_s)
ok "v1's time is the recording's duration" close "$t1" "$(perl -e 'print $ARGV[0] * 1e-9' "$(csv_col "$G/v1.raw.csv" "$v1" gpu__time_duration.sum)")" 1e-12
ok "v8's time is the recording's duration" close "$t8" "$(perl -e 'print $ARGV[0] * 1e-9' "$(csv_col "$G/v8.raw.csv" "$v8" gpu__time_duration.sum)")" 1e-12
ok "v8 is faster than v1 ($t8 s against $t1 s; SC20: 2.84x)" lt "$t8" "$t1"
diag "speedup v1 -> v8: $(perl -e 'printf "%.2f", $ARGV[0] / $ARGV[1]' "$t1" "$t8")x"
dv7=$(point "$run" v7 'void gpp_v7<3>(gpp_args)' dram bytes)
dv6=$(point "$run" v6 'void gpp_v6<3>(gpp_args)' dram bytes)
ok "cache blocking (v7) moves less than a fifth of v6's HBM bytes ($dv7, $dv6) (SC20: 465 -> 47 GB/s)" \
	lt "$(perl -e 'print 5 * $ARGV[0]' "$dv7")" "$dv6"
is "$(sql "select r.fields->>'series' from step_records r join steps s on s.id = r.step where s.run_id = $run
	and s.step_id = 'chart' and r.kind = 'chart' and r.fields->>'format' = 'png'")" 8 \
	"the comparison chart has the eight versions as series"
a8=$(point "$run" v8 "$v8" dram alpha)
d=$(sql "select spool_dir from runs where id = $run")/chart/attempt-1
want="FP64 partial FMA (alpha $(printf '%.2f' "$a8"))"
ok "the comparison chart draws v8's partial-FMA ceiling ('$want')" grep -qF "$want" "$d/compare.svg"

done_testing
