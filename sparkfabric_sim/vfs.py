"""The files a node shows: /etc, the ssh user's home, /proc/sys, /sys.

The tree (which paths exist, static contents) is built once per node; contents that change
with time (carrier, operstate, temperatures, port state) are functions of the runtime and the
time, evaluated when read. The two sysfs symlinks the tools rely on
(`/sys/class/net/IF/device` and `/sys/class/infiniband/DEV/device`, both to
`/sys/bus/pci/devices/BDF`) are resolved by prefix.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_sparkfabric.cluster import hardware
from sparkfabric_sim import counters, gids
from sparkfabric_sim.hardware import Netdev

if TYPE_CHECKING:
    from sparkfabric_sim.hardware import SimNode
    from sparkfabric_sim.state import Runtime

ENOENT = "No such file or directory"
EISDIR = "Is a directory"
EINVAL = "Invalid argument"


class VfsError(OSError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Dynamic = Callable[["Runtime", float], str]
Entry = str | VfsError | Dynamic
LLDPD_SOCKET = "/run/lldpd.socket"
_EINVAL = VfsError(EINVAL)  # one for the ~250 unused GID slots of each device; raised anew


class Tree:
    """Every path of one node, with static contents or a function of (runtime, time)."""

    def __init__(self, node: SimNode, seed: int) -> None:
        self.node = node
        self.links = [
            link
            for dev in node.netdevs
            for link in (
                (f"/sys/class/net/{dev.name}/device", f"/sys/bus/pci/devices/{dev.pci}"),
                (f"/sys/class/infiniband/{dev.rdma}/device", f"/sys/bus/pci/devices/{dev.pci}"),
            )
        ]
        self.files = _build(node, seed)
        self._resolved: dict[str, str] = {}
        # lldpd(8) listens on its control socket (lldpd's default `-u /run/lldpd.socket`),
        # which lldpctl talks to: where lldpd is not installed there is none.
        self.sockets = frozenset() if "lldpctl" in node.missing else frozenset({LLDPD_SOCKET})

    @functools.cached_property
    def children(self) -> dict[str, set[str]]:
        """Directory -> its entries; built when first listed (reading a file needs none)."""
        children: dict[str, set[str]] = {}
        # A node has ~10k paths (GID tables) in a few hundred directories: each path adds its
        # name to its parent; a parent's own ancestors are walked once, when it is first seen.
        for path in [*self.files, *(link for link, _ in self.links)]:
            parent, _, name = path.rpartition("/")
            while True:
                entries = children.get(parent or "/")
                if entries is not None:
                    entries.add(name)
                    break
                children[parent or "/"] = {name}
                if not parent:
                    break
                parent, _, name = parent.rpartition("/")
        return children

    def resolve(self, path: str) -> str:
        # The links never change: each round's counter reads resolve the same paths again.
        real = self._resolved.get(path)
        if real is None:
            real = self._resolved[path] = self._resolve(path)
        return real

    def _resolve(self, path: str) -> str:
        path = "/" + "/".join(p for p in path.split("/") if p and p != ".")
        for link, target in self.links:
            if path == link or path.startswith(link + "/"):
                return target + path[len(link) :]
        return path


class Vfs:
    def __init__(self, rt: Runtime, tree: Tree, t: float) -> None:
        self.rt = rt
        self.tree = tree
        self.t = t

    def kind(self, path: str) -> str | None:
        real = self.tree.resolve(path)
        if real in self.tree.files:
            return "file"
        if real in self.tree.sockets:
            return "socket"
        return "dir" if real in self.tree.children else None

    def read(self, path: str) -> str:
        entry = self.tree.files.get(self.tree.resolve(path))
        if entry is None:
            raise VfsError(EISDIR if self.kind(path) == "dir" else ENOENT)
        if isinstance(entry, VfsError):
            raise VfsError(entry.reason)
        return entry if isinstance(entry, str) else entry(self.rt, self.t)

    def listdir(self, path: str) -> list[str]:
        return sorted(self.tree.children.get(self.tree.resolve(path), ()))

    def glob(self, pattern: str) -> list[str]:
        """Shell pathname expansion of `*`, `?` and `[...]`; no match -> []."""
        found = ["/"] if pattern.startswith("/") else [""]
        for part in (p for p in pattern.split("/") if p):
            nxt = []
            for base in found:
                prefix = base.rstrip("/")
                if any(c in part for c in "*?["):
                    for name in self.listdir(prefix or "/"):
                        if fnmatch.fnmatchcase(name, part) and not name.startswith("."):
                            nxt.append(f"{prefix}/{name}")
                elif self.kind(f"{prefix}/{part}") is not None:
                    nxt.append(f"{prefix}/{part}")
            found = nxt
        return sorted(found)


def _build(node: SimNode, seed: int) -> dict[str, Entry]:
    files: dict[str, Entry] = dict(node.files)
    files["/proc/sys/kernel/hostname"] = f"{node.name}\n"
    # proc(5): "/proc/uptime: the uptime of the system (including time spent in suspend) and
    # the amount of time spent in the idle process", both in seconds; 20 idle cores.
    files["/proc/uptime"] = lambda rt, t: (
        f"{rt.uptime(node.name, t):.2f} {rt.uptime(node.name, t) * 20:.2f}\n"
    )
    for key, value in node.sysctls.items():
        files["/proc/sys/" + key.replace(".", "/")] = f"{value}\n"
    files.update(_mgmt(node))
    for slot, dev in enumerate(node.netdevs):
        files.update(_net(dev))
        files.update(_pci(node, dev, slot))
        files.update(_infiniband(dev, seed))
    return files


def _uptime(node: str, rt: Runtime, t: float) -> str:
    up = rt.uptime(node, t)
    return f"{up:.2f} {up * 20:.2f}\n"


def _mgmt(node: SimNode) -> dict[str, Entry]:
    base = f"/sys/class/net/{hardware.MGMT_NETDEV}"
    lo = "/sys/class/net/lo"
    return {
        f"{base}/mtu": "1500\n",
        f"{base}/operstate": "up\n",
        f"{base}/carrier": "1\n",
        f"{base}/speed": "10000\n",
        f"{base}/address": f"{node.mgmt.mac}\n",
        f"{lo}/mtu": "65536\n",
        f"{lo}/operstate": "unknown\n",
        f"{lo}/carrier": "1\n",
    }


def _when_up(dev: Netdev, up: str, down: str) -> Dynamic:
    return lambda rt, t: up if rt.carrier(dev, t) else down


def _net(dev: Netdev) -> dict[str, Entry]:
    base = f"/sys/class/net/{dev.name}"
    return {
        f"{base}/mtu": f"{dev.mtu}\n",
        f"{base}/operstate": _when_up(dev, "up\n", "down\n"),
        f"{base}/carrier": _when_up(dev, "1\n", "0\n"),
        f"{base}/speed": lambda rt, t: (
            f"{rt.model.link_speed_mbps(dev.node, dev.port)}\n" if rt.carrier(dev, t) else "-1\n"
        ),
        f"{base}/duplex": _when_up(dev, "full\n", "unknown\n"),
        f"{base}/address": f"{dev.mac}\n",
        f"{base}/ifindex": f"{dev.ifindex}\n",
        f"{base}/type": "1\n",
    }


def _pci(node: SimNode, dev: Netdev, slot: int) -> dict[str, Entry]:
    base = f"/sys/bus/pci/devices/{dev.pci}"
    hwmon = f"{base}/hwmon/hwmon{2 + slot}"
    speed = f"{hardware.PCIE_SPEED_GTS:.1f} GT/s PCIe\n"

    def temp(rt: Runtime, t: float) -> str:
        return f"{round(rt.nic_temp(dev.node, t) * 1000)}\n"

    return {
        f"{base}/current_link_speed": speed,
        f"{base}/current_link_width": f"{node.width(dev.rail)}\n",
        f"{base}/max_link_speed": speed,
        f"{base}/max_link_width": f"{hardware.PCIE_WIDTH}\n",
        f"{base}/vendor": "0x15b3\n",
        f"{base}/device": "0x1021\n",
        f"{base}/net/{dev.name}/ifindex": f"{dev.ifindex}\n",
        f"{hwmon}/name": "mlx5\n",
        f"{hwmon}/temp1_input": temp,
        f"{hwmon}/temp1_label": "asic\n",
        f"{hwmon}/temp1_crit": "105000\n",
    }


def _hw_counter(dev: Netdev, name: str) -> Dynamic:
    return lambda rt, t: f"{counters.hw_counter(rt, dev, name, t)}\n"


def _infiniband(dev: Netdev, seed: int) -> dict[str, Entry]:
    base = f"/sys/class/infiniband/{dev.rdma}/ports/1"
    out: dict[str, Entry] = {
        f"{base}/state": _when_up(dev, "4: ACTIVE\n", "1: DOWN\n"),
        f"{base}/phys_state": _when_up(dev, "5: LinkUp\n", "3: Disabled\n"),
        f"{base}/rate": _when_up(dev, "200 Gb/sec (4X HDR)\n", "40 Gb/sec (4X QDR)\n"),
        f"{base}/link_layer": "Ethernet\n",
    }
    for name in counters.hw_counters_names():
        out[f"{base}/hw_counters/{name}"] = _hw_counter(dev, name)
    table = {g.index: g for g in gids.table(seed, dev)}
    zero = "0000:0000:0000:0000:0000:0000:0000:0000\n"
    for i in range(gids.TABLE_SIZE):
        g = table.get(i)
        out[f"{base}/gids/{i}"] = f"{g.sysfs}\n" if g else zero
        out[f"{base}/gid_attrs/types/{i}"] = f"{g.type}\n" if g else _EINVAL
        out[f"{base}/gid_attrs/ndevs/{i}"] = f"{g.ndev}\n" if g else _EINVAL
    return out
