#!/usr/bin/env bash
# N runs of one test beside a CPU-bound process; prints pass count.
bin=$1; n=$2; shift 2
yes > /dev/null & hog=$!
pass=0
for i in $(seq "$n"); do
  if "$bin" --exact "$@" -q >/tmp/sleep-hog-last.txt 2>&1; then pass=$((pass+1)); else cp /tmp/sleep-hog-last.txt /tmp/sleep-hog-fail-$i.txt; fi
done
kill "$hog"
echo "passed $pass/$n"
