"""shell.py: the one place remote shell text is built, and the rule that keeps it the one place."""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sparkfabric import shell
from tests.shellrun import HOME, started

ROOT = Path(__file__).resolve().parents[1]


def ran(text: str, files: tuple[str, ...] = ()) -> list[list[str]]:
    """The argv of every program the simulator's shell starts for `text`."""
    outcome, argvs = started(text, files)
    assert not outcome.stderr, outcome.stderr
    return [list(a) for a in argvs]


words = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\0"))


@given(st.lists(words, min_size=1, max_size=6))
def test_join_runs_exactly_its_argv(argv: list[str]) -> None:
    text = shell.join(["tool", *argv])
    assert ran(text) == [["tool", *argv]]
    assert shlex.split(text) == ["tool", *argv]


def real_sh(text: str) -> list[str]:
    """The arguments a real POSIX sh (/bin/sh) passes for `text` placed after `printf`."""
    done = subprocess.run(
        ["sh", "-c", "printf '%s\\0' " + text],
        capture_output=True,
        env={"HOME": HOME, "PATH": os.defpath},
        check=True,
        timeout=10,
    )
    return done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


@pytest.mark.skipif(shutil.which("sh") is None, reason="no /bin/sh on this machine")
@given(st.lists(words.filter(bool), min_size=1, max_size=4), words.filter(bool))
def test_a_real_sh_reads_the_text_as_the_simulator_does(argv: list[str], home_rel: str) -> None:
    text = shell.join([*argv, shell.home_path("~/" + home_rel), shell.glob("/nonexistent/*")])
    expected = [*argv, f"{HOME}/{home_rel}", "/nonexistent/*"]
    assert real_sh(text) == expected
    assert ran("tool " + text) == [["tool", *expected]]


@given(words, words)
def test_fill_puts_each_value_in_as_one_word(key: str, value: str) -> None:
    text = shell.fill("env {k}={v} tool {{literal}}", {"k": key, "v": value})
    assert ran(text) == [["env", f"{key}={value}", "tool", "{literal}"]]


def test_fill_inserts_rendered_words_as_they_are_and_then_joins_commands() -> None:
    flags = shell.words(["-x", "A=a b", shell.home_path("~/x y")])
    text = shell.fill("mpirun {flags} {n}", {"flags": flags, "n": 2})
    assert text == "mpirun -x 'A=a b' ~/'x y' 2"
    assert ran(text) == [["mpirun", "-x", "A=a b", f"{HOME}/x y", "2"]]
    text = shell.then([shell.join(["a", "1;2"]), shell.join(["b"])])
    assert ran(text) == [["a", "1;2"], ["b"]]  # then runs commands in turn
    with pytest.raises(ValueError):
        shell.join([])


@pytest.mark.parametrize("template", ["x {n!r}", "x {n:>4}", "x {n[0]}", "x {m}"])
def test_fill_refuses_what_it_cannot_quote(template: str) -> None:
    with pytest.raises(ValueError, match="cannot be filled in"):
        shell.fill(template, {"n": "1"})


def test_home_paths_and_globs_expand_on_the_node_and_nothing_else_does() -> None:
    assert shell.home_path("~/.nccl.conf").text == "~/.nccl.conf"
    assert shell.home_path("/a b").text == "'/a b'"
    assert shell.home_path("x/~/y").text == "'x/~/y'"
    assert shell.home_path("~root/x").text == "'~root/x'"
    assert ran(shell.join(["cat", shell.home_path("~/$(id) x")])) == [["cat", f"{HOME}/$(id) x"]]
    pattern = shell.glob("/sys/a b/hw*/t;*")
    files = ("/sys/a b/hw1/t;1", "/sys/a b/hw1/t2")
    assert ran(shell.join(["cat", pattern]), files) == [["cat", "/sys/a b/hw1/t;1"]]


@pytest.mark.parametrize(
    ("template", "contexts"),
    [
        ("mpirun -H {hosts} {env_flags}", ["word", "word"]),
        ("a '{x}' \"{y}\" \\{z}", ["single-quoted", "double-quoted", "escaped"]),
        ('a "it\'s {x}" \'"{y}\' "\\"{z}"', ["double-quoted", "single-quoted", "double-quoted"]),
        ("a {x} # {y}\nb {z}", ["word", "comment", "word"]),
        ("a#{x} {{#}} {y}", ["word", "word"]),
        ("a\\\\{x} {y}\\ ", ["word", "word"]),
    ],
)
def test_holes_knows_the_quoting_around_each_placeholder(
    template: str, contexts: list[str]
) -> None:
    assert [h.context for h in shell.holes(template)] == contexts


def test_holes_flags_placeholders_that_fill_cannot_quote() -> None:
    plain = [(h.name, h.plain) for h in shell.holes("{a} {b!r} {c:>3} {d[0]} {e.x}")]
    assert plain == [("a", True), ("b", False), ("c", False), ("d", False), ("e", False)]


# -- one place ------------------------------------------------------------------------------------

# Where shell text is still written by hand, and why.
OWN_SHELL_TEXT = {
    "pytest_sparkfabric/shell.py": "the one place",
    "pytest_sparkfabric/transport/ssh.py": "the node-side supervisor (deadline, group, sudo)",
}
# Not the suite's commands: the simulator reads shell text, the lab writes its own scripts.
NOT_SENT = ("sparkfabric_sim/", "sparkfabric_lab/")


def _sources() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted([*ROOT.glob("pytest_sparkfabric/**/*.py"), *ROOT.glob("acceptance/*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel in OWN_SHELL_TEXT or rel.startswith(NOT_SENT):
            continue
        out.append((rel, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _hand_written(node: ast.expr) -> bool:
    """Text assembled here rather than by shell.py: literals, f-strings, +, %, format, join."""
    if isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("format", "join", "replace")
        and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "shell")
    )


@pytest.mark.slow
def test_no_module_but_shell_py_quotes_or_assembles_command_text() -> None:
    found = []
    for rel, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if "shlex" in names:
                    found.append(f"{rel}:{node.lineno}: imports shlex")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Job":
                command = node.args[1] if len(node.args) > 1 else None
                command = next((k.value for k in node.keywords if k.arg == "command"), command)
                if command is not None and _hand_written(command):
                    found.append(f"{rel}:{node.lineno}: a Job's command written by hand")
    assert not found, "\n".join(found)
    assert len(_sources()) > 40  # the scan saw the package


def test_one_duration_form() -> None:
    forms = {0.44: "0.4 s", 4.0: "4 s", 9.96: "10 s", 38.4: "38 s", 72: "1 min 12 s",
             900: "15 min", 3720: "1 h 02 min", None: "unknown"}  # fmt: skip
    assert {seconds: shell.duration(seconds) for seconds in forms} == forms
