#!/usr/bin/env python3
"""bench/due_plan.py: the emulator side and the figures of bench/due.sh's
scenario "plan" (stdlib only; see the head of bench/due.sh).

  setup URL SCEN N HOT TURNING RUNS SEED PERMITS
      draw the scenario (seeded) into the file SCEN, reset the emulator
      with the writers' clock manual, and create its tables: q1..qQ
      quiet, h1..hH hot (each its own rate), w1..wT turning (quiet until
      their run); every table 1 bucket, no L0
  renew URL SCEN      the hot and turning tables again as new (before a mode)
  turn URL SCEN RUN   the turning tables whose run is RUN start writing
  tally URL OUT MODE RUN
      after a run: the emulator's counts per table into OUT/MODE.runs
      (one JSON line per run) and the quiet tables' reads so far into
      OUT/MODE.quiet.json; then the log is reset
  report OUT SCEN LIMIT BOUND_MIN OFF_FULL
      the figures of both modes (LIMIT: max_l0_generations; BOUND_MIN:
      the max_read_interval in minutes; OFF_FULL: the runs "off" ran with
      every table declared)

Runs' rows (OUT/MODE.rRUN.sSLICE.out, written by bench/due.sh): "act|TABLE|
ACTION|REASON" per table acted on, "sum|ROWS|NOT OK|NOT READ|START|END".
"""
import collections
import json
import math
import os
import random
import re
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from util import control, control_many  # noqa: E402

GEN_ROWS = 1000     # the emulator's --seal-rows: rows per L0 generation


def get(url, path):
    with urllib.request.urlopen(f"{url}/_emulator/{path}", timeout=120) as r:
        return json.load(r)


def draw(n, hot, turning, runs, seed):
    """Rates in rows/s: hot ones log-uniform over 0.25 to 4 L0 generations
    a minute; turning ones over 1 to 4 a minute (each crosses a threshold
    of 8 within 9 minutes of its turn), turning at a run drawn uniformly
    from 1 to max(1, runs - 10)."""
    rnd = random.Random(seed)
    per_min = lambda lo, hi: math.exp(rnd.uniform(math.log(lo), math.log(hi)))
    return {
        "n": n, "seed": seed, "runs": runs,
        "quiet": n - hot - turning,
        "hot": {f"h{i}": round(per_min(0.25, 4) * GEN_ROWS / 60, 2)
                for i in range(1, hot + 1)},
        "turning": {f"w{i}": [rnd.randint(1, max(1, runs - 10)),
                              round(per_min(1, 4) * GEN_ROWS / 60, 2)]
                    for i in range(1, turning + 1)},
    }


def create(url, names_rates):
    control_many(url, [[("tables", {"name": t, "buckets": 1, "rows_per_second": r})]
                       for t, r in names_rates])


def setup(url, scen_file, n, hot, turning, runs, seed, permits):
    scen = draw(n, hot, turning, runs, seed)
    with open(scen_file, "w") as f:
        json.dump(scen, f)
    control(url, "reset")
    control(url, "writers", {"clock": "manual"})
    control(url, "pool", {"size": permits})
    # a compaction pass merges every L0 generation of its bucket
    control(url, "config", {"pass_ms": 100, "prefix_max": 1000})
    create(url, [(f"q{i}", 0) for i in range(1, scen["quiet"] + 1)])
    renew(url, scen_file)


def renew(url, scen_file):
    scen = json.load(open(scen_file))
    create(url, list(scen["hot"].items()) + [(t, 0) for t in scen["turning"]])
    control(url, "log/reset")


def turn(url, scen_file, run):
    scen = json.load(open(scen_file))
    control_many(url, [[(f"tables/{t}/writer", {"rows_per_second": r})]
                       for t, (k, r) in scen["turning"].items() if k == run])


def tally(url, out, mode, run):
    counts = get(url, "counts/tables")["tables"]
    control(url, "log/reset")
    qfile = f"{out}/{mode}.quiet.json"
    quiet = json.load(open(qfile)) if os.path.exists(qfile) else {}
    routes = collections.Counter()
    qreads = 0
    for t, c in counts.items():
        routes.update(c)
        if t.startswith("q") and c.get("get_lsm_stats"):
            quiet[t] = quiet.get(t, 0) + c["get_lsm_stats"]
            qreads += c["get_lsm_stats"]
    with open(qfile, "w") as f:
        json.dump(quiet, f)
    with open(f"{out}/{mode}.runs", "a") as f:
        f.write(json.dumps({"run": run, "requests": sum(routes.values()),
                            "routes": dict(routes), "quiet_reads": qreads}) + "\n")


