"""Read-only access to a RouterOS 7 switch over its REST API.

Every client answers `get(path)` and `post(path, body)` with the decoded JSON reply (RouterOS
gives every value as a string). Paths are relative to `/rest` (`/interface/ethernet`). Only
`print`/`monitor`-style reads are ever sent: nothing here changes the switch. A transport hands
out the client (`Transport.switch_client`): this REST client by default, the simulator's own
switch on `transport: sim`, a recording's answers on `transport: replay`.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.cluster.spec import SwitchSpec

TIMEOUT_S = 15.0
MAX_REPLY_BYTES = 8 * 2**20


class SwitchError(Exception):
    """A read of the switch failed; str() is one line an operator can act on."""


class SwitchUnreachable(SwitchError):
    """The switch cannot be read at all (connection, TLS, authentication)."""


class SwitchClient(Protocol):
    def get(self, path: str) -> Any: ...

    def post(self, path: str, body: Mapping[str, str]) -> Any: ...


class SwitchConsole(Protocol):
    """The switch's console over SSH: one read-only command in, RouterOS's text out."""

    def run(self, command: str) -> str: ...


def error_detail(raw: bytes) -> str:
    """RouterOS's JSON error body (`message`, `detail`) as one short line."""
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return raw.decode("utf-8", "replace").strip()[:200]
    if isinstance(data, Mapping):
        parts = [str(data.get(k)) for k in ("message", "detail") if data.get(k)]
        return ": ".join(parts)
    return ""


class _Redirected(urllib.error.HTTPError):
    """A redirect the client refused; `location` is where it pointed (absolute)."""

    def __init__(
        self, req: urllib.request.Request, code: int, msg: str, hdrs: Any, fp: Any, location: str
    ) -> None:
        super().__init__(req.full_url, code, msg, hdrs, fp)
        self.location = location


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    # urllib copies every header but Content-* into the redirected request, Authorization
    # included (CPython Lib/urllib/request.py, HTTPRedirectHandler.redirect_request): a switch
    # answering 302 to another host would hand it the password. No redirect is followed.
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        raise _Redirected(req, code, msg, headers, fp, newurl)


