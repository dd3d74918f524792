"""`sparkfabric report diff | html` and `sparkfabric cables`: read the results documents of
`--sparkfabric-json`. Exit 4 for an unreadable or invalid document; diff: 1 on a regression."""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

USAGE_ERROR = 4
# The comparison's defaults, as report.diff has them (a test keeps them equal). Importing
# report.diff here would load the report package, and with it pytest, for every command.
BW_TOLERANCE_PCT = 10.0
BER_FACTOR = 10.0
BER_FLOOR = 1e-8


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
        dest="bw_tolerance_pct",
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

    c = subparsers.add_parser(
        "cables",
        help="every run of each cable (by serial) across results documents",
        description="Read results documents (files, or folders of *.json) and print one table: "
        "per cable serial, every run it was in: the date, the cluster, where the cable ran (as "
        "LLDP found it), its worst lane BER, the lowest RDMA figure over it and its verdict.",
    )
    c.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    c.set_defaults(func=cmd_cables)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} must be above 0")
    return value


def _fail(command: str, message: object) -> int:
    print(f"sparkfabric {command}: {message}", file=sys.stderr)
    return USAGE_ERROR


def cmd_diff(args: argparse.Namespace) -> int:
    from pytest_sparkfabric.report import diff
    from pytest_sparkfabric.results import ResultsError, read

    try:
        old, new = read(args.old), read(args.new)
    except ResultsError as err:
        return _fail("report diff", err)
    limits = ("bw_tolerance_pct", "ber_factor", "ber_floor")
    result = diff.compare(old, new, **{k: getattr(args, k) for k in limits})
    if args.json:
        out = asdict(result) | {"regression": result.regression}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        sys.stdout.write(diff.text(result, args.old, args.new))
    return 1 if result.regression else 0


def cmd_html(args: argparse.Namespace) -> int:
    from pytest_sparkfabric.report import diff, page
    from pytest_sparkfabric.results import ResultsError, read

    try:
        doc = read(args.results)
        base = diff.Baseline(args.baseline, read(args.baseline)) if args.baseline else None
    except ResultsError as err:
        return _fail("report html", err)
    text = page(doc, baseline=base)
    if not args.output:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        return _fail("report html", f"cannot write {args.output}: {exc.strerror or exc}")
    print(f"wrote {args.output}")
    return 0


def cmd_cables(args: argparse.Namespace) -> int:
    from pytest_sparkfabric.report import build as history
    from pytest_sparkfabric.results import ResultsError, read

    docs = []
    for given in map(Path, args.paths):
        folder = given.is_dir()
        for path in sorted(given.glob("*.json")) if folder else [given]:
            try:
                docs.append((str(path), read(path)))
            except ResultsError as err:  # a file named must be read, one in a folder may not
                if not folder:
                    return _fail("cables", err)
                print(f"sparkfabric cables: skipped {err}", file=sys.stderr)
    if not docs:
        how = "write them with pytest --sparkfabric-json PATH"
        return _fail("cables", f"no results documents in {', '.join(args.paths)} ({how})")
    sys.stdout.write(history.history(docs))
    return 0


# -- the document's schema and field reference ---------------------------------------------------


def results_schema_json() -> str:
    """The JSON Schema of the results document, generated from its model."""
    from pytest_sparkfabric import results

    schema = results.Results.model_json_schema()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:sparkfabric:results:{results.VERSION}",
        **schema,
    }
    return json.dumps(schema, indent=2) + "\n"


def _type_text(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    text = re.sub(r"Annotated\[(\w+), FieldInfo\(.*?\)\]\)\]", r"\1", str(annotation))
    return (
        text.replace("typing.", "")
        .replace("pytest_sparkfabric.results.", "")
        .replace("NoneType", "None")
        .replace("datetime.datetime", "datetime")
    )


def results_reference() -> str:
    """docs/results-json.md: every model of the document, a table of its fields."""
    from pydantic import BaseModel

    from pytest_sparkfabric import results

    models: list[type[BaseModel]] = [
        results.Results,
        results.ClusterInfo,
        results.NodeInfo,
        results.Item,
        results.WarningNote,
        results.Cause,
        results.Measurement,
        results.Cable,
        results.CableEnd,
        results.Phase,
        results.PreflightNode,
        results.PreflightGap,
        results.Threshold,
    ]
    doc = (results.__doc__ or "").strip().splitlines()
    out = [
        "<!-- Generated by `sparkfabric schema --results --format markdown` from "
        "pytest_sparkfabric/results.py; edit it there. -->",
        "# The JSON results document",
        "",
        *doc,
        "",
        f"`sparkfabric schema --results` prints its JSON Schema (version {results.VERSION}).",
    ]
    for model in models:
        out += ["", f"## {model.__name__}", ""]
        if model.__doc__:
            out += [" ".join(model.__doc__.split()), ""]
        out += ["| field | type | required | meaning |", "|---|---|---|---|"]
        for name, field in model.model_fields.items():
            meaning = " ".join((field.description or "").split())
            required = "yes" if field.is_required() else ""
            out.append(f"| `{name}` | `{_type_text(field.annotation)}` | {required} | {meaning} |")
    return "\n".join(out) + "\n"
