#!/usr/bin/env bash
# The lease's deadline on the client (issue #26 item 1), end to end: with the server frozen (SIGSTOP:
# it answers nothing, and its clock, which expires the key, runs on), COMMAND and the worker it forked
# are stopped --grace before the hold's deadline (the acquire's send + the lease - the margin), so
# before the moment the key can expire; deadbolt exits 5. A server of its own: the cases freeze it.
#   cli_deadline_test.sh CLI [EMULATOR ARGS...]      (see cli_lib.sh)
# shellcheck disable=SC2016,SC2086,SC2155,SC2317  # sh -c scripts, $EMU split on purpose, indirect calls
set -euo pipefail

# shellcheck source=tests/cli/cli_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$@"

REDIS_PID=$(cat "$DEADBOLT_REDIS_DIR/redis.pid")
trap 'kill -CONT "$REDIS_PID" 2>/dev/null || true; cleanup' EXIT

# A COMMAND that forks a worker writing a line every 0.1s to PREFIX.log; both pids go to PREFIX.pids,
# then PREFIX.ready appears and COMMAND waits. Both die of SIGTERM.
TREE='p=$0
sh -c "while :; do echo x >>\"$p.log\"; sleep 0.1; done" & echo $! >>"$p.pids"
echo $$ >>"$p.pids"
touch "$p.ready"
wait'

# The pids of PIDFILE that still run (a zombie counts as gone).
alive() {
  local pid
  for pid in $(cat "$1"); do
    if kill -0 "$pid" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)" != Z ]; then
      printf '%s ' "$pid"
    fi
  done
}

# frozen NAME PREFIX LEASE_MS ARGS...: runs TREE under deadbolt with ARGS, freezes the server before
# the first renewal (a third of LEASE_MS), and checks that the tree is gone before the key's expiry
# (read with PTTL just before the freeze) and that deadbolt exits 5.
frozen() {
  local name=$1 p=$2 lease=$3
  shift 3
  local start=$(now_ms)
  bg "$p" run --url "$URL" "$@" "$name" -- sh -c "$TREE" "$p"
  local holder=$BG
  wait_file "$p.ready" 3000 || fail "COMMAND did not start: $(cat "$p.err")" || return 1
  local before_pttl=$(now_ms)
  local pttl=$(rcli pttl "$name")
  # A permit's expiry is its score in the semaphore's permit table (ms of the clients' wall clock);
  # ours is the latest (the table should hold no other: its count goes into a failure's message).
  # (Read by a script: the member is 16 raw bytes, which may hold a newline.)
  local permit_expiry=$(rcli eval "local r = redis.call('zrange', KEYS[1], -1, -1, 'withscores'); return r[2]" 1 "{$name}:timeout")
  local permits=$(rcli zcard "{$name}:timeout")
  permit_expiry=${permit_expiry%.*}
  kill -STOP "$REDIS_PID"
  local frozen_at=$(now_ms)
  # No renewal went out before the freeze (the first is a third of the lease after the acquire, which
  # came after `start`): the key expires at its acquire's lease, which the PTTL read tells.
  [ $((frozen_at - start)) -lt $((lease / 3)) ] || { kill -CONT "$REDIS_PID"; fail "too slow: frozen $((frozen_at - start))ms after the start"; return 1; }
  local expiry=$((before_pttl + pttl)) left gone
  [ -z "$permit_expiry" ] || expiry=$permit_expiry
  while left=$(alive "$p.pids"); [ -n "$left" ]; do
    if [ "$(now_ms)" -ge $((expiry + 3000 * SLOW)) ]; then
      kill -CONT "$REDIS_PID"
      kill -KILL $left 2>/dev/null || true
      fail "still running 3s after the key's expiry: $left; stderr: $(cat "$p.err")"
      return 1
    fi
    sleep 0.005
  done
  gone=$(now_ms)
  kill -CONT "$REDIS_PID"
  [ "$gone" -lt "$expiry" ] || fail "COMMAND's tree ran until $((gone - expiry))ms after the key's expiry (pttl $pttl, $permits permits at the freeze); stderr: $(cat "$p.err")" || return 1
  wait_exit "$holder" $((5000 + lease)) || fail "deadbolt still running after its tree ended: $(cat "$p.err")" || return 1
  [ "$RC" = 5 ] || fail "exit $RC, expected 5; stderr: $(cat "$p.err")" || return 1
  grep -q 'lost lock' "$p.err" || fail "stderr does not say the lock was lost: $(cat "$p.err")" || return 1
  echo "stopped $((expiry - gone))ms before the key's expiry"
}

# ---- cases ---------------------------------------------------------------------------------------

# Under the watchdog: no renewal is answered; --grace before the deadline, the tree gets SIGTERM.
# (Under an emulator, everything takes SLOW times longer: so do the lease and the grace.)
frozen_watchdog() { frozen cli-frozen-watchdog "$WORK/fw" $((3000 * SLOW)) --watchdog $((3000 * SLOW))ms --grace $((600 * SLOW))ms; }

# A fixed lease: the tree is stopped --grace before the lease's deadline, not when it has run out.
frozen_fixed_lease() { frozen cli-frozen-lease "$WORK/fl" $((3000 * SLOW)) --lease $((3000 * SLOW))ms --grace $((600 * SLOW))ms; }

# A permit of a permit-expirable semaphore, renewed by deadbolt itself (--semaphore): the same, from
# the permit's own deadline (the library does not track permits: run keeps it).
frozen_semaphore() { frozen cli-frozen-sem "$WORK/fs" $((3000 * SLOW)) --semaphore 2 --watchdog $((3000 * SLOW))ms --grace $((600 * SLOW))ms; }

# A permit with a fixed lease.
frozen_semaphore_fixed_lease() { frozen cli-frozen-sem-lease "$WORK/fsl" $((3000 * SLOW)) --semaphore 2 --lease $((3000 * SLOW))ms --grace $((600 * SLOW))ms; }

# ---- driver --------------------------------------------------------------------------------------
ALL=(frozen_watchdog frozen_fixed_lease frozen_semaphore frozen_semaphore_fixed_lease)
run_cases "${ALL[@]}"
