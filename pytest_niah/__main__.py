"""``python -m pytest_niah``: the ``pytest-niah`` command."""

import sys

from pytest_niah.cli import main

sys.exit(main())
