"""Two results documents compared: what failed anew, what was fixed, which figures moved beyond
a tolerance, and which cables (known by serial) moved or changed (pure).

A regression is an item that passed (or did not exist) and now fails or is not measured, a
bandwidth figure that dropped by more than the tolerance, or a BER that rose by more than the
factor above the noise floor. Cables that moved or changed are reported, never a regression on
their own: a replaced cable is often the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_sparkfabric.report.style import esc, number
from pytest_sparkfabric.results import Results

BW_TOLERANCE_PCT = 10.0
BER_FACTOR = 10.0
BER_FLOOR = 1e-8
"""A BER at or below this counts as clean. Healthy copper logs a steady trickle of up to a few
thousand corrected bits/s (about 1e-8 at 200 Gb/s), so a rise within it is no regression; a
regression needs factor x this (1e-7 by default), still far below the soak's limit."""
BW_UNITS = frozenset({"Gb/s", "GB/s"})

Doc = Mapping[str, Any]
Change = Literal["moved", "changed", "unread"]


@dataclass(frozen=True, slots=True)
class ItemChange:
    id: str
    before: str | None
    """The outcome in the old run (None: the item did not exist)."""
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

    @property
    def change_pct(self) -> float | None:
        return (self.after - self.before) / self.before * 100 if self.before else None


@dataclass(frozen=True, slots=True)
class CableChange:
    change: Change
    serial: str | None
    before: str | None
    """Where the cable (or the position's old serial) was."""
    after: str | None
    other_serial: str | None = None
    """For `changed`: the serial now at the position."""


