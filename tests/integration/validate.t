#!/bin/bash
# roofline validate on the pipeline corpus (tests/pipelines/): every invalid
# file exits 1 with exactly one error, at the position and with the words its
# first line promises ("# expect: LINE:COL: words"); every valid file exits 0
# with "FILE: ok".  Needs only the build, no cluster.
. "$(dirname "$0")/../lib.sh"

roofline="$BIN/roofline"
[[ -x $roofline ]] || bail_out "no $roofline: run 'make VARIANT=$VARIANT all'"
# the plugins of this build (smoke), found next to the binary
unset ROOFLINE_PLUGIN_DIR
cd "$ROOT" || bail_out "cannot cd to $ROOT"

shopt -s nullglob
invalid=(tests/pipelines/invalid/*.yaml)
valid=(tests/pipelines/valid/*.yaml)
shopt -u nullglob

ok "the corpus holds at least 25 invalid pipelines (${#invalid[@]})" \
	test "${#invalid[@]}" -ge 25
dups=$(for f in "${invalid[@]}"; do head -1 "$f"; done | sed 's/^[^:]*:[^:]*:[^:]*: //' |
	sort | uniq -d)
is "$dups" "" "each invalid pipeline has its own mistake"

for f in "${invalid[@]}"; do
	name=$(basename "$f" .yaml)
	expect=$(head -1 "$f")
	if ! [[ $expect =~ ^\#\ expect:\ ([0-9]+:[0-9]+):\ (.+)$ ]]; then
		fail "$name: first line is '# expect: LINE:COL: words'"
		continue
	fi
	loc=${BASH_REMATCH[1]}
	words=${BASH_REMATCH[2]}
	err=$("$roofline" validate "$f" 2>&1 >"$TEST_TMP/stdout")
	rc=$?
	lines=$(grep -c '' <<<"$err")
	if [[ $rc == 1 && $lines == 1 && $err == "$f:$loc: "* &&
		$err == *"$words"* && ! -s $TEST_TMP/stdout ]]; then
		pass "$name: $loc: $words"
	else
		fail "$name: $loc: $words"
		diag "  exit $rc, stdout: $(cat "$TEST_TMP/stdout")"
		diag "$err"
	fi
done

for f in "${valid[@]}"; do
	name=$(basename "$f" .yaml)
	out=$("$roofline" validate "$f" 2>"$TEST_TMP/stderr")
	rc=$?
	if [[ $rc == 0 && $out == "$f: ok" && ! -s $TEST_TMP/stderr ]]; then
		pass "valid $name"
	else
		fail "valid $name"
		diag "  exit $rc, stdout: $out"
		diag "$(cat "$TEST_TMP/stderr")"
	fi
done

# several files at once: every error of every file, exit 1 when any is bad
err=$("$roofline" validate "${valid[0]}" "${invalid[0]}" "${invalid[1]}" \
	2>&1 >"$TEST_TMP/stdout")
is "$?" 1 "a mix of valid and invalid files exits 1"
is "$(cat "$TEST_TMP/stdout")" "${valid[0]}: ok" "the valid one is ok"
like "$err" "^${invalid[0]}:[0-9]+:[0-9]+: .*"$'\n'"${invalid[1]}:[0-9]+:[0-9]+: " \
	"both invalid files are reported"
out=$("$roofline" validate "${valid[@]}")
is "$?" 0 "all valid files exit 0"
is "$(grep -c ': ok$' <<<"$out")" "${#valid[@]}" "one ok line per valid file"

# standard input, an unreadable file, an explicit plugin directory
out=$("$roofline" validate - <"${valid[0]}")
is "$out" "-: ok" "a pipeline on standard input"
err=$("$roofline" validate - <"${invalid[0]}" 2>&1 >/dev/null)
like "$err" '^<stdin>:[0-9]+:[0-9]+: ' "stdin errors are named <stdin>"
err=$("$roofline" validate "$TEST_TMP/missing.yaml" 2>&1)
is "$?" 1 "a missing file exits 1"
is "$err" "$TEST_TMP/missing.yaml: cannot read: No such file or directory" \
	"a missing file says so"
mkdir -p "$TEST_TMP/no-plugins"
err=$("$roofline" validate --plugin-dir "$TEST_TMP/no-plugins" \
	tests/pipelines/valid/minimal.yaml 2>&1)
is "$?" 1 "--plugin-dir is where plugins are looked for"
like "$err" "unknown plugin 'smoke' in step 'hello' \\(no smoke.so in $TEST_TMP/no-plugins\\)" \
	"an empty plugin directory knows no smoke"

# usage
"$roofline" validate >/dev/null 2>&1
is "$?" 2 "no file is a usage error (exit 2)"
"$roofline" validate --frobnicate x.yaml >/dev/null 2>&1
is "$?" 2 "an unknown option is a usage error (exit 2)"
out=$("$roofline" validate --help)
is "$?" 0 "--help exits 0"
like "$out" '^usage: roofline validate \[--cluster\] \[--plugin-dir DIR\] FILE\.\.\.' "--help prints the usage"

# -- roofline plugins --json: one document, parsed by Python; the same
# plugins, stages, versions and option counts as the text listing says
json_of_text() { # the text listing as name|stage|version|options lines
	awk '/^[^ ]/ { if (n) print line "|" c; line = $1 "|" $2 "|" $3; c = 0; n = 1; next }
	     /^    / { c++ } END { if (n) print line "|" c }'
}
"$roofline" plugins --json >"$TEST_TMP/plugins.json"
is "$?" 0 "roofline plugins --json exits 0"
want=$("$roofline" plugins | json_of_text)
like "$want" "(^|
)smoke\|utility\|" "the text listing is read here (smoke among them)"
got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"plugins", "refused"} and d["refused"] == []
for p in d["plugins"]:
    assert all(set(o) == {"key", "type", "default", "required", "help"} for o in p["options"])
    print("|".join([p["name"], p["stage"], p["version"], str(len(p["options"]))]))' "$TEST_TMP/plugins.json")
is "$got" "$want" "and lists what the text listing lists"
n_so=$(find "$BUILD/plugins" -maxdepth 1 -name '*.so' | wc -l)
is "$(wc -l <<<"$got")" "$n_so" "one entry per plugin file ($n_so)"
"$roofline" plugins --json --plugin-dir "$BUILD/test-plugins" >"$TEST_TMP/refused.json"
is "$?" 1 "a plugin that fails to load: exit 1 with --json too"
is "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(r["file"] for r in d["refused"] if r["error"])))' "$TEST_TMP/refused.json")" \
	"$("$roofline" plugins --plugin-dir "$BUILD/test-plugins" | awk '$2 == "REFUSED" { print $1 }' | sort | paste -sd' ')" \
	"and the refused files, each with its reason, under \"refused\""
like "$("$roofline" plugins --help)" "--json" "plugins --help mentions --json"

# -- every program says its version, the one in VERSION
version=$(cat "$ROOT/VERSION")
for prog in roofline rooflined roofline-job; do
	out=$("$BIN/$prog" --version 2>&1)
	is "$?:$out" "0:$prog $version" "$prog --version prints '$prog $version' and exits 0"
done

done_testing
