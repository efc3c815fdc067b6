#!/usr/bin/env bash
# End-to-end tests of the deadbolt CLI against a real redis-server (CTest fixture redis_cli).
#   cli_test.sh CLI [EMULATOR ARGS...]
# DEADBOLT_REDIS_DIR is the fixture's state directory; its `port` file holds the server's port.
# A cross build passes the emulator command (qemu-user) after CLI; the tool then runs as `$EMU $CLI`.
# Prints one `ok - name` / `not ok - name: reason` line per case and exits non-zero if any failed.
# DEADBOLT_CLI_CASES="case1 case2" runs only those (the function names below).
# shellcheck disable=SC2016,SC2086,SC2155,SC2317  # sh -c scripts, $EMU split on purpose, indirect calls
set -euo pipefail

# shellcheck source=tests/cli/cli_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$@"

# ---- cases ---------------------------------------------------------------------------------------

# Several concurrent processes doing read-increment-write cycles of a counter file, each cycle one
# `deadbolt run`: nobody is ever inside with someone else, and no increment is lost.
counter_mutual_exclusion() {
  local dir=$WORK/counter workers=5 cycles=$((SLOW > 1 ? 6 : 12)) w
  mkdir -p "$dir"
  echo 0 >"$dir/counter"
  local body='set -C
    if ! true >"$0/inside" 2>/dev/null; then echo "overlap seen by $$" >>"$0/overlaps"; fi
    n=$(cat "$0/counter"); sleep 0.005; echo $((n + 1)) >|"$0/counter"
    rm -f "$0/inside"'
  local worker_pids=()
  for w in $(seq 1 "$workers"); do
    (
      for _ in $(seq 1 "$cycles"); do
        $EMU "$CLI" run --url "$URL" --wait 20s cli-counter -- sh -c "$body" "$dir" || echo "worker $w: exit $?" >>"$dir/errors"
      done
    ) >"$dir/worker$w.log" 2>&1 &
    worker_pids+=($!)
    PIDS+=($!)
  done
  for w in "${worker_pids[@]}"; do wait_exit "$w" 40000 || fail "worker $w did not finish" || return 1; done
  [ ! -e "$dir/errors" ] || fail "runs failed: $(cat "$dir/errors" "$dir"/worker*.log)" || return 1
  [ ! -e "$dir/overlaps" ] || fail "two runs were inside at once: $(cat "$dir/overlaps")" || return 1
  local total=$(cat "$dir/counter")
  [ "$total" = $((workers * cycles)) ] || fail "counter is $total, expected $((workers * cycles)) (lost updates)" || return 1
  ! key_exists cli-counter || fail "lock still held after all runs"
}

exit_status_passthrough() {
  local rc
  rc=0; db run --url "$URL" cli-exit -- sh -c 'exit 7' || rc=$?
  [ "$rc" = 7 ] || fail "exit 7 gave $rc" || return 1
  rc=0; db run --url "$URL" cli-exit -- true || rc=$?
  [ "$rc" = 0 ] || fail "true gave $rc" || return 1
  rc=0; db run --url "$URL" cli-exit -- sh -c 'kill -TERM $$' || rc=$?
  [ "$rc" = 143 ] || fail "a command killed by SIGTERM gave $rc, expected 143" || return 1
  rc=0; db run --url "$URL" cli-exit -- sh -c 'kill -KILL $$' || rc=$?
  [ "$rc" = 137 ] || fail "a command killed by SIGKILL gave $rc, expected 137" || return 1
  rc=0; db run --url "$URL" cli-exit -- /nonexistent/command 2>/dev/null || rc=$?
  [ "$rc" = 127 ] || fail "a missing command gave $rc, expected 127" || return 1
  # COMMAND gets its arguments verbatim and DEADBOLT_LOCK_NAME
  local out
  out=$(db run --url "$URL" cli-exit -- sh -c 'printf "%s|" "$@" "$DEADBOLT_LOCK_NAME"' sh 'a b' '' '--x')
  [ "$out" = "a b||--x|cli-exit|" ] || fail "COMMAND saw '$out'" || return 1
  # and the same stdin
  out=$(echo from-stdin | db run --url "$URL" cli-exit -- cat)
  [ "$out" = from-stdin ] || fail "COMMAND read '$out' from stdin" || return 1
  ! key_exists cli-exit || fail "lock still held after the runs" || return 1
  # the unlock latch is deleted before deadbolt exits, not left for its 13 s TTL
  local latches
  latches=$(rcli --scan --pattern 'redisson_unlock_latch:{cli-exit}:*' | wc -l)
  [ "$latches" = 0 ] || fail "$latches unlock latch keys left after the runs"
}

