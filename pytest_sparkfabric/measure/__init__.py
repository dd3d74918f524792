"""Measurement: the engine that runs each phase once per session, and the phases.

Modules (each imported where used, so `import pytest_sparkfabric.measure` stays cheap):

- `engine`: `Fabric`, the cache of phase results and the job runner (and node reachability);
- phases, each of one shape (`NAME`, a frozen result, `measure(fabric)`, accessors such as
  `reach.ping(fabric, link)`): `facts` (ip addr, sysctls, RoCE, PCIe; versions), `links`
  (ethtool, FEC, cable EEPROM, RoCE port), `reach` (jumbo and small pings), `cabling` (LLDP),
  `nccl_env` (NCCL's environment and bootstrap interface), `switch`, `rdma` (loopback, pairs,
  latency; the runner `tcp` shares), `tcp`, `nccl_run`, `soak`, `preflight`;
- `bwplan` and `schedule`: which pairs the bandwidth phases measure, in node-disjoint rounds (pure);
- `localize`: suspect nodes and cables from a schedule's pass/fail outcomes, and retests;
- `flows`: servers started under a deadline, waited for, always ended;
- `soak_math`: per-lane error rates and BER over the soak's samples (pure);
- `witness`: the session's measurements as `diagnosis.Evidence`, and failure messages;
- `figures`: what the session measured, as the results document holds it.
"""
