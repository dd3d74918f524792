"""The simulator's NCCL device selection: labels, the 32-entry limit, conf files as NCCL reads
them (against NCCL's own results per version: tests/probes/test_ncclconf.py)."""

from __future__ import annotations

from sparkfabric_sim import nccl_conf, nccl_select
from tests.nccl_ib_hca_golden import DEVICES


def test_rail_and_plane_label_only_from_2_30_7() -> None:
    f = nccl_select.hca_filter("rocep1s0f1::0:1,roceP2p1s0f1:1:1", (2, 30, 7))
    assert f.label("rocep1s0f1", 1) == nccl_select.Entry("rocep1s0f1", -1, 0, 1)
    assert f.label("roceP2p1s0f1", 1) == nccl_select.Entry("roceP2p1s0f1", 1, 1, -1)
    old = nccl_select.hca_filter("rocep1s0f1:1:0:1", (2, 28, 9))
    assert old.entries == (nccl_select.Entry("rocep1s0f1", 1),)


def test_at_most_32_entries_are_read_and_the_version_picks_the_grammar() -> None:
    value = ",".join(f"x{i}" for i in range(40)) + ",rocep1s0f1"
    for ver in ((2, 28, 9), (2, 30, 7)):
        assert nccl_select.select(value, DEVICES, ver) == []


def test_conf_files_as_nccl_reads_them() -> None:
    files = {
        "/home/u/.nccl.conf": "NCCL_IB_HCA=a\r\n#NCCL_DEBUG=INFO\n NCCL_NET=Socket\nX=1 # note\n",
        "/etc/nccl.conf": "NCCL_IB_HCA=b\nNCCL_DEBUG=WARN\nnoequals\n",
        "/tmp/custom": "NCCL_IB_HCA=c\n",
    }
    env = nccl_conf.resolve({"NCCL_DEBUG": "INFO"}, "/home/u", files.get)
    assert env == {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "a", " NCCL_NET": "Socket", "X": "1 # note"}
    custom = nccl_conf.resolve({"NCCL_CONF_FILE": "/tmp/custom"}, "/home/u", files.get)
    assert custom["NCCL_IB_HCA"] == "c" and custom["NCCL_DEBUG"] == "WARN"
