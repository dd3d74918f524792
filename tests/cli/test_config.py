"""`sparkfabric init | check | schema`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_sparkfabric.cli import main as run
from pytest_sparkfabric.cluster import parse_cluster
from pytest_sparkfabric.cluster.spec import ClusterSpec
from tests.cluster.samples import SWITCH

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cluster-yaml.md"


def test_init_prints_a_file_check_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["init", "--topology", "switch", "--nodes", "4", "--transport", "sim"]
    assert run([*argv, "--link-speed", "100G"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(
        "# cluster.yaml for pytest-sparkfabric, written by `sparkfabric init --topology switch "
        "--nodes 4 --transport sim --link-speed 100G`\n"
    )
    assert parse_cluster(text).link_speed_mbps("spark-1", 1) == 100_000
    # The paths NVIDIA's nccl playbook builds, given as values (issue 24 item 5).
    assert "\n  binary: ~/nccl-tests/build/all_reduce_perf\n" in text
    lib = "$HOME/nccl/build/lib:/usr/local/cuda/lib64:/usr/lib/aarch64-linux-gnu/openmpi/lib"
    assert f" -x LD_LIBRARY_PATH={lib} " in text and " -x PATH " not in text
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    assert run(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: valid\n  topology switch, 4 nodes, MTU 9000, transport sim\n")
    assert "per directed link                    16\n" in out  # legs: 4 pairs x 2 rails x 2
    assert "per switch                           1\n" in out
    # A simulated cluster contacts nothing: no warnings, even with --resolve.
    assert run(["check", "-q", "--resolve", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_init_writes_output_and_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.yaml"
    argv = ["init", "--topology", "direct", "--nodes", "a,b", "-o", str(out)]
    wrote = f"wrote {out}; edit the lines marked EDIT, then: sparkfabric check {out}\n"
    assert run(argv) == 0
    assert capsys.readouterr().out == wrote
    assert out.read_text().count("- name:") == 2
    out.write_text("mine\n")
    assert run(argv) == 2
    assert capsys.readouterr() == (
        "",
        f"sparkfabric init: {out} exists. Fix: add --force to replace it.\n",
    )
    assert out.read_text() == "mine\n"
    assert run([*argv, "--force"]) == 0  # replaced, and told so
    assert capsys.readouterr().out == wrote
    assert out.read_text().count("- name:") == 2


def test_an_impossible_init_exits_2_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["init", "--topology", "mesh", "--nodes", "a,b,c,d"]) == 2
    assert capsys.readouterr() == (
        "",
        "sparkfabric init: topology mesh needs exactly 3 nodes (a Spark has 2 ports); --nodes "
        "names 4. Fix: use --topology ring or switch.\n",
    )


def test_more_sparks_behind_a_switch_than_nvidia_supports_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    argv = ["init", "--topology", "switch", "--nodes", "9", "--transport", "sim", "-o", str(path)]
    assert run(argv) == 0
    assert run(["check", "-q", str(path)]) == 0
    assert capsys.readouterr().out.endswith(
        "1 warning (valid, but the run would fail)\n  line 11: 9 nodes behind a switch: NVIDIA "
        "supports up to 8 (the suite tests any number the switch has legs for).\n    Fix: nothing "
        "to change for the suite; for NVIDIA support split the cluster into groups of 8.\n\n"
    )


def test_check_prints_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWITCH_PASSWORD", "secret")
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


def test_check_warns_about_what_fails_at_run_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SWITCH_PASSWORD", raising=False)
    path = tmp_path / "cluster.yaml"
    assert run(["init", "--topology", "switch", "--nodes", "a,b", "-o", str(path)]) == 0
    capsys.readouterr()
    assert run(["check", "-q", str(path)]) == 0  # valid: warnings do not fail the check
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: 6 warnings (valid, but the run would fail)\n")
    assert (
        "  line 10: `ssh: {host: a, user: nvidia}` is still marked EDIT.\n"
        "    Fix: set the value for your cluster, then delete EDIT from the comment.\n"
    ) in out
    assert (
        "  line 19: switch.host 192.0.2.1 is a documentation address (192.0.2.0/24): no switch "
        "answers there, every switch check would fail.\n"
        "    Fix: set the switch's management address.\n"
    ) in out
    assert (
        "  line 21: switch.password_env names $SWITCH_PASSWORD, which is not set here: every "
        "switch check would fail.\n"
        "    Fix: export SWITCH_PASSWORD=... (the switch user's password) before pytest.\n"
    ) in out
    assert "does not resolve" not in out  # offline unless asked

    # Edited as the warnings say: nothing left to warn about, and -q prints nothing.
    monkeypatch.setenv("SWITCH_PASSWORD", "secret")
    text = path.read_text().replace("192.0.2.1", "10.0.0.2").replace("EDIT", "")
    text = text.replace("host: a,", "host: 10.0.0.11,").replace("host: b,", "host: 10.0.0.12,")
    path.write_text(text)
    assert run(["check", "-q", "--resolve", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_check_resolve_warns_about_ssh_hosts_that_do_not_resolve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWITCH_PASSWORD", "secret")
    path, text = tmp_path / "cluster.yaml", SWITCH
    for i, host in enumerate(["no-such-host.invalid", "127.0.0.1", "2001:db8::7"], 11):
        text = text.replace(f"host: 10.0.0.{i},", f"host: {host},")
    path.write_text(text)
    assert run(["check", "-q", str(path)]) == 0
    out = capsys.readouterr().out
    assert "line 12: nodes[2].ssh.host 2001:db8::7 is a documentation address" in out
    assert "no-such-host" not in out
    assert run(["check", "-q", "--resolve", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: 2 warnings")
    assert "  line 4: nodes[0].ssh.host no-such-host.invalid does not resolve (" in out
    assert "ssh cannot reach spark-1.\n    Fix: use the node's management address" in out
    assert "127.0.0.1" not in out


def test_schema_describes_every_field_and_the_docs_are_its_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    schema = ClusterSpec.model_json_schema()
    assert run(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == schema
    assert schema["required"] == ["topology", "nodes"]
    models = {"ClusterSpec": schema, **schema["$defs"]}
    fields = [(f"{m}.{k}", v) for m, d in models.items() for k, v in d["properties"].items()]
    assert [name for name, v in fields if not v.get("description")] == []
    assert all(d.get("description") for d in schema["$defs"].values())
    assert run(["schema", "--format", "markdown"]) == 0
    generated = capsys.readouterr().out
    assert DOCS.read_text(encoding="utf-8") == generated, (
        "docs/cluster-yaml.md is out of date: "
        "sparkfabric schema --format markdown > docs/cluster-yaml.md"
    )
    assert all(f"| `{name.split('.')[1]}` |" in generated for name, _ in fields)


def test_schema_results_is_the_models_schema_and_the_docs_are_its_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pytest_sparkfabric import results

    assert run(["schema", "--results"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$id"] == f"urn:sparkfabric:results:{results.VERSION}"
    assert schema["properties"] == results.Results.model_json_schema()["properties"]
    assert run(["schema", "--results", "--format", "markdown"]) == 0
    docs = DOCS.with_name("results-json.md").read_text(encoding="utf-8")
    assert docs == capsys.readouterr().out, (
        "docs/results-json.md is out of date: "
        "sparkfabric schema --results --format markdown > docs/results-json.md"
    )
    assert "node pair `spark-1<->spark-2`" in docs