wait_timeout() {
  bg "$WORK/wt-holder" run --url "$URL" cli-wait -- sh -c "touch '$WORK/wt-ready'; sleep 5"
  local holder=$BG
  wait_file "$WORK/wt-ready" 3000 || fail "holder did not start: $(cat "$WORK/wt-holder.err")" || return 1
  local start=$(now_ms) rc=0
  db run --url "$URL" --wait 300ms cli-wait -- touch "$WORK/wt-ran" 2>"$WORK/wt.err" || rc=$?
  local took=$(($(now_ms) - start))
  kill -TERM "$holder"
  wait_exit "$holder" 3000 || true
  [ "$rc" = 4 ] || fail "exit $rc, expected 4; stderr: $(cat "$WORK/wt.err")" || return 1
  grep -q 'timed out' "$WORK/wt.err" || fail "stderr does not say it timed out: $(cat "$WORK/wt.err")" || return 1
  [ ! -e "$WORK/wt-ran" ] || fail "COMMAND ran without the lock" || return 1
  [ "$took" -ge 280 ] || fail "gave up after ${took}ms, before --wait 300ms" || return 1
  [ "$took" -lt $((2000 * SLOW)) ] || fail "took ${took}ms to give up after --wait 300ms"
}

# A waiter gets the lock as soon as the holder releases it, not when the holder's TTL (30s) runs out.
prompt_handoff() {
  bg "$WORK/ph-holder" run --url "$URL" cli-handoff -- \
    sh -c "touch '$WORK/ph-ready'; sleep 1; date +%s%3N >'$WORK/ph-released'"
  local holder=$BG
  wait_file "$WORK/ph-ready" 3000 || fail "holder did not start: $(cat "$WORK/ph-holder.err")" || return 1
  local rc=0
  db run --url "$URL" --wait 10s cli-handoff -- sh -c "date +%s%3N >'$WORK/ph-acquired'" || rc=$?
  wait_exit "$holder" 3000 || fail "holder did not exit" || return 1
  [ "$RC" = 0 ] || fail "holder exit $RC" || return 1
  [ "$rc" = 0 ] || fail "waiter exit $rc" || return 1
  local gap=$(($(cat "$WORK/ph-acquired") - $(cat "$WORK/ph-released")))
  [ "$gap" -lt $((1000 * SLOW)) ] || fail "waiter started ${gap}ms after the holder's command ended"
}

# The lock deleted under a watchdog holder: COMMAND is terminated and deadbolt exits 5, promptly.
lease_lost_deleted() {
  bg "$WORK/ld" run --url "$URL" --watchdog 600ms cli-deleted -- sh -c "touch '$WORK/ld-ready'; exec sleep 30"
  local holder=$BG
  wait_file "$WORK/ld-ready" 3000 || fail "holder did not start: $(cat "$WORK/ld.err")" || return 1
  sleep 0.3
  local start=$(now_ms)
  rcli del cli-deleted >/dev/null
  wait_exit "$holder" 5000 || fail "deadbolt still running 5s after the lock was deleted" || return 1
  local took=$(($(now_ms) - start))
  [ "$RC" = 5 ] || fail "exit $RC, expected 5; stderr: $(cat "$WORK/ld.err")" || return 1
  grep -q 'lost lock' "$WORK/ld.err" || fail "stderr does not say the lock was lost: $(cat "$WORK/ld.err")" || return 1
  [ "$took" -lt $((1500 * SLOW)) ] || fail "took ${took}ms to notice (watchdog 600ms)"
}

# The lock taken by someone else; COMMAND ignores SIGTERM, so it gets SIGKILL after --grace (at most
# a third of the watchdog lease).
lease_lost_taken_grace() {
  bg "$WORK/lt" run --url "$URL" --watchdog 1500ms --grace 400ms cli-taken -- \
    sh -c "trap '' TERM; echo \$\$ >'$WORK/lt-pid'; while :; do sleep 0.05; done"
  local holder=$BG
  wait_file "$WORK/lt-pid" 3000 || fail "holder did not start: $(cat "$WORK/lt.err")" || return 1
  sleep 0.3
  local start=$(now_ms)
  rcli eval "redis.call('del', KEYS[1]); redis.call('hset', KEYS[1], 'someone-else:1', 1);
             redis.call('pexpire', KEYS[1], 30000)" 1 cli-taken >/dev/null
  wait_exit "$holder" 5000 || fail "deadbolt still running 5s after the lock was taken" || return 1
  local took=$(($(now_ms) - start))
  [ "$RC" = 5 ] || fail "exit $RC, expected 5; stderr: $(cat "$WORK/lt.err")" || return 1
  ! kill -0 "$(cat "$WORK/lt-pid")" 2>/dev/null || fail "COMMAND (ignoring SIGTERM) was not killed" || return 1
  [ "$took" -ge 400 ] || fail "exited after ${took}ms, before the 400ms grace" || return 1
  [ "$took" -lt $((2000 * SLOW)) ] || fail "took ${took}ms (renewal every 500ms + grace 400ms)" || return 1
  # the new holder's lock is left alone
  [ "$(rcli hget cli-taken someone-else:1)" = 1 ] || fail "the new holder's lock was touched" || return 1
  rcli del cli-taken >/dev/null
}

