"""The JSON results document as a contract: its JSON Schema, a validator, its field reference.

`sparkfabric schema --results` prints the schema; `--sparkfabric-json PATH` writes documents that
follow it; `sparkfabric report diff` and the HTML report read them. A change that breaks a
reader of version 1 raises `version`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

VERSION = 1
SCHEMA_ID = f"urn:sparkfabric:results:{VERSION}"
# RFC 3339 date-time; a pattern, because jsonschema checks `format` only with extra packages.
_DATE_TIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"

_ID_GRAMMAR = (
    "Object ids: node `spark-1`; port `spark-1:p0`; rail `spark-1:p0rail1` (a node with one "
    "cabled port: `spark-1:rail1`); switch leg `switch:qsfp56-dd-1-1`; link "
    "`spark-1:p0rail1<->spark-2:p1rail1`; direction `spark-1:p0rail1->spark-2:p1rail1`; cable "
    "`spark-1:p0<->spark-2:p1` or `spark-1:p1<->switch:qsfp56-dd-1-1`; node pair "
    "`spark-1<->spark-2`."
)


def _s(description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **kw}


def _n(description: str, *, null: bool = False, **kw: Any) -> dict[str, Any]:
    return {"type": ["number", "null"] if null else "number", "description": description, **kw}


def _i(description: str, *, null: bool = False, **kw: Any) -> dict[str, Any]:
    return {"type": ["integer", "null"] if null else "integer", "description": description, **kw}


_OBJECTS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "description": "Ids of the objects this is about. " + _ID_GRAMMAR,
}
_VALUE = {"type": ["number", "string", "null"]}

_CLUSTER = {
    "type": "object",
    "description": "The cluster under test, as cluster.yaml describes it.",
    "required": ["name", "topology", "nodes"],
    "properties": {
        "name": _s("A name for the cluster: the cluster file's name without its suffix."),
        "path": _s("The cluster file as given on the command line.", type=["string", "null"]),
        "topology": _s("How the nodes are cabled.", enum=["direct", "mesh", "ring", "switch"]),
        "transport": _s("How nodes were reached: ssh, sim, replay.", type=["string", "null"]),
        "nodes": {
            "type": "array",
            "description": "Nodes in cluster.yaml order (ring and mesh: cable order).",
            "items": {
                "type": "object",
                "required": ["name", "ports"],
                "properties": {
                    "name": _s("The node's name."),
                    "ports": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 0},
                        "description": "Its cabled QSFP ports.",
                    },
                },
                "additionalProperties": False,
            },
        },
        "switch": {
            "type": ["string", "null"],
            "description": "The switch's host name or address (switch topology).",
        },
    },
    "additionalProperties": False,
}

_CAUSE = {
    "type": "object",
    "required": ["rule", "cause", "fix", "objects", "items"],
    "properties": {
        "rule": _s("The diagnosis rule's id (docs/diagnosis.md)."),
        "cause": _s("What is wrong, in one sentence."),
        "fix": _s("What to do about it."),
        "objects": _OBJECTS,
        "items": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Ids of the failed items this cause explains.",
        },
        "evidence": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The measured facts the rule matched, as sentences.",
        },
    },
    "additionalProperties": False,
}

_ITEM = {
    "type": "object",
    "required": ["id", "outcome"],
    "properties": {
        "id": _s(
            "The pytest node id, relative to the shipped suite (the same from any directory, "
            "install location and spelling of --cluster; JUnit XML's classname and name are "
            "made from it), e.g. `test_bandwidth.py::test_rail_rdma[spark-1:rail0->"
            "spark-2:rail0]`."
        ),
        "outcome": _s(
            "passed, failed, not_measured (the check could not measure: a tool was missing, a "
            "node did not answer; counts against acceptance) or skipped (not applicable).",
            enum=["passed", "failed", "not_measured", "skipped"],
        ),
        "node": _s("The node the item is about, if one.", type=["string", "null"]),
        "rail": _s("The rail label (`rail0`, `p1rail0`), if one.", type=["string", "null"]),
        "measured": {**_VALUE, "description": "What was measured (number, or text)."},
        "expected": {**_VALUE, "description": "What was expected, e.g. `>= 80 Gb/s`."},
        "unit": _s("The unit of `measured`.", type=["string", "null"]),
        "objects": _OBJECTS,
        "rule": _s("The diagnosis rule of a failure, if one.", type=["string", "null"]),
        "message": _s("The failure or skip message.", type=["string", "null"]),
        "duration_s": _n("Seconds pytest spent on the item.", null=True, minimum=0),
        "properties": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Everything the check recorded, as text (node, rail, measured, "
            "expected, cause, fix, rule, round, command, ...): what JUnit XML carries as "
            "<property> elements.",
        },
    },
    "additionalProperties": False,
}

_MEASUREMENT = {
    "type": "object",
    "description": (
        "One raw figure. Kinds the report draws: rdma_gbps (node sends to peer on rail), "
        "rdma_pair_gbps, tcp_gbps, loopback_gbps (node, rail), nccl_busbw_gbytes_s (op, "
        "size_bytes), lane_error_rate_per_s (objects[0] the rail, lane, t_s: corrected bits/s "
        "in the window ending at t_s), ber_max (objects[0] the rail: worst pre-FEC BER of the "
        "soak), nic_temp_c and gpu_temp_c (node, t_s). Other kinds are kept and compared."
    ),
    "required": ["kind", "value", "unit", "objects"],
    "properties": {
        "kind": _s("What was measured.", pattern="^[a-z][a-z0-9_]*$"),
        "value": _n("The figure."),
        "unit": _s("Its unit (Gb/s, GB/s, errors/s, C, or empty for a ratio)."),
        "objects": _OBJECTS,
        "node": _s("The measuring (sending) node.", type=["string", "null"]),
        "peer": _s("The receiving node of a directed figure.", type=["string", "null"]),
        "rail": _i("The rail index (0 or 1).", null=True, minimum=0, maximum=1),
        "lane": _i("The SerDes lane (0-3).", null=True, minimum=0, maximum=7),
        "t_s": _n("Seconds into the phase (a series).", null=True, minimum=0),
        "size_bytes": _i("The message size of an NCCL figure.", null=True, minimum=0),
        "op": _s("The NCCL collective (all_reduce_perf, ...).", type=["string", "null"]),
        "flagged": {
            "type": "boolean",
            "description": "The check judged this figure out of bounds (an outlier lane).",
        },
        "item": _s("The id of the item that judged it.", type=["string", "null"]),
    },
    "additionalProperties": False,
}

_END = {
    "type": "object",
    "description": "One end of a cable and what it reported (null: not read).",
    "required": ["node", "port"],
    "properties": {
        "node": _s("The node, or null for a switch leg.", type=["string", "null"]),
        "port": {
            "type": ["integer", "string"],
            "description": "The node's QSFP port number, or the switch interface (leg).",
        },
        "vendor": _s("EEPROM vendor name.", type=["string", "null"]),
        "part": _s("EEPROM vendor part number.", type=["string", "null"]),
        "serial": _s("EEPROM vendor serial number.", type=["string", "null"]),
        "length_m": _n("EEPROM cable length (copper: whole metres).", null=True, minimum=0),
        "type": _s("EEPROM transceiver / cable type.", type=["string", "null"]),
        "speed_mbps": _i("Negotiated link speed at this end.", null=True, minimum=0),
        "fec": _s("Active FEC at this end (RS, fec91, off, ...).", type=["string", "null"]),
    },
    "additionalProperties": False,
}

_CABLE = {
    "type": "object",
    "description": "The cable acceptance record: a cable is known by its serial across runs.",
    "required": ["id", "a", "b", "status"],
    "properties": {
        "id": _s("The cable's position: `spark-1:p0<->spark-2:p1`, `spark-1:p1<->switch:LEG`."),
        "a": _END,
        "b": _END,
        "worst_ber": _n("Worst pre-FEC BER during the soak.", null=True, minimum=0),
        "status": _s(
            "The cable's own verdict: the worst outcome of the checks of the cable itself "
            "(link, FEC, EEPROM, soak lanes), not of the traffic it carried; unknown when none "
            "ran.",
            enum=["pass", "fail", "not_measured", "unknown"],
        ),
        "notes": {"type": "array", "items": {"type": "string"}, "description": "Advisories."},
    },
    "additionalProperties": False,
}

_PHASE = {
    "type": "object",
    "required": ["name", "rounds", "real_s", "transport_s"],
    "properties": {
        "name": _s("The phase (config, bandwidth, nccl, soak, ...)."),
        "rounds": _i("Rounds of node-disjoint tests, if the phase has rounds.", null=True),
        "real_s": _n("Wall-clock seconds.", null=True, minimum=0),
        "transport_s": _n(
            "Seconds on the transport's clock (virtual on the simulator).", null=True, minimum=0
        ),
    },
    "additionalProperties": False,
}

_THRESHOLD = {
    "type": "object",
    "required": ["value", "kind", "unit", "source"],
    "properties": {
        "value": _n("The limit."),
        "kind": _s("min: a figure must reach it; max: must not exceed it.", enum=["min", "max"]),
        "unit": _s("Its unit."),
        "source": _s("Where the value came from (a default's reason, or cluster.yaml:LINE)."),
    },
    "additionalProperties": False,
}


def results_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a results document."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "sparkfabric results",
        "description": (
            "What one acceptance run found. Written by `pytest --sparkfabric-json PATH`; read by "
            "`sparkfabric report diff` and the HTML report."
        ),
        "type": "object",
        "required": [
            "version",
            "verdict",
            "cluster",
            "started",
            "duration_s",
            "causes",
            "items",
            "measurements",
            "cables",
            "phases",
            "thresholds",
        ],
        "properties": {
            "version": {"const": VERSION, "description": "The document format's version."},
            "verdict": _s(
                "rejected when an item failed; else incomplete when an item was not measured "
                "(or nothing passed); else accepted.",
                enum=["accepted", "rejected", "incomplete"],
            ),
            "cluster": _CLUSTER,
            "started": _s(
                "When the run started (RFC 3339, with offset).",
                format="date-time",
                pattern=_DATE_TIME,
            ),
            "duration_s": _n("Wall-clock seconds of the whole run.", minimum=0),
            "causes": {
                "type": "array",
                "items": _CAUSE,
                "description": "Root causes, each with the failed items it explains.",
            },
            "items": {"type": "array", "items": _ITEM, "description": "Every check's result."},
            "measurements": {
                "type": "array",
                "items": _MEASUREMENT,
                "description": "Every raw figure, with the objects it is about.",
            },
            "cables": {"type": "array", "items": _CABLE, "description": "Every cable."},
            "phases": {
                "type": "array",
                "items": _PHASE,
                "description": "Each measurement phase that ran.",
            },
            "thresholds": {
                "type": "object",
                "additionalProperties": _THRESHOLD,
                "description": "The limits in force, by name (cluster.yaml `thresholds:`).",
            },
            "warnings": {
                "type": "array",
                "items": {"type": "string"},
                "description": "What the run warned about (switch safety, unusual settings).",
            },
        },
        "additionalProperties": False,
    }


def results_schema_json() -> str:
    return json.dumps(results_schema(), indent=2) + "\n"


def problems(document: object) -> list[str]:
    """Where a document breaks the schema, one line each (`at items[3].outcome: ...`); empty
    when it is valid."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(results_schema())
    out = []
    for err in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.path))):
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.path)
        out.append(f"at {where.lstrip('.') or 'the top level'}: {err.message}")
    return out


