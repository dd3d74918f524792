"""Start of one lab node, run by `ip netns exec NS python3 -m sparkfabric_lab.boot FILE`.

`ip netns exec` gives the command its own mount namespace (and a fresh /sys for the network
namespace); nothing mounted here reaches the host. In it this gives the node:
- its own /etc: an overlay whose upper layer (in the lab dir) holds the node's nccl.conf, so
  whatever a node writes to /etc stays in the lab dir;
- the sysfs files a Spark has (systree.render): /sys/class and /sys/bus/pci/devices are replaced,
  read-only, by copies made of symlinks to the real entries plus the fake files;
- a stock root shell: this machine's own rc files (pyenv, cargo...) are covered by /dev/null, or
  every ssh call would run them (0.4 s each under load) and put their PATH before the lab's tools;
then execs sshd, whose sessions inherit all of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

Tree = dict[str, "Tree | str"]


def _mount(*args: str) -> None:
    r = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise OSError(f"mount {' '.join(args)}: {r.stderr.strip() or r.returncode}")


def private_etc(upper: str, work: str) -> None:
    try:
        _mount("-t", "overlay", "sparkfabric-etc", "-o",
               f"lowerdir=/etc,upperdir={upper},workdir={work}", "/etc")  # fmt: skip
    except OSError as err:
        # No overlayfs here: fall back to the one file that must differ per node.
        if not os.path.exists("/etc/nccl.conf"):
            raise OSError(f"{err}; and /etc/nccl.conf does not exist to bind over") from None
        _mount("--bind", os.path.join(upper, "nccl.conf"), "/etc/nccl.conf")


# What bash (run by sshd, or as a login shell) reads from root's home before a command.
SHELL_RC = (".bashrc", ".bash_profile", ".bash_login", ".profile")


def stock_shell(home: str) -> None:
    for name in SHELL_RC:
        path = os.path.join(home, name)
        if os.path.isfile(path):
            _mount("--bind", "/dev/null", path)


def tree_of(files: dict[str, str], top: str) -> Tree:
    tree: Tree = {}
    for path, content in files.items():
        parts = Path(path).relative_to(top).parts
        node = tree
        for part in parts[:-1]:
            sub = node.setdefault(part, {})
            assert isinstance(sub, dict)
            node = sub
        node[parts[-1]] = content
    return tree


def merge(real: str | None, tree: Tree, out: str) -> None:
    """`out` becomes `real` (symlinks to its entries, absolute) with `tree` laid over it.

    An entry that resolves inside the covered directory itself is linked by its logical path,
    which the copy reproduces; a real directory there is copied the same way, level by level.
    """
    os.makedirs(out, exist_ok=True)
    names = set(os.listdir(real)) if real and os.path.isdir(real) else set()
    for name in sorted(names | set(tree)):
        dest = os.path.join(out, name)
        fake = tree.get(name)
        logical = os.path.join(real, name) if real and name in names else None
        if isinstance(fake, str):
            Path(dest).write_text(fake + "\n")
        elif isinstance(fake, dict):
            merge(logical, fake, dest)
        elif logical is not None:
            target = os.path.realpath(logical)
            if target != logical:
                os.symlink(target, dest)
            elif os.path.isdir(logical):
                merge(logical, {}, dest)
            # a plain file of the covered directory itself cannot be linked: left out


def cover(files: dict[str, str], sys_root: str) -> None:
    by_top: dict[str, dict[str, str]] = {}
    for path, content in files.items():
        top = _cover_of(path)
        while not os.path.isdir(top) and top != "/sys":
            top = os.path.dirname(top)
        by_top.setdefault(top, {})[path] = content
    for top, mine in by_top.items():
        out = sys_root + top
        merge(top, tree_of(mine, top), out)
        _mount("--bind", out, top)
        _mount("-o", "remount,bind,ro", top)


def _cover_of(path: str) -> str:
    from sparkfabric_lab.systree import cover_for

    return cover_for(path)


def boot(spec: dict[str, Any]) -> None:
    private_etc(spec["etc_upper"], spec["etc_work"])
    cover(spec["files"], spec["sys_root"])
    stock_shell(os.path.expanduser("~root"))
    argv = [str(a) for a in spec["exec"]]
    sys.stdout.flush()
    os.execv(argv[0], argv)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m sparkfabric_lab.boot BOOT.json", file=sys.stderr)
        return 2
    try:
        spec = json.loads(Path(argv[0]).read_text())
        boot(spec)
    except (OSError, ValueError, KeyError) as err:
        print(f"sparkfabric lab boot: {err}", file=sys.stderr)
        return 1
    return 0  # not reached: boot() execs sshd


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
