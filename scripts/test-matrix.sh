#!/usr/bin/env bash
# The full test matrix, beyond CI's lean set, run before resolving an issue.
# Every launch runs under a 60 s cap; the script prints how many runs passed
# per configuration and exits non-zero if any failed, hung or answered wrong.
#
#   scripts/test-matrix.sh [--repeat K] [--stress N] [--under-load N] [--quick]
#   scripts/test-matrix.sh --only under-load [--under-load N] [VARIANT...]
#
#   part 1, gasnet-check: smp/udp/mpi at 1-4 ranks, real UDP, a failing rank,
#           K launches each (default 5)
#   part 2, benchmarks: T1, T3, T5, nqueens 13, btc --depth 20 at 1-4 ranks,
#           every conduit x every fad mode x empty check on/off, once each
#   part 2b, micro fad (2, 4 ranks), latency and steal (2 ranks), every
#           conduit x mode
#   part 3, stress: uts T3 on 2 ranks, N launches (default 20) per conduit x
#           mode, each with its own victim-choice seed (UAT_SEED)
#   part 3b, the migration checker: the Vec-across-spawn program reported
#           with its origin (smp, udp over real UDP, mpi; N launches each),
#           and the benchmarks with the checker on (quiet, exact)
#   part 4, scripts/reproduce.sh --quick on every conduit, with
#           --oversubscribe, and from --pack'ed binaries (--bin-dir)
#   part 5, under load: every multi-rank test (the integration test
#           binaries) of every CI variant, N times (default 20) with a
#           CPU-bound process beside them; VARIANTs narrow it (smp-native,
#           smp-am, smp-rdma-emulated, udp-native, mpi-native)
#   the ibv variant is built and linked.
#   --quick: 2 launches in parts 1, 3 and 3b, ranks 1-2 in part 2, 2 rounds
#   in part 5. --only under-load: part 5 alone.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
repeat=5 stress=20 under_load=20 rank_list="1 2 3 4" only="" load_variants=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --stress) stress=$2; shift 2 ;;
    --under-load) under_load=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --quick) repeat=2 stress=2 under_load=2 rank_list="1 2"; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    smp-native|smp-am|smp-rdma-emulated|udp-native|mpi-native) load_variants+=("$1"); shift ;;
    *) echo "test-matrix.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -z "$only" ] || [ "$only" = under-load ] || { echo "test-matrix.sh: --only takes under-load" >&2; exit 2; }