def is_valid(document: object) -> bool:
    return not problems(document)


def reference_markdown() -> str:
    """The field reference (docs/results-json.md) from the schema's descriptions."""
    sch = results_schema()
    lines = [
        "<!-- Generated by `sparkfabric schema --results --format markdown` from the "
        "descriptions in pytest_sparkfabric/report/schema.py; edit them there. -->",
        "# The JSON results document",
        "",
        sch["description"],
        "",
        f"`sparkfabric schema --results` prints its JSON Schema (version {VERSION}).",
        "",
        _ID_GRAMMAR,
        "",
    ]
    lines += _table("top level", sch)
    for name in ("cluster", "causes", "items", "measurements", "cables", "phases"):
        sub = sch["properties"][name]
        lines += _table(name, sub.get("items", sub))
    lines += _table("cables[].a / .b", _END)
    lines += _table("thresholds.NAME", _THRESHOLD)
    return "\n".join(lines).rstrip() + "\n"


def _type_text(prop: Mapping[str, Any]) -> str:
    if "const" in prop:
        return f"`{prop['const']}`"
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    kind = prop.get("type", "any")
    return " \\| ".join(kind) if isinstance(kind, list) else str(kind)


def _table(title: str, sch: Mapping[str, Any]) -> list[str]:
    required = set(sch.get("required", ()))
    lines = [f"## {title}", ""]
    if sch.get("description") and title != "top level":
        lines += [sch["description"], ""]
    lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
    for name, prop in sch.get("properties", {}).items():
        text = str(prop.get("description", "")).replace("|", "\\|")
        yes = "yes" if name in required else ""
        lines.append(f"| `{name}` | {_type_text(prop)} | {yes} | {text} |")
    return [*lines, ""]
