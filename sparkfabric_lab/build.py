"""`lab up` and `lab down`: make the plan real, and undo all of it, also half of it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import yaml

from sparkfabric_lab import LabError, files, host, owner, services
from sparkfabric_lab.assemble import build_plan
from sparkfabric_lab.plan import SIM_TOOLS, SYSTEM_PATH, End, LabPlan, NodeLab
from sparkfabric_lab.state import STATE_FILE, LabState

Log = Callable[[str], None]
_OUR_FILES = (
    STATE_FILE, "cluster.yaml", "sim-cluster.yaml", "ssh_config", "source.yaml",
    "resident.log", "sim.sock", "ssh", "bin", "nodes",
)  # fmt: skip


def _quiet(_line: str) -> None:
    return None


def check_dir(lab_dir: Path) -> Path:
    if not lab_dir.is_absolute():
        lab_dir = Path.cwd() / lab_dir
    if any(c.isspace() for c in str(lab_dir)) or ":" in str(lab_dir):
        raise LabError(f"lab dir {lab_dir}: use a path without spaces or ':' (it goes into PATH)")
    return lab_dir


def up(
    source: Path,
    lab_dir: Path,
    *,
    prefix: str,
    mgmt: IPv4Network,
    log: Log = _quiet,
    keep_on_failure: bool = False,
) -> LabState:
    """Build the lab `source` describes in `lab_dir`; on failure undo what was made."""
    from pytest_sparkfabric.cluster import ConfigError, load_cluster

    host.require_lab_host()
    lab_dir = check_dir(lab_dir)
    try:
        cluster = load_cluster(source)
    except ConfigError as err:
        raise LabError(str(err)) from None
    plan = build_plan(cluster, prefix=prefix, mgmt=mgmt)
    with contextlib.ExitStack() as held:
        held.enter_context(host.build_lock())
        state = _start(source, lab_dir, cluster.topology, plan, prefix, mgmt)
        try:
            raw = yaml.safe_load(source.read_text(encoding="utf-8"))
            _make_network(plan, state, log)
            held.close()  # dir, names and subnet taken: other builds may check theirs now
            _write_files(plan, raw, lab_dir, source, log)
            services.start_resident(plan, state, lab_dir, raw, log)
            services.start_sshds(plan, state, lab_dir, log)
        except BaseException as err:
            state.phase = "failed"
            state.save()
            if not keep_on_failure:
                down(lab_dir)
            if isinstance(err, LabError):
                raise
            if isinstance(err, KeyboardInterrupt):
                raise
            raise LabError(f"lab up failed: {type(err).__name__}: {err}") from err
    state.phase = "up"
    state.save()
    return state


def _start(
    source: Path, lab_dir: Path, topology: str, plan: LabPlan, prefix: str, mgmt: IPv4Network
) -> LabState:
    """lab.json, written before anything is made: the lab's owner and what it will make."""
    old = LabState.load(lab_dir)
    if old is not None:
        raise LabError(
            f"a lab is already in {lab_dir} (from {old.source}, {old.phase}); "
            f"run `sparkfabric lab down --dir {lab_dir}` first"
        )
    if lab_dir.exists() and any(lab_dir.iterdir()):
        raise LabError(f"{lab_dir} exists and is not empty: name a new or empty --dir")
    _check_free(plan)
    made_dir = not lab_dir.exists()
    lab_dir.mkdir(parents=True, exist_ok=True)
    state = LabState(
        lab_dir=str(lab_dir),
        source=str(source.resolve()),
        prefix=prefix,
        mgmt=str(mgmt),
        topology=topology,
        made_dir=made_dir,
        mgmt_ips={n.name: str(n.mgmt.ip) for n in plan.nodes},
        node_ns={n.name: n.ns for n in plan.nodes},
        no_sshd=[n.name for n in plan.nodes if not n.sshd],
        applied=list(plan.applied),
    )
    me = owner.current()
    state.set_owner(me, host.proc_cmdline(me.pid).strip()[:200])
    state.save()
    return state


def _check_free(plan: LabPlan) -> None:
    problems = [f"network namespace {ns} exists" for ns in plan.namespaces if host.netns_exists(ns)]
    problems += [f"link {name} exists on the host" for name in plan.host_links
                 if host.link_exists(name)]  # fmt: skip
    used = host.subnet_in_use(plan.mgmt_net)
    if used:
        problems.append(f"management subnet {plan.mgmt_net} is in use on the host ({used})")
    if problems:
        raise LabError(
            "cannot build the lab: "
            + "; ".join(problems)
            + ". Another lab? (`sparkfabric lab status`), or choose --prefix / --mgmt."
        )


# -- network ------------------------------------------------------------------------------------


