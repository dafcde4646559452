#!/usr/bin/env python3
# ab2.py ROUNDS BIN... -- ARGS : per round, each BIN par then its own --seq (pinned core 1, 1 rank); also prints the fastest parallel time (added 2026-11-25, second session)
import sys, subprocess, statistics as st, re, os
r=int(sys.argv[1]); i=sys.argv.index('--'); bins=sys.argv[2:i]; args=sys.argv[i+1:]
env=dict(os.environ, GASNET_PSHM_NODES='1')
def t(cmd):
    o=subprocess.run(['taskset','-c','1']+cmd,env=env,capture_output=True,text=True).stdout
    return float(re.findall(r'"time_s":([0-9.e-]+)',o)[-1])
rows=[]
for k in range(r):
    rows.append([(t([b]+args),t([b]+args+['--seq'])) for b in bins])
for j,b in enumerate(bins):
    rs=[x[j][0]/x[j][1] for x in rows]
    print('%-22s median %.3f (%.3f-%.3f)  min/min %.3f  seq min %.3f  par min %.3f'%(b,st.median(rs),min(rs),max(rs),min(x[j][0] for x in rows)/min(x[j][1] for x in rows),min(x[j][1] for x in rows),min(x[j][0] for x in rows)),flush=True)
