"""`sparkfabric report diff | html`: read results documents written by `--sparkfabric-json`.

- diff OLD NEW: what changed; exit 0 no regression, 1 a regression, 4 an unreadable or invalid
  document (a usage error, as everywhere in sparkfabric).
- html RESULTS: the report page (verdict, fabric picture, charts, cables) of one document;
  exit 0 written, 4 an unreadable or invalid document.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pytest_sparkfabric.report.diff import Diff

USAGE_ERROR = 4
# The comparison's defaults, as report.diff has them (a test keeps them equal). Importing
# report.diff here would load the report package, and with it pytest, for every command.
BW_TOLERANCE_PCT = 10.0
BER_FACTOR = 10.0
BER_FLOOR = 1e-8


class BadDocument(Exception):
    """A results document that cannot be read or breaks the schema (the message says where)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `report` (with `diff` and `html`) to the `sparkfabric` command."""
    p = subparsers.add_parser(
        "report",
        help="compare two results documents, or render one as an HTML page",
        description="Work with the JSON results documents that pytest --sparkfabric-json "
        "writes (their schema: sparkfabric schema --results).",
    )
    sub = p.add_subparsers(dest="report_command", metavar="ACTION", required=True)
    d = sub.add_parser(
        "diff",
        help="what changed between two runs; exit 1 on a regression",
        description="Print new failures, items now not measured, bandwidth and BER changes "
        "beyond the tolerance, fixed items and cables (known by serial) that moved or changed. "
        "Exit 0: no regression; 1: a regression; 4: a document cannot be read or is invalid.",
    )
    d.add_argument("old", metavar="OLD_JSON", help="the earlier (accepted) run")
    d.add_argument("new", metavar="NEW_JSON", help="the run to compare with it")
    d.add_argument(
        "--bw-tolerance",
        type=_positive,
        default=BW_TOLERANCE_PCT,
        metavar="PCT",
        help=f"a bandwidth drop beyond this many percent is a regression "
        f"(default {BW_TOLERANCE_PCT:g})",
    )
    d.add_argument(
        "--ber-factor",
        type=_positive,
        default=BER_FACTOR,
        metavar="X",
        help=f"a BER that grows more than X-fold above the floor is a regression "
        f"(default {BER_FACTOR:g})",
    )
    d.add_argument(
        "--ber-floor",
        type=_positive,
        default=BER_FLOOR,
        metavar="BER",
        help=f"a BER at or below this counts as clean (default {BER_FLOOR:g}: the "
        "trickle healthy copper logs)",
    )
    d.add_argument("--json", action="store_true", help="print the comparison as JSON")
    d.set_defaults(func=cmd_diff)

    h = sub.add_parser(
        "html",
        help="render a results document as a self-contained HTML page",
        description="Write the report page of one run: verdict and root causes, the fabric as "
        "cabled, the charts and the cable inventory. One file, no scripts, works offline.",
    )
    h.add_argument("results", metavar="RESULTS_JSON")
    h.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    h.add_argument("--baseline", metavar="OLD_JSON", help="also show what changed since OLD")
    h.set_defaults(func=cmd_html)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} must be above 0")
    return value


def load(path: str) -> dict[str, Any]:
    """A valid results document, or BadDocument naming the file and what is wrong."""
    from pytest_sparkfabric.report.schema import problems

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadDocument(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadDocument(f"{path}: not a text file (expected JSON)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadDocument(
            f"{path}:{exc.lineno}: not JSON: {exc.msg}. Fix: give a file written by "
            "pytest --sparkfabric-json PATH"
        ) from None
    found = problems(doc)
    if found:
        shown = "\n".join(f"  {p}" for p in found[:10])
        more = f"\n  ... and {len(found) - 10} more" if len(found) > 10 else ""
        raise BadDocument(
            f"{path}: not a sparkfabric results document ({len(found)} problem"
            f"{'s' if len(found) != 1 else ''}):\n{shown}{more}\n"
            "Fix: give a file written by pytest --sparkfabric-json PATH "
            "(the schema: sparkfabric schema --results)"
        )
    return cast(dict[str, Any], doc)


def cmd_diff(args: argparse.Namespace) -> int:
    from pytest_sparkfabric.report import diff

    try:
        old, new = load(args.old), load(args.new)
    except BadDocument as err:
        print(f"sparkfabric report diff: {err}", file=sys.stderr)
        return USAGE_ERROR
    result = diff.compare(
        old,
        new,
        bw_tolerance_pct=args.bw_tolerance,
        ber_factor=args.ber_factor,
        ber_floor=args.ber_floor,
    )
    if args.json:
        sys.stdout.write(json.dumps(_jsonable(result), indent=2) + "\n")
    else:
        sys.stdout.write(diff.text(result, args.old, args.new))
    return 1 if result.regression else 0


def _jsonable(d: Diff) -> dict[str, Any]:
    from dataclasses import asdict

    out = asdict(d)
    out["regression"] = d.regression
    return out


def cmd_html(args: argparse.Namespace) -> int:
    from pytest_sparkfabric.report import diff
    from pytest_sparkfabric.report.build import build
    from pytest_sparkfabric.report.page import page

    try:
        doc = load(args.results)
        base = load(args.baseline) if args.baseline else None
    except BadDocument as err:
        print(f"sparkfabric report html: {err}", file=sys.stderr)
        return USAGE_ERROR
    baseline = (args.baseline, diff.compare(base, doc)) if base is not None else None
    text = page(build(doc), baseline=baseline)
    if not args.output:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(
            f"sparkfabric report html: cannot write {args.output}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return USAGE_ERROR
    print(f"wrote {args.output}")
    return 0
