"""`sparkfabric init | check | schema` through a parser built with cli_config.register."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sparkfabric import cli_config
from pytest_sparkfabric.config import ClusterSpec
from tests.config.samples import RING, SWITCH

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cluster-yaml.md"


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="sparkfabric")
    cli_config.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_init_prints_a_file_check_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["init", "--topology", "switch", "--nodes", "4", "--transport", "sim"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# cluster.yaml for pytest-sparkfabric, written by `sparkfabric init")
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    assert run(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: valid\n  topology switch, 4 nodes, MTU 9000, transport sim\n")
    assert "per directed link                    24\n" in out
    assert "per switch                           1\n" in out


def test_init_writes_output_and_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.yaml"
    argv = ["init", "--topology", "direct", "--nodes", "a,b", "-o", str(out)]
    assert run(argv) == 0
    assert out.read_text().count("- name:") == 2
    assert run(argv) == 2
    assert "exists. Fix: add --force" in capsys.readouterr().err
    assert run([*argv, "--force"]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--topology", "mesh", "--nodes", "a,b,c,d"], "topology mesh needs exactly 3 nodes"),
        (["--topology", "ring", "--nodes", "12", "--subnet-pool", "10.0.0.0/23"], "holds 2 /24s"),
        (["--topology", "direct", "--nodes", "a,b", "--port", "5"], "--port 5 does not exist"),
    ],
)
def test_init_errors_exit_2_without_traceback(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["init", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("sparkfabric init: ")
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_check_lists_every_problem_and_exits_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        RING.replace("topology: ring ", "topology: mesh ").replace("mtu: 9000", "mtu: 90")
    )
    assert run(["check", str(path)]) == 4
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: 2 problems\n")
    assert "  line 1: topology 'mesh' needs exactly 3 nodes" in out
    assert "  line 2: mtu 90 is too small: it must be at least 576.\n" in out
    assert run(["check", str(tmp_path / "nope.yaml")]) == 4
    assert "the file does not exist" in capsys.readouterr().out


def test_check_prints_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(SWITCH)
    assert run(["check", str(path)]) == 0
    out = capsys.readouterr().out
    for expected in [
        "  spark-1  ssh nvidia@10.0.0.11:22\n",
        "    rail0     enp1s0f1np1    rocep1s0f1    192.168.100.11/24\n",
        "cables (3)\n  spark-1:p1<->switch:qsfp56-dd-1-1\n",
        "  spark-1:rail0<->spark-2:rail0  192.168.100.0/24\n",
        "switch routeros sparkfabric@10.0.0.2 (rest)\n",
        "  per rail netdev                      6\n",
    ]:
        assert expected in out
    assert run(["check", "-q", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_schema_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema == ClusterSpec.model_json_schema()
    assert schema["required"] == ["topology", "nodes"]


def _properties(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    out = [("ClusterSpec", k, v) for k, v in schema["properties"].items()]
    for name, d in schema["$defs"].items():
        out += [(name, k, v) for k, v in d.get("properties", {}).items()]
    return out


def test_every_field_has_a_description() -> None:
    schema = ClusterSpec.model_json_schema()
    missing = [f"{m}.{k}" for m, k, v in _properties(schema) if not v.get("description")]
    assert missing == []
    assert all(d.get("description") for d in schema["$defs"].values())


def test_docs_reference_is_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["schema", "--format", "markdown"]) == 0
    generated = capsys.readouterr().out
    assert DOCS.read_text(encoding="utf-8") == generated, (
        "docs/cluster-yaml.md is out of date: "
        "sparkfabric schema --format markdown > docs/cluster-yaml.md"
    )
    for _, key, _ in _properties(ClusterSpec.model_json_schema()):
        assert f"| `{key}` |" in generated
