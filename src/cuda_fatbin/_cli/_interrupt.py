# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C and SIGTERM while a command runs: ``_jobs.signal_handlers`` (docs/cli.md "Signals")."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextlib


def interruptible(command: str) -> contextlib.AbstractContextManager[None]:
    """Ctrl-C and SIGTERM while ``command`` runs (exit 130 or 143): ``_jobs.signal_handlers``."""
    from .._jobs import signal_handlers

    return signal_handlers(command)
