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
# OTF2 traces where the OTF2 library is installed (cargo uat setup installs
# it): the launcher is rebuilt when that changes.
features=""
if [ -e /usr/include/otf2/otf2.h ] || [ -n "${OTF2_PREFIX:-}" ]; then features="otf2"; fi
stamp="$root/target/tools/release/cargo-uat.features"
if [ ! -x "$exe" ] || [ "$(cat "$stamp" 2>/dev/null || echo none)" != "$features" ] \
   || [ -n "$(find "$root/cargo-uat" "$root/trace" "$root/rules" -newer "$exe" \( -name '*.rs' -o -name Cargo.toml \) -print -quit)" ]; then
  (cd "$root" && cargo build --quiet --release -p cargo-uat --features "$features" --target-dir target/tools) >&2 \
    || { echo "launcher.sh: error: building cargo-uat failed" >&2; exit 2; }
  echo "$features" > "$stamp"
fi
echo "$exe"
