"""The lab: a cluster.yaml built for real out of network namespaces, veth cables and sshd.

`sparkfabric lab up FILE` gives every node a namespace with the Spark's real netdev names, cabled
as the topology says, a management link to the host and its own sshd; `pytest --cluster
LABDIR/cluster.yaml` then runs the shipped suite through real `ssh` into real shells, with the
real kernel answering `ip`, `ping`, `/proc` and `iperf3`. Tools only the hardware has are
small wrappers around the simulator. See docs/lab.md.

This module stays import-light: `lab.boot` runs inside each node's namespace at every start.
"""

from __future__ import annotations

DEFAULT_DIR = "/run/sparkfabric-lab"
DEFAULT_PREFIX = "sf-"
DEFAULT_MGMT = "198.18.0.0/24"


class LabError(Exception):
    """Something the user must fix; str() is the whole message (one or a few lines)."""
