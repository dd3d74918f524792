"""Cluster files of the tests (files/*.yaml): the valid ones of every topology, written by hand so
golden line numbers stay put, and whole broken ones."""

from __future__ import annotations

from pathlib import Path

FILES = {p.stem: p.read_text(encoding="utf-8") for p in Path(__file__).with_name("files").iterdir()}
DIRECT, MESH, RING, SWITCH, SIM = (FILES[k] for k in ("direct", "mesh", "ring", "switch", "sim"))
VALID = {"direct": DIRECT, "mesh": MESH, "ring": RING, "switch": SWITCH, "sim": SIM}
