#!/usr/bin/env python3
"""UAT_VICTIMS=random against host-first on emulated hosts, paired.

For each benchmark, ROUNDS rounds; in each, one job with each policy, in
alternating order, on `--hosts H -n N` with the same UAT_NET_DELAY. Prints,
per benchmark, the median and min-max of host-first's time over random's
(the pairs' ratios), and each policy's share of steals across hosts.
Usage: victims.py CONDUIT HOSTS RANKS DELAY ROUNDS  (run from the checkout,
after `scripts/run.sh` has built the CONDUIT-native variant).
"""
import json, statistics, subprocess, sys

conduit, hosts, ranks, delay, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
BENCHES = [
    ("btc", ["--depth", "24"]),
    ("uts", "-t 1 -a 3 -d 10 -b 4 -r 19".split()),
    ("nqueens", ["13"]),
    ("cilksort", ["-n", "4194304"]),
    ("heat", ["--rows", "1024", "--cols", "1024", "--iters", "20"]),
]
TIME_KEYS = ["sort_s", "iters_s", "time_s"]


def job(bench, args, victims):
    cmd = ["scripts/run.sh", "--no-build", "--conduit", conduit, "--fad", "native", "--hosts", hosts,
           "-n", ranks, "--timeout", "300", "--", f"target/{conduit}-native/release/{bench}", *args]
    env = {"UAT_VICTIMS": victims, "UAT_NET_DELAY": delay}
    out = subprocess.run(cmd, capture_output=True, text=True, env={**__import__("os").environ, **env})
    line = json.loads(out.stdout.strip().splitlines()[-1])
    assert line.get("verified") is True, (bench, victims, line)
    t = next(line[k] for k in TIME_KEYS if k in line)
    s = line.get("stats", {})
    return t, s.get("steals_across_hosts", 0), s.get("steals_succeeded", 0)


for bench, args in BENCHES:
    ratios, share = [], {"random": [0, 0], "host-first": [0, 0]}
    for r in range(rounds):
        order = ["random", "host-first"] if r % 2 == 0 else ["host-first", "random"]
        t = {}
        for v in order:
            t[v], across, stolen = job(bench, args, v)
            share[v][0] += across
            share[v][1] += stolen
        ratios.append(t["host-first"] / t["random"])
    sh = {v: (round(a / s, 3) if s else None) for v, (a, s) in share.items()}
    print(json.dumps({"bench": bench, "conduit": conduit, "hosts": int(hosts), "ranks": int(ranks), "net_delay": delay,
                      "rounds": rounds, "host_first_over_random": {"median": round(statistics.median(ratios), 3),
                      "min": round(min(ratios), 3), "max": round(max(ratios), 3)}, "steals_across_share": sh}))
    sys.stdout.flush()
