"""cluster.yaml to a typed, validated, frozen cluster: the stage every other one starts from.

`source` (YAML with lines) -> `spec` (pydantic shape) -> `validate` (the cabling rules) ->
`model` (Cluster, Node, Rail) -> `plan` (cables, links, pairs); `load` ties them and words errors.
"""

from __future__ import annotations

from pytest_sparkfabric.cluster.load import ConfigError, load_cluster, parse_cluster
from pytest_sparkfabric.cluster.model import Cluster, Node, Rail
from pytest_sparkfabric.cluster.source import Problem

__all__ = ["Cluster", "ConfigError", "Node", "Problem", "Rail", "load_cluster", "parse_cluster"]
