#!/usr/bin/env bash
# End-to-end tests of the deadbolt CLI's conventions (issue #15 item 2) against a real redis-server:
# option syntax, one-line usage errors, exit codes, connect bounds, secrets, status of every kind, the
# wait line's width, --verbose and ping.
#   cli_conventions_test.sh CLI [EMULATOR ARGS...]      (see cli_lib.sh)
# shellcheck disable=SC2016,SC2086,SC2155,SC2317  # sh -c scripts, $EMU split on purpose, indirect calls
set -euo pipefail

# shellcheck source=tests/cli/cli_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$@"


# ---- cases ---------------------------------------------------------------------------------------

# --opt=value, short options, options after NAME, global options before the subcommand, compound
# durations, per-subcommand help.
option_syntax() {
  local out rc
  out=$(db --url "$URL" run cli-syntax -- echo before) || fail "--url before the subcommand: exit $?" || return 1
  [ "$out" = before ] || fail "--url before the subcommand printed '$out'" || return 1
  out=$(db run --url="$URL" --wait=1m30s cli-syntax -- echo equals) || fail "--opt=value: exit $?" || return 1
  [ "$out" = equals ] || fail "--opt=value printed '$out'" || return 1
  out=$(db run cli-syntax -w 2s -q --url "$URL" -- echo after) || fail "options after NAME: exit $?" || return 1
  [ "$out" = after ] || fail "options after NAME printed '$out'" || return 1
  out=$(db status cli-syntax --url "$URL" --json) || [ $? = 1 ] || fail "status NAME --json: exit $?" || return 1
  [[ "$out" == '{"name":"cli-syntax"'* ]] || fail "status NAME --json printed '$out'" || return 1
  rc=0; db run --url "$URL" --wait 1s1m cli-syntax -- true 2>/dev/null || rc=$?
  [ "$rc" = 2 ] || fail "--wait 1s1m (units out of order): exit $rc, expected 2" || return 1
  out=$(db -V) && [[ "$out" == "deadbolt "* ]] || fail "-V printed '$out'" || return 1
  out=$(db run --help) || fail "run --help: exit $?" || return 1
  grep -q '^usage: deadbolt run ' <<<"$out" && grep -q -- '--nonblock' <<<"$out" && ! grep -q 'unlock --force' <<<"$out" \
    || fail "run --help is not run's help: $out" || return 1
  out=$(db help status) && grep -q '^usage: deadbolt status ' <<<"$out" && ! grep -q -- '--nonblock' <<<"$out" \
    || fail "help status: $out" || return 1
  grep -q '^exit codes' <<<"$out" || fail "help status has no exit code table" || return 1
  ! key_exists cli-syntax || fail "lock left held"
}

# -n takes one attempt; -E sets the exit code of a lost race, so it cannot be taken for COMMAND's own.
nonblock_conflict_exit_code() {
  hold cli-nb || return 1
  local rc=0 start=$(now_ms)
  db run --url "$URL" -n cli-nb -- touch "$WORK/nb-ran" 2>"$WORK/nb.err" || rc=$?
  [ "$rc" = 4 ] || fail "-n on a held lock: exit $rc, expected 4: $(cat "$WORK/nb.err")" || return 1
  grep -q 'is held' "$WORK/nb.err" || fail "-n says: $(cat "$WORK/nb.err")" || return 1
  rc=0; db run --url "$URL" --nonblock -E 42 cli-nb -- touch "$WORK/nb-ran" 2>/dev/null || rc=$?
  [ "$rc" = 42 ] || fail "--nonblock -E 42: exit $rc" || return 1
  rc=0; db run --url "$URL" -w 200ms --conflict-exit-code=0 cli-nb -- touch "$WORK/nb-ran" 2>/dev/null || rc=$?
  [ "$rc" = 0 ] || fail "-w 200ms --conflict-exit-code=0: exit $rc" || return 1
  [ ! -e "$WORK/nb-ran" ] || fail "COMMAND ran without the lock" || return 1
  release_holder
  db run --url "$URL" -n cli-nb -- true || fail "-n on a free lock: exit $?"
}