# A fixed lease: COMMAND gets SIGTERM --grace before the lease's deadline (the acquire's send + the
# lease - the margin), so it has ended before the lease runs out; the lock is then released.
fixed_lease_runs_out() {
  local start=$(now_ms) rc=0
  timeout -k 1 $((10 * SLOW)) $EMU "$CLI" run --url "$URL" --lease 500ms --grace 200ms cli-lease -- sleep 30 2>"$WORK/fl.err" || rc=$?
  local took=$(($(now_ms) - start))
  [ "$rc" = 5 ] || fail "exit $rc, expected 5; stderr: $(cat "$WORK/fl.err")" || return 1
  [ "$took" -ge 280 ] || fail "stopped after ${took}ms, before the 500ms lease less its 200ms grace" || return 1
  # From before deadbolt started, so its start and connection count too (517 ms once under ASan on a
  # busy machine): this only shows that COMMAND was stopped at the lease's end, not left to run.
  # That the stop comes before the key can expire is cli_deadline_test's business (against the key's
  # expiry, the server frozen).
  [ "$took" -lt $((2000 * SLOW)) ] || fail "took ${took}ms with --lease 500ms: not stopped when the lease ran out" || return 1
  grep -q 'its lease of 500ms ends in' "$WORK/fl.err" || fail "stderr does not say why: $(cat "$WORK/fl.err")" || return 1
  ! key_exists cli-lease || fail "lock still there" || return 1
  # a command done within its lease: its own status, lock released
  rc=0
  db run --url "$URL" --lease 5s cli-lease -- sh -c 'exit 3' || rc=$?
  [ "$rc" = 3 ] || fail "within the lease: exit $rc, expected 3" || return 1
  ! key_exists cli-lease || fail "lock still there after a run within its lease"
}

# SIGTERM/SIGINT to deadbolt go to COMMAND; the lock stays held while COMMAND handles it and is
# released once it has exited; deadbolt exits with COMMAND's status.
signal_forwarded() {
  local sig=$1 name=cli-signal-$1 f=$WORK/sig-$1
  bg "$f" run --url "$URL" "$name" -- sh -c "
    trap 'echo $sig >\"$f.got\"; sleep 0.3; exit 9' $sig
    touch '$f.ready'
    while :; do sleep 0.05; done"
  local holder=$BG
  wait_file "$f.ready" 3000 || fail "holder did not start: $(cat "$f.err")" || return 1
  key_exists "$name" || fail "lock not held while COMMAND runs" || return 1
  kill -"$sig" "$holder"
  wait_file "$f.got" 2000 || fail "COMMAND did not get SIG$sig" || return 1
  key_exists "$name" || fail "lock released before COMMAND exited" || return 1
  wait_exit "$holder" 3000 || fail "deadbolt did not exit after COMMAND" || return 1
  [ "$RC" = 9 ] || fail "exit $RC, expected COMMAND's 9; stderr: $(cat "$f.err")" || return 1
  ! key_exists "$name" || fail "lock still held after COMMAND exited"
}
signal_term_forwarded() { signal_forwarded TERM; }
signal_int_forwarded() { signal_forwarded INT; }

# deadbolt itself SIGKILLed (the OOM killer, a stop timeout) while COMMAND runs: COMMAND goes with it
# at once, long before the lease it held ends, so a second holder never overlaps it.
parent_killed() {
  local name=cli-parent-killed f=$WORK/pk
  bg "$f" run --url "$URL" --watchdog 3s "$name" -- sh -c "echo \$\$ >'$f.tmp'; mv '$f.tmp' '$f.pid'; while :; do sleep 0.05; done"
  local holder=$BG
  wait_file "$f.pid" 3000 || fail "holder did not start: $(cat "$f.err")" || return 1
  local child
  child=$(cat "$f.pid")
  kill -KILL "$holder"
  local deadline=$(($(now_ms) + 1000 * SLOW))
  # (A killed orphan may stay a zombie where nobody reaps it, as in containers: that counts as gone.)
  while kill -0 "$child" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$child/stat" 2>/dev/null | cut -c1)" != Z ]; do
    if [ "$(now_ms)" -ge "$deadline" ]; then
      kill -KILL "$child" 2>/dev/null || true
      fail "COMMAND (pid $child) still running 1 s after deadbolt was killed"
      return 1
    fi
    sleep 0.01
  done
  key_exists "$name" || fail "the lock ended before its lease (nobody released it)" || return 1
  db run --url "$URL" --wait 10s "$name" -- true || fail "a second holder could not take it after the lease"
}

# One Ctrl-C at a terminal: the kernel sends SIGINT to the whole foreground process group, COMMAND
# included; deadbolt must not forward a second one. Run under a pseudo-terminal.
ctrl_c_once() {
  local f=$WORK/cc
  # COMMAND lists every SIGINT it gets with its sender (sigtimedwait: the kernel's has si_code SI_KERNEL).
  local counter="import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
open('$f.ready', 'w').close()
got = []
while True:
    info = signal.sigtimedwait([signal.SIGINT], 1.5)
    if info is None:
        break
    got.append('pid=%d code=%d' % (info.si_pid, info.si_code))
open('$f.got', 'w').write(' '.join(got))"
  python3 - "$f" $EMU "$CLI" run --url "$URL" cli-ctrl-c -- python3 -c "$counter" <<'PY' || return 1
import os, pty, sys, time
out = sys.argv[1]
pid, master = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
deadline = time.time() + 10
while not os.path.exists(out + ".ready"):
    if time.time() > deadline:
        print("COMMAND did not start"); sys.exit(1)
    time.sleep(0.01)
time.sleep(0.5)
os.write(master, b"\x03")  # the terminal's interrupt character
while True:
    try:
        if not os.read(master, 1024): break
    except OSError:
        break
os.waitpid(pid, 0)
got = open(out + ".got").read().split() if os.path.exists(out + ".got") else []
if got != ["pid=0", "code=128"]:
    print("one Ctrl-C, COMMAND got: %s" % (" ".join(got) or "nothing")); sys.exit(1)
PY
}