def _make_network(plan: LabPlan, state: LabState, log: Log) -> None:
    t0 = time.monotonic()
    for ns in plan.namespaces:
        state.namespaces.append(ns)
        state.save()
        try:
            host.run(["ip", "netns", "add", ns])
        except LabError:
            state.namespaces.remove(ns)  # someone else's: down must leave it alone
            state.save()
            raise
        ns_id = host.netns_id(ns)
        if ns_id is not None:
            state.ns_ids[ns] = ns_id
    # New interfaces in the namespaces are born with IPv6 off; the fabric needs it off.
    for ns in plan.namespaces:
        _sysctl(ns, [("net/ipv6/conf/default/disable_ipv6", "1")])
    br = plan.host_bridge
    state.host_links.append(br.name)
    state.host_links += [w.a.name for w in plan.wires if w.a.ns is None]
    state.save()
    host.ip_batch(None, [f"link add {br.name} type bridge"])
    _host_ipv6_off(br.name)
    by_ns: dict[str | None, list[str]] = {}
    for b in plan.bridges:
        by_ns.setdefault(b.ns, []).append(f"link add {b.name} type bridge")
    for w in plan.wires:
        peer = f"netns {w.b.ns}" if w.b.ns else ""
        by_ns.setdefault(w.a.ns, []).append(
            f"link add {w.a.name} type veth peer name {w.b.name} {peer}".rstrip()
        )
    for where, lines in by_ns.items():
        host.ip_batch(where, lines)
    for name in state.host_links:
        index = host.link_index(name)
        if index is not None:
            state.link_ids[name] = index
    state.save()
    for w in plan.wires:
        if w.a.ns is None:
            _host_ipv6_off(w.a.name)
    for node in plan.nodes:
        _sysctl(node.ns, list(node.sysctls))
    config: dict[str | None, list[str]] = {ns: ["link set dev lo up"] for ns in plan.namespaces}
    config[None] = [f"link set dev {br.name} up"] + [f"addr add {a} dev {br.name}"
                                                     for a in br.addresses]  # fmt: skip
    for b in plan.bridges:
        config[b.ns].append(f"link set dev {b.name} up")
    for w in plan.wires:
        for end in (w.a, w.b):
            config.setdefault(end.ns, []).extend(_end_lines(end))
    for where, lines in config.items():
        host.ip_batch(where, lines)
    log(
        f"network: {len(plan.namespaces)} namespaces, {len(plan.wires)} veth pairs "
        f"({time.monotonic() - t0:.1f} s)"
    )


def _host_ipv6_off(link: str) -> None:
    """No IPv6 chatter on the lab's own host links (a host without IPv6 has nothing to do)."""
    knob = Path(f"/proc/sys/net/ipv6/conf/{link}/disable_ipv6")
    if knob.exists():
        knob.write_text("1")


def _end_lines(end: End) -> list[str]:
    lines = [f"link set dev {end.name} mtu {end.mtu}"]
    if end.master:
        lines.append(f"link set dev {end.name} master {end.master}")
    lines += [f"addr add {a} dev {end.name}" for a in end.addresses]
    if end.up:
        lines.append(f"link set dev {end.name} up")
    return lines


def _sysctl(ns: str, values: list[tuple[str, str]]) -> None:
    script = "set -e\n" + "\n".join(f"echo {v} > /proc/sys/{k}" for k, v in values)
    host.run(["ip", "netns", "exec", ns, "sh", "-c", script])


# -- files --------------------------------------------------------------------------------------


def _write_files(plan: LabPlan, raw: Any, lab_dir: Path, source: Path, log: Log) -> None:
    ssh = lab_dir / "ssh"
    ssh.mkdir(mode=0o700, exist_ok=True)
    for key, comment in (("host_ed25519", "lab-host"), ("id_ed25519", "lab-user")):
        host.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                  f"sparkfabric-{comment}", "-f", str(ssh / key)])  # fmt: skip
    services.write(ssh / "authorized_keys", (ssh / "id_ed25519.pub").read_text(), 0o600)
    services.write(lab_dir / "ssh_config", files.ssh_config(lab_dir, plan))
    services.write(lab_dir / "source.yaml", source.read_text(encoding="utf-8"))
    derived = files.derived_cluster(raw, lab_dir, plan)
    services.write(lab_dir / "cluster.yaml", files.dump_yaml(derived, "lab cluster", str(source)))
    sim = files.sim_cluster(raw, plan)
    services.write(
        lab_dir / "sim-cluster.yaml", files.dump_yaml(sim, "simulator cluster", str(source))
    )
    python = sys.executable
    package_root = services.PACKAGE_ROOT
    services.write(lab_dir / files.NCCL_TESTS, files.nccl_tests_wrapper(), 0o755)
    services.write(lab_dir / files.LIBNCCL, "sparkfabric lab: a placeholder, NCCL is simulated\n")
    for node in plan.nodes:
        _write_wrappers(lab_dir, node, python, package_root)
        nd = files.node_dir(lab_dir, node.name)
        services.write(nd / "sshd_config", files.sshd_config(lab_dir, node))
        services.write(nd / "etc" / "upper" / "nccl.conf", node.nccl_conf)
        (nd / "etc" / "work").mkdir(parents=True, exist_ok=True)
    log(f"files: {lab_dir}")


