# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Keep the kills of a mutation run made elsewhere (scripts/mutation_device.sh), list what is left to run here.

    python scripts/mutation_merge.py META_TGZ [--module _cli ...] [--left FILE]
    python scripts/mutation_merge.py tests/mutation/kills [--module ...]   # kills recorded by an earlier session
    python scripts/mutation_merge.py --save tests/mutation/kills [--module ...]  # record this clone's kills

Run in the mutation clone whose ``mutants/`` was packed. A verdict is taken only for a function whose source
hash (mutmut's ``hash_by_function_name``) is the same on both sides, and only a kill: mutmut's "killed",
"segfault" or "suspicious" (the test process failed or died). A mutant the other machine saw survive, time
out (its cores were all busy), find no test or not reach keeps this clone's verdict; every mutant of the
merged modules without a kill goes to ``--left`` (default ``mutants/left.txt``), one per line, for
``mutmut run`` on this machine: the two machines' environments differ (a test skipped there for want of a
library runs here).

With ``--failures`` (the run's failures.tsv, written by tests/conftest.py) a kill is taken only where a test is
recorded failing against that mutant: a verdict the packed meta already held, or a test process that died
without a failing test, is not a kill made there.

A kill of a mutant that ``tests/mutation/equivalent.toml`` records as equivalent (no test can tell it from
the original) means the run there failed tests for another reason: the merge then takes nothing and exits 1.
(It caught a run whose test cache held fixture values a mutant had made: tests/fatbin_testing.py.)

A checkout is new each session, and a mutation clone with it: ``--save DIR`` writes the kills of this clone
(``DIR/<module>.json``: per function its source hash and the numbers of its killed mutants, with the commit),
and a later session merges them back from that folder as from a meta.tgz, for functions whose source is
unchanged. So a module too slow for one session is run from scratch on one source across several; a changed
function's kills are dropped with its hash. A restored kill has mutmut's code 1 ("killed").
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

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


def _added_lines(mutated_module: Path, names: set[str]) -> dict[str, str]:
    """The lines each named mutant adds to its function, as ``mutmut show`` prints them (from mutants/src)."""
    text = mutated_module.read_text()
    tree, lines = ast.parse(text), text.splitlines()
    bodies: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bodies[node.name] = lines[node.lineno : node.end_lineno]  # without the def line
    out = {}
    for key in names:
        function, _, number = key.rpartition(".")[2].rpartition("__mutmut_")
        orig, mutant = bodies.get(f"{function}__mutmut_orig"), bodies.get(f"{function}__mutmut_{number}")
        if orig is not None and mutant is not None:
            diff = difflib.ndiff(orig, mutant)
            out[key] = "\n".join("+" + line[1:] for line in diff if line.startswith("+ "))
    return out


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5]`` as ``"1-3,5"``."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in out)


