"""The verdict first: the banner and root-cause list of the HTML report, and the last lines of a
terminal run. Both say the same thing in the same order: verdict, cluster, counts, causes (each
with its objects, fix and the failed items it explains), then the failures no cause explains."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_sparkfabric.report.style import esc, with_unit
from pytest_sparkfabric.results import Cause, Item, Phase, Results, Verdict
from pytest_sparkfabric.shell import duration, plural

Tone = Literal["good", "bad", "warn", "plain"]
TONE: dict[Verdict, Tone] = {"accepted": "good", "rejected": "bad", "incomplete": "warn"}
COLOUR: dict[Verdict, tuple[str, str]] = {  # (background, text)
    "accepted": ("#1b5e20", "#ffffff"),
    "rejected": ("#b71c1c", "#ffffff"),
    "incomplete": ("#e65100", "#ffffff"),
}


def verdict_word(doc: Results) -> str:
    """`REJECTED`, `ACCEPTED with 2 warnings`."""
    word, warned = doc.verdict.upper(), len(doc.warnings())
    return f"{word} with {plural(warned, 'warning')}" if warned else word


def headline(doc: Results) -> str:
    """`REJECTED  tri: mesh, 3 nodes, 2025-06-01 10:00 +00:00, 12 min 04 s`."""
    when = doc.started.strftime("%Y-%m-%d %H:%M %z")
    if doc.started.utcoffset() is not None:
        when = when[:-2] + ":" + when[-2:]
    c = doc.cluster
    return (
        f"{verdict_word(doc)}  {c.name}: {c.topology}, {plural(len(c.nodes), 'node')}, "
        f"{when}, {duration(doc.duration_s)}"
    )


def count_line(doc: Results) -> str:
    c = doc.counts
    return (
        f"{c.passed} passed, {c.warned} warned, {c.failed} failed, {c.not_measured} not measured "
        f"({c.total} checks)"
    )


def unexplained(causes: Sequence[Cause], items: Sequence[Item]) -> list[Item]:
    """Failed or unmeasured items that no root cause explains."""
    explained = {i for c in causes for i in c.items}
    return [i for i in items if i.outcome in ("failed", "not_measured") and i.id not in explained]


def causes_line(causes: Sequence[Cause], items: Sequence[Item]) -> str:
    failed = [i for i in items if i.outcome in ("failed", "not_measured")]
    explained = len(failed) - len(unexplained(causes, items))
    if not causes:
        return "no root cause found" if failed else "no root causes"
    verb = "explains" if len(causes) == 1 else "explain"
    return (
        f"{plural(len(causes), 'root cause')} {verb} {explained} of "
        f"{plural(len(failed), 'failure')}"
    )


# -- terminal -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """A terminal line and how to show it (the caller maps tones to its own colours)."""

    text: str
    tone: Tone = "plain"


def terminal_lines(doc: Results, *, listed: int = 5) -> list[Line]:
    """The run's last lines; at most `listed` unexplained failures are named."""
    causes, items = doc.causes, doc.items
    out = [Line(f"sparkfabric: {headline(doc)}", TONE[doc.verdict]), Line(f"  {count_line(doc)}")]
    # How the run was less safe than by default: again at the end, the header is far up.
    out += [Line(line, "warn") for line in doc.safety]
    if causes or any(i.outcome in ("failed", "not_measured") for i in items):
        out.append(Line(f"  {causes_line(causes, items)}{':' if causes else ''}"))
    for n, c in enumerate(causes, 1):
        out.append(
            Line(f"  {n}. [{c.rule}] {', '.join(c.objects) or 'the cluster'}: {c.cause}", "bad")
        )
        out.append(Line(f"     Fix: {c.fix}"))
        out += [Line(f"     seen: {e}") for e in c.evidence[:2]]
        if c.items:
            out.append(Line(f"     explains {plural(len(c.items), 'check')}"))
    loose = unexplained(causes, items)
    if loose and causes:
        out.append(Line(f"  {plural(len(loose), 'failure')} no cause explains:", "warn"))
    elif loose:
        out.append(Line("  failures:", "warn"))
    out += _first(listed, [item.id for item in loose])
    warned = doc.warnings()
    if warned:
        out.append(Line(f"  {plural(len(warned), 'warning')}:", "warn"))
        out += _first(listed, [f"{item.id}: {w.message}" for item, w in warned])
    return out


def _first(listed: int, lines: Sequence[str]) -> list[Line]:
    more = [f"... and {len(lines) - listed} more (see the report)"] if len(lines) > listed else []
    return [Line(f"    {text}") for text in [*lines[:listed], *more]]


MESSAGE_CAUSES_MAX = 360
"""The causes line of the verdict check's message, short enough for a JUnit message attribute."""


