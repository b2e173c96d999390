#!/usr/bin/env python3
"""bench/polls.py: stats polls per pass and where they fall (stdlib only).

  python3 polls.py CASE DIR N SERVER_MS MS...

For each run i (1..N) of case CASE, DIR holds CASE-i.counts, CASE-i.log
and CASE-i.passes (GET /_emulator/counts, log and passes of the run's
table) and MS its elapsed time in ms.  Prints a line per run: elapsed as
a ratio to SERVER_MS, stats polls per pass (the watermark read excluded),
the most requests in any 1 s window, and every stats read's time relative
to the pass boundaries: "pK+X" is X ms after pass K started (while it
ran), "eK+X" X ms after pass K ended (before the next started), in the
order sent.  A read at eK+X with X small saw pass K over in time; a read
at pK+X that another read of the same pass follows was needed only when
the pass ended later than it.  Then the case's median ratio, median
excess over SERVER_MS and mean polls per pass.
"""
import json
import statistics
import sys


def where(t, passes):
    """Where time t falls relative to the passes (sorted by start)."""
    label = "before"
    for k, p in enumerate(passes, 1):
        if t < p["started"]:
            break
        if t <= p["ended"]:
            return f"p{k}+{(t - p['started']) * 1000:.0f}"
        label = f"e{k}+{(t - p['ended']) * 1000:.0f}"
    return label


def main(argv):
    case, out, n, server = argv[1], argv[2], int(argv[3]), float(argv[4])
    ms = [float(x) for x in argv[5:5 + n]]
    ratios, excess, ppps = [], [], []
    for i, m in enumerate(ms, 1):
        stats = json.load(open(f"{out}/{case}-{i}.counts"))["get_lsm_stats"]
        reqs = json.load(open(f"{out}/{case}-{i}.log"))["requests"]
        passes = sorted(json.load(open(f"{out}/{case}-{i}.passes"))["passes"],
                        key=lambda p: p["started"])
        times = sorted(r["time"] for r in reqs)
        rate = max((sum(1 for u in times if v <= u < v + 1) for v in times), default=0)
        ppp = (stats - 1) / max(len(passes), 1)
        reads = [where(r["time"], passes) for r in sorted(reqs, key=lambda r: r["time"])
                 if r["route"] == "get_lsm_stats"]
        ratios.append(m / server)
        excess.append(m - server)
        ppps.append(ppp)
        print(f"  {case} run {i}: {m:.0f} ms = {m / server:.3f} x, {m - server:+.0f} ms; "
              f"passes {len(passes)}, stats {stats}, polls/pass {ppp:.2f}; "
              f"max req in 1 s {rate}; stats reads: {' '.join(reads)}")
    if ms:
        print(f"{case}: {len(ms)} runs; elapsed / {server:.0f} ms: median "
              f"{statistics.median(ratios):.3f} (max {max(ratios):.3f}), median "
              f"{statistics.median(excess):+.0f} ms; stats polls per pass: mean "
              f"{statistics.mean(ppps):.2f}, median {statistics.median(ppps):.2f}, "
              f"max {max(ppps):.2f}")


if __name__ == "__main__":
    main(sys.argv)
