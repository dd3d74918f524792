"""`sparkfabric parse TOOL FILE` and `sparkfabric explain FILE...` (no network). parse: exit 0
(the JSON of `probes.to_json`), 2 unreadable or not TOOL's output; explain: 0 nothing known, 1
findings, 2 a file unreadable or unrecognised."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_sparkfabric.probes import PARSERS, ParseError, to_json


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "parse",
        help="parse a saved tool output and print the result as JSON",
        description="Parse the saved output of one tool (as the suite would) and print the "
        "parsed result as JSON. Exit 2 when the text holds no output of that tool.",
    )
    p.add_argument("tool", choices=sorted(PARSERS), metavar="TOOL", help=", ".join(PARSERS))
    p.add_argument("file", metavar="FILE", help="the saved output ('-' for stdin)")
    p.set_defaults(func=cmd_parse)

    p = subparsers.add_parser(
        "explain",
        help="say what saved ib_write_bw / iperf3 -J / nccl-tests outputs show",
        description="Recognise each file's tool (ib_write_bw, iperf3 -J, nccl-tests with "
        "NCCL_DEBUG=INFO, RouterOS /system resource print), summarise it against the reference "
        "figures, and apply the suite's diagnosis rules to all of them together. Exit 0: no "
        "known fault signature; 1: findings; 2: a file could not be read or recognised.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="saved outputs ('-' for stdin)")
    p.set_defaults(func=cmd_explain)


def _read(name: str) -> str:
    # Bytes as they are: CRLF line ends and stray CRs are part of what a parser must handle.
    if name == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    return Path(name).read_bytes().decode("utf-8", errors="replace")


def cmd_parse(args: argparse.Namespace) -> int:
    tool, name = str(args.tool), str(args.file)
    try:
        text = _read(name)
    except OSError as exc:
        print(f"sparkfabric parse: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        result = PARSERS[tool](text)
    except ParseError as exc:
        print(f"sparkfabric parse: {name} is not {tool} output: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(to_json(result))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from pytest_sparkfabric.diagnosis.explain import explain

    files: list[tuple[str, str]] = []
    unreadable: list[str] = []
    for name in args.files:
        try:
            files.append((str(name), _read(str(name))))
        except OSError as exc:
            unreadable.append(f"{name}: cannot read: {exc.strerror or exc}")
    result = explain(files)
    for line in result.lines:
        print(line)
    errors = unreadable + result.errors
    for line in errors:
        print(f"sparkfabric explain: {line}", file=sys.stderr)
    if result.findings:
        from pytest_sparkfabric.diagnosis.causes import lines, of_findings

        print()
        for line in lines(of_findings(result.findings)):
            print(line)
    elif result.lines:
        print("\nNo known fault signature in these outputs (the known ones: docs/diagnosis.md).")
    if errors:
        return 2
    return 1 if result.findings else 0
