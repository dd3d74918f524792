"""The NCCL environment a job on each node really gets: cluster.yaml `nccl.env`, then
`$NCCL_CONF_FILE` (else `~/.nccl.conf`), then `/etc/nccl.conf`, in NCCL's precedence
(DOMAIN.md §3). NCCL_IB_HCA must select both RoCE devices of every cabled port, and nothing
may force the TCP (Socket) transport."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.cluster import hardware
from pytest_sparkfabric.measure import facts, nccl_run, switch
from pytest_sparkfabric.probes.ncclconf import select_hcas
from pytest_sparkfabric.probes.sysfs import find_rocev2_gid

if TYPE_CHECKING:
    from pytest_sparkfabric import Fabric, Node, Verdict
    from pytest_sparkfabric.diagnosis.rules import RuleId
    from pytest_sparkfabric.probes.ncclconf import Decided

pytestmark = pytest.mark.nccl_env

_INT = re.compile(r"^\s*[+-]?(0[xX][0-9a-fA-F]+|\d+)")


def _strtoll(value: str) -> int:
    """NCCL reads integer parameters with strtoll(value, NULL, 0): a leading number, or 0."""
    m = _INT.match(value)
    if not m:
        return 0
    text = m.group(0).strip()
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    return sign * int(digits, 16 if digits[:2].lower() == "0x" else 10)


def _decided(d: Decided) -> str:
    text = f"{d.key}={d.value} (from {d.where})"
    if d.shadowed:
        ignored = ", ".join(f"{s.value} in {s.source}" for s in d.shadowed)
        text += f"; ignored: {ignored}"
    return text


def _misnamed(env: dict[str, Decided], key: str) -> str:
    """A line that looks like `key` but names another variable (`NCCL_IB_HCA = x`)."""
    near = [d for k, d in env.items() if k != key and k.strip() == key]
    if not near:
        return ""
    d = near[0]
    return f" ({d.where} sets {d.key!r}, a different variable because of the spaces)"


def test_nccl_transport(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """Neither NCCL_NET=Socket nor NCCL_IB_DISABLE=1 forces NCCL onto TCP."""
    verdict(node=node.name, expected="NCCL may use IB/RoCE (no NCCL_NET=Socket, NCCL_IB_DISABLE=0)")
    env = nccl_run.effective(fabric, node.name).get()
    net, disable = env.get("NCCL_NET"), env.get("NCCL_IB_DISABLE")
    forced = []
    culprits = []
    if net is not None and net.value.strip().lower() == "socket":
        forced.append(_decided(net))
        culprits.append(net)
    if disable is not None and _strtoll(disable.value) != 0:
        forced.append(_decided(disable))
        culprits.append(disable)
    shown = [_decided(d) for d in (net, disable) if d is not None]
    verdict(measured="; ".join(shown) or "NCCL_NET and NCCL_IB_DISABLE unset")
    if forced:
        verdict.fail(
            f"{node.name}: {'; '.join(forced)}: NCCL runs over TCP sockets; expected "
            "the IB/RoCE transport",
            "nccl_socket",
            fix=f"on {node.name}, remove "
            + " and ".join(f"{d.key}={d.value} from {d.where}" for d in culprits),
        )


def _devices(node: Node) -> list[str]:
    std = [
        hardware.rail_names(p, i).rdma
        for p in hardware.PORTS
        for i in range(hardware.RAILS_PER_PORT)
    ]
    return list(dict.fromkeys([*std, *(r.rdma for r in node.rails)]))


def test_nccl_ib_hca(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """NCCL_IB_HCA (under NCCL's prefix/exact/exclude rules) selects every cabled RoCE device."""
    need = [r.rdma for r in node.rails]
    verdict(node=node.name, expected=f"selects {', '.join(need)}")
    env = nccl_run.effective(fabric, node.name).get()
    hca = env.get("NCCL_IB_HCA")
    value = hca.value if hca else None
    found = nccl_run.version(fabric, node.name)
    # Unknown version: read the value by both grammars, and need the devices under each.
    versions = [found] if found else [(2, 30, 4), (2, 30, 7)]
    picks = [[s.device for s in select_hcas(value, _devices(node), version=v)] for v in versions]
    selected = [d for d in picks[0] if all(d in p for p in picks)]
    shown = _decided(hca) if hca else "NCCL_IB_HCA unset (NCCL uses every RoCE device)"
    if found:
        under = f"NCCL {'.'.join(map(str, found))}"
    elif picks[0] != picks[-1]:
        under = (
            f"no libnccl.so.2.x.y found: NCCL <= 2.30.4 selects {', '.join(picks[0]) or 'nothing'}"
            f", >= 2.30.7 selects {', '.join(picks[-1]) or 'nothing'}"
        )
    else:
        under = "NCCL version not found (same under every grammar)"
    shown = f"{shown} under {under}"
    verdict(measured=f"{shown}; selects {', '.join(selected) or 'nothing'}")
    missing = [d for d in need if d not in selected]
    if missing:
        rule: RuleId = "nccl_wrong_hca" if len(missing) == len(need) else "nccl_single_hca"
        verdict.fail(
            f"{node.name}: {shown} selects {', '.join(selected) or 'no device'}, not "
            f"{', '.join(missing)}{_misnamed(env, 'NCCL_IB_HCA')}; expected every RoCE device "
            f"of the cabled port(s): {','.join(need)}",
            rule,
            fix=f"on {node.name}, set NCCL_IB_HCA={','.join(need)}"
            + (f" in {hca.where}" if hca else " in /etc/nccl.conf or the job environment"),
        )


def test_nccl_gid_index(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """A pinned NCCL_IB_GID_INDEX is, on every rail, the RoCE v2 GID of the rail's IPv4 (NCCL
    uses one index for every device; unset, NCCL 2.21.5+ picks that GID per device)."""
    verdict(node=node.name, expected="NCCL_IB_GID_INDEX unset, or each rail's RoCE v2 IPv4 GID")
    env = nccl_run.effective(fabric, node.name).get()
    pinned = env.get("NCCL_IB_GID_INDEX")
    if pinned is None:
        verdict(measured="NCCL_IB_GID_INDEX unset (NCCL picks the RoCE v2 IPv4 GID per device)")
        return
    index = _strtoll(pinned.value)
    wrong: list[str] = []
    seen: list[str] = []
    for rail in node.rails:
        roce = facts.roce(fabric, rail).get()
        right = find_rocev2_gid(roce.gids, rail.netdev, rail.address.ip)
        at = next((g for g in roce.gids if g.index == index), None)
        there = f"{at.type or '?'} {at.ipv4 or at.gid}" if at else "no GID"
        shown = f"{right.index}" if right else "none"
        seen.append(f"{rail.rdma} v2 IPv4 GID {shown}")
        if right is None or right.index != index:
            wrong.append(
                f"{rail.rdma} ({rail.label}): index {index} holds {there}; the RoCE v2 GID of "
                f"{rail.address.ip} is {'index ' + shown if right else 'missing'}"
            )
    verdict(measured=f"{_decided(pinned)}; " + ", ".join(seen))
    if wrong:
        verdict.fail(
            f"{node.name}: {_decided(pinned)} applies to every RoCE device: "
            + "; ".join(wrong)
            + f"{_misnamed(env, 'NCCL_IB_GID_INDEX')}",
            "nccl_gid_index",
        )


def test_nccl_socket_ifname(node: Node, fabric: Fabric, verdict: Verdict) -> None:
    """NCCL_SOCKET_IFNAME (under NCCL's rules) and Open MPI's interface lists name a running
    interface with an address that the other nodes reach (the management port, enP7s7)."""
    verdict(node=node.name, expected="a running interface with an address every node reaches")
    choice = nccl_run.socket_choice(fabric, node.name)
    if choice is None:
        nccl_run.effective(fabric, node.name).get()
        facts.node(fabric, node.name).get()
        return
    picked = choice.selected[0] if choice.selected else "nothing"
    verdict(measured=f"{choice.setting}; NCCL bootstraps over {picked}")
    found = nccl_run.problems(fabric, node.name)
    if found and choice.down_fabric:
        note, rule = switch.leg_note(fabric, node.name)
        verdict.fail(
            f"{node.name}: " + "; ".join(found) + f"; the fabric netdev it names has no link{note}",
            rule or "link_down",
        )
    if found:
        verdict.fail(f"{node.name}: " + "; ".join(found), "nccl_socket_ifname")