# A signal while still waiting for the lock: deadbolt gives up (128+N) without running COMMAND and
# without disturbing the holder.
signal_while_waiting() {
  bg "$WORK/sw-holder" run --url "$URL" cli-sigwait -- sh -c "touch '$WORK/sw-ready'; sleep 30"
  local holder=$BG
  wait_file "$WORK/sw-ready" 3000 || fail "holder did not start: $(cat "$WORK/sw-holder.err")" || return 1
  bg "$WORK/sw-waiter" run --url "$URL" cli-sigwait -- touch "$WORK/sw-ran"
  local waiter=$BG
  wait_waiters cli-sigwait 3000 || fail "waiter is not waiting: $(cat "$WORK/sw-waiter.err")" || return 1
  kill -TERM "$waiter"
  wait_exit "$waiter" 2000 || fail "waiter did not exit after SIGTERM" || return 1
  [ "$RC" = 143 ] || fail "waiter exit $RC, expected 143; stderr: $(cat "$WORK/sw-waiter.err")" || return 1
  [ ! -e "$WORK/sw-ran" ] || fail "COMMAND ran" || return 1
  key_exists cli-sigwait || fail "holder's lock disturbed" || return 1
  kill -TERM "$holder"
  wait_exit "$holder" 3000 || fail "holder did not exit" || return 1
  [ "$RC" = 143 ] || fail "holder exit $RC, expected 143 (sleep killed by SIGTERM)" || return 1
  ! key_exists cli-sigwait || fail "lock still held"
}

# Connection refused: the client keeps retrying for config::command_timeout (3s) before it gives up,
# so the three subcommands are tried at once.
# A signal while still connecting (a server that accepts but never answers): deadbolt gives up at
# once with 128+N instead of carrying on and maybe running COMMAND.
signal_while_connecting() {
  python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
conns = []
while True:
    c, _ = s.accept()
    conns.append(c)
    open(sys.argv[2], "w").close()
' "$WORK/sc-port" "$WORK/sc-accepted" &
  PIDS+=($!)
  wait_file "$WORK/sc-port" 3000 || fail "silent server did not start" || return 1
  bg "$WORK/sc" run --url "redis://127.0.0.1:$(cat "$WORK/sc-port")" cli-sigconnect -- touch "$WORK/sc-ran"
  local waiter=$BG
  wait_file "$WORK/sc-accepted" 3000 || fail "deadbolt did not connect" || return 1
  sleep 0.1  # past the signal handlers' installation (done before connecting)
  local start=$(now_ms)
  kill -TERM "$waiter"
  wait_exit "$waiter" 5000 || fail "deadbolt did not exit" || return 1
  local took=$(($(now_ms) - start))
  [ "$RC" = 143 ] || fail "exit $RC after ${took}ms, expected 143; stderr: $(cat "$WORK/sc.err")" || return 1
  [ "$took" -lt $((1000 * SLOW)) ] || fail "took ${took}ms to give up" || return 1
  [ ! -e "$WORK/sc-ran" ] || fail "COMMAND ran"
}

cannot_connect() {
  local i pids=()
  local -a cmds=("run --url redis://127.0.0.1:1 cli-nc -- touch $WORK/nc-ran"
                 "status --url redis://127.0.0.1:1 cli-nc"
                 "unlock --force --url redis://127.0.0.1:1 cli-nc")
  for i in "${!cmds[@]}"; do
    # shellcheck disable=SC2086
    bg "$WORK/nc$i" ${cmds[$i]}
    pids+=("$BG")
  done
  for i in "${!cmds[@]}"; do
    wait_exit "${pids[$i]}" 10000 || fail "'${cmds[$i]}' still running after 10s" || return 1
    [ "$RC" = 3 ] || fail "'${cmds[$i]}': exit $RC, expected 3; stderr: $(cat "$WORK/nc$i.err")" || return 1
    grep -q 'cannot connect to 127.0.0.1:1' "$WORK/nc$i.err" \
      || fail "'${cmds[$i]}' stderr: $(cat "$WORK/nc$i.err")" || return 1
  done
  [ ! -e "$WORK/nc-ran" ] || fail "COMMAND ran without a server"
}

