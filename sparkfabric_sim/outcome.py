"""What one simulated command produced."""

from __future__ import annotations

from dataclasses import dataclass

# A short program inside the node's shell; the ssh round trip is added per job by the transport.
FAST_S = 0.002


@dataclass(frozen=True, slots=True)
class Outcome:
    """Exit status, output and modelled duration of one command.

    `partial` is the stdout printed before the end (what a deadline kill leaves behind);
    `timeline` refines it for programs that print as they go: (seconds since start, stdout
    printed by then), in time order, so a kill at t keeps the last text printed before t;
    `hang` marks a command that never returns on its own.
    """

    rc: int
    stdout: str = ""
    stderr: str = ""
    duration_s: float = FAST_S
    partial: str = ""
    hang: bool = False
    timeline: tuple[tuple[float, str], ...] = ()

    def printed_by(self, seconds: float) -> str:
        """The stdout a kill after `seconds` leaves behind."""
        text = self.partial
        for at, printed in self.timeline:
            if at > seconds:
                break
            text = printed
        return text


def ok(stdout: str = "", duration_s: float = FAST_S) -> Outcome:
    return Outcome(0, stdout, "", duration_s)


def fail(rc: int, stderr: str, stdout: str = "", duration_s: float = FAST_S) -> Outcome:
    return Outcome(rc, stdout, stderr, duration_s)
