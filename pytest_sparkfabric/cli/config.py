"""`sparkfabric init | check | schema`: write, check and describe cluster.yaml (no network).
Exit 0 fine, 2 the request cannot be met, 4 the file has problems (a usage error, as under pytest).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pytest_sparkfabric.cli import cautions
from pytest_sparkfabric.cluster import Cluster, initgen, load_cluster
from pytest_sparkfabric.cluster.faults import FAULTS, Fault
from pytest_sparkfabric.cluster.plan import ITEM_KINDS, item_counts, plan
from pytest_sparkfabric.cluster.spec import LINK_SPEEDS_MBPS, TOPOLOGIES, ClusterSpec
from pytest_sparkfabric.cluster.thresholds import defaults


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "init",
        help="print a commented cluster.yaml with its address plan",
        description="Print a valid, commented cluster.yaml: /24s from the pool in order, host "
        "numbers .11, .12, ... in topology order (ring and mesh: list nodes in cable order).",
    )
    p.add_argument("--topology", required=True, choices=TOPOLOGIES)
    p.add_argument(
        "--nodes",
        required=True,
        metavar="NAMES",
        help="comma-separated node names in topology order (or a count N: spark-1..spark-N)",
    )
    port_help = f"the cabled QSFP port for direct and switch (default {initgen.DEFAULT_PORT})"
    p.add_argument("--port", type=int, help=port_help)
    pool_help = f"where the /24s come from (default {initgen.DEFAULT_POOL})"
    p.add_argument("--subnet-pool", metavar="CIDR", help=pool_help)
    p.add_argument("--mtu", type=int, help="default 9000 (mesh: 1500, as NVIDIA documents)")
    p.add_argument("--transport", choices=initgen.INIT_TRANSPORTS, default="ssh")
    p.add_argument(
        "--link-speed",
        choices=tuple(LINK_SPEEDS_MBPS),
        default="200G",
        help="the declared speed of every link (default 200G; 100G for 100G cables or breakouts)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--force", action="store_true", help="overwrite --output if it exists")
    p.set_defaults(func=cmd_init)

    p = subparsers.add_parser(
        "check",
        help="validate cluster.yaml offline and print its plan",
        description="Validate a cluster file without touching the network. Valid: print the "
        "topology, nodes, cables, links with subnets and the test items per kind (exit 0), "
        "after warnings about what would still fail at run time (values marked EDIT, a "
        "documentation address as a host, an unset switch password variable). Broken: list "
        "every problem with its line (exit 4, a usage error as under pytest).",
    )
    p.add_argument("cluster", metavar="CLUSTER_YAML")
    quiet_help = "print nothing but warnings when valid"
    p.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    p.add_argument(
        "--resolve",
        action="store_true",
        help="also look up every ssh host (ssh -G, then DNS) and warn about those that do "
        "not resolve (off by default: check works offline)",
    )
    p.set_defaults(func=cmd_check)

    p = subparsers.add_parser(
        "schema",
        help="print the JSON Schema (or the field reference) of cluster.yaml",
        description="Print the JSON Schema of cluster.yaml, or with --format markdown the field "
        "reference that docs/cluster-yaml.md holds. With --results: the same for the JSON "
        "results document (docs/results-json.md).",
    )
    p.add_argument("--format", choices=("json", "markdown"), default="json")
    p.add_argument(
        "--results",
        action="store_true",
        help="describe the results document that --sparkfabric-json writes instead",
    )
    p.set_defaults(func=cmd_schema)


def _init_command(args: argparse.Namespace) -> str:
    """The init command line that makes this file again: the options that are not defaults."""
    given = [("topology", args.topology), ("nodes", args.nodes), ("port", args.port)]
    given += [("subnet-pool", args.subnet_pool), ("mtu", args.mtu)]
    given += [("transport", None if args.transport == "ssh" else args.transport)]
    given += [("link-speed", None if args.link_speed == "200G" else args.link_speed)]
    return " ".join(["sparkfabric init", *(f"--{k} {v}" for k, v in given if v is not None)])


def cmd_init(args: argparse.Namespace) -> int:
    opts = {k: getattr(args, k) for k in ("port", "subnet_pool", "mtu", "transport", "link_speed")}
    path = Path(args.output or "-")
    try:
        names = initgen.node_names(args.nodes)
        text = initgen.generate(args.topology, names, command=_init_command(args), **opts)
        if args.output and path.exists() and not args.force:
            raise initgen.InitError(f"{path} exists. Fix: add --force to replace it.")
        if not args.output:
            sys.stdout.write(text)
            return 0
        path.write_text(text, encoding="utf-8")
    except (initgen.InitError, OSError) as exc:
        why = f"cannot write {path}: {exc.strerror or exc}" if isinstance(exc, OSError) else exc
        print(f"sparkfabric init: {why}", file=sys.stderr)
        return 2
    print(f"wrote {path}; edit the lines marked EDIT, then: sparkfabric check {path}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    cluster, cfg = load_cluster(args.cluster), None
    if (given := cluster.spec.ssh_config) and cluster.source:
        cfg = str(cluster.source.parent / Path(given).expanduser())  # relative: to the file
    resolve = cautions.resolver(cfg) if args.resolve else None
    told = cautions.check(cluster, env=os.environ, resolve=resolve)
    if n := len(told):
        print(f"{args.cluster}: {n} warning{'s' if n != 1 else ''} (valid, but the run would fail)")
        print("\n".join(c.render() for c in told) + "\n")
    if not args.quiet:
        sys.stdout.write(describe(cluster, str(args.cluster)))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    if args.results:
        from pytest_sparkfabric.cli.report import results_reference, results_schema_json

        sys.stdout.write(results_schema_json() if args.format == "json" else results_reference())
    elif args.format == "json":
        sys.stdout.write(json.dumps(ClusterSpec.model_json_schema(), indent=2) + "\n")
    else:
        sys.stdout.write(reference_markdown())
    return 0


# -- the plan, as `check` prints it -------------------------------------------------------------


def describe(cluster: Cluster, source: str = "cluster.yaml") -> str:
    """The plan of a valid cluster: topology, nodes, cables, links with subnets, item counts."""
    from pytest_sparkfabric.measure import bwplan
    from pytest_sparkfabric.transport.rest import safety_warnings

    spec, p, n = cluster.spec, plan(cluster), len(cluster.nodes)
    lines = [
        f"{source}: valid",
        f"  topology {spec.topology}, {n} node{'s' if n != 1 else ''}, MTU {spec.mtu}, "
        f"transport {spec.transport}" + (", arp_sysctls" if spec.arp_sysctls else ""),
        "",
        "nodes",
    ]
    for node in cluster.nodes:
        ssh = node.ssh
        how = f"  ssh {ssh.user + '@' if ssh.user else ''}{ssh.host}" if ssh else ""
        lines.append(f"  {node.name}{how}" + (f":{ssh.port}" if ssh and ssh.port else ""))
        lines += [f"    {r.label:<9} {r.netdev:<14} {r.rdma:<13} {r.address}" for r in node.rails]
    width = max((len(link.id) for link in p.links), default=0)
    lines += ["", f"cables ({len(p.cables)})", *(f"  {c.id}" for c in p.cables)]
    lines += ["", f"links ({len(p.links)})", *(f"  {k.id:<{width}}  {k.subnet}" for k in p.links)]
    lines += ["", f"subnets ({len(p.subnets)})"]
    lines += ["  " + ", ".join(map(str, p.subnets[i : i + 4])) for i in range(0, len(p.subnets), 4)]
    if (sw := spec.switch) is not None:
        lines += ["", f"switch {sw.vendor} {sw.user}@{sw.host} ({sw.api})"]
        lines += [f"  {name} -> {port}" for name, port in sw.ports.items()]
        lines += [f"  {w}" for w in safety_warnings(cluster)]
    # Bandwidth and ping items follow bandwidth.schedule (legs: each node with two partners).
    measured = bwplan.measured_pairs(p, bwplan.build(cluster, p))
    counts = item_counts(cluster) | {"link": sum(len(m.links) for m in measured)}
    counts |= {"directed_link": 2 * counts["link"], "node_pair": len(measured)}
    lines += ["", "test items per test function"]
    lines += [f"  {ITEM_KINDS[kind]:<36} {count}" for kind, count in counts.items()]
    return "\n".join(lines) + "\n"


# -- schema and the field reference -------------------------------------------------------------


def _refs(node: Any, suffix: str = "") -> list[tuple[str, str]]:
    """(path suffix, definition name) of every $ref inside one property's schema."""
    if not isinstance(node, dict):
        return []
    if "$ref" in node:
        return [(suffix, str(node["$ref"]).rsplit("/", 1)[-1])]
    out = [r for branch in node.get("anyOf", []) for r in _refs(branch, suffix)]
    items = [node["items"]] if "items" in node else node.get("prefixItems", [])
    out += [r for item in items for r in _refs(item, suffix + "[]")]
    if isinstance(node.get("additionalProperties"), dict):
        keys = node.get("propertyNames", {}).get("enum")
        key = "<" + "|".join(map(str, keys)) + ">" if keys else "<name>"
        out += _refs(node["additionalProperties"], f"{suffix}.{key}")
    return out


