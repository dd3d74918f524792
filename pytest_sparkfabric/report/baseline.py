"""`--sparkfabric-baseline OLD.json`: the run compared with an earlier (accepted) one.

Each bandwidth item that passes its threshold but fell more than the tolerance below the same
item's figure in the baseline fails, with both figures (rule `baseline_regression`); the report
shows the whole comparison (`report.diff`) under the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.diagnosis.evidence import Finding
from pytest_sparkfabric.diagnosis.rules import RULES
from pytest_sparkfabric.report.diff import BW_TOLERANCE_PCT, BW_UNITS
from pytest_sparkfabric.results import Results, ResultsError, read

if TYPE_CHECKING:
    from pytest_sparkfabric.results import Item


@dataclass(frozen=True)
class Baseline:
    name: str
    """The file as given."""
    doc: Results
    tolerance_pct: float = BW_TOLERANCE_PCT

    @classmethod
    def load(cls, path: str, tolerance_pct: float = BW_TOLERANCE_PCT) -> Baseline:
        """The baseline document, or a usage error naming the file and what is wrong."""
        try:
            return cls(path, read(path), tolerance_pct)
        except ResultsError as err:
            raise pytest.UsageError(f"--sparkfabric-baseline {err}") from None

    def figure(self, item_id: str) -> tuple[float, str] | None:
        for it in self.doc.items:
            ok = it.id == item_id and it.outcome in ("passed", "warned")
            if ok and isinstance(it.measured, float) and it.unit in BW_UNITS:
                return it.measured, str(it.unit)
        return None

    def regression(self, item: Item) -> tuple[str, Finding] | None:
        """Why a passing item regressed against the baseline (message, finding), or None."""
        was = self.figure(item.id)
        now = item.measured
        if was is None or not isinstance(now, float) or item.unit != was[1] or was[0] <= 0:
            return None
        drop_pct = (was[0] - now) / was[0] * 100
        if drop_pct <= self.tolerance_pct:
            return None
        rule = RULES["baseline_regression"]
        text = (
            f"regressed against the baseline {self.name}: {now:.1f} {item.unit}, was "
            f"{was[0]:.1f} {item.unit} ({drop_pct:.0f}% lower; tolerance "
            f"{self.tolerance_pct:g}%)"
        )
        return f"{text}\nFix: {rule.fix}", Finding(rule, text, (), "")