def rows(out, mode, run):
    """The acted rows {table: (action, L0 seen)} and the sums of a run's
    slices (rows, not ok, not read, first start, last end)."""
    acted, sums = {}, [0, 0, 0, math.inf, 0.0]
    for name in sorted(os.listdir(out)):
        if not name.startswith(f"{mode}.r{run}.s") or not name.endswith(".out"):
            continue
        for line in open(f"{out}/{name}"):
            f = line.rstrip("\n").split("|")
            if f[0] == "act":
                m = re.search(r"l0_generations (\d+) >", f[3])
                acted[f[1]] = (f[2], int(m.group(1)) if m else None)
            elif f[0] == "sum":
                for i in range(3):
                    sums[i] += int(f[1 + i])
                sums[3] = min(sums[3], float(f[4]))
                sums[4] = max(sums[4], float(f[5]))
    return acted, sums


def load(out, mode, runs):
    per_run = {}
    for line in open(f"{out}/{mode}.runs"):
        r = json.loads(line)
        per_run[r["run"]] = r
    acts = collections.defaultdict(dict)     # table -> {run: L0 seen}
    sums = {}
    for k in range(1, runs + 1):
        acted, s = rows(out, mode, k)
        sums[k] = s
        for t, (_, l0) in acted.items():
            acts[t][k] = l0
    return per_run, acts, sums


def lateness(off_runs, on_runs):
    """Per run where "off" acted: runs until "on" acted at or after it
    (None: not within the runs)."""
    return [next((s - r for s in sorted(on_runs) if s >= r), None)
            for r in sorted(off_runs)]


