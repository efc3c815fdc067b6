#!/usr/bin/env bash
# The CLI's man page and bash completion: every option `deadbolt --help` lists is in both (and in
# docs/cli.md), the man page renders without warnings, the completion completes, and
# `cmake --install` puts the binary, the man page and the completion where they belong.
#   cli_docs_test.sh CLI SOURCE_DIR BUILD_DIR
set -euo pipefail
CLI=$1 SRC=$2 BUILD=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/deadbolt-cli-docs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failed=0
check() {  # check NAME COMMAND...: one ok / not ok line
  local name=$1
  shift
  if out=$("$@" 2>&1); then echo "ok - $name"; else echo "not ok - $name: $out"; failed=1; fi
}

options_documented() {
  local opts o missing=""
  opts=$("$CLI" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u)
  [ -n "$opts" ] || { echo "no options in --help"; return 1; }
  for o in $opts; do
    grep -qF -- "${o//-/\\-}" "$SRC/docs/deadbolt.1" || missing+=" man:$o"
    grep -qE -- "(^|[ \"])$o( |\"|$)" "$SRC/tools/cli/completion/deadbolt.bash" || missing+=" completion:$o"
    grep -qE -- "$o([^a-z-]|$)" "$SRC/docs/cli.md" || missing+=" cli.md:$o"
  done
  [ -z "$missing" ] || { echo "not documented:$missing"; return 1; }
}

man_page_renders() {
  command -v groff >/dev/null || { echo "# groff not installed: rendering not checked"; return 0; }
  local warnings
  warnings=$(groff -man -Tutf8 -ww "$SRC/docs/deadbolt.1" 2>&1 >/dev/null)
  [ -z "$warnings" ] || { echo "$warnings"; return 1; }
  # grep reads it all (not -q): under pipefail, sed writing after an early grep exit would fail it.
  groff -man -Tutf8 "$SRC/docs/deadbolt.1" 2>/dev/null | sed $'s/.\b//g' | grep 'EXIT STATUS' >/dev/null || { echo "no EXIT STATUS section"; return 1; }
}

completes() {  # completes "WORDS..." EXPECTED
  bash -c '
    source "$1"
    read -r -a COMP_WORDS <<<"$2"
    [[ "$2" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _deadbolt
    printf "%s\n" "${COMPREPLY[@]}" | grep -qx -- "$3" || { echo "\"$2\" completes to: ${COMPREPLY[*]}"; exit 1; }
  ' _ "$SRC/tools/cli/completion/deadbolt.bash" "$1" "$2"
}

completes_not() { if completes "$@" >/dev/null; then echo "\"$1\" completes to $2"; return 1; fi; }

installed() {
  cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; return 1; }
  local f
  for f in bin/deadbolt share/man/man1/deadbolt.1 share/bash-completion/completions/deadbolt; do
    [ -s "$WORK/prefix/$f" ] || { echo "$f not installed"; return 1; }
  done
}

check options_documented options_documented
check man_page_renders man_page_renders
check completes_subcommand completes "deadbolt st" status
check completes_run_option completes "deadbolt run --wa" --wait
check completes_global_after_subcommand completes "deadbolt status --pass" --password-file
check completes_only_the_subcommands_options completes_not "deadbolt status --wa" --wait
check installed installed
exit $failed
