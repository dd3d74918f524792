"""What users read cites only what users have: docs/ pages that exist, never project notes."""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
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


def test_messages_examples_and_docs_never_cite_notes_users_do_not_have() -> None:
    pages = [
        *(ROOT / "examples").rglob("*.yaml"),
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
    ]
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in SHIPPED
        for line, text in _user_strings(path)
        if any(p in text for p in PRIVATE)
    ]
    bad += [
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


def test_architecture_page_names_what_exists() -> None:
    """docs/architecture.md stays true to the tree: its paths exist, its modules import, and it
    describes every import contract of pyproject.toml (and no other)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    code = re.findall(r"`([^`\s]+)`", page)
    paths = [c for c in code if "/" in c and "<" not in c and not c.startswith(("http", "."))]
    paths += [
        f"pytest_sparkfabric/{name}"
        for line in page.split("## The stages", 1)[1].split("##", 1)[0].splitlines()
        if line.startswith("      ") and not line.startswith("       ")
        for name in line.split("  ", 1)[0].split()
    ]
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
    dotted = [c for c in code if re.fullmatch(r"(pytest_sparkfabric|sparkfabric_\w+)(\.\w+)+", c)]
    assert dotted
    unknown = [m for m in dotted if importlib.util.find_spec(m) is None]
    assert not unknown, f"docs/architecture.md names modules that do not exist: {unknown}"
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    ids = {c["id"] for c in contracts["contracts"]}
    assert set(re.findall(r"^- \*\*([\w-]+)\*\*:", page, re.M)) == ids
