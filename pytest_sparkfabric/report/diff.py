"""Two results documents compared (pure): new failures, fixes, figures beyond a tolerance, cables
moved or changed (never a regression by themselves: a replaced cable is often the fix); and
`--sparkfabric-baseline`, which fails a passing bandwidth item that fell beyond the tolerance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.report.build import placed
from pytest_sparkfabric.report.style import esc, number
from pytest_sparkfabric.results import Item, Measurement, Results, ResultsError, read

BW_TOLERANCE_PCT = 10.0
BER_FACTOR = 10.0
BER_FLOOR = 1e-8
"""A BER at or below this is clean: healthy copper logs up to a few thousand corrected bits/s
(about 1e-8 at 200 Gb/s); a regression needs factor x this, still far below the soak's limit."""
BW_UNITS = frozenset({"Gb/s", "GB/s"})

Judge = Callable[[float, float], "bool | None"]  # (old, new): None same, True worse, False better


@dataclass(frozen=True, slots=True)
class ItemChange:
    id: str
    before: str | None  # the outcome in the old run (None: the item did not exist)
    after: str | None
    measured_before: Any = None
    measured_after: Any = None
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class FigureChange:
    kind: str
    subject: str
    before: float
    after: float
    unit: str
    regression: bool


@dataclass(frozen=True, slots=True)
class CableChange:
    change: Literal["moved", "changed", "unread"]
    serial: str | None
    before: str | None  # where the cable (or the position's old serial) was
    after: str | None
    other_serial: str | None = None  # for `changed`: the serial now at the position


Changes = tuple[ItemChange, ...]


