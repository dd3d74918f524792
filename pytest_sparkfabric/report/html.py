"""The HTML report's page: its sections in reading order (one page for `sparkfabric report
html`, or a fragment for pytest-html's summary). Everything is inline (CSS, SVG, no script); all
CSS is scoped under `.sf-report`, so it leaves pytest-html's own table alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_sparkfabric.report.style import esc

if TYPE_CHECKING:
    from pytest_sparkfabric.report.diff import Diff
    from pytest_sparkfabric.results import PreflightNode, Results


CSS = """
.sf-report{font-family:"DejaVu Sans",Verdana,sans-serif;color:#212121;max-width:1400px}
.sf-report h2{font-size:1.15em;margin:1.2em 0 .4em}
.sf-report .sf-verdict{padding:12px 16px;border-radius:6px;font-size:1.1em}
.sf-report .sf-verdict-word{font-size:1.6em;font-weight:bold;letter-spacing:.04em;
  margin-right:.6em}
.sf-report .sf-counts{margin:.5em 0}
.sf-report .sf-warning{color:#8d4e00}
.sf-report .sf-causes>li{margin:.6em 0;padding:.2em .8em;border-left:4px solid #c62828;
  background:#fff5f5}
.sf-report .sf-causes p{margin:.25em 0}
.sf-report .sf-rule{color:#666;font-size:.9em}
.sf-report code.sf-object{background:#eee;padding:0 4px;border-radius:3px}
.sf-report details{margin:.3em 0}
.sf-report summary{cursor:pointer}
.sf-report .sf-picture{overflow-x:auto;border:1px solid #ddd;border-radius:6px;padding:4px}
.sf-report .sf-charts{display:flex;flex-wrap:wrap;gap:16px}
.sf-report figure.sf-chart{margin:0;max-width:100%}
.sf-report figure.sf-chart svg{max-width:100%;height:auto}
.sf-report figcaption{font-size:.9em;color:#444;max-width:60em}
.sf-report table{border-collapse:collapse;font-size:.9em}
.sf-report th,.sf-report td{border:1px solid #ddd;padding:3px 6px;vertical-align:top}
.sf-report th{background:#f3f3f3;text-align:left}
.sf-report td.sf-differs{background:#fff3e0}
.sf-report td.sf-none{color:#999}
.sf-report .sf-inventory-wrap{overflow-x:auto}
"""


def _preflight(nodes: tuple[PreflightNode, ...]) -> str:
    rows = []
    for n in nodes:
        if n.error or not n.missing:
            what = f"not checked: {esc(n.error)}" if n.error else "nothing missing"
            rows.append(f"<tr><td>{esc(n.node)}</td><td colspan=2>{what}</td></tr>")
        for g in n.missing:
            note = " (advisory)" if g.advisory else ""
            rows.append(
                f"<tr><td>{esc(n.node)}</td><td>{esc(g.reason)}{note}</td>"
                f"<td><code>{esc(g.fix)}</code></td></tr>"
            )
    head = "<tr><th>node</th><th>missing</th><th>fix</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def fragment(doc: Results, baseline: tuple[str, Diff] | None = None) -> str:
    """The sections in reading order (verdict, baseline, fabric, charts, cables, what the nodes
    have) in one <div> with their CSS: pytest-html's summary prefix."""
    from pytest_sparkfabric.report import banner, build, charts, inventory, picture
    from pytest_sparkfabric.report.diff import html as diff_html

    drawn = build.picture(doc)
    sections = [("verdict", "", banner.html(doc))]
    if baseline is not None:
        name, d = baseline
        sections.append(("baseline", f"Against the baseline {name}", diff_html(d, name)))
    svg = picture.render(drawn)
    sections.append(("fabric", "The fabric as cabled", f'<div class="sf-picture">{svg}</div>'))
    if figures := "".join(
        f'<figure class="sf-chart" data-chart="{esc(c.key)}">{c.svg}<figcaption><b>'
        f"{esc(c.title)}.</b> {esc(c.caption)}</figcaption></figure>"
        for c in charts.render(doc)
    ):
        sections.append(("charts", "Measurements", f'<div class="sf-charts">{figures}</div>'))
    if doc.cables:
        table = inventory.html(build.cable_rows(doc, drawn))
        sections.append(("cables", "Cables", f'<div class="sf-inventory-wrap">{table}</div>'))
    if doc.preflight:
        sections.append(("preflight", "What the nodes have", _preflight(doc.preflight)))
    parts = [f'<div class="sf-report"><style>{CSS}</style>']
    for key, title, body in sections:
        heading = f"<h2>{esc(title)}</h2>" if title else ""
        parts.append(f'<section class="sf-section" id="sf-{key}">{heading}{body}</section>')
    return "".join(parts) + "</div>"


def page(doc: Results, *, baseline: tuple[str, Diff] | None = None) -> str:
    """A whole HTML document (`sparkfabric report html`)."""
    title = f"sparkfabric: {doc.cluster.name} {doc.verdict.upper()}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)}</title></head><body>{fragment(doc, baseline)}</body></html>\n"
    )
