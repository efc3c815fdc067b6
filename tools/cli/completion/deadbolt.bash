# bash completion for deadbolt(1). Keep the option lists true to tools/cli/usage.cpp
# (tests/cli/cli_docs_test.sh checks that every option of --help is here).
_deadbolt() {
  local cur prev words cword
  _init_completion 2>/dev/null || {
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  }
  local global="--url --password-file --tls-ca --tls-cert --tls-key --tls-server-name --tls-insecure --cluster-pubsub --replica-sync --connect-timeout --verbose --help --version"
  local sub="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      --) [ "$sub" = run ] && { COMPREPLY=($(compgen -c -- "$cur")); return; } ;;
      run|status|list|unlock|ping|acl|help) [ -z "$sub" ] && sub=${words[i]} ;;
    esac
  done
  case $prev in
    --password-file|--tls-ca|--tls-cert|--tls-key) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --tls-server-name) return ;;
    --cluster-pubsub) COMPREPLY=($(compgen -W "auto sharded classic" -- "$cur")); return ;;
    --replica-sync) COMPREPLY=($(compgen -W "auto on off" -- "$cur")); return ;;
    --url) COMPREPLY=($(compgen -W "redis:// rediss:// redis+cluster:// rediss+cluster:// redis+sentinel:// rediss+sentinel:// unix://" -- "$cur")); return ;;
    --connect-timeout|--wait|-w|--lease|--watchdog|--grace) COMPREPLY=($(compgen -W "500ms 1s 10s 30s 1m" -- "$cur")); return ;;
    --semaphore) [ "$sub" = run ] || [ "$sub" = acl ] && return ;;  # run's and acl's take a number; unlock's is a flag
    --conflict-exit-code|-E|--permit|--user|--limit) return ;;
  esac
  local opts
  case $sub in
    "") COMPREPLY=($(compgen -W "run status list unlock ping acl help $global" -- "$cur")); return ;;
    run) opts="--wait --nonblock --conflict-exit-code --lease --watchdog --grace --fenced --fair --read --write --semaphore --spin --quiet --" ;;
    status) opts="--json" ;;
    list) opts="--json --limit" ;;
    unlock) opts="--force --spin --semaphore --permit --latch" ;;
    ping) opts="--json" ;;
    acl) opts="--user --add --fenced --fair --read --write --semaphore --spin --latch" ;;
    help) COMPREPLY=($(compgen -W "run status list unlock ping acl" -- "$cur")); return ;;
  esac
  COMPREPLY=($(compgen -W "$opts $global" -- "$cur"))
}
complete -F _deadbolt deadbolt
