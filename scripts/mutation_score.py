# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Mutation score per module from mutmut's results, less the mutants recorded as equivalent.

    python scripts/mutation_score.py [--min 90] [--survivors] [--module _driver ...]

Equivalent mutants (a change no test can observe) are listed in ``tests/mutation/equivalent.toml`` by
function and mutated line, with the reason; an entry that matches no surviving mutant is reported as
stale. Score = (killed + timeout + suspicious) / (mutants - equivalent): mutants no test reaches count as
surviving; a mutant whose test process crashed (mutmut's "segfault": a ctypes call given a wrong argument)
is caught. mutmut calls a mutant "suspicious" when its test process died instead of failing: here, the
mutants that stop guarding a mapped file against shrinking, whose test then dies of SIGBUS — caught.
"""

from __future__ import annotations

import argparse
import collections
import functools
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
# every module mutmut mutates (pyproject.toml, [tool.mutmut]): the package's private modules, and its private
# packages (_cli) counted as one
MODULES = sorted(
    p.stem
    for p in (ROOT / "src" / "cuda_fatbin").glob("_*")
    if not p.stem.startswith("__") and (p.suffix == ".py" or (p / "__init__.py").is_file())
)


def results() -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found = {}
    for line in out.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name.startswith("cuda_fatbin."):
            found[name] = status
    return found


@functools.cache
def added(name: str) -> str:
    """The lines a mutant adds, as ``mutmut show`` prints its diff."""
    diff = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name], cwd=ROOT, capture_output=True, text=True
    ).stdout
    return "\n".join(line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=float, default=None, help="exit 1 if a module scores below this")
    parser.add_argument("--survivors", action="store_true", help="list the surviving mutants")
    parser.add_argument("--module", action="append", choices=MODULES, default=[],
                        help="only this module (repeatable; default: every module)")  # fmt: skip
    args = parser.parse_args()
    modules = args.module or MODULES
    status = results()
    listed = tomllib.loads((ROOT / "tests" / "mutation" / "equivalent.toml").read_text()).get("equivalent", [])
    equivalent, stale = set(), []
    left = {name for name, st in status.items() if st in ("survived", "no tests")}
    for item in listed:
        function, line = item["function"], item["line"]
        matches = [n for n in sorted(left) if n.startswith(function + "__mutmut_") and line in added(n)]
        pending = any(n.startswith(function + "__mutmut_") and st == "not checked" for n, st in status.items())
        if not matches and not pending and function.split(".")[1] in modules:
            stale.append(f"{function}: no surviving mutant adds {line!r} (killed, or the code changed)")
        equivalent.update(matches)
    counts: dict[str, collections.Counter[str]] = {m: collections.Counter() for m in modules}
    survivors = []
    for name, st in status.items():
        module = name.split(".")[1]
        if module not in modules:
            continue
        if name in equivalent:
            st = "equivalent"
        counts[module][st] += 1
        if st in ("survived", "no tests"):
            survivors.append(f"{name}: {st}")
    print(f"{'module':12} {'mutants':>8} {'killed':>7} {'survived':>9} {'no tests':>9} {'equivalent':>11} {'score':>7}")
    low = []
    for module in modules:
        c = counts[module]
        total = sum(c.values())
        if not total:
            print(f"{module:12} {'-':>8}  (no mutants: not run yet)")
            low.append(module)
            continue
        killed = c["killed"] + c["timeout"] + c["suspicious"] + c["segfault"]
        judged = total - c["equivalent"]
        score = 100.0 * killed / judged if judged else 100.0
        unchecked = total - killed - c["survived"] - c["no tests"] - c["equivalent"]
        note = f"  ({unchecked} not checked)" if unchecked else ""
        print(f"{module:12} {total:8} {killed:7} {c['survived']:9} {c['no tests']:9} {c['equivalent']:11} "
              f"{score:6.1f}%{note}")  # fmt: skip
        if args.min is not None and score < args.min:
            low.append(module)
    for line in stale:
        print(f"stale equivalent entry: {line}", file=sys.stderr)
    if args.survivors:
        print("\n".join(sorted(survivors)))
    return 1 if low or stale else 0


if __name__ == "__main__":
    sys.exit(main())
