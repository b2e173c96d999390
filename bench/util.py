#!/usr/bin/env python3
"""bench/util.py: small helpers for the bench scripts (stdlib only).

  median N...                 median of the numbers
  maxrate [ROUTE] < log.json  most requests (of ROUTE, default all) in any 1 s window
  maxconn < log.json          most requests of one connection in any 1 s window
  gaps ROUTE < log.json       ms between consecutive requests of ROUTE
  cpu PID                     "<utime+stime µs> <schedstat on-cpu ns>" of a process
  hwm PID                     "<VmHWM kB> <VmRSS kB>"
  get KEY < json              a top-level field of a JSON object
  l0max URL STOP TABLE...     poll the emulator every 100 ms until file STOP
                              exists (at most 15 min); print "TABLE MAX" per
                              table, MAX the most L0 generations it held
  generations URL TABLE...    L0 generations the tables' buckets have sealed
                              so far (current_generation - 1, summed)
"""
import json
import os
import statistics
import sys
import time
import urllib.request


def table_state(url, name):
    with urllib.request.urlopen(f"{url}/_emulator/tables/{name}", timeout=10) as r:
        return json.load(r)


def entries(route=None):
    reqs = json.load(sys.stdin)["requests"]
    if route and route != "*":
        reqs = [r for r in reqs if r.get("route") == route]
    return sorted(r["time"] for r in reqs)


def max_in_window(times):
    """Most of the sorted times in any window of one second."""
    best, j = 0, 0
    for i, t in enumerate(times):
        while times[j] <= t - 1.0:
            j += 1
        best = max(best, i - j + 1)
    return best


def main(argv):
    cmd = argv[1]
    if cmd == "median":
        vals = [float(x) for x in argv[2:]]
        print(f"{statistics.median(vals):.1f}" if vals else "nan")
    elif cmd == "maxrate":
        print(max_in_window(entries(argv[2] if len(argv) > 2 else None)))
    elif cmd == "maxconn":
        by = {}
        for r in json.load(sys.stdin)["requests"]:
            by.setdefault(r["conn"], []).append(r["time"])
        print(max((max_in_window(sorted(t)) for t in by.values()), default=0))
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
    elif cmd == "l0max":
        url, stop, names = argv[2], argv[3], argv[4:]
        most = dict.fromkeys(names, 0)
        until = time.monotonic() + 900
        while not os.path.exists(stop) and time.monotonic() < until:
            for n in names:
                l0 = sum(len(b["generations"]) for b in table_state(url, n)["buckets"])
                most[n] = max(most[n], l0)
            time.sleep(0.1)
        for n in names:
            print(n, most[n])
    elif cmd == "generations":
        url, names = argv[2], argv[3:]
        print(sum(b["current_generation"] - 1 for n in names
                  for b in table_state(url, n)["buckets"]))
    else:
        sys.exit(f"util.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
