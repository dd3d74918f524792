"""pytest-sparkfabric: accept or reject the network fabric of a DGX Spark cluster."""
