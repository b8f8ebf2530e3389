#!/bin/bash
# The HTML run report (issue 14) on the real local cluster: kernel-abc-replay
# ends with the `report` step; its page is checked as a file (owner, mode,
# tidy), in a real headless browser (Chromium: the DOM's kernel rows and
# advice, a screenshot whose chart area holds the three kernels' colours),
# through `roofline open`, against a second run (the baseline), and on the
# facility site the daemon rebuilds under web_root.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
for p in chromium tidy; do
	command -v "$p" >/dev/null || bail_out "$p not installed (scripts/deps)"
done
daemon_setup
SITE=$TEST_TMP/site
printf 'web_root: %s\nweb_group: www-data\n' "$SITE" >>"$DAEMON_CONF"
daemon_start

F=$ROOT/tests/fixtures
for f in "$F/ert/h100-quick.tsv" "$F/ncu/kernel_abc.raw.csv"; do
	cp "$f" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/$(basename "$f")"
done
cp "$ROOT/pipelines/kernel-abc-replay.yaml" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/kernel-abc-replay.yaml"
submit() { # the run id, once the run has ended
	local out
	out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/h100-quick.tsv" \
		--attach "$TEST_TMP/kernel_abc.raw.csv" "$TEST_TMP/kernel-abc-replay.yaml" 2>&1)
	head -1 <<<"$out"
}
run=$(submit)
is "$(run_state "$run")" succeeded "kernel-abc-replay (run $run) succeeded"
is "$(sql "select state from steps where run_id = $run and step_id = 'report'")" succeeded \
	"its report step succeeded"
is "$(sql "select fields->>'kernels' || ' ' || ((fields->>'ceilings')::int > 0) from step_records where run_id = $run and kind = 'report'")" \
	"3 true" "the report record: 3 kernels, and ceilings"

# ---- roofline open --------------------------------------------------------------
out=$(as alice "$BIN/roofline" open "$run")
is "$?" 0 "roofline open exits 0"
page=$(sed -n 1p <<<"$out")
is "$page" "$SPOOL/run-$run/report/attempt-1/report.html" "it prints the report's path"
is "$(sed -n 2p <<<"$out")" "file://$page" "and a file:// URL"
is "$(as alice "$BIN/roofline" open --url https://roofline.example/site/ "$run" | sed -n 2p)" \
	"https://roofline.example/site/users/alice/run-$run.html" "--url: the report's address on the site"
as bob "$BIN/roofline" open "$run" >/dev/null 2>&1
is "$?" 1 "bob cannot open alice's report"
is "$(stat -c '%U %a' "$page")" "alice 600" "the page is alice's, 0600, like every spool file"
as bob cat "$page" >/dev/null 2>&1
is "$?" 1 "bob cannot read it"

# ---- the page as a file -------------------------------------------------------------
cp "$page" "$TEST_TMP/report.html"
tidy -q -e "$TEST_TMP/report.html" >"$TEST_TMP/tidy.out" 2>&1
is "$?:$(cat "$TEST_TMP/tidy.out")" "0:" "tidy finds neither errors nor warnings"
unlike "$(grep -Eo '(src|href)="[a-z]+://[^"]*"|@import|url\(' "$TEST_TMP/report.html")" "." \
	"nothing is fetched: no absolute URL in src/href, no @import or url()"

links=$(sed -n '/<section id="files">/,/<\/section>/p' "$page" | grep -o 'href="[^"]*"' | sed 's/^href="//; s/"$//')
is "$(grep -cx '\.\./\.\./inputs/kernel_abc\.raw\.csv' <<<"$links")" 1 "the page links the raw CSV the run imported"
is "$(grep -c 'records\.tsv$' <<<"$links")" 4 "and the records of the four steps it needs"
unread=""
for l in $links; do
	as alice test -r "$(dirname "$page")/$l" || unread+=" $l"
done
is "$unread" "" "every link leads to a file alice can read"

