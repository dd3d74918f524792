"""The plugin as pytest sees it: inert without --cluster, the shipped suite, usage errors, ids."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from pytest_sparkfabric.session import EXIT_INCOMPLETE
from tests.suite.runner import rows_of

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
    pytester.makepyfile(test_own="def test_one():\n    assert True\n")
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    fixtures = pytester.runpytest("--fixtures", "-q").stdout.str()
    assert "node_pair" not in fixtures and "sparkfabric" not in fixtures.lower()


def test_shipped_suite_is_collected_with_no_path(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    result = pytester.runpytest("--cluster", str(cluster_file), "--collect-only", "-q")
    ids = _collected(result)
    assert ids, result.stdout.str()
    assert ids[-1] == "sparkfabric::verdict"
    assert all(re.match(r"test_\w+\.py::", i) for i in ids[:-1])
    assert any("[spark-1:rail0->spark-2:rail0]" in i for i in ids)


def test_explicit_path_wins(pytester: pytest.Pytester, cluster_file: Path) -> None:
    pytester.makepyfile(test_mine="def test_mine(cluster):\n    assert cluster.mtu == 9000\n")
    result = pytester.runpytest("--cluster", str(cluster_file), "test_mine.py", "-q")
    result.assert_outcomes(passed=2)  # test_mine and sparkfabric::verdict


def test_ini_key_selects_the_cluster(pytester: pytest.Pytester, cluster_file: Path) -> None:
    pytester.makeini(f"[pytest]\nsparkfabric_cluster = {cluster_file}\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert any("test_links.py::" in i for i in _collected(result))


def test_bad_yaml_is_a_usage_error_listing_every_problem(pytester: pytest.Pytester) -> None:
    bad = pytester.makefile(
        ".yaml",
        bad=DIRECT.replace("192.168.100.12/24", "192.168.100.11/24").replace(
            "transport: sim", "transport: sim\ntoplogy_extra: 1"
        ),
    )
    result = pytester.runpytest("--cluster", str(bad))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "bad.yaml:" in err and "problem" in err
    assert "toplogy_extra" in err
    assert "Traceback" not in err


def test_missing_cluster_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--cluster", "nope.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "nope.yaml: 1 problem" in result.stderr.str() and "does not exist" in result.stderr.str()


def test_plugin_can_be_disabled(pytester: pytest.Pytester, cluster_file: Path) -> None:
    result = pytester.runpytest("-p", "no:sparkfabric", "--cluster", str(cluster_file))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unrecognized arguments: --cluster" in result.stderr.str()


def test_ids_are_stable_between_collections(pytester: pytest.Pytester, cluster_file: Path) -> None:
    first = _collected(pytester.runpytest("--cluster", str(cluster_file), "--collect-only", "-q"))
    second = _collected(pytester.runpytest("--cluster", str(cluster_file), "--collect-only", "-q"))
    assert first and first == second


def test_header_names_the_cluster(pytester: pytest.Pytester, cluster_file: Path) -> None:
    result = pytester.runpytest("--cluster", str(cluster_file), "--collect-only")
    result.stdout.fnmatch_lines(["sparkfabric: cluster.yaml: direct, 2 nodes, transport sim*"])


def test_xdist_spreading_is_refused_with_the_fix(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    result = pytester.runpytest("--cluster", str(cluster_file), "-n", "2", "-p", "xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "use --dist loadgroup" in result.stderr.str()


def test_soak_items_run_last_then_the_kernel_log(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    ids = _collected(pytester.runpytest("--cluster", str(cluster_file), "--collect-only", "-q"))
    assert ids.pop() == "sparkfabric::verdict"
    # The kernel log is read once, after every traffic window (measure/kernel_log.py).
    log = [i for i, nodeid in enumerate(ids) if "test_kernel_log[" in nodeid]
    assert log and log == list(range(len(ids) - len(log), len(ids)))
    ids = ids[: log[0]]
    soak = [i for i, nodeid in enumerate(ids) if "test_soak" in nodeid]
    assert soak and soak == list(range(len(ids) - len(soak), len(ids)))


def test_unreachable_node_fails_its_tests_with_one_line(pytester: pytest.Pytester) -> None:
    cfg = pytester.makefile(
        ".yaml",
        down=DIRECT + "simulate:\n  faults:\n    - {fault: node_unreachable, node: spark-2}\n",
    )
    result = pytester.runpytest(f"--cluster={cfg}", "-m", "mtu", "-p", "no:html")
    out = result.stdout.str()
    assert result.ret == EXIT_INCOMPLETE
    result.stdout.fnmatch_lines(
        [
            "*sparkfabric: INCOMPLETE *",
            "*1. [[]node_unreachable] spark-2: the node cannot be logged into*",
            "*seen: spark-2: ssh: connection timed out after 10 s*",
        ]
    )
    assert "During handling" not in out and "Traceback" not in out
    assert not [line for line in result.outlines if line.startswith("FAILED test_")]


def test_node_host_gives_testinfra_checks_on_the_simulator(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    pytester.makepyfile(
        test_own="""
        def test_own(node, node_host):
            assert node_host.interface("enp1s0f1np1").exists
            addrs = node_host.interface("enp1s0f1np1").addresses
            assert any(a.startswith("192.168.100.") for a in addrs)
            assert node_host.sysctl("net.ipv6.conf.enp1s0f1np1.disable_ipv6") == 1
            assert node_host.run("ethtool %s", "enp1s0f1np1").stdout.count("200000Mb/s") == 1
        """
    )
    result = pytester.runpytest(f"--cluster={cluster_file}", "test_own.py", "-p", "no:html")
    result.assert_outcomes(passed=3)  # two nodes and sparkfabric::verdict


@pytest.mark.slow
def test_results_json_is_complete_under_xdist_loadgroup(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(
        f"--cluster={cluster_file}",
        "-n",
        "2",
        "--dist",
        "loadgroup",
        "-m",
        "mtu",
        "-p",
        "no:html",
        f"--sparkfabric-json={out}",
    )
    result.assert_outcomes(passed=9)  # 8 and sparkfabric::verdict
    tests = rows_of(json.loads(out.read_text()))
    assert len(tests) == 8
    assert all(t["properties"].get("node") for t in tests)


def test_missing_replay_dir_is_a_usage_error(pytester: pytest.Pytester) -> None:
    cfg = pytester.makefile(
        ".yaml", replay=DIRECT.replace("transport: sim", "transport: replay\nreplay_dir: rec")
    )
    result = pytester.runpytest(f"--cluster={cfg}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "replay.yaml:3: replay_dir" in result.stderr.str()
    assert "--sparkfabric-record" in result.stderr.str()


def test_recording_into_a_used_folder_is_refused(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    rec = pytester.path / "rec"
    first = pytester.runpytest(
        f"--cluster={cluster_file}", "-m", "mtu", f"--sparkfabric-record={rec}"
    )
    assert first.ret == pytest.ExitCode.OK
    assert (rec / "spark-1.jsonl").read_text().count("\n") >= 4
    assert oct((rec / "spark-1.jsonl").stat().st_mode & 0o777) == "0o600"
    assert oct(rec.stat().st_mode & 0o777) == "0o700"
    second = pytester.runpytest(f"--cluster={cluster_file}", f"--sparkfabric-record={rec}")
    assert second.ret == pytest.ExitCode.USAGE_ERROR
    assert "already holds a recording" in second.stderr.str()


# -- input that is not a cluster file or a recording: usage errors, at once ------------------


def _usage_error(pytester: pytest.Pytester, *args: str) -> str:
    result = pytester.runpytest_subprocess(*args, "-p", "no:html", timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert "Traceback" not in err and "Traceback" not in result.stdout.str()
    return err


def test_a_fifo_as_cluster_is_refused_without_blocking(pytester: pytest.Pytester) -> None:
    fifo = pytester.path / "cluster.yaml"
    os.mkfifo(fifo)
    err = _usage_error(pytester, f"--cluster={fifo}")
    assert f"{fifo}: 1 problem\n  the path is a FIFO (named pipe), not a regular file." in err


@pytest.mark.parametrize(
    ("path", "what"),
    [
        ("/dev/zero", "the path is a character device, not a regular file."),
        (".", "the path is a directory, not a file."),
    ],
)
def test_a_device_or_folder_as_cluster_is_refused(
    pytester: pytest.Pytester, path: str, what: str
) -> None:
    assert what in _usage_error(pytester, f"--cluster={path}")


@pytest.mark.slow
def test_a_huge_cluster_file_is_refused(pytester: pytest.Pytester) -> None:
    big = pytester.path / "big.yaml"
    big.write_text(DIRECT + "#" * 2**20 + "\n")
    err = _usage_error(pytester, f"--cluster={big}")
    size = big.stat().st_size
    assert f"the file is {size} bytes; a cluster file is at most 1048576 bytes (1 MiB)." in err


def test_a_damaged_recording_is_a_usage_error_before_any_test(pytester: pytest.Pytester) -> None:
    rec = pytester.path / "rec"
    rec.mkdir()
    (rec / "spark-1.jsonl").write_text('{"command": "ip -j addr", "rc": 0, "stdout": "[')
    cfg = pytester.makefile(
        ".yaml", replay=DIRECT.replace("transport: sim", "transport: replay\nreplay_dir: rec")
    )
    err = _usage_error(pytester, f"--cluster={cfg}")
    assert f"sparkfabric: recording {rec / 'spark-1.jsonl'}:1: not valid JSON (" in err
    assert "the line is cut short (an unfinished run?)" in err
    assert "Fix: record again with --sparkfabric-record DIR" in err


def test_a_switch_recording_alone_makes_the_record_folder_used(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    rec = pytester.path / "rec"
    (rec / "switch").mkdir(parents=True)
    (rec / "switch" / "rest.jsonl").write_text('{"key": "[]", "reply": []}\n')
    err = _usage_error(pytester, f"--cluster={cluster_file}", f"--sparkfabric-record={rec}")
    assert f"--sparkfabric-record {rec} already holds a recording." in err


def test_a_record_path_that_is_a_file_is_refused(
    pytester: pytest.Pytester, cluster_file: Path
) -> None:
    record = f"--sparkfabric-record={cluster_file}"
    err = _usage_error(pytester, f"--cluster={cluster_file}", record)
    assert f"--sparkfabric-record {cluster_file} is not a folder." in err
