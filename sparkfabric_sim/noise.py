"""Seeded noise: one RNG per measurement key, so a value depends on the seed and on what is
measured, never on the order in which measurements happen."""

from __future__ import annotations

import hashlib
import random


def rng(seed: int, *key: object) -> random.Random:
    digest = hashlib.sha256(repr((seed, *key)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def uniform(seed: int, lo: float, hi: float, *key: object) -> float:
    return rng(seed, *key).uniform(lo, hi)


def hex_id(seed: int, bits: int, *key: object) -> int:
    return rng(seed, *key).getrandbits(bits)
