"""`nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]`, any field list: units from
the header (`memory.total [MiB]`), `[N/A]`/`[Not Supported]` None, never zero; a repeated header
(`-l N`, `srun`) starts the rows read under it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from pytest_sparkfabric import shell
from pytest_sparkfabric.probes import ParseError, found_text

TOOL = "nvidia-smi"
QUERY_FIELDS = ("temperature.gpu", "power.draw", "clocks.sm", "utilization.gpu")

# A number, or one with its unit; serials, bus IDs and masked IDs are digit strings with leading
# zeros: text, not numbers.
_N = r"(-?\d{1,15}(?:\.\d{1,15})?)"
_NUMBER = re.compile(rf"^(?:(?!-?0\d){_N}|{_N} [A-Za-z%/]{{1,8}})$")
_HEADER_CELL = re.compile(r"^([a-z][A-Za-z0-9_.]*)(?: \[([^\]]{1,12})\])?$")
# What nvidia-smi prints instead of a table when it cannot run (nvidia-smi's own messages).
_FAILURES = (
    "NVIDIA-SMI has failed",
    "No devices were found",
    "is not a valid field to query",
    "Failed to initialize NVML",
    "nvidia-smi: command not found",
)

Value = int | float | str | None


@dataclass(frozen=True, slots=True)
class CsvColumn:
    """A column: its field name and unit from the header (both None without a header)."""

    name: str | None
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class CsvTable:
    columns: tuple[CsvColumn, ...]
    rows: tuple[tuple[Value, ...], ...]
    """A number (int when printed without a decimal point), text, or None where a bracketed
    note (``[N/A]``) stands: never a 0."""
    header: bool


@dataclass(frozen=True, slots=True)
class NvidiaSmiCsv:
    tables: tuple[CsvTable, ...]

    _json_properties: ClassVar[tuple[str, ...]] = ("records",)

    @property
    def records(self) -> tuple[dict[str, Value], ...]:
        """Every row as field -> value (``"1"``, ``"2"``... for the columns of a headerless
        table, in the order they were queried)."""
        return tuple(
            dict(zip([c.name or str(i + 1) for i, c in enumerate(t.columns)], row, strict=True))
            for t in self.tables
            for row in t.rows
        )


@dataclass(frozen=True, slots=True)
class GpuSample:
    temp_c: float | None
    utilization_pct: float | None


def build_gpu_query() -> shell.Command:
    return shell.join(
        ["nvidia-smi", "--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits"]
    )


def _cell(token: str) -> Value:
    raw = token.strip()
    if (raw.startswith("[") and raw.endswith("]")) or raw in ("N/A", "Not Supported"):
        return None
    if not (m := _NUMBER.match(raw)):
        return raw
    number = m.group(1) or m.group(2)  # at most 15+15 digits: always finite
    return float(number) if "." in number else int(number)


def parse_nvidia_smi_csv(text: str) -> NvidiaSmiCsv:
    """Every CSV table in the text; each row read under the header before it, if any. A header
    line is all lower-case dotted names, maybe with ``[unit]``: a data line always holds a
    number, an upper-case letter, a path or a bracketed note."""
    tables: list[CsvTable] = []
    columns: tuple[CsvColumn, ...] | None = None
    header = False
    rows: list[tuple[Value, ...]] = []

    def close() -> None:
        if columns is not None and (rows or header):
            tables.append(CsvTable(columns, tuple(rows), header))

    for line in text.replace("\r", "").split("\n"):
        if not line.strip():
            continue
        if any(f in line for f in _FAILURES):
            raise ParseError(TOOL, "expected CSV lines of the queried fields", repr(line.strip()))
        cells = line.split(", ")
        if len(cells) == 1 and ": " in line:
            # A message ("bash: nvidia-smi: command not found", "NVML: ..."), not a value.
            continue
        heads = [_HEADER_CELL.match(cell.strip()) for cell in cells]
        if all(heads):
            head = tuple(CsvColumn(m.group(1), m.group(2)) for m in heads if m)
            if head != columns or not header:
                close()
                columns, header, rows = head, True, []
            continue
        if columns is None or len(cells) != len(columns):
            close()
            columns, header, rows = tuple(CsvColumn(None) for _ in cells), False, []
        rows.append(tuple(map(_cell, cells)))
    close()
    if not tables:
        raise ParseError(TOOL, "expected a CSV header or value line", found_text(text))
    return NvidiaSmiCsv(tuple(tables))


def parse_gpu_query(text: str) -> tuple[GpuSample, ...]:
    """One sample per GPU line of the suite's query: columns by the header, else in
    :data:`QUERY_FIELDS` order; a line that is not four numbers-or-notes is skipped."""
    samples: list[GpuSample] = []
    try:
        tables = parse_nvidia_smi_csv(text).tables
    except ParseError:
        tables = ()
    for table in tables:
        names = [c.name for c in table.columns]
        if table.header:
            where = [names.index(f) if f in names else None for f in QUERY_FIELDS]
        elif len(names) == len(QUERY_FIELDS):
            where = list(range(len(QUERY_FIELDS)))
        else:
            continue
        for row in table.rows:
            values = [row[i] if i is not None else None for i in where]
            if not any(isinstance(v, str) for v in values):
                nums = [None if v is None else float(v) for v in values]
                samples.append(GpuSample(nums[0], nums[3]))
    if not samples:
        raise ParseError(
            TOOL,
            "expected a 'temperature, power, clock, utilization' CSV line per GPU (is the "
            "driver loaded?)",
            found_text(text),
        )
    return tuple(samples)
