# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C while ``compile`` runs: imported when a compile starts, not at start-up (``contextlib``)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def interruptible(command: str) -> Iterator[None]:
    """While a compile runs, first Ctrl-C: stop (queued jobs dropped, the running ones awaited, said so);
    second: exit 130 at once. The previous SIGINT handler is back afterwards (``main`` called from a program).

    The second exits with ``os._exit``: no interpreter teardown while NVRTC threads still run (that teardown
    was seen to abort with ``free(): invalid pointer``). Outputs are written only after a compile, whole
    (``_files.write_atomic``), so either way no partial file is left.
    """
    import signal
    import threading

    from .. import _multiarch

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    presses = [0]

    def handler(signum: int, frame: object) -> None:
        presses[0] += 1
        if presses[0] > 1:
            try:
                sys.stderr.write(f"cuda-fatbin {command}: interrupted\n")
                sys.stderr.flush()
            finally:
                os._exit(130)
        raise KeyboardInterrupt

    def waiting(running: int) -> None:
        if running:
            noun = "compile" if running == 1 else "compiles"
            print(f"cuda-fatbin {command}: interrupted; waiting for {running} running {noun}; Ctrl-C again to quit now",
                  file=sys.stderr, flush=True)  # fmt: skip

    previous, previous_hook = signal.signal(signal.SIGINT, handler), _multiarch._on_interrupt
    _multiarch._on_interrupt = waiting
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _multiarch._on_interrupt = previous_hook
