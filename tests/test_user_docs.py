"""What users read cites only what users have: docs/ pages that exist, never project notes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from pytest_sparkfabric.diagnosis.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [*(ROOT / "pytest_sparkfabric").rglob("*.py"), *(ROOT / "acceptance").glob("*.py")]
# Notes of the project's authors: not in the repository a user clones, nor in the wheel.
PRIVATE = ("DOMAIN.md", "DESIGN.md", "seeds/", "samples/INDEX")


def _user_strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that are not docstrings (messages, help, report text)."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


def test_messages_never_cite_notes_users_do_not_have() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in SHIPPED
        for line, text in _user_strings(path)
        if any(p in text for p in PRIVATE)
    ]
    assert not bad, "\n".join(bad)


def test_examples_and_docs_never_cite_notes_users_do_not_have() -> None:
    pages = [
        *(ROOT / "examples").rglob("*.yaml"),
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
    ]
    bad = [
        f"{page.relative_to(ROOT)}:{n}: {line}"
        for page in pages
        for n, line in enumerate(page.read_text().splitlines(), 1)
        if any(p in line for p in PRIVATE)
    ]
    assert not bad, "\n".join(bad)


def test_every_docs_page_a_message_cites_exists() -> None:
    cited = {
        m
        for path in SHIPPED
        for _, text in _user_strings(path)
        for m in re.findall(r"docs/[\w.-]+\.md", text)
    }
    assert "docs/diagnosis.md" in cited
    assert all((ROOT / page).is_file() for page in cited), cited


def test_diagnosis_page_lists_every_rule_as_the_code_has_it() -> None:
    page = (ROOT / "docs" / "diagnosis.md").read_text()

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    for r in RULES.values():
        row = f"| `{r.id}` | {cell(r.symptom)} | {cell(r.cause)} | {cell(r.fix)} |"
        assert row in page, f"docs/diagnosis.md is missing or out of date for {r.id}:\n{row}"
