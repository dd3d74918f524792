"""The REST switch client against loopback servers: the password goes to the configured origin
only (no plain HTTP unless allowed, no redirect, no proxy, the certificate verified), one
deadline per call whatever the server trickles, odd replies as one line, secrets redacted."""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pytest_sparkfabric.cluster.spec import SwitchSpec
from pytest_sparkfabric.transport.rest import (
    RestClient,
    SwitchError,
    SwitchUnreachable,
    rest_client,
)
from tests import certs

USER, PASSWORD = "sparkfabric", "pw-9f3a"
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
ETHERNET = [{"name": "qsfp56-dd-1-1", "mtu": "9000", "l2mtu": "9216", "running": "true"}]
Answer = Callable[[BaseHTTPRequestHandler], None]


def raw(*parts: bytes, every_s: float = 0.0) -> Answer:
    """An answer written as is, `every_s` seconds between its parts (a trickling server)."""

    def answer(h: BaseHTTPRequestHandler) -> None:
        for part in parts:
            h.wfile.write(part)
            h.wfile.flush()
            time.sleep(every_s)

    return answer


def reply(code: int, body: object, **headers: str) -> Answer:
    data = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return raw(f"HTTP/1.1 {code} X\r\nContent-Length: {len(data)}\r\n{head}\r\n".encode() + data)


class Server(ThreadingHTTPServer):
    """A loopback HTTP(S) server that logs every request (method, path, Authorization) in
    `seen` and answers `answers[path]`, or 200 `[]`."""

    daemon_threads = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str | None]] = []
        self.answers: dict[str, Answer] = {}
        super().__init__(("127.0.0.1", 0), Handler)
        self.port = int(self.server_address[1])
        self.origin = f"127.0.0.1:{self.port}"


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization")))
        with contextlib.suppress(OSError):  # the client may have given up (the deadline tests)
            self.server.answers.get(self.path, reply(200, []))(self)

    do_POST = do_GET