def _scheme_host(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower()


class RestClient:
    """RouterOS REST over HTTPS (HTTP when the port is 80), HTTP Basic auth, a timeout per call.

    The password goes only to the configured origin: plain HTTP is refused unless `allow_http`
    (switch.allow_http), redirects are refused, the environment's proxies are not used, and the
    certificate is verified (against `ca_file` when given, else the system's store) unless
    `verify_tls` is false. RouterOS cuts a REST command after 60 s; reads here are quick, so
    the default deadline is much shorter."""

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
        if port is not None and port != {"http": 80, "https": 443}.get(scheme):
            netloc += f":{port}"
        self.base = f"{scheme}://{netloc}/rest"
        if scheme == "http" and not allow_http:
            raise SwitchUnreachable(
                f"{self.base}: refusing to send the switch password over plain HTTP (Basic "
                "auth is readable by anyone on the path): use HTTPS (the www-ssl service; drop "
                "switch.api_port or set it to the www-ssl port), or set switch.allow_http: true "
                "on a management network you trust"
            )
        self.user = user
        self.timeout_s = timeout_s
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        self._auth = f"Basic {token}"
        handlers: list[urllib.request.BaseHandler] = [
            urllib.request.ProxyHandler({}),
            _RefuseRedirects(),
        ]
        if scheme == "https":
            context = ssl.create_default_context()
            if not verify_tls:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            elif ca_file is not None:
                try:
                    context.load_verify_locations(cafile=str(ca_file))
                except (OSError, ssl.SSLError) as exc:
                    raise SwitchUnreachable(
                        f"switch.ca_file {ca_file}: cannot load it as PEM certificates ({exc}): "
                        "export the certificate authority of the switch's certificate as PEM"
                    ) from None
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)

    def get(self, path: str) -> Any:
        return self._call("GET", path, None)

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._call("POST", path, dict(body))

    def _call(self, method: str, path: str, body: dict[str, str] | None) -> Any:
        url = self.base + (path if path.startswith("/") else "/" + path)
        headers = {"Authorization": self._auth, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        what = f"{method} {url}"
        try:
            with self._opener.open(request, timeout=self.timeout_s) as r:
                raw = r.read(MAX_REPLY_BYTES)
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:
                raise SwitchUnreachable(f"{what}: {_redirect(exc, url)}") from None
            detail = error_detail(exc.read(65536))
            if exc.code == 401:
                raise SwitchUnreachable(
                    f"{what}: authentication failed for user {self.user!r} (HTTP 401): check "
                    "the password variable (switch.password_env) and that the user's group has "
                    "the read, api and rest-api policies"
                ) from None
            raise SwitchError(f"{what}: HTTP {exc.code} {detail or exc.reason}") from None
        except urllib.error.URLError as exc:
            raise SwitchUnreachable(f"{what}: {_reason(exc.reason)}") from None
        except TimeoutError:
            raise SwitchUnreachable(f"{what}: no answer within {self.timeout_s:g} s") from None
        except OSError as exc:
            raise SwitchUnreachable(f"{what}: {exc}") from None
        try:
            return json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            raise SwitchError(f"{what}: the reply is not JSON") from None


def _redirect(exc: urllib.error.HTTPError, url: str) -> str:
    location = getattr(exc, "location", None) or (exc.headers and exc.headers.get("Location"))
    location = urllib.parse.urljoin(url, str(location or "?"))
    exc.close()
    head = f"the switch redirected (HTTP {exc.code}) to {location}; not followed"
    (scheme, host), (to_scheme, to_host) = _scheme_host(url), _scheme_host(location)
    if (scheme, to_scheme, to_host) == ("http", "https", host):
        return f"{head}: use HTTPS (drop switch.api_port: 80 and switch.allow_http)"
    return (
        f"{head} (the password goes to switch.host only): point switch.host and "
        "switch.api_port at the REST API itself"
    )


def _reason(reason: object) -> str:
    if isinstance(reason, ssl.SSLCertVerificationError):
        return (
            f"TLS certificate not verified ({reason.verify_message}): set switch.ca_file to the "
            "PEM of the certificate authority that signed the switch's certificate (its "
            "subjectAltName must name switch.host), or set switch.verify_tls: false"
        )
    if isinstance(reason, ssl.SSLError):
        return (
            f"TLS failed ({reason.reason or reason}): is switch.api_port the www-ssl (HTTPS) "
            "service?"
        )
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused: enable the www-ssl service (/ip service) or set switch.api_port"
    if isinstance(reason, TimeoutError):
        return "connection timed out"
    return str(reason)


def _password(spec: SwitchSpec) -> str:
    if spec.password_env is None:
        return ""
    value = os.environ.get(spec.password_env)
    if value is None:
        raise SwitchUnreachable(
            f"the password variable ${spec.password_env} (switch.password_env) is not set: "
            "export it before running the suite"
        )
    return value


def ca_file_path(spec: SwitchSpec, base_dir: Path | None) -> Path | None:
    """switch.ca_file as a path: `~` expanded, relative to the cluster file's folder."""
    if spec.ca_file is None:
        return None
    path = Path(spec.ca_file).expanduser()
    return path if path.is_absolute() or base_dir is None else base_dir / path


def uses_http(spec: SwitchSpec) -> bool:
    return spec.api in ("rest", "auto") and spec.api_port == 80


def safety_warnings(cluster: Cluster) -> list[str]:
    """One line per way the switch's password is less protected than by default, for the
    terminal header, the HTML report and the JSON results (a run over ssh reads the real
    switch; sim and replay send nothing)."""
    spec = cluster.spec.switch
    if spec is None or cluster.topology != "switch" or cluster.spec.transport != "ssh":
        return []
    if spec.api == "ssh":
        return []
    if uses_http(spec):
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
    """The real switch's client, as cluster.yaml's switch: section describes it.

    `base_dir`: the cluster file's folder, where a relative switch.ca_file is."""
    if spec.api == "ssh":
        raise SwitchUnreachable(
            "switch.api ssh reads the console over SSH, not the REST API (a caller asked "
            "for the REST client): set api: rest or auto to read it over REST"
        )
    return RestClient(
        spec.host,
        spec.user,
        _password(spec),
        port=spec.api_port,
        verify_tls=spec.verify_tls,
        ca_file=ca_file_path(spec, base_dir),
        allow_http=spec.allow_http,
    )
