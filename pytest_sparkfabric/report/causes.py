"""The run's root causes in the results document's shape (schema `causes`: rule, cause, fix,
objects, items).

The diagnosis groups the failures (`SparkSession.root_causes`); `document_causes` puts its
causes under the document's stable item ids and adds what only the report knows: items that
could not measure and no cause explains (one `not_measured` cause per node), and baseline
regressions. `session_causes` groups a finished document's items by their recorded rules alone
(used where no session ran, and for those two extras).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_sparkfabric.report import baseline
from pytest_sparkfabric.report import objects as ids
from pytest_sparkfabric.report.items import NOT_MEASURED

if TYPE_CHECKING:
    from pytest_sparkfabric.measure.engine import Fabric

Doc = dict[str, Any]
TRAFFIC_CHECKS = frozenset(
    {
        "test_jumbo_ping",
        "test_rail_rdma",
        "test_pair_rdma",
        "test_pair_tcp",
        "test_nccl_busbw",
        "test_nccl_completes",
        "test_nccl_uses_ib",
        "test_soak_load",
    }
)
"""Checks that send traffic: their failures are symptoms of a cause a state check names (an MTU,
a link, an address), so a group of them that shares a node with such a cause folds into it."""
UNMEASURED_FIX = (
    "make the command run there (the reason above: power, network, ssh, a missing tool), then "
    "run the suite again"
)


def _func(item_id: str) -> str:
    return item_id.rpartition("::")[2].partition("[")[0]


def _nodes(item: Doc) -> set[str]:
    out = {item["node"]} if item.get("node") else set()
    for text in item.get("objects", ()):
        ref = ids.parse(text)
        if ref is not None:
            out |= set(ref.nodes)
    return out


def _found_nodes(fabric: Fabric | None) -> dict[str, list[str]]:
    """Rule -> the nodes the session's diagnosis names, from the phases that ran (reading only
    what was measured: nothing runs at the session's end)."""
    if fabric is None:
        return {}
    from pytest_sparkfabric.diagnosis.diagnose import diagnose
    from pytest_sparkfabric.measure.evidence import collect

    out: dict[str, list[str]] = {}
    for f in diagnose(collect(fabric, links=False)):
        out.setdefault(f.rule.id, [])
        out[f.rule.id] += [n for n in f.nodes if n not in out[f.rule.id]]
    return out


def _unmeasured_reason(item: Doc) -> str:
    text = (item.get("message") or "").strip().splitlines()[0]
    return text.removeprefix(NOT_MEASURED).strip()


