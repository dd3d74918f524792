"""Golden inputs and hypothesis strategies shared by the probe tests."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

DATA = Path(__file__).resolve().parent.parent / "data"


def sample(relative: str) -> str:
    """A golden file's text, newlines untouched (tabs and CRs matter to the parsers)."""
    return (DATA / relative).read_bytes().decode("utf-8")


def samples(folder: str) -> list[str]:
    return [sample(f"{folder}/{p.name}") for p in sorted((DATA / folder).glob("*.txt"))]


# Lines that really interleave with tool output: NCCL INFO/WARN, mpirun, author elisions,
# shell prompts, kernel-ish warnings. None of them looks like a result row or summary.
NOISE_LINES = (
    "pod-vf07:15718:15726 [0] NCCL INFO Channel 00/02 :    0   1",
    "spark-1:4242:4250 [0] NCCL WARN Cuda failure 'out of memory'",
    "...............",
    " WARNING: BW peak won't be measured in this run.",
    "Warning: Permanently added '192.168.100.12' (ED25519) to the list of known hosts.",
    "[spark-2:04242] mca_base_component_repository_open: unable to open mca_btl_openib",
    "^C",
    "",
    "  ",
    "\t",
    "user@spark-1:~$ ",
    "Conflicting CPU frequency values detected: 1200.000000 != 3400.000000.",
)

noise_line = st.one_of(
    st.sampled_from(NOISE_LINES),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.,!", max_size=60),
)


@st.composite
def with_noise(draw: st.DrawFn, text: str, *, max_lines: int = 6) -> str:
    """The text with a few noise lines inserted between its lines."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, max_lines))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(noise_line))
    return "\n".join(lines)


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """Truncated at a random point, with random lines deleted, and/or noise inserted."""
    kind = draw(st.sampled_from(("truncate", "delete", "noise", "all")))
    out = text
    if kind in ("truncate", "all"):
        out = out[: draw(st.integers(0, len(out)))]
    if kind in ("delete", "all"):
        lines = out.split("\n")
        for _ in range(draw(st.integers(1, 8))):
            if lines:
                lines.pop(draw(st.integers(0, len(lines) - 1)))
        out = "\n".join(lines)
    if kind in ("noise", "all"):
        out = draw(with_noise(out))
    return out
