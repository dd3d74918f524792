"""`sparkfabric check`'s warnings: what a valid cluster.yaml still gets wrong at run time (a value
marked EDIT, an unset switch password variable, a documentation address as a host, with
`resolve=True` an ssh host that does not resolve: it needs DNS, and check works offline)."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster import Problem
from pytest_sparkfabric.cluster.plan import NVIDIA_SWITCH_NODES
from pytest_sparkfabric.transport.process import ssh_shows

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster

DOC_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)
_EDIT = re.compile(r"#.*\bEDIT\b")
Resolver = Callable[[str], str | None]
"""host -> None when it resolves, else why not."""


def documentation_network(host: str) -> str | None:
    """The documentation network `host` lies in (a placeholder, never a real host), or None."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    return next((str(n) for n in DOC_NETWORKS if ip.version == n.version and ip in n), None)


def check(
    cluster: Cluster, *, env: Mapping[str, str], resolve: Resolver | None = None
) -> list[Problem]:
    """Every warning for a valid cluster, in file order where it has a line. Only a cluster
    reached over ssh has anything to fail on: the simulator and a replay contact nothing."""
    spec, out = cluster.spec, []

    def warn(path: tuple[str | int, ...], what: str, fix: str, line: int | None = None) -> None:
        out.append(Problem(path, line or cluster.line_of(path), what, fix))

    if cluster.topology == "switch" and (n := len(cluster.nodes)) > NVIDIA_SWITCH_NODES:
        # More Sparks behind a switch than NVIDIA supports: the suite tests them, NVIDIA may not.
        what = f"{n} nodes behind a switch: NVIDIA supports up to {NVIDIA_SWITCH_NODES} (the suite "
        what += "tests any number the switch has legs for)"
        fix = "nothing to change for the suite; for NVIDIA support split the cluster into groups "
        warn((), what, fix + f"of {NVIDIA_SWITCH_NODES}", cluster.line_of(("nodes",)))
    if spec.transport != "ssh":
        return out
    text = cluster.located.text if cluster.located else ""
    for n, raw in enumerate(text.splitlines(), 1):
        if m := _EDIT.search(raw):
            what = f"`{raw[: m.start()].strip() or raw.strip()}` is still marked EDIT"
            warn((), what, "set the value for your cluster, then delete EDIT from the comment", n)
    for i, node in enumerate(spec.nodes):
        host = node.ssh.host if node.ssh else ""
        if net := documentation_network(host):
            what = f"is a documentation address ({net}): no node answers there"
            fix = f"set {node.name}'s management address or ~/.ssh/config alias"
            warn(("nodes", i, "ssh", "host"), f"{host} {what}", fix)
        elif host and resolve is not None and (why := resolve(host)):
            what = f"does not resolve ({why}): ssh cannot reach {node.name}"
            fix = "use the node's management address, or add the alias to ~/.ssh/config (or the "
            warn(("nodes", i, "ssh", "host"), f"{host} {what}", fix + "file named by ssh_config:)")
    sw = spec.switch
    if sw is not None and (net := documentation_network(sw.host)):
        what = f"{sw.host} is a documentation address ({net}): no switch answers there, every "
        warn(
            ("switch", "host"),
            what + "switch check would fail",
            "set the switch's management address",
        )
    if sw is not None and sw.password_env and sw.password_env not in env:
        what = f"names ${sw.password_env}, which is not set here: every switch check would fail"
        fix = f"export {sw.password_env}=... (the switch user's password) before pytest"
        warn(("switch", "password_env"), what, fix)
    return sorted(out, key=lambda w: (w.line is None, w.line or 0))


def resolver(ssh_config: str | None) -> Resolver:
    """Resolve an ssh host as ssh would: through `ssh -G` (aliases, HostName), then DNS."""
    config = ["-F", str(Path(ssh_config).expanduser())] if ssh_config else []

    def resolve(host: str) -> str | None:
        name = ssh_shows([*config, "--", host], "hostname", timeout_s=10) or host
        try:
            socket.getaddrinfo(name, 22, proto=socket.IPPROTO_TCP)
        except (socket.gaierror, UnicodeError) as exc:
            via = f"ssh config HostName {name}: " if name != host else ""
            return f"{via}{getattr(exc, 'strerror', None) or exc}"
        return None

    return resolve