usage_errors() {
  local rc args
  local -a cases=(
    "run --bogus cli-usage -- true"
    "run -- touch $WORK/usage-ran"
    "run cli-usage"
    "run cli-usage --"
    "run --wait 5x cli-usage -- touch $WORK/usage-ran"
    "run --lease abc cli-usage -- touch $WORK/usage-ran"
    "run --grace -1 cli-usage -- touch $WORK/usage-ran"
    "run --wait"
    "run --lease 1s --watchdog 1s cli-usage -- true"
    "run a b -- true"
    "status"
    "status --force cli-usage"
    "unlock cli-usage"
    "frobnicate cli-usage"
    ""
  )
  for args in "${cases[@]}"; do
    rc=0
    # shellcheck disable=SC2086
    db $args >"$WORK/usage.out" 2>"$WORK/usage.err" || rc=$?
    [ "$rc" = 2 ] || fail "'$args': exit $rc, expected 2" || return 1
    # one line with the reason, one pointing at the help: not the whole usage text
    [ "$(wc -l <"$WORK/usage.err")" = 2 ] && [ "$(sed -n 1p "$WORK/usage.err" | grep -c '^deadbolt: ')" = 1 ] \
      && sed -n 2p "$WORK/usage.err" | grep -q "^try 'deadbolt .*--help'$" \
      || fail "'$args': stderr is not one reason and a hint: $(cat "$WORK/usage.err")" || return 1
  done
  [ ! -e "$WORK/usage-ran" ] || fail "a COMMAND ran despite a usage error" || return 1
  rc=0
  db --help >"$WORK/usage.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] && grep -q '^usage:' "$WORK/usage.out" || fail "--help: exit $rc" || return 1
  ! key_exists cli-usage || fail "a usage error touched the lock"
}

status_json() {
  local json=$WORK/status.json rc=0
  db status --url "$URL" --json cli-status >"$json" || rc=$?
  [ "$rc" = 1 ] || fail "status of a free lock: exit $rc, expected 1 (not held)" || return 1
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["name"] == "cli-status" and s["locked"] is False and s["holders"] == [], s
' "$json" || fail "free lock: $(cat "$json")" || return 1

  # a name that needs escaping in JSON
  local odd='cli-"st\at{us}'
  rc=0
  db status --url "$URL" --json "$odd" >"$json" || rc=$?
  [ "$rc" = 1 ] || fail "status of '$odd' failed: exit $rc" || return 1
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["name"] == sys.argv[2] and s["locked"] is False, s
' "$json" "$odd" || fail "odd name: $(cat "$json")" || return 1

  bg "$WORK/st-holder" run --url "$URL" --fenced cli-status -- \
    sh -c "echo \$DEADBOLT_FENCING_TOKEN >'$WORK/st-token'; sleep 30"
  local holder=$BG
  wait_file "$WORK/st-token" 3000 || fail "holder did not start: $(cat "$WORK/st-holder.err")" || return 1
  rc=0
  db status --url "$URL" --json cli-status >"$json" || rc=$?
  [ "$rc" = 0 ] || fail "status: exit $rc" || return 1
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
pid, token = sys.argv[2], int(sys.argv[3])
assert s["locked"] is True and s["type"] == "hash", s
assert len(s["holders"]) == 1, s
h = s["holders"][0]
assert h["owner"] == pid and h["count"] == 1 and len(h["client"]) == 36, (h, pid)
assert 0 < s["ttl_ms"] <= 30000, s
assert s["fencing_token"] == token, (s, token)
' "$json" "$holder" "$(cat "$WORK/st-token")" 2>&1 || fail "held lock: $(cat "$json")" || return 1
  # the text form names the holder too
  db status --url "$URL" cli-status >"$WORK/status.txt" || fail "text status failed" || return 1
  grep -q "cli-status: fenced lock, locked" "$WORK/status.txt" && grep -q ":$holder  holds 1" "$WORK/status.txt" \
    && grep -q "fencing token: $(cat "$WORK/st-token")" "$WORK/status.txt" \
    || fail "text status: $(cat "$WORK/status.txt")" || return 1
  kill -TERM "$holder"
  wait_exit "$holder" 3000 || fail "holder did not exit" || return 1
  ! key_exists cli-status || fail "lock still held"
}

fenced_tokens_increase() {
  local prev=0 tok i
  for i in 1 2 3 4; do
    tok=$(db run --url "$URL" --fenced cli-fenced -- sh -c 'echo "$DEADBOLT_FENCING_TOKEN"') \
      || fail "run $i failed" || return 1
    [[ "$tok" =~ ^[0-9]+$ ]] || fail "run $i: DEADBOLT_FENCING_TOKEN='$tok'" || return 1
    [ "$tok" -gt "$prev" ] || fail "run $i: token $tok after $prev" || return 1
    prev=$tok
  done
  # without --fenced there is no token
  tok=$(db run --url "$URL" cli-fenced -- sh -c 'echo "${DEADBOLT_FENCING_TOKEN-unset}"')
  [ "$tok" = unset ] || fail "unfenced run got a token '$tok'" || return 1
  [ "$(rcli get 'redisson_lock_token:{cli-fenced}')" = "$prev" ] || fail "token counter is not $prev"
}

