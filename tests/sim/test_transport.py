"""SimTransport: virtual time, deadlines, batches, background processes, testinfra hosts."""

from __future__ import annotations

from pytest import approx

from pytest_sparkfabric.transport.base import Job
from pytest_sparkfabric.transport.host import make_host
from sparkfabric_sim.transport import SSH_ROUND_TRIP_S as RTT
from tests.sim.conftest import PLAYBOOK, run, sim

SERVER = "ib_write_bw -d rocep1s0f1 -F --report_gbits -q 1 -D 10 -p {}"


def test_virtual_time_deadlines_and_batches() -> None:
    t = sim()
    r = run(t, "spark-1", "sleep 7")
    assert (r.rc, r.duration_s, t.clock.now()) == (0, 7.0 + RTT, 7.0 + RTT)
    r = run(t, "spark-1", "cat /etc/hostname")
    assert 0.01 < r.duration_s < 0.05 and r.started_at == 7.0 + RTT
    t = sim()  # past its deadline a job costs exactly the deadline
    r = run(t, "spark-1", "sleep 100", 5)
    assert (r.rc, r.timed_out, r.duration_s, t.clock.now()) == (124, True, 5, 5)
    t = sim()  # run_many overlaps its jobs
    rs = t.run_many([Job("spark-1", "sleep 3", 60), Job("spark-2", "sleep 5", 60)])
    assert [r.duration_s for r in rs] == [3.0 + RTT, 5.0 + RTT] and t.clock.now() == 5.0 + RTT


def test_background_server_returns_its_report_after_the_client() -> None:
    t = sim()
    server = t.start(Job("spark-2", SERVER.format(18515), 60))
    listen = run(t, "spark-2", "ss -Hltn 'sport = :18515'").stdout
    assert "LISTEN" in listen and ":18515" in listen
    # Its figure is the client's: tests/sim/test_fidelity.py.
    run(t, "spark-1", SERVER.format(18515) + " 192.168.100.12")
    done = server.wait()
    assert done.rc == 0 and "Waiting for client to connect" in done.stdout
    assert run(t, "spark-2", "ss -Hltn 'sport = :18515'").stdout == ""
    # A client without its server fails as perftest does.
    r = run(sim(), "spark-1", SERVER.format(1) + " 192.168.100.12")
    assert r.rc == 1
    assert (
        r.stderr == "Couldn't connect to 192.168.100.12:1\n Unable to init the socket connection\n"
    )


def test_a_server_nobody_calls_times_out_stop_ends_it_now_and_close_ends_the_rest() -> None:
    t = sim()
    r = t.start(Job("spark-2", SERVER.format(18515), 30)).wait()
    assert (r.rc, r.timed_out, t.clock.now()) == (124, True, 30.0)
    other = t.start(Job("spark-2", SERVER.format(18600), 30))
    run(t, "spark-1", "sleep 4")
    stopped = other.stop()
    assert stopped.rc == 143 and "Waiting for client" in stopped.stdout and not stopped.timed_out
    assert t.clock.now() == approx(34.0 + RTT)
    t.start(Job("spark-2", "iperf3 -s -1 -p 5201", 60))
    t.close()
    assert run(t, "spark-2", "ss -Hltn").stdout == ""


def test_testinfra_host_goes_through_the_simulation() -> None:
    host = make_host(sim(), "spark-1")
    iface = host.interface("enp1s0f1np1")
    assert iface.exists and not host.interface("eth9").exists
    assert iface.addresses == ["192.168.100.11"]
    assert iface.link[0]["mtu"] == 9000 and iface.speed == 200000
    assert host.file("/etc/hostname").content_string == "spark-1\n"
    assert not host.file("/etc/nccl.conf").exists
    assert host.sysctl("net.ipv4.conf.all.rp_filter") == 2
    assert host.run("uname -r").stdout.startswith("6.")
    assert host.system_info.distribution == "ubuntu"


def test_a_deadline_keeps_the_rows_printed_before_it() -> None:
    """A killed NCCL run leaves its header, INFO lines and the rows done by then (issue 12)."""
    t = sim()
    cmd = (
        "mpirun --allow-run-as-root -np 2 -H 192.168.100.11:1,192.168.100.12:1 -x NCCL_DEBUG=INFO "
        f"{PLAYBOOK}all_reduce_perf -b 1M -e 16G -f 2 -g 1"
    )
    full = run(t, "spark-1", cmd, 3600)
    assert full.rc == 0 and not full.timed_out
    cut = run(t, "spark-1", cmd, full.duration_s / 2)
    assert cut.timed_out and "NCCL INFO" in cut.stdout and "# Avg bus bandwidth" not in cut.stdout

    def rows(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln.strip()[:1].isdigit()]

    assert 0 < len(rows(cut.stdout)) < len(rows(full.stdout))
