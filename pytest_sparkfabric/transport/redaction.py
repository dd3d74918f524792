"""The one place the switch's secrets are taken out of text (its password, the Basic token, any
echoed `Authorization:` header): both switch clients pass every reply and error through it, so
terminal, reports, results and recordings only ever get redacted text."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import Any

REDACTED = "[redacted]"
MAX_DEPTH = 32
"""RouterOS replies are a list of flat objects; anything nested deeper is not a RouterOS reply."""

# The header as an echoing server prints it: `Authorization: Basic dG9r`, `"authorization":
# "Basic dG9r"`, `Authorization=Bearer x`.
_HEADER = re.compile(
    r"""(authorization["']?\s*[:=]\s*["']?)(?:(?:basic|bearer|digest)\s+)?[^\s,;"'}]+""", re.I
)


class TooDeep(ValueError):
    """A reply nested deeper than MAX_DEPTH."""


@dataclass(frozen=True, slots=True)
class Secrets:
    values: tuple[str, ...] = ()
    """Longest first: the token is replaced before a password that may be part of it."""
    basic_auth: str = ""
    """The `Authorization` header value of HTTP Basic auth (RFC 7617)."""

    @classmethod
    def of(cls, user: str, password: str | None) -> Secrets:
        if password is None:
            return cls()
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        # The password as it stands inside a JSON string too (an echoed request body).
        forms = {token, password, json.dumps(password)[1:-1]} - {""}
        return cls(tuple(sorted(forms, key=len, reverse=True)), f"Basic {token}")

    def text(self, text: str) -> str:
        text = _HEADER.sub(lambda m: m.group(1) + REDACTED, text)
        for value in self.values:
            text = text.replace(value, REDACTED)
        return text

    def reply(self, value: Any, depth: int = 0) -> Any:
        """A decoded JSON reply with every string (keys too) redacted; TooDeep past MAX_DEPTH."""
        if depth > MAX_DEPTH:
            raise TooDeep(f"the reply nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.reply(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.reply(v, depth + 1) for k, v in value.items()}
        return value