unlock_force() {
  local rc=0
  db unlock --url "$URL" --force cli-unlock >"$WORK/un.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "unlock of a free lock: exit $rc: $(cat "$WORK/un.out")" || return 1
  grep -q 'was not locked' "$WORK/un.out" || fail "unlock of a free lock says: $(cat "$WORK/un.out")" || return 1

  bg "$WORK/un-holder" run --url "$URL" --watchdog 600ms cli-unlock -- sh -c "touch '$WORK/un-ready'; exec sleep 30"
  local holder=$BG
  wait_file "$WORK/un-ready" 3000 || fail "holder did not start: $(cat "$WORK/un-holder.err")" || return 1
  # a waiter queued behind the holder is woken by the force unlock
  bg "$WORK/un-waiter" run --url "$URL" --wait 10s cli-unlock -- sh -c "date +%s%3N >'$WORK/un-acquired'"
  local waiter=$BG
  wait_waiters cli-unlock 3000 || fail "waiter is not waiting: $(cat "$WORK/un-waiter.err")" || return 1
  [ ! -e "$WORK/un-acquired" ] || fail "waiter got the lock while it was held" || return 1
  local start=$(now_ms)
  rc=0
  db unlock --url "$URL" --force cli-unlock >"$WORK/un.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "unlock: exit $rc: $(cat "$WORK/un.out")" || return 1
  grep -q 'released lock cli-unlock' "$WORK/un.out" || fail "unlock says: $(cat "$WORK/un.out")" || return 1
  wait_exit "$waiter" 3000 || fail "waiter not done after the force unlock" || return 1
  [ "$RC" = 0 ] || fail "waiter exit $RC: $(cat "$WORK/un-waiter.err")" || return 1
  local gap=$(($(cat "$WORK/un-acquired") - start))
  [ "$gap" -lt $((1000 * SLOW)) ] || fail "waiter acquired ${gap}ms after the force unlock" || return 1
  # the old holder learns it lost the lock
  wait_exit "$holder" 3000 || fail "old holder still running" || return 1
  [ "$RC" = 5 ] || fail "old holder exit $RC, expected 5" || return 1
  ! key_exists cli-unlock || fail "lock still held"
}

# unlock --force touches only what has a lock's shape: application data is refused and kept.
unlock_force_refuses_data() {
  local rc=0
  rcli hset cli-user:42 name alice >/dev/null
  db unlock --url "$URL" --force cli-user:42 >"$WORK/ud.out" 2>&1 || rc=$?
  [ "$rc" = 1 ] || fail "exit $rc, expected 1: $(cat "$WORK/ud.out")" || return 1
  grep -q "not a lock (field 'name')" "$WORK/ud.out" || fail "says: $(cat "$WORK/ud.out")" || return 1
  [ "$(rcli hget cli-user:42 name)" = alice ] || fail "the hash was changed" || return 1
  rcli rpush cli-list x >/dev/null
  rc=0
  db unlock --url "$URL" --force cli-list >"$WORK/ud.out" 2>&1 || rc=$?
  [ "$rc" = 1 ] && grep -q "it is a list" "$WORK/ud.out" || fail "list: exit $rc: $(cat "$WORK/ud.out")" || return 1
  rcli set cli-number 3 >/dev/null
  rc=0
  db unlock --url "$URL" --force cli-number >"$WORK/ud.out" 2>&1 || rc=$?
  [ "$rc" = 1 ] && grep -q "say --semaphore or --latch" "$WORK/ud.out" || fail "number: exit $rc: $(cat "$WORK/ud.out")" || return 1
  [ "$(rcli get cli-number)" = 3 ] || fail "the number was changed" || return 1
  rc=0
  db unlock --url "$URL" --force --semaphore cli-number >"$WORK/ud.out" 2>&1 || rc=$?
  [ "$rc" = 1 ] && grep -q "plain semaphore" "$WORK/ud.out" || fail "plain semaphore: exit $rc: $(cat "$WORK/ud.out")" || return 1
  rcli del cli-user:42 cli-list cli-number >/dev/null
}

# unlock --force --semaphore: a permit-expirable semaphore whose holder died takes back its permit
# (expired ones, or one named by its id); --latch deletes a latch.
unlock_force_semaphore_latch() {
  local f=$WORK/us name=cli-unlock-sem
  bg "$f" run --url "$URL" --semaphore 1 --watchdog 600ms "$name" -- sh -c "echo \$DEADBOLT_PERMIT_ID >'$f.tmp'; mv '$f.tmp' '$f.id'; exec sleep 30"
  local holder=$BG
  wait_file "$f.id" 3000 || fail "holder did not start: $(cat "$f.err")" || return 1
  kill -KILL "$holder"  # its permit stays taken until it expires
  [ "$(rcli get "$name")" = 0 ] || fail "permit not taken" || return 1
  db unlock --url "$URL" --force --semaphore --permit "$(cat "$f.id")" "$name" >"$WORK/us.out" 2>&1 ||
    fail "release by id: $(cat "$WORK/us.out")" || return 1
  grep -q "released permit" "$WORK/us.out" || fail "says: $(cat "$WORK/us.out")" || return 1
  [ "$(rcli get "$name")" = 1 ] || fail "permit not back after release by id" || return 1

  rm -f "$f.id"
  bg "$f" run --url "$URL" --semaphore 1 --watchdog 300ms "$name" -- sh -c "echo x >'$f.tmp'; mv '$f.tmp' '$f.id'; exec sleep 30"
  holder=$BG
  wait_file "$f.id" 3000 || fail "second holder did not start: $(cat "$f.err")" || return 1
  kill -KILL "$holder"
  sleep 0.5  # past its lease
  db unlock --url "$URL" --force --semaphore "$name" >"$WORK/us.out" 2>&1 || fail "take back: $(cat "$WORK/us.out")" || return 1
  grep -q "1 available" "$WORK/us.out" || fail "says: $(cat "$WORK/us.out")" || return 1

  rcli set cli-unlock-latch 2 >/dev/null
  db unlock --url "$URL" --force --latch cli-unlock-latch >"$WORK/us.out" 2>&1 || fail "latch: $(cat "$WORK/us.out")" || return 1
  ! key_exists cli-unlock-latch || fail "latch still there"
}

