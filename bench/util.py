#!/usr/bin/env python3
"""bench/util.py: small helpers for the bench scripts (stdlib only).

  median N...                 median of the numbers
  maxrate [ROUTE] < log.json  most requests (of ROUTE, default all) in any 1 s window
  maxconn < log.json          most requests of one connection in any 1 s window
  gaps ROUTE < log.json       ms between consecutive requests of ROUTE
  cpu PID                     "<utime+stime µs> <schedstat on-cpu ns>" of a process
  hwm PID                     "<VmHWM kB> <VmRSS kB>"
  peak PID STOP READY         sample /proc/PID/status every 10 ms until file
                              STOP exists (at most 15 min), creating file
                              READY after the first sample; print "<RssAnon
                              kB> <peak RssAnon kB> <RssShmem kB> <peak
                              RssShmem kB> <samples>" (first and peak values)
  get KEY < json              a top-level field of a JSON object
  l0max URL STOP TABLE...     poll the emulator every 100 ms until file STOP
                              exists (at most 15 min); print "TABLE MAX" per
                              table, MAX the most L0 generations it held
  tables URL N PERMITS        reset the emulator, pool of PERMITS, tables k1..kN
                              with 1 bucket and 1 L0 generation each, log reset
  generation URL TABLE...     one more L0 generation (10 rows) in each table
  rate URL KEY CONNS SECS N   get_lsm_stats requests/s from CONNS keep-alive
                              clients for SECS s over tables k1..kN
  compact_all URL KEY N       one compact_lsm on each of k1..kN (8 clients)
  noticed LOG PASSES          per pass of the emulator's pass log (the
                              files of GET /_emulator/log and passes): the lag
                              from its end to the first get_lsm_stats of its
                              table after it, and the stats reads between the
                              compact_lsm that queued it and that one; prints
                              median, 90th percentile and max lag (ms), mean
                              polls, the first compact and the last pass end
                              relative to the first request (ms)
  generations URL TABLE...    L0 generations the tables' buckets have sealed
                              so far (current_generation - 1, summed)
"""
import json
import os
import statistics
import sys
import time
import urllib.request


def control(url, path, body=None):
    """POST to the emulator's control API."""
    data = json.dumps(body or {}).encode()
    req = urllib.request.Request(f"{url}/_emulator/{path}", data=data, method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()


def control_many(url, groups, conns=4):
    """POST the (path, body) calls of each group, in order, to the control
    API over CONNS keep-alive connections (a group on one of them; 100,000
    tables are made in a minute, not in ten); raises on any answer but
    200."""
    import http.client
    import threading
    host, port = url.split("//")[1].split(":")
    failed = []

    def worker(part):
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        for path, body in (call for group in part for call in group):
            c.request("POST", f"/_emulator/{path}", body=json.dumps(body),
                      headers={"content-type": "application/json"})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                failed.append((path, r.status))
        c.close()
    threads = [threading.Thread(target=worker, args=(groups[i::conns],))
               for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise RuntimeError(f"control calls failed: {failed[:3]}")


def route_rate(url, key, route, conns, secs, n, once=False):
    """Requests/s of ROUTE from CONNS keep-alive clients for SECS seconds,
    round-robin over tables k1..kN (once: each table once, then stop)."""
    import http.client
    import threading
    host, port = url.split("//")[1].split(":")
    stop = time.time() + secs
    done = [0] * conns

    def worker(i):
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        j = i
        while time.time() < stop and not (once and j >= n):
            c.request("POST", f"/v1/table/k{j % n + 1}/{route}/", body=b"{}",
                      headers={"x-api-key": key, "content-type": "application/json"})
            c.getresponse().read()
            done[i] += 1
            j += conns
        c.close()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(conns)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / (time.time() - t0)


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


def noticed(log_file, passes_file):
    """The lag between the end of each pass and the stats read that saw it
    (see the usage above)."""
    with open(log_file) as f:
        reqs = json.load(f)["requests"]
    with open(passes_file) as f:
        passes = json.load(f)["passes"]
    by = {}
    for r in reqs:
        by.setdefault(r["table"], []).append((r["time"], r["route"]))
    t0 = min(r["time"] for r in reqs)
    lags, polls = [], []
    for p in passes:
        seq = sorted(by.get(p["table"], []))
        after = [t for t, route in seq if route == "get_lsm_stats" and t >= p["ended"]]
        if not after:
            continue
        lags.append((after[0] - p["ended"]) * 1000)
        polls.append(sum(1 for t, route in seq if route == "get_lsm_stats"
                         and p["queued"] <= t <= after[0]))
    lags.sort()
    q = lambda f: lags[min(len(lags) - 1, int(f * len(lags)))]
    first_compact = min(r["time"] for r in reqs if r["route"] == "compact_lsm")
    print(f"passes {len(lags)} lag ms median {q(0.5):.0f} p90 {q(0.9):.0f} max {lags[-1]:.0f} "
          f"polls per pass {statistics.mean(polls):.2f} first compact at {(first_compact - t0) * 1000:.0f} "
          f"last pass end at {(max(p['ended'] for p in passes) - t0) * 1000:.0f}")


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
    elif cmd == "peak":
        first, peak, n = None, None, 0
        until = time.monotonic() + 900
        while not (first and os.path.exists(argv[3])) and time.monotonic() < until:
            try:
                with open(f"/proc/{argv[2]}/status") as f:
                    v = {k: int(val.split()[0]) for k, _, val in
                         (line.partition(":") for line in f) if k in ("RssAnon", "RssShmem")}
            except FileNotFoundError:
                break
            s = (v["RssAnon"], v["RssShmem"])
            if first is None:
                first = s
                open(argv[4], "w").close()
            peak = tuple(max(a, b) for a, b in zip(peak or s, s))
            n += 1
            time.sleep(0.01)
        print(first[0], peak[0], first[1], peak[1], n)
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
    elif cmd == "tables":
        url, n, permits = argv[2], int(argv[3]), int(argv[4])
        control(url, "reset")
        control(url, "pool", {"size": permits})
        control_many(url, [[("tables", {"name": f"k{i}", "buckets": 1}),
                            (f"tables/k{i}/generations", {"count": 1, "rows": 10})]
                           for i in range(1, n + 1)])
        control(url, "log/reset")
    elif cmd == "generation":
        url, names = argv[2], argv[3:]
        control_many(url, [[(f"tables/{t}/generations", {"count": 1, "rows": 10})]
                           for t in names])
    elif cmd == "rate":
        url, key, conns, secs, n = argv[2], argv[3], int(argv[4]), float(argv[5]), int(argv[6])
        print(f"{route_rate(url, key, 'get_lsm_stats', conns, secs, n):.0f}")
    elif cmd == "compact_all":
        url, key, n = argv[2], argv[3], int(argv[4])
        route_rate(url, key, "compact_lsm", 8, 600, n, once=True)
    elif cmd == "noticed":
        noticed(argv[2], argv[3])
    elif cmd == "generations":
        url, names = argv[2], argv[3:]
        print(sum(b["current_generation"] - 1 for n in names
                  for b in table_state(url, n)["buckets"]))
    else:
        sys.exit(f"util.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
