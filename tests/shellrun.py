"""Shell text through the simulator's own sh (sparkfabric_sim/sh): the argv it starts."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from sparkfabric_sim.outcome import Outcome
from sparkfabric_sim.sh.interp import Interp

HOME = "/home/op"
Argv = tuple[str, ...]
LISTENING = "LISTEN 0 5 0.0.0.0:1 0.0.0.0:*\n"


class ArgvHost:
    """The simulated shell's host: records each argv it is asked to start and runs nothing;
    `ss` says a socket listens, so servers count as started."""

    def __init__(self, files: tuple[str, ...] = ()) -> None:
        self.argvs: list[Argv] = []
        self.files = files

    def run(self, argv: list[str], env: Mapping[str, str], stdin: str, at: float) -> Outcome:
        self.argvs.append(tuple(argv))
        return Outcome(0, LISTENING if argv[0] == "ss" else "")

    def glob(self, pattern: str) -> list[str]:
        return sorted(f for f in self.files if fnmatch.fnmatchcase(f, pattern))

    def which(self, name: str) -> str | None:
        return f"/usr/bin/{name}"

    def kind(self, path: str) -> str | None:
        return None

    def read(self, path: str) -> str:
        raise FileNotFoundError(path)


def started(text: str, files: tuple[str, ...] = ()) -> tuple[Outcome, list[Argv]]:
    """Run `text` in the simulated shell (HOME=/home/op); its outcome and every argv started."""
    host = ArgvHost(files)
    return Interp(host, {"HOME": HOME}).run_script(text), host.argvs
