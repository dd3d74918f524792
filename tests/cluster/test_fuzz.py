"""Whatever a file holds, parse_cluster returns a Cluster or raises ConfigError with problems."""

from __future__ import annotations

import contextlib
import copy
import os
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_sparkfabric.cluster import ConfigError, parse_cluster
from pytest_sparkfabric.cluster.source import Path_
from tests.cluster.samples import VALID

FUZZ = settings(
    max_examples=int(os.environ.get("SPARKFABRIC_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

KEYS = "topology mtu nodes switch transport ssh ports name host address netdev thresholds nccl"
KEYS += " simulate faults fault replay_dir arp_sysctls link_speed cables approved vendor part"
WORDS = ["direct", "mesh", "ring", "switch", "ssh", "sim", "replay", "spark-1", "link_down"]
WORDS += ["yes", "22", "1", "0", "~/.ssh/id", "{ranks}", "100G", "qsfp56-dd-1-1"]
YAML_ISH = ":-[]{}#&*!|>'\"%@`,? \n\t0123456789abcnodesportsrg."
ADDRESSES = ["192.168.100.11/24", "192.168.101.11/24", "10.0.0.1", "300.1.1.1/24", "::1/64"]

text_no_surrogates = st.text(st.characters(codec="utf-8"), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | text_no_surrogates
    | st.sampled_from(WORDS + ADDRESSES)
    | st.sampled_from([0, 1, 2, 9000, 65536, -1])
)
keys = st.sampled_from(KEYS.split()) | text_no_surrogates | st.integers(-2, 3)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=30,
)


def assert_total(text: str) -> None:
    try:
        cluster = parse_cluster(text)
    except ConfigError as err:
        assert err.problems, "a ConfigError must name at least one problem"
        rendered = str(err)
        assert rendered.startswith("cluster.yaml: ")
        for p in err.problems:
            assert p.message
            assert p.line is None or p.line >= 1
            assert p.render() in rendered
        return
    assert cluster.nodes


@pytest.mark.slow
@FUZZ
@given(documents | st.dictionaries(st.sampled_from(KEYS.split()), documents, max_size=6))
def test_random_documents_and_top_level_mappings(data: Any) -> None:
    assert_total(yaml.safe_dump(data))


@FUZZ
@given(st.text(max_size=200) | st.text(alphabet=YAML_ISH, max_size=120))
@example("")
@example("\x00")
@example("&a [*a]")
@example("a: &a {b: *a}")
@example("[" * 2000 + "]" * 2000)
@example("a: !!python/object:os.system {}")
@example("? [1, 2]\n: x\n")
@example("<<: {topology: ring}\n")
@example("topology: ring\ntopology: mesh\n")
@example("- &x [1]\n" + "- &y [*x,*x,*x,*x,*x,*x,*x,*x,*x]\n" * 1)
def test_random_and_yaml_ish_text(text: str) -> None:
    assert_total(text)


# -- mutations of valid files -------------------------------------------------------------------


def paths(data: Any, here: Path_ = ()) -> list[Path_]:
    data = dict(enumerate(data)) if isinstance(data, list) else data
    kids = data.items() if isinstance(data, dict) else ()
    return [here, *(p for k, v in kids for p in paths(v, (*here, k)))]


def get(data: Any, path: Path_) -> Any:
    for step in path:
        data = data[step]
    return data


def mutate(data: Any, kind: str, path: Path_, value: Any, other: Path_) -> Any:
    data = copy.deepcopy(data)
    if not path:
        return value if kind == "replace" else data
    parent, key = get(data, path[:-1]), path[-1]
    if kind == "delete":
        del parent[key]
    elif kind == "replace":
        parent[key] = value
    elif kind == "duplicate" and isinstance(parent, list):
        parent.insert(int(key), copy.deepcopy(parent[int(key)]))
    elif kind == "duplicate":
        parent[f"{key}_copy"] = copy.deepcopy(parent[key])
    elif kind == "swap" and other and path != other[: len(path)] and other != path[: len(other)]:
        with contextlib.suppress(KeyError, IndexError, TypeError):
            a, b = get(data, path), get(data, other)
            get(data, other[:-1])[other[-1]] = a
            parent[key] = b
    return data


@pytest.mark.slow
@FUZZ
@given(st.sampled_from(sorted(VALID)), st.data())
def test_mutations_compose(name: str, draw: st.DataObject) -> None:
    data = yaml.safe_load(VALID[name])
    for _ in range(draw.draw(st.integers(1, 5))):
        all_paths = paths(data)
        kind = draw.draw(st.sampled_from(["delete", "replace", "duplicate", "swap"]))
        data = mutate(
            data,
            kind,
            draw.draw(st.sampled_from(all_paths)),
            draw.draw(documents),
            draw.draw(st.sampled_from(all_paths)),
        )
    assert_total(yaml.safe_dump(data))
