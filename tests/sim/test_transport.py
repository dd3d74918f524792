"""SimTransport: virtual time, deadlines, batches, background processes, testinfra hosts."""

from __future__ import annotations

from pytest import approx

from pytest_sparkfabric.transport.base import Job
from pytest_sparkfabric.transport.host import make_host
from sparkfabric_sim.transport import SSH_ROUND_TRIP_S as RTT
from sparkfabric_sim.transport import SimTransport
from tests.sim.conftest import example, with_faults
from tests.sim.helpers import PLAYBOOK

SERVER = "ib_write_bw -d {dev} -F --report_gbits -q 1 -D 10 -p {port}"
CLIENT = SERVER + " {peer}"


def test_run_advances_the_clock_by_the_modelled_duration() -> None:
    t = SimTransport(example("direct-2"))
    r = t.run(Job("spark-1", "sleep 7", 60))
    assert (r.rc, r.duration_s, t.clock.now()) == (0, 7.0 + RTT, 7.0 + RTT)
    r = t.run(Job("spark-1", "cat /etc/hostname", 60))
    assert 0.01 < r.duration_s < 0.05 and r.started_at == 7.0 + RTT


def test_a_job_past_its_deadline_costs_exactly_the_deadline() -> None:
    t = SimTransport(example("direct-2"))
    r = t.run(Job("spark-1", "sleep 100", 5))
    assert (r.rc, r.timed_out, r.duration_s, t.clock.now()) == (124, True, 5, 5)


def test_run_many_overlaps_jobs() -> None:
    t = SimTransport(example("direct-2"))
    rs = t.run_many([Job("spark-1", "sleep 3", 60), Job("spark-2", "sleep 5", 60)])
    assert [r.duration_s for r in rs] == [3.0 + RTT, 5.0 + RTT]
    assert t.clock.now() == 5.0 + RTT


def test_background_server_returns_its_report_after_the_client() -> None:
    t = SimTransport(example("direct-2"))
    server = t.start(Job("spark-2", SERVER.format(dev="rocep1s0f1", port=18515), 60))
    listen = t.run(Job("spark-2", "ss -Hltn 'sport = :18515'", 10))
    assert "LISTEN" in listen.stdout and ":18515" in listen.stdout
    # Its figure is the client's: tests/sim/test_fidelity.py.
    t.run(Job("spark-1", CLIENT.format(dev="rocep1s0f1", port=18515, peer="192.168.100.12"), 60))
    done = server.wait()
    assert done.rc == 0 and "Waiting for client to connect" in done.stdout
    assert t.run(Job("spark-2", "ss -Hltn 'sport = :18515'", 10)).stdout == ""


def test_a_server_nobody_calls_times_out_and_stop_ends_it_now() -> None:
    t = SimTransport(example("direct-2"))
    lonely = t.start(Job("spark-2", SERVER.format(dev="rocep1s0f1", port=18515), 30))
    r = lonely.wait()
    assert (r.rc, r.timed_out, t.clock.now()) == (124, True, 30.0)
    other = t.start(Job("spark-2", SERVER.format(dev="rocep1s0f1", port=18600), 30))
    t.run(Job("spark-1", "sleep 4", 10))
    stopped = other.stop()
    assert stopped.rc == 143 and "Waiting for client" in stopped.stdout and not stopped.timed_out
    assert t.clock.now() == approx(34.0 + RTT)


def test_client_without_server_fails_like_perftest() -> None:
    t = SimTransport(example("direct-2"))
    r = t.run(Job("spark-1", CLIENT.format(dev="rocep1s0f1", port=1, peer="192.168.100.12"), 60))
    assert r.rc == 1
    assert (
        r.stderr == "Couldn't connect to 192.168.100.12:1\n Unable to init the socket connection\n"
    )


def test_gpu_load_runs_for_its_duration_or_until_stopped() -> None:
    t = SimTransport(example("direct-2"))
    burn = t.start(Job("spark-1", "gpu_burn -m 80% 300", 600))
    t.run(Job("spark-1", "sleep 120", 200))
    hot = t.run(Job("spark-1", "nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader", 5))
    assert int(hot.stdout) >= 75
    stopped = burn.stop()
    assert stopped.rc == 143
    t.run(Job("spark-1", "sleep 400", 500))
    cold = t.run(Job("spark-1", "nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader", 5))
    assert int(cold.stdout) <= 43
    assert t.start(Job("spark-1", "gpu_burn 20", 60)).wait().duration_s == 20


def test_unreachable_node_and_hanging_command() -> None:
    cluster = with_faults(
        "direct-2",
        "{fault: node_unreachable, node: spark-2}",
        "{fault: command_hangs, command: ethtool, node: spark-1}",
    )
    t = SimTransport(cluster)
    r = t.run(Job("spark-2", "true", 60))
    assert r.transport_error == "spark-2: ssh: connection timed out after 10 s" and not r.ok
    r = t.run(Job("spark-1", "ethtool -S enp1s0f1np1", 45))
    assert (r.rc, r.timed_out, r.duration_s) == (124, True, 45)
    assert t.run(Job("spark-1", "ip -j addr show", 5)).ok


def test_testinfra_host_goes_through_the_simulation() -> None:
    t = SimTransport(example("direct-2"))
    host = make_host(t, "spark-1")
    iface = host.interface("enp1s0f1np1")
    assert iface.exists and not host.interface("eth9").exists
    assert iface.addresses == ["192.168.100.11"]
    assert iface.link[0]["mtu"] == 9000 and iface.speed == 200000
    assert host.file("/etc/hostname").content_string == "spark-1\n"
    assert not host.file("/etc/nccl.conf").exists
    assert host.sysctl("net.ipv4.conf.all.rp_filter") == 2
    assert host.run("uname -r").stdout.startswith("6.")
    assert host.system_info.distribution == "ubuntu"


def test_close_stops_everything_left_running() -> None:
    t = SimTransport(example("direct-2"))
    t.start(Job("spark-2", "iperf3 -s -1 -p 5201", 60))
    t.close()
    assert t.run(Job("spark-2", "ss -Hltn", 5)).stdout == ""


def test_a_deadline_keeps_the_rows_printed_before_it() -> None:
    """A killed NCCL run leaves its header, INFO lines and the rows done by then (issue 12)."""
    from tests.sim.conftest import example

    t = SimTransport(example("direct-2"))
    cmd = (
        "mpirun --allow-run-as-root -np 2 -H 192.168.100.11:1,192.168.100.12:1 -x NCCL_DEBUG=INFO "
        f"{PLAYBOOK}all_reduce_perf -b 1M -e 16G -f 2 -g 1"
    )
    full = t.run(Job("spark-1", cmd, 3600))
    assert full.rc == 0 and not full.timed_out
    cut = t.run(Job("spark-1", cmd, full.duration_s / 2))
    assert cut.timed_out and "NCCL INFO" in cut.stdout and "# Avg bus bandwidth" not in cut.stdout
    rows = [
        ln for ln in cut.stdout.splitlines() if ln.strip() and not ln.startswith(("#", "spark"))
    ]
    full_rows = [ln for ln in full.stdout.splitlines() if ln.strip()[:1].isdigit()]
    assert 0 < len([r for r in rows if r.strip()[:1].isdigit()]) < len(full_rows)
