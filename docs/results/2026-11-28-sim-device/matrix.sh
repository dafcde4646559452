#!/usr/bin/env bash
# The matrix of the simulator's scaled-regime check, shared by predict.sh
# (here, before any device run) and device.sh (on the 16-core device):
# udp, 1 rank, and 16 ranks on 4 emulated hosts with UAT_NET_DELAY 0 and
# 10us; native and am; three benchmarks on inputs not used for calibration.
benches=("btc --depth 22" "uts -t 1 -b 4 -r 19 -a 3 -d 10" "nqueens 13")
fads=(native am)
# ranks hosts delay_us
configs=("1 1 0" "16 4 0" "16 4 10")
