"""The running simulation: model + runtime, and how one node runs one command line.

Tools get a `Ctx` (the node, the time the command starts, its environment). Flow tools ask
`ctx.rate()` for their bandwidth: inside a batch the transport has planned it for the whole
batch; in a dry run (planning) the request is raised instead so the planner can collect it.
A tool changes the world (a load, a flow, a server's outcome, a killed process) only where
`ctx.changes()` says so: a dry run that changed nothing printed what the real run would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sparkfabric_sim import bandwidth
from sparkfabric_sim.bandwidth import FlowRequest
from sparkfabric_sim.hardware import SimNode
from sparkfabric_sim.model import SimCluster
from sparkfabric_sim.outcome import Outcome
from sparkfabric_sim.state import ActiveFlow, Process, ProcKind, Runtime
from sparkfabric_sim.vfs import Tree, Vfs

PATHS = {
    "ip": "/usr/sbin/ip",
    "ethtool": "/usr/sbin/ethtool",
    "sysctl": "/usr/sbin/sysctl",
    "ss": "/usr/bin/ss",
    "ping": "/usr/bin/ping",
    "cat": "/usr/bin/cat",
    "grep": "/usr/bin/grep",
    "uname": "/usr/bin/uname",
    "hostname": "/usr/bin/hostname",
    "printenv": "/usr/bin/printenv",
    "sleep": "/usr/bin/sleep",
    "timeout": "/usr/bin/timeout",
    "sudo": "/usr/bin/sudo",
    "env": "/usr/bin/env",
    "sh": "/usr/bin/sh",
    "bash": "/usr/bin/bash",
    "kill": "/usr/bin/kill",
    "test": "/usr/bin/test",
    "true": "/usr/bin/true",
    "false": "/usr/bin/false",
    "which": "/usr/bin/which",
    "ibdev2netdev": "/usr/bin/ibdev2netdev",
    "dmesg": "/usr/bin/dmesg",
    "journalctl": "/usr/bin/journalctl",
    "lldpctl": "/usr/sbin/lldpctl",
    "ib_write_bw": "/usr/bin/ib_write_bw",
    "ib_write_lat": "/usr/bin/ib_write_lat",
    "ibv_devinfo": "/usr/bin/ibv_devinfo",
    "mlnx_qos": "/usr/bin/mlnx_qos",
    "head": "/usr/bin/head",
    "tail": "/usr/bin/tail",
    "wc": "/usr/bin/wc",
    "dash": "/usr/bin/dash",
    "mpiexec": "/usr/bin/mpiexec",
    "iperf3": "/usr/bin/iperf3",
    "mpirun": "/usr/bin/mpirun",
    "nvidia-smi": "/usr/bin/nvidia-smi",
    "gpu_burn": "/usr/local/bin/gpu_burn",
    "gpu-burn": "/usr/local/bin/gpu-burn",
    "all_reduce_perf": "/usr/local/bin/all_reduce_perf",
    "all_gather_perf": "/usr/local/bin/all_gather_perf",
    "reduce_scatter_perf": "/usr/local/bin/reduce_scatter_perf",
}


class NeedRate(Exception):
    """Raised in a dry run: this command would send `request`."""

    def __init__(self, request: FlowRequest) -> None:
        super().__init__(request.key)
        self.request = request


class IsServer(Exception):
    """Raised in a dry run: this command is a server that waits for a client."""


class World:
    def __init__(self, model: SimCluster) -> None:
        self.model = model
        self.runtime = Runtime(model)
        self._trees: dict[str, Tree] = {}

    def vfs(self, node: SimNode, t: float) -> Vfs:
        """The node's files as read at time t (the tree of paths is built once per node)."""
        if node.name not in self._trees:
            self._trees[node.name] = Tree(node, self.model.seed)
        return Vfs(self.runtime, self._trees[node.name], t)

    def run(
        self,
        node: str,
        command: str,
        t: float,
        *,
        env: Mapping[str, str] | None = None,
        planned: Mapping[str, float] | None = None,
        spawned: list[Process] | None = None,
    ) -> Outcome:
        return self._run(node, command, t, env, False, planned, spawned)[0]

    def dry_run(self, node: str, command: str, t: float) -> Outcome | None:
        """Plan `command` without changing anything: NeedRate or IsServer when it sends traffic
        or serves; None when its real run would change the world; else what it prints (the
        real run, on an unchanged world, would print the same)."""
        outcome, ctx = self._run(node, command, t, None, True, None, None)
        return None if ctx.changed else outcome

    def _run(
        self,
        node: str,
        command: str,
        t: float,
        env: Mapping[str, str] | None,
        dry_run: bool,
        planned: Mapping[str, float] | None,
        spawned: list[Process] | None,
    ) -> tuple[Outcome, Ctx]:
        from sparkfabric_sim.sh.interp import Interp

        n = self.model.node(node)
        base = dict(env) if env is not None else self.login_env(n)
        ctx = Ctx(
            self,
            n,
            t,
            base,
            "",
            dry_run,
            dict(planned or {}),
            spawned if spawned is not None else [],
        )
        return Interp(NodeHost(ctx), base, start=t).run_script(command), ctx

    def login_env(self, n: SimNode) -> dict[str, str]:
        return {
            "HOME": n.home,
            "USER": n.user,
            "LOGNAME": n.user,
            "SHELL": "/bin/bash",
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8",
        }


