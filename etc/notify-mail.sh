#!/bin/sh
# notify-mail.sh - a rooflined notify hook: mail each new finding.
#
#   notify_command: "/etc/rooflined/notify-mail.sh hpc-ops@example.org"
#
# rooflined runs it once per new finding (as notify_user), the finding as
# one JSON object on stdin (docs/findings.md, "The hook's JSON") and its id
# in ROOFLINE_FINDING_ID.  The subject is made with jq when it is installed;
# the body is the JSON.  sendmail queues the message, so the hook returns at
# once; a non-zero exit makes rooflined try again later (notify_tries).
# SENDMAIL names another sendmail-compatible program (default
# /usr/sbin/sendmail).
set -eu
to=${1:?usage: notify-mail.sh ADDRESS}
json=$(cat)
subject="finding ${ROOFLINE_FINDING_ID:-?}"
if command -v jq >/dev/null 2>&1; then
	subject=$(printf '%s\n' "$json" | jq -r '"\(.severity): \(.node // .kernel // "?") \(.measure) \(.class), \(.drop_pct | floor) % below \(if .scope == "gpu" then "reference" else "baseline" end)"') ||
		subject="finding ${ROOFLINE_FINDING_ID:-?}"
fi
# node and kernel names come from users' runs: the subject loses every
# control character (a newline would start a header of the user's own)
subject=$(printf '%s' "$subject" | tr -d '\000-\037\177' | cut -c1-200)
{
	printf 'To: %s\nSubject: [rooflined] %s\nContent-Type: application/json\n\n' "$to" "$subject"
	printf '%s\n' "$json"
} | "${SENDMAIL:-/usr/sbin/sendmail}" -oi -- "$to"
