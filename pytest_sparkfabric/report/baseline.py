"""`--sparkfabric-baseline OLD.json`: the run compared with an earlier (accepted) one.

Each bandwidth item that passes its threshold but fell more than the tolerance below the same
item's figure in the baseline fails, with both figures; the report shows the whole comparison
(`report.diff`) under the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pytest_sparkfabric.report.diff import BW_TOLERANCE_PCT, BW_UNITS

Doc = dict[str, Any]
RULE = "baseline_regression"
"""The rule an item fails with when its figure fell below the baseline's."""
CAUSE = "bandwidth fell more than the tolerance below the same checks' figures in the baseline run"
FIX = (
    "find what changed since the baseline run (cables moved or replaced, firmware, settings: "
    "see the comparison in the report), or accept the new figures by making this run the baseline"
)


@dataclass(frozen=True)
class Baseline:
    name: str
    """The file as given."""
    doc: Doc
    tolerance_pct: float = BW_TOLERANCE_PCT

    @classmethod
    def load(cls, path: str, tolerance_pct: float = BW_TOLERANCE_PCT) -> Baseline:
        """The baseline document, or a usage error naming the file and what is wrong."""
        import json
        from pathlib import Path

        from pytest_sparkfabric.report.schema import problems

        fix = "Fix: give a file written by pytest --sparkfabric-json PATH"
        where = f"--sparkfabric-baseline {path}"
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise pytest.UsageError(f"{where}: cannot read it: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise pytest.UsageError(f"{where}: not JSON ({exc}). {fix}") from None
        found = problems(doc)
        if found:
            shown = "\n".join(f"  {p}" for p in found[:5])
            raise pytest.UsageError(
                f"{where}: not a sparkfabric results document:\n{shown}\n{fix} "
                "(the schema: sparkfabric schema --results)"
            )
        return cls(path, doc, tolerance_pct)

    def figure(self, item_id: str) -> tuple[float, str] | None:
        for it in self.doc["items"]:
            if it["id"] == item_id and it.get("outcome") == "passed":
                value, unit = it.get("measured"), it.get("unit")
                if isinstance(value, (int, float)) and unit in BW_UNITS:
                    return float(value), str(unit)
        return None

    def regression(self, item_id: str, props: dict[str, str]) -> str | None:
        """Why the item regressed against the baseline (its message), or None."""
        from pytest_sparkfabric.report.items import figure

        was = self.figure(item_id)
        now, unit = figure(props)
        if was is None or not isinstance(now, float) or unit != was[1] or was[0] <= 0:
            return None
        drop_pct = (was[0] - now) / was[0] * 100
        if drop_pct <= self.tolerance_pct:
            return None
        return (
            f"regressed against the baseline {self.name}: {now:.1f} {unit}, was {was[0]:.1f} "
            f"{unit} ({drop_pct:.0f}% lower; tolerance {self.tolerance_pct:g}%)\nFix: {FIX}"
        )

    def judge(self, report: pytest.TestReport, item_id: str) -> None:
        """Fail a passed item's report whose figure regressed beyond the tolerance."""
        from pytest_sparkfabric.report.items import properties

        why = self.regression(item_id, properties(report))
        if why is None:
            return
        report.outcome = "failed"
        report.longrepr = why
        report.user_properties.append(("rule", RULE))