# A login the server refuses exits 3 in every subcommand; so does a server that is not there.
exit_codes_consistent() {
  rcli acl setuser cli-auth on '>right' '~*' '&*' +@all >/dev/null
  local sub rc url="redis://cli-auth:wrong@127.0.0.1:$PORT"
  for sub in "run cli-ec -- true" "status cli-ec" "unlock --force cli-ec" "ping"; do
    rc=0
    db --url "$url" --connect-timeout 500ms $sub >"$WORK/ec.out" 2>"$WORK/ec.err" || rc=$?
    [ "$rc" = 3 ] || fail "'$sub' with a wrong password: exit $rc, expected 3: $(cat "$WORK/ec.err")" || return 1
    grep -q "cannot connect to 127.0.0.1:$PORT: authentication failed" "$WORK/ec.err" || fail "'$sub': $(cat "$WORK/ec.err")" || return 1
    ! grep -q wrong "$WORK/ec.err" || fail "'$sub' printed the password: $(cat "$WORK/ec.err")" || return 1
  done
  db ping --url "redis://cli-auth:right@127.0.0.1:$PORT" >"$WORK/ec.out" || fail "ping with the right password: exit $?" || return 1
  grep -q PONG "$WORK/ec.out" || fail "ping printed: $(cat "$WORK/ec.out")" || return 1
  rcli acl deluser cli-auth >/dev/null
}

# A server that is down costs --connect-timeout, and no more than --wait.
connect_bounded() {
  local start took rc
  start=$(now_ms); rc=0
  db run --url redis://127.0.0.1:1 --wait 300ms cli-down -- touch "$WORK/down-ran" 2>"$WORK/down.err" || rc=$?
  took=$(($(now_ms) - start))
  [ "$rc" = 3 ] || fail "--wait 300ms, server down: exit $rc: $(cat "$WORK/down.err")" || return 1
  [ "$took" -lt $((2000 * SLOW)) ] || fail "--wait 300ms with the server down took ${took}ms" || return 1
  [ ! -e "$WORK/down-ran" ] || fail "COMMAND ran" || return 1
  start=$(now_ms); rc=0
  db status --connect-timeout 300ms --url redis://127.0.0.1:1 cli-down 2>"$WORK/down.err" || rc=$?
  took=$(($(now_ms) - start))
  [ "$rc" = 3 ] && grep -q 'cannot connect to 127.0.0.1:1' "$WORK/down.err" \
    || fail "status --connect-timeout 300ms: exit $rc: $(cat "$WORK/down.err")" || return 1
  [ "$took" -lt $((2000 * SLOW)) ] || fail "--connect-timeout 300ms took ${took}ms" || return 1
  rc=0; db ping --connect-timeout=300ms --url redis://127.0.0.1:1 2>/dev/null || rc=$?
  [ "$rc" = 3 ] || fail "ping of a server that is down: exit $rc, expected 3"
}