_WORDS = {"string": "text", "integer": "whole number", "number": "number", "boolean": "bool"}


def _type(node: Any, paths: dict[str, str]) -> str:
    if not isinstance(node, dict):
        return "any"
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        return f"mapping (see `{paths.get(name, name)}`)"
    if "enum" in node or "const" in node:
        return " | ".join(f"`{v}`" for v in node.get("enum", [node.get("const")]))
    if "anyOf" in node:
        kinds = [_type(b, paths) for b in node["anyOf"] if b.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds))
    kind, limits = node.get("type"), _limits(node)
    if kind == "array" and "prefixItems" in node:
        items = [_type(i, paths) for i in node["prefixItems"]]
        same = len(set(items)) == 1
        return f"list of exactly {len(items)}: {items[0]}" if same else f"list [{', '.join(items)}]"
    if kind == "array":
        return f"list of {_type(node.get('items'), paths)}" + limits
    if kind == "object":
        keys = node.get("propertyNames", {}).get("enum")
        key = " | ".join(f"`{k}`" for k in keys) if keys else "name"
        value = node.get("additionalProperties") or next(
            iter(node.get("patternProperties", {}).values()), None
        )  # keys with a pattern
        return f"mapping {key} -> {_type(value, paths)}" if isinstance(value, dict) else "mapping"
    if node.get("format") == "ipv4interface":
        return "IPv4 address/prefix"
    return _WORDS.get(str(kind), str(kind)) + limits


