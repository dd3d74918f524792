"""The simulated MikroTik switch's RouterOS 7 REST API (read-only; every JSON value a string).

GET  /rest/interface/ethernet                 config of every port (name, mtu, l2mtu,
                                              auto-negotiation, speed, running, ...)
GET  /rest/interface/bridge                   the bridge
GET  /rest/interface/bridge/port              membership, `hw` (requested) and `hw-offload`
GET  /rest/interface/ethernet/switch/qos/port trust-l3, pfc, egress-rate-queue0..7
GET  /rest/system/resource                    version, board-name, cpu-load, ...
POST /rest/interface/ethernet/monitor         {"numbers": "a,b", "once": ""} -> live status
POST /rest/interface/ethernet/print           {"stats": ""} -> counters (rx-fcs-error, ...)

REST paths are the console paths under /rest (RouterOS REST is a JSON wrapper of the console
API). The QoS path is the documented CLI path `/interface/ethernet/switch/qos/port`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sparkfabric_sim import noise
from sparkfabric_sim.counters import lane_errors, link_uptime
from sparkfabric_sim.switch_config import LegConfig, SwitchConfig

if TYPE_CHECKING:
    from pytest_sparkfabric.transport.base import Clock
    from sparkfabric_sim.world import World

Row = dict[str, str]
FRAME_B = 4150
"""Bytes per frame on the fabric (RoCE at MTU 4096 plus headers)."""
CORRECTED_PER_UNCORRECTED = 4000


class RestError(Exception):
    """An HTTP error answer: `status` and RouterOS's JSON error body."""

    def __init__(self, status: int, message: str, detail: str = "") -> None:
        super().__init__(f"{status} {message}: {detail}".rstrip(": "))
        self.status = status
        self.body = {"error": str(status), "message": message, "detail": detail}


def _b(value: bool) -> str:
    return "true" if value else "false"


