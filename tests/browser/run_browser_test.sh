#!/usr/bin/env bash
# Real-browser test of SSE resume across a daemon restart (issue 4).
#
#   run_browser_test.sh <keel-binary>
#
# Starts `keel daemon` on a free loopback port, opens eventsource_page.html
# in headless Chromium (an EventSource on /v1/streams/browser.ticks/sse),
# publishes N/4 events, waits until the page has received them, publishes up
# to N/2 and at once stops the daemon with SIGTERM (mid-stream), publishes
# nothing while it is down, restarts it on the same port and data dir,
# publishes the other N/2 (half before the browser is back, half after),
# and waits for the result the page posts back to
# /v1/streams/browser.results/events. PASS iff the page received exactly
# sequences 1..N in order (no gap, no duplicate), every lastEventId equals
# the event's cursor, and the EventSource opened at least twice (the browser
# reconnected on its own, resuming with Last-Event-ID).
#
# Environment (all optional):
#   KEEL_BROWSER_TEST_EVENTS     N, even (default 40)
#   KEEL_BROWSER_TEST_ARTIFACTS  directory for the result JSON, logs and a
#                                screenshot of the rendered result
#   KEEL_BROWSER_TEST_KEEP=1     keep the temporary directory
#   KEEL_BROWSER_TEST_BREAK=fresh-data-dir
#                                negative control: restart on an empty data
#                                dir, so resume must fail (409) and the test
#                                must FAIL
#   CHROMIUM                     browser binary (default: chromium)
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <keel-binary>" >&2
  exit 2
fi
KEEL=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PAGE="$HERE/eventsource_page.html"
CHROMIUM=${CHROMIUM:-chromium}
N=${KEEL_BROWSER_TEST_EVENTS:-40}
BREAK=${KEEL_BROWSER_TEST_BREAK:-}
ARTIFACTS=${KEEL_BROWSER_TEST_ARTIFACTS:-}
STREAM=browser.ticks
RESULTS=browser.results
TYPE=browser.tick
HALF=$((N / 2))
PROGRESS_AT=$(((HALF + 1) / 2))  # The page reports once it has this many.
RESULT_TIMEOUT=90
# Every wait is also capped by this overall budget, so the script always
# cleans up itself before CTest's TIMEOUT (180 s) would kill it.
DEADLINE=$((SECONDS + 160))

T0=$(date +%s%N)
log() {
  local ms=$((($(date +%s%N) - T0) / 1000000))
  printf '[browser-test %3d.%03ds] %s\n' $((ms / 1000)) $((ms % 1000)) "$*"
}
FAILED_REASON=""
fail() {
  FAILED_REASON="$*"
  echo "FAIL: $*" >&2
  exit 1
}

# ---- prerequisites ---------------------------------------------------------
if ! command -v "$CHROMIUM" >/dev/null 2>&1; then
  fail "'$CHROMIUM' not found: the browser test needs Debian's chromium; run scripts/install-deps.sh"
fi
command -v curl >/dev/null 2>&1 || fail "curl not found: run scripts/install-deps.sh"
[[ -x "$KEEL" ]] || fail "keel binary '$KEEL' is not executable"
[[ -f "$PAGE" ]] || fail "missing $PAGE"
(( N >= 4 && N % 2 == 0 )) || fail "KEEL_BROWSER_TEST_EVENTS must be even and >= 4"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/keel-browser-test.XXXXXX")
DATA="$TMP/data"
PORT_FILE="$TMP/port"
DAEMON_LOG="$TMP/daemon.log"
CHROME_LOG="$TMP/chromium.log"
DAEMON_PID=""
CHROME_PID=""
PORT=""

# ---- cleanup: kill exactly what this script started --------------------------
stop_chromium() {
  [[ -n "$CHROME_PID" ]] || return 0
  # Chromium runs in its own session (setsid): its group holds the browser
  # and every helper process it forked, and nothing else.
  kill -TERM -- "-$CHROME_PID" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 -- "-$CHROME_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$CHROME_PID" 2>/dev/null || true
  wait "$CHROME_PID" 2>/dev/null || true
  CHROME_PID=""
}

