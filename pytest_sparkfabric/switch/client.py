"""Read-only access to a RouterOS 7 switch: its REST API, the simulator's switch, or a recording.

Every client answers `get(path)` and `post(path, body)` with the decoded JSON reply (RouterOS
gives every value as a string). Paths are relative to `/rest` (`/interface/ethernet`). Only
`print`/`monitor`-style reads are ever sent: nothing here changes the switch.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import threading
import urllib.error
import urllib.request
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_sparkfabric.transport.recording_files import (
    SWITCH_FIELDS,
    SWITCH_RECORDING,
    append_line,
    read_records,
)

if TYPE_CHECKING:
    from pytest_sparkfabric.config import SwitchSpec
    from pytest_sparkfabric.transport import Transport

TIMEOUT_S = 15.0
MAX_REPLY_BYTES = 8 * 2**20
RECORD_NAME = SWITCH_RECORDING


class SwitchError(Exception):
    """A read of the switch failed; str() is one line an operator can act on."""


class SwitchUnreachable(SwitchError):
    """The switch cannot be read at all (connection, TLS, authentication)."""


class SwitchClient(Protocol):
    def get(self, path: str) -> Any: ...

    def post(self, path: str, body: Mapping[str, str]) -> Any: ...


def _detail(raw: bytes) -> str:
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return raw.decode("utf-8", "replace").strip()[:200]
    if isinstance(data, Mapping):
        parts = [str(data.get(k)) for k in ("message", "detail") if data.get(k)]
        return ": ".join(parts)
    return ""


class RestClient:
    """RouterOS REST over HTTPS (HTTP when the port is 80), HTTP Basic auth, a timeout per call.

    RouterOS cuts a REST command after 60 s; reads here are quick, so the default deadline is
    much shorter."""

    def __init__(
        self,
        host: str,
        user: str,
        password: str,
        *,
        port: int | None = None,
        verify_tls: bool = True,
        timeout_s: float = TIMEOUT_S,
        scheme: str | None = None,
    ) -> None:
        scheme = scheme or ("http" if port == 80 else "https")
        netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
        if port is not None and port != {"http": 80, "https": 443}.get(scheme):
            netloc += f":{port}"
        self.base = f"{scheme}://{netloc}/rest"
        self.user = user
        self.timeout_s = timeout_s
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        self._auth = f"Basic {token}"
        self._ssl: ssl.SSLContext | None = None
        if scheme == "https":
            self._ssl = ssl.create_default_context()
            if not verify_tls:
                self._ssl.check_hostname = False
                self._ssl.verify_mode = ssl.CERT_NONE

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
            with urllib.request.urlopen(request, timeout=self.timeout_s, context=self._ssl) as r:
                raw = r.read(MAX_REPLY_BYTES)
        except urllib.error.HTTPError as exc:
            detail = _detail(exc.read(65536))
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


def _reason(reason: object) -> str:
    if isinstance(reason, ssl.SSLCertVerificationError):
        return (
            f"TLS certificate not verified ({reason.verify_message}): install the switch's "
            "certificate authority, or set switch.verify_tls: false"
        )
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused: enable the www-ssl service (/ip service) or set switch.api_port"
    if isinstance(reason, TimeoutError):
        return "connection timed out"
    return str(reason)


class SimClient:
    """The simulated cluster's switch (its `rest_get` / `rest_post`), same replies as REST.

    The simulator raises an error carrying `status` and RouterOS's JSON error `body` where the
    real API answers an HTTP error."""

    def __init__(self, switch: Any) -> None:
        self._switch = switch

    def get(self, path: str) -> Any:
        return self._call("GET", path, lambda: self._switch.rest_get(path))

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._call("POST", path, lambda: self._switch.rest_post(path, dict(body)))

    @staticmethod
    def _call(method: str, path: str, call: Callable[[], Any]) -> Any:
        try:
            reply = call()
        except Exception as exc:
            status = getattr(exc, "status", None)
            if status is None:
                raise
            body = getattr(exc, "body", {})
            raise SwitchError(
                f"{method} {path}: HTTP {status} {_detail(json.dumps(body).encode())}"
            ) from None
        if isinstance(reply, str):
            try:
                return json.loads(reply)
            except ValueError:
                raise SwitchError(f"{method} {path}: the reply is not JSON") from None
        return reply


def _key(method: str, path: str, body: Mapping[str, str] | None) -> str:
    return json.dumps([method, path, dict(body) if body is not None else None], sort_keys=True)


class RecordingClient:
    """Wraps a client and appends every call and its reply (or error) to a JSON-lines file."""

    def __init__(self, inner: SwitchClient, path: Path) -> None:
        self.inner = inner
        self.path = path
        self._lock = threading.Lock()

    def get(self, path: str) -> Any:
        return self._keep("GET", path, None, lambda: self.inner.get(path))

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._keep("POST", path, body, lambda: self.inner.post(path, body))

    def _keep(self, method: str, path: str, body: Mapping[str, str] | None, call: Any) -> Any:
        rec: dict[str, Any] = {"key": _key(method, path, body)}
        try:
            rec["reply"] = call()
            return rec["reply"]
        except SwitchError as exc:
            rec["error"] = str(exc)
            rec["unreachable"] = isinstance(exc, SwitchUnreachable)
            raise
        finally:
            with self._lock:
                append_line(self.path, rec)


class ReplayClient:
    """Answers calls from a recording, in recorded order (the last answer repeats)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._answers: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._lock = threading.Lock()
        if path.is_file():
            for _, rec in read_records(path, SWITCH_FIELDS):
                self._answers[rec["key"]].append(rec)

    def get(self, path: str) -> Any:
        return self._answer("GET", path, None)

    def post(self, path: str, body: Mapping[str, str]) -> Any:
        return self._answer("POST", path, body)

    def _answer(self, method: str, path: str, body: Mapping[str, str] | None) -> Any:
        with self._lock:
            queue = self._answers.get(_key(method, path, body))
            if not queue:
                raise SwitchUnreachable(f"replay: no recording of {method} {path} in {self.path}")
            rec = queue.popleft() if len(queue) > 1 else queue[0]
        if "error" in rec:
            cls = SwitchUnreachable if rec.get("unreachable") else SwitchError
            raise cls(str(rec["error"]))
        return rec.get("reply")


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


def make_client(spec: SwitchSpec, transport: Transport) -> SwitchClient:
    """The client that matches the node transport: sim, replay, recording, or the real switch."""
    from pytest_sparkfabric.transport.record import RecordingTransport, ReplayTransport

    if isinstance(transport, RecordingTransport):
        inner = make_client(spec, transport.inner)
        return RecordingClient(inner, transport.directory / RECORD_NAME)
    if isinstance(transport, ReplayTransport):
        return ReplayClient(transport.directory / RECORD_NAME)
    sim_switch = getattr(transport, "switch", None)
    if sim_switch is not None and hasattr(sim_switch, "rest_get"):
        return SimClient(sim_switch)
    if spec.api != "rest":
        raise SwitchUnreachable(
            f"switch.api {spec.api!r} is not supported yet: enable the REST API "
            "(www-ssl service) and set api: rest"
        )
    return RestClient(
        spec.host,
        spec.user,
        _password(spec),
        port=spec.api_port,
        verify_tls=spec.verify_tls,
    )
