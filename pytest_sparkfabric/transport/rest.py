"""Read-only access to a RouterOS 7 switch over its REST API: `get(path)` and `post(path, body)`
(paths relative to `/rest`) answer the decoded JSON reply; only reads are ever sent.

HTTP/1.1 is written here over one socket per call so that one wall-clock deadline covers the
whole call: a socket timeout restarts at every byte (a trickling switch would never time out)."""

from __future__ import annotations

import base64
import http.client
import io
import json
import os
import re
import socket
import ssl
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.cluster.spec import SwitchSpec

TIMEOUT_S = 15.0
MAX_REPLY_BYTES = 8 * 2**20
MAX_DEPTH = 32
"""RouterOS replies are a list of flat objects; anything nested deeper is not a RouterOS reply."""
# The header as an echoing server prints it: `Authorization: Basic dG9r`, `"authorization":
# "Basic dG9r"`, `Authorization=Bearer x`.
_HEADER = re.compile(
    r"""(authorization["']?\s*[:=]\s*["']?)(?:(?:basic|bearer|digest)\s+)?[^\s,;"'}]+""", re.I
)


class Secrets:
    """The one place secrets are taken out of text (the password, the Basic token, any echoed
    `Authorization:` header); both switch clients pass every reply and error through it, so
    terminal, reports, results and recordings only ever get redacted text."""

    def __init__(self, user: str, password: str | None) -> None:
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
        self.basic_auth = f"Basic {token}"  # HTTP Basic auth, RFC 7617
        # The password as it stands inside a JSON string too (an echoed request body).
        forms = {token, password, json.dumps(password)[1:-1]} if password is not None else set()
        # Longest first: the token is replaced before a password that may be part of it.
        self._values = sorted(forms - {""}, key=len, reverse=True)

    def text(self, text: str) -> str:
        text = _HEADER.sub(lambda m: m.group(1) + "[redacted]", text)
        for value in self._values:
            text = text.replace(value, "[redacted]")
        return text

    def reply(self, value: Any, depth: int = 0) -> Any:
        """A decoded JSON reply with every string (keys too) redacted."""
        if depth > MAX_DEPTH:
            raise not_readable(f"the reply nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.reply(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.reply(v, depth + 1) for k, v in value.items()}
        return value


class SwitchError(Exception):
    """A read of the switch failed; str() is one line an operator can act on."""


class SwitchUnreachable(SwitchError):
    """The switch cannot be read at all (connection, TLS, authentication, replies that are not
    HTTP or RouterOS's JSON)."""


def not_readable(what: str) -> SwitchUnreachable:
    return SwitchUnreachable(f"switch not readable: {what}")


class SwitchClient(Protocol):
    def get(self, path: str) -> Any: ...

    def post(self, path: str, body: Mapping[str, str]) -> Any: ...


class SwitchConsole(Protocol):
    """The switch's console over SSH: one read-only command in, RouterOS's text out."""

    def run(self, command: str) -> str: ...


def error_detail(raw: bytes) -> str:
    """RouterOS's JSON error body (`message`, `detail`) as one line."""
    text = raw.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = {"message": text}
    if not isinstance(data, Mapping):
        return ""
    return " ".join(": ".join(str(data[k]) for k in ("message", "detail") if data.get(k)).split())


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


class _Reader(io.RawIOBase):
    """The socket as http.client reads it: every receive bounded by what is left of the call."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._sock.settimeout(_left(self._deadline))
        return self._sock.recv_into(buffer)

    def makefile(self, mode: str) -> io.BufferedReader:  # what HTTPResponse asks its socket
        return io.BufferedReader(self)


class RestClient:
    """RouterOS REST over HTTPS (HTTP when the port is 80), Basic auth, one deadline per call.

    The password goes only to the configured origin: plain HTTP is refused unless `allow_http`,
    redirects are never followed, no proxy is used, the certificate is verified unless
    `verify_tls` is false; secrets are redacted from every reply and error."""

    def __init__(
        self,
        host: str,
        user: str,
        password: str,
        *,
        port: int | None = None,
        verify_tls: bool = True,
        ca_file: Path | None = None,
        allow_http: bool = False,
        timeout_s: float = TIMEOUT_S,
        scheme: str | None = None,
    ) -> None:
        scheme = scheme or ("http" if port == 80 else "https")
        netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
        if port is not None and port != {"http": 80, "https": 443}[scheme]:
            netloc += f":{port}"
        self.base = f"{scheme}://{netloc}/rest"
        if scheme == "http" and not allow_http:
            raise SwitchUnreachable(
                f"{self.base}: refusing to send the switch password over plain HTTP (Basic "
                "auth is readable by anyone on the path): use HTTPS (the www-ssl service; drop "
                "switch.api_port or set it to the www-ssl port), or set switch.allow_http: true "
                "on a management network you trust"
            )
        self.user, self.timeout_s = user, timeout_s
        self._secrets = Secrets(user, password)
        self._tls = ssl.create_default_context() if scheme == "https" else None
        if self._tls is not None and not verify_tls:
            self._tls.check_hostname = False
            self._tls.verify_mode = ssl.CERT_NONE
        elif self._tls is not None and ca_file is not None:
            try:
                self._tls.load_verify_locations(cafile=str(ca_file))
            except (OSError, ssl.SSLError) as exc:
                raise SwitchUnreachable(
                    f"switch.ca_file {ca_file}: cannot load it as PEM certificates ({exc}): "
                    "export the certificate authority of the switch's certificate as PEM"
                ) from None

    def get(self, path: str) -> Any:
        return self._call("GET", path, None)

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._call("POST", path, dict(body))

    def _call(self, method: str, path: str, body: dict[str, str] | None) -> Any:
        url = self.base + (path if path.startswith("/") else "/" + path)
        try:
            try:
                return self._secrets.reply(self._exchange(method, url, body))
            except (OSError, http.client.HTTPException) as exc:
                raise _failure(exc, self.timeout_s) from None
        except SwitchError as exc:
            raise type(exc)(self._secrets.text(f"{method} {url}: {exc}")) from None

    def _exchange(self, method: str, url: str, body: dict[str, str] | None) -> Any:
        deadline = time.monotonic() + self.timeout_s
        to = urllib.parse.urlsplit(url)
        host, port = to.hostname or "", to.port or {"http": 80, "https": 443}[to.scheme]
        data = b"" if body is None else json.dumps(body).encode()
        head = [
            f"{method} {to.path} HTTP/1.1",
            f"Host: {to.netloc}",
            f"Authorization: {self._secrets.basic_auth}",
            "Accept: application/json",
            "Connection: close",
            f"Content-Length: {len(data)}",
            *(["Content-Type: application/json"] if body is not None else []),
        ]
        sock = socket.create_connection((host, port), timeout=_left(deadline))
        try:
            if self._tls is not None:
                # One handshake call: CPython bounds it by the timeout in total (ssl, 3.5+).
                sock.settimeout(_left(deadline))
                sock = self._tls.wrap_socket(sock, server_hostname=host)
            sock.settimeout(_left(deadline))
            sock.sendall("\r\n".join([*head, "", ""]).encode() + data)
            reply = http.client.HTTPResponse(_Reader(sock, deadline), method=method)  # type: ignore[arg-type]
            reply.begin()
            if (reply.length or 0) > MAX_REPLY_BYTES:
                raise not_readable(f"the reply announces {reply.length} bytes")
            raw = reply.read(MAX_REPLY_BYTES + 1)
            if reply.length:  # read(amt) returns what came before the end, without a word
                raise http.client.IncompleteRead(raw, reply.length)
        finally:
            sock.close()
        if len(raw) > MAX_REPLY_BYTES:
            raise not_readable(f"the reply is over {MAX_REPLY_BYTES // 2**20} MiB")
        if 300 <= reply.status < 400:
            raise SwitchUnreachable(_redirect(reply.status, reply.getheader("Location"), url))
        if reply.status == 401:
            raise SwitchUnreachable(
                f"authentication failed for user {self.user!r} (HTTP 401): check the password "
                "variable (switch.password_env) and that the user's group has the read, api and "
                "rest-api policies"
            )
        if reply.status >= 400:
            detail = self._secrets.text(error_detail(raw)) or reply.reason
            cut = detail if len(detail) <= 200 else detail[:196] + " ..."
            raise SwitchError(f"HTTP {reply.status} {cut}")
        try:
            return json.loads(raw.decode("utf-8", "replace"))
        except RecursionError:
            raise not_readable("the reply nests deeper than JSON can be read") from None
        except ValueError:
            raise SwitchError("the reply is not JSON") from None


def _redirect(code: int, location: str | None, url: str) -> str:
    target = urllib.parse.urljoin(url, location or "?")
    head = f"the switch redirected (HTTP {code}) to {target}; not followed"
    here, there = urllib.parse.urlsplit(url), urllib.parse.urlsplit(target)
    if (here.scheme, there.scheme, there.hostname) == ("http", "https", here.hostname):
        return f"{head}: use HTTPS (drop switch.api_port: 80 and switch.allow_http)"
    return (
        f"{head} (the password goes to switch.host only): point switch.host and "
        "switch.api_port at the REST API itself"
    )


def _failure(exc: OSError | http.client.HTTPException, timeout_s: float) -> SwitchUnreachable:
    if isinstance(exc, TimeoutError):
        return SwitchUnreachable(f"no answer within {timeout_s:g} s")
    if isinstance(exc, http.client.RemoteDisconnected):
        return not_readable("the switch closed the connection without an answer")
    if isinstance(exc, http.client.BadStatusLine):
        return not_readable(f"the reply is not HTTP (status line {str(exc)[:60]!r})")
    if isinstance(exc, http.client.IncompleteRead):
        return not_readable(f"the reply ended early ({len(exc.partial)} bytes read)")
    if isinstance(exc, http.client.HTTPException):
        return not_readable(str(exc) or type(exc).__name__)
    if isinstance(exc, ssl.SSLCertVerificationError):
        return SwitchUnreachable(
            f"TLS certificate not verified ({exc.verify_message}): set switch.ca_file to the "
            "PEM of the certificate authority that signed the switch's certificate (its "
            "subjectAltName must name switch.host), or set switch.verify_tls: false"
        )
    if isinstance(exc, ssl.SSLError):
        why = f"TLS failed ({exc.reason or exc}): is switch.api_port the www-ssl (HTTPS) service?"
    elif isinstance(exc, ConnectionRefusedError):
        why = "connection refused: enable the www-ssl service (/ip service) or set switch.api_port"
    elif isinstance(exc, socket.gaierror):
        why = f"could not resolve the host name switch.host ({exc.strerror})"
    else:
        why = exc.strerror or str(exc)
    return SwitchUnreachable(why)


def spec_password(
    spec: SwitchSpec, *, required: bool = True, fix: str = "export it before running the suite"
) -> str | None:
    """The password switch.password_env names (None: none asked for, or not set where it is
    not `required`); SwitchUnreachable when a required one is not set."""
    value = os.environ.get(spec.password_env) if spec.password_env else None
    if value is None and required and spec.password_env:
        raise SwitchUnreachable(
            f"the password variable ${spec.password_env} (switch.password_env) is not set: {fix}"
        )
    return value


def spec_path(value: str | None, base_dir: Path | None) -> Path | None:
    """A path from cluster.yaml: `~` expanded, relative to the cluster file's folder."""
    path = Path(value).expanduser() if value is not None else None
    return path if path is None or path.is_absolute() or base_dir is None else base_dir / path


def safety_warnings(cluster: Cluster) -> list[str]:
    """One line per way the switch's password is less protected than by default, for the
    terminal header, the HTML report and the JSON results (a run over ssh reads the real
    switch; sim and replay send nothing; api ssh sends no password over REST)."""
    spec = cluster.spec.switch
    if spec is None or cluster.topology != "switch" or cluster.spec.transport != "ssh":
        return []
    if spec.api == "ssh":
        return []
    if spec.api_port == 80:
        what = "and its password" if spec.password_env else "(no password set) and the replies"
        return [
            f"WARNING switch {spec.host}: plain HTTP (switch.allow_http: true): user "
            f"{spec.user!r} {what} cross the network unencrypted"
        ]
    if not spec.verify_tls:
        return [
            f"WARNING switch {spec.host}: TLS certificate not checked (switch.verify_tls: "
            "false): whoever answers at that address gets the password; set switch.ca_file"
        ]
    return []


def rest_client(spec: SwitchSpec, base_dir: Path | None = None) -> SwitchClient:
    """The real switch's client, as cluster.yaml's switch: section describes it."""
    if spec.api == "ssh":
        raise SwitchUnreachable(
            "switch.api ssh reads the console over SSH, not the REST API (a caller asked "
            "for the REST client): set api: rest or auto to read it over REST"
        )
    return RestClient(
        spec.host,
        spec.user,
        spec_password(spec) or "",
        port=spec.api_port,
        verify_tls=spec.verify_tls,
        ca_file=spec_path(spec.ca_file, base_dir),
        allow_http=spec.allow_http,
    )
