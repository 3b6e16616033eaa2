# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Mutation testing of one module with mutmut: run its mutants, then list those no test caught.

    pip install "mutmut==3.8.1"
    python scripts/mutation.py _select          # _select's mutants, then the survivors (exit 1 if any)
    python scripts/mutation.py _select --list   # the survivors of the last run, running nothing
    python -m mutmut show NAME                  # one survivor's diff

Optional and slow (minutes for a small module, about an hour for _program on 2 cores); not in CI.
mutmut's configuration: ``[tool.mutmut]`` in pyproject.toml. Each run starts from a fresh ``mutants/`` copy,
so that no verdict rests on an older source.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "cuda_fatbin"
MODULES = sorted(p.stem for p in PACKAGE.glob("_*") if not p.stem.startswith("__") and p.suffix in (".py", ""))
# mutmut started by `-c`, not `-m mutmut`: a test's process pool started with "spawn" imports the main module
# again, and mutmut's would read its configuration from that test's working folder
_RUN = "import sys; from mutmut.__main__ import cli; sys.argv[0] = 'mutmut'; cli()"


def survivors(module: str) -> list[str]:
    """``name: status`` of each mutant of ``module`` that no test caught (a timeout or a crash counts as caught)."""
    out = subprocess.run([sys.executable, "-c", _RUN, "results"], cwd=ROOT, capture_output=True, text=True, check=True)
    prefix = f"cuda_fatbin.{module}."
    lines = [line.strip() for line in out.stdout.splitlines()]
    return [line for line in lines if line.startswith(prefix) and line.endswith((": survived", ": no tests"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", choices=MODULES, help="the module to mutate (_cli: the CLI package)")
    parser.add_argument("--list", action="store_true", help="list the last run's survivors, run nothing")
    args = parser.parse_args()
    if not args.list:
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
        subprocess.run([sys.executable, "-c", _RUN, "run", f"cuda_fatbin.{args.module}.*"], cwd=ROOT, check=True)
    left = survivors(args.module)
    print("\n".join(left) if left else f"every mutant of {args.module} was caught")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
