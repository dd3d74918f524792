"""The files a node shows at a virtual time: /etc, the ssh user's home, /proc/sys, /sys.

Built per command (values depend on the time), area by area on first use. The two sysfs
symlinks the tools rely on (`/sys/class/net/IF/device` and `/sys/class/infiniband/DEV/device`,
both to `/sys/bus/pci/devices/BDF`) are resolved by prefix.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from pytest_sparkfabric import spark
from pytest_sparkfabric.sim import gids
from pytest_sparkfabric.sim.hardware import LINE_RATE_MBPS, Netdev

if TYPE_CHECKING:
    from pytest_sparkfabric.sim.hardware import SimNode
    from pytest_sparkfabric.sim.state import Runtime

ENOENT = "No such file or directory"
EISDIR = "Is a directory"
EINVAL = "Invalid argument"


class VfsError(OSError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Entry = str | VfsError


class Vfs:
    def __init__(self, rt: Runtime, node: SimNode, t: float) -> None:
        self.rt = rt
        self.node = node
        self.t = t
        self._files: dict[str, Entry] | None = None
        self._dirs: set[str] = set()

    # -- resolution -------------------------------------------------------------------------

    def _links(self) -> list[tuple[str, str]]:
        out = []
        for dev in self.node.netdevs:
            pci = f"/sys/bus/pci/devices/{dev.pci}"
            out.append((f"/sys/class/net/{dev.name}/device", pci))
            out.append((f"/sys/class/infiniband/{dev.rdma}/device", pci))
        return out

    def resolve(self, path: str) -> str:
        path = "/" + "/".join(p for p in path.split("/") if p and p != ".")
        for link, target in self._links():
            if path == link or path.startswith(link + "/"):
                return target + path[len(link) :]
        return path

    def files(self) -> dict[str, Entry]:
        if self._files is None:
            self._files = self._build()
            for path in self._files:
                parts = path.split("/")
                for i in range(1, len(parts)):
                    self._dirs.add("/".join(parts[:i]) or "/")
            for link, _ in self._links():
                self._dirs.add(link)
        return self._files

    # -- queries ----------------------------------------------------------------------------

    def kind(self, path: str) -> str | None:
        real = self.resolve(path)
        files = self.files()
        if real in files:
            return "file"
        if real in self._dirs or real == "/":
            return "dir"
        return None

    def read(self, path: str) -> str:
        real = self.resolve(path)
        entry = self.files().get(real)
        if entry is None:
            raise VfsError(EISDIR if self.kind(path) == "dir" else ENOENT)
        if isinstance(entry, VfsError):
            raise entry
        return entry

    def listdir(self, path: str) -> list[str]:
        real = self.resolve(path).rstrip("/")
        names = set()
        for p in [*self.files(), *self._dirs]:
            if p.startswith(real + "/"):
                names.add(p[len(real) + 1 :].split("/")[0])
        return sorted(names)

    def glob(self, pattern: str) -> list[str]:
        """Shell pathname expansion of `*`, `?` and `[...]`; no match -> []."""
        parts = [p for p in pattern.split("/") if p]
        found = ["/"] if pattern.startswith("/") else [""]
        for part in parts:
            nxt = []
            for base in found:
                prefix = base.rstrip("/") if base != "/" else ""
                if any(c in part for c in "*?["):
                    for name in self.listdir(prefix or "/"):
                        if fnmatch.fnmatchcase(name, part) and not name.startswith("."):
                            nxt.append(f"{prefix}/{name}")
                else:
                    candidate = f"{prefix}/{part}"
                    if self.kind(candidate) is not None:
                        nxt.append(candidate)
            found = nxt
        return sorted(found)

    # -- content ----------------------------------------------------------------------------

    def _build(self) -> dict[str, Entry]:
        files: dict[str, Entry] = dict(self.node.files)
        files["/proc/sys/kernel/hostname"] = f"{self.node.name}\n"
        for key, value in self.node.sysctls.items():
            files["/proc/sys/" + key.replace(".", "/")] = f"{value}\n"
        files.update(self._net_mgmt())
        for slot, dev in enumerate(self.node.netdevs):
            files.update(self._net(dev))
            files.update(self._pci(dev, slot))
            files.update(self._infiniband(dev))
        return files

    def _net_mgmt(self) -> dict[str, Entry]:
        base = f"/sys/class/net/{spark.MGMT_NETDEV}"
        lo = "/sys/class/net/lo"
        return {
            f"{base}/mtu": "1500\n",
            f"{base}/operstate": "up\n",
            f"{base}/carrier": "1\n",
            f"{base}/speed": "10000\n",
            f"{base}/address": f"{self.node.mgmt.mac}\n",
            f"{lo}/mtu": "65536\n",
            f"{lo}/operstate": "unknown\n",
            f"{lo}/carrier": "1\n",
        }

    def _net(self, dev: Netdev) -> dict[str, Entry]:
        base = f"/sys/class/net/{dev.name}"
        up = self.rt.carrier(dev, self.t)
        return {
            f"{base}/mtu": f"{dev.mtu}\n",
            f"{base}/operstate": "up\n" if up else "down\n",
            f"{base}/carrier": "1\n" if up else "0\n",
            f"{base}/speed": f"{LINE_RATE_MBPS}\n" if up else "-1\n",
            f"{base}/duplex": "full\n" if up else "unknown\n",
            f"{base}/address": f"{dev.mac}\n",
            f"{base}/ifindex": f"{dev.ifindex}\n",
            f"{base}/type": "1\n",
        }

    def _pci(self, dev: Netdev, slot: int) -> dict[str, Entry]:
        base = f"/sys/bus/pci/devices/{dev.pci}"
        hwmon = f"{base}/hwmon/hwmon{2 + slot}"
        temp = round(self.rt.nic_temp(dev.node, self.t) * 1000)
        width = self.node.width(dev.rail)
        speed = f"{spark.PCIE_SPEED_GTS:.1f} GT/s PCIe\n"
        return {
            f"{base}/current_link_speed": speed,
            f"{base}/current_link_width": f"{width}\n",
            f"{base}/max_link_speed": speed,
            f"{base}/max_link_width": f"{spark.PCIE_WIDTH}\n",
            f"{base}/vendor": "0x15b3\n",
            f"{base}/device": "0x1021\n",
            f"{base}/net/{dev.name}/ifindex": f"{dev.ifindex}\n",
            f"{hwmon}/name": "mlx5\n",
            f"{hwmon}/temp1_input": f"{temp}\n",
            f"{hwmon}/temp1_label": "asic\n",
            f"{hwmon}/temp1_crit": "105000\n",
        }

    def _infiniband(self, dev: Netdev) -> dict[str, Entry]:
        base = f"/sys/class/infiniband/{dev.rdma}/ports/1"
        up = self.rt.carrier(dev, self.t)
        out: dict[str, Entry] = {
            f"{base}/state": "4: ACTIVE\n" if up else "1: DOWN\n",
            f"{base}/phys_state": "5: LinkUp\n" if up else "3: Disabled\n",
            f"{base}/rate": "200 Gb/sec (4X HDR)\n" if up else "40 Gb/sec (4X QDR)\n",
            f"{base}/link_layer": "Ethernet\n",
        }
        table = {g.index: g for g in gids.table(self.rt.model.seed, dev)}
        zero = "0000:0000:0000:0000:0000:0000:0000:0000\n"
        for i in range(gids.TABLE_SIZE):
            g = table.get(i)
            out[f"{base}/gids/{i}"] = f"{g.sysfs}\n" if g else zero
            out[f"{base}/gid_attrs/types/{i}"] = f"{g.type}\n" if g else VfsError(EINVAL)
            out[f"{base}/gid_attrs/ndevs/{i}"] = f"{g.ndev}\n" if g else VfsError(EINVAL)
        return out