class SimSwitch:
    def __init__(self, world: World, clock: Clock) -> None:
        self.world = world
        self.clock = clock
        assert world.model.switch is not None
        self.config: SwitchConfig = world.model.switch
        self.console_log: list[str] = []
        """Every console command received over SSH, in order (switch_console.py)."""

    # -- state --------------------------------------------------------------------------------

    def _leg(self, name: str) -> LegConfig | None:
        return next((leg for leg in self.config.legs if leg.name == name), None)

    def running(self, name: str) -> bool:
        leg = self._leg(name)
        if leg is None:
            return name == "ether1"
        return self.world.runtime.port_up(leg.node, self._node_port(leg), self.clock.now())

    def _node_port(self, leg: LegConfig) -> int:
        return self.world.model.node(leg.node).cabled_ports[0]

    def cpu_load(self) -> int:
        seed, now = self.world.model.seed, self.clock.now()
        bucket = int(now)
        if self.config.hw_offload:
            return int(noise.uniform(seed, 1, 5, "cpu", bucket))
        # Software forwarding loads the CPU while fabric traffic crosses the switch, and only
        # then (DOMAIN.md section 7: high cpu-load with ~5-10 Gb/s ceilings): a read after
        # the traffic ended sees an idle CPU, so the load must be sampled during traffic.
        if self.world.runtime.switch_busy_until > now:
            return int(noise.uniform(seed, 88, 100, "cpu", bucket))
        return int(noise.uniform(seed, 9, 16, "cpu", bucket))

    def _mac(self, i: int) -> str:
        base = noise.hex_id(self.world.model.seed, 24, "switch-mac")
        tail = (base + i) & 0xFFFFFF
        return "d4:01:c3:" + ":".join(f"{(tail >> s) & 0xFF:02x}" for s in (16, 8, 0))

    # -- tables -------------------------------------------------------------------------------

    def ethernet(self) -> list[Row]:
        rows = []
        for i, name in enumerate(self.config.interfaces()):
            leg = self._leg(name)
            mtu = leg.mtu if leg else 1500
            l2mtu = leg.l2mtu if leg else (1592 if name == "ether1" else 9216)
            row: Row = {
                ".id": f"*{i + 1:X}",
                "name": name,
                "default-name": name,
                "mtu": str(mtu),
                "l2mtu": str(l2mtu),
                "mac-address": self._mac(i),
                "orig-mac-address": self._mac(i),
                "arp": "enabled",
                "arp-timeout": "auto",
                "auto-negotiation": _b(leg.auto_negotiation if leg else name == "ether1"),
                "speed": leg.speed
                if leg
                else ("1G-baseT-full" if name == "ether1" else "200G-baseCR4"),
                "fec-mode": "auto",
                "rx-flow-control": "off",
                "tx-flow-control": "off",
                "loop-protect": "default",
                "bandwidth": "unlimited/unlimited",
                "disabled": "false",
                "running": _b(self.running(name)),
                "slave": _b(name in self.config.bridge_ports()),
                "switch": "switch1",
            }
            rows.append(row)
        return rows

    def bridge(self) -> list[Row]:
        mtu = min((leg.mtu for leg in self.config.legs), default=1500)
        return [
            {
                ".id": "*1",
                "name": self.config.bridge,
                "mtu": "auto",
                "actual-mtu": str(mtu),
                "l2mtu": str(min((leg.l2mtu for leg in self.config.legs), default=1514)),
                "protocol-mode": "rstp",
                "vlan-filtering": "false",
                "running": "true",
                "disabled": "false",
                "auto-mac": "true",
                "mac-address": self._mac(0),
            }
        ]

    def bridge_ports(self) -> list[Row]:
        rows = []
        for i, name in enumerate(self.config.bridge_ports()):
            up = self.running(name)
            rows.append(
                {
                    ".id": f"*{i + 1:X}",
                    "interface": name,
                    "bridge": self.config.bridge,
                    "hw": "true",
                    "hw-offload": _b(self.config.hw_offload),
                    "disabled": "false",
                    "dynamic": "false",
                    "inactive": _b(not up),
                    "role": "designated-port" if up else "disabled-port",
                    "status": "in-bridge" if up else "inactive",
                    "pvid": "1",
                    "edge": "auto",
                    "point-to-point": "auto",
                    "path-cost": "10",
                    "priority": "0x80",
                    "frame-types": "admit-all",
                    "ingress-filtering": "true",
                    "learn": "auto",
                    "trusted": "false",
                }
            )
        return rows

    def qos_ports(self) -> list[Row]:
        rows = []
        for i, leg in enumerate(self.config.legs):
            row: Row = {
                ".id": f"*{i + 1:X}",
                "name": leg.name,
                "trust-l2": "ignore",
                "trust-l3": leg.trust_l3,
                "pfc": leg.pfc,
            }
            for q, rate in enumerate(leg.egress_rate_queue):
                row[f"egress-rate-queue{q}"] = rate
            rows.append(row)
        return rows

    def resource(self) -> Row:
        uptime = int(self.clock.now()) + 3 * 86400
        d, rem = divmod(uptime, 86400)
        h, rem = divmod(rem, 3600)
        m, s = divmod(rem, 60)
        return {
            "uptime": f"{d}d{h}h{m}m{s}s",
            "version": self.config.version,
            "build-time": "2025-09-16 10:21:33",
            "factory-software": "7.16",
            "free-memory": "1812226048",
            "total-memory": "2147483648",
            "cpu": "ARM64",
            "cpu-count": "4",
            "cpu-frequency": "2000",
            "cpu-load": str(self.cpu_load()),
            "free-hdd-space": "104185856",
            "total-hdd-space": "134217728",
            "architecture-name": "arm64",
            "board-name": self.config.board,
            "platform": "MikroTik",
        }

    def monitor(self, names: list[str]) -> list[Row]:
        rows = []
        for name in names:
            leg = self._leg(name)
            up = self.running(name)
            row: Row = {"name": name, "status": "link-ok" if up else "no-link"}
            if leg is not None:
                row["auto-negotiation"] = "failed" if leg.auto_negotiation else "disabled"
                if up:
                    rate = self.world.model.link_speed_mbps(leg.node, self._node_port(leg))
                    row.update(
                        {"rate": f"{rate // 1000}Gbps", "full-duplex": "true", "fec": "fec91"}
                    )
                row.update(
                    {
                        "tx-flow-control": "false",
                        "rx-flow-control": "false",
                        "sfp-module-present": "true",
                        "sfp-rx-loss": _b(not up),
                        "sfp-tx-fault": "false",
                        "sfp-type": "QSFP56-DD",
                        "sfp-connector-type": "no-separable-connector",
                        "sfp-vendor-name": "Amphenol",
                        "eeprom-checksum": "good",
                    }
                )
            elif up:
                row.update({"auto-negotiation": "done", "rate": "1Gbps", "full-duplex": "true"})
            rows.append(row)
        return rows

    def stats(self) -> list[Row]:
        rows = []
        now = self.clock.now()
        rt = self.world.runtime
        for i, name in enumerate(self.config.interfaces()):
            leg = self._leg(name)
            fcs = pause = rx = tx = corrected = 0
            if leg is not None:
                node = self.world.model.node(leg.node)
                port = self._node_port(leg)
                for dev in node.cabled:
                    t = rt.traffic.get((dev.node, dev.name))
                    rx += int(t.tx_bytes) if t else 0
                    tx += int(t.rx_bytes) if t else 0
                fcs = lane_errors(rt, leg.node, port, now)[1] // 2
                # A marginal host->switch direction: corrupted frames among those received,
                # each an RS-FEC codeword FEC could not correct, amid many it did correct.
                bad = int(rx // FRAME_B * leg.fcs_error_rate)
                fcs += bad
                corrected = bad * CORRECTED_PER_UNCORRECTED
                if leg.pfc != "disabled":
                    pause = int(850 * link_uptime(rt, leg.node, port, now))
            rows.append(
                {
                    ".id": f"*{i + 1:X}",
                    "name": name,
                    "rx-byte": str(rx),
                    "tx-byte": str(tx),
                    "rx-packet": str(rx // FRAME_B),
                    "tx-packet": str(tx // FRAME_B),
                    "rx-fcs-error": str(fcs),
                    "rx-align-error": "0",
                    "rx-pause": "0",
                    "tx-pause": str(pause),
                    "rs-fec-corrected": str(corrected),
                    "rs-fec-uncorrected": str(fcs),
                }
            )
        return rows

    # -- REST ---------------------------------------------------------------------------------

    def rest_get(self, path: str) -> list[Row] | Row:
        route = path.split("?", 1)[0].rstrip("/").removeprefix("/rest")
        tables = {
            "/interface/ethernet": self.ethernet,
            "/interface/bridge": self.bridge,
            "/interface/bridge/port": self.bridge_ports,
            "/interface/ethernet/switch/qos/port": self.qos_ports,
        }
        if route == "/system/resource":
            return self.resource()
        if route in tables:
            return tables[route]()
        raise RestError(404, "Not Found")

    def rest_post(self, path: str, body: Mapping[str, object]) -> list[Row] | Row:
        route = path.rstrip("/").removeprefix("/rest")
        if route == "/interface/ethernet/monitor":
            if "once" not in body:
                raise RestError(400, "Bad Request", 'monitor needs "once" over REST')
            names = [n for n in str(body.get("numbers", "")).split(",") if n]
            known = set(self.config.interfaces())
            missing = [n for n in names if n not in known]
            if not names or missing:
                raise RestError(400, "Bad Request", "no such item")
            return self.monitor(names)
        if route == "/interface/ethernet/print" and "stats" in body:
            return self.stats()
        if route.endswith("/print"):
            return self.rest_get(route.removesuffix("/print"))
        raise RestError(400, "Bad Request", "no such command")
