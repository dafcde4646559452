#!/usr/bin/env bash
# Building against a site's installed GASNet-EX (docs/cluster.md), tested
# here by installing the bundled source to a prefix and building against it:
#
#   a. the bundled smp build (the machine's cache) is installed into a fresh
#      prefix with `make install prefix=DIR`: GASNet rewrites its .mak and .pc
#      files for DIR, so nothing there points back into the cache;
#   b. gasnet-check is built with GASNET_PREFIX=DIR and run at 2 ranks through
#      the launcher ("ok": true);
#   c. the same with DIR found by pkg-config (PKG_CONFIG_PATH=DIR/lib/pkgconfig);
#   d. refusals, each with cargo's exit code and the message checked: a prefix
#      without the conduit (the message names the conduits it has), a copy
#      whose gasnet_config.h says 2020.10.0 (by GASNET_PREFIX and by
#      pkg-config), UAT_GASNET=pkg-config with nothing to find;
#   e. the way out: UAT_GASNET=bundled beside that old one builds the bundled one;
#   f. a copy that says 2024.5.0 is accepted, with a warning that only
#      2021.3.0 is tested.
#
# Every build shares one target dir (target/site-gasnet/target): gasnet-sys's
# build script reruns on each variable change (rerun-if-env-changed).
#
#   scripts/site-gasnet.sh [LAUNCHER]      (default: scripts/launcher.sh's)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
uat=${1:-$("$root/scripts/launcher.sh")}
cd "$root"
work="$root/target/site-gasnet"
target="$work/target"
start=$SECONDS
status=0
ok() { echo "site-gasnet: $*: ok" >&2; }
bad() { echo "site-gasnet: $*: FAILED" >&2; status=1; }

command -v pkg-config >/dev/null \
  || { echo "site-gasnet: pkg-config is not installed (cargo uat setup installs it)" >&2; exit 1; }
# The machine's own choice must not decide: no source forced, and pkg-config
# sees only what a step puts on PKG_CONFIG_PATH (an empty default path).
unset UAT_GASNET GASNET_PREFIX PKG_CONFIG PKG_CONFIG_PATH
rm -rf "$work/prefix" "$work/old" "$work/new" "$work/no-pc"
mkdir -p "$work/no-pc"
export PKG_CONFIG_LIBDIR="$work/no-pc"

# What gasnet-sys's build script last said (cargo:KEY=VALUE in its output).
built() { grep -h "^cargo:$1=" "$(ls -t "$target"/debug/build/gasnet-sys-*/output | head -n 1)" | cut -d= -f2-; }
# cargo build into the shared target dir; stderr kept in $work/err.
build() { cargo build --target-dir "$target" "$@" 2>"$work/err"; }
# Expects a build to fail with cargo's code 101 and every given phrase in its error.
refused() {
  local what=$1; shift
  local code=0
  build -p gasnet-sys "${features[@]}" || code=$?
  local missing=""
  for phrase in "$@"; do grep -qF -- "$phrase" "$work/err" || missing+=" '$phrase'"; done
  if [ "$code" = 101 ] && [ -z "$missing" ]; then
    ok "$what: refused (exit 101): $(grep -m1 '^ *error: ' <(grep -v 'failed to run custom build' "$work/err") | sed 's/^ *//' | cut -c1-200)..."
  else
    bad "$what: exit $code, missing$missing"
    tail -n 5 "$work/err" >&2
  fi
}
# The report tool reads gasnet-check's JSON line (uat-report get).
cargo build --quiet --release --manifest-path "$root/report/Cargo.toml" --target-dir "$root/target/report"
report_tool=$root/target/report/release/uat-report
# Runs gasnet-check at 2 ranks through the launcher and checks its JSON.
check_run() {
  "$uat" uat run -n 2 --conduit smp --timeout 120 "$target/debug/gasnet-check" >"$work/run-out" 2>"$work/run-err" || true
  if [ "$("$report_tool" get "$work/run-out" ok 2>&1)" = true ] \
     && [ "$("$report_tool" get "$work/run-out" ranks 2>&1)" = 2 ]; then
    ok "$1: gasnet-check at 2 ranks: $(tail -n 1 "$work/run-out" | cut -c1-80)..."
  else
    bad "$1: gasnet-check at 2 ranks printed '$(tail -n 3 "$work/run-out")'"
    tail -n 5 "$work/run-err" >&2
  fi
}

# The bundled build (built now if this machine has none yet); its prefix
# names the cache it lives in.
features=(--features smp)
if ! UAT_GASNET=bundled build -p gasnet-sys "${features[@]}"; then
  cat "$work/err" >&2
  echo "site-gasnet: the bundled smp build failed" >&2
  exit 1
