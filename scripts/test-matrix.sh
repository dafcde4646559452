#!/usr/bin/env bash
# The full test matrix, beyond CI's lean set: every conduit that runs here,
# more rank counts, and repeated launches to catch flaky start-up, exit and
# hang bugs. Every launch runs under a timeout. Prints a table of how many
# runs passed per configuration and exits non-zero if any run failed.
#
#   scripts/test-matrix.sh [--repeat K]     (default K = 10)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
repeat=10
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "test-matrix.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

scripts/setup.sh || exit 1
for variant in smp-native udp-native mpi-native; do
  conduit=${variant%%-*}
  cargo build --quiet --release --bins --no-default-features --features "$conduit,fad-native" \
    --target-dir "target/$variant" || exit 1
done
cargo build --quiet --release --bins --no-default-features --features ibv,fad-native --target-dir target/ibv-native \
  && ibv_link=ok || ibv_link=FAILED

# name | run.sh arguments | program and arguments | expected exit code
configs=()
for n in 1 2 3 4; do
  configs+=("gasnet-check smp n=$n|--conduit smp -n $n|gasnet-check --iters 200|0")
  configs+=("gasnet-check udp n=$n|--conduit udp -n $n|gasnet-check --iters 200|0")
  configs+=("gasnet-check mpi n=$n|--conduit mpi -n $n|gasnet-check --iters 200|0")
done
for n in 2 4; do
  configs+=("gasnet-check udp real-udp n=$n|--conduit udp --real-udp -n $n|gasnet-check --iters 50|0")
done
for c in smp udp mpi; do
  configs+=("failing rank $c n=3|--conduit $c -n 3|gasnet-check --iters 10 --fail-rank 1|1")
done

total_fail=0
results=()
for config in "${configs[@]}"; do
  IFS='|' read -r name launcher program want <<<"$config"
  pass=0 fail=0 hang=0
  for ((i = 0; i < repeat; i++)); do
    # shellcheck disable=SC2086
    out=$(scripts/run.sh --no-build --timeout 60 $launcher -- $program 2>/tmp/uat-matrix.err)
    rc=$?
    json_ok=$(tail -n 1 <<<"$out" | grep -o '"ok":[a-z]*' || true)
    if [ "$rc" = 124 ]; then
      hang=$((hang + 1)); fail=$((fail + 1))
    elif [ "$rc" = "$want" ] && { [ "$want" != 0 ] || [ "$json_ok" = '"ok":true' ]; }; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "FAILED: $name (exit $rc, wanted $want): $(tail -n 3 /tmp/uat-matrix.err | tr '\n' ' ')" >&2
    fi
  done
  total_fail=$((total_fail + fail))
  results+=("$(printf '%-34s %3d/%-3d passed  %d hung' "$name" "$pass" "$repeat" "$hang")")
  echo "${results[-1]}" >&2
done

echo
echo "== test matrix ($(date -u +%Y-%m-%dT%H:%MZ), $repeat launches per configuration, 60 s cap each)"
printf '%s\n' "${results[@]}"
echo "ibv variant build and link: $ibv_link"
runs=$(( ${#configs[@]} * repeat ))
echo "matrix: $((runs - total_fail)) passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ "$ibv_link" = ok ]