def _serve(tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    with Server() as server:
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield server
        server.shutdown()


@pytest.fixture(scope="module")
def switch() -> Iterator[Server]:
    yield from _serve()


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return certs.self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_switch(cert: tuple[Path, Path]) -> Iterator[Server]:
    yield from _serve(certs.server_context(*cert))


def _http(server: Server, password: str = PASSWORD, timeout_s: float = 5) -> RestClient:
    return RestClient(
        "127.0.0.1", USER, password, port=server.port, scheme="http", allow_http=True,
        timeout_s=timeout_s,
    )  # fmt: skip


def _https(port: int, host: str = "127.0.0.1", **kw: Any) -> RestClient:
    return RestClient(host, USER, PASSWORD, port=port, scheme="https", timeout_s=5, **kw)


# -- reads, errors ------------------------------------------------------------------------------


def test_get_and_post_with_basic_auth_where_the_client_connects_not_via_a_proxy(
    switch: Server, tls_switch: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", f"http://{tls_switch.origin}")  # never used
    monkeypatch.delenv("no_proxy", raising=False)
    before = len(tls_switch.seen)
    switch.answers["/rest/interface/ethernet"] = reply(200, ETHERNET)
    assert _http(switch).get("/interface/ethernet") == ETHERNET
    assert _http(switch).post("/interface/ethernet/monitor", {"once": ""}) == []
    assert switch.seen[-2:] == [
        ("GET", "/rest/interface/ethernet", AUTH),
        ("POST", "/rest/interface/ethernet/monitor", AUTH),
    ]
    assert tls_switch.seen[before:] == []
    assert RestClient("10.0.0.2", "u", "p").base == "https://10.0.0.2/rest"
    assert RestClient("fe80::1", "u", "p", port=8443).base == "https://[fe80::1]:8443/rest"
    assert RestClient("10.0.0.2", "u", "p", port=80, allow_http=True).base == "http://10.0.0.2/rest"
    with pytest.raises(SwitchUnreachable, match=r"connection refused: enable the www-ssl"):
        RestClient("127.0.0.1", USER, "", port=1, allow_http=True, scheme="http").get("/x")


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


def _body(data: bytes) -> Answer:
    return raw(HEAD + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)


SLOW, NOT_READABLE = "no answer within 1.5 s", "switch not readable: "
ODD = {
    # A deadline per call, not per read: each of these trickles for 10 s.
    "slow-headers": (raw(HEAD, *[b"X-Slow: 1\r\n"] * 40, every_s=0.25), SLOW),
    "slow-body": (raw(HEAD + b"Content-Length: 100\r\n\r\n[", *[b" "] * 40, every_s=0.25), SLOW),
    "slow-chunks": (raw(HEAD + b"Transfer-Encoding: chunked\r\n\r\n", *[b"1\r\n \r\n"] * 40,
                        every_s=0.25), SLOW),
    # Malformed: one line each, never a traceback.
    "status": (raw(b"HTTZ/1.1 200 OK\r\n\r\n[]"),
               NOT_READABLE + "the reply is not HTTP (status line 'HTTZ/1.1 200 OK\\r\\n')"),
    "long-header": (raw(HEAD + b"X: " + b"a" * 70_000 + b"\r\n\r\n"),
                    NOT_READABLE + "got more than 65536 bytes when reading header line"),
    "101-headers": (raw(HEAD + b"X: 1\r\n" * 101 + b"\r\n"),
                    NOT_READABLE + "got more than 100 headers"),
    "deep-json": (_body(b"[" * 100_000 + b"]" * 100_000),
                  NOT_READABLE + "the reply nests deeper than JSON can be read"),
    "nested-json": (_body(b"[" * 40 + b"]" * 40),
                    NOT_READABLE + "the reply nests deeper than 32 levels"),
    "announced-big": (raw(HEAD + b"Content-Length: 9437184\r\n\r\n"),
                      NOT_READABLE + "the reply announces 9437184 bytes"),
    "big": (raw(HEAD + b"\r\n" + b" " * (9 * 2**20)), NOT_READABLE + "the reply is over 8 MiB"),
    "cut": (raw(HEAD + b"Content-Length: 100\r\n\r\n[1,"),
            NOT_READABLE + "the reply ended early (3 bytes read)"),
    "closed": (raw(b""), NOT_READABLE + "the switch closed the connection without an answer"),
    # RouterOS's own errors.
    "401": (reply(401, {"error": 401, "message": "Unauthorized"}),
            "authentication failed for user 'sparkfabric' (HTTP 401): check the password "
            "variable (switch.password_env) and that the user's group has the read, api and "
            "rest-api policies"),
    "400": (reply(400, {"message": "Bad Request", "detail": "no such command"}),
            "HTTP 400 Bad Request: no such command"),
    "not-json": (_body(b"<html>"), "the reply is not JSON"),
    # Redirects are never followed, whatever the code (the password would go along).
    "302": (reply(302, [], Location="http://elsewhere:8080/rest/x"),
            "the switch redirected (HTTP 302) to http://elsewhere:8080/rest/x; not followed (the "
            "password goes to switch.host only): point switch.host and switch.api_port at the "
            "REST API itself"),
    "to-https": (reply(301, [], Location="https://127.0.0.1/rest/x"),
                 "the switch redirected (HTTP 301) to https://127.0.0.1/rest/x; not followed: use "
                 "HTTPS (drop switch.api_port: 80 and switch.allow_http)"),
}  # fmt: skip


@pytest.mark.parametrize("odd", ODD)
def test_every_odd_answer_is_one_line_within_the_deadline(switch: Server, odd: str) -> None:
    switch.answers[f"/rest/odd/{odd}"], says = ODD[odd]
    start = time.monotonic()
    with pytest.raises(SwitchError) as err:
        _http(switch, timeout_s=1.5).post(f"/odd/{odd}", {"once": ""})
    assert time.monotonic() - start < 1.5 + 3
    assert str(err.value) == f"POST http://{switch.origin}/rest/odd/{odd}: {says}"
    # Only RouterOS's answers to one read leave the rest of the switch readable.
    assert isinstance(err.value, SwitchUnreachable) is (odd not in ("400", "not-json"))


# -- secrets ------------------------------------------------------------------------------------


def test_secrets_are_redacted_from_replies_and_errors(switch: Server) -> None:
    """A switch echoing the request: the password, its token and the header text go nowhere."""
    echo = f"Authorization: {AUTH}, password={PASSWORD}, token {AUTH[6:]}"
    switch.answers["/rest/echo-ok"] = reply(200, [{"seen": echo, PASSWORD: "x"}])
    switch.answers["/rest/echo-error"] = reply(400, {"message": "Bad", "detail": echo})
    redacted = "Authorization: [redacted], password=[redacted], token [redacted]"
    assert _http(switch).get("/echo-ok") == [{"seen": redacted, "[redacted]": "x"}]
    with pytest.raises(SwitchError) as err:
        _http(switch).get("/echo-error")
    assert str(err.value).endswith(f"HTTP 400 Bad: {redacted}")


# -- the password goes to the configured switch only -------------------------------------------


def test_plain_http_is_refused_before_any_request(switch: Server) -> None:
    before = len(switch.seen)
    with pytest.raises(SwitchUnreachable) as err:
        RestClient("127.0.0.1", USER, PASSWORD, port=switch.port, scheme="http")
    assert str(err.value) == (
        f"http://{switch.origin}/rest: refusing to send the switch password over plain HTTP "
        "(Basic auth is readable by anyone on the path): use HTTPS (the www-ssl service; drop "
        "switch.api_port or set it to the www-ssl port), or set switch.allow_http: true on a "
        "management network you trust"
    )
    with pytest.raises(SwitchUnreachable, match="refusing to send the switch password"):
        rest_client(SwitchSpec(host="127.0.0.1", user=USER, api_port=80))
    assert len(switch.seen) == before
    # cluster.yaml refuses it before any run: tests/cluster/messages.txt [plain-http]; with
    # allow_http it loads (the lab's switch: tests/lab/test_plan.py).


def test_the_certificate_is_verified_unless_told_how(
    tls_switch: Server, switch: Server, cert: tuple[Path, Path], tmp_path: Path
) -> None:
    before = len(tls_switch.seen)
    with pytest.raises(SwitchUnreachable) as err:
        _https(tls_switch.port).get("/interface/ethernet")
    text = str(err.value)
    assert text.startswith(
        f"GET https://{tls_switch.origin}/rest/interface/ethernet: TLS certificate not verified "
        "(self-signed certificate"
    )
    assert text.endswith(
        "set switch.ca_file to the PEM of the certificate authority that signed the switch's "
        "certificate (its subjectAltName must name switch.host), or set switch.verify_tls: false"
    )
    assert "\n" not in text and tls_switch.seen[before:] == []  # the password never left
    # ca_file or verify_tls: false reads it.
    assert _https(tls_switch.port, ca_file=cert[1]).get("/interface/ethernet") == []
    assert tls_switch.seen[-1] == ("GET", "/rest/interface/ethernet", AUTH)
    assert _https(tls_switch.port, verify_tls=False).get("/system/resource") == []
    with pytest.raises(SwitchUnreachable, match=r"TLS certificate not verified \(Hostname mis"):
        _https(tls_switch.port, host="localhost", ca_file=cert[1]).get("/interface/ethernet")
    with pytest.raises(SwitchUnreachable, match=r"TLS failed .*is switch.api_port the www-ssl"):
        _https(switch.port).get("/interface/ethernet")  # HTTPS to an HTTP port
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    for bad in (tmp_path / "ca.pem", tmp_path / "missing.pem"):
        with pytest.raises(SwitchUnreachable, match=f"switch.ca_file {bad}: cannot load it as"):
            _https(443, ca_file=bad)