# ---- in a real browser ------------------------------------------------------------
chrome() {
	env -u DBUS_SESSION_BUS_ADDRESS chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TEST_TMP/chromium" --hide-scrollbars "$@" 2>>"$TEST_TMP/chromium.log"
}
chrome --dump-dom "file://$TEST_TMP/report.html" >"$TEST_TMP/dom.html"
ok "Chromium rendered the page and dumped its DOM" test -s "$TEST_TMP/dom.html"
# the DOM as the browser built it, read with Python's HTML parser
dom() { # dom QUERY: kernels | advice | markers
	python3 - "$1" "$TEST_TMP/dom.html" <<'PY'
import html.parser, re, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.rows = []; self.adv = []; self.pts = 0; self.cur = None
    def handle_starttag(self, tag, a):
        a = dict(a); self.stack.append((tag, a))
        if tag == 'tr' and a.get('class') == 'kernel': self.rows.append([]); self.cur = 'row'
        elif tag == 'dd' and any(t == 'dl' and x.get('class') == 'advice' for t, x in self.stack): self.adv.append(''); self.cur = 'adv'
        elif tag == 'td' and self.cur == 'row': self.rows[-1].append('')
        if 'pt' in (a.get('class') or '').split() and any(t == 'svg' for t, _ in self.stack): self.pts += 1
    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag: pass
        if tag in ('tr', 'dd'): self.cur = None
    def handle_data(self, d):
        if self.cur == 'row' and self.rows[-1]: self.rows[-1][-1] += d
        elif self.cur == 'adv': self.adv[-1] += d
p = P(); p.feed(open(sys.argv[2]).read())
if sys.argv[1] == 'kernels': print('\n'.join(r[1].split('(')[0] + ' ' + r[9] for r in p.rows))
if sys.argv[1] == 'advice': print('\n'.join(p.adv))
if sys.argv[1] == 'markers': print(p.pts)
PY
}
is "$(dom kernels)" "kernel_A compute-bound
kernel_B latency-bound
kernel_C bandwidth-bound" "the kernel table has a row per kernel, with the verdicts the analysis stored"
is "$(dom kernels | wc -l)" "$(sql "select count(*) from roofline_points where run_id = $run")" \
	"as many rows as roofline_points has for the run"
is "$(dom markers)" 9 "the chart has a marker per kernel and level (3 x 3)"
adv=$(dom advice)
like "$(sed -n 1p <<<"$adv")" "no-FMA ceiling.*FMA ratio of 0: the instruction mix" \
	"kernel_A: under the no-FMA ceiling with no FMAs: instruction mix (seeds)"
like "$(sed -n 2p <<<"$adv")" "^Latency-bound.*occupancy" "kernel_B: latency-bound: occupancy and parallelism"
like "$(sed -n 3p <<<"$adv")" "^Bandwidth-bound at DRAM.*little reuse in L1/L2.*Block \(tile\).*fuse" \
	"kernel_C: DRAM-bound without reuse: blocking and fusion"
like "$(grep -o '<dl class="meta".*' "$TEST_TMP/dom.html" | head -1)" . "the run's metadata is there"
like "$(tr -d '\n' <"$TEST_TMP/dom.html")" "<dt>Pipeline</dt><dd>kernel-abc-replay</dd>.*<dt>Owner</dt><dd>alice</dd>.*<dt>Slurm jobs</dt><dd>$(sql "select slurm_job_id from steps where run_id = $run and step_id = 'spec'") \(spec\)" \
	"pipeline, owner and the Slurm job ids, from the daemon's run records"

