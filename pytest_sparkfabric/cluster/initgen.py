"""`sparkfabric init`: a valid, commented cluster.yaml with its address plan (DOMAIN.md §2): /24s
from a pool in order, hosts .11, .12, ... in topology order; direct and switch: one /24 per rail;
ring and mesh: two per cable, cable i from port 0 of node i to port 1 of node i+1."""

from __future__ import annotations

import math
from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Interface, IPv4Network

import yaml

from pytest_sparkfabric.cluster import argrules, hardware
from pytest_sparkfabric.cluster.spec import NVIDIA_APPROVED, NcclSpec
from pytest_sparkfabric.cluster.validate import miscount

DEFAULT_POOL = "192.168.100.0/24 to 192.168.255.0/24"
FIRST_HOST = 11
DEFAULT_PORT = 1
INIT_TRANSPORTS = ("ssh", "sim")
Ports = dict[int, tuple[IPv4Interface, IPv4Interface]]


class InitError(ValueError):
    """A request `init` cannot turn into a valid file; str() says what and how to fix it."""


def node_names(spec: str) -> list[str]:
    """`a,b,c` -> the names; a bare number N -> spark-1 .. spark-N."""
    text = spec.strip()
    if text.isdigit():
        return [f"spark-{i}" for i in range(1, int(text) + 1)]
    return [part.strip() for part in text.split(",") if part.strip()]


def pool_subnets(pool: str | None) -> list[IPv4Network]:
    """The /24s of a pool, in order."""
    if pool is None:
        return [IPv4Network(f"192.168.{i}.0/24") for i in range(100, 256)]
    try:
        net = IPv4Network(pool.strip(), strict=False)
    except ValueError:
        what = f"--subnet-pool {pool!r} is not an IPv4 network"
        raise InitError(f"{what}. Fix: write it like 192.168.96.0/19.") from None
    return list(net.subnets(new_prefix=24)) if net.prefixlen <= 24 else []


def subnets_needed(topology: str, count: int) -> int:
    rails = hardware.RAILS_PER_PORT
    return rails if topology in ("direct", "switch") else rails * count


def _check(topology: str, names: Sequence[str], port: int | None, mtu: int | None) -> None:
    if wrong := miscount(topology, len(names)):
        what, need, fits = wrong
        fix = f"use --topology {' or '.join(fits)}" if fits else f"name {need} nodes"
        raise InitError(f"topology {topology} {what}; --nodes names {len(names)}. Fix: {fix}.")
    rule = argrules.NODE
    for name in names:
        if not name or rule.problem(name) or len(name) > rule.max_length:
            fix = f"{rule.words} (at most {rule.max_length} characters)"
            raise InitError(f"node name {name!r} is not valid. Fix: {fix}.")
    if dupes := sorted({n for n in names if list(names).count(n) > 1}):
        what = f"node name(s) {', '.join(dupes)} given twice"
        raise InitError(f"{what}. Fix: every node needs its own name.")
    if port is not None and port not in hardware.PORTS:
        raise InitError(f"--port {port} does not exist. Fix: a Spark has QSFP ports 0 and 1.")
    if port is not None and topology in ("ring", "mesh"):
        raise InitError(
            f"--port is for direct and switch; {topology} nodes are cabled on both ports "
            "(port 0 of each to port 1 of the next). Fix: leave out --port."
        )
    if mtu is not None and not 576 <= mtu <= 9216:
        raise InitError(f"--mtu {mtu} is out of range. Fix: use 576 to 9216 (9000 for jumbo).")


def address_plan(
    topology: str, count: int, port: int | None, pool: str | None = None
) -> list[Ports]:
    """Every node's ports and rail addresses; raise InitError when the pool is too small."""
    subnets, wanted = pool_subnets(pool), subnets_needed(topology, count)
    if len(subnets) < wanted:
        prefix = 24 - math.ceil(math.log2(wanted))
        example = f"192.168.0.0/{prefix}" if prefix >= 16 else f"10.0.0.0/{prefix}"
        per = "cable" if topology in ("ring", "mesh") else "cluster, one per rail"
        where = f"--subnet-pool {pool}" if pool else f"the default pool ({DEFAULT_POOL})"
        raise InitError(
            f"{where} holds {len(subnets)} /24{'s' * (len(subnets) != 1)}; "
            f"{topology} with {count} nodes needs {wanted} (2 per {per}). "
            f"Fix: give a /{prefix} or larger, e.g. --subnet-pool {example}."
        )

    def at(cable: int, rail: int, i: int) -> IPv4Interface:
        net = subnets[2 * cable + rail].network_address
        return IPv4Interface((IPv4Address(int(net) + FIRST_HOST + i), 24))

    if topology in ("direct", "switch"):
        p = DEFAULT_PORT if port is None else port
        return [{p: (at(0, 0, i), at(0, 1, i))} for i in range(count)]
    # Cable i leaves node i on port 0 and arrives at node i+1 on port 1.
    return [
        {c: (at(cable, 0, i), at(cable, 1, i)) for c, cable in ((0, i), (1, (i - 1) % count))}
        for i in range(count)
    ]


