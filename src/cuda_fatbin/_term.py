# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Text for a terminal from strings we did not write: control characters escaped, never read as markup.

Entry identifiers, section names, file and archive-member names, wheel metadata: any of them can hold an
escape sequence, a newline, a bidirectional override or bytes that are not UTF-8. Everything the CLI
prints that came from input goes through :func:`shown`, and tables through :func:`table`, which hands
rich plain ``Text`` (no markup, no emoji codes, no highlighting). ``--json`` output keeps exact values.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from operator import itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, TextIO

__all__ = [
    "PRINTABLE_TEXT",
    "escaping_streams",
    "is_printable_text",
    "json_names",
    "json_text",
    "markdown",
    "shown",
    "table",
]

#: What :func:`is_printable_text` accepts, in words for error messages.
PRINTABLE_TEXT = "printable UTF-8 text (no tab, newline or other control character, no lone surrogate)"

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: A plain-text table pads a column to its longest cell, up to this many characters (a longer cell overflows).
MAX_PAD = 80


def _escape(ch: str) -> str:
    o = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape): show the byte
        return f"\\x{o - 0xDC00:02x}"
    if o <= 0xFF:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def shown(text: object) -> str:
    """``text`` with every character that is not printable escaped, safe to write to any terminal.

    Control characters (C0, DEL, C1), format characters (bidirectional overrides, zero-width ones),
    line and paragraph separators, unassigned and private-use code points, and bytes that were not UTF-8
    in a file name (``surrogateescape``) are written as ``\\x1b``, ``\\n``, ``\\u202e``, ``\\xff``.
    Bytes are decoded as file names are (``os.fsdecode``). Printable text, including non-ASCII letters,
    is unchanged.

    Examples
    --------
    >>> shown("k\\x1b[31mred")
    'k\\\\x1b[31mred'
    >>> shown(b"caf\\xc3\\xa9 \\xff.so")
    'café \\\\xff.so'
    >>> shown("sm_90")
    'sm_90'
    """
    if isinstance(text, (bytes, bytearray)):
        s = os.fsdecode(bytes(text))
    else:
        s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in s)


#: Characters that are markup in a GitHub markdown table cell: each is written after a backslash (``:`` too,
#: which ends the scheme of a URL GitHub would turn into a link: ``https://...``, ``mailto:...``)
_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|~$&!#:"})
#: ``www.`` starts a link in GitHub markdown, however it is cased: its dot is escaped
_WWW = re.compile(r"(?i)(www)\.")


def markdown(text: object) -> str:
    """``text`` for a markdown table cell: :func:`shown` (control characters, newlines escaped), then every
    character that is markup there (links, emphasis, HTML, code, math, a ``|`` that ends the cell)
    after a backslash, so it renders as written.

    Examples
    --------
    >>> print(markdown("a|b <script> [x](y) *k*\\x1b"))
    a\\|b \\<script\\> \\[x\\](y) \\*k\\*\\\\x1b
    >>> print(markdown("pkg/http://evil.example www.evil.example"))
    pkg/http\\://evil.example www\\.evil.example

    An ``@`` is followed by an empty HTML comment: GitHub makes ``name@domain.tld`` an e-mail link however its
    characters are escaped (escapes are read before links are found), and a comment between them renders as
    nothing.
    """
    return _WWW.sub(r"\1\\.", shown(text).translate(_MARKDOWN)).replace("@", "@<!-- -->")


def is_printable_text(text: object) -> bool:
    """Whether ``text`` is a ``str`` that :func:`shown` leaves as it is: :data:`PRINTABLE_TEXT`.

    The one rule for names a kernel bundle records (name expressions, symbol names): ``KernelBundle.build``
    refuses what ``KernelBundle.open`` would refuse. A lone surrogate (JSON's ``"\\ud800"``) is not printable.

    Examples
    --------
    >>> is_printable_text("scale<float>"), is_printable_text("scale<float>\\n"), is_printable_text("a\\tb")
    (True, False, False)
    """
    return isinstance(text, str) and text.isprintable()


