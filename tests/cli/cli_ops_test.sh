#!/usr/bin/env bash
# What ops people reach for (issue #26 item 4), end to end against a real redis-server: the server's
# own words and the connection's reason in errors, the holder named without a terminal, status's
# exit code, --json on ping, -v showing the client's reconnects, and the systemd and cron lines of
# docs/cli.md run the way systemd and cron run them.
#   cli_ops_test.sh CLI [EMULATOR ARGS...]      (see cli_lib.sh)
# shellcheck disable=SC2016,SC2086,SC2155,SC2317  # sh -c scripts, $EMU split on purpose, indirect calls
set -euo pipefail

# shellcheck source=tests/cli/cli_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$@"


# ---- cases ---------------------------------------------------------------------------------------

# NOPERM, WRONGPASS and a database the server does not have: the server's own words, quoted.
server_words() {
  local rc=0 user=cli-ops-noeval
  rcli acl setuser "$user" on '>pw' '~*' '&*' +@all -evalsha -eval >/dev/null
  db run --url "redis://$user:pw@127.0.0.1:$PORT" -n cli-ops-words -- true 2>"$WORK/noperm.err" || rc=$?
  [ "$rc" = 1 ] && grep -q "cannot take lock cli-ops-words: permission denied by the server's ACL (server: \"NOPERM .*'evalsha'" "$WORK/noperm.err" \
    || fail "NOPERM: exit $rc: $(cat "$WORK/noperm.err")" || return 1
  rc=0
  db run --url "redis://$user:wrong@127.0.0.1:$PORT" -n cli-ops-words -- true 2>"$WORK/wrongpass.err" || rc=$?
  [ "$rc" = 3 ] && grep -q 'authentication failed (server: "WRONGPASS ' "$WORK/wrongpass.err" \
    || fail "WRONGPASS: exit $rc: $(cat "$WORK/wrongpass.err")" || return 1
  rc=0
  db ping --url "redis://127.0.0.1:$PORT/999" 2>"$WORK/db.err" || rc=$?
  [ "$rc" = 3 ] && grep -q '(server: "ERR DB index is out of range")' "$WORK/db.err" \
    || fail "SELECT 999: exit $rc: $(cat "$WORK/db.err")" || return 1
  rcli acl deluser "$user" >/dev/null
}

# A -w that runs out while connecting says why the last attempt failed.
connect_reason_when_wait_runs_out() {
  local rc=0 free
  free=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  db run --url "redis://127.0.0.1:$free" -w 1s cli-ops-down -- true 2>"$WORK/down.err" || rc=$?
  [ "$rc" = 3 ] && grep -q "cannot connect to 127.0.0.1:$free: no connection within 1.0s (last attempt: Connection refused)" "$WORK/down.err" \
    || fail "-w 1s, nothing listening: exit $rc: $(cat "$WORK/down.err")"
}

# Without a terminal (cron, a journal), -n and -w name the holder as the wait line does.
holder_named_without_terminal() {
  hold cli-ops-held || return 1
  local rc=0 host=$(hostname)
  db run --url "$URL" -n cli-ops-held -- true </dev/null 2>"$WORK/nb.err" || rc=$?
  [ "$rc" = 4 ] && grep -q "lock cli-ops-held is held by pid $HOLDER on $host, for .*: sh -c .* (--nonblock)" "$WORK/nb.err" \
    || fail "-n: exit $rc: $(cat "$WORK/nb.err")" || return 1
  rc=0
  db run --url "$URL" -w 300ms cli-ops-held -- true </dev/null 2>"$WORK/w.err" || rc=$?
  [ "$rc" = 4 ] && grep -q "timed out after 300ms waiting for lock cli-ops-held, held by pid $HOLDER on $host" "$WORK/w.err" \
    || fail "-w: exit $rc: $(cat "$WORK/w.err")" || return 1
  release_holder
}

# status exits 0 when held, 1 when not; ping --json is one object.
status_exit_and_ping_json() {
  local rc=0 out
  db status --url "$URL" cli-ops-status >/dev/null || rc=$?
  [ "$rc" = 1 ] || fail "status of a free name: exit $rc, expected 1" || return 1
  hold cli-ops-status || return 1
  db status --url "$URL" cli-ops-status >/dev/null || fail "status of a held lock: exit $?, expected 0" || return 1
  release_holder
  out=$(db ping --json --url "$URL") || fail "ping --json: exit $?" || return 1
  python3 -c '
import json, sys
p = json.loads(sys.argv[1])
assert p["reply"] == "PONG" and p["server"] == "127.0.0.1:" + sys.argv[2] and p["round_trip_us"] >= 0, p
' "$out" "$PORT" || fail "ping --json printed '$out'"
}

