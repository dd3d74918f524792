"""`mlnx_qos -i <netdev>` (Mellanox/mlnx-tools `python/mlnx_qos`): the host's PFC and trust state.

Layout from mlnx-tools `pretty_print` (HEAD 8fbfd9cf, L294-367) and the real outputs in
tests/data/mlnx_qos (cx-ens6: trust pcp, PFC off everywhere, buffers with a trailing comma; cx-
ens14f0: PFC on priority 3): `DCBX mode:`, `Priority trust state:`, `Receive buffer size
(bytes):`, `Cable len:`, the `PFC configuration:` table (each value `%1d` and three spaces, so
the rows end in spaces) and one `tc:` block per traffic class. Only reading is modelled: a
setting flag (`--pfc`, `--trust`, ...) is refused, since the suite never changes a node.
"""

from __future__ import annotations

from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.world import Ctx

PRIORITIES = range(8)
# The default mapping mlnx_qos prints on mlx5: priority 0 in tc 1 and priority 1 in tc 0 (the
# IEEE 802.1Q default traffic-class order), the rest in their own class (cx-ens6 sample).
TC_OF_PRIORITY = {0: 1, 1: 0, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
RX_BUFFER_B = 524160  # cx-ens6 sample: one lossy buffer holding everything
LOSSLESS_BUFFER_B = 80256  # cx-ens14f0 sample: a buffer per lossless priority
CABLE_LEN_M = 7
USAGE = (
    "Usage: mlnx_qos -i <interface> [options]\n\n"
    "mlnx_qos: error: this simulated node only answers the read form, mlnx_qos -i <interface>\n"
)


def render(pfc: frozenset[int]) -> str:
    """What mlnx_qos prints for a netdev with PFC on `pfc` (trust pcp, OS-controlled DCBX)."""
    buffers = [RX_BUFFER_B] + [0] * 7
    buffer_of = [0] * 8
    if pfc:
        buffers = [LOSSLESS_BUFFER_B, *([LOSSLESS_BUFFER_B] * len(pfc)), *([0] * (7 - len(pfc)))]
        for i, prio in enumerate(sorted(pfc), 1):
            buffer_of[prio] = i
    lines = [
        "DCBX mode: OS controlled",
        "Priority trust state: pcp",
        "Receive buffer size (bytes): " + "".join(f"{b}," for b in buffers),
        f"Cable len: {CABLE_LEN_M}",
        "PFC configuration:",
        "\tpriority    " + "   ".join(str(p) for p in PRIORITIES),
        "\tenabled     " + "".join(f"{int(p in pfc):1d}   " for p in PRIORITIES),
        "\tbuffer      " + "".join(f"{b:1d}   " for b in buffer_of),
    ]
    for tc in PRIORITIES:
        lines.append(f"tc: {tc} ratelimit: unlimited, tsa: vendor")
        lines += [f"\t priority:  {p}" for p in PRIORITIES if TC_OF_PRIORITY[p] == tc]
    return "\n".join(lines) + "\n"


def mlnx_qos(ctx: Ctx, argv: list[str]) -> Outcome:
    args = argv[1:]
    if len(args) != 2 or args[0] not in ("-i", "--interface"):
        return fail(2, USAGE)
    dev = ctx.node.netdev(args[1])
    if dev is None:
        # mlnx_qos reads the netdev through dcbnl/sysfs; a missing one ends in this error.
        return fail(1, f"Netlink error: no such device {args[1]}\n")
    return ok(render(ctx.node.host_pfc))


TOOLS = {"mlnx_qos": mlnx_qos}
