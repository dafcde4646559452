#!/usr/bin/env bash
# Launch a uni-address threads program on N ranks, the right way for each
# GASNet-EX conduit. See --help.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/run.sh [--conduit C] [--fad M] [--real-udp] [--no-build]
                      [--launcher CMD] [--timeout SECONDS] -n N -- PROGRAM [ARGS...]

Builds the variant (conduit C, fetch-and-add mode M) into target/C-M/ unless
--no-build, then starts PROGRAM on N ranks. PROGRAM is a binary of the
workspace (gasnet-check, btc, uts, nqueens, micro), resolved in
target/C-M/release/, or a path. The exit code is the job's.

  --conduit C      smp (default) | udp | mpi | ibv
                     smp: GASNET_PSHM_NODES=N (GASNet forks the ranks)
                     udp: local spawn (GASNET_SPAWNFN=L), ranks on this host
                     mpi: mpirun -np N
                     ibv: gasnetrun_ibv -n N (clusters)
  --fad M          native (default) | rdma-emulated | am
  --real-udp       udp only: no shared memory between ranks, real UDP over
                   loopback (GASNET_SUPERNODE_MAXSIZE=1)
  --no-build       do not build; the variant must already be built
  --launcher CMD   mpi/ibv: start the job with CMD instead of mpirun or
                   GASNet's gasnetrun_ibv (same arguments)
  --timeout S      kill the whole job after S seconds (exit code 124)
  -n N             number of ranks (required)
  -h, --help       this text

Environment: GASNET_* variables are passed to every rank (mpirun gets -x for
each). UAT_LAUNCHED is set for the program: udp, mpi and ibv programs refuse
to start without a launcher.
EOF
}

