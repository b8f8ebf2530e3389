#!/bin/bash
# The manuals cannot drift from the code: the keys rooflined-pipeline(5)
# documents are exactly the pipeline loader's tables (daemon/pipeline.c:
# top_keys, slurm_keys, step_keys), the keys rooflined.yaml(5) documents
# exactly the configuration's table (daemon/config.c: cfg_keys), the
# commands roofline(1) documents exactly the CLI's table (cli/roofline.c:
# commands), each with the options of its own --help usage, and each key and
# command shows in the page as man renders it.  Needs scdoc, man and the
# built roofline, no cluster.
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

# ---- roofline(1): the commands and their options --------------------------
page=docs/man/roofline.1.scd
# man_commands FILE: the commands of "# COMMANDS" (a synopsis line starts
# with "*name*"; --help and --version are the program's, not commands)
man_commands() {
	awk '$0 == "# COMMANDS" { on = 1; next }
		on && /^# / { exit }
		on && match($0, /^\*[a-z]+\*/) { print substr($0, 2, RLENGTH - 2) }' "$1" | sort -u
}
# man_options FILE CMD: the options in CMD's synopsis lines
man_options() {
	awk -v cmd="*$2*" '$0 == "# COMMANDS" { on = 1; next }
		on && /^# / { exit }
		on && index($0, cmd) == 1 { print }' "$1" | grep -o -- '--[a-z][a-z-]*' | sort -u
}
# help_options CMD: the options in the usage lines of `roofline CMD --help`
help_options() {
	"$BIN/roofline" "$1" --help 2>&1 | awk '/^$/ { exit } { print }' |
		grep -o -- '--[a-z][a-z-]*' | sort -u
}
cli_commands=$(c_table cli/roofline.c commands)
check_section "$cli_commands" "$(man_commands "$page")" "roofline(1) commands"
if [[ -x $BIN/roofline ]]; then
	for c in $cli_commands; do
		is "$(man_options "$page" "$c")" "$(help_options "$c")" \
			"roofline(1) $c: the synopsis has the options of 'roofline $c --help'"
	done
else
	skip "no $BIN/roofline: build it (make VARIANT=$VARIANT)" "$(wc -w <<<"$cli_commands")"
fi
words=$(rendered "$page")
missing=$(for c in $cli_commands; do grep -qx -- "$c" <<<"$words" || echo "$c"; done)
is "$missing" "" "man roofline shows every command"

done_testing