@dataclass(frozen=True)
class Diff:
    new_failures: tuple[ItemChange, ...] = ()
    newly_not_measured: tuple[ItemChange, ...] = ()
    fixed: tuple[ItemChange, ...] = ()
    gone: tuple[ItemChange, ...] = ()
    bandwidth: tuple[FigureChange, ...] = ()
    ber: tuple[FigureChange, ...] = ()
    cables: tuple[CableChange, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def regression(self) -> bool:
        return bool(
            self.new_failures
            or self.newly_not_measured
            or any(f.regression for f in (*self.bandwidth, *self.ber))
        )

    @property
    def regressions(self) -> int:
        figures = sum(f.regression for f in (*self.bandwidth, *self.ber))
        return len(self.new_failures) + len(self.newly_not_measured) + figures


def _outcomes(doc: Doc) -> dict[str, Doc]:
    return {i["id"]: i for i in doc["items"]}


def _items(old: Doc, new: Doc) -> dict[str, list[ItemChange]]:
    before, after = _outcomes(old), _outcomes(new)
    out: dict[str, list[ItemChange]] = {"failed": [], "not_measured": [], "fixed": [], "gone": []}
    for iid, now in after.items():
        was = before.get(iid)
        was_outcome = was["outcome"] if was else None
        change = ItemChange(
            iid,
            was_outcome,
            now["outcome"],
            was.get("measured") if was else None,
            now.get("measured"),
            now.get("unit"),
        )
        if now["outcome"] in ("failed", "not_measured") and was_outcome != now["outcome"]:
            if not (now["outcome"] == "not_measured" and was_outcome == "failed"):
                out[now["outcome"]].append(change)
        elif was_outcome in ("failed", "not_measured") and now["outcome"] == "passed":
            out["fixed"].append(change)
    for iid, was in before.items():
        if iid not in after:
            out["gone"].append(ItemChange(iid, was["outcome"], None, was.get("measured")))
    return out


Key = tuple[Any, ...]


def _key(m: Doc) -> Key:
    return (
        m["kind"],
        tuple(m["objects"]),
        m.get("node"),
        m.get("peer"),
        m.get("rail"),
        m.get("lane"),
        m.get("size_bytes"),
        m.get("op"),
    )


def _subject(m: Doc) -> str:
    if m.get("node") and m.get("peer"):
        where = f"{m['node']}->{m['peer']}"
        where += f" rail{m['rail']}" if m.get("rail") is not None else ""
    else:
        where = ", ".join(m["objects"]) or str(m.get("node") or "")
    if m.get("size_bytes") is not None:
        where += f" {m.get('op') or ''} {m['size_bytes']} B".rstrip()
    return where


def _figures(doc: Doc, pick: str) -> dict[Key, tuple[float, Doc]]:
    """Per figure, its worst value in the run (lowest bandwidth, highest BER); series (values
    with a time) are left out."""
    out: dict[Key, tuple[float, Doc]] = {}
    for m in doc["measurements"]:
        if m.get("t_s") is not None:
            continue
        is_bw = m["unit"] in BW_UNITS
        is_ber = "ber" in m["kind"].split("_")
        if (pick == "bw" and not is_bw) or (pick == "ber" and not is_ber):
            continue
        k = _key(m)
        seen = out.get(k)
        worse = min if pick == "bw" else max
        out[k] = (m["value"], m) if seen is None else (worse(seen[0], m["value"]), m)
    return out


def _change(m: Doc, before: float, after: float, regression: bool) -> FigureChange:
    return FigureChange(m["kind"], _subject(m), before, after, m["unit"], regression)


def _bandwidth(old: Doc, new: Doc, tolerance_pct: float) -> list[FigureChange]:
    before, after = _figures(old, "bw"), _figures(new, "bw")
    out = []
    for k, (v_new, m) in after.items():
        if k not in before:
            continue
        v_old = before[k][0]
        if v_old <= 0:
            continue
        pct = (v_new - v_old) / v_old * 100
        if abs(pct) > tolerance_pct:
            out.append(_change(m, v_old, v_new, pct < 0))
    return sorted(out, key=lambda f: (not f.regression, f.kind, f.subject))


def _ber(old: Doc, new: Doc, factor: float, floor: float) -> list[FigureChange]:
    before, after = _figures(old, "ber"), _figures(new, "ber")
    out = []
    for k, (v_new, m) in after.items():
        if k not in before:
            continue
        v_old = before[k][0]
        if v_new > max(v_old, floor) * factor:
            out.append(_change(m, v_old, v_new, True))
        elif v_old > max(v_new, floor) * factor:
            out.append(_change(m, v_old, v_new, False))
    return sorted(out, key=lambda f: (not f.regression, f.subject))


def _serials(doc: Doc) -> dict[str, str | None]:
    """Cable position -> serial (the first end that reads one)."""
    return {c["id"]: c["a"].get("serial") or c["b"].get("serial") for c in doc["cables"]}


def _cables(old: Doc, new: Doc) -> list[CableChange]:
    before, after = _serials(old), _serials(new)
    where_now = {s: pos for pos, s in after.items() if s}
    out = []
    for pos, serial in before.items():
        if not serial:
            continue
        now_at = where_now.get(serial)
        if now_at is not None and now_at != pos:
            out.append(CableChange("moved", serial, pos, now_at))
        if pos in after and after[pos] is None:
            out.append(CableChange("unread", serial, pos, pos))
        elif pos in after and after[pos] != serial:
            out.append(CableChange("changed", serial, pos, pos, after[pos]))
    return out


def compare(
    before: Results,
    after: Results,
    *,
    bw_tolerance_pct: float = BW_TOLERANCE_PCT,
    ber_factor: float = BER_FACTOR,
    ber_floor: float = BER_FLOOR,
) -> Diff:
    """How `after` differs from `before`."""
    old, new = before.model_dump(mode="json"), after.model_dump(mode="json")
    items = _items(old, new)
    notes = []
    if old["cluster"]["name"] != new["cluster"]["name"]:
        notes.append(
            f"the runs are of different clusters: {old['cluster']['name']} and "
            f"{new['cluster']['name']}"
        )
    return Diff(
        tuple(items["failed"]),
        tuple(items["not_measured"]),
        tuple(items["fixed"]),
        tuple(items["gone"]),
        tuple(_bandwidth(old, new, bw_tolerance_pct)),
        tuple(_ber(old, new, ber_factor, ber_floor)),
        tuple(_cables(old, new)),
        tuple(notes),
    )


# -- text and HTML ------------------------------------------------------------------------------


def _was(c: ItemChange) -> str:
    return "new item" if c.before is None else f"was {c.before.replace('_', ' ')}"


def _figure_line(f: FigureChange) -> str:
    pct = f.change_pct
    rel = f" ({pct:+.0f}%)" if pct is not None and f.unit in BW_UNITS else ""
    unit = f" {f.unit}" if f.unit else ""
    return f"{f.kind} {f.subject}: {number(f.before)} -> {number(f.after)}{unit}{rel}"


def _cable_line(c: CableChange) -> str:
    if c.change == "moved":
        return f"cable {c.serial} moved: {c.before} -> {c.after}"
    if c.change == "changed":
        return f"cable at {c.before}: serial {c.serial} -> {c.other_serial}"
    return f"cable at {c.before}: serial {c.serial} no longer read"


def sections(d: Diff) -> list[tuple[str, list[str]]]:
    """(heading, lines) in reading order, empty groups left out."""
    groups = [
        ("new failures", [f"{c.id} ({_was(c)})" for c in d.new_failures]),
        ("newly not measured", [f"{c.id} ({_was(c)})" for c in d.newly_not_measured]),
        ("bandwidth beyond the tolerance", [_figure_line(f) for f in d.bandwidth]),
        ("BER beyond the factor", [_figure_line(f) for f in d.ber]),
        ("fixed", [f"{c.id} (was {str(c.before).replace('_', ' ')})" for c in d.fixed]),
        ("cables", [_cable_line(c) for c in d.cables]),
        ("items no longer run", [c.id for c in d.gone]),
        ("notes", list(d.notes)),
    ]
    return [(h, lines) for h, lines in groups if lines]


def headline(d: Diff) -> str:
    if d.regression:
        n = d.regressions
        return f"REGRESSED: {n} regression{'s' if n != 1 else ''}"
    return "no regression"


def text(d: Diff, old_name: str = "OLD", new_name: str = "NEW") -> str:
    lines = [f"sparkfabric report diff {old_name} -> {new_name}: {headline(d)}"]
    for heading, rows in sections(d):
        lines.append(f"{heading} ({len(rows)}):")
        lines += [f"  {r}" for r in rows]
    return "\n".join(lines) + "\n"


def html(d: Diff, baseline: str) -> str:
    parts = [
        f'<section class="sf-baseline" data-regression="{str(d.regression).lower()}">'
        f"<p><b>Against {esc(baseline)}:</b> {esc(headline(d))}</p>"
    ]
    for heading, rows in sections(d):
        items = "".join(f"<li>{esc(r)}</li>" for r in rows)
        parts.append(f"<details><summary>{esc(heading)} ({len(rows)})</summary>")
        parts.append(f"<ul>{items}</ul></details>")
    parts.append("</section>")
    return "".join(parts)
