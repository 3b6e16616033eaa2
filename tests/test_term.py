# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Terminal text (cuda_fatbin._term): what reaches a terminal from input is escaped, tables never read markup.

The promise is docs/security.md's: no raw control character on the terminal. The escapes are Python's own
spellings (``\\n``, ``\\x1b``, ``\\u202e``, ``\\U000e0001``), so that a name shown can be typed back.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda_fatbin._term import MAX_PAD, shown, table


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sm_90 café 内核", "sm_90 café 内核"),  # printable, non-ASCII letters included: unchanged
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x00\x1b[31m\x7f", "\\x00\\x1b[31m\\x7f"),
        ("\x85\x9f\xa0\xad", "\\x85\\x9f\\xa0\\xad"),  # C1 controls, no-break space, soft hyphen
        ("\u202eevil\u200b", "\\u202eevil\\u200b"),  # bidi override, zero-width space
        ("\u2028\u2029\ue000", "\\u2028\\u2029\\ue000"),  # line/paragraph separators, private use
        ("\U000e0001\U0010ffff", "\\U000e0001\\U0010ffff"),  # a tag character, a non-character
        ("x\udcff\udc80y", "x\\xff\\x80y"),  # bytes that were not UTF-8 in a file name
        ("\ud800\udd00", "\\ud800\\udd00"),  # lone surrogates that are not surrogateescape's
        ("\uffff\U00010000", "\\uffff\U00010000"),  # a non-character; the first printable beyond 16 bits
        (b"caf\xc3\xa9 \xff.so", "café \\xff.so"),
        (bytearray(b"\x1b"), "\\x1b"),
        (42, "42"),
        (None, "None"),
    ],
)
def test_shown_escapes_exactly_what_is_not_printable(text, expected):
    assert shown(text) == expected
    assert shown(text).isprintable()


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_table_is_aligned_and_one_row_a_line():
    out = io.StringIO()
    table(["name", "n"], [["a\nb", 1], ["long name here", None]], out)
    assert out.getvalue() == (
        "name            n\n"
        "--------------  -\n"
        "a\\nb            1\n"
        "long name here\n"
    )  # fmt: skip


def test_plain_table_without_rows_has_its_headers():
    out = io.StringIO()
    table(["kind", "arch"], [], out)
    assert out.getvalue() == "kind  arch\n----  ----\n"


def test_plain_table_goes_to_stdout_by_default(capsys):
    table(["h"], [["v"]])
    assert capsys.readouterr().out == "h\n-\nv\n"


def test_a_terminal_gets_rich_text_with_markup_and_escapes_shown_as_written():
    import rich  # noqa: F401  (the cli extra is part of the test extra)

    out = Tty()
    table(["name [s] :smile: 9.0"], [["[bold]x[/bold] :smile: \x1b[2J"]], out)
    text = out.getvalue()
    assert "[bold]x[/bold] :smile: \\x1b[2J" in text
    head = next(line for line in text.splitlines() if "name" in line)
    assert "name [s] :smile: 9.0" in head  # headers: no markup, no emoji, no highlighting (of 9.0)
    row = next(line for line in text.splitlines() if "[bold]x" in line)
    assert "\x1b" not in row  # the cell's escape is shown, and rich styled nothing in it (no markup, emoji)
    assert "─" in text or "━" in text  # rich's box, not the plain layout's dashes


def test_wide_keeps_the_plain_layout_on_a_terminal():
    out = Tty()
    table(["name"], [["x" * 300]], out, wide=True)
    assert out.getvalue() == "name\n" + "-" * MAX_PAD + "\n" + "x" * 300 + "\n"  # whole, on one line


def test_a_row_longer_than_the_headers_is_refused_not_cut():
    with pytest.raises(ValueError):
        table(["a"], [["x", "y"]], io.StringIO())


