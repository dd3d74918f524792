"""What a cluster.yaml value that ends up on a command line may hold.

Every such value is quoted where it meets a shell (`shell.py`); these rules add what quoting
cannot: a name that starts with `-` is still read as an option by the tool it is given to, a
host with shell metacharacters can reach a shell through ssh_config's `ProxyCommand %h` or
mpirun's own ssh, and an interface name the kernel would never give is a typo. Each rule raises
the message and fix a user reads (see wording.validation_problems: a PydanticCustomError's
`fix`), naming the characters that are not allowed.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticCustomError

from pytest_sparkfabric import shell
from pytest_sparkfabric.cluster.wording import seen


def _listing(chars: set[str]) -> str:
    return ", ".join(repr(c) for c in sorted(chars))


def _class(ranges: str, chars: list[str]) -> str:
    return "[" + ranges + "".join("\\" + c if c in "\\]^-[" else c for c in chars) + "]"


@dataclass(frozen=True)
class NameRule:
    """A name made of `allowed` characters that does not start with one of `not_first`."""

    what: str
    allowed: str
    """The characters besides ASCII letters and digits."""
    not_first: str
    max_length: int
    example: str
    words: str
    """`allowed` and the other limits in words, for the fix."""

    @property
    def pattern(self) -> str:
        """The same rule as a regex (the JSON schema's, and so docs/cluster-yaml.md's)."""
        digits = "" if "0" in self.not_first else "0-9"
        first = _class("A-Za-z" + digits, [c for c in self.allowed if c not in self.not_first])
        body = _class("A-Za-z0-9", list(self.allowed))
        return f"^{first}{body}{{0,{self.max_length - 1}}}$"

    def problem(self, value: str) -> str | None:
        # The length is the field's own limit (its message says it).
        bad = {c for c in value if not (c.isascii() and c.isalnum()) and c not in self.allowed}
        why = [f"starts with {value[0]!r}"] if value[:1] in self.not_first else []
        why += [f"holds {_listing(bad)}"] if bad else []
        return "it " + " and ".join(why) if why else None

    def check(self, value: Any, *, key: bool = False) -> Any:
        if not isinstance(value, str) or not value:
            return value  # the field's own type and length say what is wrong
        why = self.problem(value)
        if why is None:
            return value
        head = "" if key else f"{seen(value)} "
        raise PydanticCustomError(
            "name_rule",
            "{head}is not {what}: {why}",
            {
                "head": head,
                "what": self.what,
                "why": why,
                "fix": f"{self.words}, e.g. {self.example}",
            },
        )


# Linux takes at most 15 characters (IFNAMSIZ 16 with the NUL) and refuses '/', ':' and
# whitespace (net/core/dev.c, dev_valid_name); ours is the portable subset, never an option.
NETDEV = NameRule(
    "a Linux interface name",
    "._-",
    ".-",
    15,
    "enp1s0f1np1",
    "use letters, digits, '.', '_' and '-' only, at most 15, not starting with '.' or '-'",
)
# RDMA device names: IB_DEVICE_NAME_MAX is 64 with the NUL (include/rdma/ib_verbs.h).
RDMA = NameRule(
    "an RDMA device name",
    "._-",
    ".-",
    63,
    "rocep1s0f1",
    "use letters, digits, '.', '_' and '-' only, not starting with '.' or '-'",
)
ENV_KEY = NameRule(
    "an environment variable name",
    "_",
    "0123456789",
    255,
    "NCCL_IB_HCA",
    "a name holds letters, digits and '_' only and does not start with a digit",
)
# OpenSSH 9.6 refuses user and host names with shell metacharacters on its command line: they
# reach ProxyCommand's shell through %r and %h (openbsd commit "ban user/hostnames with most
# shell metacharacters"). '@' stays allowed: directory users (user@DOMAIN) log in that way.
USER = NameRule(
    "a login user name",
    "._@-",
    ".@-",
    255,
    "nvidia",
    "use letters, digits, '.', '_', '@' and '-' only, not starting with '-'",
)
SWITCH_PORT = NameRule(
    "a switch interface name",
    "._-",
    ".-",
    64,
    "qsfp56-dd-1-1",
    "use the interface's name as RouterOS lists it: letters, digits, '.', '_' and '-'",
)
BINARY_WORDS = (
    "a path of letters, digits, '.', '_', '+', '/' and '-', optionally starting with ~/, "
    "never with '-'"
)
BINARY_PATTERN = r"^(?:~/)?[A-Za-z0-9_./+][A-Za-z0-9_./+-]*$"
_HOST_NAME = NameRule("", "._-", ".-", 253, "", "")


def check_binary(value: Any) -> Any:
    if not isinstance(value, str) or not value or re.match(BINARY_PATTERN, value):
        return value
    rest = value.removeprefix("~/")
    bad = {c for c in rest if not (c.isascii() and c.isalnum()) and c not in "._+/-"}
    why = [f"starts with {rest[0]!r}"] if rest[:1] == "-" else []
    why += [f"holds {_listing(bad)}"] if bad else []
    why = why or ["is only ~/"]
    raise PydanticCustomError(
        "binary",
        "{seen} is not a program path the suite passes on: it {why}",
        {
            "seen": seen(value),
            "why": " and ".join(why),
            "fix": f"write {BINARY_WORDS}, e.g. all_reduce_perf",
        },
    )


def host_problem(value: str) -> str | None:
    """Why `value` is not a host name, an IPv4 or IPv6 address or an ssh_config alias."""
    if ":" in value or "%" in value:
        try:
            address = ipaddress.IPv6Address(value)
        except ValueError:
            return "it holds ':' or '%' but is not an IPv6 address"
        zone = address.scope_id or ""
        return _HOST_NAME.problem(zone) if zone else None
    if value[:1] == "-":
        return "it starts with '-', which ssh would read as an option"
    if len(value) > _HOST_NAME.max_length:
        return f"it is longer than {_HOST_NAME.max_length} characters"
    return _HOST_NAME.problem(value)


def check_ssh_host(value: Any) -> Any:
    return _check_host(
        value,
        "a host name, an IP address or an ssh_config alias",
        "write the address (10.0.0.11, fe80::1%eth0), the host name or a Host alias of your "
        "ssh_config: letters, digits, '.', '_' and '-', not starting with '-'",
    )


def check_switch_host(value: Any) -> Any:
    return _check_host(
        value,
        "a host name or an IP address",
        "write the switch's address (10.0.0.2, fe80::2%eth0) or its host name: letters, "
        "digits, '.', '_' and '-', not starting with '-'",
    )


def _check_host(value: Any, what: str, fix: str) -> Any:
    if not isinstance(value, str) or not value:
        return value
    why = host_problem(value)
    if why is None:
        return value
    raise PydanticCustomError(
        "host",
        "{seen} is not {what}: {why}",
        {"seen": seen(value), "what": what, "why": why, "fix": fix},
    )


_WHERE = {
    "single-quoted": "inside single quotes",
    "double-quoted": "inside double quotes",
    "escaped": "after a backslash",
    "comment": "in a comment",
}


def check_template(value: Any, allowed: tuple[str, ...], text: tuple[str, ...]) -> Any:
    """A command template whose {placeholders} the suite fills in: known names only, each
    whole, and those that carry text (`text`) where a quoted word can stand."""
    if not isinstance(value, str):
        return value
    if "\0" in value:
        raise PydanticCustomError(
            "template", "holds a NUL character", {"fix": "remove it: no command can carry it"}
        )
    try:
        holes = shell.holes(value)
    except ValueError as exc:
        raise PydanticCustomError(
            "template",
            "is not a valid template: {why}",
            {"why": str(exc), "fix": "write a literal { or } as {{ or }}"},
        ) from None
    unknown = sorted({h.name for h in holes if h.name not in allowed})
    if unknown:
        raise PydanticCustomError(
            "template",
            "uses unknown placeholder(s) {names}",
            {
                "names": ", ".join("{" + n + "}" for n in unknown),
                "fix": "the placeholders filled in here are "
                + ", ".join("{" + a + "}" for a in allowed),
            },
        )
    whole = sorted({"{" + h.name + "}" for h in holes if not h.plain})
    if whole:
        raise PydanticCustomError(
            "template",
            "uses {holes} with a format, index or attribute",
            {"holes": " and ".join(whole), "fix": "write each as {name}: it is filled in whole"},
        )
    misplaced: dict[str, list[str]] = {}
    for h in holes:
        if h.name in text and h.context != "word":
            misplaced.setdefault(_WHERE[h.context], []).append("{" + h.name + "}")
    if misplaced:
        raise PydanticCustomError(
            "template",
            "puts {what}",
            {
                "what": "; ".join(
                    f"{' and '.join(dict.fromkeys(names))} {where}"
                    for where, names in misplaced.items()
                ),
                "fix": "write them outside quotes and comments: the suite fills each in as "
                "quoted shell words",
            },
        )
    return value


def check_env_value(value: Any) -> Any:
    if isinstance(value, str) and "\0" in value:
        raise PydanticCustomError(
            "env_value",
            "{seen} holds a NUL character",
            {"seen": seen(value), "fix": "remove it: no environment variable can carry it"},
        )
    return value
