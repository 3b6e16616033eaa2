# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``mutmut run`` (3.8.1), optionally without its clean-test pass: ``SKIP_CLEAN=1 python scripts/mutmut_run.py ...``.

mutmut runs every test that reaches the named mutants once, unmutated and in one process, before the first
mutant: on a many-core machine that serial pass takes most of a 10-minute window. Skip it only where the
same suite was just seen to pass (``python -m pytest -n <cores>`` with the same deselections); a test that
fails unmutated would count every mutant it reaches as killed.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import types


# mutmut matches every mutant's key against every name given with fnmatch, and does it twice a run: with the
# ~1,000 single mutant names of a device call that was 16 million calls before the first mutant ran. A name
# without a wildcard matches only itself (mutmut checks that first), so it is answered without fnmatch.
def _fnmatch(name: str, pattern: str) -> bool:
    if "*" in pattern or "?" in pattern or "[" in pattern:
        return fnmatch.fnmatch(name, pattern)
    return name == pattern


def main() -> None:
    import mutmut.__main__ as _main
    import mutmut.workers.isolation as isolation

    if os.environ.get("SKIP_CLEAN") == "1":
        for _name in dir(isolation):
            _cls = getattr(isolation, _name)
            if isinstance(_cls, type) and "run_clean_tests" in vars(_cls):
                _cls.run_clean_tests = lambda self, tests: 0  # type: ignore[method-assign]
    vars(_main)["fnmatch"] = types.SimpleNamespace(fnmatch=_fnmatch)  # the module mutmut.__main__ uses
    sys.argv[0] = "mutmut"
    _main.cli()


# A test's process pool started with "spawn" imports this file as its main module (__mp_main__), in the test's
# working folder: nothing may happen then. Importing mutmut.__main__ there read mutmut's configuration from that
# folder, failed (each test has a folder of its own: tests/conftest.py), and every worker of the pool exited
# with status 1 while the test waited for them forever (twelfth session, test_process_pool_executor).
if __name__ == "__main__":
    main()
