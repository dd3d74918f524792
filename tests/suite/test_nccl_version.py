"""NCCL_IB_HCA is read by the grammar of the NCCL installed on the nodes (issue 13 item 4).

`rocep1s0f1:,roceP2p1s0f1:` means "any port" from NCCL 2.30.7 on and port 0 (nothing) before:
the simulator decides it from NCCL's parser of that version, the product from the library
version it finds on the node; both must agree for the suite to pass or fail the same items.
"""

from __future__ import annotations

import pytest

from tests.suite.runner import run_suite, write_cluster

pytestmark = pytest.mark.slow

TRAILING_COLON = {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "rocep1s0f1:,roceP2p1s0f1:"}


def _run(pytester: pytest.Pytester, version: str) -> tuple[set[str], dict[str, str]]:
    cluster = write_cluster(
        pytester.path,
        "direct-2.yaml",
        changes={"nccl": {"env": TRAILING_COLON}, "simulate": {"seed": 3, "nccl_version": version}},
    )
    run = run_suite(pytester, cluster, markers="nccl_env or nccl")
    return run.failed, run.messages


def test_trailing_colon_selects_nothing_before_2_30_7(pytester: pytest.Pytester) -> None:
    failed, messages = _run(pytester, "2.28.9")
    hca = {f"test_nccl_ib_hca[spark-{i}]" for i in (1, 2)}
    uses_ib = {f"test_nccl_uses_ib[spark-{i}]" for i in (1, 2)}
    assert failed == hca | uses_ib | {"test_nccl_busbw"}
    assert "under NCCL 2.28.9" in messages["test_nccl_ib_hca[spark-1]"]


def test_trailing_colon_is_any_port_from_2_30_7(pytester: pytest.Pytester) -> None:
    failed, _ = _run(pytester, "2.30.7")
    assert not failed
