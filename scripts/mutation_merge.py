"""Keep the kills of a mutation run made elsewhere (scripts/mutation_device.sh), list what is left to run here.

    python scripts/mutation_merge.py META_TGZ [--module _cli ...] [--left FILE]

Run in the mutation clone whose ``mutants/`` was packed. A verdict is taken only for a function whose source
hash (mutmut's ``hash_by_function_name``) is the same on both sides, and only a kill: mutmut's "killed",
"segfault" or "suspicious" (the test process failed or died). A mutant the other machine saw survive, time
out (its cores were all busy), find no test or not reach keeps this clone's verdict; every mutant of the
merged modules without a kill goes to ``--left`` (default ``mutants/left.txt``), one per line, for
``mutmut run`` on this machine: the two machines' environments differ (a test skipped there for want of a
library runs here).
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path

NOT_KILLS = {None, 0, 2, 5, 33, 34, 36, 37, 24, -24, 152, 255}  # unchecked, survived, interrupted, no tests,
# skipped, timeouts (SIGXCPU), type check; mutmut calls every other code "killed", "segfault" or "suspicious"


def is_kill(code: int | None) -> bool:
    return code not in NOT_KILLS


def _load_meta(raw: bytes, mine: dict, name: str) -> dict:
    """A meta file; one cut short by the deadline (mutmut rewrites it after every verdict) keeps its verdicts.

    mutmut writes ``exit_code_by_key`` first and ``hash_by_function_name`` second: a cut file whose first
    object is whole keeps its verdicts, and is read with this clone's hashes only if its own are cut too
    (the other machine ran the mutants packed from here).
    """
    try:
        return json.loads(raw)
    except ValueError:
        text = raw.decode("utf-8", "replace")
    for cut in ('\n    "durations_by_key"', '\n    "type_check_error_by_key"', '\n    "hash_by_function_name"'):
        at = text.find(cut)
        if at < 0:
            continue
        try:
            doc = json.loads(text[:at].rstrip().rstrip(",") + "}")
        except ValueError:
            continue
        doc.setdefault("hash_by_function_name", mine["hash_by_function_name"])
        print(f"{name}: cut short; {len(doc['exit_code_by_key'])} verdict slots read", file=sys.stderr)
        return doc
    print(f"{name}: cut short before its verdicts; none taken", file=sys.stderr)
    return {"exit_code_by_key": {}, "hash_by_function_name": {}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metas", type=Path, help="the meta.tgz the other machine returned")
    parser.add_argument("--module", action="append", default=[], help="only this module (repeatable)")
    parser.add_argument("--left", type=Path, default=Path("mutants/left.txt"))
    args = parser.parse_args()
    left: list[str] = []
    with tarfile.open(args.metas) as tar:
        for member in tar.getmembers():
            name = member.name
            if not (member.isfile() and name.startswith("mutants/src/") and name.endswith(".py.meta")):
                continue
            module = Path(name).name.removesuffix(".py.meta")
            if args.module and module not in args.module:
                continue
            ours = Path(name)
            if not ours.is_file():
                print(f"{name}: not in this clone's mutants/, skipped", file=sys.stderr)
                continue
            f = tar.extractfile(member)
            assert f is not None
            mine = json.loads(ours.read_text())
            theirs = _load_meta(f.read(), mine, name)
            same = {
                fn for fn, h in mine["hash_by_function_name"].items() if theirs["hash_by_function_name"].get(fn) == h
            }
            taken = 0
            for key, code in theirs["exit_code_by_key"].items():
                function = key.rpartition("__mutmut_")[0].rpartition(".")[2]
                if function in same and is_kill(code) and not is_kill(mine["exit_code_by_key"].get(key, 0)):
                    mine["exit_code_by_key"][key] = code
                    taken += 1
            ours.write_text(json.dumps(mine))
            rest = [k for k, c in mine["exit_code_by_key"].items() if not is_kill(c)]
            left += rest
            print(f"{module}: {taken} kills taken, {len(rest)} left unchecked")
    args.left.write_text("".join(f"{n}\n" for n in left))
    print(f"{len(left)} names in {args.left}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