# Sends SIGTERM and waits (20 s, then SIGKILL). Sets DAEMON_RC.
DAEMON_RC=""
stop_daemon() {
  [[ -n "$DAEMON_PID" ]] || return 0
  kill -TERM "$DAEMON_PID" 2>/dev/null || true
  for _ in $(seq 200); do
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$DAEMON_PID" 2>/dev/null; then
    log "daemon ignored SIGTERM for 20 s; killing it"
    kill -KILL "$DAEMON_PID" 2>/dev/null || true
  fi
  DAEMON_RC=0
  wait "$DAEMON_PID" 2>/dev/null || DAEMON_RC=$?
  DAEMON_PID=""
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_chromium
  stop_daemon
  if [[ $rc -ne 0 ]]; then
    echo "---- daemon log (tail) ----" >&2
    tail -n 40 "$DAEMON_LOG" >&2 2>/dev/null || true
    echo "---- chromium log (tail) ----" >&2
    grep -v -e dbus -e 'Fontconfig' "$CHROME_LOG" 2>/dev/null | tail -n 20 >&2 || true
    echo "==== browser_eventsource: FAIL${FAILED_REASON:+: $FAILED_REASON} ====" >&2
  fi
  if [[ -n "$ARTIFACTS" ]]; then
    mkdir -p "$ARTIFACTS"
    cp -f "$DAEMON_LOG" "$ARTIFACTS/browser_daemon.log" 2>/dev/null || true
    cp -f "$CHROME_LOG" "$ARTIFACTS/browser_chromium.log" 2>/dev/null || true
  fi
  if [[ "${KEEL_BROWSER_TEST_KEEP:-}" == 1 ]]; then
    echo "kept $TMP" >&2
  else
    rm -rf "$TMP"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILED_REASON="interrupted"; exit 130' INT TERM

# ---- helpers ---------------------------------------------------------------
api() { echo "http://127.0.0.1:$PORT$1"; }

# start_daemon <listen> <data-dir>: starts the daemon; waits for its port file.
start_daemon() {
  rm -f "$PORT_FILE"
  echo "=== keel daemon --listen $1 --data-dir $2" >>"$DAEMON_LOG"
  "$KEEL" daemon --listen "$1" --data-dir "$2" --port-file "$PORT_FILE" \
    --log-level info >>"$DAEMON_LOG" 2>&1 &
  DAEMON_PID=$!
  for _ in $(seq 150); do
    if [[ -s "$PORT_FILE" ]] && [[ "$(cat "$PORT_FILE")" =~ ^[0-9]+$ ]]; then return 0; fi
    if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
      DAEMON_RC=0
      wait "$DAEMON_PID" 2>/dev/null || DAEMON_RC=$?
      DAEMON_PID=""
      return 1
    fi
    sleep 0.1
  done
  return 1
}

# publish <sequence>: one event; checks 201 and the assigned sequence.
publish() {
  local body code
  body=$(curl -sS --max-time 10 -w '\n%{http_code}' -X POST \
           -H 'Content-Type: application/json' \
           --data "{\"type\":\"$TYPE\",\"data\":{\"n\":$1}}" \
           "$(api "/v1/streams/$STREAM/events")") || fail "publish $1: curl failed"
  code=${body##*$'\n'}
  body=${body%$'\n'*}
  [[ "$code" == 201 ]] || fail "publish $1: HTTP $code $body"
  # (The negative control's fresh store numbers from 1 again.)
  [[ "$body" == *"\"sequence\":$1,"* || -n "$BREAK" ]] ||
    fail "publish $1: unexpected receipt $body"
}

# publish_batch <first> <last>: one all-or-nothing batch request.
publish_batch() {
  local body code events="" i
  for i in $(seq "$1" "$2"); do events+="${events:+,}{\"type\":\"$TYPE\",\"data\":{\"n\":$i}}"; done
  body=$(curl -sS --max-time 10 -w '\n%{http_code}' -X POST \
           -H 'Content-Type: application/json' --data "[$events]" \
           "$(api "/v1/streams/$STREAM/events")") || fail "publish $1..$2: curl failed"
  code=${body##*$'\n'}
  body=${body%$'\n'*}
  [[ "$code" == 201 ]] || fail "publish $1..$2: HTTP $code $body"
  [[ "$body" == *"\"sequence\":$1,"*"\"sequence\":$2,"* || -n "$BREAK" ]] ||
    fail "publish $1..$2: unexpected receipts $body"
}

# results_of <type>: the data of the first event of <type> in the results stream.
# Event bodies are compact JSON written by the daemon, "data" last but for
# "attributes" (none here), so the data object is everything after "data":.
results_of() {
  local page
  page=$(curl -sS --max-time 5 \
           "$(api "/v1/streams/$RESULTS/events?after=earliest&type=$1&limit=1")" 2>/dev/null) \
    || return 1
  [[ "$page" == *"\"type\":\"$1\""* ]] || return 1
  page=${page#*\"data\":}
  printf '%s\n' "${page%\}\],\"next\":*}"
}

sse_connections() {
  curl -sS --max-time 5 "$(api /metrics)" 2>/dev/null |
    awk '$1 == "keel_sse_connections" { print $2 }'
}

# json_field <json> <name>: a number or a flat array (no nested brackets).
json_field() {
  local rest=${1#*\""$2"\":}
  [[ "$rest" != "$1" ]] || return 1
  if [[ "$rest" == \[* ]]; then
    rest=${rest#\[}
    printf '%s\n' "${rest%%\]*}"
  else
    printf '%s\n' "$(grep -oE '^[0-9]+' <<<"$rest")"
  fi
}

wait_for() {  # wait_for <seconds> <command...>: polls every 0.2 s.
  local deadline=$((SECONDS + $1))
  (( deadline <= DEADLINE )) || deadline=$DEADLINE
  shift
  until "$@"; do
    (( SECONDS < deadline )) || return 1
    sleep 0.2
  done
}

# ---- 1. daemon on a free port ---------------------------------------------------
log "keel: $KEEL; chromium: $("$CHROMIUM" --version 2>/dev/null | tail -n 1)"
start_daemon 127.0.0.1:0 "$DATA" || fail "the daemon did not start (exit ${DAEMON_RC:-?})"
PORT=$(cat "$PORT_FILE")
log "daemon pid $DAEMON_PID listening on 127.0.0.1:$PORT, data dir $DATA"

# ---- 2. headless Chromium on the page ----------------------------------------------
URL="file://$PAGE?port=$PORT&stream=$STREAM&count=$N&type=$TYPE&results=$RESULTS&progress=$PROGRESS_AT&after=earliest"
setsid "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$TMP/profile" "$URL" >"$CHROME_LOG" 2>&1 &
CHROME_PID=$!
log "chromium pid $CHROME_PID on $URL"

connected() { [[ "$(sse_connections)" -ge 1 ]] 2>/dev/null; }
wait_for 60 connected || fail "the page's EventSource never connected (60 s)"
log "the page's EventSource is connected"

# ---- 3. first half, live; the stop comes right after its last publish ---------------
for i in $(seq 1 "$PROGRESS_AT"); do publish "$i"; done
log "published 1..$PROGRESS_AT"
wait_for 30 results_of browser.progress >/dev/null ||
  fail "the page did not report receiving $PROGRESS_AT events (30 s)"
log "page progress: $(results_of browser.progress)"
for i in $(seq $((PROGRESS_AT + 1)) "$HALF"); do publish "$i"; done
log "published $((PROGRESS_AT + 1))..$HALF"

# ---- 4. SIGTERM mid-stream; nothing is published while the daemon is down ----------
# Events PROGRESS_AT+1..HALF may still be on their way to the browser: the
# daemon must flush or the browser must catch up after the restart.
stop_daemon
log "daemon stopped by SIGTERM, exit code $DAEMON_RC"
[[ "$DAEMON_RC" == 0 ]] || fail "the daemon exited $DAEMON_RC on SIGTERM (want 0)"
sleep 2  # Long enough for the browser to fail at least one reconnect attempt.

# ---- 5. restart on the same port (same data dir unless breaking on purpose) -------------
RESTART_DATA="$DATA"
if [[ "$BREAK" == fresh-data-dir ]]; then
  RESTART_DATA="$TMP/fresh-data"
  log "NEGATIVE CONTROL: restarting on an empty data dir; this run must FAIL"
elif [[ -n "$BREAK" ]]; then
  fail "unknown KEEL_BROWSER_TEST_BREAK '$BREAK'"
fi
started=""
for attempt in $(seq 20); do
  if start_daemon "127.0.0.1:$PORT" "$RESTART_DATA"; then started=1; break; fi
  log "restart attempt $attempt on port $PORT failed (exit ${DAEMON_RC:-?}); retrying"
  sleep 0.5
done
[[ -n "$started" ]] || fail "could not restart the daemon on 127.0.0.1:$PORT"
[[ "$(cat "$PORT_FILE")" == "$PORT" ]] || fail "the daemon restarted on another port"
log "daemon restarted, pid $DAEMON_PID, same port $PORT"

# ---- 6. second half: a batch at once (normally before the browser is back, so
# it reaches the page by catch-up from the store), the rest live --------------------
QUARTER=$((HALF + (HALF + 1) / 2))
publish_batch $((HALF + 1)) "$QUARTER"
log "published $((HALF + 1))..$QUARTER (one batch)"
page_done() { results_of browser.result >/dev/null || results_of browser.failed >/dev/null; }
reconnected_or_done() { connected || page_done; }
if wait_for 30 reconnected_or_done && connected; then
  log "the browser reconnected"
elif page_done; then
  log "the page already finished or gave up (before the rest was published: it cannot have all $N)"
else
  log "no SSE connection 30 s after the restart (the browser did not reconnect)"
fi
for i in $(seq $((QUARTER + 1)) "$N"); do publish "$i"; done
log "published $((QUARTER + 1))..$N"

# ---- 7. the page's result ----------------------------------------------------------
RESULT=""
FAILED=""
deadline=$((SECONDS + RESULT_TIMEOUT))
(( deadline <= DEADLINE )) || deadline=$DEADLINE
while (( SECONDS < deadline )); do
  if RESULT=$(results_of browser.result); then break; fi
  if FAILED=$(results_of browser.failed); then break; fi
  RESULT=""
  sleep 0.5
done
if [[ -n "$ARTIFACTS" ]]; then
  mkdir -p "$ARTIFACTS"
  printf '%s\n' "${RESULT:-$FAILED}" >"$ARTIFACTS/browser_result.json"
fi
if [[ -n "$FAILED" ]]; then
  log "the page gave up: $FAILED"
  fail "the browser's EventSource closed for good after receiving sequences" \
       "[$(json_field "$FAILED" sequences)] (the daemon refused the resume; see the page result above)"
fi
[[ -n "$RESULT" ]] || fail "no result from the page within ${RESULT_TIMEOUT} s (or the 160 s budget)"
log "the page posted its result (${#RESULT} bytes)"

# ---- 8. checks ------------------------------------------------------------------------
problems=()
want_sequences=$(seq -s, 1 "$N")
got_sequences=$(json_field "$RESULT" sequences || true)
[[ "$got_sequences" == "$want_sequences" ]] ||
  problems+=("sequences are [$got_sequences], want [1..$N] in order, each once")

# Every id must be the cursor of that sequence, as the daemon reports it.
page=$(curl -sS --max-time 10 "$(api "/v1/streams/$STREAM/events?after=earliest&limit=$N")")
want_ids=$(grep -oE '"cursor":"[A-Za-z0-9_-]+"' <<<"$page" | cut -d'"' -f4 | paste -sd, -)
got_ids=$(json_field "$RESULT" ids | tr -d '"' || true)
[[ -n "$want_ids" && "$got_ids" == "$want_ids" ]] ||
  problems+=("lastEventIds differ from the stream's cursors")

opens=$(json_field "$RESULT" opens || echo 0)
errors=$(json_field "$RESULT" errors || echo 0)
mismatches=$(json_field "$RESULT" cursorMismatches || echo 0)
gaps=$(json_field "$RESULT" gaps || true)
keel_errors=$(json_field "$RESULT" keelErrors || true)
resume_after=$(json_field "$RESULT" resumeAfter || true)
opens=${opens:-0}
errors=${errors:-0}
(( opens >= 2 )) || problems+=("opens = $opens: the browser never reconnected")
(( errors >= 1 )) || problems+=("errors = $errors: the page never saw the disconnect")
[[ "$mismatches" == 0 ]] || problems+=("$mismatches events whose lastEventId != data.cursor")
[[ -z "$gaps" ]] || problems+=("unexpected keel.gap frames: $gaps")
[[ -z "$keel_errors" ]] || problems+=("keel.error frames or bad data: $keel_errors")

# ---- 9. optional screenshot of the result, rendered by the page's view mode ---------
stop_chromium
if [[ -n "$ARTIFACTS" ]]; then
  fragment=$(printf '%s' "$RESULT" | od -An -tx1 -v | tr -d ' \n' | sed 's/../%&/g')
  shot="$ARTIFACTS/browser_eventsource.png"
  rm -f "$shot"
  setsid "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$TMP/profile-shot" --window-size=1000,1100 --screenshot="$shot" \
    "file://$PAGE?view=1#$fragment" >>"$CHROME_LOG" 2>&1 &
  CHROME_PID=$!
  for _ in $(seq 300); do kill -0 "$CHROME_PID" 2>/dev/null || break; sleep 0.2; done
  stop_chromium
  if [[ -s "$shot" ]]; then
    log "screenshot: $shot"
  else
    log "(no screenshot; not part of the verdict)"
  fi
fi

echo "---- summary ----"
echo "events published: $N ($HALF before the SIGTERM, $HALF after the restart on port $PORT)"
echo "page: opens=$opens errors=$errors resume points (last sequence at each open)=[$resume_after]"
echo "page timeline: $(grep -oE '"t":[0-9]+,"what":"[^"]*"' <<<"$RESULT" |
                        sed -E 's/"t":([0-9]+),"what":"([^"]*)"/\1ms \2/' | paste -sd, - |
                        sed 's/,/, /g')"
if (( ${#problems[@]} > 0 )); then
  echo "page result: $RESULT" >&2
  for p in "${problems[@]}"; do echo "  problem: $p" >&2; done
  fail "${#problems[@]} check(s) failed"
fi
echo "==== browser_eventsource: PASS: Chromium received sequences 1..$N exactly once, in order, across a daemon restart (EventSource opened $opens times) ===="
