"""Where the ssh control sockets live: a short private folder, whatever TMPDIR is.

A unix socket path holds at most 107 bytes (sun_path is 108 with its NUL), and OpenSSH adds a
17-character suffix while it creates a master's socket. A control path under a long TMPDIR (macOS
gives ~49 characters, CI runners and nested test folders more) makes every connection fail
with `unix_listener: path "..." too long for Unix domain socket`. So the folder is made where
paths are short ($XDG_RUNTIME_DIR, TMPDIR, /tmp, in that order), 0700, named after this process,
and each node's socket is a 12-character hash in it.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUN_PATH_MAX = 107
_OPENSSH_SUFFIX = 17  # ".XXXXXXXXXXXXXXXX" while the master binds, before it renames
_NAME_LEN = 12
# OpenSSH: the path with its bind suffix (mux.c, via misc.c unix_listener) or the path alone
# (ssh.c, checked before connecting) does not fit sun_path.
_TOO_LONG = re.compile(
    r"""unix_listener: path "(?P<a>[^"]*)" too long|ControlPath too long \('(?P<b>[^']*)'""", re.I
)


def folder_prefix() -> str:
    """Control folders of this process start so (tests check that none is left behind)."""
    return f"sf{os.getpid()}-"


def _fits(base: str) -> bool:
    # base/sfPID-XXXXXXXX/<name>.<suffix>
    longest = len(base) + 1 + len(folder_prefix()) + 8 + 1 + _NAME_LEN + _OPENSSH_SUFFIX
    return longest <= SUN_PATH_MAX


def candidates() -> list[str]:
    found = [os.environ.get("XDG_RUNTIME_DIR", ""), tempfile.gettempdir(), "/tmp"]
    return list(dict.fromkeys(c for c in found if c))


@dataclass(frozen=True, slots=True)
class ControlFolder:
    path: Path | None
    """None: no short private folder could be made; connections are not multiplexed."""
    why_not: str = ""


def make_folder() -> ControlFolder:
    """A new private folder for control sockets, or why there is none (one line, with the fix)."""
    tried: list[str] = []
    for base in candidates():
        if not _fits(base):
            tried.append(f"{base} is too long a path")
            continue
        try:
            return ControlFolder(Path(tempfile.mkdtemp(prefix=folder_prefix(), dir=base)))
        except OSError as err:
            tried.append(f"{base}: {err.strerror or err}")
    return ControlFolder(
        None,
        "sparkfabric: no short private folder for ssh control sockets ("
        + "; ".join(tried)
        + "): every command opens its own ssh connection, which is slower. "
        "Fix: make /tmp writable, or set XDG_RUNTIME_DIR to a short folder you own",
    )


def socket_name(node: str, host: str, user: str | None, port: int | None) -> str:
    """As unique as ssh's %C (a hash of where the connection goes), and short."""
    key = "\0".join((node, host, user or "", str(port or "")))
    return hashlib.sha256(key.encode()).hexdigest()[:_NAME_LEN]


def too_long_message(node: str, stderr: str) -> str | None:
    """The line for OpenSSH's `path ... too long for Unix domain socket`, with the fix."""
    m = _TOO_LONG.search(stderr)
    if m is None:
        return None
    path = m.group("a") or m.group("b")
    return (
        f"{node}: ssh: the control socket path {path} is too long for a unix socket "
        f"({len(path)} bytes, while {SUN_PATH_MAX} is the most, ssh's 17-byte suffix included);"
        " the node itself was not tried. "
        "Fix: shorten ControlPath in your ssh_config (ProxyJump hosts use it too), "
        "e.g. ControlPath ~/.ssh/cm-%C"
    )
