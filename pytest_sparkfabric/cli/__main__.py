"""`python -m pytest_sparkfabric.cli`: the `sparkfabric` command."""

import sys

from pytest_sparkfabric.cli import main

sys.exit(main())
