"""The `sparkfabric` command: init, check, schema, parse, explain, preflight, report, lab."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pytest_sparkfabric.cluster import ConfigError

_SUBCOMMAND_MODULES = (
    "pytest_sparkfabric.cli.config",
    "pytest_sparkfabric.cli.measure",
    "pytest_sparkfabric.cli.prerequisites",
    "pytest_sparkfabric.cli.report",
    "sparkfabric_lab.cli",
)


def version() -> str:
    """The installed distribution's version (what `pip install` recorded)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("pytest-sparkfabric")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparkfabric",
        description=(
            "Plan, check and debug the fabric of a DGX Spark cluster. The acceptance suite "
            "itself runs under pytest: pytest --cluster cluster.yaml"
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args))
    except ConfigError as err:  # cluster.yaml's problems: a usage error, as under pytest
        print(err)
        return 4
    except KeyboardInterrupt:
        print("sparkfabric: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