def _numbers(text: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


def save_kills(folder: Path, modules: list[str]) -> None:
    """Write the kills of this clone's metas to ``folder/<module>.json``."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    folder.mkdir(parents=True, exist_ok=True)
    for meta in sorted(Path("mutants/src/cuda_fatbin").glob("_*.py.meta")):
        module = meta.name.removesuffix(".py.meta")
        if modules and module not in modules:
            continue
        doc = json.loads(meta.read_text())
        kills: dict[str, list[int]] = {}
        for key, code in doc["exit_code_by_key"].items():
            function, _, number = key.rpartition(".")[2].rpartition("__mutmut_")
            if is_kill(code):
                kills.setdefault(function, []).append(int(number))
        record = {
            "commit": commit,
            "functions": {
                fn: {"hash": doc["hash_by_function_name"][fn], "killed": _ranges(kills[fn])} for fn in sorted(kills)
            },
        }
        target = folder / f"{module}.json"
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        tmp.replace(target)
        print(f"{module}: {sum(len(v) for v in kills.values())} kills recorded in {target}")


def _recorded(folder: Path) -> list[tuple[str, bytes]]:
    """The records of ``folder`` as (meta name, meta JSON) pairs, in the form a meta.tgz holds."""
    out = []
    for path in sorted(folder.glob("_*.json")):
        module = path.stem
        record = json.loads(path.read_text())
        codes, hashes = {}, {}
        for fn, entry in record["functions"].items():
            hashes[fn] = entry["hash"]
            for n in _numbers(entry["killed"]):
                codes[f"cuda_fatbin.{module}.{fn}__mutmut_{n}"] = 1
        doc = {"exit_code_by_key": codes, "hash_by_function_name": hashes}
        out.append((f"mutants/src/cuda_fatbin/{module}.py.meta", json.dumps(doc).encode()))
    return out


def equivalents_killed(module: str, kills: set[str]) -> list[str]:
    """The killed mutants of ``module`` that the equivalent list says no test can kill."""
    listed = tomllib.loads(Path("tests/mutation/equivalent.toml").read_text()).get("equivalent", [])
    entries = [e for e in listed if e["function"].split(".")[1] == module]
    suspects = {k for k in kills if any(k.startswith(e["function"] + "__mutmut_") for e in entries)}
    if not suspects:
        return []
    added = _added_lines(Path("mutants/src/cuda_fatbin") / f"{module}.py", suspects)
    return sorted(
        f"{k}: {e['line']!r}"
        for k in suspects
        for e in entries
        if k.startswith(e["function"] + "__mutmut_") and e["line"] in added.get(k, "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metas", type=Path, nargs="?", help="the meta.tgz the other machine returned, or a "
                        "folder of kills recorded with --save")  # fmt: skip
    parser.add_argument("--module", action="append", default=[], help="only this module (repeatable)")
    parser.add_argument("--left", type=Path, default=Path("mutants/left.txt"))
    parser.add_argument("--failures", type=Path, help="the failures.tsv of that run: a kill is taken only where it "
                        "names a test that failed against the mutant")  # fmt: skip
    parser.add_argument("--save", type=Path, help="record this clone's kills in this folder, after any merge")
    args = parser.parse_args()
    if args.metas is None:
        if args.save is None:
            parser.error("give a meta.tgz or folder to merge, or --save")
        save_kills(args.save, args.module)
        return 0
    explained: set[str] | None = None
    if args.failures:  # MUTANT \t test \t phase \t reason, one line per failing test (tests/conftest.py)
        explained = {line.split("\t", 1)[0] for line in args.failures.read_text().splitlines() if "\t" in line}
    left: list[str] = []
    merged: list[tuple[Path, dict, dict[str, int], str]] = []
    if args.metas.is_dir():
        members = _recorded(args.metas)
    else:
        with tarfile.open(args.metas) as tar:
            members = []
            for member in tar.getmembers():
                f = tar.extractfile(member) if member.isfile() else None
                if f is not None:
                    members.append((member.name, f.read()))
    for name, raw in members:
        if not (name.startswith("mutants/src/") and name.endswith(".py.meta")):
            continue
        module = Path(name).name.removesuffix(".py.meta")
        if args.module and module not in args.module:
            continue
        ours = Path(name)
        if not ours.is_file():
            print(f"{name}: not in this clone's mutants/, skipped", file=sys.stderr)
            continue
        mine = json.loads(ours.read_text())
        theirs = _load_meta(raw, mine, name)
        same = {fn for fn, h in mine["hash_by_function_name"].items() if theirs["hash_by_function_name"].get(fn) == h}
        taken, unexplained = {}, 0
        for key, code in theirs["exit_code_by_key"].items():
            function = key.rpartition("__mutmut_")[0].rpartition(".")[2]
            if function in same and is_kill(code) and not is_kill(mine["exit_code_by_key"].get(key, 0)):
                if explained is not None and key not in explained:
                    unexplained += 1  # a verdict carried in the packed meta, or a crash: not a test's failure
                    continue
                taken[key] = code
        if unexplained:
            print(f"{module}: {unexplained} kills without a failing test in {args.failures}, not taken")
        wrong = equivalents_killed(module, set(taken))
        if wrong:
            print(f"{module}: {len(wrong)} mutants recorded as equivalent were killed there; the run is not to be"
                  " trusted (a test failing for another reason?), nothing merged:", file=sys.stderr)  # fmt: skip
            print("\n".join(f"  {w}" for w in wrong[:20]), file=sys.stderr)
            return 1
        merged.append((ours, mine, taken, module))
    for ours, mine, taken, module in merged:
        mine["exit_code_by_key"].update(taken)
        ours.write_text(json.dumps(mine))
        rest = [k for k, c in mine["exit_code_by_key"].items() if not is_kill(c)]
        left += rest
        print(f"{module}: {len(taken)} kills taken, {len(rest)} left unchecked")
    args.left.write_text("".join(f"{n}\n" for n in left))
    print(f"{len(left)} names in {args.left}")
    if args.save:
        save_kills(args.save, args.module)
    return 0


if __name__ == "__main__":
    sys.exit(main())
