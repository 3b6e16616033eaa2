# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Terminal text (cuda_fatbin._term): what reaches a terminal from input is escaped, tables never read markup.

The promise is docs/security.md's: no raw control character on the terminal. The escapes are Python's own
spellings (``\\n``, ``\\x1b``, ``\\u202e``, ``\\U000e0001``), so that a name shown can be typed back.
"""

from __future__ import annotations

import io

import pytest

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