[ ${#load_variants[@]} -gt 0 ] || load_variants=(smp-native smp-am smp-rdma-emulated udp-native mpi-native)

# Part 5: the multi-rank tests under load. Each round runs every integration
# test binary of a variant (`cargo test --test '*'`: real multi-rank jobs)
# while a busy loop takes a core: timing-dependent tests (steals, a job
# ending within N s) must pass every round.
under_load_part() {
  local pass=0 fail=0 start=$SECONDS hog v c m
  for v in "${load_variants[@]}"; do
    c=${v%%-*} m=${v#*-}
    { "$uat" uat build --release --conduit "$c" --fad "$m" >/dev/null \
      && cargo test --quiet --release --workspace --no-run --features "$("$uat" uat features --conduit "$c" --fad "$m")" \
           --target-dir "target/$v" 2>/dev/null; } || { echo "FAILED: building $v's tests" >&2; return 1; }
    local vpass=0 vfail=0 vstart=$SECONDS
    for ((i = 0; i < under_load; i++)); do
      ( while :; do :; done ) & hog=$!
      if cargo test --quiet --release --workspace --features "$("$uat" uat features --conduit "$c" --fad "$m")" \
           --target-dir "target/$v" --test '*' >"$err" 2>&1; then
        vpass=$((vpass + 1))
      else
        vfail=$((vfail + 1))
        echo "FAILED: under load, $v round $((i + 1)):" >&2
        grep -E "panicked|^test .* FAILED|took" "$err" | head -5 >&2
      fi
      kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null
    done
    results+=("$(printf '%-58s %3d/%-3d passed  %d s' "under load: $v, all multi-rank tests" "$vpass" "$under_load" $((SECONDS - vstart)))")
    echo "${results[-1]}" >&2
    pass=$((pass + vpass)); fail=$((fail + vfail))
  done
  total=$((total + pass + fail)); failed=$((failed + fail))
  echo "part 5 wall time: $((SECONDS - start)) s" >&2
}

scripts/setup.sh || exit 1
uat=$(scripts/launcher.sh) || exit 1
total=0 failed=0
results=()
err=$(mktemp)
if [ "$only" = under-load ]; then
  under_load_part
  echo
  echo "== test matrix, part 5 only ($(date -u +%Y-%m-%dT%H:%MZ))"
  printf '%s\n' "${results[@]}"
  echo "matrix: $((total - failed)) passed, $failed failed"
  rm -f "$err"
  [ "$failed" = 0 ]
  exit
fi
conduits=(smp udp mpi)
modes=(native am rdma-emulated)
for c in "${conduits[@]}"; do
  for m in "${modes[@]}"; do
    "$uat" uat build --release --conduit "$c" --fad "$m" >/dev/null || exit 1
  done
done
"$uat" uat build --release --conduit ibv --fad native >/dev/null \
  && ibv_link=ok || ibv_link=FAILED
# The report tool reads the benchmarks' JSON lines (uat-report get).
cargo build --quiet --release --manifest-path report/Cargo.toml --target-dir target/report || exit 1
report_tool=$root/target/report/release/uat-report
stdout=$(mktemp)
# verdict FILE: true when FILE's JSON line says "verified": true or, for a
# program without an answer to check, "ok": true.
verdict() {
  "$report_tool" get "$1" verified 2>/dev/null || "$report_tool" get "$1" ok 2>/dev/null || echo none
}

# run_config NAME TIMES EXPECTED_EXIT[:STDERR-TEXT] [ENV=VALUE...] -- RUN.SH-ARGS -- PROGRAM ARGS
# (EXPECTED_EXIT nz: any non-zero code; udp reports a dead rank as 255)
run_config() {
  local name=$1 times=$2 want=${3%%:*} says=""
  [ "$3" = "$want" ] || says=${3#*:}
  shift 3
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local pass=0 fail=0 hang=0 wrong=0
  for ((i = 0; i < times; i++)); do
    env "${envs[@]}" UAT_SEED=$((RANDOM * 32768 + RANDOM)) scripts/run.sh --no-build --timeout 60 "$@" >"$stdout" 2>"$err"
    rc=$?
    if [ "$rc" = 124 ]; then
      hang=$((hang + 1)); fail=$((fail + 1))
    elif [ "$want" != 0 ]; then
      if { [ "$rc" = "$want" ] || { [ "$want" = nz ] && [ "$rc" != 0 ]; }; } && { [ -z "$says" ] || grep -qF -- "$says" "$err"; }; then
        pass=$((pass + 1))
      else
        fail=$((fail + 1))
        echo "FAILED: $name (exit $rc, wanted $want${says:+ saying \"$says\"}): $(tail -n 3 "$err" | tr '\n' ' ')" >&2
      fi
    elif [ "$rc" = 0 ] && [ "$(verdict "$stdout")" = true ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      [ "$(verdict "$stdout")" = false ] && wrong=$((wrong + 1))
      echo "FAILED: $name (exit $rc): $(tail -n 3 "$err" | tr '\n' ' ')" >&2
    fi
  done
  total=$((total + times)); failed=$((failed + fail))
  results+=("$(printf '%-58s %3d/%-3d passed  %d hung  %d wrong' "$name" "$pass" "$times" "$hang" "$wrong")")
  echo "${results[-1]}" >&2
}

# Part 1: GASNet itself.
for n in 1 2 3 4; do
  for c in "${conduits[@]}"; do
    run_config "gasnet-check $c n=$n" "$repeat" 0 -- --conduit "$c" -n "$n" -- gasnet-check --iters 200
  done
done
for n in 2 4; do
  run_config "gasnet-check udp real-udp n=$n" "$repeat" 0 -- --conduit udp --real-udp -n "$n" -- gasnet-check --iters 50
done
for c in "${conduits[@]}"; do
  run_config "gasnet-check failing rank $c n=3" "$repeat" 1 -- --conduit "$c" -n 3 -- gasnet-check --iters 10 --fail-rank 1
done

# Part 2: every benchmark, conduit, mode, rank count and empty-check setting.
benches=("uts -t 1 -a 3 -d 10 -b 4 -r 19" "uts -t 0 -b 2000 -q 0.124875 -m 8 -r 42" "uts -t 1 -a 0 -d 20 -b 4 -r 34" "nqueens 13" "btc --depth 20")
for c in "${conduits[@]}"; do
  for m in "${modes[@]}"; do
    for n in $rank_list; do
      for ec in on off; do
        for b in "${benches[@]}"; do
          # shellcheck disable=SC2086
          run_config "$c $m n=$n ec=$ec: $b" 1 0 -- --conduit "$c" --fad "$m" -n "$n" -- $b --empty-check "$ec"
        done
      done
    done
  done
done

# Part 2b: the fetch-and-add service and the micro-benchmarks, every
# conduit and mode, 2 and 4 ranks.
for c in "${conduits[@]}"; do
  for m in "${modes[@]}"; do
    for n in 2 4; do
      run_config "$c $m n=$n: micro fad" 1 0 -- --conduit "$c" --fad "$m" -n "$n" -- micro fad --per-rank 2000 --work 200000
    done
    run_config "$c $m n=2: micro latency" 1 0 -- --conduit "$c" --fad "$m" -n 2 -- micro latency --iters 2000
    run_config "$c $m n=2: micro steal" 1 0 -- --conduit "$c" --fad "$m" -n 2 -- micro steal --depth 16 --min-steals 50
  done
done

# Part 2c: global memory. Cilksort of 2^24 keys on smp at every
# rank count and mode; over real UDP and mpi without shared memory (the
# cache's path) with the cache on and off.
for m in "${modes[@]}"; do
  for n in $rank_list; do
    run_config "smp $m n=$n: cilksort 2^24" 1 0 -- --conduit smp --fad "$m" -n "$n" -- cilksort -n 16777216 --seed 3
  done
done
for cache in on off; do
  run_config "udp real-udp n=2 cache=$cache: cilksort 2^24" 1 0 UAT_CACHE=$cache \
    -- --conduit udp --real-udp -n 2 -- cilksort -n 16777216 --seed 4
  run_config "mpi no-pshm n=2 cache=$cache: cilksort 2^24" 1 0 UAT_CACHE=$cache GASNET_SUPERNODE_MAXSIZE=1 \
    -- --conduit mpi -n 2 -- cilksort -n 16777216 --seed 4
done

# Part 2d: knapsack, the three classes on smp at every rank
# count and mode with a certain steal (verified against the dynamic
# program), and over real UDP and mpi without shared memory at 2 ranks.
for m in "${modes[@]}"; do
  for n in $rank_list; do
    for class in uncorrelated weak strong; do
      run_config "smp $m n=$n: knapsack $class" 1 0 -- --conduit smp --fad "$m" -n "$n" -- knapsack --class "$class" --seed 6 --force-steal
    done
  done
done
for class in uncorrelated weak strong; do
  run_config "udp real-udp n=2: knapsack $class" 1 0 -- --conduit udp --real-udp -n 2 -- knapsack --class "$class" --seed 7 --force-steal
  run_config "mpi no-pshm n=2: knapsack $class" 1 0 GASNET_SUPERNODE_MAXSIZE=1 -- --conduit mpi -n 2 -- knapsack --class "$class" --seed 7 --force-steal
done

# Part 3: repeated launches of a steal-heavy run, each with its own seed.
for c in "${conduits[@]}"; do
  for m in "${modes[@]}"; do
    run_config "stress $c $m n=2: uts T3" "$stress" 0 -- --conduit "$c" --fad "$m" -n 2 -- uts -t 0 -b 2000 -q 0.124875 -m 8 -r 42
  done
done

# Part 3b: the migration checker. The program that keeps a Vec across
# spawn/join is reported with its origin every time, over shared memory,
# real UDP and MPI; the benchmarks run with the checker on, quiet and exact.
for cfg in "smp" "udp --real-udp" "mpi"; do
  c=${cfg%% *}
  # shellcheck disable=SC2086
  run_config "migration checker $cfg n=2: vec across spawn" "$stress" "nz:migration check: " UAT_CHECK_MIGRATION=1 \
    -- --conduit $cfg -n 2 -- "target/$c-native/release/examples/misuse" vec-across-spawn --force-steal
done
for c in "${conduits[@]}"; do
  for b in "uts -t 1 -a 3 -d 10 -b 4 -r 19" "nqueens 12" "btc --depth 18"; do
    # shellcheck disable=SC2086
    run_config "migration checker $c n=2: $b" 1 0 UAT_CHECK_MIGRATION=1 -- --conduit "$c" -n 2 -- $b --force-steal
  done
done

# Part 4: the reproduction pipeline on tiny inputs: every conduit, the
# oversubscribed rows, and a --pack / --bin-dir round trip.
repro_config() { # NAME -- REPRODUCE.SH-ARGS
  local name=$1; shift 2
  local out; out=$(mktemp -d)
  if timeout 600 scripts/reproduce.sh --quick --reps 1 --out "$out/r" "$@" >/dev/null 2>"$err" \
     && [ -s "$out/r/report.md" ] && [ -s "$out/r/plots/scaling.png" ]; then
    results+=("$(printf '%-58s %3d/%-3d passed' "reproduce $name" 1 1)")
  else
    failed=$((failed + 1))
    results+=("$(printf '%-58s %3d/%-3d passed' "reproduce $name" 0 1)")
    echo "FAILED: reproduce $name: $(tail -n 3 "$err" | tr '\n' ' ')" >&2
  fi
  total=$((total + 1))
  echo "${results[-1]}" >&2
  rm -rf "$out"
}
for c in "${conduits[@]}"; do
  repro_config "$c" -- --conduit "$c"
done
repro_config "smp --oversubscribe" -- --oversubscribe
pack=$(mktemp -d)
if scripts/reproduce.sh --pack "$pack/bins" >/dev/null 2>"$err"; then
  repro_config "smp --bin-dir (packed)" -- --bin-dir "$pack/bins"
else
  failed=$((failed + 1)) total=$((total + 1))
  results+=("reproduce --pack: FAILED")
fi
rm -rf "$pack"

under_load_part

echo
echo "== test matrix ($(date -u +%Y-%m-%dT%H:%MZ); 60 s cap per launch)"
printf '%s\n' "${results[@]}"
echo "ibv variant build and link: $ibv_link"
echo "matrix: $((total - failed)) passed, $failed failed"
rm -f "$err" "$stdout"
[ "$failed" = 0 ] && [ "$ibv_link" = ok ]
