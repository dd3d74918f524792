"""The rule table is one closed set: `RuleId` names exactly the rules, and a typo fails mypy."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import get_args

import pytest

from pytest_sparkfabric.diagnosis.rules import RULES, RuleId

ROOT = Path(__file__).resolve().parents[2]


def test_rule_ids_are_the_table_each_rule_says_cause_and_fix_and_it_is_read_only() -> None:
    assert get_args(RuleId) == tuple(RULES)
    for key, rule in RULES.items():
        assert key == rule.id and rule.symptom and rule.cause and rule.fix, rule.id
        assert not rule.fix.endswith("."), f"{rule.id}: a fix is one line without a full stop"
    with pytest.raises(TypeError):
        RULES["link_down"] = RULES["admin_down"]  # type: ignore[index]


# Each line marked `# typo` must be reported by mypy; the other lines must pass.
SNIPPET = """\
from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_sparkfabric.diagnosis.rules import RULES, RuleId
from pytest_sparkfabric.measure import witness

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric
    from pytest_sparkfabric.verdict import Verdict


def use(verdict: Verdict, fabric: Fabric) -> None:
    RULES["mtu_path"]
    RULES["mtu_pth"]  # typo
    ok: RuleId = "half_port"
    bad: RuleId = "half-port"  # typo
    verdict.require(True, "fine", "link_down")
    verdict.require(True, "spelt wrong", "link_dwn")  # typo
    witness.findings(fabric, prefer=["nic_throttled"], only=[ok])
    witness.findings(fabric, prefer=["nic_throttle"])  # typo
    witness.findings(fabric, only=("link_down", "pcie_degrade"))  # typo
    del bad
"""


@pytest.mark.slow
def test_a_misspelt_rule_fails_mypy(tmp_path: Path) -> None:
    from mypy import api

    snippet = tmp_path / "uses_rules.py"
    snippet.write_text(SNIPPET)
    cache, config = str(tmp_path / "cache"), str(ROOT / "pyproject.toml")
    argv = ["--strict", "--no-incremental", "--cache-dir", cache, "--config-file", config]
    out, err, _ = api.run([*argv, str(snippet)])
    lines = out.splitlines()
    reported = {int(line.split(":")[1]) for line in lines if line.startswith(str(snippet))}
    typos = {i for i, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# typo")}
    assert reported == typos, textwrap.indent(out + err, "  ")
