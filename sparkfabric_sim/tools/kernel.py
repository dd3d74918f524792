"""The kernel log: util-linux `dmesg` and systemd's `journalctl -k`, over the same lines.

What a Spark's kernel says about its fabric: at boot the slot-power line every GB10 prints
(`mlx5_pcie_event ... Detected insufficient power on the PCIe slot (27W).`, seen on healthy
boxes: DOMAIN.md §4) and a "Link up" per cabled netdev; then one "Link down" and one "Link up"
(mlx5 en_main.c `mlx5e_update_carrier()`, netdev_info: `mlx5_core BDF netdev: Link down`) per
outage of the port's link (state.Runtime.outages), on both ends of the cable.

Who may read it (Ubuntu): `kernel.dmesg_restrict=1`, so dmesg as a user fails with util-linux's
`dmesg: read kernel buffer failed: Operation not permitted`; journalctl shows the kernel to
members of adm / systemd-journal, anyone else gets systemd's hint and no entries.
"""

from __future__ import annotations

from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.world import Ctx

BOOT_POWER_S = 1.533198
BOOT_LINK_S = 9.812044
SLOT_POWER = "mlx5_pcie_event:326:(pid 12): Detected insufficient power on the PCIe slot (27W)."
"""A GB10's boot line, as an operator's `dmesg` printed it (index id 71465086254)."""
JOURNAL_HINT = (
    "Hint: You are currently not seeing messages from other users and the system.\n"
    "      Users in groups 'adm', 'systemd-journal' can see all messages.\n"
    "      Pass -q to turn off this notice.\n"
)
"""systemd journal-util.c access_check_var_log_journal(), where ACLs name the groups."""


def _stamp(secs: float) -> str:
    # dmesg's and journalctl short-monotonic's "[%5lu.%06lu]"
    whole = int(secs)
    return f"[{whole:5d}.{round((secs - whole) * 1e6):06d}]"


def lines(ctx: Ctx) -> list[tuple[float, str]]:
    """The node's kernel messages up to ctx.t, stamped in seconds since boot."""
    node, rt = ctx.node, ctx.rt
    boot = rt.uptime(node.name, 0.0)
    out: list[tuple[float, str]] = []
    for domain in sorted({d.pci.split(":")[0] for d in node.netdevs}):
        out.append((BOOT_POWER_S, f"mlx5_core {domain}:01:00.0: {SLOT_POWER}"))
    for d in node.cabled:
        head = f"mlx5_core {d.pci} {d.name}:"
        out.append((BOOT_LINK_S + 0.01 * d.ifindex, f"{head} Link up"))
        for start, end in rt.outages(d.node, d.port, ctx.t):
            out.append((boot + start, f"{head} Link down"))
            if end <= ctx.t:
                out.append((boot + end, f"{head} Link up"))
    return sorted(out)


def dmesg(ctx: Ctx, argv: list[str]) -> Outcome:
    # CAP_SYSLOG: root, unless the profile made the suite's user an ordinary one (stock)
    privileged = ctx.node.user == "root" and ctx.node.reads_journal
    if ctx.node.sysctls.get("kernel.dmesg_restrict") == "1" and not privileged:
        return fail(1, "dmesg: read kernel buffer failed: Operation not permitted\n")
    return ok("".join(f"{_stamp(t)} {msg}\n" for t, msg in lines(ctx)))


def journalctl(ctx: Ctx, argv: list[str]) -> Outcome:
    if "-k" not in argv and "--dmesg" not in argv:
        return fail(1, "journalctl: only the kernel log (-k) is simulated\n")
    if not ctx.node.reads_journal:
        return Outcome(0, "-- No entries --\n", JOURNAL_HINT)
    host = ctx.node.name
    found = [f"{_stamp(t)} {host} kernel: {msg}\n" for t, msg in lines(ctx)]
    return ok("".join(found) or "-- No entries --\n")


TOOLS = {"dmesg": dmesg, "journalctl": journalctl}
