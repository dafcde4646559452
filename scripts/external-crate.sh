#!/usr/bin/env bash
# A uni-address threads program outside this repository, as the README
# tells a new user to make it: `cargo new`, one dependency line, the
# README's program, `cargo uat run`. Checks that the build prints no
# warning, exact answers and that work was
# stolen (UAT_FORCE_STEAL makes a steal certain; UAT_VERBOSE prints the
# run's counters) on smp at 2 and 4 ranks, udp over real UDP and mpi at 2.
#
#   scripts/external-crate.sh [LAUNCHER]    (default: scripts/launcher.sh's)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
uat=${1:-$("$root/scripts/launcher.sh")}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cargo new --quiet --vcs none "$dir/myapp"
echo "uat = { path = \"$root\" }" >>"$dir/myapp/Cargo.toml"
# The README's program: the rust block after the "program" marker.
awk '/<!-- program -->/ { on = 1; next } on && /^```rust/ { body = 1; next } body && /^```/ { exit } body { print }' \
  "$root/README.md" >"$dir/myapp/src/main.rs"
grep -q 'uat::launch' "$dir/myapp/src/main.rs" || { echo "external: no program found in README.md" >&2; exit 1; }
cd "$dir/myapp"
start=$SECONDS
status=0
# The user's build prints no warning: none from this workspace's crates (a
# path dependency shows its warnings) and none from the README's program.
# Built where `cargo uat run --conduit smp` builds (the same features), so
# that run below builds nothing again.
features=$("$uat" uat features --conduit smp --fad native)
if ! cargo build --release --features "$features" --target-dir target/smp-native 2>"$dir/build"; then
  cat "$dir/build" >&2
  echo "external: the user's crate does not build" >&2
  exit 1
fi
if grep -q '^warning' "$dir/build"; then
  grep -A8 '^warning' "$dir/build" >&2
  echo "external: the user's build prints warnings (above)" >&2
  status=1
fi
for cfg in "smp 2" "smp 4" "udp 2 --real-udp" "mpi 2"; do
  read -r conduit ranks flag <<<"$cfg"
  out=$(UAT_VERBOSE=1 UAT_FORCE_STEAL=1 "$uat" uat run --release --conduit "$conduit" ${flag:+"$flag"} \
        --timeout 120 -n "$ranks" -- 30 2>"$dir/err") || true
  result=$(tail -n 1 <<<"$out")
  stolen=$(grep -o '"steals_succeeded":[0-9]*' "$dir/err" | cut -d: -f2 || true)
  if [ "$result" = 832040 ] && [ "${stolen:-0}" -gt 0 ]; then
    echo "external: $conduit ${flag:-} n=$ranks: fib(30) = $result, $stolen steals: ok" >&2
  else
    echo "external: $conduit ${flag:-} n=$ranks: FAILED (result '$result', steals '${stolen:-none}')" >&2
    tail -n 5 "$dir/err" >&2
    status=1
  fi
done
# What the user's crate depends on: the runtime only (serde_json is the
# runtime's own since its traces are JSON; rayon and sha1 are the
# benchmarks').
if cargo tree -e normal --features uat/smp,uat/fad-native 2>/dev/null | grep -E ' (rayon|sha1) '; then
  echo "external: the crate's dependencies include benchmark-only crates" >&2
  status=1
fi
echo "external: $((SECONDS - start)) s" >&2
exit "$status"
