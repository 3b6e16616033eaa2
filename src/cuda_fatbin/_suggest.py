# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Did-you-mean: the closest of a few known words to one that is not known (an unknown command, kind...).

Light on purpose (``difflib`` is imported only when a word is unknown): the CLI and ``_program`` both use it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["closest", "nearest"]


def closest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The choice most like ``word`` (``difflib.get_close_matches``), or None when none is close enough.

    Examples
    --------
    >>> closest("compil", ["compile", "build", "inspect"])
    'compile'
    >>> closest("xyz", ["ptx", "cubin"]) is None
    True
    """
    close = nearest(word, choices, n=1, cutoff=cutoff)
    return close[0] if close else None


def nearest(word: str, choices: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` choices most like ``word``, the closest first (``difflib.get_close_matches``).

    Examples
    --------
    >>> nearest("rtx509", ["rtx5090", "rtx5080", "t4"])
    ['rtx5090', 'rtx5080']
    """
    import difflib

    return difflib.get_close_matches(word, list(choices), n=n, cutoff=cutoff)
