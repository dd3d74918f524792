"""What NCCL itself selects for NCCL_IB_HCA values, per version: the reference both the simulator
and the product are checked against (neither may be checked against the other).

Rows for 2.28.9 ("classic", 2.5.6 .. 2.30.4) and 2.30.7 ("rail_plane") come from NCCL's own
``parseStringList``/``matchIfList`` (src/misc/utils.cc) and the ``^``/``=`` stripping of
``ncclIbInit``, compiled unmodified from tags v2.30.4-1 and v2.30.7-1 and run against this
device list. Rows for 2.4.8 are read
off v2.4.8-1 (net_ib.cc L107-110, utils.cc L146-203): ``^`` is skipped inside the parser and
there is no exact mode, so ``=`` is part of the name.
"""

from __future__ import annotations

DEVICES = ("rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1", "mlx5_1", "mlx5_10")
ALL = DEVICES
NONE: tuple[str, ...] = ()
_BUT_F1 = tuple(d for d in DEVICES if d != "rocep1s0f1")

# value -> (selected by 2.5.6 .. 2.30.4, selected by 2.30.7+)
BOTH: dict[str | None, tuple[tuple[str, ...], tuple[str, ...]]] = {
    None: (ALL, ALL),
    "rocep1s0f1,roceP2p1s0f1": (("rocep1s0f1", "roceP2p1s0f1"),) * 2,
    "rocep1s0f": (("rocep1s0f0", "rocep1s0f1"),) * 2,
    "=rocep1s0f1": (("rocep1s0f1",),) * 2,
    "^rocep1s0f1": (_BUT_F1, _BUT_F1),
    "^=rocep1s0f1": (_BUT_F1, _BUT_F1),
    "^^rocep1s0f1": (ALL, ALL),
    "==rocep1s0f1": (NONE, NONE),
    "=^rocep1s0f1": (NONE, NONE),
    "rocep1s0f1:1": (("rocep1s0f1",),) * 2,
    "rocep1s0f1:2": (NONE, NONE),
    "rocep1s0f1:": (NONE, ("rocep1s0f1",)),
    "rocep1s0f1::0:1": (NONE, ("rocep1s0f1",)),
    ":1": (ALL, ALL),
    "": (ALL, ALL),
    "=": (ALL, ALL),
    "^": (NONE, NONE),
    "^=": (NONE, NONE),
    "mlx5_1": (("mlx5_1", "mlx5_10"),) * 2,
    "=mlx5_1": (("mlx5_1",),) * 2,
    "ROCEP1S0F1": (NONE, NONE),
    " rocep1s0f1": (NONE, NONE),
}

# NCCL 2.4.8: value -> selected
OLD: dict[str | None, tuple[str, ...]] = {
    None: ALL,
    "rocep1s0f1,roceP2p1s0f1": ("rocep1s0f1", "roceP2p1s0f1"),
    "=rocep1s0f1": NONE,
    "^rocep1s0f1": _BUT_F1,
    "^=rocep1s0f1": ALL,
    "^^rocep1s0f1": ALL,
    "rocep1s0f1:": NONE,
    "^": NONE,
    "mlx5_1": ("mlx5_1", "mlx5_10"),
}

VERSIONS = {"2.4.8": 0, "2.28.9": 1, "2.30.4": 1, "2.30.7": 2}


def expected(value: str | None, version: str) -> tuple[str, ...]:
    era = VERSIONS[version]
    if era == 0:
        return OLD[value]
    return BOTH[value][era - 1]


def cases() -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = [
        (v, ver) for ver in ("2.28.9", "2.30.4", "2.30.7") for v in BOTH
    ]
    return out + [(v, "2.4.8") for v in OLD]
