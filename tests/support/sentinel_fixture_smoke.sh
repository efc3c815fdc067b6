#!/usr/bin/env bash
# Proves the sentinel fixture (tests/support/redis-sentinel-fixture) gives what the sentinel tests rely
# on: every sentinel names the master, the data nodes' roles match, and a SENTINEL FAILOVER promotes a
# replica that every sentinel then names. Needs DEADBOLT_REDIS_SENTINEL_DIR.
# (It does not wait for the old master's demotion: Sentinel sends it REPLICAOF only some 10 s later.)
set -euo pipefail
dir=${DEADBOLT_REDIS_SENTINEL_DIR:?DEADBOLT_REDIS_SENTINEL_DIR is not set: run through ctest}
name=$(cat "$dir/master_name")
pass=$(cat "$dir/sentinel_pass" 2>/dev/null || true)

fail() { echo "FAIL: $*" >&2; exit 1; }
now_ms() { local t=${EPOCHREALTIME//[.,]/}; echo $((t / 1000)); }
rcli() { timeout 5 redis-cli "$@"; }  # a paused server would block redis-cli for good
scli() {  # scli PORT ARGS...: redis-cli to a sentinel
  local port=$1
  shift
  if [ -n "$pass" ]; then rcli --no-auth-warning -a "$pass" -p "$port" "$@"; else rcli -p "$port" "$@"; fi
}
line() { tr -d '\r' | sed -n "${1}p"; }  # line N of the input
named_master() { scli "$1" sentinel get-master-addr-by-name "$name" 2>/dev/null | line 2; }

sentinels=() data=()
for s in "$dir"/sentinel-*/port; do sentinels+=("$(cat "$s")"); done
for n in "$dir"/master/port "$dir"/replica-*/port; do [ -f "$n" ] && data+=("$(cat "$n")"); done
[ ${#sentinels[@]} -ge 2 ] || fail "fewer than 2 sentinels in $dir"
[ ${#data[@]} -ge 2 ] || fail "no replica in $dir"
master=$(cat "$dir/master/port")

for s in "${sentinels[@]}"; do
  [ "$(named_master "$s")" = "$master" ] || fail "sentinel $s does not name master $master"
done
echo "ok: ${#sentinels[@]} sentinels name master $master"

[ "$(rcli -p "$master" role | line 1)" = master ] || fail "ROLE of $master is not master"
for r in "${data[@]:1}"; do
  role=$(rcli -p "$r" role | tr -d '\r')
  [ "$(line 1 <<<"$role")" = slave ] || fail "ROLE of replica $r is not slave"
  [ "$(line 3 <<<"$role")" = "$master" ] || fail "replica $r follows $(line 3 <<<"$role"), not $master"
  [ "$(line 4 <<<"$role")" = connected ] || fail "replica $r is $(line 4 <<<"$role")"
done
echo "ok: ROLE master on $master, slave of it on ${data[*]:1}"

start=$(now_ms)
answer=$(scli "${sentinels[0]}" sentinel failover "$name" | tr -d '\r')
[ "$answer" = OK ] || fail "SENTINEL FAILOVER answered: $answer"

agreed() {  # every sentinel names the same master, not the old one, and its ROLE is master
  local s first=""
  for s in "${sentinels[@]}"; do
    new=$(named_master "$s")
    [ -n "$new" ] && [ "$new" != "$master" ] || return 1
    [ -z "$first" ] || [ "$new" = "$first" ] || return 1
    first=$new
  done
  [ "$(rcli -p "$new" role 2>/dev/null | line 1)" = master ]
}
until agreed; do
  [ $(( $(now_ms) - start )) -lt 30000 ] || fail "the sentinels did not agree on a new master within 30 s"
  sleep 0.05
done
printf '%s\n' "${data[@]}" | grep -qx "$new" || fail "new master $new is not one of the group's data nodes"
echo "ok: every sentinel names new master $new, ROLE master, $(( $(now_ms) - start )) ms after SENTINEL FAILOVER"