@dataclass(frozen=True)
class Diff:
    new_failures: tuple[ItemChange, ...] = ()
    newly_not_measured: tuple[ItemChange, ...] = ()
    fixed: tuple[ItemChange, ...] = ()
    gone: tuple[ItemChange, ...] = ()
    bandwidth: tuple[FigureChange, ...] = ()
    ber: tuple[FigureChange, ...] = ()
    cables: tuple[CableChange, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def regression(self) -> bool:
        return self.regressions > 0

    @property
    def regressions(self) -> int:
        figures = sum(f.regression for f in (*self.bandwidth, *self.ber))
        return len(self.new_failures) + len(self.newly_not_measured) + figures


def _items(old: Results, new: Results) -> tuple[Changes, Changes, Changes, Changes]:
    """New failures, newly not measured (but not after a failure), fixed, and gone items."""
    before = {i.id: i for i in old.items}
    out: dict[str, list[ItemChange]] = {"failed": [], "not_measured": [], "fixed": []}
    for now in {i.id: i for i in new.items}.values():
        was = before.pop(now.id, None)
        then = was.outcome if was else None
        measured = was.measured if was else None
        change = ItemChange(now.id, then, now.outcome, measured, now.measured, now.unit)
        worse = now.outcome in ("failed", "not_measured") and then != now.outcome
        if worse and not (now.outcome == "not_measured" and then == "failed"):
            out[now.outcome].append(change)
        elif then in ("failed", "not_measured") and now.outcome == "passed":
            out["fixed"].append(change)
    gone = [ItemChange(i.id, i.outcome, None, i.measured) for i in before.values()]
    return tuple(out["failed"]), tuple(out["not_measured"]), tuple(out["fixed"]), tuple(gone)


def _figures(old: Results, new: Results, bw: bool, judge: Judge) -> tuple[FigureChange, ...]:
    """Figures that changed, each at its worst in its run (lowest bandwidth, highest BER)."""
    worst: list[dict[Any, Measurement]] = [{}, {}]
    for doc, out in zip((old, new), worst, strict=True):
        for m in doc.measurements:
            if m.t_s is None and (m.unit in BW_UNITS if bw else "ber" in m.kind.split("_")):
                k = (m.kind, m.objects, m.node, m.peer, m.rail, m.lane, m.size_bytes, m.op)
                seen = out.get(k)
                if seen is None or (m.value < seen.value if bw else m.value > seen.value):
                    out[k] = m
    changes = []
    for k, m in worst[1].items():
        if k in worst[0] and (verdict := judge(worst[0][k].value, m.value)) is not None:
            where = ", ".join(m.objects) or str(m.node or "")  # the ids of objects
            if m.size_bytes is not None:
                where += f" {m.op or ''} {m.size_bytes} B".rstrip()
            changes.append(FigureChange(m.kind, where, worst[0][k].value, m.value, m.unit, verdict))
    return tuple(sorted(changes, key=lambda f: (not f.regression, f.kind, f.subject)))


def _cables(old: Results, new: Results) -> list[CableChange]:
    """Moves (a serial runs elsewhere, as found), and places whose cable changed or is unread."""
    was = {s: where for s, where in map(placed, old.cables) if s}
    now = {s: where for s, where in map(placed, new.cables) if s}
    out = [CableChange("moved", s, w, now[s]) for s, w in was.items() if now.get(s, w) != w]
    serial_at = {c.id: placed(c)[0] for c in new.cables}
    for c in old.cables:
        serial = placed(c)[0]
        if not serial or c.id not in serial_at:
            continue
        if serial_at[c.id] is None:
            out.append(CableChange("unread", serial, c.id, c.id))
        elif serial not in now:
            out.append(CableChange("changed", serial, c.id, c.id, serial_at[c.id]))
    return out


def compare(
    before: Results,
    after: Results,
    *,
    bw_tolerance_pct: float = BW_TOLERANCE_PCT,
    ber_factor: float = BER_FACTOR,
    ber_floor: float = BER_FLOOR,
) -> Diff:
    def bandwidth(v_old: float, v_new: float) -> bool | None:
        pct = (v_new - v_old) / v_old * 100 if v_old > 0 else 0.0
        return pct < 0 if abs(pct) > bw_tolerance_pct else None

    def ber(v_old: float, v_new: float) -> bool | None:
        if v_new > max(v_old, ber_floor) * ber_factor:
            return True
        return False if v_old > max(v_new, ber_floor) * ber_factor else None

    a, b = before.cluster.name, after.cluster.name
    return Diff(
        *_items(before, after),
        _figures(before, after, True, bandwidth),
        _figures(before, after, False, ber),
        tuple(_cables(before, after)),
        (f"the runs are of different clusters: {a} and {b}",) if a != b else (),
    )


def sections(d: Diff) -> list[tuple[str, list[str]]]:
    """(heading, lines) in reading order, empty groups left out."""
    cables = {
        "moved": "cable {c.serial} moved from {c.before} to {c.after}",
        "changed": "cable at {c.before}: serial {c.serial} -> {c.other_serial}",
        "unread": "cable at {c.before}: serial {c.serial} no longer read",
    }

    def was(c: ItemChange) -> str:
        return "new item" if c.before is None else f"was {c.before.replace('_', ' ')}"

    def figure(f: FigureChange) -> str:
        pct, unit = (f.after - f.before) / (f.before or 1) * 100, f" {f.unit}" if f.unit else ""
        rel = f" ({pct:+.0f}%)" if f.before and f.unit in BW_UNITS else ""
        return f"{f.kind} {f.subject}: {number(f.before)} -> {number(f.after)}{unit}{rel}"

    groups = [
        ("new failures", [f"{c.id} ({was(c)})" for c in d.new_failures]),
        ("newly not measured", [f"{c.id} ({was(c)})" for c in d.newly_not_measured]),
        ("bandwidth beyond the tolerance", [figure(f) for f in d.bandwidth]),
        ("BER beyond the factor", [figure(f) for f in d.ber]),
        ("fixed", [f"{c.id} (was {str(c.before).replace('_', ' ')})" for c in d.fixed]),
        ("cables", [cables[c.change].format(c=c) for c in d.cables]),
        ("items no longer run", [c.id for c in d.gone]),
        ("notes", list(d.notes)),
    ]
    return [(h, lines) for h, lines in groups if lines]


def headline(d: Diff) -> str:
    n = d.regressions
    return f"REGRESSED: {n} regression{'s' if n != 1 else ''}" if n else "no regression"


def text(d: Diff, old_name: str = "OLD", new_name: str = "NEW") -> str:
    lines = [f"sparkfabric report diff {old_name} -> {new_name}: {headline(d)}"]
    for heading, rows in sections(d):
        lines += [f"{heading} ({len(rows)}):", *(f"  {r}" for r in rows)]
    return "\n".join(lines) + "\n"


def html(d: Diff, baseline: str) -> str:
    parts = [
        f'<section class="sf-baseline" data-regression="{str(d.regression).lower()}">'
        f"<p><b>Against {esc(baseline)}:</b> {esc(headline(d))}</p>"
    ]
    for heading, rows in sections(d):
        items = "".join(f"<li>{esc(r)}</li>" for r in rows)
        head = f"<summary>{esc(heading)} ({len(rows)})</summary>"
        parts.append(f"<details>{head}<ul>{items}</ul></details>")
    return "".join(parts) + "</section>"


@dataclass(frozen=True)
class Baseline:
    name: str  # the file as given
    doc: Results

    @classmethod
    def load(cls, path: str) -> Baseline:
        """The baseline document, or a usage error naming the file and what is wrong."""
        try:
            return cls(path, read(path))
        except ResultsError as err:
            raise pytest.UsageError(f"--sparkfabric-baseline {err}") from None

    def regression(self, item: Item) -> tuple[str, Finding] | None:
        """Why a passing item regressed against the baseline (message, finding), or None."""
        now = item.measured
        for was in self.doc.items:
            if was.id == item.id and was.outcome in ("passed", "warned"):
                break
        else:
            return None
        old = was.measured
        if not isinstance(old, float) or was.unit not in BW_UNITS or not isinstance(now, float):
            return None
        drop_pct = (old - now) / old * 100 if old > 0 and item.unit == was.unit else 0.0
        if drop_pct <= BW_TOLERANCE_PCT:
            return None
        rule = RULES["baseline_regression"]
        text = (
            f"regressed against the baseline {self.name}: {now:.1f} {item.unit}, was "
            f"{old:.1f} {item.unit} ({drop_pct:.0f}% lower; tolerance {BW_TOLERANCE_PCT:g}%)"
        )
        return f"{text}\nFix: {rule.fix}", Finding(rule, text, (), "")
