"""Every parser is total, and still finds the result among noise (hypothesis)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.probes import PARSERS, ParseError, to_jsonable
from pytest_sparkfabric.probes.nccl import parse_nccl_tests
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw
from pytest_sparkfabric.probes.ping import parse_ping

from . import golden
from .golden import mutated, sample, with_noise

SAMPLES = golden.raw_samples
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("any_text", [True, False], ids=["any-text", "mutated-sample"])
@pytest.mark.parametrize("name", sorted(PARSERS))
@FAST
@given(data=st.data())
def test_parser_total(name: str, any_text: bool, data: st.DataObject) -> None:
    """A result (that converts to JSON data) or ParseError; nothing else may escape."""
    if any_text:
        text = data.draw(st.text(max_size=400))
    else:
        samples = [golden.read(p) for p in SAMPLES if p.parent.name == name]
        text = data.draw(mutated(data.draw(st.sampled_from(samples))))
    try:
        result = PARSERS[name](text)
    except ParseError as err:
        assert err.tool and err.missing
        return
    to_jsonable(result)


@FAST
@given(stdout=st.text(max_size=200), stderr=st.text(max_size=200), rc=st.none() | st.integers())
def test_ping_total_with_streams_and_rc(stdout: str, stderr: str, rc: int | None) -> None:
    r = parse_ping(stdout, stderr, rc)
    assert r.verdict in ("ok", "local_mtu", "lost", "error")
    assert (r.verdict == "ok") == r.ok


def _parses(parser: Callable[[str], object], folder: str) -> list[str]:
    """The samples of a folder that parse (the error-path ones have nothing to keep)."""
    out = []
    for p in golden.raw_files(golden.DATA / folder):
        try:
            parser(golden.read(p))
        except ParseError:
            continue
        out.append(p.name)
    return out


# What each result keeps among noise lines, by the parser of its folder.
KEPT = {
    "ib_write_bw": (parse_ib_write_bw, ("bw_avg_gbps", "rows")),
    "nccl-tests": (parse_nccl_tests, ("avg_busbw_gbytes_s", "rows", "ranks", "transports")),
}


@pytest.mark.parametrize(
    ("folder", "name"), [(f, n) for f, (parser, _) in KEPT.items() for n in _parses(parser, f)]
)
@FAST
@given(data=st.data())
def test_result_survives_noise(folder: str, name: str, data: st.DataObject) -> None:
    parser, kept = KEPT[folder]
    text = sample(f"{folder}/{name}")
    clean, noisy = parser(text), parser(data.draw(with_noise(text)))
    assert [getattr(noisy, k) for k in kept] == [getattr(clean, k) for k in kept]
