# Shared by the CLI end-to-end scripts (cli_test.sh, cli_conventions_test.sh): arguments, the
# fixture's server, helpers, and the driver that runs the cases. Sourced with the script's arguments:
#   source cli_lib.sh CLI [EMULATOR ARGS...]
# shellcheck shell=bash disable=SC2034,SC2086,SC2155  # variables used by the sourcing script, $EMU split on purpose

if [ $# -lt 1 ]; then
  echo "usage: cli_test.sh CLI [EMULATOR ARGS...]" >&2
  exit 2
fi
CLI=$1
shift
EMU="$*"  # split on spaces when used, like CMAKE_CROSSCOMPILING_EMULATOR joined with spaces
: "${DEADBOLT_REDIS_DIR:?DEADBOLT_REDIS_DIR must name the redis fixture directory}"
PORT=$(cat "$DEADBOLT_REDIS_DIR/port")
URL=redis://127.0.0.1:$PORT
unset REDIS_URL
# Under an emulator everything is slower; stretch the "promptly" limits (not the timeouts under test).
SLOW=1
[ -n "$EMU" ] && SLOW=3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/deadbolt-cli-test.XXXXXX")
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- helpers -------------------------------------------------------------------------------------

# The CLI in the foreground.
db() { $EMU "$CLI" "$@"; }
# The CLI in the background: bg OUT ARGS...; stdout/stderr go to OUT.out/OUT.err, the pid to BG.
bg() {
  local out=$1
  shift
  $EMU "$CLI" "$@" >"$out.out" 2>"$out.err" </dev/null &
  BG=$!
  PIDS+=("$BG")
}
rcli() { redis-cli -p "$PORT" "$@"; }
now_ms() { date +%s%3N; }
fail() {
  echo "$*"
  return 1
}
# wait_file FILE MS: until FILE exists, at most MS milliseconds (times SLOW).
wait_file() {
  local deadline=$(($(now_ms) + $2 * SLOW))
  while [ ! -e "$1" ]; do
    [ "$(now_ms)" -lt "$deadline" ] || return 1
    sleep 0.01
  done
}
# wait_exit PID MS: waits for the background job PID, at most MS milliseconds (times SLOW); sets RC
# to its exit status and returns 1 (killing it) if it did not end in time.
wait_exit() {
  local pid=$1 deadline=$(($(now_ms) + $2 * SLOW))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(now_ms)" -ge "$deadline" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      RC=timeout
      return 1
    fi
    sleep 0.01
  done
  RC=0
  wait "$pid" || RC=$?
}
# wait_waiters NAME MS: until someone waits for lock NAME (subscribed to its unlock channel).
wait_waiters() {
  local deadline=$(($(now_ms) + $2 * SLOW))
  until [ "$(rcli pubsub numsub "redisson_lock__channel:{$1}" | sed -n 2p)" -ge 1 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || return 1
    sleep 0.01
  done
}
key_exists() { [ "$(rcli exists "$1")" = 1 ]; }
# A holder in the background: hold NAME ARGS...; waits until COMMAND runs. Sets HOLDER (its pid).
hold() {
  local name=$1
  shift
  rm -f "$WORK/$name.in"
  bg "$WORK/$name-holder" run --url "$URL" "$@" "$name" -- sh -c "touch '$WORK/$name.in'; exec sleep 30"
  HOLDER=$BG
  wait_file "$WORK/$name.in" 3000 || fail "holder of $name did not start: $(cat "$WORK/$name-holder.err")"
}
# Ends the holder HOLDER (SIGTERM) and waits for it.
release_holder() {
  kill -TERM "$HOLDER" 2>/dev/null || true
  wait_exit "$HOLDER" 3000 || true
}

# run_cases CASE...: each case in a subshell, one `ok`/`not ok` line each; DEADBOLT_CLI_CASES picks some.
run_cases() {
  local -a ALL=("$@")
  CASES=("${ALL[@]}")
  [ -n "${DEADBOLT_CLI_CASES:-}" ] && read -r -a CASES <<<"$DEADBOLT_CLI_CASES"

  failed=0
  script_start=$(now_ms)
  for name in "${CASES[@]}"; do
    log=$WORK/$name.log
    start=$(now_ms)
    rc=0
    # Each case in a subshell (its own background jobs, killed when it ends); cases check everything
    # explicitly and return 1 with a reason.
    (
      set +e
      PIDS=()
      trap 'for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill -KILL "$p" 2>/dev/null; done' EXIT
      "$name"
    ) >"$log" 2>&1 || rc=$?
    took=$(($(now_ms) - start))
    if [ "$rc" = 0 ]; then
      echo "ok - $name (${took}ms)"
    else
      failed=1
      echo "not ok - $name (${took}ms): $(tr '\n' ' ' <"$log")"
      if ! rcli ping 2>/dev/null | grep -q PONG; then
        # (e.g. another ctest run in the same build tree restarted or stopped the redis_cli fixture)
        echo "Bail out! redis-server on port $PORT ($DEADBOLT_REDIS_DIR) is gone"
        break
      fi
    fi
  done
  echo "# $((${#CASES[@]})) cases in $(($(now_ms) - script_start))ms"
  exit $failed
}
