#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Write the option tables of docs/cli.md ("Options, command by command") from the command's own parser.

Each command gets its help line and one table row per argument: the spellings, what it takes (its
metavar or choices, whether it is required or repeatable), its default where it is not empty, and its help.
The tables are what ``cuda-fatbin COMMAND --help`` shows, in a form that does not depend on the
terminal's width or on the Python version's help layout.

Run it again after changing an option: ``python scripts/cli-reference.py`` (tests/test_cli.py checks
that docs/cli.md holds what this script writes now).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
BEGIN = "<!-- options: written by scripts/cli-reference.py -->"
END = "<!-- options: end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _takes(action: argparse.Action) -> str:
    notes = []
    if action.nargs == 0:
        what = "flag"
        if isinstance(action, argparse._StoreConstAction) and action.const is not True:  # store_false
            notes.append(f"sets `{action.dest}` to `{action.const!r}`")
    elif action.choices is not None:
        what = "one of " + ", ".join(f"`{c}`" for c in action.choices)
    else:
        metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        what = f"`{metavar}`" + {"*": " ...", "+": " ... (one or more)"}.get(str(action.nargs), "")
        if action.nargs == "?":
            notes.append(f"optional; alone: `{action.const!r}`")
    if action.required and action.option_strings:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    d = action.default
    if not (d is None or d is argparse.SUPPRESS or d == [] or (action.nargs == 0 and isinstance(d, bool))):
        notes.append(f"default: `{d!r}`")
    return what + (f" ({', '.join(notes)})" if notes else "")


def _rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | takes | what |", "|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}`"
        rows.append(f"| {name} | {_cell(_takes(action))} | {_cell(action.help or '')} |")
    return rows


def reference(parser: argparse.ArgumentParser) -> str:
    """The section's text for ``parser`` (the cuda-fatbin parser): the top level, then each command."""
    lines = [BEGIN, "", f"`{parser.prog}`: {parser.description}", "", *_rows(parser)]
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in subs._choices_actions}
    for name, sub in subs.choices.items():
        lines += ["", f"### `{parser.prog} {name}`", "", _cell(helps.get(name) or ""), "", *_rows(sub)]
    return "\n".join([*lines, "", END])


def updated(text: str, section: str) -> str:
    """``text`` (docs/cli.md) with the section between the markers replaced by ``section``."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + section + text[end:]


def main() -> int:
    sys.path.insert(0, str(DOC.parent.parent / "src"))
    from cuda_fatbin._cli import build_parser
    from cuda_fatbin._files import write_atomic

    text = DOC.read_text(encoding="utf-8")
    new = updated(text, reference(build_parser()))
    if new != text:
        write_atomic(DOC, new.encode("utf-8"))
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
