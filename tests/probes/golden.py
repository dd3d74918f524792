"""The golden-file layout of ``tests/data`` (each ``<folder>/<name>.txt|.json|.ttar`` beside its
``<name>.expected.json``, read by the parser ``PARSERS`` registers for the folder), and noise for
samples. ``SPARKFABRIC_UPDATE_GOLDEN=1`` rewrites the expected files: review every diff against
the folder's PROVENANCE.md before committing it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

DATA = Path(__file__).resolve().parent.parent / "data"
UPDATE_ENV = "SPARKFABRIC_UPDATE_GOLDEN"
EXPECTED_SUFFIX = ".expected.json"
RAW_SUFFIXES = (".txt", ".json", ".ttar")


def sample_folders() -> list[Path]:
    return sorted(p for p in DATA.iterdir() if p.is_dir())


def raw_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix in RAW_SUFFIXES and not p.name.endswith(EXPECTED_SUFFIX)
    )


def expected_path(raw: Path) -> Path:
    return raw.with_name(raw.name[: -len(raw.suffix)] + EXPECTED_SUFFIX)


def read(raw: Path) -> str:
    """The raw text, bytes untouched (CRs, tabs and trailing spaces matter to the parsers)."""
    return raw.read_bytes().decode("utf-8")


def sample(relative: str) -> str:
    return read(DATA / relative)


def sample_id(raw: Path) -> str:
    return f"{raw.parent.name}/{raw.name}"


raw_samples = [p for folder in sample_folders() for p in raw_files(folder)]
# Samples made for the suite rather than captured from a tool say so in their name.
real_samples = [p for p in raw_samples if not p.name.startswith("synthetic-")]


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
noise_line = st.sampled_from(NOISE_LINES) | st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.,!", max_size=60
)


@st.composite
def with_noise(draw: st.DrawFn, text: str, *, max_lines: int = 6) -> str:
    """The text with a few noise lines inserted between its lines."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, max_lines))):
        lines.insert(draw(st.integers(0, len(lines))), draw(noise_line))
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
