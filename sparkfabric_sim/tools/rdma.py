"""rdma-core's `ibv_devinfo`: every RoCE device of the node (or `-d DEV`), its port's state and
active MTU, as libibverbs examples/devinfo.c prints them."""

from __future__ import annotations

import functools

from sparkfabric_sim import noise, roce
from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.render import misc
from sparkfabric_sim.tools.args import ArgError, Parser
from sparkfabric_sim.tools.ethtool import FIRMWARE
from sparkfabric_sim.world import Ctx

# A GB10 whose port is down reads active_mtu 1024 (3) whatever its netdev MTU
# (tests/data/ibv_devinfo/gb10-four-devices-port0-cabled-mtu9000.txt).
DOWN_MTU = 1024


@functools.cache
def _parser() -> Parser:
    p = Parser("ibv_devinfo")
    p.add_argument("-d", "--ib-dev", dest="dev")
    p.add_argument("-i", "--ib-port", dest="port", type=int, default=0)
    p.add_argument("-v", "--verbose", action="store_true", dest="verbose")
    p.add_argument("-l", "--list", action="store_true", dest="list")
    return p


def ibv_devinfo(ctx: Ctx, argv: list[str]) -> Outcome:
    try:
        a = _parser().parse_args(argv[1:])
    except ArgError:
        return fail(255, "")
    # devinfo.c lists devices in the order ibv_get_device_list gives them: rail 0 first.
    devs = sorted(ctx.node.netdevs, key=lambda d: (d.rail, d.port))
    if a.list:
        return ok(f"{len(devs)} HCAs found:\n" + "".join(f"\t{d.rdma}\n" for d in devs) + "\n")
    if a.dev is not None:
        devs = [d for d in devs if d.rdma == a.dev]
        if not devs:
            return fail(255, f"IB device '{a.dev}' wasn't found\n")
    fw, _, psid = (ctx.node.firmware or FIRMWARE).partition(" ")
    blocks = []
    for d in devs:
        up = ctx.rt.carrier(d, ctx.t)
        guid = noise.hex_id(ctx.seed, 64, "guid", d.node, d.rdma)
        text = ":".join(f"{(guid >> s) & 0xFFFF:04x}" for s in (48, 32, 16, 0))
        mtu = roce.active_mtu(d.mtu) if up else DOWN_MTU
        blocks.append(misc.ibv_devinfo_port(d.rdma, (fw, psid.strip("()")), text, up, mtu))
    return ok("\n".join(blocks))


TOOLS = {"ibv_devinfo": ibv_devinfo}
