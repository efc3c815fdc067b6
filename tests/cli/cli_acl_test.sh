#!/usr/bin/env bash
# Least privilege (issue #28 item 4) and the spin lock in the CLI, against a real redis-server: for each
# kind, a user made with exactly the rule `deadbolt acl` prints runs, waits, shows and force-unlocks
# that kind with nothing refused (the server's ACL LOG has no entry for it), and cannot touch another
# lock; `run --spin` waits by polling, without pub/sub, also for a user that has no pub/sub at all.
#   cli_acl_test.sh CLI [EMULATOR ARGS...]      (see cli_lib.sh)
# shellcheck disable=SC2016,SC2086,SC2155,SC2317  # sh -c scripts, $EMU split on purpose, indirect calls
set -euo pipefail

# shellcheck source=tests/cli/cli_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$@"

# make_user USER KIND... NAME...: the user with exactly the printed rule (redis-cli reads the line), then
# on, with password pw. Sets AS to its URL.
make_user() {
  local user=$1
  shift
  rcli acl deluser "$user" >/dev/null
  local reply
  reply=$(db acl --user "$user" "$@" | rcli) || fail "acl $*: exit $?" || return 1
  [ "$reply" = OK ] || fail "ACL SETUSER from 'deadbolt acl $*' answered: $reply" || return 1
  [ "$(rcli acl setuser "$user" on '>pw')" = OK ] || fail "cannot enable $user" || return 1
  AS="redis://$user:pw@127.0.0.1:$PORT"
}

# What the server refused USER (one "reason object" line each; user names carry the script's pid); the other
# CLI scripts share the server, so only USER's entries count.
refused_for() {
  # redis-cli's raw form: a flat list of field, value pairs per entry.
  rcli acl log 128 | awk -v user="$1" '
    /^count$/ { if (u == user) print reason, object; reason = ""; object = ""; u = ""; f = "" ; next }
    f == "reason" { reason = $0 } f == "object" { object = $0 } f == "username" { u = $0 }
    { f = $0 }
    END { if (u == user) print reason, object }'
}

# run COMMAND holding NAME as USER, in the background: hold_as URL NAME ARGS...; sets HOLDER. A short
# watchdog lease, so that a lock taken away is noticed within a second; NAME.in has the permit id.
hold_as() {
  local url=$1 name=$2
  shift 2
  rm -f "$WORK/$name.in"
  bg "$WORK/$name-holder" run --url "$url" --watchdog 1s "$@" "$name" -- \
    sh -c "echo \"\$DEADBOLT_PERMIT_ID\" >'$WORK/$name.tmp'; mv '$WORK/$name.tmp' '$WORK/$name.in'; exec sleep 30"
  HOLDER=$BG
  wait_file "$WORK/$name.in" 3000 || fail "holder of $name did not start: $(cat "$WORK/$name-holder.err")"
}

# ---- cases ---------------------------------------------------------------------------------------

# Each kind under its own rule: run (free), a second run -w waiting for a holder and woken when it
# ends (the kind's pub/sub, or polling for --spin), status while held, unlock --force while held; two
# readers at once (a read unlock reads the other reader's hold keys); then nothing in the ACL LOG.
each_kind_under_its_rule() {
  local kind flags unlock_flags name user n=0 rc out
  for kind in plain fenced fair read write semaphore spin; do
    n=$((n + 1))
    name=cli-acl-$kind user=cli-acl-$$-u$n
    flags="--$kind" unlock_flags=""
    case $kind in
      plain) flags="" ;;
      semaphore) flags="--semaphore 1" unlock_flags="--semaphore" ;;
      spin) unlock_flags="--spin" ;;
    esac
    rcli del "$name" >/dev/null
    make_user "$user" $flags "$name" || return 1
    db run --url "$AS" $flags "$name" -- true 2>"$WORK/acl.err" || fail "$kind: run: exit $?: $(cat "$WORK/acl.err")" || return 1
    hold_as "$AS" "$name" $flags || return 1
    bg "$WORK/acl-w" run --url "$AS" -w 10s $flags "$name" -- touch "$WORK/acl-w.ran"
    local waiter=$BG
    out=$(db status --url "$AS" "$name" 2>&1) || fail "$kind: status: exit $?: $out" || return 1
    [[ "$out" == *"pid $HOLDER"* ]] || fail "$kind: status does not show the holder's info: $out" || return 1
    sleep 0.2
    release_holder
    wait_exit "$waiter" 5000 || fail "$kind: the waiter was not woken when the holder ended" || return 1
    [ "$RC" = 0 ] && [ -e "$WORK/acl-w.ran" ] || fail "$kind: waiter: exit $RC: $(cat "$WORK/acl-w.err")" || return 1
    rm -f "$WORK/acl-w.ran"
    hold_as "$AS" "$name" $flags || return 1
    [ "$kind" = semaphore ] && unlock_flags="--semaphore --permit $(cat "$WORK/$name.in")"
    out=$(db unlock --url "$AS" --force $unlock_flags "$name" 2>&1) || fail "$kind: unlock --force: exit $?: $out" || return 1
    wait_exit "$HOLDER" 5000 || true
    [ "$RC" = 5 ] || fail "$kind: the holder did not lose its lock to unlock --force: exit $RC" || return 1
    if [ "$kind" = read ]; then
      # the second reader's release reads the first's hold keys (lua/read_unlock.lua)
      hold_as "$AS" "$name" --read || return 1
      db run --url "$AS" --read "$name" -- true 2>"$WORK/acl-r2.err" || fail "a second reader: exit $?: $(cat "$WORK/acl-r2.err")" || return 1
      release_holder
      [ "$RC" = 143 ] || fail "first reader: exit $RC: $(cat "$WORK/$name-holder.err")" || return 1
    fi
    out=$(refused_for "$user")
    [ -z "$out" ] || fail "$kind: the server refused $user: $out" || return 1
  done
}

