#!/bin/bash
# The manuals cannot drift from the code: the keys rooflined-pipeline(5)
# documents are exactly the pipeline loader's tables (daemon/pipeline.c:
# top_keys, slurm_keys, step_keys), the keys rooflined.yaml(5) documents
# exactly the configuration's table (daemon/config.c: cfg_keys), and each
# key shows in the page as man renders it.  Needs scdoc and man, no cluster.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT" || bail_out "cannot cd to $ROOT"
command -v scdoc >/dev/null || bail_out "no scdoc: run scripts/deps"

# c_array FILE NAME: the quoted strings of `NAME[] = { "a", "b", NULL }`.
c_array() {
	awk -v name="$2" '
		index($0, name "[] = {") { on = 1; next }
		on && /^};/ { exit }
		on { print }' "$1" | grep -o '"[a-z_]*"' | tr -d '"' | sort
}
# c_table FILE NAME: the first string of each `{ "key", ...` row of a table.
c_table() {
	awk -v name="$2" '
		index($0, name "[] = {") { on = 1; next }
		on && /^};/ { exit }
		on && match($0, /^\t\{ "[a-z_]+"/) { s = substr($0, RSTART, RLENGTH); gsub(/[^a-z_]/, "", s); print s }' "$1" | sort
}
# man_section FILE TITLE: the keys (lines "*key*") of section "# TITLE".
man_section() {
	awk -v title="# $2" '
		$0 == title { on = 1; next }
		on && /^# / { exit }
		on && /^\*[a-z_]+\*$/ { gsub(/\*/, ""); print }' "$1" | sort
}
# rendered PAGE.scd: the page as man shows it, one word a line
rendered() {
	scdoc <"$1" >"$TEST_TMP/page" && MANWIDTH=200 man -l "$TEST_TMP/page" 2>/dev/null |
		sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' | tr -s ' \t' '\n\n'
}

check_section() { # CODE_KEYS MAN_KEYS WHAT
	local n
	n=$(grep -c . <<<"$1")
	ok "$3: the code's table was read ($n keys)" test "$n" -ge 3
	is "$2" "$1" "$3: the manual lists exactly the code's keys"
}

page=docs/man/rooflined-pipeline.5.scd
check_section "$(c_array daemon/pipeline.c top_keys)" "$(man_section "$page" "TOP-LEVEL KEYS")" \
	"rooflined-pipeline(5) top level"
check_section "$(c_array daemon/pipeline.c slurm_keys)" "$(man_section "$page" "SLURM KEYS")" \
	"rooflined-pipeline(5) slurm"
check_section "$(c_array daemon/pipeline.c step_keys)" "$(man_section "$page" "STEP KEYS")" \
	"rooflined-pipeline(5) steps"
words=$(rendered "$page")
missing=$(for k in $(c_array daemon/pipeline.c top_keys) $(c_array daemon/pipeline.c slurm_keys) \
	$(c_array daemon/pipeline.c step_keys); do grep -qx -- "$k" <<<"$words" || echo "$k"; done)
is "$missing" "" "man rooflined-pipeline shows every key the loader accepts"

page=docs/man/rooflined.yaml.5.scd
check_section "$(c_table daemon/config.c cfg_keys)" "$(man_section "$page" "KEYS")" \
	"rooflined.yaml(5)"
words=$(rendered "$page")
missing=$(for k in $(c_table daemon/config.c cfg_keys); do grep -qx -- "$k" <<<"$words" || echo "$k"; done)
is "$missing" "" "man rooflined.yaml shows every configuration key"

done_testing