redis_url_env() {
  local rc=0 out
  # (an unreachable REDIS_URL takes command_timeout to give up: in the background meanwhile)
  REDIS_URL=redis://127.0.0.1:1 bg "$WORK/env-bad" run cli-env -- touch "$WORK/env-ran"
  local bad=$BG
  out=$(REDIS_URL=$URL db run cli-env -- echo ran) || rc=$?
  [ "$rc" = 0 ] && [ "$out" = ran ] || fail "REDIS_URL=$URL: exit $rc, output '$out'" || return 1
  # --url wins over REDIS_URL
  rc=0
  REDIS_URL=redis://127.0.0.1:1 db run --url "$URL" cli-env -- true || rc=$?
  [ "$rc" = 0 ] || fail "--url did not override REDIS_URL: exit $rc" || return 1
  wait_exit "$bad" 10000 || fail "REDIS_URL=redis://127.0.0.1:1: still running after 10s" || return 1
  [ "$RC" = 3 ] && grep -q 'cannot connect to 127.0.0.1:1' "$WORK/env-bad.err" \
    || fail "REDIS_URL=redis://127.0.0.1:1: exit $RC: $(cat "$WORK/env-bad.err")" || return 1
  [ ! -e "$WORK/env-ran" ] || fail "COMMAND ran without a server"
}

