"""A parser that cannot decide says what it expected and what it found (the message as text)."""

from __future__ import annotations

import pytest

from pytest_sparkfabric.probes import PARSERS, ParseError, found_text

# Parsers that never raise: ping classifies any text (an unreadable run is verdict "error"),
# and an nccl.conf with no KEY=VALUE line is a valid, empty configuration.
TOTAL = {"ping", "nccl-conf"}


@pytest.mark.parametrize("tool", sorted(set(PARSERS) - TOTAL))
def test_parse_error_says_expected_and_found(tool: str) -> None:
    text = "bash: command not found\n"
    with pytest.raises(ParseError) as err:
        PARSERS[tool](text)
    message = str(err.value)
    assert err.value.missing and err.value.found, message
    assert "command not found" in message, message


def test_found_text_quotes_first_or_last_line() -> None:
    assert found_text("") == "empty output"
    assert found_text("\n \n") == "only blank lines"
    assert found_text("a\nb\n") == "'a' (+1 more lines)"
    assert found_text("a\r\nb\n", last=True) == "2 lines ending with 'b'"
    assert found_text("x" * 200).endswith("...'") and len(found_text("x" * 200)) == 122
