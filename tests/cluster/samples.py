"""Valid cluster files of every topology, written by hand so golden line numbers stay put."""

from __future__ import annotations

DIRECT = """\
topology: direct
nodes:
  - name: spark-1
    ssh: {host: 10.0.0.11, user: nvidia}
    ports:
      1: [192.168.100.11/24, 192.168.101.11/24]
  - name: spark-2
    ssh: {host: 10.0.0.12, user: nvidia}
    ports:
      1: [192.168.100.12/24, 192.168.101.12/24]
"""

MESH = """\
topology: mesh
mtu: 1500
nodes:
  - name: spark-1
    ssh: {host: 10.0.0.11, user: nvidia}
    ports:
      0: [192.168.100.11/24, 192.168.101.11/24]
      1: [192.168.104.11/24, 192.168.105.11/24]
  - name: spark-2
    ssh: {host: 10.0.0.12, user: nvidia}
    ports:
      0: [192.168.102.12/24, 192.168.103.12/24]
      1: [192.168.100.12/24, 192.168.101.12/24]
  - name: spark-3
    ssh: {host: 10.0.0.13, user: nvidia}
    ports:
      0: [192.168.104.13/24, 192.168.105.13/24]
      1: [192.168.102.13/24, 192.168.103.13/24]
"""

RING = """\
topology: ring              # direct | mesh | ring | switch
mtu: 9000                   # optional, default 9000
nodes:                      # ring and mesh: in cable order
  - name: spark-1
    ssh: {host: 10.0.0.11, user: nvidia}
    ports:
      0: [192.168.100.11/24, 192.168.101.11/24]
      1: [192.168.106.11/24, 192.168.107.11/24]
  - name: spark-2
    ssh: {host: 10.0.0.12, user: nvidia}
    ports:
      0: [192.168.102.12/24, 192.168.103.12/24]
      1: [192.168.100.12/24, 192.168.101.12/24]
  - name: spark-3
    ssh: {host: 10.0.0.13, user: nvidia}
    ports:
      0: [192.168.104.13/24, 192.168.105.13/24]
      1: [192.168.102.13/24, 192.168.103.13/24]
  - name: spark-4
    ssh: {host: 10.0.0.14, user: nvidia}
    ports:
      0: [192.168.106.14/24, 192.168.107.14/24]
      1: [192.168.104.14/24, 192.168.105.14/24]
transport: ssh              # ssh (default) | sim | replay
"""

SWITCH = """\
topology: switch
nodes:
  - name: spark-1
    ssh: {host: 10.0.0.11, user: nvidia, port: 22, identity_file: ~/.ssh/id_ed25519}
    ports:
      1: [{address: 192.168.100.11/24, netdev: enp1s0f1np1, rdma: rocep1s0f1}, 192.168.101.11/24]
  - name: spark-2
    ssh: {host: 10.0.0.12, user: nvidia}
    ports:
      1: [192.168.100.12/24, 192.168.101.12/24]
  - name: spark-3
    ssh: {host: 10.0.0.13, user: nvidia}
    ports:
      1: [192.168.100.13/24, 192.168.101.13/24]
switch:
  vendor: routeros
  host: 10.0.0.2
  user: sparkfabric
  password_env: SWITCH_PASSWORD
  ports: {spark-1: qsfp56-dd-1-1, spark-2: qsfp56-dd-1-5, spark-3: qsfp56-dd-2-1}
transport: ssh
thresholds: {rail_rdma_gbps: 90}
nccl: {size: 8G, launch_node: spark-2, env: {NCCL_DEBUG: INFO}}
soak: {duration_s: 3600}
bandwidth: {qps: 8}
"""

SIM = """\
topology: direct
transport: sim
simulate:
  seed: 3
  faults:
    - {fault: link_down, node: spark-2, port: 1}
    - {fault: lane_degradation, node: spark-1, lane: 2, onset_c: 75}
nodes:
  - name: spark-1
    ports: {1: [192.168.100.11/24, 192.168.101.11/24]}
  - name: spark-2
    ports: {1: [192.168.100.12/24, 192.168.101.12/24]}
"""

VALID = {"direct": DIRECT, "mesh": MESH, "ring": RING, "switch": SWITCH, "sim": SIM}
