"""Measurement: `engine` (the session's cache of phase results and job runner) and the phases,
each of one shape (`NAME`, a frozen result, `measure(fabric)`, accessors); modules are imported
where used, so `import pytest_sparkfabric.measure` stays cheap."""
