"""gpu-burn (wilicc/gpu-burn): the soak's GPU load and its verdict, read from the text (it exits 0
on a FAULTY GPU and prints OK after an init error, issues #7, #12, #14): `GPU N: OK|FAULTY`,
errors, `(DIED!)`, `No clients are alive!`, `proc'd`; progress lines rewritten with `\\r`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from pytest_sparkfabric.probes import ParseError, found_text

_GPU = re.compile(r"^\s*GPU (\d{1,3}): (.+?) \(UUID: ([^)]*)\)\s*$")
_INIT = re.compile(
    r"Initialized device (\d{1,3}) with \d{1,9} MB of memory \(\d{1,9} MB available, "
    r"using (\d{1,9}) MB of it\), using (?:FLOATS|DOUBLES)"
)
_PROGRESS = re.compile(r"^\s*\d{1,3}(?:\.\d)?%\s+proc'd:(?P<procd>.*?)errors:(?P<errors>.*?)temps:")
_PROCD = re.compile(r"(-?\d{1,12}) \(\d{1,9}(?:\.\d+)? Gflop/s\)")
_ERRORS = re.compile(r"(-?\d{1,12})\s*(\((?:WARNING|DIED)!\))?")
_TESTED = re.compile(r"^\s*Tested (\d{1,3}) GPUs:")
_VERDICT = re.compile(r"^\s*GPU (\d{1,3}): (OK|FAULTY)\s*$")
_ABORT = "No clients are alive!"
# Lines gpu-burn prints when a GPU or the whole run fails (gpu_burn-drv.cpp).
_FAILURE = re.compile(
    r"Couldn't init a GPU test|Failure during compute|Syntax error near|Low mem for result|"
    r"terminate called|No CUDA devices|Couldn't|Error in \"|what\(\):"
)


@dataclass(frozen=True, slots=True)
class GpuProgress:
    """One progress line: per GPU, the work done, the error count, whether it died."""

    processed: tuple[int, ...]
    errors: tuple[int, ...]
    died: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class GpuInit:
    device: int
    used_mb: int


@dataclass(frozen=True, slots=True)
class GpuBurn:
    gpus: tuple[str, ...]
    initialized: tuple[GpuInit, ...]
    progress: tuple[GpuProgress, ...]
    verdicts: tuple[tuple[int, bool], ...] | None
    failures: tuple[str, ...]
    aborted: bool
    last_line: str | None

    _json_properties: ClassVar[tuple[str, ...]] = ("all_ok", "did_work", "died")

    @property
    def died(self) -> bool:
        return any(any(p.died) for p in self.progress)

    @property
    def did_work(self) -> bool:
        """Whether some GPU processed at least one result (a positive ``proc'd`` count)."""
        return any(n > 0 for p in self.progress for n in p.processed)

    @property
    def all_ok(self) -> bool:
        """gpu-burn's own verdict held up: every GPU OK, work done, nothing died or failed."""
        verdicts = self.verdicts or ()
        return (
            bool(verdicts)
            and all(ok for _, ok in verdicts)
            and self.did_work
            and not (self.died or self.aborted or self.failures)
        )


def parse_gpu_burn(text: str) -> GpuBurn:
    gpus: list[str] = []
    initialized: list[GpuInit] = []
    progress: list[GpuProgress] = []
    verdicts: list[tuple[int, bool]] | None = None
    failures: list[str] = []
    aborted = False
    last: str | None = None
    # Progress lines are rewritten in place with \r: each CR-separated piece is a line.
    for piece in text.replace("\r", "\n").split("\n"):
        if not (line := piece.strip()):
            continue
        last = line
        if m := _GPU.match(piece):
            gpus.append(m.group(2))
        elif _TESTED.match(piece):
            verdicts = []
        elif verdicts is not None and (m := _VERDICT.match(piece)):
            verdicts.append((int(m.group(1)), m.group(2) == "OK"))
        elif m := _PROGRESS.match(piece):
            errors = _ERRORS.findall(m.group("errors"))
            procd = tuple(int(n) for n in _PROCD.findall(m.group("procd")))
            died = tuple(mark == "(DIED!)" for _, mark in errors)
            progress.append(GpuProgress(procd, tuple(int(n) for n, _ in errors), died))
        if m := _INIT.search(line):
            initialized.append(GpuInit(int(m.group(1)), int(m.group(2))))
        if _ABORT in line:
            aborted = True
        elif _FAILURE.search(line) and not _INIT.search(line):
            failures.append(line)
    if not (gpus or initialized or progress or verdicts is not None or failures or aborted):
        raise ParseError(
            "gpu-burn",
            "expected gpu-burn output: 'GPU N: ... (UUID: ...)', 'Initialized device', "
            "progress ('proc'd:') or 'Tested N GPUs:' lines",
            found_text(text),
        )
    said = tuple(verdicts) if verdicts is not None else None
    return GpuBurn(
        tuple(gpus), tuple(initialized), tuple(progress), said, tuple(failures), aborted, last
    )
