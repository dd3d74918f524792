"""`sparkfabric lab up | down | status`: a cluster.yaml built from namespaces, veths and sshd.

Also runnable on its own: `python -m sparkfabric_lab.cli up FILE`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from sparkfabric_lab import DEFAULT_DIR, DEFAULT_MGMT, DEFAULT_PREFIX, LabError


def _err(text: str) -> None:
    print(text, file=sys.stderr)


def _say(text: str) -> None:
    print(f"sparkfabric lab: {text}", flush=True)


def cmd_up(args: argparse.Namespace) -> int:
    from sparkfabric_lab.build import up

    try:
        mgmt = IPv4Network(args.mgmt, strict=True)
    except ValueError as exc:
        _err(f"sparkfabric lab: --mgmt {args.mgmt}: {exc}")
        return 2
    t0 = time.monotonic()
    try:
        state = up(
            Path(args.cluster),
            Path(args.dir),
            prefix=args.prefix,
            mgmt=mgmt,
            log=_say,
            keep_on_failure=args.keep_on_failure,
        )
    except LabError as err:
        _err(str(err) if str(err).startswith("sparkfabric") else f"sparkfabric lab: {err}")
        return 1
    lab_dir = Path(state.lab_dir)
    _say(f"{state.topology} lab up in {time.monotonic() - t0:.1f} s")
    for line in state.applied:
        _say(f"fault {line}")
    print(f"\n  pytest --cluster={lab_dir / 'cluster.yaml'}")
    print(f"  ssh -F {lab_dir / 'ssh_config'} {next(iter(state.node_ns), 'NODE')}")
    print(f"  sparkfabric lab down --dir {lab_dir}\n")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    from sparkfabric_lab.build import down
    from sparkfabric_lab.host import why_no_netns, why_not_root

    reason = why_not_root() or why_no_netns()
    if reason:
        _err(f"sparkfabric lab: {reason}")
        return 1
    try:
        problems = down(Path(args.dir), log=_say, force=args.force)
    except LabError as err:
        _err(f"sparkfabric lab: {err}")
        return 1
    for p in problems:
        _err(f"sparkfabric lab: not removed: {p}")
    return 1 if problems else 0


def cmd_status(args: argparse.Namespace) -> int:
    from sparkfabric_lab.status import status

    st = status(Path(args.dir))
    print("\n".join(st.lines))
    return st.rc


def register(subparsers: Any) -> None:
    """Add `lab` with its subcommands up, down and status (each sets func=)."""
    lab = subparsers.add_parser(
        "lab",
        help="build a cluster.yaml from network namespaces and sshd, to run the suite over ssh",
        description=(
            "A lab is the cluster a cluster.yaml describes, built on this machine: a network "
            "namespace per node with the Spark's netdev names, veth cables, an sshd per node. "
            "Needs root. See docs/lab.md."
        ),
    )
    sub = lab.add_subparsers(dest="lab_command", metavar="SUBCOMMAND")
    lab.set_defaults(func=lambda _a: (lab.print_help(sys.stderr), 2)[1])

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--dir", default=DEFAULT_DIR, help=f"the lab's directory (default {DEFAULT_DIR})"
        )

    p_up = sub.add_parser("up", help="build the lab a cluster.yaml describes")
    p_up.add_argument("cluster", metavar="CLUSTER.yaml", help="the cluster to build")
    common(p_up)
    p_up.add_argument(
        "--prefix",
        default=DEFAULT_PREFIX,
        help=f"prefix of namespace and host link names (default {DEFAULT_PREFIX!r})",
    )
    p_up.add_argument(
        "--mgmt",
        default=DEFAULT_MGMT,
        help=f"management subnet, inside 198.18.0.0/15 (default {DEFAULT_MGMT})",
    )
    p_up.add_argument(
        "--keep-on-failure",
        action="store_true",
        help="leave a half-built lab for inspection (remove it with lab down)",
    )
    p_up.set_defaults(func=cmd_up)

    p_down = sub.add_parser(
        "down",
        help="remove every namespace, link, process and file",
        description=(
            "Remove the lab in --dir: its namespaces, host links, processes and files. A lab "
            "still held by the process that built it (a test run) is refused; `lab up` does "
            "not hold the lab it builds."
        ),
    )
    common(p_down)
    p_down.add_argument(
        "--force",
        action="store_true",
        help="remove the lab even while the process that built it still runs",
    )
    p_down.set_defaults(func=cmd_down)

    p_status = sub.add_parser("status", help="show the lab's nodes and whether sshd answers")
    common(p_status)
    p_status.set_defaults(func=cmd_status)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sparkfabric")
    register(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(["lab", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        _err("sparkfabric lab: interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
