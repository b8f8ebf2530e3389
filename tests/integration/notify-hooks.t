#!/bin/bash
# The example notify hooks in etc/ (docs/findings.md), run as rooflined runs
# them: the finding's JSON on stdin.  notify-webhook.sh POSTs it unchanged
# to a real HTTP server on the loopback (python3's http.server, recording
# what it receives) and exits 0; a server that answers 500, or no server,
# makes it exit non-zero (so rooflined tries again).  notify-mail.sh hands
# its message to a stand-in sendmail (SENDMAIL) that keeps what it gets: a
# test machine has no mail system; what is checked is the message itself.
. "$(dirname "$0")/../lib.sh"

cat >"$TEST_TMP/server.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(sys.argv[2], "ab") as f:
            f.write(self.headers.get("Content-Type", "").encode() + b"\n" + body)
        self.send_response(500 if self.path == "/fail" else 204)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$TEST_TMP/server.py" "$TEST_TMP/port" "$TEST_TMP/got" &
SERVER=$!
on_exit "kill $SERVER"
wait_for "[[ -s $TEST_TMP/port ]]" 10 || bail_out "the HTTP server did not start"
PORT=$(cat "$TEST_TMP/port")

JSON='{"id": 7, "scope": "gpu", "measure": "hbm_triad", "class": "fleet outlier", "drop_pct": 12.0}'
out=$(printf '%s\n' "$JSON" | ROOFLINE_FINDING_ID=7 "$ROOT/etc/notify-webhook.sh" "http://127.0.0.1:$PORT/hook" 2>&1)
is "$?" 0 "notify-webhook.sh exits 0 when the server takes it"
is "$(head -1 "$TEST_TMP/got")" "application/json" "it says the body is JSON"
is "$(tail -n +2 "$TEST_TMP/got")" "$JSON" "and sends the finding unchanged"
printf '%s\n' "$JSON" | "$ROOT/etc/notify-webhook.sh" "http://127.0.0.1:$PORT/fail" >/dev/null 2>&1
rc=$?
ok "an HTTP 500 makes it fail (rooflined retries; exit $rc)" test "$rc" -ne 0
kill "$SERVER"; wait "$SERVER" 2>/dev/null
printf '%s\n' "$JSON" | "$ROOT/etc/notify-webhook.sh" "http://127.0.0.1:$PORT/hook" >/dev/null 2>&1
rc=$?
ok "no server: it fails (exit $rc)" test "$rc" -ne 0
"$ROOT/etc/notify-webhook.sh" </dev/null >/dev/null 2>&1
rc=$?
ok "no URL: a usage error (exit $rc)" test "$rc" -ne 0
like "$("$ROOT/etc/notify-mail.sh" </dev/null 2>&1)" 'usage: notify-mail.sh ADDRESS' "notify-mail.sh says how to use it"

# A node name is a user's text: a newline in it must not add a header
# (issue 21, finding 13).
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >"%s/mail-args"\ncat >"%s/mail-msg"\n' "$TEST_TMP" "$TEST_TMP" >"$TEST_TMP/sendmail"
chmod +x "$TEST_TMP/sendmail"
EVIL='{"id": 8, "scope": "gpu", "node": "n1\nBcc: victim@example.org", "measure": "hbm_triad", "class": "fleet outlier", "drop_pct": 12.0}'
printf '%s\n' "$EVIL" | ROOFLINE_FINDING_ID=8 SENDMAIL="$TEST_TMP/sendmail" \
	"$ROOT/etc/notify-mail.sh" ops@example.org
is "$?" 0 "notify-mail.sh hands a finding to sendmail"
is "$(cat "$TEST_TMP/mail-args")" "-oi -- ops@example.org" "to the address it was given"
headers=$(sed '/^$/q' "$TEST_TMP/mail-msg" | sed '/^$/d')
is "$(cut -d: -f1 <<<"$headers" | tr '\n' ' ')" "To Subject Content-Type " \
	"a node name with a newline adds no header (headers: $(tr '\n' '|' <<<"$headers"))"
like "$(grep '^Subject:' <<<"$headers")" 'n1Bcc: victim@example.org hbm_triad' \
	"the subject keeps the name, without its newline"

done_testing
