#!/usr/bin/env python3
"""bench/floor_bound.py: the best any poll schedule can do when every pass
duration is a new draw, uniform between 100 ms and 1 s (bench/floor.sh,
"varying, one duration per pass"), given at most 3 polls per pass on
average.  Standard library only; no server, no clock.

The schedule is an oracle's: it knows the distribution exactly, so it is
a lower bound for a checkpoint that has to learn it.  A pass ending at d
is seen over at the first poll at or after d; the schedules searched are
a first poll, then intervals shrinking geometrically up to 1 s (shrinking
intervals are optimal here: later polls are paid by fewer passes).  For
the best one the script prints the expected overshoot and polls per pass,
and the ratio to the server time that 3 such passes then reach with
round trips of RTT_MS each (the trigger and every poll), as a ratio of
sums and, by simulation, as the mean of per-run ratios over 10,000 runs
with the share of runs within 1.15 x the server time + 30 ms.

Usage: python3 bench/floor_bound.py [RTT_MS]   (default 2)
"""
import random
import sys

LO, HI, POLLS_MAX, PASSES = 100, 1000, 3.0, 3


def expectation(schedule):
    """Expected overshoot (ms) and polls per pass of a schedule."""
    overshoot = polls = 0.0
    prev = LO
    for i, t in enumerate(schedule):
        a, b = max(prev, LO), min(t, HI)
        if b > a:
            w = (b - a) / (HI - LO)
            overshoot += w * (t - (a + b) / 2)
            polls += w * (i + 1)
        prev = t
    return overshoot, polls


def schedules():
    """First poll, then n - 1 intervals shrinking by ratio, ending at HI."""
    for n in range(2, 12):
        for first in range(LO, HI, 5):
            for r in range(30, 101, 2):
                ratio = r / 100
                total = sum(ratio ** k for k in range(n - 1))
                step, t, out = (HI - first) / total, first, [first]
                for k in range(n - 1):
                    t += step * ratio ** k
                    out.append(t)
                out[-1] = HI
                yield out


def first_poll_at_or_after(schedule, d):
    for i, t in enumerate(schedule):
        if t >= d:
            return t, i + 1
    return schedule[-1], len(schedule)


def main():
    rtt = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    best = None
    for s in schedules():
        over, polls = expectation(s)
        if polls <= POLLS_MAX and (best is None or over < best[0]):
            best = (over, polls, s)
    over, polls, s = best
    mean_d = (LO + HI) / 2
    per_pass = over + rtt * (1 + polls)
    print(f"best schedule (ms after the trigger): {', '.join(f'{t:.0f}' for t in s)}")
    print(f"expected overshoot {over:.1f} ms, {polls:.2f} polls per pass")
    print(f"ratio of sums, {PASSES} passes, RTT {rtt:g} ms: "
          f"{(PASSES * (mean_d + per_pass)) / (PASSES * mean_d):.3f}")
    rnd = random.Random(1)
    ratios, met = [], 0
    for _ in range(10000):
        ds = [rnd.randint(LO, HI) for _ in range(PASSES)]
        took = 0.0
        for d in ds:
            t, n = first_poll_at_or_after(s, d)
            took += t + rtt * (1 + n)
        ratios.append(took / sum(ds))
        met += took <= 1.15 * sum(ds) + 30
    print(f"mean of per-run ratios over 10,000 runs: {sum(ratios) / len(ratios):.3f}; "
          f"runs within 1.15 x + 30 ms: {met / 100:.1f} %")


if __name__ == "__main__":
    main()
