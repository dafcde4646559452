#!/usr/bin/env bash
# Reproduces the IPSJ JIP 2016 paper's experiments (RDMA-emulated vs
# AM-based remote fetch-and-add, plus native GASNet-EX atomics) at the scale
# this machine allows, and writes results/<timestamp>/ with raw JSON lines,
# CSV, a Markdown report and PNG plots. See --help.
#
# This script only sequences: it builds, loops over the runs and launches
# each; the report tool (report/, `uat-report`) writes every file of the
# results directory: meta.json (`start`), each run's record in runs.jsonl
# with its status (`record`), the end stamp (`finish`), the CSVs, plots and
# report.md.
set -uo pipefail
script_started=$(date +%s)

usage() {
  cat <<'EOF'
Usage: scripts/reproduce.sh [OPTIONS]

Builds the benchmarks in each fetch-and-add mode, runs the paper's
experiments, verifies every answer, and writes results/<timestamp>/:
  runs.jsonl     one record per run (what ran, how it ended: ok, wrong,
                 failed or timeout, the benchmark's own JSON line)
  logs.tar.xz    each run's stdout and stderr (logs/ while it runs)
  *.csv          one table per experiment (scaling.csv, spawn.csv, ...)
  report.md      our numbers next to the paper's, and what they mean
  plots/*.png    scaling, steal breakdown, message handling, overheads, ...
and prints the summary table and its own duration (runs, wall time from
its start, building included) at the end. Exit 0 when every run finished
with a verified answer; 1 when any did not (it is still in the report).

Experiments (IPSJ JIP 2016 numbering):
  spawn      Table 2: spawn+join cost per mode vs a plain call and rayon::join
  latency    Fig. 11: 8-byte get/put latency without and with polling threads
             (on smp also over real UDP on loopback: a network path)
  steal      Fig. 13: one steal, phase by phase, per mode
  fad        the mechanism behind Figs. 14-16: a victim computing while the
             other ranks fetch-and-add on it (micro fad), at each rank count
  seq        Fig. 12: each benchmark on one rank against its serial elision,
             paired in one process (--vs-seq: --reps rounds, the fastest of
             each and the median of the rounds' ratios); beside ours, rayon
             on one thread (--rayon 1) and the no-runtime child models, the
             floor (--model-child frame, call), paired the same way
  scaling    Table 4, Figs. 14-16: strong scaling of BTC, UTS and NQueens for
             {rdma-emulated, am} x {empty check on, off} plus native; steals,
             message-handling share, stack use
  lifelines  (not in the paper; PPoPP'11) idle ranks with lifelines on vs off
             per mode: their worker CPU while the root computes alone (micro
             idle; on smp also over real UDP and mpi without shared
             memory at 2 ranks, mpi not with --quick), and BTC, UTS, UTS
             T3 (a narrow binomial tree) and NQueens time, steal attempts
             and message handling in alternating on/off runs (--reps each)
  global     (not in the paper; Itoyori's model) global memory in the first
             mode: cilksort at 1 rank against slice::sort_unstable of the
             same keys, cilksort and knapsack (three classes) at each rank
             count, and on smp cilksort at 2 ranks over real UDP and mpi
             without shared memory with the cache on and off (mpi not with
             --quick); --reps alternating rounds, ratios as medians of pairs
  peers      (not in the paper) ours in each mode against rayon in
             the same binaries (--rayon THREADS) at each rank/thread count:
             BTC in the paper's form and with --join, UTS, NQueens and
             cilksort (--cilksort-keys; sort time alone), --reps interleaved
             repetitions, medians and spreads
  patterns   (not in the paper; uat::pattern) in the first mode, --reps
             alternating rounds: each pattern (for-each-mut, map-reduce,
             scan, histogram, filter, sort; -n 2^24) at 1 and 2 ranks
             against a serial loop over a Vec and rayon on 1 and 2 threads;
             heat and uts-mem (global memory) at 1 and 2
             ranks, and on smp at 2 ranks over real UDP with the cache on
             and off
  trace      (not in the paper) one UTS run (the scaling tree, the first mode) at the
             highest rank count with `--trace DIR/trace-uts`: the report
             draws its timeline (plots/timeline-uts.png: rank x time, each
             rank's state, steals as lines) beside Figs. 13 and 16; the
             trace's files (trace.json for Perfetto, trace.otf2 for Vampir,
             stats.txt) stay in trace-uts/
Every mode also runs with the paper's own mechanisms beside the defaults
("paper" rows: its THE steal protocol with a remote lock and, in am mode,
a poll at every spawn; UAT_STEAL_PROTOCOL=paper, UAT_POLL_INTERVAL=1) in
spawn and steal, and am in scaling; they run without lifelines (the
paper's system had none). Everything else runs with the runtime's default
(UAT_LIFELINES=on).
UTS trees of the paper's family (-t 1 -r 0 -b 4 -a 3 -d D) have no published
counts: each is counted once with --seq, cached in results/cache/, and every
parallel run is checked against it.

Options:
  --ranks LIST        rank counts, e.g. 1,2,4,8,16 (default: powers of two up
                      to the number of cores)
  --modes LIST        fetch-and-add modes (default: native,am,rdma-emulated)
  --experiments LIST  subset of spawn,latency,steal,fad,seq,scaling,lifelines,
                      global,peers,patterns,trace
                      (default: all)
  --conduit C         smp (default) | udp | mpi | ibv
  --launcher CMD      mpi/ibv: the launcher to use instead of mpirun or
                      GASNet's gasnetrun_ibv (passed to scripts/run.sh)
  --cores N           cores the job may use (default: nproc). rdma-emulated
                      runs need a core per polling thread, so they run at
                      ranks <= N/2 unless --oversubscribe
  --no-udp-latency    on smp, skip Fig. 11's real-UDP run (and its build)
  --oversubscribe     also run configurations with more spinning threads
                      than cores; such rows are labelled "oversubscribed"
  --btc-depth D       BTC depth (the paper: 41 at scale, 28 in Fig. 12)
  --uts-depth D       UTS -t 1 -r 0 -b 4 -a 3 -d D (the paper: 18, and 11 in
                      Fig. 12)
  --nqueens N         NQueens N (the paper: 18, and 13 in Fig. 12)
                      Default sizes grow with the largest rank count, so
                      that each run there lasts >= 2 s (one rank's times:
                      docs/design/scheduler.md, "Scaling inputs"):
                      ranks <= 2: BTC 27, UTS 12, NQueens 15; <= 4: 28, 12,
                      16; <= 8: 29, 13, 16; <= 16: 30, 13, 17; more (up
                      to 32 ranks): 31, 14, 17
  --cilksort-keys N   keys cilksort sorts in global and peers
                      (default 4194304; over the network at most 1048576)
  --reps K            repetitions of every scaling run (the report uses the
                      median time) and rounds of Fig. 12 (default 3)
  --quick             tiny inputs (BTC 16, UTS 6, NQueens 9, cilksort 2^16,
                      knapsack 30 items, patterns 2^20 elements, small heat
                      and uts-mem; for tests)
  --timeout S         per-run limit in seconds (default 600)
  --out DIR           output directory (default results/<timestamp>)
  --no-build          do not build; with --bin-dir, use prebuilt binaries
  --bin-dir DIR       prebuilt binaries: DIR/<mode>/{btc,uts,nqueens,micro,
                      cilksort,knapsack,patterns,heat,uts-mem},
                      DIR/udp-native/{micro,cilksort,heat,uts-mem},
                      DIR/mpi-native/{micro,cilksort} and DIR/uat-report (for
                      machines that cannot build)
  --pack DIR          build, copy stripped binaries into DIR in the --bin-dir
                      layout, and stop (to carry them to such a machine)
  -h, --help          this text

Examples:
  scripts/reproduce.sh                                  # this machine
  scripts/reproduce.sh --ranks 1,2,4,8,16 --btc-depth 28 --uts-depth 13
  scripts/reproduce.sh --conduit ibv --launcher gasnetrun_ibv --cores 1024 \
      --ranks 64,128,256,512 --btc-depth 36 --uts-depth 15 --nqueens 17
EOF
}

die() { echo "reproduce.sh: error: $*" >&2; echo "reproduce.sh: see scripts/reproduce.sh --help" >&2; exit 2; }
list() { tr ',' ' ' <<<"$1"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command_line="scripts/reproduce.sh${*:+ $*}"
ranks="" modes="native,am,rdma-emulated" experiments="spawn,latency,steal,fad,seq,scaling,lifelines,global,peers,patterns,trace"
conduit=smp launcher="" cores=$(nproc) oversub=0 no_udp_latency=0
btc_depth="" uts_depth="" nqueens="" cilksort_keys=4194304 reps=3 timeout_s=600
out="" build=1 bin_dir="" pack="" quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --oversubscribe) oversub=1; shift; continue ;;
    --quick) quick=1; shift; continue ;;
    --no-build) build=0; shift; continue ;;
    --no-udp-latency) no_udp_latency=1; shift; continue ;;
  esac
  opt=$1 val=""
  case "${opt%%=*}" in
    --ranks|--modes|--experiments|--conduit|--launcher|--cores|--btc-depth|--uts-depth|--nqueens|--cilksort-keys|--reps|--timeout|--out|--bin-dir|--pack) ;;
    --*) die "unknown option '${opt%%=*}'" ;;
    *) die "unexpected argument '$opt'" ;;
  esac
  case "$opt" in
    --*=*) val=${opt#*=}; opt=${opt%%=*}; shift ;;
    *) [ $# -ge 2 ] || die "$opt needs a value"; val=$2; shift 2 ;;
  esac
  case "$opt" in
    --ranks) ranks=$val ;;
    --modes) modes=$val ;;
    --experiments) experiments=$val ;;
    --conduit) conduit=$val ;;
    --launcher) launcher=$val ;;
    --cores) cores=$val ;;
    --btc-depth) btc_depth=$val ;;
    --uts-depth) uts_depth=$val ;;
    --nqueens) nqueens=$val ;;
    --cilksort-keys) cilksort_keys=$val ;;
    --reps) reps=$val ;;
    --timeout) timeout_s=$val ;;
    --out) out=$val ;;
    --bin-dir) bin_dir=$val ;;
    --pack) pack=$val ;;
  esac
done

# --- Validate everything before building or running anything. ---
positive() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] || die "$1 wants a positive integer, got '$2'"; }
case "$conduit" in smp|udp|mpi|ibv) ;; *) die "unknown conduit '$conduit' (smp, udp, mpi or ibv)" ;; esac
for m in $(list "$modes"); do
  case "$m" in native|am|rdma-emulated) ;; *) die "unknown fetch-and-add mode '$m' (native, am or rdma-emulated)" ;; esac
done
for e in $(list "$experiments"); do
  case "$e" in spawn|latency|steal|fad|seq|scaling|lifelines|global|peers|patterns|trace) ;; *) die "unknown experiment '$e' (spawn, latency, steal, fad, seq, scaling, lifelines, global, peers, patterns, trace)" ;; esac
done
positive --cores "$cores"; positive --reps "$reps"; positive --timeout "$timeout_s"
[ -z "$btc_depth" ] || positive --btc-depth "$btc_depth"
[ -z "$uts_depth" ] || positive --uts-depth "$uts_depth"
[ -z "$nqueens" ] || positive --nqueens "$nqueens"
positive --cilksort-keys "$cilksort_keys"
[ -z "$btc_depth" ] || [ "$btc_depth" -le 48 ] || die "--btc-depth $btc_depth: 2^$btc_depth tasks would not finish"
[ -z "$nqueens" ] || [ "$nqueens" -le 22 ] || die "--nqueens $nqueens would not finish"
[ -n "$launcher" ] && case "$conduit" in mpi|ibv) ;; *) die "--launcher applies to the mpi and ibv conduits" ;; esac
if [ -z "$ranks" ]; then
  ranks=1; n=2
  while [ "$n" -le "$cores" ]; do ranks="$ranks $n"; n=$((n * 2)); done
else
  ranks=$(list "$ranks")
  for n in $ranks; do positive --ranks "$n"; done
fi
# Sizes not given grow with the largest rank count (--help; the table and
# one rank's times are in docs/design/scheduler.md).
max_ranks=$(tr ' ' '\n' <<<"$ranks" | sort -n | tail -1)
if [ "$max_ranks" -le 2 ]; then sizes="27 12 15"
elif [ "$max_ranks" -le 4 ]; then sizes="28 12 16"
elif [ "$max_ranks" -le 8 ]; then sizes="29 13 16"
elif [ "$max_ranks" -le 16 ]; then sizes="30 13 17"
else sizes="31 14 17"; fi
read -r d_btc d_uts d_nq <<<"$sizes"
btc_depth=${btc_depth:-$d_btc} uts_depth=${uts_depth:-$d_uts} nqueens=${nqueens:-$d_nq}
if [ "$quick" = 1 ]; then btc_depth=16 uts_depth=6 nqueens=9 cilksort_keys=65536; fi
[ -z "$bin_dir" ] || [ -d "$bin_dir" ] || die "--bin-dir $bin_dir: no such directory"
[ -z "$bin_dir" ] || { bin_dir=$(cd "$bin_dir" && pwd); build=0; }
[ -z "$pack" ] || [ "$build" = 1 ] || die "--pack builds; it cannot go with --no-build or --bin-dir"
# The launcher (builds, launches, the oversubscription rule): the packed
# one with --bin-dir (machines that cannot build), else this checkout's.
[ -z "$bin_dir" ] || [ ! -x "$bin_dir/cargo-uat" ] || export UAT_LAUNCHER="$bin_dir/cargo-uat"
uat=$("$root/scripts/launcher.sh") || exit 2
experiments=" $(list "$experiments") "
want() { [[ "$experiments" == *" $1 "* ]]; }
first_mode=$(list "$modes" | awk '{print $1}')

# --- Build (or find) the binaries: one variant per mode, and the report tool. ---
bin_of() { # MODE PROGRAM
  if [ -n "$bin_dir" ]; then echo "$bin_dir/$1/$2"; else echo "$root/target/$conduit-$1/release/$2"; fi
}
# Fig. 11 on smp also runs over real UDP (loopback), where a polling thread
# competes for GASNet's progress engine as it does for a NIC's.
udp_latency=0
if [ "$conduit" = smp ] && want latency && [ "$no_udp_latency" = 0 ]; then udp_latency=1; fi
# global on smp also runs over real UDP and over mpi without shared
# memory, where other ranks' memory goes through the cache (mpi is skipped
# with --quick: its GASNet build is the longest).
global_udp=0 global_mpi=0
if [ "$conduit" = smp ] && want global; then global_udp=1; [ "$quick" = 1 ] || global_mpi=1; fi
# lifelines on smp also runs micro idle over real UDP and over mpi without
# shared memory, where a thief's operations wait for the victim to poll (mpi
# is skipped with --quick).
lifelines_udp=0 lifelines_mpi=0
if [ "$conduit" = smp ] && want lifelines; then lifelines_udp=1; [ "$quick" = 1 ] || lifelines_mpi=1; fi
# patterns on smp also runs heat and uts-mem over real UDP, cache on and off.
patterns_udp=0
if [ "$conduit" = smp ] && want patterns; then patterns_udp=1; fi
variant_bin() { # VARIANT PROGRAM (a variant other than this run's conduit)
  if [ -n "$bin_dir" ]; then echo "$bin_dir/$1/$2"; else echo "$root/target/$1/release/$2"; fi
}
udp_micro() { variant_bin udp-native micro; }
# What each mode's directory of a pack holds.
mode_programs="btc uts nqueens micro cilksort knapsack patterns heat uts-mem"
extra_variants() { # VARIANT:PROGRAM,... this run needs besides the modes'
  local udp="" mpi=""
  { [ "$udp_latency" = 0 ] && [ "$lifelines_udp" = 0 ]; } || udp=micro
  [ "$global_udp" = 0 ] || udp=${udp:+$udp,}cilksort
  [ "$patterns_udp" = 0 ] || udp=${udp:+$udp,}heat,uts-mem
  [ "$lifelines_mpi" = 0 ] || mpi=micro
  [ "$global_mpi" = 0 ] || mpi=${mpi:+$mpi,}cilksort
  [ -z "$udp" ] || echo "udp-native:$udp"
  [ -z "$mpi" ] || echo "mpi-native:$mpi"
}
report_tool=""
if [ "$build" = 1 ]; then
  "$root/scripts/setup.sh" || exit 2
  for m in $(list "$modes"); do
    echo "reproduce: building $conduit-$m (cargo uat build --release, target/$conduit-$m/)" >&2
    (cd "$root" && "$uat" uat build --release --conduit "$conduit" --fad "$m" >/dev/null) || die "building the $conduit-$m variant failed (see above)"
  done
  for v in $(extra_variants); do
    v=${v%%:*}
    echo "reproduce: building $v (Fig. 11 / global memory / patterns over the network; target/$v/)" >&2
    (cd "$root" && "$uat" uat build --release --conduit "${v%%-*}" --fad "${v#*-}" >/dev/null) || die "building the $v variant failed (see above)"
  done
  echo "reproduce: building the report tool (report/, target/report/)" >&2
  cargo build --quiet --release --manifest-path "$root/report/Cargo.toml" --target-dir "$root/target/report" \
    || die "building report/ failed (see above)"
  report_tool="$root/target/report/release/uat-report"
  if [ -n "$pack" ]; then
    for m in $(list "$modes"); do
      mkdir -p "$pack/$m"
      for p in $mode_programs; do
        cp "$(bin_of "$m" "$p")" "$pack/$m/$p" || die "cannot copy into $pack"
        strip "$pack/$m/$p" 2>/dev/null || true
      done
    done
    for vp in $(extra_variants); do
      v=${vp%%:*}
      mkdir -p "$pack/$v"
      for p in $(list "${vp#*:}"); do
        cp "$(variant_bin "$v" "$p")" "$pack/$v/$p" || die "cannot copy into $pack"
        strip "$pack/$v/$p" 2>/dev/null || true
      done
    done
    cp "$report_tool" "$pack/uat-report" || die "cannot copy into $pack"
    strip "$pack/uat-report" 2>/dev/null || true
    # The packed launcher without OTF2 (the machine it goes to may not
    # have the OTF2 library; a trace's OTF2 is made later with uat-trace).
    cargo build --quiet --release -p cargo-uat --target-dir "$root/target/pack-tools" \
      || die "building a portable cargo-uat failed (see above)"
    cp "$root/target/pack-tools/release/cargo-uat" "$pack/cargo-uat" || die "cannot copy into $pack"
    strip "$pack/cargo-uat" 2>/dev/null || true
    echo "reproduce: packed into $pack ($(du -sh "$pack" | cut -f1)); run there with --bin-dir $pack" >&2
    exit 0
  fi
else
  for m in $(list "$modes"); do
    for p in btc uts nqueens micro; do
      [ -x "$(bin_of "$m" "$p")" ] || die "no $(bin_of "$m" "$p"): build first (scripts/reproduce.sh --pack DIR makes a --bin-dir)"
    done
  done
  if want peers && [ ! -x "$(bin_of "$first_mode" cilksort)" ]; then
    die "no $(bin_of "$first_mode" cilksort) for the peers experiment: build first, or leave peers out of --experiments"
  fi
  if want global && { [ ! -x "$(bin_of "$first_mode" cilksort)" ] || [ ! -x "$(bin_of "$first_mode" knapsack)" ]; }; then
    die "no $(bin_of "$first_mode" cilksort) or knapsack for the global experiment: build first, or leave global out of --experiments"
  fi
  if want patterns; then
    for p in patterns heat uts-mem; do
      [ -x "$(bin_of "$first_mode" "$p")" ] \
        || die "no $(bin_of "$first_mode" "$p") for the patterns experiment: build first, or leave patterns out of --experiments"
    done
  fi
  if [ "$patterns_udp" = 1 ] && { [ ! -x "$(variant_bin udp-native heat)" ] || [ ! -x "$(variant_bin udp-native uts-mem)" ]; }; then
    echo "reproduce: no $(variant_bin udp-native heat) or uts-mem: patterns runs on $conduit only (--pack makes them)" >&2
    patterns_udp=0
  fi
  if [ "$global_udp" = 1 ] && [ ! -x "$(variant_bin udp-native cilksort)" ]; then
    echo "reproduce: no $(variant_bin udp-native cilksort): global runs on $conduit only (--pack makes one)" >&2
    global_udp=0 global_mpi=0
  fi
  if [ "$lifelines_udp" = 1 ] && [ ! -x "$(variant_bin udp-native micro)" ]; then
    echo "reproduce: no $(variant_bin udp-native micro): lifelines runs on $conduit only (--pack makes one)" >&2
    lifelines_udp=0
  fi
  if [ "$lifelines_mpi" = 1 ] && [ ! -x "$(variant_bin mpi-native micro)" ]; then
    echo "reproduce: no $(variant_bin mpi-native micro): lifelines skips mpi (--pack makes one)" >&2
    lifelines_mpi=0
  fi
  if [ "$global_mpi" = 1 ] && [ ! -x "$(variant_bin mpi-native cilksort)" ]; then
    echo "reproduce: no $(variant_bin mpi-native cilksort): global skips mpi (--pack makes one)" >&2
    global_mpi=0
  fi
  if [ "$udp_latency" = 1 ] && [ ! -x "$(udp_micro)" ]; then
    echo "reproduce: no $(udp_micro): Fig. 11 runs on $conduit only (--pack makes one)" >&2
    udp_latency=0
  fi
  if [ -n "$bin_dir" ] && [ -x "$bin_dir/uat-report" ]; then report_tool="$bin_dir/uat-report"
  elif [ -x "$root/target/report/release/uat-report" ]; then report_tool="$root/target/report/release/uat-report"
  else die "no report tool (it records every run): build report/ (cargo build --release --manifest-path report/Cargo.toml --target-dir target/report) or put uat-report in --bin-dir"; fi
fi

# --- The output directory and what this run is (the tool writes meta.json). ---
[ -n "$out" ] || out="$root/results/$(date +%Y%m%d-%H%M%S)"
cache="$root/results/cache"
mkdir -p "$cache"
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
uts_args="-t 1 -r 0 -b 4 -a 3 -d $uts_depth"
bool() { if [ "$1" = 1 ]; then echo true; else echo false; fi; }
"$report_tool" start "$out" "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" "host=$(hostname)" "cpu=$cpu" \
  "cores:=$cores" "nproc:=$(nproc)" "commit=$commit" "conduit=$conduit" "modes=$(list "$modes")" \
  "ranks=$ranks" "experiments=$(echo $experiments)" "oversubscribe:=$(bool "$oversub")" "reps:=$reps" \
  "btc_depth:=$btc_depth" "uts_args=$uts_args" "nqueens:=$nqueens" "cilksort_keys:=$cilksort_keys" \
  "quick:=$(bool "$quick")" "command=$command_line" "started_unix:=$script_started" \
  || die "cannot start $out (see above)"
echo "reproduce: uni-address threads $commit on $(hostname): $cores cores ($cpu)" >&2
echo "reproduce: conduit $conduit${launcher:+ (launcher $launcher)}; modes $(list "$modes"); ranks $ranks; reps $reps" >&2
echo "reproduce: BTC depth $btc_depth; UTS $uts_args; NQueens $nqueens; experiments$experiments" >&2
echo "reproduce: writing $out" >&2

# --- Running one job and recording it. ---
seqno=0 failures=0 started=$SECONDS
# run_job EXPERIMENT MODE EMPTY_CHECK RANKS BENCH [ARGS...]
# Runs one job (its output in logs/ID.out and .err) and has the report tool
# record it in runs.jsonl.
run_job() {
  local exp=$1 mode=$2 ec=$3 n=$4 bench=$5; shift 5
  # micro latency runs a polling thread beside every rank (its "with
  # pollers" half) in every mode, as rdma-emulated ranks do.
  local over; over=$(oversubscribed "$([ "$exp" = latency ] && echo rdma-emulated || echo "$mode")" "$n")
  seqno=$((seqno + 1))
  local id; id=$(printf '%03d' "$seqno")
  local prog=$bench sub=""
  case "$bench" in micro-*) prog=micro sub=${bench#micro-} ;; esac
  local args=("$@")
  [ -z "$sub" ] || args=("$sub" "${args[@]}")
  [ "$ec" = na ] || args+=(--empty-check "$ec")
  # job_conduit / job_flags / job_program (set for one call) run it elsewhere;
  # job_trace=DIR traces it (--trace DIR);
  # job_mech=paper runs it with the paper's mechanisms (no lifelines);
  # job_lifelines=on|off sets UAT_LIFELINES; job_env="VAR=value ..." sets
  # more (recorded as "env").
  local mech=${job_mech:-new} env=()
  if [ "$mech" = paper ]; then
    env=(UAT_STEAL_PROTOCOL=paper UAT_LIFELINES=off)
    [ "$mode" != am ] || env+=(UAT_POLL_INTERVAL=1)
  fi
  [ -z "${job_lifelines:-}" ] || env+=(UAT_LIFELINES="$job_lifelines")
  # shellcheck disable=SC2206
  [ -z "${job_env:-}" ] || env+=(${job_env})
  local runner=(env "${env[@]}" "$root/scripts/run.sh" --no-build --conduit "${job_conduit:-$conduit}" ${job_flags:-} --timeout "$timeout_s" -n "$n")
  [ -z "$launcher" ] || runner+=(--launcher "$launcher")
  [ -z "${job_trace:-}" ] || runner+=(--trace "$job_trace")
  printf 'reproduce: [%s %4ds] %-9s %-14s %-13s %-5s ec=%-3s %3s ranks%s%s%s ... ' "$id" $((SECONDS - started)) "$exp" "$bench" "$mode" "$mech" "$ec" "$n" \
    "$([ -z "${job_lifelines:-}" ] || echo " lifelines $job_lifelines")${job_env:+ $job_env}" \
    "$([ -z "${job_conduit:-}" ] || echo " over ${job_conduit}${job_flags:+ $job_flags}")" \
    "$([ "$over" = true ] && echo ' (oversubscribed)')" >&2
  local t0=$EPOCHREALTIME
  "${runner[@]}" -- "${job_program:-$(bin_of "$mode" "$prog")}" "${args[@]}" >"$out/logs/$id.out" 2>"$out/logs/$id.err"
  local rc=$?
  # The tool reads the benchmark's JSON line, classifies the run, appends
  # its record to runs.jsonl and prints how it ended ("ok (1.2 s)"); it
  # exits 0 when the run is usable (ok, or the UTS count itself).
  local ended
  ended=$("$report_tool" record "$out" --id "$id" --experiment "$exp" --bench "$bench" \
    --conduit "${job_conduit:-$conduit}${job_flags:+ $job_flags}" --mode "$mode" --mechanisms "$mech" \
    --empty-check "$ec" --ranks "$n" --args "${args[*]}" --oversubscribed "$over" --env "${job_env:-}" \
    --exit "$rc" --started "$t0")
  last_usable=$?
  [ "$last_usable" = 0 ] || failures=$((failures + 1))
  echo "${ended:-not recorded}" >&2
  [ "$last_usable" = 0 ] || sed 's/^/    | /' "$out/logs/$id.err" | tail -n 4 >&2
  last_id=$id
}

# oversubscribed MODE RANKS: the launcher's rule (more spinning threads
# than cores), printed as true or false.
oversubscribed() { "$uat" uat oversubscribed --fad "$1" --ranks "$2" --cores "$cores"; }

# should_run MODE RANKS: scaling rows with more spinning threads than cores
# run only with --oversubscribe.
should_run() {
  [ "$(oversubscribed "$1" "$2")" = true ] || return 0
  [ "$oversub" = 1 ] && return 0
  echo "reproduce: skip $1 at $2 ranks: more spinning threads than $cores cores (--oversubscribe runs it, labelled)" >&2
  return 1
}

# --- The UTS tree's node count: a --seq run, once per tree, cached. ---
uts_nodes=""
if want seq || want scaling || want lifelines || want peers || want trace; then
  key="uts$(tr -d ' ' <<<"$uts_args")"
  if [ -s "$cache/$key.json" ]; then
    uts_nodes=$("$report_tool" get "$cache/$key.json" result)
    echo "reproduce: UTS $uts_args has $uts_nodes nodes (cached --seq count, $cache/$key.json)" >&2
  else
    echo "reproduce: counting UTS $uts_args once with --seq (no published count for this tree)" >&2
    run_job verify "$first_mode" na 1 uts $uts_args --seq
    if [ "$last_usable" = 0 ] && uts_nodes=$("$report_tool" get "$out/logs/$last_id.out" result); then
      cp "$out/logs/$last_id.out" "$cache/$key.json"
      echo "reproduce: UTS $uts_args has $uts_nodes nodes; cached in $cache/$key.json" >&2
    fi
  fi
  [ -n "$uts_nodes" ] || echo "reproduce: warning: no UTS count; UTS runs stay unverified" >&2
fi
uts_run=(uts $uts_args)
[ -z "$uts_nodes" ] || uts_run+=(--expect-nodes "$uts_nodes")
bench_args() { # BENCH -> the benchmark and its arguments
  case "$1" in
    btc) echo btc --depth "$btc_depth" ;;
    uts) echo "${uts_run[@]}" ;;
    nqueens) echo nqueens "$nqueens" ;;
    uts-t3) echo uts -t 0 -b 2000 -q 0.124875 -m 8 -r 42 ;; # T3 (published count)
    btc-join) echo btc --depth "$btc_depth" --join ;;
    cilksort) echo cilksort -n "$cilksort_keys" ;;
  esac
}

# --- Micro-benchmarks: Table 2, Fig. 11, Fig. 13, the victim under fire. ---
for m in $(list "$modes"); do
  want spawn && run_job spawn "$m" na 1 micro-spawn
  want spawn && job_mech=paper run_job spawn "$m" na 1 micro-spawn
  want latency && run_job latency "$m" na 2 micro-latency
  want steal && run_job steal "$m" na 2 micro-steal
  want steal && job_mech=paper run_job steal "$m" na 2 micro-steal
  if want fad; then
    for n in $ranks; do
      [ "$n" -lt 2 ] || run_job fad "$m" na "$n" micro-fad
    done
  fi
done
if [ "$udp_latency" = 1 ]; then
  job_conduit=udp job_flags=--real-udp job_program=$(udp_micro) run_job latency native na 2 micro-latency
fi

# --- Fig. 12: one rank against the serial elision, paired in one process, in each mode's binary. ---
if want seq; then
  for b in btc uts nqueens; do
    for m in $(list "$modes"); do
      # shellcheck disable=SC2046
      run_job seq "$m" na 1 $(bench_args "$b") --vs-seq "$reps"
    done
    # Beside ours: rayon on one thread, and the floor of any child-first
    # runtime (a child with no runtime: its own frame, or a bare call).
    for peer in "--rayon 1" "--model-child frame" "--model-child call"; do
      # shellcheck disable=SC2046,SC2086
      run_job seq "$first_mode" na 1 $(bench_args "$b") $peer --vs-seq "$reps"
    done
  done
fi

# --- Table 4, Figs. 14-16: strong scaling. ---
if want scaling; then
  for b in btc uts nqueens; do
    for n in $ranks; do
      for m in $(list "$modes"); do
        should_run "$m" "$n" || continue
        ecs="on off"
        [ "$m" != native ] || ecs=on
        for ec in $ecs; do
          for ((r = 0; r < reps; r++)); do
            # shellcheck disable=SC2046
            run_job scaling "$m" "$ec" "$n" $(bench_args "$b")
          done
        done
        # Fig. 16's mechanism as the paper ran it: am polling at every spawn.
        if [ "$m" = am ]; then
          for ((r = 0; r < reps; r++)); do
            # shellcheck disable=SC2046
            job_mech=paper run_job scaling "$m" on "$n" $(bench_args "$b")
          done
        fi
      done
    done
  done
fi

# --- Lifelines (PPoPP'11): idle ranks on vs off, alternating runs. ---
if want lifelines; then
  idle_ms=$([ "$quick" = 1 ] && echo 100 || echo 300)
  for m in $(list "$modes"); do
    for n in $ranks; do
      [ "$n" -ge 2 ] || continue
      for l in on off; do
        job_lifelines=$l run_job lifelines "$m" na "$n" micro-idle --serial-ms "$idle_ms"
      done
    done
  done
  # The network rows: 2 ranks that share no memory (native mode).
  for l in on off; do
    [ "$lifelines_udp" = 0 ] || job_conduit=udp job_flags=--real-udp job_program=$(variant_bin udp-native micro) \
      job_lifelines=$l run_job lifelines native na 2 micro-idle --serial-ms "$idle_ms"
    [ "$lifelines_mpi" = 0 ] || job_conduit=mpi job_program=$(variant_bin mpi-native micro) \
      job_env="GASNET_SUPERNODE_MAXSIZE=1" job_lifelines=$l run_job lifelines native na 2 micro-idle --serial-ms "$idle_ms"
  done
  for b in btc uts uts-t3 nqueens; do
    for n in $ranks; do
      for m in $(list "$modes"); do
        should_run "$m" "$n" || continue
        for ((r = 0; r < reps; r++)); do
          for l in on off; do
            # shellcheck disable=SC2046
            job_lifelines=$l run_job lifelines "$m" na "$n" $(bench_args "$b")
          done
        done
      done
    done
  done
fi

# --- Global memory (Itoyori's model): cilksort and knapsack. ---
# Rounds alternate every configuration, so the report's ratios are medians
# of pairs measured side by side.
if want global; then
  gm=$first_mode
  knapsack_args=()
  [ "$quick" = 1 ] && knapsack_args=(--items 30)
  # Over the network 2^20 keys at most: every merge level crosses it.
  net_keys=$((cilksort_keys < 1048576 ? cilksort_keys : 1048576))
  for ((r = 0; r < reps; r++)); do
    run_job global "$gm" na 1 cilksort -n "$cilksort_keys" --sort-unstable
    for n in $ranks; do
      should_run "$gm" "$n" || continue
      run_job global "$gm" na "$n" cilksort -n "$cilksort_keys"
      for c in uncorrelated weak strong; do
        run_job global "$gm" na "$n" knapsack --class "$c" "${knapsack_args[@]}"
      done
    done
    for c in on off; do
      [ "$global_udp" = 0 ] || job_conduit=udp job_flags=--real-udp job_program=$(variant_bin udp-native cilksort) \
        job_env="UAT_CACHE=$c" run_job global native na 2 cilksort -n "$net_keys"
      [ "$global_mpi" = 0 ] || job_conduit=mpi job_program=$(variant_bin mpi-native cilksort) \
        job_env="UAT_CACHE=$c GASNET_SUPERNODE_MAXSIZE=1" run_job global native na 2 cilksort -n "$net_keys"
    done
  done
fi

# --- Peers: ours in each mode against rayon in the same binary. ---
# Repetitions are the outer loop, so every workload, count and system
# runs once before any runs again: a noisy phase of the host hits all.
if want peers; then
  for ((r = 0; r < reps; r++)); do
    for b in btc btc-join uts nqueens cilksort; do
      for n in $ranks; do
        [ "$n" -le "$cores" ] || continue
        for m in $(list "$modes"); do
          # Without the skip message: it would repeat every repetition.
          [ "$(oversubscribed "$m" "$n")" = false ] || [ "$oversub" = 1 ] || continue
          # shellcheck disable=SC2046
          run_job peers "$m" na "$n" $(bench_args "$b")
        done
        # shellcheck disable=SC2046
        run_job peers "$first_mode" na 1 $(bench_args "$b") --rayon "$n"
      done
    done
  done
fi

# --- Patterns (uat::pattern): each pattern against a serial loop and
# rayon; heat and uts-mem 1 -> 2 ranks and
# over real UDP with the cache on and off. Every configuration runs once a
# round, so the report's ratios are medians of pairs run side by side. ---
if want patterns; then
  pm=$first_mode
  if [ "$quick" = 1 ]; then
    pat_n=1048576
    heat_args=(--rows 512 --cols 512 --iters 20) uts_mem_args=(-d 6)
    net_heat_args=(--rows 256 --cols 256 --iters 10) net_uts_mem_args=(-d 6)
  else
    pat_n=16777216
    heat_args=(--iters 100) uts_mem_args=()
    net_heat_args=(--rows 1024 --cols 1024 --iters 50) net_uts_mem_args=()
  fi
  pat_ranks=1
  ! should_run "$pm" 2 || pat_ranks="1 2"
  for ((r = 0; r < reps; r++)); do
    for op in for-each-mut map-reduce scan histogram filter sort; do
      for n in $pat_ranks; do
        run_job patterns "$pm" na "$n" patterns --op "$op" -n "$pat_n"
      done
      run_job patterns "$pm" na 1 patterns --op "$op" -n "$pat_n" --loop
      for t in $pat_ranks; do
        run_job patterns "$pm" na 1 patterns --op "$op" -n "$pat_n" --rayon "$t"
      done
    done
    for n in $pat_ranks; do
      run_job patterns "$pm" na "$n" heat "${heat_args[@]}"
      run_job patterns "$pm" na "$n" uts-mem "${uts_mem_args[@]}"
    done
    if [ "$patterns_udp" = 1 ]; then
      for c in on off; do
        job_conduit=udp job_flags=--real-udp job_program=$(variant_bin udp-native heat) \
          job_env="UAT_CACHE=$c" run_job patterns native na 2 heat "${net_heat_args[@]}"
        job_conduit=udp job_flags=--real-udp job_program=$(variant_bin udp-native uts-mem) \
          job_env="UAT_CACHE=$c" run_job patterns native na 2 uts-mem "${net_uts_mem_args[@]}"
      done
    fi
  done
fi

# --- Trace: one traced UTS run at the highest rank count; the report
# draws its timeline (uat-report reads trace-uts/). ---
if want trace; then
  trace_n=""
  for n in $ranks; do
    [ "$(oversubscribed "$first_mode" "$n")" = false ] || [ "$oversub" = 1 ] || continue
    [ -n "$trace_n" ] && [ "$trace_n" -ge "$n" ] || trace_n=$n
  done
  # shellcheck disable=SC2046
  [ -z "$trace_n" ] || job_trace="$out/trace-uts" run_job trace "$first_mode" na "$trace_n" $(bench_args uts)
fi

"$report_tool" finish "$out" || die "cannot stamp the end of the runs into $out/meta.json"
echo "reproduce: $seqno runs in $((SECONDS - started)) s, $failures not ok" >&2

# --- The report, then the logs packed into one archive (runs.jsonl holds
# every run's JSON line and the tail of its stderr; the report needs no
# log). ---
"$report_tool" "$out"
report_rc=$?
tar -cJf "$out/logs.tar.xz" -C "$out" logs && rm -r "$out/logs" \
  || echo "reproduce: warning: could not pack $out/logs into logs.tar.xz; left as it is" >&2
[ "$report_rc" = 0 ] || { echo "reproduce: error: the report tool failed on $out" >&2; exit 1; }
echo "reproduce: report $out/report.md, plots in $out/plots/, CSV in $out/*.csv, logs in $out/logs.tar.xz" >&2
[ "$failures" = 0 ]
