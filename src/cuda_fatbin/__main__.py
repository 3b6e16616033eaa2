# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``python -m cuda_fatbin``: the ``cuda-fatbin`` command."""

import sys

from ._cli import console

sys.exit(console())
