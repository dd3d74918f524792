"""`sparkfabric preflight CLUSTER.yaml`: the suite's preflight alone, on every node: what each lacks
and the commands that fix it. Installs nothing. Exit 0 nothing missing, 10 something missing or
a node not checked (INCOMPLETE), 4 cluster.yaml has problems."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster import load_cluster

if TYPE_CHECKING:
    import pytest

    from pytest_sparkfabric.measure.preflight import Gap, Preflight

# Lazy: `sparkfabric --help` and the other commands load neither pytest nor the engine.
SUITE = "pytest_sparkfabric.acceptance"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "preflight",
        help="look on every node for what the suite runs; print what is missing and its fix",
        description="Run only the suite's preflight: one script per node looks for every tool "
        "the shipped checks run (and the sudo, library and socket they need), then prints per "
        "node what is missing and the command that installs or allows it. Installs nothing. "
        "Exit 0: nothing missing; 10: something missing or a node not checked; 4: cluster.yaml "
        "has problems.",
    )
    p.add_argument("cluster", metavar="CLUSTER.yaml")
    p.set_defaults(func=cmd_preflight)


def _marks(value: object) -> list[pytest.Mark]:
    import pytest

    items = value if isinstance(value, list) else [value]
    marks = [m.mark if isinstance(m, pytest.MarkDecorator) else m for m in items]
    return [m for m in marks if isinstance(m, pytest.Mark)]


def suite_needs() -> tuple[str, ...]:
    """What the shipped checks need: the `sparkfabric_needs` marks of every test in it."""
    from pytest_sparkfabric.measure.preflight import MARKER

    suite = importlib.import_module(SUITE)
    needs: list[str] = []
    for info in pkgutil.iter_modules(suite.__path__):
        if not info.name.startswith("test_"):
            continue
        module = importlib.import_module(f"{SUITE}.{info.name}")
        marks = _marks(getattr(module, "pytestmark", []))
        for name, obj in vars(module).items():
            if name.startswith("test_") and callable(obj):
                marks += _marks(getattr(obj, "pytestmark", []))
        needs += [str(a) for m in marks if m.name == MARKER for a in m.args]
    return tuple(dict.fromkeys(needs))


def render(checked: Preflight, down: dict[str, str]) -> list[str]:
    """Per node: nothing missing, not reachable, not checked, or each gap with its fix."""
    lines: list[str] = []
    for node, c in checked.nodes.items():
        if (why := down.get(node, c.found.error)) is not None:
            lines.append(f"{node}: not checked: {why}")
            continue
        if not c.gaps:
            lines.append(f"{node}: nothing missing (looked for {len(c.looked_for.tools)} commands)")
        by: dict[str | None, list[Gap]] = {}
        for g in c.gaps:
            by.setdefault(g.why.missing, []).append(g)
        lines += [f"{node}: {len(by)} missing"] if by else []
        for missing, gaps in by.items():
            note = " (advisory: its checks only warn)" if gaps[0].advisory else ""
            said = "; ".join(dict.fromkeys(g.why.reason for g in gaps))
            lines += [f"  {missing}{note}: {said}", f"    Fix: {gaps[0].why.fix}"]
    return lines


def _fixes(checked: Preflight) -> Iterable[str]:
    by: dict[tuple[str | None, str | None], list[str]] = {}
    for g in (g for c in checked.nodes.values() for g in c.gaps):
        by.setdefault((g.why.missing, g.why.fix), []).extend(g.why.nodes)
    for (missing, fix), nodes in by.items():
        yield f"  {missing} on {', '.join(dict.fromkeys(nodes))}: {fix}"


def cmd_preflight(args: argparse.Namespace) -> int:
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.measure.preflight import preflight
    from pytest_sparkfabric.session import EXIT_INCOMPLETE
    from pytest_sparkfabric.transport import make_transport

    cluster = load_cluster(args.cluster)
    try:
        transport = make_transport(cluster)
    except FileNotFoundError as err:
        print(f"sparkfabric preflight: {err}", file=sys.stderr)
        return 4
    needs = suite_needs()
    try:
        fabric = Fabric(cluster, transport)
        down = fabric.unreachable()
        checked = preflight(fabric, lambda: needs)
    finally:
        transport.close()
    print(f"sparkfabric preflight: {args.cluster}, {len(checked.nodes)} nodes")
    print("\n".join(render(checked, down)))
    unchecked = [n for n, c in checked.nodes.items() if n in down or c.found.error]
    if not checked.missing and not unchecked:
        print("Nothing missing: every node has what the suite runs.")
        return 0
    if fixes := list(_fixes(checked)):
        print("To fix (nothing was installed):\n" + "\n".join(fixes))
    return EXIT_INCOMPLETE
