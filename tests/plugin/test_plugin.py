"""The plugin as pytest sees it: inert without --cluster, the shipped suite, usage errors, ids."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.test_hostile_files import NESTED

DIRECT = """\
topology: direct
transport: sim
nodes:
  - name: spark-1
    ports:
      1: [192.168.100.11/24, 192.168.101.11/24]
  - name: spark-2
    ports:
      1: [192.168.100.12/24, 192.168.101.12/24]
"""


@pytest.fixture
def cluster_file(pytester: pytest.Pytester) -> Path:
    return pytester.makefile(".yaml", cluster=DIRECT)


def _collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_inert_without_cluster(pytester: pytest.Pytester) -> None:
    # Its fixtures are not listed either: test_public_face.test_pytest_listings_work.
    pytester.makepyfile(test_own="def test_one():\n    assert True\n")
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    assert "sparkfabric::verdict" not in result.stdout.str() and result.ret == 0


def test_shipped_suite_is_collected_with_no_path_stable_ids_the_soak_then_the_kernel_log_last(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    result = pytester.runpytest("--cluster", str(cluster_file), "--collect-only", "-q")
    ids = _collected(result)
    assert ids, result.stdout.str()
    assert ids.pop() == "sparkfabric::verdict"
    assert all(re.match(r"test_\w+\.py::", i) for i in ids)
    assert any("[spark-1:rail0->spark-2:rail0]" in i for i in ids)
    pytester.makeini(f"[pytest]\nsparkfabric_cluster = {cluster_file}\n")  # the ini key
    again = pytester.runpytest("--collect-only", "-q")
    assert _collected(again) == [*ids, "sparkfabric::verdict"]
    header = pytester.runpytest("--cluster", str(cluster_file), "--collect-only")  # -q hides it
    header.stdout.fnmatch_lines(["sparkfabric: cluster.yaml: direct, 2 nodes, transport sim*"])
    # The kernel log is read once, after every traffic window (measure/kernel_log.py).
    log = [i for i, nodeid in enumerate(ids) if "test_kernel_log[" in nodeid]
    assert log and log == list(range(len(ids) - len(log), len(ids)))
    ids = ids[: log[0]]
    soak = [i for i, nodeid in enumerate(ids) if "test_soak" in nodeid]
    assert soak and soak == list(range(len(ids) - len(soak), len(ids)))


def test_own_tests_take_our_fixtures_and_keep_their_own_parametrize(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    """An explicit path runs that file only; a user's own parametrize of `node` stands."""
    pytester.makepyfile(
        test_mine="""
        import pytest
        def test_mine(cluster):
            assert cluster.mtu == 9000
        @pytest.mark.parametrize('node', ['a', 'b'])
        def test_own(node):
            assert node in ('a', 'b')
        def test_ours(node):
            assert node.name.startswith('spark-')
        def test_host(node, node_host):
            assert node_host.interface("enp1s0f1np1").exists
            addrs = node_host.interface("enp1s0f1np1").addresses
            assert any(a.startswith("192.168.100.") for a in addrs)
            assert node_host.sysctl("net.ipv6.conf.enp1s0f1np1.disable_ipv6") == 1
            assert node_host.run("ethtool %s", "enp1s0f1np1").stdout.count("200000Mb/s") == 1
        """
    )
    result = pytester.runpytest("--cluster", str(cluster_file), "test_mine.py", "-q")
    # test_mine, two own, two of ours and two hosts (spark-1, spark-2), sparkfabric::verdict
    result.assert_outcomes(passed=8)


@pytest.mark.slow
def test_results_json_is_complete_under_xdist_loadgroup(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    out = pytester.path / "results.json"
    xdist = ["-n", "2", "--dist", "loadgroup", "-m", "mtu", "-p", "no:html"]
    result = pytester.runpytest_subprocess(
        f"--cluster={cluster_file}", *xdist, f"--sparkfabric-json={out}"
    )
    result.assert_outcomes(passed=9)  # 8 and sparkfabric::verdict
    items = json.loads(out.read_text())["items"]
    assert len(items) == 8
    assert all(i["properties"].get("node") for i in items)


# -- input that is not a cluster file or a recording: usage errors, at once ------------------

REPLAY = DIRECT.replace("transport: sim", "transport: replay\nreplay_dir: rec")
BAD = DIRECT.replace("192.168.100.12/24", "192.168.100.11/24").replace(
    "transport: sim", "transport: sim\ntoplogy_extra: 1"
)
BASELINE = "--sparkfabric-baseline={p}/old.json"
CUT = '{"command": "ip -j addr", "rc": 0, "stdout": "['


@pytest.mark.parametrize(
    ("files", "args", "said"),
    [
        ({}, ["--cluster=nope.yaml"], ["nope.yaml: 1 problem", "does not exist"]),
        ({"bad.yaml": BAD}, ["--cluster={p}/bad.yaml"], ["bad.yaml:", "problem", "toplogy_extra"]),
        ({"c.yaml": DIRECT}, ["-p", "no:sparkfabric", "--cluster=c.yaml"],
         ["unrecognized arguments: --cluster"]),
        ({"c.yaml": DIRECT}, ["--cluster=c.yaml", "-n", "2", "-p", "xdist"],
         ["use --dist loadgroup"]),
        ({"replay.yaml": REPLAY}, ["--cluster={p}/replay.yaml"],
         ["replay.yaml:3: replay_dir", "--sparkfabric-record"]),
        ({"replay.yaml": REPLAY, "rec/spark-1.jsonl": CUT},
         ["--cluster={p}/replay.yaml"],
         ["sparkfabric: recording {p}/rec/spark-1.jsonl:1: not valid JSON (",
          "the line is cut short (an unfinished run?)",
          "Fix: record again with --sparkfabric-record DIR"]),
        ({"c.yaml": DIRECT, "rec/spark-1.jsonl": CUT},
         ["--cluster=c.yaml", "--sparkfabric-record={p}/rec"],
         ["--sparkfabric-record {p}/rec already holds a recording.",
          "Fix: record into an empty or new folder"]),
        ({"c.yaml": DIRECT}, ["--cluster=c.yaml", "--sparkfabric-record={p}/c.yaml"],
         ["--sparkfabric-record {p}/c.yaml is not a folder."]),
        ({"c.yaml": DIRECT, "old.json": "{}"}, ["--cluster=c.yaml", BASELINE],
         ["--sparkfabric-baseline {p}/old.json: not a sparkfabric results document"]),
        ({"c.yaml": DIRECT, "old.json": NESTED}, ["--cluster=c.yaml", BASELINE],
         ["--sparkfabric-baseline {p}/old.json: not JSON (recursion limit exceeded"]),
    ],
    ids=["missing", "bad", "disabled", "xdist", "no-replay-dir", "damaged-recording",
         "node-recording", "record-path-a-file", "baseline-not-results", "baseline-nested"],
)  # fmt: skip
def test_usage_errors_say_what_is_wrong(
    pytester: pytest.Pytester, files: dict[str, str], args: list[str], said: list[str]
) -> None:
    for name, text in files.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(text)
    p = str(pytester.path)
    result = pytester.runpytest(*(a.format(p=p) for a in args), "-p", "no:html")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert "Traceback" not in err and "Traceback" not in result.stdout.str()
    for words in said:
        assert words.format(p=p) in err, words
