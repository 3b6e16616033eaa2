"""``python -m cuda_fatbin``: the ``cuda-fatbin`` command."""

import sys

from ._cli import main

sys.exit(main())