read_write_fair() {
  local rc=0
  # two readers share the lock: each sees the other's hold while it runs
  bg "$WORK/rw-r1" run --url "$URL" --read cli-rw -- sh -c "touch '$WORK/rw-r1-in'; sleep 30"
  local r1=$BG
  wait_file "$WORK/rw-r1-in" 3000 || fail "reader 1 did not start: $(cat "$WORK/rw-r1.err")" || return 1
  db run --url "$URL" --read --wait 2s cli-rw -- true || rc=$?
  [ "$rc" = 0 ] || fail "second reader: exit $rc" || return 1
  [ "$(rcli hget cli-rw mode)" = read ] || fail "mode is '$(rcli hget cli-rw mode)', not read" || return 1
  # a writer is kept out while the reader holds
  rc=0
  db run --url "$URL" --write --wait 300ms cli-rw -- touch "$WORK/rw-wrote" 2>/dev/null || rc=$?
  [ "$rc" = 4 ] && [ ! -e "$WORK/rw-wrote" ] || fail "writer beside a reader: exit $rc" || return 1
  # ... and gets in once the reader is done
  bg "$WORK/rw-w" run --url "$URL" --write --wait 10s cli-rw -- sh -c "rcli_mode=\$(redis-cli -p $PORT hget cli-rw mode); echo \$rcli_mode >'$WORK/rw-w-mode'"
  local w=$BG
  sleep 0.2
  kill -TERM "$r1"
  wait_exit "$r1" 3000 || fail "reader 1 did not exit" || return 1
  wait_exit "$w" $((3000)) || fail "writer did not finish after the reader left" || return 1
  [ "$RC" = 0 ] && [ "$(cat "$WORK/rw-w-mode")" = write ] || fail "writer: exit $RC, mode '$(cat "$WORK/rw-w-mode" 2>/dev/null)'" || return 1
  ! key_exists cli-rw || fail "read/write lock still held" || return 1
  # unlock --force on a write lock wakes its waiting readers (their channel is the rwlock one)
  bg "$WORK/rw-w2" run --url "$URL" --write cli-rw -- sh -c "touch '$WORK/rw-w2-in'; exec sleep 30"
  local w2=$BG
  wait_file "$WORK/rw-w2-in" 3000 || fail "writer 2 did not start: $(cat "$WORK/rw-w2.err")" || return 1
  bg "$WORK/rw-r3" run --url "$URL" --read --wait 20s cli-rw -- true
  local r3=$BG
  local deadline=$(($(now_ms) + 3000 * SLOW))
  until [ "$(rcli pubsub numsub 'redisson_rwlock:{cli-rw}' | sed -n 2p)" -ge 1 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "the reader is not waiting" || return 1
    sleep 0.01
  done
  db unlock --url "$URL" --force cli-rw >/dev/null || fail "unlock --force of a write lock failed" || return 1
  wait_exit "$r3" 3000 || fail "the reader was not woken by unlock --force" || return 1
  [ "$RC" = 0 ] || fail "reader after unlock --force: exit $RC" || return 1
  # (its 30 s lease would have kept the reader out: the message woke it) writer 2 finds its lock gone
  kill -TERM "$w2"
  wait_exit "$w2" 3000 || fail "writer 2 still running" || return 1
  [ "$RC" = 5 ] || fail "writer 2 exit $RC, expected 5 (lost)" || return 1
  # the flags exclude each other
  rc=0
  db run --url "$URL" --read --fair cli-rw -- true 2>/dev/null || rc=$?
  [ "$rc" = 2 ] || fail "--read --fair: exit $rc, expected 2" || return 1
  # a fair lock: the waiter queues in Redisson's list while the holder runs
  bg "$WORK/fair-h" run --url "$URL" --fair cli-fair -- sh -c "touch '$WORK/fair-in'; sleep 30"
  local holder=$BG
  wait_file "$WORK/fair-in" 3000 || fail "fair holder did not start: $(cat "$WORK/fair-h.err")" || return 1
  bg "$WORK/fair-w" run --url "$URL" --fair --wait 10s cli-fair -- touch "$WORK/fair-ran"
  local waiter=$BG
  local deadline=$(($(now_ms) + 3000 * SLOW))
  until [ "$(rcli llen 'redisson_lock_queue:{cli-fair}')" = 1 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "the fair waiter is not queued" || return 1
    sleep 0.01
  done
  kill -TERM "$holder"
  wait_exit "$waiter" 3000 || fail "fair waiter not done after the holder left" || return 1
  [ "$RC" = 0 ] && [ -e "$WORK/fair-ran" ] || fail "fair waiter: exit $RC: $(cat "$WORK/fair-w.err")" || return 1
  [ "$(rcli exists 'redisson_lock_queue:{cli-fair}' 'redisson_lock_timeout:{cli-fair}' cli-fair)" = 0 ] \
    || fail "fair lock keys left behind"
}

semaphore_permits() {
  local rc=0
  # two permits: two holders run side by side, each with its own permit id
  bg "$WORK/sem-a" run --url "$URL" --semaphore 2 --watchdog 600ms cli-sem -- sh -c "echo \$DEADBOLT_PERMIT_ID >'$WORK/sem-a-id'; exec sleep 30"
  local a=$BG
  bg "$WORK/sem-b" run --url "$URL" --semaphore 2 cli-sem -- sh -c "echo \$DEADBOLT_PERMIT_ID >'$WORK/sem-b-id'; exec sleep 30"
  local b=$BG
  wait_file "$WORK/sem-a-id" 3000 && wait_file "$WORK/sem-b-id" 3000 \
    || fail "holders did not start: $(cat "$WORK/sem-a.err" "$WORK/sem-b.err")" || return 1
  sleep 0.05
  [[ "$(cat "$WORK/sem-a-id")" =~ ^[0-9a-f]{32}$ ]] || fail "DEADBOLT_PERMIT_ID='$(cat "$WORK/sem-a-id")'" || return 1
  [ "$(cat "$WORK/sem-a-id")" != "$(cat "$WORK/sem-b-id")" ] || fail "both holders got one permit id" || return 1
  [ "$(rcli get cli-sem)" = 0 ] && [ "$(rcli zcard '{cli-sem}:timeout')" = 2 ] \
    || fail "semaphore: $(rcli get cli-sem) available, $(rcli zcard '{cli-sem}:timeout') acquired" || return 1
  # a third waits; it runs once a holder is gone, even one that crashed (its permit's lease ends)
  rc=0
  db run --url "$URL" --semaphore 2 --wait 300ms cli-sem -- true 2>/dev/null || rc=$?
  [ "$rc" = 4 ] || fail "third holder beside two: exit $rc, expected 4" || return 1
  kill -KILL "$a"
  local start=$(now_ms)
  rc=0
  db run --url "$URL" --semaphore 2 --wait 10s cli-sem -- true || rc=$?
  [ "$rc" = 0 ] || fail "after a holder crashed: exit $rc" || return 1
  local gap=$(($(now_ms) - start))
  [ "$gap" -lt $((3000 * SLOW)) ] || fail "the crashed holder's permit came back after ${gap}ms" || return 1
  kill -TERM "$b"
  wait_exit "$b" 3000 || fail "holder b did not exit" || return 1
  [ "$RC" = 143 ] || fail "holder b exit $RC, expected 143" || return 1
  [ "$(rcli get cli-sem)" = 2 ] && [ "$(rcli zcard '{cli-sem}:timeout')" = 0 ] \
    || fail "afterwards: $(rcli get cli-sem) available, $(rcli zcard '{cli-sem}:timeout') acquired" || return 1
  rc=0
  db run --url "$URL" --semaphore 0 cli-sem -- true 2>/dev/null || rc=$?
  [ "$rc" = 2 ] || fail "--semaphore 0: exit $rc, expected 2"
}

# ---- driver --------------------------------------------------------------------------------------
ALL=(usage_errors cannot_connect redis_url_env exit_status_passthrough wait_timeout prompt_handoff
     lease_lost_deleted lease_lost_taken_grace fixed_lease_runs_out signal_term_forwarded
     signal_int_forwarded signal_while_waiting signal_while_connecting status_json fenced_tokens_increase unlock_force
     counter_mutual_exclusion read_write_fair semaphore_permits parent_killed ctrl_c_once
     unlock_force_refuses_data unlock_force_semaphore_latch)
run_cases "${ALL[@]}"
