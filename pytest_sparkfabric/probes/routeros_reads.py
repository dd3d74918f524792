"""The switch reads' old home: `routeros` holds them (diagnosis/explain.py imports from here)."""

from pytest_sparkfabric.probes.routeros import parse_system_resource

__all__ = ["parse_system_resource"]
