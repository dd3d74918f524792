"""The rules: symptom -> cause -> fix (DOMAIN.md §8), one table of data, rules.md, that
docs/diagnosis.md shows as it is (tests/test_user_docs.py). `RuleId` is the closed set of names,
so a misspelt rule fails mypy (tests/diagnosis/test_rules.py keeps it the table's)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal, cast

RuleId = Literal[
    "link_down", "admin_down", "autoneg_failed", "speed_degraded", "fec_not_rs",
    "pcie_degraded", "pcie_aer", "rdma_netdev_mismatch", "mtu_local", "mtu_path",
    "mtu_mismatch", "unreachable_rail", "address_mismatch", "duplicate_ip", "arp_flux",
    "rp_filter_strict", "ipv6_enabled", "gid_missing", "nccl_socket", "nccl_single_hca",
    "nccl_wrong_hca", "nic_throttled", "half_port", "switch_cpu_forwarding", "pfc_stall",
    "marginal_cable", "ber_high", "post_fec_errors", "egress_rate_cap", "nic_overheated",
    "node_suspect", "node_unreachable", "prerequisite_missing", "not_measured",
    "baseline_regression", "pfc_mismatch", "rx_discards", "miscabled", "nccl_gid_index",
    "nccl_socket_ifname", "version_drift", "firewall",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Rule:
    id: RuleId
    symptom: str
    cause: str
    fix: str


def _rule(row: str) -> Rule:
    # `| \`id\` | symptom | cause | fix |`, a `|` inside a cell escaped as Markdown does.
    cells = (c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)[1:-1])
    ident, symptom, cause, fix = cells
    return Rule(cast("RuleId", ident.strip("`")), symptom, cause, fix)


_ROWS = Path(__file__).with_name("rules.md").read_text(encoding="utf-8").splitlines()[2:]
RULES: Mapping[RuleId, Rule] = MappingProxyType({(r := _rule(row)).id: r for row in _ROWS})
"""Every rule by id, in the table's order (the order of docs/diagnosis.md)."""
