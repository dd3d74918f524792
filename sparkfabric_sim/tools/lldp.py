"""`lldpctl` (lldpd): the neighbour lldpd hears on each fabric netdev with a live link.

Which box is at the far end follows the simulated cables, so a cable in the wrong port shows
here as it would on a real cluster running lldpd on every node. A rail netdev hears the far
port's netdev of the same rail (one lldpd per netdev; which function of a shared QSFP port
receives the peer's frames on a ConnectX-7 was not found in a source, and the product judges
the far end by box and port only). Neighbours behind a switch are not modelled: RouterOS
LLDP is not simulated, so those ports have none.
"""

from __future__ import annotations

from sparkfabric_sim.hardware import ARCH, KERNEL_RELEASE
from sparkfabric_sim.model import OS_RELEASE
from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.render import lldp as render
from sparkfabric_sim.render.iperf3 import BUILD
from sparkfabric_sim.world import Ctx

# lldpd's advertised SysDescr on Linux: the distribution's PRETTY_NAME then `uname -srvm`
# (sample: "Ubuntu 20.04.4 LTS Linux 5.4.0-110-generic #124-Ubuntu SMP ... x86_64").
_PRETTY = next(
    line.split("=", 1)[1].strip('"') for line in OS_RELEASE.splitlines() if "PRETTY" in line
)
SYS_DESCR = f"{_PRETTY} Linux {KERNEL_RELEASE} {BUILD} {ARCH}"
UPTIME_S = 3600


def lldpctl(ctx: Ctx, argv: list[str]) -> Outcome:
    extra = [a for a in argv[1:] if a not in ("-d",)]
    if extra and extra[0].startswith("-"):
        return fail(1, f"lldpctl: invalid option -- '{extra[0].lstrip('-')[:1]}'\n")
    out: list[render.Neighbour] = []
    rids: dict[str, int] = {}
    for dev in ctx.node.netdevs:
        if not ctx.rt.carrier(dev, ctx.t):
            continue
        for peer in ctx.model.l2_peers(dev):
            far_cable = ctx.model.cable_of(peer.node, peer.port)
            if far_cable is None or far_cable.b is None or not ctx.rt.carrier(peer, ctx.t):
                continue
            far = ctx.model.node(peer.node)
            rid = rids.setdefault(far.name, len(rids) + 1)
            out.append(
                render.Neighbour(
                    local_port=dev.name,
                    rid=rid,
                    age_s=UPTIME_S + int(ctx.t),
                    chassis_mac=far.mgmt.mac,
                    sys_name=far.name,
                    sys_descr=SYS_DESCR,
                    mgmt_ip=str(far.mgmt.address.ip),
                    port_mac=peer.mac,
                    port_descr=peer.name,
                )
            )
    return ok(render.lldpctl(out))


TOOLS = {"lldpctl": lldpctl}