def _write_wrappers(lab_dir: Path, node: NodeLab, python: str, package_root: str) -> None:
    bd = files.bin_dir(lab_dir, node.name)
    bodies = {
        tool: files.sim_wrapper(lab_dir, node.name, tool, python=python, package_root=package_root)
        for tool in SIM_TOOLS
        if tool not in node.missing
    }
    if node.lost_on is not None:
        bodies[node.lost_on] = files.lost_wrapper(node, shutil.which("ip", path=SYSTEM_PATH))
    for hang in node.hangs:
        otherwise = bodies.get(hang.tool) or shutil.which(hang.tool, path=SYSTEM_PATH)
        bodies[hang.tool] = files.hang_wrapper(hang, otherwise)
    for tool, body in bodies.items():
        services.write(bd / tool, body, 0o755)


# -- down ---------------------------------------------------------------------------------------


def down(
    lab_dir: Path, log: Log = _quiet, *, state: LabState | None = None, force: bool = False
) -> list[str]:
    """Remove everything the lab in `lab_dir` made; the problems left (empty: all gone).

    A lab whose owner (the process that built it) still runs is that process's to remove:
    LabError, unless `force`. `state`: what `up` returned, for when lab.json itself was lost
    with the lab dir."""
    lab_dir = check_dir(lab_dir)
    state = LabState.load(lab_dir) or state
    if state is None:
        log(f"no lab in {lab_dir}")
        return []
    _check_owner(lab_dir, state, log, force=force)
    problems: list[str] = []
    pids = dict(state.sshd)
    if state.resident_pid is not None:
        pids["simulator"] = state.resident_pid
    signalled = []
    for name, pid in pids.items():
        if str(lab_dir) in host.proc_cmdline(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
                signalled.append(pid)
        else:
            log(f"{name} (pid {pid}) already gone")
    _reap(signalled, lab_dir)
    for ns in state.namespaces:
        if not host.netns_exists(ns):
            continue
        if not _same(state.ns_ids.get(ns), host.netns_id(ns)):
            log(f"namespace {ns} is not this lab's any more (same name, another namespace): "
                "left alone")  # fmt: skip
            continue
        left = host.kill_all_in(ns)
        if left:
            problems.append(f"processes {left} in {ns} survived SIGKILL")
        r = host.run(["ip", "netns", "del", ns], check=False)
        if r.returncode != 0 and host.netns_exists(ns):
            problems.append(f"ip netns del {ns}: {r.stderr.strip()}")
    for name in state.host_links:
        if host.link_exists(name) and not _same(state.link_ids.get(name), host.link_index(name)):
            log(f"host link {name} is not this lab's any more (another link): left alone")
        elif host.link_exists(name):
            r = host.run(["ip", "link", "del", "dev", name], check=False)
            if r.returncode != 0 and host.link_exists(name):
                problems.append(f"ip link del {name}: {r.stderr.strip()}")
    if problems:
        if lab_dir.is_dir():
            state.save()
        return problems
    if not lab_dir.exists():
        pass
    elif state.made_dir:
        shutil.rmtree(lab_dir, ignore_errors=True)
    else:
        for entry in _OUR_FILES:
            p = lab_dir / entry
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        (lab_dir / f"{STATE_FILE}.tmp").unlink(missing_ok=True)
    if (lab_dir / STATE_FILE).exists():
        problems.append(f"could not remove {lab_dir}")
    log(f"removed: {len(state.namespaces)} namespaces, {len(state.host_links)} host links, "
        f"{len(state.sshd)} sshd, {lab_dir}")  # fmt: skip
    return problems


def _reap(pids: list[int], lab_dir: Path, grace_s: float = 3.0) -> None:
    """Wait for the signalled processes to end; SIGKILL what is left after `grace_s`."""
    deadline = time.monotonic() + grace_s
    while True:
        left = [p for p in pids if str(lab_dir) in host.proc_cmdline(p)]
        if not left:
            return
        if time.monotonic() > deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.02)


def _same(recorded: int | None, now: int | None) -> bool:
    # Nothing recorded: `up` was cut short between making it and noting it; the name decides.
    return recorded is None or recorded == now


def _check_owner(lab_dir: Path, state: LabState, log: Log, *, force: bool) -> None:
    built_by = state.owner
    if built_by is None or built_by == owner.current() or not owner.is_running(built_by):
        return
    who = f"running process {built_by.pid}"
    if state.owner_cmdline:
        who += f" ({state.owner_cmdline[:120]})"
    if force:
        log(f"--force: removing the lab of {who}")
        return
    raise LabError(
        f"the lab in {lab_dir} belongs to {who}, which removes it when it ends: stop that "
        "process first, or add --force to remove the lab from under it"
    )