# Every refused option or URL says why; a password is never echoed.
reasons_and_redaction() {
  local rc
  rc=0; db run --url "$URL" --watchdog 10ms cli-why -- true 2>"$WORK/why.err" || rc=$?
  [ "$rc" = 2 ] && grep -q 'watchdog must be at least 30ms' "$WORK/why.err" \
    || fail "--watchdog 10ms: exit $rc: $(cat "$WORK/why.err")" || return 1
  rc=0; db run --url "$URL" --cluster-pubsub maybe cli-why -- true 2>"$WORK/why.err" || rc=$?
  [ "$rc" = 2 ] && grep -q "cluster-pubsub: 'maybe' is not auto, sharded or classic" "$WORK/why.err" \
    || fail "--cluster-pubsub maybe: exit $rc: $(cat "$WORK/why.err")" || return 1
  db run --url "$URL" --cluster-pubsub classic cli-why -- true || fail "--cluster-pubsub classic: exit $?" || return 1
  local url why
  for url in "redis://:hunter2@127.0.0.1:99999|port '99999'" "redis://u:hunter2@[::1|closing ']'" \
             "http://u:hunter2@127.0.0.1|unknown scheme 'http'" "redis://u:hunter2@127.0.0.1/x|database 'x'" \
             "redis://u:hunter%zz@127.0.0.1|%-escape" "redis+cluster://u:hunter2@127.0.0.1:7000/3|database 0 only" \
             "redis+cluster://u:hunter2@127.0.0.1:7000,,127.0.0.1:7001|empty seed" \
             "redis+cluster://u:hunter2@127.0.0.1:7000,127.0.0.1:0|seed '127.0.0.1:0': the port '0'"; do
    why=${url#*|}
    url=${url%%|*}
    for sub in "run cli-why -- true" "status cli-why" "ping"; do
      rc=0; db --url "$url" $sub 2>"$WORK/why.err" || rc=$?
      [ "$rc" = 2 ] && grep -qF -- "$why" "$WORK/why.err" || fail "'$sub --url $url': exit $rc: $(cat "$WORK/why.err")" || return 1
      ! grep -q hunter "$WORK/why.err" || fail "'$sub --url $url' printed the password: $(cat "$WORK/why.err")" || return 1
    done
  done
  # Valkey's schemes are the same URLs: valkey:// reaches the test server, valkey+x:// is refused.
  db ping --url "valkey://127.0.0.1:$PORT" || fail "ping --url valkey://: exit $?" || return 1
  rc=0; db ping --url "valkey+x://127.0.0.1:$PORT" 2>"$WORK/why.err" || rc=$?
  [ "$rc" = 2 ] && grep -qF "unknown scheme 'valkey+x'" "$WORK/why.err" || fail "valkey+x://: exit $rc: $(cat "$WORK/why.err")" || return 1
  rc=0; db -v run --url redis://:hunter2@127.0.0.1:1 --wait 300ms cli-why -- true 2>"$WORK/why.err" || rc=$?
  [ "$rc" = 3 ] && ! grep -q hunter2 "$WORK/why.err" || fail "unreachable: exit $rc: $(cat "$WORK/why.err")"
}

# The password from a file or DEADBOLT_PASSWORD logs in; COMMAND's environment never holds it.
secrets_stay_out_of_command() {
  rcli acl setuser cli-secret on '>s3cret-pw' '~*' '&*' +@all >/dev/null
  local plain="redis://cli-secret@127.0.0.1:$PORT" env_file=$WORK/secret.env rc
  DEADBOLT_PASSWORD=s3cret-pw REDIS_URL="redis://cli-secret:s3cret-pw@127.0.0.1:$PORT" \
    db run cli-secret -- sh -c "env >'$env_file'" || fail "REDIS_URL with a password: exit $?" || return 1
  ! grep -q s3cret "$env_file" || fail "COMMAND's environment holds the password: $(grep s3cret "$env_file")" || return 1
  grep -qx "REDIS_URL=redis://cli-secret@127.0.0.1:$PORT" "$env_file" \
    || fail "COMMAND's REDIS_URL: $(grep REDIS_URL "$env_file")" || return 1
  DEADBOLT_PASSWORD=s3cret-pw db run --url "$plain" cli-secret -- sh -c "env >'$env_file'" \
    || fail "DEADBOLT_PASSWORD: exit $?" || return 1
  ! grep -q 's3cret\|DEADBOLT_PASSWORD' "$env_file" || fail "DEADBOLT_PASSWORD reached COMMAND" || return 1
  printf 's3cret-pw\n' >"$WORK/pw"
  db run --password-file "$WORK/pw" --url "$plain" cli-secret -- true || fail "--password-file: exit $?" || return 1
  db --password-file="$WORK/pw" status --url "$plain" cli-secret >/dev/null || [ $? = 1 ] || fail "status --password-file: exit $?" || return 1
  : >"$WORK/empty-pw"
  rc=0; db run --password-file "$WORK/empty-pw" --url "$plain" cli-secret -- true 2>"$WORK/pw.err" || rc=$?
  [ "$rc" = 2 ] && grep -q 'is empty' "$WORK/pw.err" || fail "an empty password file: exit $rc: $(cat "$WORK/pw.err")" || return 1
  rc=0; db run --password-file "$WORK/missing" --url "$plain" cli-secret -- true 2>/dev/null || rc=$?
  [ "$rc" = 2 ] || fail "a missing password file: exit $rc" || return 1
  rcli acl deluser cli-secret >/dev/null
}

empty_name() {
  local args rc
  for args in "run '' -- touch $WORK/empty-ran" "status ''" "unlock --force ''"; do
    rc=0
    eval db "${args%% *}" --url "$URL" "${args#* }" 2>"$WORK/empty.err" || rc=$?
    [ "$rc" = 2 ] && grep -q 'NAME is empty' "$WORK/empty.err" || fail "$args: exit $rc: $(cat "$WORK/empty.err")" || return 1
  done
  [ ! -e "$WORK/empty-ran" ] || fail "COMMAND ran for an empty name"
}

# status --json is valid JSON whatever the name's bytes; the raw bytes come in name_hex.
status_json_any_name() {
  local name
  name=$(printf 'cli-\xff\xfe-\xc3\xa9')
  db run --url "$URL" "$name" -- sh -c "$EMU '$CLI' status --json --url '$URL' \"\$DEADBOLT_LOCK_NAME\" >'$WORK/utf8.json'" \
    || fail "run under a non-UTF-8 name: exit $?" || return 1
  python3 -c '
import json, sys
s = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert s["name"] == "cli-\ufffd\ufffd-\u00e9", s
assert s["name_hex"] == "636c692dfffe2dc3a9", s
assert s["locked"] is True and len(s["holders"]) == 1, s
' "$WORK/utf8.json" 2>&1 || fail "$(cat -v "$WORK/utf8.json")"
}

# status names every kind (docs/protocol.md §0), and the holder in human terms.
status_every_kind() {
  local json=$WORK/kind.json
  kind_is() {  # kind_is NAME KIND [python assertion on s]
    db status --url "$URL" --json "$1" >"$json" || [ $? = 1 ] || fail "status $1: exit $?" || return 1
    python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
assert s['kind'] == sys.argv[2], s
${3:-pass}
" "$json" "$2" 2>&1 || fail "status $1: $(cat "$json")"
  }
  hold cli-k-plain || return 1
  kind_is cli-k-plain lock "
h = s['holders'][0]
assert h['pid'] == '$HOLDER' and h['host'] == '$(hostname)' and 'sleep 30' in h['command'], h" || return 1
  db status --url "$URL" cli-k-plain >"$WORK/kind.txt"
  grep -q "cli-k-plain: lock, locked" "$WORK/kind.txt" && grep -q "(pid $HOLDER on $(hostname), for .*sleep 30" "$WORK/kind.txt" \
    || fail "text status: $(cat "$WORK/kind.txt")" || return 1
  local info="deadbolt_holder:{cli-k-plain}:$(rcli hkeys cli-k-plain)"
  [ "$(rcli pttl "$info")" -gt 0 ] || fail "the holder info $info has no TTL: $(rcli pttl "$info")" || return 1
  release_holder
  [ "$(rcli exists "$info")" = 0 ] || fail "the holder info outlived the hold" || return 1
  hold cli-k-fenced --fenced || return 1
  kind_is cli-k-fenced fenced_lock "assert s['fencing_token'] >= 1, s" || return 1
  release_holder
  hold cli-k-fair --fair || return 1
  bg "$WORK/k-fair-waiter" run --url "$URL" --fair cli-k-fair -- true
  local deadline=$(($(now_ms) + 3000 * SLOW))
  until [ "$(rcli llen 'redisson_lock_queue:{cli-k-fair}')" = 1 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "the fair waiter is not queued" || return 1
    sleep 0.01
  done
  kind_is cli-k-fair fair_lock "assert len(s['queue']) == 1, s" || return 1
  release_holder
  hold cli-k-rw --write || return 1
  kind_is cli-k-rw read_write_lock "
assert s['mode'] == 'write' and s['holders'][0]['field'].endswith(':write') and s['holders'][0]['pid'] == '$HOLDER', s" || return 1
  release_holder
  hold cli-k-sem --semaphore 3 || return 1
  kind_is cli-k-sem expirable_semaphore "
assert s['value'] == '2' and len(s['permits']) == 1, s
p = s['permits'][0]
assert len(p['id']) == 32 and p['expires_ms'] > 0 and p['pid'] == '$HOLDER', p" || return 1
  db status --url "$URL" cli-k-sem >"$WORK/kind.txt"
  grep -q "cli-k-sem: permit-expirable semaphore, 2 available, 1 acquired" "$WORK/kind.txt" \
    || fail "semaphore text: $(cat "$WORK/kind.txt")" || return 1
  release_holder
  rcli set cli-k-number 2 >/dev/null
  kind_is cli-k-number semaphore_or_latch "assert s['value'] == '2', s" || return 1
  db status --url "$URL" cli-k-number >"$WORK/kind.txt" || true
  grep -q "semaphore with 2 permits available, or count-down latch at 2" "$WORK/kind.txt" \
    || fail "number text: $(cat "$WORK/kind.txt")" || return 1
  rcli rpush cli-k-list x >/dev/null
  kind_is cli-k-list other || return 1
  # a hash that is not a lock is application data, not a lock with odd holders
  rcli hset cli-k-hash name alice >/dev/null
  kind_is cli-k-hash other "assert s['type'] == 'hash' and s['locked'] is False and s['holders'] == [], s" || return 1
  db status --url "$URL" cli-k-hash >"$WORK/kind.txt" || true
  grep -q "cli-k-hash: a hash, not a lock, semaphore or latch" "$WORK/kind.txt" \
    || fail "foreign hash text: $(cat "$WORK/kind.txt")" || return 1
  rcli del cli-k-number cli-k-list cli-k-hash cli-k-sem '{cli-k-sem}:timeout' 'redisson_lock_token:{cli-k-fenced}' >/dev/null
}

# --semaphore N on a semaphore of another size is an error, not a quiet change of N.
semaphore_size_mismatch() {
  hold cli-size --semaphore 2 || return 1
  local rc=0
  db run --url "$URL" --semaphore 5 --wait 1s cli-size -- touch "$WORK/size-ran" 2>"$WORK/size.err" || rc=$?
  [ "$rc" = 1 ] && grep -q 'a semaphore of 2 permits, not 5' "$WORK/size.err" \
    || fail "--semaphore 5 on 2 permits: exit $rc: $(cat "$WORK/size.err")" || return 1
  [ ! -e "$WORK/size-ran" ] || fail "COMMAND ran" || return 1
  db run --url "$URL" --semaphore 2 --wait 1s cli-size -- true || fail "--semaphore 2: exit $?" || return 1
  release_holder
  rcli del cli-size >/dev/null
}

# The wait line on a 40-column terminal stays within 39 columns; a wide one names the holder.
wait_line_width() {
  hold "cli-wide-$(printf 'x%.0s' $(seq 1 60))" || return 1
  python3 - "$CLI" "$URL" "cli-wide-$(printf 'x%.0s' $(seq 1 60))" "$HOLDER" "$(hostname)" $EMU <<'PY' || return 1
import fcntl, os, pty, re, struct, sys, termios
cli, url, name, holder, host = sys.argv[1:6]
emu = sys.argv[6:]
def waited(columns):
    pid, master = pty.fork()
    if pid == 0:
        os.execvp((emu or [cli])[0], emu + [cli, "run", "--url", url, "--wait", "1200ms", name, "--", "true"])
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return [s for s in out.decode("utf-8", "replace").replace("\x1b[K", "").split("\r") if "waited" in s]
lines = waited(40)
if not lines:
    print("no wait line on a 40-column terminal"); sys.exit(1)
too_wide = [l for l in lines if len(l) > 39]
if too_wide:
    print("wider than 39 columns: %r" % too_wide[0]); sys.exit(1)
lines = waited(250)
if not any(("held by pid %s on %s" % (holder, host)) in l for l in lines):
    print("the holder is not named: %r" % lines[-1:]); sys.exit(1)
PY
  release_holder
}

# --verbose: timestamped lines for connect, wait, acquire, renewals, release.
verbose_lines() {
  db -v run --url "$URL" --watchdog 300ms cli-verbose -- sleep 0.5 2>"$WORK/verbose.err" || fail "exit $?" || return 1
  local stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z deadbolt: '
  local what
  for what in 'connecting to 127.0.0.1' 'connected to' 'waiting for lock cli-verbose' 'acquired lock cli-verbose' \
              'lease of cli-verbose: ttl [0-9]' 'sleep exited with 0' 'released lock cli-verbose'; do
    grep -Eq "$stamp$what" "$WORK/verbose.err" || fail "no '$what' line: $(cat "$WORK/verbose.err")" || return 1
  done
  db run --url "$URL" cli-verbose -- true 2>"$WORK/quiet.err" || fail "exit $?" || return 1
  [ ! -s "$WORK/quiet.err" ] || fail "lines without --verbose: $(cat "$WORK/quiet.err")"
}

ping_health_check() {
  local out rc=0
  out=$(db ping --url "$URL") || fail "ping: exit $?" || return 1
  [[ "$out" == "PONG from 127.0.0.1:$PORT in "* ]] || fail "ping printed '$out'" || return 1
  db ping --url redis://127.0.0.1:1 --connect-timeout 300ms 2>"$WORK/ping.err" || rc=$?
  [ "$rc" = 3 ] && grep -q 'cannot connect to 127.0.0.1:1' "$WORK/ping.err" || fail "ping, no server: exit $rc: $(cat "$WORK/ping.err")"
}

# --replica-sync reaches the library: this server has no replica, so `on` refuses the acquire (after
# the library's retries, 4-8 s), `off` and `auto` take the lock; a bad value is a usage error.
replica_sync_option() {
  local rc
  rc=0; db run --url "$URL" --replica-sync sometimes cli-sync -- true 2>"$WORK/sync.err" || rc=$?
  [ "$rc" = 2 ] && grep -q "replica-sync: 'sometimes' is not auto, on or off" "$WORK/sync.err" \
    || fail "--replica-sync sometimes: exit $rc: $(cat "$WORK/sync.err")" || return 1
  db run --url "$URL" --replica-sync off -n cli-sync -- true || fail "--replica-sync off: exit $?" || return 1
  db run --url "$URL" --replica-sync auto -n cli-sync -- true || fail "--replica-sync auto: exit $?" || return 1
  rc=0; db run --url "$URL" --replica-sync on -n cli-sync -- touch "$WORK/sync.ran" 2>"$WORK/sync.err" || rc=$?
  [ "$rc" = 1 ] && grep -q "no replica acknowledged" "$WORK/sync.err" && [ ! -e "$WORK/sync.ran" ] \
    || fail "--replica-sync on without replicas: exit $rc, ran: $([ -e "$WORK/sync.ran" ] && echo yes || echo no): $(cat "$WORK/sync.err")"
}

# ---- driver --------------------------------------------------------------------------------------
ALL=(option_syntax nonblock_conflict_exit_code exit_codes_consistent connect_bounded reasons_and_redaction
     secrets_stay_out_of_command empty_name status_json_any_name status_every_kind semaphore_size_mismatch
     wait_line_width verbose_lines ping_health_check replica_sync_option)
run_cases "${ALL[@]}"
