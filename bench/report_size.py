"""How big and how slow the HTML report of a large cluster is.

    python bench/report_size.py [NODES]

Builds a results document for NODES (default 64) simulated-figure nodes behind a switch and in a
ring, with a bad cable and a 10-minute soak sampled every minute (the hand-built documents of
tests/report/sample.py), renders the whole page, and prints its size against the goal of 5 MB
and the real time it took on this machine.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_sparkfabric.report import page  # noqa: E402
from pytest_sparkfabric.results import Results  # noqa: E402
from tests.report.sample import Faults, document  # noqa: E402

GOAL_BYTES = 5_000_000


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 64
    ok = True
    for topology in ("switch", "ring"):
        doc = document(topology, n, Faults(bad_cable=n // 2, hot=1))
        start = time.perf_counter()
        html = page(Results.model_validate(doc))
        seconds = time.perf_counter() - start
        size = len(html.encode())
        ok &= size <= GOAL_BYTES
        print(
            f"{topology} {n} nodes: {size / 1e6:.2f} MB (goal <= 5 MB): ratio "
            f"{size / GOAL_BYTES:.2f}; rendered in {seconds:.1f} s real time, "
            f"{len(doc.measurements)} measurements"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
