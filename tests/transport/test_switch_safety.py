"""The switch password goes to the configured switch only: no plain HTTP unless allowed, no
redirect followed, no proxy from the environment, the certificate verified."""

from __future__ import annotations

import base64
import json
import ssl
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_sparkfabric.cluster import ConfigError, parse_cluster
from pytest_sparkfabric.cluster.spec import SwitchSpec
from pytest_sparkfabric.transport.switch import (
    RestClient,
    SwitchUnreachable,
    ca_file_path,
    rest_client,
)
from tests import certs

USER, PASSWORD = "sparkfabric", "pw-9f3a"
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@dataclass
class Server:
    """A loopback HTTP(S) server that logs every request it gets (path, Authorization) and
    answers `redirects[path]` with (code, Location), everything else 200 `[]`."""

    port: int = 0
    seen: list[tuple[str, str, str | None]] = field(default_factory=list)
    redirects: dict[str, tuple[int, str]] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        return f"127.0.0.1:{self.port}"


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            server.seen.append((self.command, self.path, self.headers.get("Authorization")))
            if self.path in server.redirects:
                code, location = server.redirects[self.path]
                self.send_response(code)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            raw = json.dumps([]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = _serve

    return Handler


def _serve(tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    server = Server()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    server.port = int(httpd.server_address[1])
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def switch() -> Iterator[Server]:
    yield from _serve()


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[Server]:
    """Another origin (another port): where a hostile or misconfigured switch redirects."""
    yield from _serve()


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return certs.self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_switch(cert: tuple[Path, Path]) -> Iterator[Server]:
    yield from _serve(certs.server_context(*cert))


def _rest(port: int, *, host: str = "127.0.0.1", scheme: str = "https", **kw: Any) -> RestClient:
    return RestClient(host, USER, PASSWORD, port=port, scheme=scheme, timeout_s=5, **kw)


# -- plain HTTP -------------------------------------------------------------------------------


def test_plain_http_is_refused_before_any_request(switch: Server) -> None:
    before = len(switch.seen)
    with pytest.raises(SwitchUnreachable) as err:
        _rest(switch.port, scheme="http")
    text = str(err.value)
    assert text == (
        f"http://{switch.origin}/rest: refusing to send the switch password over plain HTTP "
        "(Basic auth is readable by anyone on the path): use HTTPS (the www-ssl service; drop "
        "switch.api_port or set it to the www-ssl port), or set switch.allow_http: true on a "
        "management network you trust"
    )
    spec = SwitchSpec(host="127.0.0.1", user=USER, api_port=80)
    with pytest.raises(SwitchUnreachable, match="refusing to send the switch password"):
        rest_client(spec)
    assert len(switch.seen) == before
    allowed = _rest(switch.port, scheme="http", allow_http=True)
    assert allowed.get("/interface/ethernet") == []
    assert switch.seen[-1] == ("GET", "/rest/interface/ethernet", AUTH)


def _switch_yaml(**switch: Any) -> str:
    data = yaml.safe_load((EXAMPLES / "switch-8.yaml").read_text())
    data["switch"].update(switch)
    return yaml.safe_dump(data, sort_keys=False)


def test_cluster_yaml_refuses_port_80_without_allow_http() -> None:
    text = _switch_yaml(api_port=80)
    with pytest.raises(ConfigError) as err:
        parse_cluster(text, "cluster.yaml")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "api_port: 80" in ln)
    assert str(err.value) == (
        "cluster.yaml: 1 problem\n"
        f"  line {line}: switch.api_port 80 is plain HTTP: the switch password would cross the "
        "network unencrypted.\n"
        "    Fix: use HTTPS (the www-ssl service: drop api_port, or name its port), or set "
        "allow_http: true on a management network you trust."
    )
    cluster = parse_cluster(_switch_yaml(api_port=80, allow_http=True))
    assert cluster.spec.switch is not None and cluster.spec.switch.allow_http


# -- redirects --------------------------------------------------------------------------------

REDIRECTS = [("GET", code) for code in (301, 302, 303, 307, 308)] + [
    ("POST", code) for code in (301, 302, 307, 308)
]


@pytest.mark.parametrize(("method", "code"), REDIRECTS)
def test_redirect_to_another_origin_is_refused_and_sends_it_nothing(
    switch: Server, elsewhere: Server, method: str, code: int
) -> None:
    path = f"/rest/moved/{method}/{code}"
    target = f"http://{elsewhere.origin}/rest/interface/ethernet"
    switch.redirects[path] = (code, target)
    client = _rest(switch.port, scheme="http", allow_http=True)
    before = len(elsewhere.seen)
    with pytest.raises(SwitchUnreachable) as err:
        if method == "GET":
            client.get(path.removeprefix("/rest"))
        else:
            client.post(path.removeprefix("/rest"), {"once": ""})
    assert str(err.value) == (
        f"{method} http://{switch.origin}{path}: the switch redirected (HTTP {code}) to "
        f"{target}; not followed (the password goes to switch.host only): point switch.host "
        "and switch.api_port at the REST API itself"
    )
    assert switch.seen[-1] == (method, path, AUTH)
    assert elsewhere.seen[before:] == []


def test_urllib_alone_would_hand_the_password_to_the_redirect_target(
    switch: Server, elsewhere: Server
) -> None:
    """Why the client refuses redirects: urllib's own handler copies Authorization along."""
    target = f"http://{elsewhere.origin}/rest/stolen"
    switch.redirects["/rest/leak"] = (302, target)
    request = urllib.request.Request(
        f"http://{switch.origin}/rest/leak", headers={"Authorization": AUTH}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=5) as reply:
        reply.read()
    assert ("GET", "/rest/stolen", AUTH) in elsewhere.seen


def test_redirect_to_https_on_the_same_host_says_use_https(switch: Server) -> None:
    switch.redirects["/rest/system/resource"] = (
        301,
        "https://127.0.0.1/rest/system/resource",
    )
    with pytest.raises(SwitchUnreachable, match=r"not followed: use HTTPS \(drop switch.api_port"):
        _rest(switch.port, scheme="http", allow_http=True).get("/system/resource")


def test_the_environments_proxy_is_not_used(
    switch: Server, elsewhere: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", f"http://{elsewhere.origin}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    # urllib's default opener would send the request, Authorization and all, to the proxy ...
    plain = urllib.request.build_opener()
    request = urllib.request.Request(
        f"http://{switch.origin}/rest/via-proxy", headers={"Authorization": AUTH}
    )
    with plain.open(request, timeout=5) as reply:
        reply.read()
    assert elsewhere.seen[-1] == ("GET", f"http://{switch.origin}/rest/via-proxy", AUTH)
    # ... the client goes to the switch itself.
    before = len(elsewhere.seen)
    assert _rest(switch.port, scheme="http", allow_http=True).get("/direct") == []
    assert elsewhere.seen[before:] == []
    assert switch.seen[-1] == ("GET", "/rest/direct", AUTH)


# -- TLS --------------------------------------------------------------------------------------


def test_an_unverifiable_certificate_is_one_clear_line(tls_switch: Server) -> None:
    before = len(tls_switch.seen)
    with pytest.raises(SwitchUnreachable) as err:
        _rest(tls_switch.port).get("/interface/ethernet")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"GET https://{tls_switch.origin}/rest/interface/ethernet: ")
    assert "TLS certificate not verified (self-signed certificate" in text
    assert text.endswith(
        "set switch.ca_file to the PEM of the certificate authority that signed the switch's "
        "certificate (its subjectAltName must name switch.host), or set switch.verify_tls: false"
    )
    assert tls_switch.seen[before:] == []  # the password never left


def test_a_certificate_for_another_name_is_refused(
    tls_switch: Server, cert: tuple[Path, Path]
) -> None:
    client = _rest(tls_switch.port, host="localhost", ca_file=cert[1])
    mismatch = r"TLS certificate not verified \(Hostname mismatch"
    with pytest.raises(SwitchUnreachable, match=mismatch):
        client.get("/interface/ethernet")


def test_ca_file_verifies_the_switch(tls_switch: Server, cert: tuple[Path, Path]) -> None:
    assert _rest(tls_switch.port, ca_file=cert[1]).get("/interface/ethernet") == []
    assert tls_switch.seen[-1] == ("GET", "/rest/interface/ethernet", AUTH)


def test_verify_tls_false_skips_the_check(tls_switch: Server) -> None:
    assert _rest(tls_switch.port, verify_tls=False).get("/system/resource") == []


def test_a_ca_file_that_is_not_pem_says_so(tmp_path: Path) -> None:
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(SwitchUnreachable, match=rf"switch.ca_file {bad}: cannot load it as PEM"):
        _rest(443, ca_file=bad)
    with pytest.raises(SwitchUnreachable, match=r"switch.ca_file .*missing.pem: cannot load"):
        _rest(443, ca_file=tmp_path / "missing.pem")


def test_plain_http_to_the_https_port_says_what_is_wrong(switch: Server) -> None:
    with pytest.raises(SwitchUnreachable, match=r"TLS failed .*is switch.api_port the www-ssl"):
        _rest(switch.port).get("/interface/ethernet")


def test_ca_file_is_relative_to_the_cluster_file(tmp_path: Path) -> None:
    spec = SwitchSpec(host="10.0.0.2", user=USER, ca_file="certs/ca.pem")
    assert ca_file_path(spec, tmp_path) == tmp_path / "certs" / "ca.pem"
    home = SwitchSpec(host="10.0.0.2", user=USER, ca_file="~/ca.pem")
    assert ca_file_path(home, tmp_path) == Path.home() / "ca.pem"
    assert ca_file_path(SwitchSpec(host="10.0.0.2", user=USER), tmp_path) is None