def _limits(node: dict[str, Any]) -> str:
    lo = node.get("minimum", node.get("exclusiveMinimum"))
    hi = node.get("maximum", node.get("exclusiveMaximum"))
    parts = [] if lo is None else [f"> {lo}" if "exclusiveMinimum" in node else f">= {lo}"]
    parts += [] if hi is None else [f"< {hi}" if "exclusiveMaximum" in node else f"<= {hi}"]
    parts += [f"at most {node['maxLength']} characters"] if "maxLength" in node else []
    return f" ({', '.join(parts)})" if parts else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(prop: dict[str, Any], required: bool) -> str:
    value = prop.get("default", ...)
    if required:
        return "required"
    if value is ... or value is None or value in ({}, []):
        return "-" if value is ... else "none" if value is None else "empty"
    if isinstance(value, dict):
        return "see below"
    return f"`{_cell(value)}`" if isinstance(value, str) else _cell(f"`{json.dumps(value)}`")


def reference_markdown() -> str:
    """The field reference of cluster.yaml from the schema's descriptions (docs/cluster-yaml.md)."""
    sch = ClusterSpec.model_json_schema()
    root = "ClusterSpec"
    defs: dict[str, Any] = {root: sch, **sch.get("$defs", {})}
    paths, order = {root: "(top level)"}, []

    def visit(name: str) -> None:  # depth first: each section right after the one using it
        order.append(name)
        base = "" if name == root else paths[name]
        for key, prop in defs[name].get("properties", {}).items():
            for suffix, ref in _refs(prop):
                if ref not in paths:
                    paths[ref] = f"{base}.{key}{suffix}".lstrip(".")
                    visit(ref)

    visit(root)
    fields: list[str] = []
    for name in order:
        node, required = defs[name], set(defs[name].get("required", []))
        fields += ["", f"## `{paths[name]}`", ""]
        fields += [str(node["description"]).strip(), ""] if node.get("description") else []
        fields += ["| key | type | default | description |", "|---|---|---|---|"]
        fields += [
            f"| `{key}` | {_cell(_type(prop, paths))} | {_default(prop, key in required)} "
            f"| {_cell(str(prop.get('description', '')))} |"
            for key, prop in node.get("properties", {}).items()
        ]
    thresholds = sorted(defaults("direct", 2).values(), key=lambda t: t.name)
    limits = [f"| `{t.name}` | {_cell(t.expected())} | {_cell(t.source)} |" for t in thresholds]
    faults = [f"| `{k}` | {_targets(f)} | {_cell(f.what)} | {f.lab} |" for k, f in FAULTS.items()]
    filled = {
        "@example@": initgen.generate("direct", ["spark-1", "spark-2"]).rstrip("\n"),
        "@fields@": "\n".join(fields),
        "@thresholds@": "\n".join(limits),
        "@faults@": "\n".join(faults),
    }
    # The prose around the generated tables is markdown, edited as such.
    text = Path(__file__).with_name("reference.md").read_text(encoding="utf-8")
    for marker, value in filled.items():
        text = text.replace(marker, value)
    return text


def _targets(fault: Fault) -> str:
    words = [", ".join(f"`{k}`" for k in fault.required)]
    words += ["optional " + ", ".join(f"`{k}`" for k in fault.allowed)] if fault.allowed else []
    words += ["topology switch only"] if fault.needs_switch else []
    return "; ".join(w for w in words if w) or "none"
