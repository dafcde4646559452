#!/usr/bin/env bash
# The project's test command (README, .ci/run): unit tests and real
# multi-rank jobs for every variant CI covers, plus a compile-and-link check
# of the ibv variant (which cannot run without an InfiniBand device).
#
#   scripts/test.sh            the CI set: "lint" (cargo fmt --check, and
#                              clippy -D warnings on every target of the
#                              workspace in each fetch-and-add mode and on
#                              the report tool); smp in all three fetch-and-add modes
#                              (1, 2, 4 ranks), udp (2 ranks, also over real
#                              UDP) and mpi (2 ranks); the ibv variant links
#                              and the reproduction pipeline on tiny inputs
#                              (scripts/reproduce.sh --quick); the lifelines
#                              test (4 ranks) on udp and mpi in the am and
#                              rdma-emulated modes too ("lifelines"); the
#                              benchmarks on 2 emulated hosts of 2 ranks
#                              (tests/hosts.rs) in those modes ("hosts": the
#                              full udp and mpi variants run every hosts test);
#                              a crate outside the repository ("external");
#                              builds against an installed GASNet-EX
#                              (GASNET_PREFIX, pkg-config) and their
#                              refusals ("site-gasnet"); the simulator
#                              (sim/, its own workspace: fmt, clippy, its
#                              tests; "sim")
#   scripts/test.sh smp-native run only the named variant(s); "reproduce" is
#                              the pipeline alone
#
# The full matrix (more ranks, stress loops) is scripts/test-matrix.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh"

uat=$("$root/scripts/launcher.sh")
# setup.sh installed the OTF2 library: the trace tests must find it.
export UAT_TEST_OTF2=required
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(lint sim smp-native smp-am smp-rdma-emulated reproduce external site-gasnet udp-native mpi-native lifelines hosts ibv-native)

