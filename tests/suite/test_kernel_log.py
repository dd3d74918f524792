"""test_kernel_log on the simulator: a healthy run's log has mlx5 lines only from boot (before
the window) and passes; a link that flaps during the bandwidth rounds leaves "Link down" /
"Link up" on both ends of its cable and fails under the quick gate with one root cause naming
the cable and quoting the lines; a log the user may not read is a warning, not a failure."""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

QUICK = ["test_kernel_log.py", "test_qos.py", "test_bandwidth.py"]


def test_a_healthy_log_passes(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "direct-2.yaml")
    run = run_suite(pytester, path, files=["test_kernel_log.py"])
    assert run.outcomes == {
        "test_kernel_log[spark-1]": "passed",
        "test_kernel_log[spark-2]": "passed",
    }
    measured = run.props["test_kernel_log[spark-1]"]["measured"]
    assert measured.startswith("0 link down, 0 AER (0 uncorrected), 0 thermal in the last ")
    assert measured.endswith("(dmesg)")


def test_a_flap_during_the_bandwidth_rounds_fails_with_one_cause(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "faults/link_flap.yaml")
    run = run_suite(pytester, path, markers="not soak", files=QUICK)
    assert {"test_kernel_log[spark-1]", "test_kernel_log[spark-2]"} <= run.failed
    message = run.messages["test_kernel_log[spark-2]"]
    assert "spark-2: the link dropped during the run (kernel log): +" in message
    assert "`mlx5_core 0000:01:00.1 enp1s0f1np1: Link down`" in message
    assert "`mlx5_core 0002:01:00.1 enP2p1s0f1np1: Link down`" in message
    assert run.props["test_kernel_log[spark-2]"]["rule"] == "link_down"
    causes = [(c["rule"], c["objects"]) for c in run.causes]
    assert causes == [("link_down", ["spark-1:p1<->spark-2:p1"])], run.causes
    assert "test_kernel_log.py::test_kernel_log[spark-1]" in run.causes[0]["items"]
    assert any("Link down" in e for e in run.causes[0]["evidence"]), run.causes[0]


def test_an_unreadable_log_is_a_warning_with_the_fix(pytester: pytest.Pytester) -> None:
    path = write_cluster(pytester.path, "direct-2.yaml", changes={"simulate": {"profile": "stock"}})
    run = run_suite(pytester, path, files=["test_kernel_log.py"])
    assert set(run.outcomes.values()) == {"warned"}, run.messages
    warning = run.doc["items"][0]["warnings"][0]["message"]
    assert warning.startswith(
        "spark-1: the kernel log is not readable (dmesg: read kernel buffer failed: Operation "
        "not permitted; Hint: You are currently not seeing messages from other users and the "
        "system.)"
    ), warning
    assert "`sudo usermod -aG adm $USER`" in warning
    assert "kernel.dmesg_restrict=0" in warning
    assert run.doc["verdict"] == "accepted"
