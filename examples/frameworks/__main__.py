"""``python -m examples.frameworks``: see the package docstring."""

from __future__ import annotations

import sys

from .demo import main

sys.exit(main())