@pytest.fixture(scope="module")
def non_ascii_fatbin(tmp_path_factory):
    from pathlib import Path

    from cuda_fatbin import Part, build_fatbin

    cubin = (Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin").read_bytes()
    folder = tmp_path_factory.mktemp("names")
    (folder / "k.fatbin").write_bytes(build_fatbin([Part(cubin, kind="cubin", arch="sm_80", identifier="kérnel中.cu")]))
    return folder


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("command", [["inspect", "k.fatbin"], ["inspect", "k.fatbin", "--wide"],
                                     ["which", "k.fatbin", "--gpu", "80"], ["extract", "k.fatbin", "-o", "{out}"],
                                     ["scan", ".", "--gpu", "80"], ["inspect", "kérnel中.fatbin"]])  # fmt: skip
def test_names_the_output_encoding_cannot_hold_are_escaped_never_a_crash(non_ascii_fatbin, tmp_path, encoding, command):
    """A non-ASCII identifier on an ASCII standard output: UnicodeEncodeError in the middle of the table, exit 2."""
    import os
    import subprocess
    import sys

    args = [a.format(out=tmp_path / "out") for a in command]
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", *args], capture_output=True, cwd=non_ascii_fatbin,
                         env=env, timeout=120)  # fmt: skip
    text = res.stdout + res.stderr
    assert b"UnicodeEncodeError" not in text and b"Traceback" not in text, text
    escaped = b"k\\xe9rnel\\u4e2d" if encoding == "ascii" else "kérnel\\u4e2d".encode("latin-1")
    if command[-1] == "kérnel中.fatbin":  # the name of a file that is not there, in the error message
        assert res.returncode == 1 and escaped + b".fatbin: No such file" in res.stderr
        return
    assert res.returncode == 0, text
    if command[0] in ("inspect", "extract"):
        assert escaped in res.stdout
    if command[0] == "inspect":  # the table stays aligned: widths count the escapes
        lines = res.stdout.decode(encoding).splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("fatbin"))
        assert len(lines[head + 1]) == len(lines[head + 2])


def test_escaping_streams_puts_the_old_setting_back():
    import sys

    from cuda_fatbin._term import escaping_streams

    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    saved, sys.stdout = sys.stdout, out
    try:
        with escaping_streams():
            assert out.errors == "backslashreplace"
            print("中")
        assert out.errors == "strict"
    finally:
        sys.stdout = saved
    assert out.buffer.getvalue() == b"\\u4e2d\n"


def test_json_names_marks_each_list_item_that_is_not_unicode_and_only_those():
    """A list of names, some plain and some not (`extract`'s `written`): `X_bytes` is null where plain."""
    import json
    from urllib.parse import unquote_to_bytes

    from cuda_fatbin._term import json_names

    doc = json_names({"written": ["a.cubin", "b\udcff%.cubin", "c.ptx"], "files": [{"path": "d\udce9"}, {"path": "e"}]})
    text = json.dumps(doc, ensure_ascii=False).encode("utf-8")  # strict UTF-8: no lone surrogate left
    assert json.loads(text) == doc
    assert doc["written"] == ["a.cubin", "b\ufffd%.cubin", "c.ptx"]
    assert doc["written_bytes"] == [None, "b%FF%25.cubin", None]
    assert unquote_to_bytes(doc["written_bytes"][1]) == b"b\xff%.cubin"
    assert doc["files"] == [{"path": "d\ufffd", "path_bytes": "d%E9"}, {"path": "e"}]


# -- tables of many rows, and JSON written at once ------------------------------------------------------------

# names as inputs give them: control characters, non-ASCII letters, bytes that were not UTF-8 (surrogateescape),
# astral characters (a surrogate pair in JSON's escapes) and lone surrogates
_NAMES = st.lists(st.sampled_from(["a", " ", "%", "é", "中", "\x1b", "\n", "\u202e", "\udcff", "\ud800", "\U0001f600",
                                    "\\", '"', "ud83d"]), max_size=8).map("".join)  # fmt: skip
_ARCHS = st.sampled_from([50, 90, 100]).map(lambda sm: __import__("cuda_fatbin").Arch.parse(sm))
_CELLS = st.one_of(_NAMES, st.integers(-(10**20), 10**20), st.none(), st.binary(max_size=4), _ARCHS)


def _cell_text(cell: object) -> str:
    """A cell as ``table`` documents it: ``None`` empty, text and ints as they are, anything else through shown."""
    return "" if cell is None else cell if isinstance(cell, str) else str(cell) if type(cell) is int else shown(cell)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(_CELLS, min_size=n, max_size=n), max_size=6)),
       st.sampled_from([None, "ascii", "latin-1"]))  # fmt: skip