# -v shows the client's own events: its connection cut under a hold, and up again.
verbose_reconnect() {
  rm -f "$WORK/v.in"
  bg "$WORK/v" -v run --url "$URL" --watchdog 600ms cli-ops-verbose -- sh -c "touch '$WORK/v.in'; sleep 1.5"
  local pid=$BG
  wait_file "$WORK/v.in" 3000 || fail "holder did not start: $(cat "$WORK/v.err")" || return 1
  # The holder's own connections only (the other CLI scripts share this server): its sockets' local
  # ports, from /proc, are their addresses in CLIENT LIST.
  local port id
  for port in $(python3 - "$pid" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
    except OSError:
        continue
    if link.startswith("socket:["):
        inodes.add(link[8:-1])
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(table).read().splitlines()[1:]:
        f = line.split()
        if f[9] in inodes:
            print(int(f[1].split(":")[1], 16))
PY
  ); do
    id=$(rcli client list | sed -nE "s/^id=([0-9]+) addr=127\.0\.0\.1:$port .*/\1/p")
    [ -z "$id" ] || rcli client kill id "$id" >/dev/null
  done
  wait_exit "$pid" 5000 || fail "holder did not end" || return 1
  [ "$RC" = 0 ] || fail "holder: exit $RC: $(cat "$WORK/v.err")" || return 1
  local stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z deadbolt: '
  grep -Eq "${stamp}command connection to 127.0.0.1:$PORT: lost: " "$WORK/v.err" \
    && grep -Eq "${stamp}command connection to 127.0.0.1:$PORT: up again" "$WORK/v.err" \
    || fail "no lost / up again lines: $(cat "$WORK/v.err")"
}

# docs/cli.md's systemd unit: its ExecStart line in a process group of its own, stopped as
# KillMode=control-group stops a unit (one SIGTERM to every process of the group). COMMAND hears it
# once, the lock is released, deadbolt exits with COMMAND's status; a second start while it runs is
# skipped (exit 0, the holder named in the journal's line).
systemd_unit_line() {
  local script=$WORK/job.sh
  cat >"$script" <<EOF
#!/bin/sh
trap 'echo TERM >>"$WORK/job.signals"; exit 3' TERM
touch "$WORK/job.in"
while :; do sleep 0.05; done
EOF
  chmod +x "$script"
  rm -f "$WORK/job.in" "$WORK/job.signals"
  # setsid: its own process group, as systemd gives a unit its own cgroup.
  setsid $EMU "$CLI" run --url "$URL" -n -E 0 cli-ops-unit -- "$script" >"$WORK/unit.out" 2>"$WORK/unit.err" </dev/null &
  local pid=$!
  PIDS+=("$pid")
  wait_file "$WORK/job.in" 3000 || fail "the unit's job did not start: $(cat "$WORK/unit.err")" || return 1
  local rc=0
  db run --url "$URL" -n -E 0 cli-ops-unit -- touch "$WORK/second-ran" 2>"$WORK/second.err" </dev/null || rc=$?
  [ "$rc" = 0 ] && [ ! -e "$WORK/second-ran" ] && grep -q "is held by pid" "$WORK/second.err" \
    || fail "a second start: exit $rc, ran: $([ -e "$WORK/second-ran" ] && echo yes || echo no): $(cat "$WORK/second.err")" || return 1
  kill -TERM -- "-$pid"  # the whole group, deadbolt and COMMAND alike
  wait_exit "$pid" 5000 || fail "the unit did not stop" || return 1
  [ "$RC" = 3 ] || fail "the unit's deadbolt: exit $RC, not COMMAND's 3: $(cat "$WORK/unit.err")" || return 1
  [ "$(wc -l <"$WORK/job.signals")" = 1 ] || fail "COMMAND got SIGTERM $(wc -l <"$WORK/job.signals") times" || return 1
  ! key_exists cli-ops-unit || fail "the lock is still held after the unit stopped"
}

# docs/cli.md's cron line, as cron runs it (no terminal, sh -c, output captured): while another run
# holds the lock it waits -w, then exits 4 naming the holder; once free it runs.
cron_line() {
  hold cli-ops-cron || return 1
  local rc=0
  env -i PATH="$PATH" sh -c "$EMU '$CLI' run -w 300ms --url '$URL' cli-ops-cron -- touch '$WORK/cron-ran'" \
    </dev/null >"$WORK/cron.out" 2>&1 || rc=$?
  [ "$rc" = 4 ] && [ ! -e "$WORK/cron-ran" ] && grep -q "held by pid $HOLDER" "$WORK/cron.out" \
    || fail "held: exit $rc: $(cat "$WORK/cron.out")" || return 1
  release_holder
  env -i PATH="$PATH" sh -c "$EMU '$CLI' run -w 300ms --url '$URL' cli-ops-cron -- touch '$WORK/cron-ran'" \
    </dev/null >"$WORK/cron.out" 2>&1 || fail "free: exit $?: $(cat "$WORK/cron.out")" || return 1
  [ -e "$WORK/cron-ran" ] || fail "COMMAND did not run"
}

# ---- driver --------------------------------------------------------------------------------------
ALL=(server_words connect_reason_when_wait_runs_out holder_named_without_terminal status_exit_and_ping_json
     verbose_reconnect systemd_unit_line cron_line)
run_cases "${ALL[@]}"
