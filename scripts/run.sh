#!/usr/bin/env bash
# The project's shorthand for its launcher: `scripts/run.sh [OPTIONS] -n N --
# PROGRAM [ARGS...]` is `cargo uat run --release [OPTIONS] -n N PROGRAM --
# [ARGS...]` from this checkout (PROGRAM: a binary of the workspace, e.g.
# uts, or a path). Options and exit codes are the launcher's: see --help.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
launcher=$("$root/scripts/launcher.sh")
opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    -h|--help) echo "Usage: scripts/run.sh [OPTIONS] -n N -- PROGRAM [ARGS...]  (= cargo uat run --release [OPTIONS] -n N PROGRAM -- [ARGS...])"; echo; exec "$launcher" uat run --help ;;
    *) opts+=("$1"); shift ;;
  esac
done
[ $# -gt 0 ] && shift
if [ $# -eq 0 ]; then
  echo "run.sh: error: no program given (put it after '--')" >&2
  exit 2
fi
program=$1; shift
cd "$root"
exec "$launcher" uat run --release "${opts[@]}" "$program" -- "$@"
