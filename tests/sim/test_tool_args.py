"""The simulated tools read their arguments and print as the real ones do (issue 12 item 6, issue
14 item 3): a flag the suite gets wrong fails here as on a box. Each expectation names its source
(NCCL's device selection: NCCL's own per version, tests/nccl_ib_hca_golden.py)."""

from __future__ import annotations

import json

import pytest

from pytest_sparkfabric.measure.prereq import could_not_run
from pytest_sparkfabric.probes.ethtool import parse_ethtool_stats
from pytest_sparkfabric.probes.hw_counters import build_hw_counters, parse_hw_counters
from pytest_sparkfabric.probes.perftest import parse_ib_write_bw
from pytest_sparkfabric.transport.base import Job, RunResult
from sparkfabric_sim import nccl_conf, nccl_select
from sparkfabric_sim.tools.qos import render
from tests.nccl_ib_hca_golden import DEVICES
from tests.probes.golden import sample
from tests.sim.conftest import IB, PLAYBOOK, out, run, served, sim

BW = IB.format("rocep1s0f1") + " -p 18600"
HOSTS = "-H 192.168.100.11:1,192.168.100.12:1"
NCCL = f"{PLAYBOOK}all_reduce_perf -b 1M -e 1M -f 2 -g 1"


def _run(cmd: str) -> RunResult:
    return run(sim(), "spark-1", cmd, 120)


def _ran(cmd: str) -> None:
    """mpirun started the ranks and nccl-tests ran to its end."""
    r = _run(cmd)
    assert r.rc == 0 and "# Collective test concluded: all_reduce_perf" in r.stdout, r.stderr


def _ib(client_flags: str, server_flags: str = "") -> RunResult:
    return served(sim(), "spark-2", BW, "spark-1", f"{client_flags} 192.168.100.12", server_flags)


USAGE = "\n\nUsage: iperf3 [-s|-c host] [options]"
# command, exit status, how its stderr starts (the whole stderr where it ends with a newline)
ANSWERS = [
    # ping: iputils 20240117 ping/ping.c, iputils_common.c strtol_or_err
    ("ping -c 0 192.168.100.12", 1,
     "ping: invalid argument: '0': out of range: 1 <= value <= 9223372036854775807\n"),
    ("ping -c 1 -w 1.5 192.168.100.12", 1, "ping: invalid argument: '1.5'\n"),  # whole seconds
    ("ping -c 1 -W 0.5 -w 2 192.168.100.12", 0, ""),  # but the reply wait is a float
    ("ping -c 1 -W soon 192.168.100.12", 2, "ping: bad linger time: soon\n"),
    ("ping -M yes -c 1 192.168.100.12", 2, "ping: invalid -M argument: yes\n"),
    # iperf3: iperf_api.c iperf_parse_arguments, iperf_error.c (3.16)
    ("iperf3 -s -P 4 -p 5300", 1,
     "iperf3: parameter error - some option you are trying to set is client only" + USAGE),
    ("iperf3 -c 192.168.100.12 -1 -J", 1,
     "iperf3: parameter error - some option you are trying to set is server only" + USAGE),
    ("iperf3 -c 1.2.3.4 -P 129", 1,
     "iperf3: parameter error - number of parallel streams too large (maximum = 128)" + USAGE),
    ("iperf3 -c 1.2.3.4 -t 90000", 1,
     "iperf3: parameter error - test duration too long (maximum = 86400 seconds)" + USAGE),
    ("iperf3 -s -c 1.2.3.4", 1,
     "iperf3: parameter error - cannot be both server and client" + USAGE),
]  # fmt: skip


@pytest.mark.parametrize(("command", "rc", "stderr"), ANSWERS)
def test_a_flag_is_read_as_the_tool_reads_it(command: str, rc: int, stderr: str) -> None:
    r = _run(command)
    whole = stderr.endswith("\n") or not stderr
    assert r.rc == rc and (r.stderr == stderr if whole else r.stderr.startswith(stderr))


def test_iperf3_time_is_read_with_atoi() -> None:
    t = sim()
    t.start(Job("spark-2", "iperf3 -s -1 -p 5310", 60))
    r = run(t, "spark-1", "iperf3 -c 192.168.100.12 -p 5310 -t 3.9 -J")
    assert r.rc == 0 and json.loads(r.stdout)["start"]["test_start"]["duration"] == 3


# -- ib_write_bw: perftest_parameters.c (00b55b66) ------------------------------------------


