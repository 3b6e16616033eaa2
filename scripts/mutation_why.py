# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Which tests kill a mutant, and do they pass without it: ``python scripts/mutation_why.py NAME... [--out F]``.

Run in the mutation clone, after mutmut made ``mutants/`` and its test mapping. For each named mutant it runs,
in ``mutants/`` as mutmut does, the tests mutmut maps to the mutant's function twice: unmutated, then with
the mutant (``MUTANT_UNDER_TEST``), with the options of ``[tool.mutmut]`` and any deselections in
``PYTEST_ADDOPTS``; it prints the tests that failed in each run. A test that also fails unmutated, run as
this subset, kills the mutant for another reason: that is how a kill of a mutant recorded as equivalent
(``scripts/mutation_merge.py`` refuses such a run) is explained, on the machine that made it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


def failed(name: str, tests: list[str], args: list[str]) -> tuple[int, list[str]]:
    """pytest's exit code and the tests that failed, with ``MUTANT_UNDER_TEST`` set to ``name``."""
    env = dict(os.environ, MUTANT_UNDER_TEST=name)
    env["PYTHONPATH"] = os.pathsep.join(p for p in ("src", env.get("PYTHONPATH", "")) if p)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "-rfE", "-p", "no:cacheprovider", *tests],
        cwd="mutants",
        env=env,
        capture_output=True,
        text=True,
    )
    found = re.findall(r"^(?:FAILED|ERROR) (\S+)", run.stdout, re.M)
    return run.returncode, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help="mutant names, as mutmut prints them")
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    config = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]
    pytest_args = list(config.get("pytest_add_cli_args", []))
    mapping = json.loads(Path("mutants/mutmut-stats.json").read_text())["tests_by_mangled_function_name"]
    lines = []
    for name in args.names:
        tests = sorted(mapping.get(name.rpartition("__mutmut_")[0], []))
        if not tests:
            lines.append(f"{name}: no test reaches it")
            continue
        code0, plain = failed("", tests, pytest_args)
        code1, mutated = failed(name, tests, pytest_args)
        block = [f"{name}: {len(tests)} tests; unmutated exit {code0}, mutated exit {code1}"]
        block += [f"  fails unmutated too: {t}" for t in plain]
        block += [f"  fails with the mutant: {t}" for t in mutated if t not in plain]
        print("\n".join(block), flush=True)
        lines += block
    if args.out:
        args.out.write_text("".join(f"{line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
