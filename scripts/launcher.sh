#!/usr/bin/env bash
# Prints the path of this checkout's launcher (cargo-uat), building it first
# if needed (target/tools/; quick, it does not depend on GASNet). The
# project's scripts call it instead of an installed `cargo uat`, so they
# always run the checkout's own.
set -euo pipefail
# UAT_LAUNCHER: a prebuilt one (e.g. packed with reproduce.sh --pack for a
# machine that cannot build).
if [ -n "${UAT_LAUNCHER:-}" ]; then echo "$UAT_LAUNCHER"; exit 0; fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exe="$root/target/tools/release/cargo-uat"
if [ ! -x "$exe" ] || [ -n "$(find "$root/cargo-uat" -newer "$exe" -name '*.rs' -print -quit)" ]; then
  (cd "$root" && cargo build --quiet --release -p cargo-uat --target-dir target/tools) >&2 \
    || { echo "launcher.sh: error: building cargo-uat failed" >&2; exit 2; }
fi
echo "$exe"
