"""What every renderer shares: verdict colours, number text, HTML escaping."""

from __future__ import annotations

import math
from html import escape

from pytest_sparkfabric.results import Status

# Stroke / text colour, a light fill and the word per verdict; red and green differ in lightness
# too, so they stay apart for red-green colour blindness and in greyscale print.
_STATUS: dict[Status, tuple[str, str, str]] = {
    "pass": ("#2e7d32", "#e8f5e9", "passed"),
    "warn": ("#9e7c00", "#fff8c4", "passed with a warning"),
    "fail": ("#c62828", "#ffcdd2", "failed"),
    "not_measured": ("#b26a00", "#ffe0b2", "not measured"),
    "unknown": ("#757575", "#f5f5f5", "not checked"),
}
STROKE: dict[Status, str] = {k: v[0] for k, v in _STATUS.items()}
FILL: dict[Status, str] = {k: v[1] for k, v in _STATUS.items()}
LABEL: dict[Status, str] = {k: v[2] for k, v in _STATUS.items()}


def esc(value: object) -> str:
    """Text for HTML or SVG content and attribute values (quotes escaped too)."""
    return escape(str(value), quote=True)


def f1(v: float) -> str:
    """A coordinate: at most one decimal, no trailing zero."""
    return f"{v:.1f}".rstrip("0").rstrip(".")


def number(value: float) -> str:
    """A figure as people read it: 96.1, 0.3, 2.4e-05, 200000."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value == 0:
        return "0"
    if abs(value) < 1e-2 or abs(value) >= 1e7:
        return f"{value:.3g}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}" if abs(value) < 100 else f"{value:.1f}".rstrip("0").rstrip(".")


def with_unit(value: float | str | None, unit: str | None) -> str:
    if value is None:
        return ""
    text = number(value) if isinstance(value, int | float) else str(value)
    return f"{text} {unit}" if unit and isinstance(value, int | float) else text


def size_bytes(n: float) -> str:
    """A message size as nccl-tests writes its options: 8, 1K, 64M, 16G."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:g}{unit}" if v < 10 or v.is_integer() else f"{v:.0f}{unit}"
    return f"{n:g}"
