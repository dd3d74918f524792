"""Secrets stay secret: the switch password reaches the switch and nothing else (recordings,
JSON results, reports, terminal); results files are private; weaker switch access is flagged."""

from __future__ import annotations

import base64
import json
import os
import stat
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_sparkfabric.transport import Transport
from sparkfabric_lab.routeros import handler_for
from sparkfabric_sim import transport as sim_transport
from sparkfabric_sim.switch import RestError, SimSwitch
from tests import certs
from tests.suite.runner import rows_of

ROOT = Path(__file__).resolve().parents[2]
USER = "sparkfabric-ro"
PASSWORD_ENV = "SPARKFABRIC_TEST_SWITCH_PASSWORD"


class _ServedSwitch:
    """The simulated switch of the run under test, answered over HTTPS as RouterOS would
    (lab/routeros.py's handler), with Basic auth checked against the real password."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.sim: SimSwitch | None = None
        self.authorised = 0

    def authorized(self, header: str | None) -> bool:
        token = base64.b64encode(f"{USER}:{self.password}".encode()).decode()
        ok = header == f"Basic {token}"
        self.authorised += ok
        return ok

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        assert self.sim is not None, "the run's simulated transport was not made"
        rel = path.removeprefix("/rest")
        try:
            if method == "GET":
                return 200, self.sim.rest_get(rel)
            return 200, self.sim.rest_post(rel, body)
        except RestError as err:
            return err.status, err.body


@pytest.fixture
def secret() -> str:
    # Random, so a match anywhere can only be this run's password.
    return "pw-" + os.urandom(9).hex()


@pytest.fixture
def served(
    tmp_path: Path, secret: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[_ServedSwitch, int, Path]]:
    """(switch, HTTPS port, CA file); the simulated transport hands out the base transport's
    switch client, so the plugin reads the switch the way it reads a real one: over REST."""
    switch = _ServedSwitch(secret)
    real_init = sim_transport.SimTransport.__init__

    def init(self: sim_transport.SimTransport, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        switch.sim = self.switch

    monkeypatch.setattr(sim_transport.SimTransport, "__init__", init)
    monkeypatch.setattr(sim_transport.SimTransport, "switch_client", Transport.switch_client)
    key, crt = certs.self_signed(tmp_path)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(switch))  # type: ignore[arg-type]
    httpd.daemon_threads = True
    httpd.socket = certs.server_context(key, crt).wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield switch, int(httpd.server_address[1]), crt
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _cluster(directory: Path, *, transport: str = "sim", **switch: Any) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "faults" / "autoneg_failed.yaml").read_text())
    data["switch"].update(switch)
    if transport != "sim":
        data["transport"] = transport
        del data["simulate"]
        for i, node in enumerate(data["nodes"]):
            node["ssh"] = {"host": f"10.0.0.{11 + i}"}
    path = directory / "cluster.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_switch_password_is_written_nowhere(
    pytester: pytest.Pytester,
    served: tuple[_ServedSwitch, int, Path],
    secret: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    switch, port, ca = served
    (pytester.path / "ca.pem").write_bytes(ca.read_bytes())
    cluster = _cluster(
        pytester.path,
        host="127.0.0.1",
        api_port=port,
        password_env=PASSWORD_ENV,
        verify_tls=True,
        ca_file="ca.pem",
    )
    monkeypatch.setenv(PASSWORD_ENV, secret)
    out = pytester.path / "out"
    result = pytester.runpytest_inprocess(
        f"--cluster={cluster}",
        "-p", "no:cacheprovider", "-m", "switch", "-v", "-rA", "--log-level=DEBUG",
        f"--sparkfabric-record={out / 'rec'}",
        f"--sparkfabric-json={out / 'json' / 'results.json'}",
        f"--junitxml={out / 'junit.xml'}",
        f"--html={out / 'report.html'}", "--self-contained-html",
    )  # fmt: skip
    text = result.stdout.str() + result.stderr.str()
    # The switch was read over HTTPS with the password, and the fault (spark-2's leg left on
    # auto-negotiation) failed its tests: the report holds failure messages, not only passes.
    assert switch.authorised > 0
    data = json.loads((out / "json" / "results.json").read_text())
    outcomes = {t["nodeid"].split("::")[-1]: t["outcome"] for t in rows_of(data)}
    assert outcomes["test_switch_leg[spark-2]"] == "failed", text[-3000:]
    assert outcomes["test_switch_leg[spark-1]"] == "passed", text[-3000:]
    assert (out / "rec" / "switch" / "rest.jsonl").stat().st_size > 0
    forms = {
        secret,
        base64.b64encode(f"{USER}:{secret}".encode()).decode(),
        base64.b64encode(secret.encode()).decode().rstrip("="),
    }
    written = [p for p in out.rglob("*") if p.is_file()]
    assert len(written) >= 4
    for path in written:
        raw = path.read_bytes()
        for form in forms:
            assert form.encode() not in raw, f"{path} holds the switch password ({form})"
    for form in forms:
        assert form not in text, "the terminal output holds the switch password"


def test_a_wrong_password_is_not_echoed(
    pytester: pytest.Pytester,
    served: tuple[_ServedSwitch, int, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _switch, port, ca = served
    (pytester.path / "ca.pem").write_bytes(ca.read_bytes())
    cluster = _cluster(
        pytester.path, host="127.0.0.1", api_port=port, password_env=PASSWORD_ENV,
        verify_tls=True, ca_file="ca.pem",
    )  # fmt: skip
    wrong = "wrong-" + os.urandom(6).hex()
    monkeypatch.setenv(PASSWORD_ENV, wrong)
    results = pytester.path / "results.json"
    result = pytester.runpytest_inprocess(
        f"--cluster={cluster}", "-p", "no:cacheprovider", "-m", "switch", "-rA",
        f"--sparkfabric-json={results}",
    )  # fmt: skip
    text = result.stdout.str()
    assert "authentication failed for user 'sparkfabric-ro' (HTTP 401)" in text
    assert wrong not in text and wrong not in results.read_text()


def test_results_are_private(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster(pytester.path)
    monkeypatch.setenv("SPARKFABRIC_SWITCH_PASSWORD", "unused-by-the-sim")
    new = pytester.path / "new" / "deeper" / "results.json"
    old = pytester.path / "old.json"
    old.write_text("{}")
    old.chmod(0o644)
    for path in (new, old):
        pytester.runpytest_inprocess(
            f"--cluster={cluster}", "-p", "no:cacheprovider", "--collect-only", "-q",
            f"--sparkfabric-json={path}",
        )  # fmt: skip
        assert json.loads(path.read_text())["cluster"]["topology"] == "switch"
        assert _mode(path) == 0o600
    assert _mode(new.parent) == 0o700 and _mode(new.parent.parent) == 0o700
    assert [p.name for p in pytester.path.iterdir() if p.name.startswith(".old")] == []


def test_weaker_switch_access_is_flagged(pytester: pytest.Pytester) -> None:
    cluster = _cluster(pytester.path, transport="ssh", api_port=80, allow_http=True)
    results, page = pytester.path / "results.json", pytester.path / "report.html"
    result = pytester.runpytest_inprocess(
        f"--cluster={cluster}", "-p", "no:cacheprovider", "--collect-only", "-q",
        f"--sparkfabric-json={results}", f"--html={page}", f"--junitxml={pytester.path / 'j.xml'}",
    )  # fmt: skip
    warning = (
        "WARNING switch 192.168.88.1: plain HTTP (switch.allow_http: true): user "
        "'sparkfabric-ro' and its password cross the network unencrypted"
    )
    assert "sparkfabric warnings" in result.stdout.str()
    assert warning in result.stdout.lines
    verbose = pytester.runpytest_inprocess(
        f"--cluster={cluster}", "-p", "no:cacheprovider", "--collect-only"
    )
    assert f"sparkfabric: {warning}" in verbose.stdout.lines  # the header
    assert json.loads(results.read_text())["warnings"] == [warning]
    assert "plain HTTP (switch.allow_http: true)" in page.read_text()
    assert 'name="sparkfabric_warning"' in (pytester.path / "j.xml").read_text()
    # Without the network (the simulator) there is nothing to warn about.
    cluster = _cluster(pytester.path, api_port=80, allow_http=True)
    result = pytester.runpytest_inprocess(
        f"--cluster={cluster}", "-p", "no:cacheprovider", "--collect-only", "-q",
        f"--sparkfabric-json={results}",
    )  # fmt: skip
    assert "WARNING" not in result.stdout.str()
    assert json.loads(results.read_text())["warnings"] == []


def test_an_unchecked_certificate_is_flagged(pytester: pytest.Pytester) -> None:
    cluster = _cluster(pytester.path, transport="ssh", verify_tls=False)
    result = pytester.runpytest_inprocess(
        f"--cluster={cluster}", "-p", "no:cacheprovider", "--collect-only", "-q"
    )
    assert (
        "WARNING switch 192.168.88.1: TLS certificate not checked "
        "(switch.verify_tls: false): whoever answers at that address gets the password; set "
        "switch.ca_file"
    ) in result.stdout.lines
