"""Measurement acceptance: RDMA loopback, rail and pair bandwidth, TCP, NCCL, the heat soak.

Modules (each imported where used, so `import pytest_sparkfabric.measure` stays cheap):

- `schedule`: bandwidth schedules (legs, full, stress, cables) in node-disjoint rounds (pure);
- `localize`: suspect nodes and cables from a schedule's pass/fail outcomes, and retests (pure);
- `flows`: servers started under a deadline, waited for, always ended;
- `rdma`, `tcp`, `nccl_run`, `soak`: the phases, each run once per session and cached;
- `evidence`: the session's measurements as `diagnosis.Evidence`, and failure messages;
- `explain`: the same diagnosis over saved tool outputs.
"""
