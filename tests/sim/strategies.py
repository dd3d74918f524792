"""Random healthy simulated clusters, as cluster.yaml text (every topology the plugin knows)."""

from __future__ import annotations

from hypothesis import strategies as st

from pytest_sparkfabric.cluster import Cluster, parse_cluster


def cluster_text(topology: str, nodes: int, seed: int, mtu: int, port: int) -> str:
    lines = [f"topology: {topology}", "transport: sim", f"mtu: {mtu}", "nodes:"]
    for i in range(nodes):
        lines += [f"  - name: spark-{i + 1}", "    ports:"]
        # a ring's port 0 on the subnets to the next box, port 1 on those to the previous one
        ring = ((0, 2 * i), (1, 2 * ((i - 1) % nodes)))
        for p, k in ((port, 0),) if topology in ("direct", "switch") else ring:
            lines.append(
                f"      {p}: [192.168.{100 + k}.{11 + i}/24, 192.168.{101 + k}.{11 + i}/24]"
            )
    if topology == "switch":
        lines += ["switch:", "  host: 192.168.88.1", "  user: ro", "  ports:"]
        lines += [
            f"    spark-{i + 1}: qsfp56-dd-{i // 2 + 1}-{1 if i % 2 == 0 else 5}"
            for i in range(nodes)
        ]
    lines += ["simulate:", f"  seed: {seed}"]
    return "\n".join(lines) + "\n"


@st.composite
def healthy_clusters(draw: st.DrawFn) -> Cluster:
    topology = draw(st.sampled_from(["direct", "mesh", "ring", "switch"]))
    nodes = {"direct": 2, "mesh": 3}.get(topology) or draw(
        st.integers(4, 6) if topology == "ring" else st.integers(2, 8)
    )
    seed = draw(st.integers(0, 2**31))
    mtu = draw(st.sampled_from([1500, 4200, 9000]))
    port = draw(st.sampled_from([0, 1]))
    return parse_cluster(cluster_text(topology, nodes, seed, mtu, port), source="generated")