def _raw(text: str) -> bytes:
    """The bytes a name held: a ``surrogateescape`` character is its byte; another lone surrogate, its UTF-8 form."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _not_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:  # a lone surrogate: a byte that was not UTF-8 (os.fsdecode), or worse
        return True


def _percent(text: str) -> str:
    """The exact bytes of ``text`` as ASCII: printable ASCII other than ``%`` as is, every other byte ``%XX``."""
    return "".join(chr(b) if 0x20 < b < 0x7F and b != 0x25 else f"%{b:02X}" for b in _raw(text))


#: Types whose values ``json_names`` leaves as they are, and adds no ``_bytes`` field for
_JSON_PLAIN = frozenset((int, float, bool, type(None)))


def json_names(value: Any) -> Any:
    """``value`` made valid JSON text where a name (a path, a member name) is not Unicode, without losing it.

    ``json.dump`` writes a name whose bytes are not UTF-8 (``os.fsdecode`` gives ``"k\\udcff.fatbin"``)
    as a lone surrogate escape, which strict JSON parsers reject. Here every such string becomes its
    display form — each byte that is not UTF-8 as U+FFFD — and, beside a field ``X`` that held one, a
    field ``X_bytes`` carries the exact bytes, percent-encoded (RFC 3986: printable ASCII but ``%`` as
    is, every other byte ``%XX``; ``urllib.parse.unquote_to_bytes`` gives them back). For a list ``X``,
    ``X_bytes`` is a list of the same length with null where the item is plain Unicode. Strings that
    are valid Unicode are unchanged, and no ``_bytes`` field is added for them.

    Examples
    --------
    >>> json_names({"path": "k\\udcff.fatbin", "size": 3})
    {'path': 'k\ufffd.fatbin', 'path_bytes': 'k%FF.fatbin', 'size': 3}
    >>> json_names({"written": ["a.cubin", "\\udcffb.cubin"]})["written_bytes"]
    [None, '%FFb.cubin']
    """
    if type(value) is str and value.isascii():  # (ASCII is Unicode: the usual name, without encoding it)
        return value
    if isinstance(value, str):
        return _raw(value).decode("utf-8", "replace") if _not_unicode(value) else value
    if isinstance(value, (list, tuple)):
        return [json_names(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    for key, item in value.items():
        name = key if type(key) is str and key.isascii() else json_names(key)
        if type(item) in _JSON_PLAIN or (type(item) is str and item.isascii()):  # nothing to change or add
            out[name] = item
            continue
        out[name] = json_names(item)
        if isinstance(item, str) and _not_unicode(item):
            out[f"{name}_bytes"] = _percent(item)
        elif isinstance(item, (list, tuple)) and any(isinstance(i, str) and _not_unicode(i) for i in item):
            out[f"{name}_bytes"] = [_percent(i) if isinstance(i, str) and _not_unicode(i) else None for i in item]
    return out


class _NotPlainJson(Exception):
    """A value :func:`json_text` leaves to the ``json`` module (another type, a key that is not a string)."""


def json_text(value: Any) -> str:
    """``json.dumps(value, indent=1)``: the same text, made several times faster.

    Below Python 3.14 the ``json`` module indents in Python, through a generator per container and a write
    per piece; a listing of 24,454 fatbins is 2.5 million pieces. Here dicts with string keys, lists, tuples,
    strings, ints, floats, booleans and None are written by one recursive function, and strings by ``json``'s
    own escaper (ASCII, as ``ensure_ascii``); any other value (a key that is not a string, a subclass, a
    cycle, a nesting deeper than the recursion limit) makes the whole text the ``json`` module's, errors
    included.

    Examples
    --------
    >>> print(json_text({"files": [{"path": "k\u00e9.fatbin", "size": 3, "ok": True}], "none": []}))
    {
     "files": [
      {
       "path": "k\\u00e9.fatbin",
       "size": 3,
       "ok": true
      }
     ],
     "none": []
    }
    """
    import json
    from json.encoder import encode_basestring_ascii as string

    parts: list[str] = []
    put = parts.append

    def scalar(item: object) -> str | None:
        kind = type(item)
        if kind is str:
            return string(item)  # type: ignore[arg-type]
        if kind is int:
            return int.__repr__(item)
        if item is None:
            return "null"
        if kind is bool:
            return "true" if item else "false"
        if kind is float:
            return json.dumps(item) if item != item or item in (_INF, -_INF) else float.__repr__(item)
        return None

    def container(item: object, pad: str) -> None:  # pad: a newline and the indent of the line ``item`` ends on
        kind = type(item)
        inner = pad + " "
        if kind is dict:
            if not item:
                put("{}")
                return
            sep = "{" + inner
            for key, v in item.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    raise _NotPlainJson
                kind = type(v)  # the usual values here, not through scalar: a listing has millions of them
                text = string(v) if kind is str else int.__repr__(v) if kind is int else scalar(v)
                if text is None:
                    put(f"{sep}{string(key)}: ")
                    container(v, inner)
                else:
                    put(f"{sep}{string(key)}: {text}")
                sep = "," + inner
            put(pad + "}")
        elif kind is list or kind is tuple:
            if not item:
                put("[]")
                return
            sep = "[" + inner
            for v in item:  # type: ignore[attr-defined]
                text = scalar(v)
                if text is None:
                    put(sep)
                    container(v, inner)
                else:
                    put(sep + text)
                sep = "," + inner
            put(pad + "]")
        else:
            raise _NotPlainJson

    try:
        text = scalar(value)
        if text is not None:
            return text
        container(value, "\n")
    except (_NotPlainJson, RecursionError):
        return json.dumps(value, indent=1)
    return "".join(parts)


_INF = float("inf")


@contextlib.contextmanager
def escaping_streams() -> Iterator[None]:
    """While inside, standard output and error write what their encoding cannot hold as ``\\xe9``, ``\\u4e2d``.

    A name of non-ASCII letters is printable, so :func:`shown` leaves it as it is; on a stream whose
    encoding cannot hold it (``PYTHONIOENCODING=ascii``, a Latin-1 locale) Python's default ``strict``
    errors raised ``UnicodeEncodeError`` in the middle of a table. Streams that already say how (standard
    error's ``backslashreplace``) or that cannot be reconfigured are left alone; the old setting is back
    afterwards (``main`` called from a program).

    Examples
    --------
    >>> import io, sys
    >>> out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    >>> sys.stdout, saved = out, sys.stdout
    >>> with escaping_streams():
    ...     print("kérnel")
    >>> sys.stdout = saved
    >>> out.buffer.getvalue()
    b'k\\\\xe9rnel\\n'
    """
    changed = []
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and callable(getattr(stream, "reconfigure", None)):
            with contextlib.suppress(Exception):  # a stream already written to in another encoding, say
                stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
                changed.append(stream)
    try:
        yield
    finally:
        for stream in changed:
            with contextlib.suppress(Exception):
                stream.reconfigure(errors="strict")  # type: ignore[union-attr]


def _encodable(text: str, encoding: str | None) -> str:
    """``text`` as ``encoding`` can write it: what it cannot is escaped (``\\xe9``), so widths stay right."""
    if not encoding:
        return text
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text


def table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], out: TextIO | None = None, *, wide: bool = False
) -> None:
    """A table: rich's when it is installed and ``out`` is a terminal, plain aligned text otherwise.

    Every cell goes through :func:`shown`; rich gets plain ``Text``, so ``[bold]`` or ``[link=...]`` in
    a cell is printed as written. ``None`` is an empty cell. Cells are never cut: rich wraps them to the
    terminal's width; plain text (and ``wide=True``) keeps each row on one line, however long. A plain
    column is padded to its longest cell up to :data:`MAX_PAD` characters: a longer cell is written whole and
    unpadded, so one long name costs its own length, not that length on every row.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> table(["name", "n"], [("x" * 1000, 1), ("y", 2)], out)
    >>> [len(line) for line in out.getvalue().splitlines()] == [MAX_PAD + 3, MAX_PAD + 3, 1003, MAX_PAD + 3]
    True
    """
    out = out or sys.stdout
    encoding = getattr(out, "encoding", None)
    # cells that are all str (what a large listing passes) are taken as they are; otherwise str and int cells as
    # they are, others through shown. Then one test of all the text for anything to escape or that the output
    # cannot encode, not one per cell: a large library's listing has 200,000 cells
    if not isinstance(rows, (list, tuple)):
        rows = list(rows)
    cells: Sequence[Sequence[str]]
    try:
        joined = "".join(["".join(row) for row in rows])  # type: ignore[arg-type]  # TypeError: not all str
        cells = rows  # type: ignore[assignment]
    except TypeError:
        cells = [[c if type(c) is str else "" if c is None else str(c) if type(c) is int else shown(c) for c in row]
                 for row in rows]  # fmt: skip
        joined = "".join(["".join(row) for row in cells])
    if not joined.isprintable():
        cells = [[shown(c) for c in row] for row in cells]  # shown leaves printable text (an escape too) as it is
        joined = "".join(["".join(row) for row in cells])
    if _encodable(joined, encoding) is not joined:
        cells = [[_encodable(c, encoding) for c in row] for row in cells]
    if out.isatty() and not wide:
        try:
            from rich.console import Console
            from rich.table import Table
            from rich.text import Text

            grid = Table(*headers)
            for row in cells:
                grid.add_row(*(Text(c) for c in row))
            Console(file=out, markup=False, emoji=False, highlight=False).print(grid)
            return
        except ImportError:
            pass
    odd = set(map(len, cells)) - {len(headers)}
    if odd:
        raise ValueError(f"a row of {odd.pop()} cells in a table of {len(headers)} columns")
    # each column as wide as its longest cell, up to MAX_PAD: the output stays linear in the cells' length. (Not
    # zip(*cells): an iterator per row, which can set off a garbage collection of everything a listing holds.)
    widths = [
        max(len(h), min(MAX_PAD, max(map(len, map(itemgetter(i), cells)), default=0))) for i, h in enumerate(headers)
    ]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    line = "  ".join(f"%-{w}s" for w in widths)  # one format per row, not one call per cell
    lines += [(line % (r if type(r) is tuple else tuple(r))).rstrip() for r in cells]
    out.write("\n".join(lines) + "\n")
