#!/usr/bin/env bash
# The CLI on odd states (issue #26 item 3), against a real redis-server: `run` on a name that is not
# a lock of the requested kind, a fair lock's dead waiters (shown by status, cleared by unlock
# --force), a release the server refuses, and a COMMAND that cannot be started.
#   cli_odd_states_test.sh CLI [EMULATOR ARGS...]      (see cli_lib.sh)
# shellcheck disable=SC2016,SC2086,SC2155,SC2317  # sh -c scripts, $EMU split on purpose, indirect calls
set -euo pipefail

# shellcheck source=tests/cli/cli_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$@"

# ---- cases ---------------------------------------------------------------------------------------

# run on application data, or on a lock of another kind: a clear error at once (exit 1), not a wait
# that never ends; the data is left as it was.
run_refuses_other_kinds() {
  local rc start took
  rcli del cli-app cli-held-rw >/dev/null
  rcli hset cli-app name alice >/dev/null
  local -a cases=("cli-app|" "cli-app|--fair" "cli-app|--read" "cli-app|--fenced")
  local c name flag
  for c in "${cases[@]}"; do
    name=${c%%|*} flag=${c#*|}
    rc=0 start=$(now_ms)
    timeout -k 1 $((10 * SLOW)) $EMU "$CLI" run --url "$URL" $flag "$name" -- touch "$WORK/ok-ran" 2>"$WORK/ok.err" || rc=$?
    took=$(($(now_ms) - start))
    [ "$rc" = 1 ] || fail "run $flag on a hash of application data: exit $rc, expected 1 (after ${took}ms): $(cat "$WORK/ok.err")" || return 1
    grep -q "is not a lock.*field 'name'" "$WORK/ok.err" || fail "run $flag says: $(cat "$WORK/ok.err")" || return 1
  done
  [ "$(rcli hget cli-app name)" = alice ] || fail "the hash was changed" || return 1
  [ ! -e "$WORK/ok-ran" ] || fail "COMMAND ran" || return 1
  # a read/write lock held for writing is not a reentrant lock: refused, not waited for
  bg "$WORK/ok-w" run --url "$URL" --write cli-held-rw -- sh -c "touch '$WORK/ok-w.in'; exec sleep 30"
  local writer=$BG
  wait_file "$WORK/ok-w.in" 3000 || fail "writer did not start: $(cat "$WORK/ok-w.err")" || return 1
  rc=0
  timeout -k 1 $((10 * SLOW)) $EMU "$CLI" run --url "$URL" cli-held-rw -- touch "$WORK/ok-ran" 2>"$WORK/ok.err" || rc=$?
  kill -TERM "$writer"
  wait_exit "$writer" 3000 || true
  [ "$rc" = 1 ] && grep -q "is a read/write lock" "$WORK/ok.err" \
    || fail "run on a write-held read/write lock: exit $rc: $(cat "$WORK/ok.err")" || return 1
  [ ! -e "$WORK/ok-ran" ] || fail "COMMAND ran" || return 1
  rcli del cli-app >/dev/null
}

# A SIGKILLed --fair waiter leaves its place in the queue for minutes (Redisson's fair-queue timeout):
# status shows it and how long it still blocks the free lock; unlock --force clears the queue, and
# the next run gets the lock at once.
fair_dead_waiter() {
  local name=cli-fair-dead f=$WORK/fd rc
  rcli del "$name" "redisson_lock_queue:{$name}" "redisson_lock_timeout:{$name}" >/dev/null
  bg "$f-h" run --url "$URL" --fair "$name" -- sh -c "touch '$f.in'; exec sleep 30"
  local holder=$BG
  wait_file "$f.in" 3000 || fail "holder did not start: $(cat "$f-h.err")" || return 1
  bg "$f-w" run --url "$URL" --fair "$name" -- touch "$WORK/fd-ran"
  local waiter=$BG
  local deadline=$(($(now_ms) + 3000 * SLOW))
  until [ "$(rcli llen "redisson_lock_queue:{$name}")" = 1 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "the waiter is not queued" || return 1
    sleep 0.01
  done
  kill -KILL "$waiter"
  kill -TERM "$holder"
  wait_exit "$holder" 3000 || fail "holder did not exit" || return 1
  rc=0
  db run --url "$URL" --fair -n "$name" -- true 2>"$f.n.err" || rc=$?
  [ "$rc" = 4 ] || fail "the dead waiter does not block the lock (exit $rc): nothing to test" || return 1
  grep -q "is not locked, but 1 waiter is queued ahead (first .*:$waiter, whose place lapses in" "$f.n.err" \
    || fail "run -n says: $(cat "$f.n.err")" || return 1
  db status --url "$URL" "$name" >"$f.status" || [ $? = 1 ] || fail "status failed" || return 1
  grep -q "fair lock, not locked, 1 waiter queued" "$f.status" && grep -qE "waiter .*:[0-9]+  first, its place lapses in [45]m" "$f.status" \
    || fail "status does not show the queued waiter and how long it blocks: $(cat "$f.status")" || return 1
  db status --url "$URL" --json "$name" >"$f.json" || [ $? = 1 ] || fail "status --json failed" || return 1
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s["queue"]) == 1 and len(s["waiters"]) == 1, s
w = s["waiters"][0]
assert w["field"] == s["queue"][0] and 4 * 60000 < w["lapses_in_ms"] <= 6 * 60000, w
' "$f.json" || fail "status --json: $(cat "$f.json")" || return 1
  db unlock --url "$URL" --force "$name" >"$f.unlock" 2>&1 || fail "unlock --force: $(cat "$f.unlock")" || return 1
  grep -q "removed 1 waiter" "$f.unlock" || fail "unlock --force says: $(cat "$f.unlock")" || return 1
  [ "$(rcli exists "redisson_lock_queue:{$name}" "redisson_lock_timeout:{$name}")" = 0 ] \
    || fail "queue left: $(rcli lrange "redisson_lock_queue:{$name}" 0 -1)" || return 1
  rc=0
  db run --url "$URL" --fair -n "$name" -- true || rc=$?
  [ "$rc" = 0 ] || fail "after unlock --force: exit $rc"
}

# unlock --force wakes a live fair waiter whose place it removed: it queues again and gets the lock.
fair_unlock_force_keeps_live_waiters() {
  local name=cli-fair-live f=$WORK/fl
  bg "$f-h" run --url "$URL" --fair "$name" -- sh -c "touch '$f.in'; exec sleep 30"
  local holder=$BG
  wait_file "$f.in" 3000 || fail "holder did not start: $(cat "$f-h.err")" || return 1
  bg "$f-w" run --url "$URL" --fair --wait 20s "$name" -- touch "$f.ran"
  local waiter=$BG
  local deadline=$(($(now_ms) + 3000 * SLOW))
  until [ "$(rcli llen "redisson_lock_queue:{$name}")" = 1 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "the waiter is not queued" || return 1
    sleep 0.01
  done
  db unlock --url "$URL" --force "$name" >/dev/null || fail "unlock --force failed" || return 1
  wait_exit "$waiter" 3000 || fail "the live waiter did not get the lock after unlock --force" || return 1
  [ "$RC" = 0 ] && [ -e "$f.ran" ] || fail "waiter: exit $RC: $(cat "$f-w.err")" || return 1
  kill -TERM "$holder"
  wait_exit "$holder" 3000 || true
}

# The server refuses the release (an ACL user without DEL, which the unlock script needs): run says
# so with the reason, that the lock stays held, and exits 6, not COMMAND's 0.
release_refused() {
  local name=cli-refused rc=0
  rcli acl setuser cli-nodel on '>pw' '~*' '&*' +@all -del >/dev/null
  db run --url "redis://cli-nodel:pw@127.0.0.1:$PORT" "$name" -- true 2>"$WORK/rr.err" || rc=$?
  rcli acl deluser cli-nodel >/dev/null
  [ "$rc" = 6 ] || fail "exit $rc, expected 6: $(cat "$WORK/rr.err")" || return 1
  grep -q "could not release lock $name: " "$WORK/rr.err" \
    || fail "stderr does not say why: $(cat "$WORK/rr.err")" || return 1
  grep -q "held until its lease runs out" "$WORK/rr.err" || fail "stderr does not say the lock stays held: $(cat "$WORK/rr.err")" || return 1
  rcli del "$name" >/dev/null
}

# A COMMAND that cannot be started: 127 when there is none, 126 when it is not executable (as shells),
# and the lock is released.
command_not_started() {
  local rc=0
  db run --url "$URL" cli-nostart -- /nonexistent/command 2>"$WORK/ns.err" || rc=$?
  [ "$rc" = 127 ] && grep -q "cannot run /nonexistent/command" "$WORK/ns.err" || fail "missing: exit $rc: $(cat "$WORK/ns.err")" || return 1
  printf 'echo hi\n' >"$WORK/not-executable"
  chmod 644 "$WORK/not-executable"
  rc=0
  db run --url "$URL" cli-nostart -- "$WORK/not-executable" 2>"$WORK/ns.err" || rc=$?
  [ "$rc" = 126 ] && grep -q "ermission denied" "$WORK/ns.err" || fail "not executable: exit $rc: $(cat "$WORK/ns.err")" || return 1
  ! key_exists cli-nostart || fail "lock still held"
}

# ---- driver --------------------------------------------------------------------------------------
ALL=(run_refuses_other_kinds fair_dead_waiter fair_unlock_force_keeps_live_waiters release_refused command_not_started)
run_cases "${ALL[@]}"
