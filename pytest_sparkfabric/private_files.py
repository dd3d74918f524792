"""Files only their owner may read: results and recordings name hosts, users, addresses and
everything the nodes answered, so they are written 0600 in folders made 0700."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

DIR_MODE = 0o700


def make_private_dir(path: Path) -> None:
    """Make `path` and each missing parent 0700; folders that exist already keep their mode
    (they are the operator's)."""
    for d in reversed([p for p in (path, *path.parents) if not p.exists()]):
        # Another process may make the same folder at the same moment.
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=DIR_MODE)
            # mkdir's mode passes through the umask, which can only take bits away; chmod
            # anyway so the mode is exactly 0700 whatever the umask.
            d.chmod(DIR_MODE)


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path`, 0600 from its first byte (never readable by others even for a
    moment), replacing a file that was there whatever its mode."""
    make_private_dir(path.parent)
    # mkstemp makes the file 0600.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