def test_a_table_of_text_rows_is_the_table_of_the_cells_they_show(rows, encoding):
    """Rows of ``str`` cells only (a large listing's) take the fast path: the same table, escapes and all."""
    headers = [f"h{i}" for i in range(len(rows[0]) if rows else 1)]

    def written(given: list[object]) -> str:
        out = io.TextIOWrapper(io.BytesIO(), encoding=encoding or "utf-8", newline="\n")
        table(headers, given, out)  # type: ignore[arg-type]
        out.flush()
        return out.buffer.getvalue().decode(encoding or "utf-8")  # type: ignore[attr-defined,no-any-return]

    as_text = [tuple(_cell_text(c) for c in row) for row in rows]
    assert written(as_text) == written(rows) == written([list(r) for r in as_text])  # type: ignore[arg-type]
    assert all(line.isprintable() for line in written(as_text).splitlines())


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), _NAMES),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple), st.dictionaries(_NAMES, inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_json_text_is_json_dumps_indented_by_one(value):
    """The outside oracle: the standard library's text, byte for byte (NaN, infinities, surrogates, tuples...)."""
    import json

    from cuda_fatbin._term import json_text

    assert json_text(value) == json.dumps(value, indent=1)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_NAMES, _JSON, max_size=4))
def test_a_json_document_is_the_text_of_its_names_made_unicode(doc):
    """``--json`` output: ``json.dumps(json_names(doc), indent=1)`` whether or not a string held a surrogate."""
    import contextlib
    import json

    from cuda_fatbin._cli._common import _print_json
    from cuda_fatbin._term import json_names

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _print_json(doc)
    assert out.getvalue() == json.dumps(json_names(doc), indent=1) + "\n"


def test_json_text_leaves_other_values_to_json_with_its_errors():
    import json

    from cuda_fatbin._term import json_text

    keyed = {1: "a", 2.5: [True], None: {}, False: 0}  # keys json turns into strings
    assert json_text(keyed) == json.dumps(keyed, indent=1)

    class Size(int):
        pass

    assert json_text({"size": Size(3), "list": [Size(4)]}) == json.dumps({"size": Size(3), "list": [Size(4)]}, indent=1)
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text({"a": loop})
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_text({"a": [object()]})
    with pytest.raises(TypeError, match="keys must be"):
        json_text({(1, 2): "tuple key"})
    deep: list[object] = []
    for _ in range(50_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        json.dumps(deep, indent=1)
    with pytest.raises(RecursionError):
        json_text(deep)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_NAMES, st.one_of(_NAMES, st.integers(), st.none(), st.lists(_NAMES, max_size=3)), max_size=5))
def test_json_names_gives_unicode_and_the_exact_bytes_beside_each_name_that_was_not(doc):
    """Its promise, checked by the standard library: strict UTF-8 text, and ``X_bytes`` percent-decodes to X's bytes."""
    import json
    from urllib.parse import unquote_to_bytes

    from cuda_fatbin._term import json_names

    def raw(text: str) -> bytes:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "surrogatepass")

    def unicode(text: str) -> bool:
        try:
            text.encode("utf-8")
            return True
        except UnicodeEncodeError:
            return False

    out = json_names(doc)
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # strict: no surrogate left anywhere
    for key, value in doc.items():
        if not unicode(key):
            continue  # a key is made Unicode; its bytes are not kept (json_names' docstring)
        if isinstance(value, str):
            assert out[key] == (value if unicode(value) else raw(value).decode("utf-8", "replace"))
            if unicode(value):
                assert f"{key}_bytes" not in out or f"{key}_bytes" in doc
            else:
                assert unquote_to_bytes(out[f"{key}_bytes"]) == raw(value)
        elif isinstance(value, list) and not all(map(unicode, value)):
            assert [None if b is None else unquote_to_bytes(b) for b in out[f"{key}_bytes"]] == [
                None if unicode(v) else raw(v) for v in value
            ]
        elif not isinstance(value, list):
            assert out[key] == value