def session_causes(fabric: Fabric | None, items: Sequence[Doc]) -> list[Doc]:
    """Root causes, most items explained first; every failed item is in at most one."""
    from pytest_sparkfabric.diagnosis.rules import RULES

    found = _found_nodes(fabric)
    groups: dict[str, list[Doc]] = {}
    unmeasured: dict[str, list[Doc]] = {}
    loose: list[Doc] = []
    regressed: list[Doc] = []
    for it in items:
        if it["outcome"] == "not_measured" and not it.get("rule"):
            unmeasured.setdefault(_unmeasured_where(_unmeasured_reason(it)), []).append(it)
        elif it["outcome"] == "failed" and it.get("rule") == baseline.RULE:
            regressed.append(it)
        elif it["outcome"] in ("failed", "not_measured") and it.get("rule") in RULES:
            groups.setdefault(it["rule"], []).append(it)
        elif it["outcome"] == "failed" and _traffic([it]):
            loose.append(it)
    # A group of traffic checks only, sharing a node with a group a state check opened, is
    # that group's symptom (a 1500 MTU fails the jumbo pings of its path: one cause).
    states = {r: set().union(*map(_nodes, g)) for r, g in groups.items() if not _traffic(g)}
    for rule in [r for r, g in groups.items() if _traffic(g)]:
        nodes = set().union(*map(_nodes, groups[rule]))
        host = next((r for r, ns in states.items() if ns & nodes), None)
        if host is not None:
            groups[host] += groups.pop(rule)
    # Traffic that failed with no signature of its own, where a cause already explains the
    # same node's other traffic (a soak that could not load a node whose link is down).
    for it in loose:
        host = next(
            (r for r, g in groups.items() if set().union(*map(_nodes, g)) & _nodes(it)), None
        )
        if host is not None:
            groups[host].append(it)
    out: list[Doc] = []
    for rule, group in groups.items():
        r = RULES[rule]  # type: ignore[index]
        fixes = [it["properties"].get("fix") for it in group if it.get("rule") == rule]
        state_nodes = [n for it in group if not _traffic([it]) for n in sorted(_nodes(it))]
        named = found.get(rule) or state_nodes or sorted(set().union(*map(_nodes, group)))
        out.append(
            {
                "rule": rule,
                "cause": r.cause,
                "fix": next((f for f in fixes if f), r.fix),
                "objects": list(dict.fromkeys(named)),
                "items": [it["id"] for it in group],
            }
        )
    for node, group in unmeasured.items():
        said = [_unmeasured_reason(it) for it in group]
        # The most common reason first (a node that does not answer, rather than what could
        # not run without it).
        reasons = sorted(dict.fromkeys(said), key=lambda r: -said.count(r))
        ref = ids.parse(node)
        out.append(
            {
                "rule": "not_measured",
                "cause": f"could not measure: {reasons[0]}",
                "fix": UNMEASURED_FIX,
                "objects": [ref.nodes[0]]
                if ref is not None and ref.nodes and " " not in node
                else [],
                "items": [it["id"] for it in group],
                "evidence": reasons[1:],
            }
        )
    if regressed:
        out.append(
            {
                "rule": baseline.RULE,
                "cause": baseline.CAUSE,
                "fix": baseline.FIX,
                "objects": sorted(set().union(*map(_nodes, regressed))),
                "items": [it["id"] for it in regressed],
            }
        )
    return sorted(out, key=lambda c: -len(c["items"]))


def _unmeasured_where(reason: str) -> str:
    """The node an unmeasured item's reason names (`spark-2: ssh: ...`, also after `; `), else
    the reason itself."""
    for part in reason.split("; "):
        head = part.partition(":")[0]
        ref = ids.parse(head) if head and " " not in head else None
        if ref is not None and ref.nodes:
            return ref.nodes[0]
    return reason


def _traffic(group: Sequence[Doc]) -> bool:
    return all(_func(it["id"]) in TRAFFIC_CHECKS for it in group)


def document_causes(
    diagnosed: Sequence[Doc], stable: Mapping[str, str], items: Sequence[Doc]
) -> list[Doc]:
    """The diagnosis' causes with their items under stable ids, then the report's own: what
    could not be measured (one cause, or part of a node-unreachable cause where the diagnosis
    found one) and baseline regressions."""
    out = [{**c, "items": [stable.get(i, i) for i in c["items"]]} for c in diagnosed]
    explained = {i for c in out for i in c["items"]}
    unreachable = next((c for c in out if c["rule"] == "node_unreachable"), None)
    unmeasured: Doc | None = None
    node_of = {it["id"]: it.get("node") for it in items}
    for extra in session_causes(None, items):
        left = [i for i in extra["items"] if i not in explained]
        if not left or extra["rule"] not in ("not_measured", baseline.RULE):
            continue
        if extra["rule"] == baseline.RULE:
            out.append({**extra, "items": left})
        elif unreachable is not None:
            # What could not run without the node that does not answer: that node's cause.
            unreachable["items"] = [*unreachable["items"], *left]
        elif unmeasured is None:
            unmeasured = {**extra, "items": left, "evidence": list(extra.get("evidence", []))}
            out.append(unmeasured)
        else:
            unmeasured["items"] += left
            unmeasured["objects"] = list(dict.fromkeys([*unmeasured["objects"], *extra["objects"]]))
            unmeasured["evidence"] += [extra["cause"], *extra.get("evidence", [])]
    if unmeasured is not None:
        nodes = [node_of.get(i) for i in unmeasured["items"]]
        named = [*unmeasured["objects"], *(n for n in nodes if n)]
        unmeasured["objects"] = list(dict.fromkeys(named))
    return sorted(out, key=lambda c: -len(c["items"]))