passed=0 failed=0
# Each variant's wall time, printed at the end (where CI's time goes).
timings=() current="" t0=$SECONDS f0=0
timed() {
  [ -n "$current" ] || return 0
  local status=ok
  [ "$failed" = "$f0" ] || status=FAILED
  timings+=("$(printf '%-20s %-6s %5d s' "$current" "$status" $((SECONDS - t0)))")
}
for variant in "${variants[@]}"; do
  timed
  current=$variant t0=$SECONDS f0=$failed
  if [ "$variant" = reproduce ]; then
    # The paper-reproduction pipeline end to end on tiny inputs (smp, all
    # three modes): the report tool's tests, then scripts/reproduce.sh
    # --quick, which must exit 0 and leave the report (with its duration
    # line), CSV, plots and the logs packed into logs.tar.xz.
    echo "=== reproduce: report/ tests, scripts/reproduce.sh --quick" >&2
    out="$root/target/reproduce-quick"
    rm -rf "$out"
    if cargo test --release --manifest-path report/Cargo.toml --target-dir target/report \
       && timeout 900 scripts/reproduce.sh --quick --out "$out" \
       && for f in report.md scaling.csv spawn.csv latency.csv steal.csv fad.csv runs.jsonl logs.tar.xz \
                   plots/scaling.png plots/steal-breakdown.png plots/msg-handling.png plots/overhead.png \
                   global.csv plots/global.png peers.csv plots/peers.png plots/timeline-uts.png; do
            [ -s "$out/$f" ] || { echo "reproduce: $out/$f is missing" >&2; false; }
          done \
       && grep -q '^## Findings' "$out/report.md" && grep -q '^Duration: ' "$out/report.md" \
       && { [ ! -e "$out/logs" ] || { echo "reproduce: $out/logs was not packed" >&2; false; }; }; then
      echo "reproduce: ok ($out/report.md)" >&2
      passed=$((passed + 1))
    else
      echo "reproduce: FAILED" >&2
      failed=$((failed + 1))
    fi
    continue
  fi
  if [ "$variant" = external ]; then
    # A program outside this repository, as a new user makes it: `cargo
    # new`, one dependency line, the README's program (between its
    # "program" markers), launched with `cargo uat run`; exact answers and a
    # certain steal (UAT_FORCE_STEAL) on smp (2, 4 ranks), udp over real UDP
    # and mpi (2 ranks). GASNet comes from the machine's cache; the crate's
    # own target dir costs one build per conduit.
    echo "=== external: cargo new, the README's program, cargo uat run" >&2
    if "$root/scripts/external-crate.sh" "$uat"; then
      passed=$((passed + 1))
    else
      echo "external: FAILED" >&2
      failed=$((failed + 1))
    fi
    continue
  fi
  if [ "$variant" = lint ]; then
    echo "=== lint: cargo fmt --check, cargo clippy -D warnings (every mode, the report tool)" >&2
    ok=1
    cargo fmt --all --check || ok=0
    cargo fmt --manifest-path report/Cargo.toml --check || ok=0
    for f in native am rdma-emulated; do
      cargo clippy --release --workspace --all-targets --features "$("$uat" uat features --conduit smp --fad "$f")" \
        --target-dir "target/smp-$f" -- -D warnings || ok=0
    done
    cargo clippy --release --manifest-path report/Cargo.toml --all-targets --target-dir target/report -- -D warnings || ok=0
    if [ "$ok" = 1 ]; then passed=$((passed + 1)); else echo "lint: FAILED" >&2; failed=$((failed + 1)); fi
    continue
  fi
  if [ "$variant" = sim ]; then
    # The simulator and the protocol crate it shares with the runtime:
    # outside the runtime's workspace, built once (target/sim/).
    # The protocol's mutations (feature `mutations`) must each be caught by
    # the model tests and by the simulator (docs/design/simulator.md).
    echo "=== sim: cargo fmt --check, clippy -D warnings, cargo test (sim/), mutations" >&2
    if cargo fmt --manifest-path sim/Cargo.toml --check \
       && cargo clippy --release --manifest-path sim/Cargo.toml --all-targets --features mutations --target-dir target/sim -- -D warnings \
       && cargo test --release --manifest-path sim/Cargo.toml --features mutations --target-dir target/sim \
       && cargo test --release -p uat-protocol --features mutations --target-dir target/smp-native \
       && cargo test --release -p uni-threads --lib --target-dir target/smp-native \
            --features gasnet-sys/smp,am-fad/fad-native,testing,mutations lifeline::tests; then
      passed=$((passed + 1))
    else
      echo "sim: FAILED" >&2
      failed=$((failed + 1))
    fi
    continue
  fi
  if [ "$variant" = site-gasnet ]; then
    # A site's GASNet-EX instead of the bundled build: the bundled smp
    # build installed into a fresh prefix (make install prefix=...),
    # gasnet-check built against it by GASNET_PREFIX and by pkg-config and
    # run at 2 ranks through the launcher; the refusals (a prefix without
    # the conduit, a GASNet-EX older than 2021.3.0) and UAT_GASNET=bundled
    # as the way out. Its own target dir (target/site-gasnet/).
    echo "=== site-gasnet: builds against an installed GASNet-EX" >&2
    if "$root/scripts/site-gasnet.sh" "$uat"; then
      passed=$((passed + 1))
    else
      echo "site-gasnet: FAILED" >&2
      failed=$((failed + 1))
    fi
    continue
  fi
  if [ "$variant" = lifelines ] || [ "$variant" = hosts ]; then
    # Where CI builds no full variant (udp and mpi in the am and
    # rdma-emulated modes), one test each: "lifelines", the lifelines test
    # (the full variants run every test with lifelines on, the default);
    # "hosts", the benchmarks on emulated hosts (BTC, UTS and NQueens exact
    # on 2 hosts of 2 ranks and 2 of 3, steals within and across hosts).
    # Only the executables the test launches are built (not every
    # benchmark and example: four variants of them would cost CI minutes).
    case "$variant" in
      lifelines) test=distributed filter=idle_ranks bins=(--bin micro) ;;
      hosts) test=hosts filter=benchmarks_are_exact bins=(--bin uts --bin btc --bin nqueens) ;;
    esac
    ok=1
    for v in udp-am udp-rdma-emulated mpi-am mpi-rdma-emulated; do
      c=${v%%-*} f=${v#*-}
      features=$("$uat" uat features --conduit "$c" --fad "$f")
      echo "=== $variant: $v, tests/$test.rs $filter" >&2
      cargo build --release --features "$features" --target-dir "target/$v" --workspace "${bins[@]}" \
        && cargo test --release --workspace --features "$features" --target-dir "target/$v" --test "$test" -- "$filter" \
        || ok=0
    done
    if [ "$ok" = 1 ]; then passed=$((passed + 1)); else echo "$variant: FAILED" >&2; failed=$((failed + 1)); fi
    continue
  fi
  conduit=${variant%%-*} fad=${variant#*-}
  features=$("$uat" uat features --conduit "$conduit" --fad "$fad")
  echo "=== $variant: cargo test --release --workspace --features $features" >&2
  if [ "$conduit" = ibv ]; then
    # No RDMA device here: build and link, then check the binary runs as far
    # as its launcher check (and answers --help) without one.
    if "$uat" uat build --release --conduit "$conduit" --fad "$fad" \
       && "target/$variant/release/gasnet-check" --help >/dev/null \
       && { "target/$variant/release/gasnet-check" 2>/dev/null; [ $? = 2 ]; }; then
      echo "ibv: builds, links, and refuses to start without gasnetrun_ibv: ok" >&2
      passed=$((passed + 1))
    else
      echo "ibv: FAILED" >&2
      failed=$((failed + 1))
    fi
    continue
  fi
  # The tests launch the workspace's executables (benchmarks in uat-bench,
  # examples, the launcher): `cargo test` builds other packages' binaries
  # only as test harnesses, so the variant is built first.
  # The smp variants of the two AM modes run what the mode changes (the
  # unit tests, fetch-and-add, the scheduler, global atomics, refusals,
  # peers); the mode-blind suites (patterns, the memory benchmarks, traces,
  # scripts, the litmus matrix of global memory's ordering, which depends on
  # where memory is, not on the deque's fetch-and-add) run in smp-native and
  # over udp and mpi.
  selection=()
  case "$variant" in
    smp-am | smp-rdma-emulated)
      selection=(--lib --bins --test fad --test runtime --test distributed --test global --test misuse --test peers) ;;
  esac
  if "$uat" uat build --release --conduit "$conduit" --fad "$fad" \
     && cargo test --release --workspace --features "$features" --target-dir "target/$variant" "${selection[@]}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
timed
printf '%s\n' "${timings[@]}"
echo "variants: $passed passed, $failed failed"
[ "$failed" = 0 ]