fi
bundled=$(built prefix)
cache=$(dirname "$(dirname "$bundled")")   # <cache>/2021.3.0

# a. Install it into fresh prefixes (prefix; old and new get their versions
#    edited below), holding the cache's lock (the one the
#    build script takes) so that no build of the cache runs meanwhile.
for dir in prefix old new; do
  if ! flock "$cache/lock" make -C "$cache/smp/build" install prefix="$work/$dir" >"$work/install-$dir.log" 2>&1; then
    bad "a. make install prefix=$work/$dir (log: $work/install-$dir.log)"
    exit 1
  fi
done
if grep -q "^GASNET_PREFIX = $work/prefix\$" "$work/prefix/include/smp-conduit/smp-par.mak" \
   && ! grep -q "$cache" "$work/prefix/lib/pkgconfig/gasnet-smp-par.pc"; then
  ok "a. installed into $work/prefix"
else
  bad "a. $work/prefix still points into $cache"
fi

# b. GASNET_PREFIX.
bench=(-p uat-bench --bin gasnet-check --features smp,fad-native)
if GASNET_PREFIX="$work/prefix" build "${bench[@]}" \
   && [ "$(built source)" = prefix ] && [ "$(built prefix)" = "$work/prefix" ] && [ "$(built version)" = 2021.3.0 ]; then
  ok "b. GASNET_PREFIX: built against $(built prefix)"
  check_run "b. GASNET_PREFIX"
else
  bad "b. GASNET_PREFIX build"
  tail -n 5 "$work/err" >&2
fi

# c. pkg-config.
if PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" build "${bench[@]}" \
   && [ "$(built source)" = pkg-config ] && [ "$(built prefix)" = "$work/prefix" ]; then
  ok "c. pkg-config: built against $(built prefix)"
  check_run "c. pkg-config"
else
  bad "c. pkg-config build"
  tail -n 5 "$work/err" >&2
fi

# Gives the copy in $work/$1 the version $2.$3.0 in its gasnet_config.h.
claim_version() {
  sed -i -e "s/^#define GASNET_RELEASE_VERSION_MAJOR .*/#define GASNET_RELEASE_VERSION_MAJOR $2/" \
    -e "s/^#define GASNET_RELEASE_VERSION_MINOR .*/#define GASNET_RELEASE_VERSION_MINOR $3/" \
    "$work/$1/include/gasnet_config.h"
}

# d. Refusals. The prefix has smp only: a udp build names what is there.
features=(--features udp)
GASNET_PREFIX="$work/prefix" refused "d. a prefix without the conduit" \
  "has no udp-conduit in PAR mode" "its conduits (threading modes): smp (par)" "UAT_GASNET=bundled"
# A GASNet-EX older than the bundled one, by either route.
claim_version old 2020 10
features=(--features smp)
GASNET_PREFIX="$work/old" refused "d. GASNET_PREFIX to GASNet-EX 2020.10.0" \
  "GASNET_PREFIX=$work/old" "is version 2020.10.0" "needs 2021.3.0 or newer" "UAT_GASNET=bundled"
PKG_CONFIG_PATH="$work/old/lib/pkgconfig" refused "d. pkg-config finds GASNet-EX 2020.10.0" \
  "pkg-config's $work/old/lib/pkgconfig/gasnet-smp-par.pc" "is version 2020.10.0" "UAT_GASNET=bundled"
UAT_GASNET=pkg-config refused "d. UAT_GASNET=pkg-config with none to find" \
  "pkg-config finds no gasnet-smp-par" "PKG_CONFIG_PATH"
# The way out on a machine whose GASNet-EX is too old.
if PKG_CONFIG_PATH="$work/old/lib/pkgconfig" UAT_GASNET=bundled build -p gasnet-sys "${features[@]}" \
   && [ "$(built source)" = bundled ]; then
  ok "e. UAT_GASNET=bundled beside the old one: built against $(built prefix)"
else
  bad "e. UAT_GASNET=bundled beside the old one"
  tail -n 5 "$work/err" >&2
fi

# f. Newer than the bundled one: accepted, and the build says it is untested.
claim_version new 2024 5
if GASNET_PREFIX="$work/new" build -p gasnet-sys "${features[@]}" \
   && [ "$(built version)" = 2024.5.0 ] && grep -qF "uat is tested with 2021.3.0" "$work/err"; then
  ok "f. GASNet-EX 2024.5.0 accepted: $(grep -m1 -o 'warning: .*tested with 2021.3.0' "$work/err" | cut -c1-160)"
else
  bad "f. GASNet-EX 2024.5.0 (version '$(built version)')"
  tail -n 5 "$work/err" >&2
fi

echo "site-gasnet: $((SECONDS - start)) s" >&2
exit "$status"
