"""The verdict first: the HTML banner and the terminal's last lines say the same in the same order
(verdict, cluster, counts, causes with objects, fix and items, then what no cause explains); and
progress while the run lasts, one status line in place on a TTY, few plain lines in a CI log."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

import pytest

from pytest_sparkfabric.diagnosis.causes import numbered
from pytest_sparkfabric.report.style import esc, with_unit
from pytest_sparkfabric.results import Item, Results, Verdict
from pytest_sparkfabric.shell import duration, plural, visible

Tone = Literal["good", "bad", "warn", "plain"]
TONE: dict[Verdict, Tone] = {"accepted": "good", "rejected": "bad", "incomplete": "warn"}
BACKGROUND: dict[Verdict, str] = {
    "accepted": "#1b5e20",
    "rejected": "#b71c1c",
    "incomplete": "#e65100",
}
MESSAGE_CAUSES_MAX = 360  # the verdict message's causes line, short for a JUnit message attribute


class Line(NamedTuple):  # the caller maps tones to its own colours
    text: str
    tone: Tone = "plain"


def headline(doc: Results) -> tuple[str, str]:
    """(`ACCEPTED with 2 warnings`, `tri: mesh, 3 nodes, 2025-06-01 10:00 +00:00, 12 min 04 s`)."""
    when = doc.started.strftime("%Y-%m-%d %H:%M %z")
    if doc.started.utcoffset() is not None:
        when = when[:-2] + ":" + when[-2:]
    c, warned = doc.cluster, len(doc.warnings())
    word = doc.verdict.upper() + (f" with {plural(warned, 'warning')}" if warned else "")
    nodes = plural(len(c.nodes), "node")
    return word, f"{c.name}: {c.topology}, {nodes}, {when}, {duration(doc.duration_s)}"


def _summary(doc: Results) -> tuple[str, str | None, list[Item]]:
    """The count line, the causes line (None: no failure, no cause), the unexplained failures."""
    c = doc.counts
    counts = (
        f"{c.passed} passed, {c.warned} warned, {c.failed} failed, {c.not_measured} not measured "
        f"({c.total} checks)"
    )
    failed = [i for i in doc.items if i.outcome in ("failed", "not_measured")]
    explained = {i for cause in doc.causes for i in cause.items}
    loose = [i for i in failed if i.id not in explained]
    n, verb = len(doc.causes), "explains" if len(doc.causes) == 1 else "explain"
    line = f"{plural(n, 'root cause')} {verb} {len(failed) - len(loose)} of "
    line += plural(len(failed), "failure")
    if not n:
        line = "no root cause found" if failed else "no root causes"
    return counts, line if n or failed else None, loose


def terminal_lines(doc: Results, *, listed: int = 5) -> list[Line]:
    """The run's last lines; at most `listed` unexplained failures are named."""
    counts, causes_line, loose = _summary(doc)
    word, what = headline(doc)
    out = [Line(f"sparkfabric: {word}  {what}", TONE[doc.verdict]), Line(f"  {counts}")]
    # How the run was less safe than by default: again at the end, the header is far up.
    out += [Line(line, "warn") for line in doc.safety]
    if causes_line is not None:
        out.append(Line(f"  {causes_line}{':' if doc.causes else ''}"))
    for n, c in enumerate(doc.causes, 1):
        first, *rest = numbered(n, c, banner=True)
        out += [Line(first, "bad"), *map(Line, rest)]
    named = [f"{plural(len(loose), 'failure')} no cause explains:" if doc.causes else "failures:"]
    warned = doc.warnings()
    warnings = [f"{plural(len(warned), 'warning')}:"] if warned else []
    for head, lines in (
        (named if loose else [], [item.id for item in loose]),
        (warnings, [f"{item.id}: {w.message}" for item, w in warned]),
    ):
        more = (
            [f"... and {len(lines) - listed} more (see the report)"] if len(lines) > listed else []
        )
        out += [Line(f"  {h}", "warn") for h in head]
        out += [Line(f"    {text}") for text in [*lines[:listed], *more]]
    return out


def verdict_text(doc: Results) -> str:
    """The `sparkfabric::verdict` check's failure message: what a CI dashboard shows."""
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


def _items_block(ids: Sequence[str], by_id: Mapping[str, Item], summary: str) -> str:
    rows = []
    for item in (by_id.get(i, Item(id=i, outcome="failed")) for i in ids):
        figures = (("measured", item.measured, item.unit), ("expected", item.expected, None))
        detail = ", ".join(f"{k} {with_unit(v, unit)}" for k, v, unit in figures if v is not None)
        first = (item.message or "").strip().splitlines()[:1]
        note = detail or (first[0] if first else item.outcome.replace("_", " "))
        rows.append(
            f'<li data-item="{esc(item.id)}"><code>{esc(item.id)}</code>'
            f'<span class="sf-item-note"> {esc(note)}</span></li>'
        )
    return f"<details><summary>{esc(summary)}</summary><ul>{''.join(rows)}</ul></details>"