def _scalar(text: str) -> str:
    """`text` as a YAML scalar that reads back as that same text (quoted when YAML would not)."""
    try:
        same = yaml.safe_load(text) == text
    except yaml.YAMLError:
        same = False
    return text if same and text.strip() == text else "'" + text.replace("'", "''") + "'"


def switch_port_name(i: int) -> str:
    """Breakout legs in order: qsfp56-dd-1-1, qsfp56-dd-1-5, qsfp56-dd-2-1, ..."""
    return f"qsfp56-dd-{i // 2 + 1}-{1 if i % 2 == 0 else 5}"


_TOPOLOGY_WORDS = {
    "direct": "2 nodes, one cable, the same port number at both ends",
    "mesh": "3 nodes, port 0 of each cabled to port 1 of the next",
    "ring": "port 0 of each node cabled to port 1 of the next; the last closes to the first",
    "switch": "one cable per node to the switch, the same port number on every node",
}


def generate(
    topology: str,
    names: Sequence[str],
    *,
    port: int | None = None,
    subnet_pool: str | None = None,
    mtu: int | None = None,
    transport: str = "ssh",
    link_speed: str = "200G",
    command: str = "",
) -> str:
    """A commented cluster.yaml for these nodes; raise InitError for an impossible request.
    topology, transport and link_speed are argparse's choices: not checked again here."""
    _check(topology, names, port, mtu)
    plans, n = address_plan(topology, len(names), port, subnet_pool), len(names)
    ring, mesh, ssh = topology in ("ring", "mesh"), topology == "mesh", transport == "ssh"
    out = [
        "# cluster.yaml for pytest-sparkfabric" + (f", written by `{command}`" if command else ""),
        "# Check it offline with `sparkfabric check cluster.yaml`; run the suite with",
        "# `pytest --cluster cluster.yaml`. Field reference: docs/cluster-yaml.md",
        f"topology: {topology}  # {_TOPOLOGY_WORDS[topology]}",
        f"mtu: {mtu or (1500 if mesh else 9000)}  # every fabric netdev (and switch port) end to "
        f"end; {'NVIDIA documents 1500 for mesh' if mesh else 'jumbo frames'}",
        f"link_speed: {link_speed}  # every link's declared speed (per port: nodes[].link_speed)",
        f"transport: {transport}  # {'the real nodes, over ssh' if ssh else 'a simulated cluster'}",
    ]
    if not ssh:
        example = "{fault: link_down, node: " + _scalar(names[0]) + "}"
        out += ["simulate:", "  seed: 0", f"  faults: []  # e.g. [{example}]"]
    out.append("nodes:  # in cable order" if ring else "nodes:")
    for i, (name, ports) in enumerate(zip(names, plans, strict=True)):
        out.append(f"  - name: {_scalar(name)}")
        if ssh:
            edit = "  # EDIT: management address (or ~/.ssh/config alias) and user"
            out.append(f"    ssh: {{host: {_scalar(name)}, user: nvidia}}{edit}")
        out.append("    ports:  # QSFP port: [rail 0 address, rail 1 address]")
        for p, (r0, r1) in sorted(ports.items()):
            where = "to the switch" if topology == "switch" else f"cable to the other node port {p}"
            if ring:
                where = f"cable to {names[(i + 1) % n if p == 0 else (i - 1) % n]} port {1 - p}"
            std = ", ".join(hardware.rail_names(p, r).netdev for r in (0, 1))
            out.append(f"      {p}: [{r0}, {r1}]  # {where}; {std}")
    if topology == "switch":
        # Breakout cables are third-party parts NVIDIA's Spark list does not name: without them
        # on the list every leg warns "not approved" on every run.
        out += [
            "switch:",
            "  vendor: routeros",
            "  host: 192.0.2.1  # EDIT: the switch's management address",
            "  user: sparkfabric  # a read-only user (group with read, api, rest-api policies)",
            "  password_env: SWITCH_PASSWORD  # the password is read from this variable",
            "  ports:  # node: the switch interface (breakout leg) its cable lands on. EDIT",
            *(f"    {_scalar(name)}: {switch_port_name(i)}" for i, name in enumerate(names)),
            "cables:",
            "  approved:  # NVIDIA's Spark DACs; add the breakout cables you bought",
            *(f"    - {{vendor: {c.vendor}, part: {c.part}}}" for c in NVIDIA_APPROVED),
        ]
        if not ssh:
            out.append("    - {vendor: PHILISUN, part: QDD-2Q56-PC01}  # the simulated breakout")
    nccl = NcclSpec()
    out += [
        "nccl:  # as NVIDIA's nccl playbook builds it: NCCL in ~/nccl, nccl-tests in ~/nccl-tests,",
        "  # Open MPI from apt (MPI_HOME /usr/lib/aarch64-linux-gnu/openmpi); paths given, not",
        "  # exported: a non-interactive ssh shell has neither on PATH or LD_LIBRARY_PATH",
        f"  binary: {nccl.binary}",
        f'  launcher: "{nccl.launcher}"',
    ]
    return "\n".join(out) + "\n"
