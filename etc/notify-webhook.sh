#!/bin/sh
# notify-webhook.sh - a rooflined notify hook: POST each new finding as JSON.
#
#   notify_command: "/etc/rooflined/notify-webhook.sh https://chat.example.org/hooks/XYZ"
#
# rooflined runs it once per new finding (as notify_user), the finding as
# one JSON object on stdin (docs/findings.md, "The hook's JSON").  curl gives
# up after 10 s; an HTTP error or a timeout exits non-zero, and rooflined
# tries again later (notify_tries, notify_backoff).
set -eu
url=${1:?usage: notify-webhook.sh URL}
exec curl --silent --show-error --fail --max-time 10 \
	-H 'Content-Type: application/json' --data-binary @- "$url"
