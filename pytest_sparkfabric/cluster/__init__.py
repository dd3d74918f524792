"""cluster.yaml to a typed, validated, frozen cluster: the stage every other one starts from.

Data flows one way: `source` (YAML with lines) -> `spec` (the file's shape) -> `model`
(Cluster, Node, Rail) -> `plan` (cables, links, pairs); `wording` and `validate` say what is wrong,
`load` ties them together. `faults` and `thresholds` are the registries the shape is checked
against; `hardware` holds the box's fixed names.
"""

from __future__ import annotations

from pytest_sparkfabric.cluster.load import ConfigError, load_cluster, parse_cluster
from pytest_sparkfabric.cluster.model import Cluster, Node, Rail
from pytest_sparkfabric.cluster.source import Problem

__all__ = ["Cluster", "ConfigError", "Node", "Problem", "Rail", "load_cluster", "parse_cluster"]
