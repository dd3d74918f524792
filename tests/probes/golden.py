"""The golden-file layout of ``tests/data`` (the ntc-templates habit), shared by the tests.

Each real raw output ``tests/data/<folder>/<name>.txt`` (or ``.json``, ``.ttar``) has its
expected parse beside it, ``<name>.expected.json``: what :func:`outcome_to_json` makes of the
raw text with the parser registered for the folder's tool in ``probes.PARSERS`` - the same
JSON ``sparkfabric parse TOOL FILE`` prints, or ``{"parse_error": ...}`` for an error-path
sample. Every folder has a PROVENANCE.md naming each sample's source.

``SPARKFABRIC_UPDATE_GOLDEN=1`` rewrites the expected files from the current parsers. An
expected file is a claim about a real output: review every diff against the PROVENANCE notes
before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
UPDATE_ENV = "SPARKFABRIC_UPDATE_GOLDEN"
EXPECTED_SUFFIX = ".expected.json"
RAW_SUFFIXES = (".txt", ".json", ".ttar")

# A folder is named after its tool in probes.PARSERS, except these older names.
FOLDER_TOOL = {"perftest": "ib_write_bw", "ethtool-m": "ethtool-module"}
# Folders that hold no tool output.
NOT_SAMPLES = frozenset({"verdicts"})
# Samples whose expected files come with another piece of work: folder -> (tools, why).
OWNED_ELSEWHERE: dict[str, tuple[tuple[str, ...], str]] = {}


def updating() -> bool:
    return bool(os.environ.get(UPDATE_ENV))


def folder_tool(folder: str) -> str:
    return FOLDER_TOOL.get(folder, folder)


def sample_folders() -> list[Path]:
    return sorted(
        p for p in DATA.iterdir() if p.is_dir() and p.name not in NOT_SAMPLES | set(OWNED_ELSEWHERE)
    )


def is_raw(path: Path) -> bool:
    return path.suffix in RAW_SUFFIXES and not path.name.endswith(EXPECTED_SUFFIX)


def raw_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and is_raw(p))


def raw_samples() -> list[Path]:
    return [p for folder in sample_folders() for p in raw_files(folder)]


def expected_path(raw: Path) -> Path:
    return raw.with_name(raw.name[: -len(raw.suffix)] + EXPECTED_SUFFIX)


def is_synthetic(raw: Path) -> bool:
    """Samples made for the suite rather than captured from a tool say so in their name."""
    return raw.name.startswith("synthetic-")


def read(raw: Path) -> str:
    """The raw text, bytes untouched (CRs, tabs and trailing spaces matter to the parsers)."""
    return raw.read_bytes().decode("utf-8")


def sample_id(raw: Path) -> str:
    return f"{raw.parent.name}/{raw.name}"
