#!/usr/bin/env python3
"""bench/util.py: small helpers for the bench scripts (stdlib only).

  median N...                 median of the numbers
  maxrate [ROUTE] < log.json  most requests (of ROUTE, default all) in any 1 s window
  gaps ROUTE < log.json       ms between consecutive requests of ROUTE
  cpu PID                     "<utime+stime µs> <schedstat on-cpu ns>" of a process
  hwm PID                     "<VmHWM kB> <VmRSS kB>"
  get KEY < json              a top-level field of a JSON object
"""
import json
import os
import statistics
import sys


def entries(route=None):
    reqs = json.load(sys.stdin)["requests"]
    if route and route != "*":
        reqs = [r for r in reqs if r.get("route") == route]
    return sorted(r["time"] for r in reqs)


def main(argv):
    cmd = argv[1]
    if cmd == "median":
        vals = [float(x) for x in argv[2:]]
        print(f"{statistics.median(vals):.1f}" if vals else "nan")
    elif cmd == "maxrate":
        times = entries(argv[2] if len(argv) > 2 else None)
        best, j = 0, 0
        for i, t in enumerate(times):
            while times[j] <= t - 1.0:
                j += 1
            best = max(best, i - j + 1)
        print(best)
    elif cmd == "gaps":
        times = entries(argv[2])
        print(" ".join(f"{(b - a) * 1000:.0f}" for a, b in zip(times, times[1:])))
    elif cmd == "cpu":
        pid = argv[2]
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        us = (int(fields[11]) + int(fields[12])) * 1_000_000 // tick
        with open(f"/proc/{pid}/schedstat") as f:
            ns = int(f.read().split()[0])
        print(us, ns)
    elif cmd == "hwm":
        vals = {}
        with open(f"/proc/{argv[2]}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS"):
                    vals[k] = v.split()[0]
        print(vals["VmHWM"], vals["VmRSS"])
    elif cmd == "get":
        v = json.load(sys.stdin)
        for k in argv[2].split("."):
            v = v[int(k)] if isinstance(v, list) else v[k]
        print(v)
    else:
        sys.exit(f"util.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
