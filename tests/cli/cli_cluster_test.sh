#!/usr/bin/env bash
# The CLI on a real Redis Cluster (3+3): `list` finds the locks on every master (each holds a slot
# range of its own), and -v shows the cluster's layout.
#   cli_cluster_test.sh CLI [EMULATOR ARGS...]      (see cli_lib.sh; DEADBOLT_REDIS_DIR is node 1's)
# shellcheck disable=SC2016,SC2086,SC2155,SC2317  # sh -c scripts, $EMU split on purpose, indirect calls
set -euo pipefail

# shellcheck source=tests/cli/cli_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$@"
CLUSTER_URL="redis+cluster://127.0.0.1:$PORT"
# redis-cli on the node owning KEY's slot: -c follows the redirection.
ccli() { redis-cli -c -p "$PORT" "$@"; }

# ---- cases ---------------------------------------------------------------------------------------

# Locks whose names hash to the three masters; list shows each, with its holder, from any seed.
list_every_master() {
  local names=(cli-list-a cli-list-b cli-list-c cli-list-d cli-list-e cli-list-f) n pids=() masters
  masters=$(for n in "${names[@]}"; do redis-cli -p "$PORT" cluster keyslot "$n"; done | python3 -c '
import sys
slots = [int(l) for l in sys.stdin]
print(len({0 if s <= 5460 else 1 if s <= 10922 else 2 for s in slots}))')
  [ "$masters" = 3 ] || fail "the names fall on $masters masters, not 3: nothing to test" || return 1
  for n in "${names[@]}"; do
    rm -f "$WORK/$n.in"
    bg "$WORK/$n" run --url "$CLUSTER_URL" "$n" -- sh -c "touch '$WORK/$n.in'; exec sleep 30"
    pids+=("$BG")
  done
  for n in "${names[@]}"; do wait_file "$WORK/$n.in" 5000 || fail "holder of $n did not start: $(cat "$WORK/$n.err")" || return 1; done
  ccli set cli-list-number 3 >/dev/null
  db list --url "$CLUSTER_URL" 'cli-list-*' >"$WORK/list.txt" || fail "list: exit $?" || return 1
  for n in "${names[@]}"; do
    grep -Eq "^$n +lock +locked .* pid [0-9]+ on " "$WORK/list.txt" || fail "$n missing: $(cat "$WORK/list.txt")" || return 1
  done
  grep -Eq "^cli-list-number +semaphore_or_latch +value 3" "$WORK/list.txt" || fail "the number: $(cat "$WORK/list.txt")" || return 1
  db list --url "$CLUSTER_URL" --json 'cli-list-*' >"$WORK/list.json" || fail "list --json: exit $?" || return 1
  python3 -c '
import json, sys
got = {o["name"]: o for o in json.load(open(sys.argv[1]))}
want = sys.argv[2:]
assert all(got[n]["locked"] and got[n]["holders"][0]["pid"] for n in want), got
assert len(got) == len(want) + 1, sorted(got)
' "$WORK/list.json" "${names[@]}" || fail "list --json: $(cat "$WORK/list.json")" || return 1
  local rc=0
  db list --url "$CLUSTER_URL" --limit 2 'cli-list-*' >"$WORK/limited.txt" 2>"$WORK/limited.err" || rc=$?
  [ "$rc" = 0 ] && [ "$(grep -c '^cli-list-' "$WORK/limited.txt")" = 2 ] && grep -q "the first 2 were looked at (--limit)" "$WORK/limited.err" \
    || fail "--limit 2: exit $rc: $(cat "$WORK/limited.txt" "$WORK/limited.err")" || return 1
  for p in "${pids[@]}"; do kill -TERM "$p"; done
  for p in "${pids[@]}"; do wait_exit "$p" 5000 || true; done
  ccli del cli-list-number >/dev/null
}

# -v: the layout the client learned, with every master's slots.
verbose_layout() {
  db -v run --url "$CLUSTER_URL" cli-list-layout -- true 2>"$WORK/layout.err" || fail "exit $?: $(cat "$WORK/layout.err")" || return 1
  grep -Eq "deadbolt: cluster: layout from 127\.0\.0\.1:[0-9]+: 127\.0\.0\.1:[0-9]+ slots 0-5460, 127\.0\.0\.1:[0-9]+ slots 5461-10922, 127\.0\.0\.1:[0-9]+ slots 10923-16383" \
    "$WORK/layout.err" || fail "no layout line: $(cat "$WORK/layout.err")"
}

# ---- driver --------------------------------------------------------------------------------------
ALL=(list_every_master verbose_layout)
run_cases "${ALL[@]}"
