# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Mutation testing: run mutmut over the package (or some modules), then print the score per module.

    pip install "mutmut==3.8.1"
    python scripts/mutation.py                        # every module; resumes (mutmut keeps its verdicts)
    python scripts/mutation.py --module _driver --module _term   # these modules' mutants, run again
    python scripts/mutation.py --fresh                # start over: drop mutants/ and the test cache
    python scripts/mutation.py --score-only --survivors   # the score of the last run, and what survived

mutmut is configured in pyproject.toml (``[tool.mutmut]``). The score of a module is
killed / (mutants - equivalent): a mutant that no test reaches counts against it, a timeout or a crashed test
process counts as caught. Equivalent mutants (a change no test can observe) are listed in
``tests/mutation/equivalent.toml``; an entry that matches no surviving mutant is reported as stale (the
mutant is killed now, or its function changed) and makes the exit status 1, as a module under ``--min`` does.
Slow (hours for the whole package on 2 cores) and not part of CI; docs/testing.md explains the figures.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import shutil
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
CAUGHT = ("killed", "timeout", "suspicious", "segfault")
_RUN = "import sys; from mutmut.__main__ import cli; sys.argv[0] = 'mutmut'; cli()"


def mutmut(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=ROOT, capture_output=True, text=True,
                          check=check)  # fmt: skip


def results() -> dict[str, str]:
    """Every mutant's status, as ``mutmut results --all true`` prints it."""
    found = {}
    for line in mutmut("results", "--all", "true").stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name.startswith("cuda_fatbin."):
            found[name] = status
    return found


@functools.cache
def added(name: str) -> str:
    """The lines a mutant adds, as ``mutmut show`` prints its diff."""
    diff = mutmut("show", name, check=False).stdout
    return "\n".join(line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))


def equivalents(status: dict[str, str], modules: list[str]) -> tuple[set[str], list[str]]:
    """The mutants listed as equivalent, and the entries that match no surviving mutant."""
    listed = tomllib.loads((ROOT / "tests" / "mutation" / "equivalent.toml").read_text()).get("equivalent", [])
    left = sorted(name for name, st in status.items() if st in ("survived", "no tests"))
    found, stale = set(), []
    for item in listed:
        function, line = item["function"], item["line"]
        if function.split(".")[1] not in modules:
            continue
        prefix = function + "__mutmut_"
        matches = [n for n in left if n.startswith(prefix) and line in added(n)]
        pending = any(n.startswith(prefix) and st == "not checked" for n, st in status.items())
        if not matches and not pending:
            stale.append(f"{function}: no surviving mutant adds {line!r} (killed now, or the code changed)")
        found.update(matches)
    return found, stale


def score(modules: list[str], minimum: float | None, survivors: bool) -> int:
    status = results()
    equivalent, stale = equivalents(status, modules)
    counts: dict[str, collections.Counter[str]] = {m: collections.Counter() for m in modules}
    left = []
    for name, st in status.items():
        module = name.split(".")[1]
        if module in counts:
            counts[module]["equivalent" if name in equivalent else st] += 1
            if name not in equivalent and st in ("survived", "no tests"):
                left.append(f"{name}: {st}")
    print(f"{'module':12} {'mutants':>8} {'killed':>7} {'survived':>9} {'no tests':>9} {'equivalent':>11} {'score':>7}")
    low = []
    for module in modules:
        c = counts[module]
        total = sum(c.values())
        if not total:
            print(f"{module:12} {'-':>8}  (no mutants: not run yet)")
            low.append(module)
            continue
        killed = sum(c[s] for s in CAUGHT)
        judged = total - c["equivalent"]
        pct = 100.0 * killed / judged if judged else 100.0
        unchecked = judged - killed - c["survived"] - c["no tests"]
        note = f"  ({unchecked} not checked)" if unchecked else ""
        print(f"{module:12} {total:8} {killed:7} {c['survived']:9} {c['no tests']:9} {c['equivalent']:11} "
              f"{pct:6.1f}%{note}")  # fmt: skip
        if minimum is not None and pct < minimum:
            low.append(module)
    for line in stale:
        print(f"stale equivalent entry: {line}", file=sys.stderr)
    if survivors:
        print("\n".join(sorted(left)))
    return 1 if low or stale else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", choices=MODULES, default=[],
                        help="only this module (repeatable; default: every module)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="mutants run at once")
    parser.add_argument("--fresh", action="store_true", help="drop every kept verdict and the test cache first")
    parser.add_argument("--score-only", action="store_true", help="print the score of the last run, run nothing")
    parser.add_argument("--survivors", action="store_true", help="list the mutants that survived")
    parser.add_argument("--min", type=float, default=None, help="exit 1 if a module scores below this")
    args = parser.parse_args()
    # compiled test inputs (NVRTC artifacts, nvcc programs) kept across mutants: tests/fatbin_testing.py
    cache = Path(os.environ.setdefault("CUDA_FATBIN_TEST_CACHE", str(ROOT / ".mutation-cache")))
    if not args.score_only:
        if args.fresh:
            shutil.rmtree(ROOT / "mutants", ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
        names = [f"cuda_fatbin.{m}.*" for m in args.module]
        # mutmut's command from `-c`, not `-m mutmut`: a test's process pool started with "spawn" imports the
        # main module of the process again, and mutmut's reads its configuration from the test's working folder
        subprocess.run([sys.executable, "-c", _RUN, "run", "--max-children", str(args.jobs), *names], cwd=ROOT)
    return score(args.module or MODULES, args.min, args.survivors)


if __name__ == "__main__":
    sys.exit(main())