def test_ib_write_bw_mtu_cpu_util_and_duration_flags() -> None:
    r = _ib("-m 9000 -D 2", "-D 2")
    assert r.rc == 0 and " Invalid MTU - 9000 \n" in r.stderr
    assert " Mtu             : 4096[B]" in r.stdout
    # duration (or infinite) mode: no peak; CPU utilisation only in duration mode
    assert _ib("-D 2", "-D 2").stdout.startswith(" WARNING: BW peak won't be measured")
    timed = _ib("-D 2 --cpu_util", "-D 2")
    assert parse_ib_write_bw(timed.stdout).rows[0].cpu_util_pct is not None
    counted = _ib("--cpu_util -n 100")
    assert counted.stderr == " CPU Utilization works only with Duration mode.\n"
    assert "CPU_Util" not in counted.stdout and parse_ib_write_bw(counted.stdout).rows


# -- mpirun: Open MPI v4.1.8 orted_submit.c, help-oob-tcp.txt ---------------------------------


def test_mpirun_as_root_needs_the_flag_or_both_variables() -> None:
    r = _run(f"mpirun -np 2 {HOSTS} {NCCL}")
    assert r.rc == 1 and "mpirun has detected an attempt to run as root." in r.stderr
    only_one = _run(f"OMPI_ALLOW_RUN_AS_ROOT=1 mpirun -np 2 {HOSTS} {NCCL}")
    assert only_one.rc == 1 and "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 to confirm" in only_one.stderr
    _ran(f"OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 {HOSTS} {NCCL}")
    _ran(f"mpirun --allow-run-as-root -np 2 {HOSTS} {NCCL}")


def test_mpirun_finds_nccl_tests_only_where_the_playbook_puts_it() -> None:
    base = f"mpirun --allow-run-as-root -np 2 {HOSTS} -x LD_LIBRARY_PATH=$HOME/nccl/build/lib"
    # A non-interactive PATH (exported or not) has no ~/nccl-tests/build.
    for export in ("", "-x PATH "):
        r = _run(f"{base} {export}all_reduce_perf -b 1M -e 1M")
        assert r.rc == 1 and "Node:       192.168.100.11\nExecutable: all_reduce_perf\n" in r.stderr
        gap = could_not_run(r)
        assert gap is not None and gap.missing == "nccl-tests", r.stderr
    _ran(f"{base} -x PATH=$HOME/nccl-tests/build:/usr/bin all_reduce_perf -b 1M -e 1M")
    # The control shell's LD_LIBRARY_PATH lacks ~/nccl/build/lib: the ranks cannot load NCCL.
    r = _run(f"mpirun --allow-run-as-root -np 2 {HOSTS} -x LD_LIBRARY_PATH ~/nccl-tests/build/"
             "all_reduce_perf -b 1M -e 1M")  # fmt: skip
    assert r.rc == 127 and "libnccl.so.2: cannot open shared object file" in r.stderr
    gap = could_not_run(r)
    assert gap is not None and gap.missing == "NCCL"


def test_mpirun_oob_interface_must_exist_on_every_node() -> None:
    base = f"mpirun --allow-run-as-root -np 2 {HOSTS}"
    r = _run(f"{base} --mca oob_tcp_if_include docker0 {NCCL}")
    assert r.rc == 1
    assert "None of the TCP networks specified to be included for out-of-band" in r.stderr
    assert "  Value given: docker0\n" in r.stderr
    _ran(f"{base} --mca oob_tcp_if_include enP7s7 {NCCL}")
    _ran(f"{base} --mca oob_tcp_if_include 192.168.100.0/24 {NCCL}")


# -- mlnx_qos and counters: tests/data/mlnx_qos, mlx5 counter names (research/FACTS.md §7-8) --

SAMPLE = "mlnx_qos/cx-ens6-trust-pcp-pfc-all-off-receive-buffer-trailing-comma.txt"


def test_pfc_off_is_the_real_sample_byte_for_byte_but_its_tabs() -> None:
    # The sample's source turned mlnx_qos's TABs into 8 spaces; everything else is as printed.
    assert render(frozenset()).replace("\t", " " * 8) == sample(SAMPLE)


def test_host_pfc_adds_its_per_priority_pause_counters() -> None:
    # Its mlnx_qos, as the suite reads it on both nodes: the matrix's faults/host_pfc (SAYS).
    t = sim("faults/host_pfc")  # PFC on priority 3 on spark-2 only
    on = parse_ethtool_stats(out(t, "spark-2", "ethtool -S enp1s0f1np1"))
    off = parse_ethtool_stats(out(t, "spark-1", "ethtool -S enp1s0f1np1"))
    assert "rx_prio3_pause" in on and "tx_prio3_pause" in on
    assert not any(k.endswith("_pause") and "prio" in k for k in off)


def test_the_rdma_port_exposes_the_lossy_roce_hw_counters() -> None:
    read = parse_hw_counters(out(sim(), "spark-1", str(build_hw_counters(["rocep1s0f1"]))))
    (port,) = (p for p in read.ports if (p.device, p.port) == ("rocep1s0f1", 1))
    for name in ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "np_cnp_sent"):
        assert port.counters.get(name) == 0


# -- NCCL_IB_HCA and nccl.conf: labels, the 32-entry limit, conf files as NCCL reads them -----
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