@dataclass
class Ctx:
    world: World
    node: SimNode
    t: float
    env: Mapping[str, str]
    stdin: str = ""
    dry_run: bool = False
    planned: dict[str, float] = field(default_factory=dict)
    spawned: list[Process] = field(default_factory=list)
    # Shared by every copy (`at`): set when a dry run skipped a change the real run makes.
    changed: list[bool] = field(default_factory=list)

    def changes(self) -> bool:
        """Whether to change the world now: False in a dry run, which notes that it would."""
        if self.dry_run:
            self.changed.append(True)
            return False
        return True

    @property
    def model(self) -> SimCluster:
        return self.world.model

    @property
    def rt(self) -> Runtime:
        return self.world.runtime

    @property
    def seed(self) -> int:
        return self.world.model.seed

    def vfs(self) -> Vfs:
        return self.world.vfs(self.node, self.t)

    def at(self, t: float, env: Mapping[str, str] | None = None, stdin: str = "") -> Ctx:
        # Not dataclasses.replace: this runs for every program a script starts.
        return Ctx(
            self.world,
            self.node,
            t,
            dict(env) if env is not None else self.env,
            stdin,
            self.dry_run,
            self.planned,
            self.spawned,
            self.changed,
        )

    def rate(self, request: FlowRequest) -> float:
        if request.key in self.planned:
            return self.planned[request.key]
        if self.dry_run:
            raise NeedRate(request)
        background = [(f.request, f.rate_gbps) for f in self.rt.active_flows(self.t)]
        return bandwidth.allocate(self.model, [request], background)[0]

    def listen(self, argv: list[str], kind: ProcKind, port: int, detail: dict[str, object]) -> None:
        """Start a server process on this node, listening on `port` from now on."""
        if self.dry_run:
            raise IsServer
        proc = Process(
            self.rt.new_pid(), self.node.name, tuple(argv), kind, self.t, port=port, detail=detail
        )
        self.spawned.append(self.rt.add(proc))

    def flow_done(self, request: FlowRequest, rate_gbps: float, seconds: float) -> None:
        if not self.changes():
            return
        self.rt.add_flow(ActiveFlow(request, rate_gbps, self.t, self.t + seconds))
        self.rt.account(request, rate_gbps, seconds)
        if bandwidth.crosses_switch(self.model, request):
            self.rt.switch_busy_until = max(self.rt.switch_busy_until, self.t + seconds)


class NodeHost:
    """What the shell interpreter needs from a node: run a program, files, PATH lookups."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    def run(self, argv: list[str], env: Mapping[str, str], stdin: str, at: float) -> Outcome:
        from sparkfabric_sim.tools import dispatch

        return dispatch(self.ctx.at(at, env, stdin), argv)

    def glob(self, pattern: str) -> list[str]:
        return self.ctx.vfs().glob(pattern)

    def which(self, name: str) -> str | None:
        if name.rsplit("/", 1)[-1] in self.ctx.node.missing:
            return None
        if "/" in name:
            return name if name.rsplit("/", 1)[-1] in PATHS else None
        return PATHS.get(name)

    def kind(self, path: str) -> str | None:
        return self.ctx.vfs().kind(path)

    def read(self, path: str) -> str:
        return self.ctx.vfs().read(path)