# The rule is no wider than it says: the user of lock A cannot take, read or release lock B, read other
# keys, listen on B's channel, or run what the rule does not name.
no_wider_than_its_name() {
  rcli del cli-acl-b >/dev/null
  make_user cli-acl-narrow cli-acl-a || return 1
  local rc=0
  db run --url "$AS" -n cli-acl-b -- touch "$WORK/narrow-ran" 2>"$WORK/narrow.err" || rc=$?
  [ "$rc" = 1 ] && grep -q "permission denied" "$WORK/narrow.err" || fail "run on another name: exit $rc: $(cat "$WORK/narrow.err")" || return 1
  [ ! -e "$WORK/narrow-ran" ] || fail "COMMAND ran" || return 1
  rc=0
  db status --url "$AS" cli-acl-b >/dev/null 2>"$WORK/narrow.err" || rc=$?
  [ "$rc" = 1 ] || fail "status of another name: exit $rc" || return 1
  bg "$WORK/b" run --url "$URL" cli-acl-b -- sh -c "touch '$WORK/b.in'; exec sleep 30"
  local b=$BG
  wait_file "$WORK/b.in" 3000 || fail "cannot hold cli-acl-b" || return 1
  rc=0
  db unlock --url "$AS" --force cli-acl-b >/dev/null 2>&1 || rc=$?
  [ "$rc" = 1 ] && key_exists cli-acl-b || fail "unlock --force of another name: exit $rc" || return 1
  kill -TERM "$b"
  local u=(--user cli-acl-narrow --pass pw --no-auth-warning)
  [[ "$(rcli "${u[@]}" hgetall cli-acl-b 2>&1)" == *NOPERM* ]] || fail "HGETALL of another key allowed" || return 1
  [[ "$(rcli "${u[@]}" keys '*' 2>&1)" == *NOPERM* ]] || fail "KEYS allowed" || return 1
  [[ "$(rcli "${u[@]}" flushall 2>&1)" == *NOPERM* ]] || fail "FLUSHALL allowed" || return 1
  [[ "$(rcli "${u[@]}" publish 'redisson_lock__channel:{cli-acl-b}' 0 2>&1)" == *NOPERM* ]] || fail "PUBLISH on another lock's channel allowed" || return 1
  [[ "$(rcli "${u[@]}" eval "return redis.call('get', 'cli-acl-b')" 0 2>&1)" == *"can't access"* ]] \
    || fail "a script reading another key was allowed" || return 1
  [ "$(rcli "${u[@]}" exists cli-acl-a)" = 0 ] || fail "the user cannot read its own lock" || return 1
  rcli acl deluser cli-acl-narrow >/dev/null
}

