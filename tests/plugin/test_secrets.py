"""Secrets stay secret: the switch password reaches the switch and nothing else, even from a
switch that echoes it back; results files are private; weaker switch access is flagged."""

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

ROOT = Path(__file__).resolve().parents[2]
USER = "sparkfabric-ro"
PASSWORD_ENV = "SPARKFABRIC_TEST_SWITCH_PASSWORD"
ECHOED = "/rest/interface/ethernet/switch/qos/port"
"""Where the hostile switch answers an error that echoes the request's headers and password."""


class _EchoingSwitch:
    """The simulated switch of the run under test, served over HTTPS as RouterOS would (the
    lab's handler), Basic auth checked against the real password; QoS reads fail with an error
    that repeats the request headers and the password."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.header = "Basic " + base64.b64encode(f"{USER}:{password}".encode()).decode()
        self.sim: SimSwitch | None = None
        self.authorised = 0

    def authorized(self, header: str | None) -> bool:
        self.authorised += header == self.header
        return header == self.header

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        assert self.sim is not None, "the run's simulated transport was not made"
        rel = path.removeprefix("/rest")
        try:
            if path == ECHOED:
                raise RestError(400, "Bad Request", f"password={self.password}")
            return 200, self.sim.rest_get(rel) if method == "GET" else self.sim.rest_post(rel, body)
        except RestError as err:
            return err.status, err.body


@pytest.fixture
def secret() -> str:
    # Random, so a match anywhere can only be this run's password.
    return "pw-" + os.urandom(9).hex()


@pytest.fixture
def served(
    tmp_path: Path, secret: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[_EchoingSwitch, int, Path]]:
    """(switch, HTTPS port, CA file); the simulated transport hands out the base transport's
    switch client, so the plugin reads the switch the way it reads a real one: over REST."""
    switch = _EchoingSwitch(secret)
    real_init = sim_transport.SimTransport.__init__

    def init(self: sim_transport.SimTransport, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        switch.sim = self.switch

    monkeypatch.setattr(sim_transport.SimTransport, "__init__", init)
    monkeypatch.setattr(sim_transport.SimTransport, "switch_client", Transport.switch_client)

    class Echoing(handler_for(switch)):  # type: ignore[misc]
        def _reply(self, status: int, data: Any) -> None:
            if status >= 400:
                data = {**data, "detail": f"{data.get('detail')}; you sent:\n{self.headers}"}
            super()._reply(status, data)

    key, crt = certs.self_signed(tmp_path)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Echoing)
    httpd.daemon_threads = True
    httpd.socket = certs.server_context(key, crt).wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield switch, int(httpd.server_address[1]), crt
    httpd.shutdown()
    httpd.server_close()


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


def test_the_switch_password_is_written_nowhere(
    pytester: pytest.Pytester,
    served: tuple[_EchoingSwitch, int, Path],
    secret: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    switch, port, ca = served
    (pytester.path / "ca.pem").write_bytes(ca.read_bytes())
    cluster = _cluster(
        pytester.path, host="127.0.0.1", api_port=port, password_env=PASSWORD_ENV,
        verify_tls=True, ca_file="ca.pem",
    )  # fmt: skip
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
    # The switch was read with the password; the fault (spark-2's leg left on auto-negotiation)
    # failed its test, and the echoed error reached every artifact, redacted.
    assert switch.authorised > 0
    data = json.loads((out / "json" / "results.json").read_text())
    outcomes = {i["id"].split("::")[-1]: i["outcome"] for i in data["items"]}
    assert outcomes["test_switch_leg[spark-2]"] == "failed", text[-3000:]
    assert outcomes["test_switch_leg[spark-1]"] == "passed", text[-3000:]
    written = {str(p): p.read_text() for p in out.rglob("*") if p.is_file()}
    written["the terminal output"] = text
    token = switch.header.split()[1]
    for where, content in written.items():
        assert secret not in content and token not in content, f"{where} holds the password"
    for sink in ("rec/switch/rest.jsonl", "json/results.json", "junit.xml", "report.html"):
        said = written[str(out / sink)]
        assert (
            "password=[redacted]; you sent: Host: " in said and "Authorization: [redacted]" in said
        )


@pytest.mark.parametrize(
    ("switch", "warning"),
    [
        ({"api_port": 80, "allow_http": True},
         "plain HTTP (switch.allow_http: true): user 'sparkfabric-ro' and its password cross the "
         "network unencrypted"),
        ({"verify_tls": False},
         "TLS certificate not checked (switch.verify_tls: false): whoever answers at that address "
         "gets the password; set switch.ca_file"),
    ],
    ids=["http", "unverified"],
)  # fmt: skip
def test_weaker_switch_access_is_flagged_where_the_network_is_used_results_private(
    pytester: pytest.Pytester, switch: dict[str, Any], warning: str
) -> None:
    warning = f"WARNING switch 192.168.88.1: {warning}"
    page = pytester.path / "report.html"
    # Results are private: a new file in new folders, and an old one made 0644 by someone else.
    new, old = pytester.path / "new" / "deeper" / "results.json", pytester.path / "old.json"
    old.write_text("{}")
    old.chmod(0o644)
    for transport, shown, results in (("ssh", [warning], new), ("sim", [], old)):
        result = pytester.runpytest_inprocess(
            f"--cluster={_cluster(pytester.path, transport=transport, **switch)}",
            "-p", "no:cacheprovider", "--collect-only", f"--sparkfabric-json={results}",
            f"--html={page}",
        )  # fmt: skip
        written = json.loads(results.read_text())
        assert written["safety"] == shown and written["cluster"]["topology"] == "switch"
        assert (f"sparkfabric: {warning}" in result.stdout.lines) is bool(shown)  # the header
        assert (warning in result.stdout.lines) is bool(shown)  # the summary, again
        assert (warning.split("'")[0] in page.read_text()) is bool(shown)  # ' is escaped
        assert stat.S_IMODE(results.stat().st_mode) == 0o600
    assert {stat.S_IMODE(p.stat().st_mode) for p in (new.parent, new.parent.parent)} == {0o700}
    assert [p.name for p in pytester.path.iterdir() if p.name.startswith(".old")] == []
