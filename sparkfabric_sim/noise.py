"""Seeded noise: one RNG per measurement key, so a value depends on the seed and on what is
measured, never on the order in which measurements happen."""

from __future__ import annotations

import functools
import hashlib
import random


def rng(seed: int, *key: object) -> random.Random:
    return random.Random(_seed(repr((seed, *key))))


@functools.lru_cache(maxsize=1 << 16)  # a key's seed never changes; the suite asks again often
def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@functools.lru_cache(maxsize=1 << 16)
def _uniform(text: str, lo: float, hi: float) -> float:
    return random.Random(_seed(text)).uniform(lo, hi)


def uniform(seed: int, lo: float, hi: float, *key: object) -> float:
    return _uniform(repr((seed, *key)), lo, hi)


def hex_id(seed: int, bits: int, *key: object) -> int:
    return rng(seed, *key).getrandbits(bits)
