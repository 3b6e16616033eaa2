"""``mutmut run`` (3.8.1), optionally without its clean-test pass: ``SKIP_CLEAN=1 python scripts/mutmut_run.py ...``.

mutmut runs every test that reaches the named mutants once, unmutated and in one process, before the first
mutant: on a many-core machine that serial pass takes most of a 10-minute window. Skip it only where the
same suite was just seen to pass (``python -m pytest -n <cores>`` with the same deselections); a test that
fails unmutated would count every mutant it reaches as killed.
"""

from __future__ import annotations

import os
import sys

import mutmut.workers.isolation as isolation

if os.environ.get("SKIP_CLEAN") == "1":
    for _name in dir(isolation):
        _cls = getattr(isolation, _name)
        if isinstance(_cls, type) and "run_clean_tests" in vars(_cls):
            _cls.run_clean_tests = lambda self, tests: 0  # type: ignore[method-assign]

if __name__ == "__main__":  # not when a test's process started with "spawn" imports this file as its main
    from mutmut.__main__ import cli

    sys.argv[0] = "mutmut"
    cli()