die() { echo "run.sh: error: $*" >&2; echo "run.sh: see scripts/run.sh --help" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
conduit=smp fad=native real_udp=0 build=1 timeout_s="" ranks="" launcher=""
while [ $# -gt 0 ]; do
  case "$1" in
    --conduit) [ $# -ge 2 ] || die "--conduit needs a value"; conduit=$2; shift 2 ;;
    --conduit=*) conduit=${1#*=}; shift ;;
    --fad) [ $# -ge 2 ] || die "--fad needs a value"; fad=$2; shift 2 ;;
    --fad=*) fad=${1#*=}; shift ;;
    --real-udp) real_udp=1; shift ;;
    --no-build) build=0; shift ;;
    --launcher) [ $# -ge 2 ] || die "--launcher needs a value"; launcher=$2; shift 2 ;;
    --launcher=*) launcher=${1#*=}; shift ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; timeout_s=$2; shift 2 ;;
    --timeout=*) timeout_s=${1#*=}; shift ;;
    -n) [ $# -ge 2 ] || die "-n needs a value"; ranks=$2; shift 2 ;;
    -n*) ranks=${1#-n}; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (options come before '--', the program after it)" ;;
  esac
done

case "$conduit" in smp|udp|mpi|ibv) ;; *) die "unknown conduit '$conduit' (smp, udp, mpi or ibv)" ;; esac
case "$fad" in native|rdma-emulated|am) ;; *) die "unknown fetch-and-add mode '$fad' (native, rdma-emulated or am)" ;; esac
[ -n "$ranks" ] || die "the number of ranks is required: -n N"
[[ "$ranks" =~ ^[0-9]+$ ]] && [ "$ranks" -ge 1 ] || die "-n wants a positive integer, got '$ranks'"
[ "$ranks" -le 100000 ] || die "-n $ranks is not a plausible rank count"
[ -n "$timeout_s" ] && { [[ "$timeout_s" =~ ^[0-9]+$ ]] && [ "$timeout_s" -ge 1 ] || die "--timeout wants whole seconds, got '$timeout_s'"; }
[ "$real_udp" = 0 ] || [ "$conduit" = udp ] || die "--real-udp applies to the udp conduit only"
[ -z "$launcher" ] || [ "$conduit" = mpi ] || [ "$conduit" = ibv ] || die "--launcher applies to the mpi and ibv conduits only"
[ -z "$launcher" ] || command -v "$launcher" >/dev/null || die "launcher '$launcher' not found"
[ $# -ge 1 ] || die "no program given (put it after '--')"
program=$1; shift

variant="$conduit-$fad"
target_dir="$root/target/$variant"
if [ "$build" = 1 ]; then
  "$root/scripts/setup.sh"
  (cd "$root" && cargo build --quiet --release --bins --no-default-features \
     --features "$conduit,fad-$fad,migration-checker" --target-dir "$target_dir") \
    || { echo "run.sh: error: building the $variant variant failed (see above)" >&2; exit 2; }
fi
case "$program" in
  */*) exe=$program ;;
  *) exe="$target_dir/release/$program" ;;
esac
if [ ! -x "$exe" ]; then
  if [ "$exe" != "$program" ] && [ "$build" = 0 ] && [ ! -d "$target_dir/release" ]; then
    die "the $variant variant is not built (no $target_dir/release); run without --no-build, or build it with: cargo build --release --no-default-features --features $conduit,fad-$fad,migration-checker --target-dir target/$variant"
  fi
  [ "$exe" = "$program" ] && die "no program '$program' (not an executable file)"
  known=$(cd "$target_dir/release" 2>/dev/null && find . -maxdepth 1 -type f -executable -printf '%f ' || true)
  die "no program '$program' in $target_dir/release (built: ${known:-none})"
fi

export UAT_LAUNCHED=$conduit
launch=()
case "$conduit" in
  smp)
    export GASNET_PSHM_NODES=$ranks
    launch=("$exe") ;;
  udp)
    export GASNET_SPAWNFN=L
    [ "$real_udp" = 0 ] || export GASNET_SUPERNODE_MAXSIZE=1
    launch=("$exe" "$ranks") ;;
  mpi)
    mpirun=${launcher:-mpirun}
    command -v "$mpirun" >/dev/null || die "mpirun not found: install openmpi-bin (scripts/setup.sh does)"
    launch=("$mpirun" -np "$ranks" --oversubscribe)
    [ "$(id -u)" != 0 ] || launch+=(--allow-run-as-root)
    for var in $(compgen -e | grep -E '^(GASNET_|UAT_)' || true); do launch+=(-x "$var"); done
    launch+=("$exe") ;;
  ibv)
    prefix=${GASNET_PREFIX:-$root/target/gasnet/2021.3.0/ibv/install}
    runner=${launcher:-$prefix/bin/gasnetrun_ibv}
    command -v "$runner" >/dev/null || die "$runner not found: build the ibv variant first (or set GASNET_PREFIX)"
    vars=$(compgen -e | grep -E '^(GASNET_|UAT_)' | paste -sd, - || true)
    launch=("$runner" -n "$ranks" -E "$vars" "$exe") ;;
esac

# The job runs as our child so that we can say how it ended; TERM/INT/HUP
# sent to us are passed on. timeout(1) (with --timeout) runs the job in its
# own process group and signals all of it, so forked ranks and spawned
# workers go too.
[ -z "$timeout_s" ] || launch=(timeout --kill-after=5 "$timeout_s" "${launch[@]}")
"${launch[@]}" "$@" &
job=$!
trap 'kill -TERM "$job" 2>/dev/null' TERM INT HUP
set +e
wait "$job"
rc=$?
# A trapped signal interrupts wait: wait again for the job's own status.
while kill -0 "$job" 2>/dev/null; do wait "$job"; rc=$?; done
set -e
if [ -n "$timeout_s" ] && [ "$rc" = 124 ]; then
  echo "run.sh: error: the job ran over --timeout $timeout_s s and was killed" >&2
elif [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
  echo "run.sh: error: the job ended by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null || echo '?')): a rank crashed or was killed" >&2
elif [ "$rc" = 255 ]; then
  echo "run.sh: error: the job ended with code 255: a rank died or the $conduit launcher failed" >&2
fi
exit "$rc"