# --spin: a second run waits by polling and gets the lock when the first ends; it subscribes to
# nothing, and works for a user whose rule grants no pub/sub at all (which a plain lock needs); the
# watchdog and a fixed lease's deadline work as for the plain lock.
spin_waits_without_pubsub() {
  local name=cli-acl-spin
  rcli del "$name" >/dev/null
  make_user cli-acl-spinner --spin "$name" || return 1
  local rule
  rule=$(rcli acl getuser cli-acl-spinner)
  [[ "$rule" != *subscribe* && "$rule" != *publish* ]] || fail "the spin rule grants pub/sub: $rule" || return 1
  hold_as "$AS" "$name" --spin || return 1
  bg "$WORK/spin-w" run --url "$AS" --spin -w 10s "$name" -- touch "$WORK/spin-w.ran"
  local waiter=$BG
  sleep 0.3
  [ "$(rcli pubsub numsub "redisson_lock__channel:{$name}" | sed -n 2p)" = 0 ] || fail "a spin waiter subscribed" || return 1
  kill -0 "$waiter" 2>/dev/null || fail "the waiter did not wait: $(cat "$WORK/spin-w.err")" || return 1
  release_holder
  wait_exit "$waiter" 5000 || fail "the spin waiter did not get the lock" || return 1
  [ "$RC" = 0 ] && [ -e "$WORK/spin-w.ran" ] || fail "waiter: exit $RC: $(cat "$WORK/spin-w.err")" || return 1
  # the plain lock's lease behaviour: the watchdog (1s) keeps it past its lease while COMMAND runs, and
  # a fixed --lease stops COMMAND --grace before its deadline (exit 5)
  hold_as "$AS" "$name" --spin || return 1
  sleep 1.5
  key_exists "$name" || fail "the watchdog did not renew the spin lock" || return 1
  release_holder
  local rc=0 start=$(now_ms)
  db run --url "$AS" --spin --lease 1s --grace 200ms "$name" -- sleep 10 2>"$WORK/spin.err" || rc=$?
  [ "$rc" = 5 ] && [ $(($(now_ms) - start)) -lt $((5000 * SLOW)) ] || fail "--spin --lease 1s: exit $rc: $(cat "$WORK/spin.err")" || return 1
  grep -q "its lease of 1.0s ends" "$WORK/spin.err" || fail "--spin --lease: $(cat "$WORK/spin.err")" || return 1
  # the rule is the spin lock's: a plain lock's release publishes, which this user may not (exit 6)
  rc=0
  db run --url "$AS" "$name" -- true 2>"$WORK/spin.err" || rc=$?
  [ "$rc" = 6 ] && grep -q "permission denied" "$WORK/spin.err" || fail "a plain lock under the spin rule: exit $rc: $(cat "$WORK/spin.err")" || return 1
  rcli del "$name" >/dev/null
  ! key_exists "$name" || fail "the lock was left held" || return 1
  rcli acl deluser cli-acl-spinner >/dev/null
}

# The text: several names, a name with glob characters and a space (escaped, quoted as redis-cli reads
# it), a cluster URL's commands, a database's SELECT, the URL's user.
printed_rule() {
  local out
  out=$(db --url "redis://app@127.0.0.1:$PORT" acl --fenced 'a*b c' orders) || fail "acl: exit $?" || return 1
  [[ "$out" == "ACL SETUSER app resetkeys resetchannels -@all +evalsha "* ]] || fail "printed: $out" || return 1
  [[ "$out" == *'"~a\\*b?c"'* && "$out" == *"~redisson_lock_token:{orders}"* && "$out" == *"&redisson_lock__channel:{orders}"* ]] \
    || fail "printed: $out" || return 1
  [[ "$out" != *cluster* && "$out" != *select* ]] || fail "a single server's rule has cluster commands: $out" || return 1
  out=$(db --url "redis+cluster://127.0.0.1:$PORT" --cluster-pubsub sharded acl orders) || fail "acl: exit $?" || return 1
  [[ "$out" == *"+cluster|shards"* && "$out" == *"+ssubscribe"* && "$out" == *"+spublish"* && "$out" != *"+publish"* ]] \
    || fail "cluster, sharded: $out" || return 1
  out=$(db --url "redis://127.0.0.1:$PORT/3" acl orders) || fail "acl: exit $?" || return 1
  [[ "$out" == *"+select"* ]] || fail "a database other than 0 needs SELECT: $out" || return 1
  # the printed rule is accepted as it is, glob name and all (a space, which ACL patterns cannot hold,
  # is granted as '?'), and works
  make_user cli-acl-text --fenced 'a*b c' orders || return 1
  db run --url "$AS" --fenced 'a*b c' -- true 2>"$WORK/text.err" || fail "run 'a*b c': exit $?: $(cat "$WORK/text.err")" || return 1
  # --add: a second kind for the same user, the first kept
  rcli del cli-acl-jobs >/dev/null
  [ "$(db acl --user cli-acl-text --add --semaphore 1 cli-acl-jobs | rcli)" = OK ] || fail "acl --add refused" || return 1
  db run --url "$AS" --semaphore 1 cli-acl-jobs -- true 2>"$WORK/text.err" || fail "run --semaphore after --add: exit $?: $(cat "$WORK/text.err")" || return 1
  db run --url "$AS" --fenced 'a*b c' -- true 2>"$WORK/text.err" || fail "the first kind after --add: exit $?: $(cat "$WORK/text.err")" || return 1
  rcli acl deluser cli-acl-text >/dev/null
  local rc=0
  db acl 2>/dev/null || rc=$?
  [ "$rc" = 2 ] || fail "acl without NAME: exit $rc" || return 1
}

# ---- driver --------------------------------------------------------------------------------------
ALL=(printed_rule each_kind_under_its_rule no_wider_than_its_name spin_waits_without_pubsub)
run_cases "${ALL[@]}"
