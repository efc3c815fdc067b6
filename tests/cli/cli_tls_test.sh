#!/usr/bin/env bash
# The CLI over TLS (fixture "tls": tests/support/redis-tls-fixture): --tls-ca, --tls-cert, --tls-key,
# --tls-server-name and --tls-insecure, and the exit codes of a certificate that fails.
#   cli_tls_test.sh CLI [EMULATOR...]      (DEADBOLT_TLS_DIR: the fixture's directory)
set -uo pipefail
CLI=$1
shift
# ctest passes a cross build's emulator as one argument, joined with spaces (as for cli_lib.sh).
read -r -a EMU <<<"$*"
DIR=${DEADBOLT_TLS_DIR:?run through ctest}
TLS="rediss://127.0.0.1:$(cat "$DIR/tls/port")"
MTLS="rediss://127.0.0.1:$(cat "$DIR/mtls/port")"
failed=0
db() { "${EMU[@]}" "$CLI" --connect-timeout 5s "$@"; }
expect() {  # expect NAME STATUS [STDERR-WORDS] -- ARGS...: the exit status and words on stderr
  local name=$1 want=$2 words=""
  shift 2
  if [ "$1" != "--" ]; then words=$1; shift; fi
  shift
  local err rc=0
  err=$(db "$@" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -ne "$want" ]; then echo "not ok - $name: exit $rc, not $want: $err"; failed=1; return; fi
  if [ -n "$words" ] && [[ "$err" != *"$words"* ]]; then echo "not ok - $name: no '$words' in: $err"; failed=1; return; fi
  echo "ok - $name"
}

expect ping_with_the_ca 0 -- ping --url "$TLS" --tls-ca "$DIR/ca.pem"
expect run_with_the_ca 0 -- run --url "$TLS" --tls-ca "$DIR/ca.pem" cli-tls -- true
expect wrong_ca_cannot_connect 3 "certificate verify failed" -- ping --url "$TLS" --tls-ca "$DIR/other-ca.pem"
expect insecure_accepts_it 0 -- ping --url "$TLS" --tls-ca "$DIR/other-ca.pem" --tls-insecure
expect wrong_server_name 3 "hostname mismatch" -- ping --url "$TLS" --tls-ca "$DIR/ca.pem" --tls-server-name other.invalid
expect missing_ca_file_is_usage 2 "--tls-ca" -- ping --url "$TLS" --tls-ca "$DIR/missing.pem"
expect mtls_without_cert 3 -- ping --url "$MTLS" --tls-ca "$DIR/ca.pem"
expect mtls_with_cert 0 -- ping --url "$MTLS" --tls-ca "$DIR/ca.pem" --tls-cert "$DIR/client.pem" --tls-key "$DIR/client.key"
exit $failed
