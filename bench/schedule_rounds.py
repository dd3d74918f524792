"""Rounds per bandwidth schedule and the phase time they imply, at 8 to 128 nodes (pure).

    python bench/schedule_rounds.py

For each schedule and N it prints the rounds, the fewest rounds any node-disjoint schedule of the
same tests could take (`Schedule.min_rounds`), the number of tests, the virtual phase time and
the ratio phase time / (rounds x one test), with one test = 1 unit. The virtual phase starts each
test when its round has begun and both its nodes are free (a node is in one test at a time, except
in `stress`, which overlaps on purpose), and a round ends with its last test: a ratio above 1.00
means a round that reuses a node. Goals (issue 16): `legs` <= 3 rounds of pairs at every N (its
bidirectional rounds; directed it is 4 or 5), ratio <= 1.05. The real phase on the simulator's
transport clock is bench/schedule_ratio.py; this is the schedule's own share of it.
"""

from __future__ import annotations

import sys

from pytest_sparkfabric.measure.schedule import Schedule, full, legs, over_cables, stress

SIZES = (8, 16, 32, 64, 128)
RATIO_GOAL = 1.05


def virtual_time(s: Schedule, one_test: float = 1.0) -> float:
    free: dict[str, float] = {}
    start = 0.0
    for tests in s.rounds:
        end = start
        for t in tests:
            begin = start
            if s.node_disjoint:
                begin = max(start, free.get(t.src, 0.0), free.get(t.dst, 0.0))
                free[t.src] = free[t.dst] = begin + one_test
            end = max(end, begin + one_test)
        start = end
    return start


def schedules(n: int) -> list[tuple[str, Schedule]]:
    nodes = [f"spark-{i}" for i in range(1, n + 1)]
    ring = [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]
    odd = nodes[:-1]
    return [
        ("switch legs directed", legs(nodes)),
        ("switch legs bidirectional", legs(nodes, "bidirectional")),
        (f"switch legs directed N={n - 1}", legs(odd)),
        (f"switch legs bidirectional N={n - 1}", legs(odd, "bidirectional")),
        ("switch full directed", full(nodes)),
        ("switch full bidirectional", full(nodes, "bidirectional")),
        ("switch stress", stress(nodes)),
        ("ring directed", over_cables(ring)),
        ("ring bidirectional", over_cables(ring, "bidirectional")),
        (f"ring directed N={n - 1}", over_cables([*ring[: n - 2], (odd[-1], odd[0])])),
    ]


def main() -> int:
    print(f"{'N':>4}  {'schedule':<34} {'rounds':>6} {'min':>5} {'tests':>6} {'time':>7} ratio")
    worst = 0.0
    legs_ok = True
    for n in SIZES:
        for name, s in schedules(n):
            t = virtual_time(s)
            ratio = t / len(s.rounds)
            worst = max(worst, ratio)
            if name.startswith("switch legs bidirectional"):
                legs_ok &= len(s.rounds) <= 3
            print(
                f"{n:>4}  {name:<34} {len(s.rounds):>6} {s.min_rounds:>5} "
                f"{len(s.transfers):>6} {t:>7.1f} {ratio:.3f}"
            )
        by_name = dict(schedules(n))
        saved = len(by_name["switch full directed"].rounds) / len(
            by_name["switch legs directed"].rounds
        )
        print(f"{n:>4}  full / legs rounds (directed): {saved:.1f}x")
    print(f"legs <= 3 rounds of pairs at each N above: {'yes' if legs_ok else 'NO'}")
    print(f"worst ratio {worst:.3f} (goal <= {RATIO_GOAL}): ratio {worst / RATIO_GOAL:.2f}")
    return 0 if legs_ok and worst <= RATIO_GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
