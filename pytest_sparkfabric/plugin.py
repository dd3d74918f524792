"""pytest hooks only: options, the shipped suite, configuration, header. Without `--cluster` (or
the `sparkfabric_cluster` ini key) it registers its options and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_sparkfabric.session import SESSION_KEY, get_session

if TYPE_CHECKING:
    from pytest_sparkfabric.cluster import Cluster
    from pytest_sparkfabric.transport.record import Recording

_OPTIONS = {  # name -> (metavar, help); metavar None: a switch
    "cluster": (
        "PATH",
        "cluster.yaml describing the fabric; runs the shipped acceptance suite on it",
    ),
    "record": ("DIR", "write every command each node ran (rc, stdout, stderr, duration) to DIR"),
    "json": ("PATH", "write every measurement and verdict as JSON to PATH"),
    "baseline": (
        "OLD_JSON",
        "compare with an earlier run's --sparkfabric-json document: the report shows what "
        "changed, and items whose bandwidth fell more than 10%% below it fail",
    ),
    "strict": (
        None,
        "fail a check that passes with a warning (an outlier lane below the fail level, an "
        "unapproved cable, advisory evidence not readable)",
    ),
}


def suite_dir() -> Path:
    """Where the shipped acceptance suite lives: in the wheel, or beside the package."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "acceptance", here.parent / "acceptance"):
        if (candidate / "__init__.py").is_file():
            return candidate
    raise pytest.UsageError(f"sparkfabric: the acceptance suite is missing next to {here}")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sparkfabric", "sparkfabric: accept a DGX Spark cluster's fabric")
    for name, (metavar, text) in _OPTIONS.items():
        flag = "--cluster" if name == "cluster" else f"--sparkfabric-{name}"
        how = {"metavar": metavar, "default": None} if metavar else {"action": "store_true"}
        group.addoption(flag, dest=f"sparkfabric_{name}", help=text, **how)
    parser.addini("sparkfabric_cluster", "default for --cluster", default=None)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    ns = early_config.known_args_namespace
    cluster = getattr(ns, "sparkfabric_cluster", None) or early_config.getini("sparkfabric_cluster")
    if cluster and not getattr(ns, "file_or_dir", None):
        # No path given: run the shipped suite, wherever the plugin is installed.
        args.append(str(suite_dir()))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sparkfabric: a test of the shipped fabric suite")
    path = config.getoption("sparkfabric_cluster", None) or config.getini("sparkfabric_cluster")
    if not path:
        return
    from pytest_sparkfabric import fixtures
    from pytest_sparkfabric.cluster import ConfigError, load_cluster
    from pytest_sparkfabric.report import register as register_reports
    from pytest_sparkfabric.session import SparkSession

    base = Path(config.invocation_params.dir)
    p = base / str(path)  # an absolute path stays as it is
    try:
        cluster = load_cluster(p)
    except ConfigError as err:
        raise pytest.UsageError(str(err)) from None
    recording = _load_replay(cluster, p, base) if cluster.spec.transport == "replay" else None
    _refuse_xdist_spreading(config)
    record = config.getoption("sparkfabric_record")
    if record and not hasattr(config, "workerinput"):
        _refuse_used_record_folder(Path(record))
    session = config.stash[SESSION_KEY] = SparkSession(config, cluster, recording=recording)
    for marker in fixtures.MARKERS:
        config.addinivalue_line("markers", marker)
    # The reports first: of the first-tried session-finish hooks, pluggy calls the one registered
    # last first, so the session has built the results before the JSON is written (and before
    # pytest's JUnit XML and pytest-html write theirs).
    register_reports(config, lambda: session.results, session.baseline)
    config.pluginmanager.register(fixtures.Suite(session, suite_dir()), "sparkfabric-fixtures")
    config.pluginmanager.register(
        fixtures.session_fixtures(session), "sparkfabric-session-fixtures"
    )
    config.pluginmanager.register(session, "sparkfabric-session")


def _load_replay(cluster: Cluster, p: Path, base: Path) -> Recording:
    """The recording to replay, read once; missing or damaged, a usage error naming its file and
    line, before any test runs."""
    from pytest_sparkfabric.transport.record import Recording, RecordingError

    replay = (cluster.source.parent if cluster.source else base) / str(cluster.spec.replay_dir)
    if not replay.is_dir():
        line = cluster.line_of(("replay_dir",))
        raise pytest.UsageError(
            f"{f'{p}:{line}' if line else p}: replay_dir {replay} is not a folder.\n"
            "    Fix: point it at a recording made with --sparkfabric-record DIR"
        )
    try:
        return Recording(replay)
    except RecordingError as err:
        raise pytest.UsageError(f"sparkfabric: recording {err}") from None


def _refuse_used_record_folder(folder: Path) -> None:
    from pytest_sparkfabric.transport.record import holds_recording

    if folder.exists() and not folder.is_dir():
        problem = "is not a folder"
    elif holds_recording(folder):
        # A recording is appended to as commands finish: two sessions in one folder would mix.
        problem = "already holds a recording"
    else:
        return
    raise pytest.UsageError(
        f"--sparkfabric-record {folder} {problem}.\n    Fix: record into an empty or new folder"
    )


def _refuse_xdist_spreading(config: pytest.Config) -> None:
    # Every xdist worker would run its own measurements, and bandwidth tests on different
    # workers would overlap on the same nodes and measure each other.
    workers, dist = config.getoption("numprocesses", None), config.getoption("dist", "no")
    if workers and dist not in ("loadgroup", "no"):
        raise pytest.UsageError(
            "sparkfabric: the suite schedules its own concurrency (pings at once, bandwidth in "
            "node-disjoint rounds); under pytest-xdist use --dist loadgroup, which keeps every "
            "fabric test on one worker, or drop -n"
        )


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    s = get_session(config)
    if s is None:
        return None
    from pytest_sparkfabric.shell import visible

    c = s.cluster
    src = c.source.name if c.source else "cluster.yaml"
    head = f"{src}: {c.topology}, {len(c.nodes)} nodes, transport {c.spec.transport}, MTU {c.mtu}"
    return [visible(f"sparkfabric: {line}") for line in (head, *s.safety)]
