"""ethtool 6.x on mlx5 netdevs: settings, -S, -m, --show-fec, -i."""

from __future__ import annotations

from pytest_sparkfabric.cluster import hardware
from sparkfabric_sim import counters, noise, thermal
from sparkfabric_sim.hardware import KERNEL_RELEASE
from sparkfabric_sim.outcome import Outcome, fail, ok
from sparkfabric_sim.render import ethtool as render
from sparkfabric_sim.world import Ctx

MODES = {
    "-S": "stats",
    "--statistics": "stats",
    "-m": "module",
    "--dump-module-eeprom": "module",
    "--module-info": "module",
    "--show-fec": "fec",
    "-i": "driver",
    "--driver": "driver",
}
BAD_ARGS = "ethtool: bad command line argument(s)\nFor more information run ethtool -h\n"
FIRMWARE = "28.45.1020 (NVD0000000033)"
NO_DEVICE = "netlink error: no device matches name (offset 24)\nnetlink error: No such device\n"


def _driver(pci: str, firmware: str = FIRMWARE) -> str:
    return (
        f"driver: mlx5_core\nversion: {KERNEL_RELEASE}\n"
        f"firmware-version: {firmware}\nexpansion-rom-version: \nbus-info: {pci}\n"
        "supports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\n"
        "supports-register-dump: no\nsupports-priv-flags: yes\n"
    )


def ethtool(ctx: Ctx, argv: list[str]) -> Outcome:
    mode = "settings"
    names: list[str] = []
    for arg in argv[1:]:
        if arg in MODES:
            mode = MODES[arg]
        elif arg in ("-I", "--include-statistics"):
            continue
        elif arg.startswith("-"):
            return fail(1, BAD_ARGS)
        else:
            names.append(arg)
    if len(names) != 1:
        return fail(1, BAD_ARGS)
    name = names[0]
    if name == hardware.MGMT_NETDEV:
        return _mgmt(mode, name)
    dev = ctx.node.netdev(name)
    if dev is None:
        if mode == "stats":
            return fail(1, "Cannot get stats strings information: No such device\n")
        return fail(1, NO_DEVICE)
    link = ctx.rt.carrier(dev, ctx.t)
    if mode == "settings":
        cable = ctx.model.cable_of(dev.node, dev.port)
        lanes = len(cable.spec.lanes_in_use) if cable and ctx.model.kernel_lanes else None
        speed = ctx.model.link_speed_mbps(dev.node, dev.port)
        return ok(render.settings(name, link, speed, lanes=lanes))
    if mode == "stats":
        return ok(render.stats(counters.ethtool_stats(ctx.rt, dev, ctx.t)))
    if mode == "fec":
        return ok(render.fec(name, link))
    if mode == "driver":
        return ok(_driver(dev.pci, ctx.node.firmware or FIRMWARE))
    cable = ctx.model.cable_of(dev.node, dev.port)
    if cable is None:
        return fail(1, "netlink error: Input/output error\n")
    reading = None
    if cable.spec.reports_temperature:
        temp = ctx.rt.nic_temp(dev.node, ctx.t) - thermal.MODULE_BELOW_NIC_C
        volts = noise.uniform(ctx.seed, 3.28, 3.32, "vcc", dev.node, dev.port)
        reading = render.ModuleReading(round(temp, 2), volts)
    return ok(render.module(cable.spec, reading))


def _mgmt(mode: str, name: str) -> Outcome:
    if mode == "module":
        return fail(1, "netlink error: Operation not supported\n")
    if mode == "stats":
        return ok(render.stats([("rx_packets", 183442), ("tx_packets", 161208)]))
    if mode == "fec":
        return fail(1, "netlink error: Operation not supported\n")
    return ok(render.settings(name, True, 10000, render.MGMT_MODES, "Twisted Pair"))


TOOLS = {"ethtool": ethtool}
