"""What a cluster.yaml value that ends up on a command line may hold, beyond shell quoting: no
name read as an option (`-x`), no host with shell metacharacters (ssh_config's `ProxyCommand %h`,
mpirun's own ssh), no interface name the kernel would never give. Each rule raises a
PydanticCustomError whose text is the message and whose `fix` is the fix a user reads."""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import PydanticCustomError, core_schema

from pytest_sparkfabric import shell


def seen(value: Any) -> str:
    """How a value the user wrote reads in a message: `the number 5`, `'abc'`, `a list`."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return repr(text) if text else "an empty text ''"
    if isinstance(value, datetime.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    return "a mapping" if isinstance(value, Mapping) else f"a {type(value).__name__}"


def error(kind: str, message: str, fix: str) -> PydanticCustomError:
    # The text goes in as context, after the fix: pydantic fills `{name}`s of the template from
    # the context once each, so a user's own `{fix}` in the message stays as written.
    return PydanticCustomError(kind, "{message}", {"fix": fix, "message": message})


@dataclass(frozen=True)
class NameRule:
    """A name of ASCII letters, digits and `allowed` that does not start with `not_first` (nor
    is only `prefix`, which may stand before it: a program's `~/`); `words` says it for the fix."""

    what: str
    allowed: str
    not_first: str
    max_length: int
    example: str
    words: str
    prefix: str = ""
    key: bool = False  # names a mapping's key: the message does not repeat it

    @property
    def pattern(self) -> str:
        """The same rule as a regex (the JSON schema's, and so docs/cluster-yaml.md's)."""

        def chars(ranges: str, these: Iterable[str]) -> str:
            return "[" + ranges + "".join("\\" + c if c in "\\]^-[" else c for c in these) + "]"

        digits = "" if "0" in self.not_first else "0-9"
        first = chars("A-Za-z" + digits, [c for c in self.allowed if c not in self.not_first])
        prefix = f"(?:{re.escape(self.prefix)})?" if self.prefix else ""
        return f"^{prefix}{first}{chars('A-Za-z0-9', self.allowed)}{{0,{self.max_length - 1}}}$"

    def problem(self, value: str) -> str | None:
        """Why `value` breaks the rule (its length aside: the field's own limit says it)."""
        if self.prefix and value == self.prefix:
            return f"it is only {self.prefix}"
        value = value.removeprefix(self.prefix)
        bad = {c for c in value if not (c.isascii() and c.isalnum()) and c not in self.allowed}
        why = [f"starts with {value[0]!r}"] if value[:1] in self.not_first else []
        why += [f"holds {', '.join(map(repr, sorted(bad)))}"] if bad else []
        return "it " + " and ".join(why) if why else None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        # As `Annotated[str, RULE]`: the check's words come first; the limits are the rule as
        # the schema (and so the reference) shows it.
        limits = core_schema.str_schema(
            min_length=1, max_length=self.max_length, pattern=self.pattern
        )
        return core_schema.no_info_before_validator_function(self.check, limits)

    def check(self, value: Any) -> Any:
        # Else the field's own type (and emptiness) say what is wrong.
        head = "" if self.key else f"{seen(value)} "
        if isinstance(value, str) and value and (why := self.problem(value)):
            fix = f"{self.words}, e.g. {self.example}"
            raise error("name_rule", f"{head}is not {self.what}: {why}", fix)
        if isinstance(value, str) and len(value) > self.max_length:
            what = f"{head}is too long: at most {self.max_length} characters"
            raise error("name_rule", what, self.words)
        return value


# Linux takes at most 15 characters (IFNAMSIZ 16 with the NUL) and refuses '/', ':' and
# whitespace (net/core/dev.c, dev_valid_name); ours is the portable subset, never an option.
NETDEV = NameRule(
    "a Linux interface name", "._-", ".-", 15, "enp1s0f1np1",
    "use letters, digits, '.', '_' and '-' only, at most 15, not starting with '.' or '-'",
)  # fmt: skip
# RDMA device names: IB_DEVICE_NAME_MAX is 64 with the NUL (include/rdma/ib_verbs.h).
RDMA = NameRule(
    "an RDMA device name", "._-", ".-", 63, "rocep1s0f1",
    "use letters, digits, '.', '_' and '-' only, not starting with '.' or '-'",
)  # fmt: skip
ENV_KEY = NameRule(
    "an environment variable name", "_", "0123456789", 255, "NCCL_IB_HCA",
    "a name holds letters, digits and '_' only and does not start with a digit",
)  # fmt: skip
PASSWORD_ENV = replace(ENV_KEY, example="SWITCH_PASSWORD")
# OpenSSH 9.6 refuses user and host names with shell metacharacters on its command line: they
# reach ProxyCommand's shell through %r and %h (openbsd commit "ban user/hostnames with most
# shell metacharacters"). '@' stays allowed: directory users (user@DOMAIN) log in that way.
USER = NameRule(
    "a login user name", "._@-", ".@-", 255, "nvidia",
    "use letters, digits, '.', '_', '@' and '-' only, not starting with '-'",
)  # fmt: skip
SWITCH_PORT = NameRule(
    "a switch interface name", "._-", ".-", 64, "qsfp56-dd-1-1",
    "use the interface's name as RouterOS lists it: letters, digits, '.', '_' and '-'",
)  # fmt: skip
# Node names become test ids and file names in reports: no spaces, no option-like start.
NODE = NameRule(
    "a node name", "._-", "._-", 63, "spark-1",
    "use letters, digits, '.', '_' and '-' only, starting with a letter or digit",
)  # fmt: skip
_HOST_NAME = NameRule("", "._-", ".-", 253, "", "")
# A program mpirun starts on every node: a name on PATH or a path, ~/ for the login's home.
BINARY = NameRule(
    "a program path the suite passes on", "._+/-", "-", 4096, "all_reduce_perf",
    "write a path of letters, digits, '.', '_', '+', '/' and '-', optionally starting with ~/, "
    "never with '-'", prefix="~/",
)  # fmt: skip


def host_problem(value: str) -> str | None:
    """Why `value` is not a host name, an IPv4 or IPv6 address or an ssh_config alias."""
    if ":" in value or "%" in value:
        try:
            zone = ipaddress.IPv6Address(value).scope_id or ""
        except ValueError:
            return "it holds ':' or '%' but is not an IPv6 address"
        return _HOST_NAME.problem(zone) if zone else None
    if value[:1] == "-":
        return "it starts with '-', which ssh would read as an option"
    if len(value) > _HOST_NAME.max_length:
        return f"it is longer than {_HOST_NAME.max_length} characters"
    return _HOST_NAME.problem(value)


def _host_check(what: str, write: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, str) and value and (why := host_problem(value)):
            fix = f"write {write}: letters, digits, '.', '_' and '-', not starting with '-'"
            raise error("host", f"{seen(value)} is not {what}: {why}", fix)
        return value

    return check


check_ssh_host = _host_check(
    "a host name, an IP address or an ssh_config alias",
    "the address (10.0.0.11, fe80::1%eth0), the host name or a Host alias of your ssh_config",
)
check_switch_host = _host_check(
    "a host name or an IP address", "the switch's address (10.0.0.2, fe80::2%eth0) or its host name"
)
_WHERE = {
    "single-quoted": "inside single quotes",
    "double-quoted": "inside double quotes",
    "escaped": "after a backslash",
    "comment": "in a comment",
}


def _names(names: list[str] | tuple[str, ...], sep: str = ", ") -> str:
    return sep.join("{" + n + "}" for n in dict.fromkeys(names))


def check_template(value: Any, allowed: tuple[str, ...], text: tuple[str, ...]) -> Any:
    """A command template whose {placeholders} the suite fills in: known names only, each
    whole, and those that carry text (`text`) where a quoted word can stand."""
    if not isinstance(value, str):
        return value
    if "\0" in value:
        raise error("template", "holds a NUL character", "remove it: no command can carry it")
    try:
        holes = shell.holes(value)
    except ValueError as exc:
        fix = "write a literal { or } as {{ or }}"
        raise error("template", f"is not a valid template: {exc}", fix) from None
    if unknown := sorted({h.name for h in holes if h.name not in allowed}):
        what = f"uses unknown placeholder(s) {_names(unknown)}"
        raise error("template", what, f"the placeholders filled in here are {_names(allowed)}")
    if whole := sorted({h.name for h in holes if not h.plain}):
        what = f"uses {_names(whole, ' and ')} with a format, index or attribute"
        raise error("template", what, "write each as {name}: it is filled in whole")
    misplaced: dict[str, list[str]] = {}
    for h in (h for h in holes if h.name in text and h.context != "word"):
        misplaced.setdefault(_WHERE[h.context], []).append(h.name)
    if misplaced:
        where = "; ".join(f"{_names(ns, ' and ')} {w}" for w, ns in misplaced.items())
        fix = (
            "write them outside quotes and comments: the suite fills each in as quoted shell words"
        )
        raise error("template", f"puts {where}", fix)
    return value


def check_env_value(value: Any) -> Any:
    if isinstance(value, str) and "\0" in value:
        fix = "remove it: no environment variable can carry it"
        raise error("env_value", f"{seen(value)} holds a NUL character", fix)
    return value