def verdict_text(doc: Results) -> str:
    """The verdict, its causes and warnings as plain text (the `sparkfabric::verdict` check's
    failure message: what a CI dashboard shows)."""
    lines = [line.text for line in terminal_lines(doc)]
    # pytest keeps about 500 characters of it in the JUnit `message` attribute: the causes
    # come first, one short line, then the whole banner (in the element text).
    named = [
        f"{n}. [{c.rule}] {', '.join(c.objects) or 'cluster'}" for n, c in enumerate(doc.causes, 1)
    ]
    short = ""
    for k in range(len(named), 0, -1):
        rest = f"; ... and {len(named) - k} more" if k < len(named) else ""
        short = f"  root causes: {'; '.join(named[:k])}{rest}"
        if len(short) <= MESSAGE_CAUSES_MAX:
            break
    if doc.warnings():
        short += f"{';' if short else ' '} {plural(len(doc.warnings()), 'warning')}"
    return "\n".join([lines[0], short, *lines[1:]] if short else lines)


# -- HTML ---------------------------------------------------------------------------------------


def _item_li(item: Item) -> str:
    figures = (("measured", item.measured, item.unit), ("expected", item.expected, None))
    detail = ", ".join(f"{k} {with_unit(v, unit)}" for k, v, unit in figures if v is not None)
    first = (item.message or "").strip().splitlines()[:1]
    note = detail or (first[0] if first else item.outcome.replace("_", " "))
    return (
        f'<li data-item="{esc(item.id)}"><code>{esc(item.id)}</code>'
        f'<span class="sf-item-note"> {esc(note)}</span></li>'
    )


def _items_block(ids: Sequence[str], by_id: Mapping[str, Item], summary: str) -> str:
    rows = [_item_li(by_id.get(i, Item(id=i, outcome="failed"))) for i in ids]
    return f"<details><summary>{esc(summary)}</summary><ul>{''.join(rows)}</ul></details>"


def _phases(phases: Sequence[Phase]) -> str:
    if not phases:
        return ""
    rows = []
    for p in phases:
        rounds = "" if p.rounds is None else p.rounds
        cells = (p.name, rounds, duration(p.real_s), duration(p.transport_s))
        rows.append("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in cells) + "</tr>")
    return (
        '<details class="sf-phases"><summary>phases</summary><table><thead><tr><th>phase</th>'
        "<th>rounds</th><th>real time</th><th>transport clock</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></details>"
    )


def html(doc: Results) -> str:
    """The banner and root-cause list as one <section>."""
    causes, items, transport = doc.causes, doc.items, doc.cluster.transport
    bg, fg = COLOUR[doc.verdict]
    verdict, _, rest = headline(doc).partition("  ")
    by_id = {i.id: i for i in items}
    parts = [
        f'<section class="sf-banner sf-{doc.verdict}" data-verdict="{doc.verdict}">',
        f'<div class="sf-verdict" style="background:{bg};color:{fg}">'
        f'<span class="sf-verdict-word">{esc(verdict)}</span> '
        f'<span class="sf-verdict-what">{esc(rest)}</span></div>',
        f'<p class="sf-counts">{esc(count_line(doc))}'
        + (f"; transport {esc(transport)}" if transport else "")
        + "</p>",
    ]
    parts += [f'<p class="sf-warning"><strong>{esc(w)}</strong></p>' for w in doc.safety]
    failed = [i for i in items if i.outcome in ("failed", "not_measured")]
    if causes or failed:
        parts.append(f'<h2 class="sf-causes-head">{esc(causes_line(causes, items))}</h2>')
    if causes:
        parts.append('<ol class="sf-causes">')
        for n, c in enumerate(causes, 1):
            objs = "".join(f'<code class="sf-object">{esc(o)}</code> ' for o in c.objects)
            evidence = "".join(f"<li>{esc(e)}</li>" for e in c.evidence)
            explains = f"explains {plural(len(c.items), 'failed check')}"
            parts.append(
                f'<li class="sf-cause" data-rule="{esc(c.rule)}" value="{n}">'
                f'<p><strong>{esc(c.cause)}</strong> <span class="sf-rule">[{esc(c.rule)}]</span>'
                f"</p><p>{objs}</p><p><b>Fix:</b> {esc(c.fix)}</p>"
                + (f'<ul class="sf-evidence">{evidence}</ul>' if evidence else "")
                + (_items_block(c.items, by_id, explains) if c.items else "")
                + "</li>"
            )
        parts.append("</ol>")
    loose = unexplained(causes, items)
    if loose:
        title = f"{plural(len(loose), 'failure')} no cause explains" if causes else "failures"
        block = _items_block([i.id for i in loose], by_id, title)
        parts.append(f'<div class="sf-unexplained">{block}</div>')
    parts.append(_phases(doc.phases))
    parts.append("</section>")
    return "".join(parts)
