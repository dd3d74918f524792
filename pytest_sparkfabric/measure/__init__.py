"""Measurement: the engine that runs each phase once per session, and the phases.

Modules (each imported where used, so `import pytest_sparkfabric.measure` stays cheap):

- `engine`: `Fabric`, the cache of phase results and the job runner (and node reachability);
- phases, each of one shape (`NAME`, a frozen result, `measure(fabric)`, accessors such as
  `reach.ping(fabric, link)`): `facts` (ip addr, sysctls, RoCE, PCIe), `links` (ethtool, FEC),
  `reach` (jumbo and small pings), `nccl_env`, `switch`, `cable` (EEPROM), `rdma` (loopback,
  pairs), `tcp`, `nccl_run`, `soak`;
- `schedule`: bandwidth schedules (legs, full, stress, cables) in node-disjoint rounds (pure);
- `localize`: suspect nodes and cables from a schedule's pass/fail outcomes, and retests (pure);
- `flows`: servers started under a deadline, waited for, always ended;
- `soak_math`: per-lane error rates and BER over the soak's samples (pure);
- `evidence`: the session's measurements as `diagnosis.Evidence`, and failure messages.
"""