def report(out, scen_file, limit, bound_min, off_full):
    scen = json.load(open(scen_file))
    runs = scen["runs"]
    off_runs, off_acts, off_sums = load(out, "off", runs)
    on_runs, on_acts, on_sums = load(out, "on", runs)
    p = print
    # requests and quiet reads
    off_full_req = [off_runs[k]["requests"] for k in range(1, off_full + 1)]
    on_req = [on_runs[k]["requests"] for k in range(1, runs + 1)]
    off_mean, on_mean = sum(off_full_req) / len(off_full_req), sum(on_req) / len(on_req)
    quiet_on = json.load(open(f"{out}/on.quiet.json"))
    quiet_off = json.load(open(f"{out}/off.quiet.json"))
    q = scen["quiet"]
    qon = [quiet_on.get(f"q{i}", 0) for i in range(1, q + 1)]
    qoff = [quiet_off.get(f"q{i}", 0) for i in range(1, q + 1)]
    p(f"requests per run: off {off_mean:.0f} (mean of its {off_full} runs with every table declared, "
      f"min {min(off_full_req)} max {max(off_full_req)}); on {on_mean:.0f} (mean of {runs}, min {min(on_req)} "
      f"max {max(on_req)}): {off_mean / on_mean:.1f} x fewer (goal >= 5)")
    p(f"  on, requests per run: {' '.join(str(x) for x in on_req)}")
    p(f"stats reads per quiet table per run: off {sum(qoff) / q / off_full:.3f} (min {min(qoff)} max {max(qoff)} "
      f"in {off_full} runs); on {sum(qon) / q / runs:.3f} (min {min(qon)} max {max(qon)} in {runs} runs; "
      f"{(sum(qon) - on_runs[1]['quiet_reads']) / q / max(1, runs - 1):.3f} over runs 2..{runs}) (goal <= 0.1)")
    p(f"  on, quiet tables read per run: {' '.join(str(on_runs[k]['quiet_reads']) for k in range(1, runs + 1))}")
    hist = [open(f"{out}/on.r{k}.hist").read().split() for k in range(1, runs + 1)
            if os.path.exists(f"{out}/on.r{k}.hist")]
    if len(hist) == runs and all(len(h) == 2 for h in hist):
        sent = sum(int(h[0]) for h in hist)
        reads = sum(on_runs[k]["routes"].get("get_lsm_stats", 0) for k in range(1, runs + 1))
        p(f"  on, lancelsm_run_history: reads sent {sent} (the emulator's log: {reads} stats requests), "
          f"skipped {sum(int(h[1]) for h in hist)}")
    notok = sum(s[1] for s in off_sums.values()) + sum(s[1] for s in on_sums.values())
    p(f"rows not ok: {notok}; on, rows not read (reason 'not read: ...') per run: "
      f"{' '.join(str(on_sums[k][2]) for k in range(1, runs + 1))}")
    durs = [on_sums[k][4] - on_sums[k][3] for k in range(1, runs + 1)]
    offd = [off_sums[k][4] - off_sums[k][3] for k in range(1, off_full + 1)]
    late_start = max(s[3] - float(open(f"{out}/{m}.r{k}.start").read())
                     for m, ss in (("off", off_sums), ("on", on_sums)) for k, s in ss.items())
    p(f"run time (all slices, first start to last end): off {min(offd):.1f}-{max(offd):.1f} s; "
      f"on {min(durs):.1f}-{max(durs):.1f} s (median {sorted(durs)[len(durs) // 2]:.1f}); "
      f"latest start after its schedule {late_start:.2f} s")
    for line in open(f"{out}/one.runs") if os.path.exists(f"{out}/one.runs") else ():
        one = json.loads(line)
        acted, s = rows(out, "one", one["run"])
        p(f"run {one['run']} on, in one backend without slices: {s[4] - s[3]:.1f} s (goal: within "
          f"the minute), {one['requests']} requests, {one['quiet_reads']} quiet tables read, {len(acted)} acted on, "
          f"{s[0]} rows ({s[2]} not read), not ok {s[1]}")
    # hot tables
    late, ratios, unmatched, censored = collections.Counter(), [], [], []
    hot_rate = scen["hot"]
    for t in scen["hot"]:
        for r, d in zip(sorted(off_acts[t]), lateness(off_acts[t], on_acts[t])):
            if d is None:
                censored.append(runs + 1 - r)
            else:
                late[d] += 1
        lo = max((v or 0) for v in off_acts[t].values()) if off_acts[t] else 0
        ln = max((v or 0) for v in on_acts[t].values()) if on_acts[t] else 0
        if lo and ln:
            ratios.append((ln / lo, t, ln, lo))
        elif lo:
            unmatched.append(t)
    ratios.sort(reverse=True)
    over = [r for r in ratios if r[0] > 1.1]
    p(f"hot tables ({len(scen['hot'])}, threshold max_l0_generations {limit}): actions off "
      f"{sum(len(v) for t, v in off_acts.items() if t in scen['hot'])}, on "
      f"{sum(len(v) for t, v in on_acts.items() if t in scen['hot'])}; each action of off matched by on "
      f"{', '.join(f'{k} run(s) later: {v}' for k, v in sorted(late.items()))}, not by the last run: "
      f"{len(censored)}{f' (so at least {min(censored)} to {max(censored)} runs later)' if censored else ''} (goal: <= 1)")
    p(f"  largest L0 at action, on / off per table acted on in both: max {ratios[0][0]:.2f} ({ratios[0][1]}: "
      f"{ratios[0][2]} / {ratios[0][3]}), {len(over)} of {len(ratios)} tables over 1.1 (goal: none); "
      f"distribution: {', '.join(f'{k:.2f}: {v}' for k, v in sorted(collections.Counter(round(r[0], 2) for r in ratios).items()))}; "
      f"acted on by off but not by on within the runs: {len(unmatched)} tables "
      f"({', '.join(f'{t} {hot_rate[t]} rows/s' for t in unmatched[:8])})")
    with open(f"{out}/plan_tables.txt", "w") as f:
        f.write("table rows/s actions-off actions-on largest-L0-off largest-L0-on on/off\n")
        for t in scen["hot"]:
            lo = max((v or 0) for v in off_acts[t].values()) if off_acts[t] else 0
            ln = max((v or 0) for v in on_acts[t].values()) if on_acts[t] else 0
            f.write(f"{t} {hot_rate[t]} {len(off_acts[t])} {len(on_acts[t])} {lo} {ln} "
                    f"{f'{ln / lo:.2f}' if lo and ln else '-'}\n")
    # turning tables
    lates, never = [], []
    for t, (k, rate) in scen["turning"].items():
        a = min((r for r in off_acts[t] if r >= k), default=None)
        b = min((r for r in on_acts[t] if r >= k), default=None)
        if a is None or b is None:
            never.append((t, k, a, b))
        else:
            lates.append((b - a, b - k, t, k, a, b, rate))
    lates.sort(reverse=True)
    turns = sorted(k for k, _ in scen["turning"].values())
    p(f"turning tables ({len(scen['turning'])}, seed {scen['seed']}, turning runs {turns[0]}-{turns[-1]}, "
      f"median {turns[len(turns) // 2]}): first action on minus off, in runs (minutes): "
      f"{', '.join(f'{d}: {c}' for d, c in sorted(collections.Counter(x[0] for x in lates).items()))}; "
      f"worst lateness {lates[0][0]} min ({lates[0][2]}, turned at run {lates[0][3]}, {lates[0][6]} rows/s: "
      f"off acted at run {lates[0][4]}, on at {lates[0][5]}) against max_read_interval {bound_min} min; "
      f"from the turn to on's action at most {max(x[1] for x in lates)} min; not acted on within the runs: "
      f"{len(never)} {never[:5]}")


def main(argv):
    cmd = argv[1]
    if cmd == "setup":
        setup(argv[2], argv[3], *map(int, argv[4:10]))
    elif cmd == "renew":
        renew(argv[2], argv[3])
    elif cmd == "turn":
        turn(argv[2], argv[3], int(argv[4]))
    elif cmd == "tally":
        tally(argv[2], argv[3], argv[4], int(argv[5]))
    elif cmd == "report":
        report(argv[2], argv[3], int(argv[4]), float(argv[5]), int(argv[6]))
    else:
        sys.exit(f"due_plan.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