def html(doc: Results) -> str:
    counts, causes_line, loose = _summary(doc)
    verdict, rest = headline(doc)
    by_id = {i.id: i for i in doc.items}
    transport = f"; transport {esc(doc.cluster.transport)}" if doc.cluster.transport else ""
    parts = [
        f'<section class="sf-banner sf-{doc.verdict}" data-verdict="{doc.verdict}">',
        f'<div class="sf-verdict" style="background:{BACKGROUND[doc.verdict]};color:#ffffff">'
        f'<span class="sf-verdict-word">{esc(verdict)}</span> '
        f'<span class="sf-verdict-what">{esc(rest)}</span></div>',
        f'<p class="sf-counts">{esc(counts)}{transport}</p>',
    ]
    parts += [f'<p class="sf-warning"><strong>{esc(w)}</strong></p>' for w in doc.safety]
    if causes_line is not None:
        parts.append(f'<h2 class="sf-causes-head">{esc(causes_line)}</h2>')
    parts += ['<ol class="sf-causes">'] if doc.causes else []
    for n, c in enumerate(doc.causes, 1):
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
    parts += ["</ol>"] if doc.causes else []
    if loose:
        title = f"{plural(len(loose), 'failure')} no cause explains" if doc.causes else "failures"
        block = _items_block([i.id for i in loose], by_id, title)
        parts.append(f'<div class="sf-unexplained">{block}</div>')
    rows = [
        (p.name, "" if p.rounds is None else p.rounds, duration(p.real_s), duration(p.transport_s))
        for p in doc.phases
    ]
    if rows:
        body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in r) + "</tr>" for r in rows)
        parts.append(
            '<details class="sf-phases"><summary>phases</summary><table><thead><tr><th>phase</th>'
            "<th>rounds</th><th>real time</th><th>transport clock</th></tr></thead><tbody>"
            f"{body}</tbody></table></details>"
        )
    return "".join(parts) + "</section>"


# -- progress ---------------------------------------------------------------------------------

PLAIN_EVERY_S = 30.0  # without a TTY, a status line at most this often (and a phase's first)


def eta_text(elapsed_s: float, share: float | None) -> str | None:
    """`ETA 4 min 10 s` from the time so far and the share done (None before anything is)."""
    if share is None or share <= 0 or elapsed_s <= 0:
        return None
    return f"ETA {duration(max(0.0, elapsed_s * (1 - share) / share))}"


class Terminal:
    """Progress on pytest's terminal through the terminal reporter's public API only: phase lines
    between the result letters, a status line in place (TTY) or every PLAIN_EVERY_S (a log)."""

    def __init__(self, config: pytest.Config, transport: str) -> None:
        self.config = config
        # Progress lines say when the times in them are modelled, not waited.
        extra = {"sim": " (simulated time)", "replay": " (replayed)"}.get(transport, "")
        self.prefix = "sparkfabric" + extra
        self.phase_started: float | None = None
        self.last_plain: float | None = None
        self.open = False  # a status line is on the screen, with the cursor at its end (TTY only)

    def _reporter(self) -> Any:
        if self.config.get_verbosity() < 0:
            return None
        return self.config.pluginmanager.get_plugin("terminalreporter")

    def show(self, line: str, *, status: bool = False, done: float | None = None) -> None:
        """A phase's own line, or (`status`) where it stands, `done` the share of it done."""
        reporter = self._reporter()
        if reporter is None:
            return
        now, text = time.monotonic(), visible(f"{self.prefix}: {line}")
        # Progress is written while a test runs: step around output capture to the terminal.
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        quiet = capture.global_and_fixture_disabled() if capture is not None else None
        with quiet or contextlib.nullcontext():
            if not status:  # a phase started (its own line): ETAs count from here
                self.close()
                reporter.write_line(text)
                self.phase_started, self.last_plain = now, None
                return
            self.phase_started = now if self.phase_started is None else self.phase_started
            eta = eta_text(now - self.phase_started, done)
            text = f"{text}, {eta}" if eta else text
            if reporter.isatty:
                if not self.open:
                    reporter.ensure_newline()
                self.open = True
                width = shutil.get_terminal_size().columns
                reporter.rewrite(text[: max(10, width - 1)], erase=True)
            elif self.last_plain is None or now - self.last_plain >= PLAIN_EVERY_S:
                self.last_plain = now
                reporter.write_line(text)

    def status(self, line: str, done: float | None) -> None:
        self.show(line, status=True, done=done)

    def close(self) -> None:
        """Erase an open status line before pytest writes its next result."""
        reporter = self._reporter()
        if reporter is not None and self.open:
            self.open = False
            reporter.rewrite("", erase=True)