chrome --window-size=1200,1600 --screenshot="$TEST_TMP/report.png" "file://$TEST_TMP/report.html" >/dev/null
ok "Chromium took a screenshot" test -s "$TEST_TMP/report.png"
pix=$("$ROOT/tests/tools/png_chart" "$TEST_TMP/report.png" 884 '#0072B2' '#D55E00' '#009E73')
diag "$pix"
like "$(sed -n 1p <<<"$pix")" "^frame [0-9]+ [0-9]+ [0-9]+ [0-9]+$" "the screenshot shows the chart's plot frame"
ok "the chart area is not blank (over 100 distinct colours)" test "$(awk '$1 == "distinct" { print $2 }' <<<"$pix")" -gt 100
for c in '#0072B2' '#D55E00' '#009E73'; do
	ok "kernel colour $c is painted inside the chart (markers)" test "$(awk -v c="$c" '$1 == c { print $2 }' <<<"$pix")" -gt 30
done

# ---- a second run: the first is its baseline ------------------------------------
run2=$(submit)
is "$(run_state "$run2")" succeeded "a second run ($run2) succeeded"
page2=$(as alice "$BIN/roofline" open "$run2" | head -1)
like "$(tr -d '\n' <"$page2")" "<section id=\"baseline\">.*Baseline: run $run " "its report names run $run as the baseline"
base_rows=$(sed -n '/id="baseline-table"/,/<\/table>/p' "$page2" | grep '^<tr><td class="n"')
is "$(grep -c 'class="name">kernel_' <<<"$base_rows")" 3 "and compares the three kernels with it"
is "$(grep -c '<td class="n" data-v="0">0</td><td class="n" data-v="[^"]*">[^<]*</td><td class="n" data-v="[^"]*">[^<]*</td></tr>$' <<<"$base_rows")" 3 \
	"each unchanged (0 %): both runs replay the same recordings"

# ---- the facility site ------------------------------------------------------------
ok "the site's index exists (rebuilt in a child of the daemon)" \
	site_settled "grep -q 'users/alice/index.html' '$SITE/index.html' 2>/dev/null && test -s '$SITE/users/alice/run-$run.html'"
like "$(cat "$SITE/index.html")" "href=\"users/alice/index.html\">alice</a>" "it links alice's page"
is "$(stat -c '%U %G %a' "$SITE/users/alice" "$SITE/users/alice/run-$run.html" | paste -sd,)" \
	"root www-data 750,root www-data 640" \
	"alice's site pages: root's and the web group's (she plants no page or link there), nobody else's"
ok "alice's page lists run $run2 with its report" grep -q "href=\"run-$run2.html\"" "$SITE/users/alice/index.html"
# the site's page holds the report as the srcdoc of a sandboxed frame
# (issue 21): the same text once unescaped (control characters are spaces)
framed=$(python3 - "$SITE/users/alice/run-$run.html" <<'PY'
import html.parser, re, sys
class P(html.parser.HTMLParser):
    doc = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "iframe" and a.get("sandbox") == "" and "srcdoc" in a:
            self.doc = a["srcdoc"]
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print(re.sub(r"[ \t\n\r]+", " ", p.doc or "").strip())
PY
)
is "$framed" "$(tr -s ' \t\n\r' '    ' <"$page" | sed 's/^ //; s/ $//')" \
	"the site's page frames the report, sandboxed"
as bob cat "$SITE/users/alice/run-$run.html" >/dev/null 2>&1
is "$?" 1 "bob cannot read alice's report on the site"
as alice cat "$SITE/users/alice/run-$run.html" >/dev/null 2>&1
is "$?" 1 "nor, on disk, can alice (served, the web server lets her in; her own copy is the spool's)"
# the fleet page is everyone's: a user's own run's GPUs are not on it
gpu=$(sql "select distinct gpu_uuid from ceilings where run_id = $run2")
like "$gpu" '^GPU-' "alice's run measured GPU $gpu"
ok "the (world-readable) fleet page does not show alice's run" test -s "$SITE/fleet.html" -a \
	"$(grep -c "$gpu" "$SITE/fleet.html")" -eq 0
for f in index.html fleet.html users/alice/index.html; do
	tidy -q -e "$SITE/$f" >"$TEST_TMP/tidy.out" 2>&1
	is "$?:$(cat "$TEST_TMP/tidy.out")" "0:" "tidy: $f is clean"
done
done_testing
