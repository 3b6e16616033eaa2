# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The ``cuda-fatbin`` command: compile, build, inspect, which, extract.

``inspect``, ``which`` and ``extract`` use only the pure-Python reader and selection model: they need
no CUDA toolkit and never import cuda.core. ``compile`` and ``build`` import the compile side when
they run. Exit codes: 0 success, 1 failure (compile error, uncovered GPU, unreadable data), 2 usage.
The ``--json`` outputs are documented in docs/cli.md and versioned by their ``"schema"`` field.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Iterator, Sequence

__all__ = ["main"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: see benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn, TextIO

    from .._arch import Arch, ArchSpec
    from .._fatbin import FatbinOptions, Part
    from .._multiarch import Job
    from .._reader import Fatbin

JSON_SCHEMA = 1
_LANGS = {".cu": "c++", ".cuh": "c++", ".cpp": "c++", ".cc": "c++", ".ptx": "ptx", ".ll": "nvvm", ".bc": "nvvm",
          ".nvvm": "nvvm"}  # fmt: skip


class UsageError(Exception):
    """Bad command-line input: exit code 2."""


class Failure(Exception):
    """The command ran but did not succeed (e.g. an uncovered GPU): exit code 1."""


# -- output helpers ------------------------------------------------------------------------------------


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], out: TextIO | None = None, *, wide: bool = False
) -> None:
    from .._term import table

    table(headers, rows, out, wide=wide)


def _shown(text: object) -> str:
    from .._term import shown

    return shown(text)


_WARNING = re.compile(r"\bwarning\s*[#:]", re.IGNORECASE)  # "k.cu(3): warning #177-D: ..."


class _Warnings:
    """Compiler logs reduced to their warnings: each distinct line once, with the first job that gave it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.seen: set[str] = set()

    def write(self, text: str) -> None:
        head, _, body = text.partition("\n")
        for line in body.splitlines():
            if _WARNING.search(line) and line not in self.seen:
                self.seen.add(line)
                print(f"cuda-fatbin compile: {_shown(head.strip())} {_shown(line.strip())}", file=self.out)


class _Progress:
    """A progress line on stderr for multi-job compiles: rich's bar on a terminal, nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._bar: Any = None

    def __call__(self, done: int, total: int, job: Job) -> None:
        if not self.enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import Progress

            if self._bar is None:  # on stderr: rich's default console is stdout, which may carry the fatbin (-o -)
                self._bar = Progress(console=Console(file=sys.stderr), transient=True)
                self._bar.start()
                self._task = self._bar.add_task("compiling", total=total)
            self._bar.update(self._task, completed=done, description=str(job))
        except ImportError:
            print(f"\r[{done}/{total}] {job}".ljust(70), end="" if done < total else "\n", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _must_exist(path: str) -> None:
    """A Failure with the system's reason ("No such file or directory", "Not a directory", "Too many levels of
    symbolic links", ...) when ``path`` cannot be followed to something: before any reading or writing."""
    try:
        os.stat(path)
    except OSError as e:
        raise Failure(f"{_shown(path)}: {e.strerror or e}") from None


def _fatbins(path: str, embedded: bool = False, relocatable: bool | None = None) -> list[Fatbin]:
    from .._reader import iter_fatbins

    sources = _inputs(path) if "::" in path and not os.path.lexists(path) else [(path, path)]
    if len(sources) != 1:  # archive.whl::member, as scan prints it: one member
        raise Failure(f"{_shown(path)}: {len(sources)} members of that name; read the archive with inspect")
    source = sources[0][1]
    if isinstance(source, BaseException):
        raise Failure(f"{_shown(path)}: {getattr(source, 'strerror', None) or source}")
    if not isinstance(source, str):
        return list(iter_fatbins(source, embedded=embedded, relocatable=relocatable))
    if path != "-":
        _must_exist(path)
    try:
        return list(iter_fatbins(path, embedded=embedded, relocatable=relocatable))
    except OSError as e:
        raise Failure(f"{_shown(path)}: {e.strerror or e}") from None


def _where(fb: Fatbin) -> str:
    if fb.standalone:
        return "standalone"
    marks = "".join(f" ({m})" for m in ("relocatable", "embedded") if getattr(fb, m))
    return (f"{fb.section}@{fb.offset:#x}" if fb.section else f"@{fb.offset:#x}") + marks


def _relocatable_flag(args: argparse.Namespace) -> bool | None:
    return True if getattr(args, "relocatable", False) else None


# What a file of each suffix holds, to refuse an output name that contradicts what is written into it.
_SUFFIX_HOLDS = {".fatbin": "a fatbin", ".cubin": "a cubin", ".ptx": "PTX", ".ltoir": "LTO-IR", ".ll": "NVVM IR",
                 ".bc": "NVVM IR", ".nvvm": "NVVM IR", ".o": "an object file", ".obj": "an object file",
                 ".a": "a static library", ".lib": "a static library", ".so": "a shared library",
                 ".dll": "a shared library", ".json": "JSON", **dict.fromkeys(
                     (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp"), "source code")}  # fmt: skip
_SUFFIX_FOR = {"a fatbin": ".fatbin", "JSON": ".json"}


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one directory entry (a rename onto ``a`` would replace ``b``) or one inode.

    The folders are resolved, the last component is not: a symlink at ``a`` is replaced by an output,
    never written through, so a link to the same target is another file. A hard link (or another case on
    a case-insensitive file system) is the same inode, by ``lstat``.
    """

    def entry(p: str) -> str:
        return os.path.join(os.path.realpath(os.path.dirname(p) or "."), os.path.basename(p))

    if entry(a) == entry(b):
        return True
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except (OSError, ValueError):  # one of them does not exist (yet): not the same file
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _check_output(path: str, writes: str, flag: str, inputs: Sequence[tuple[str, str]] = ()) -> None:
    """Refuse, as a usage error and before any work, an output the command could not or should not write.

    ``-`` is standard output (a binary one is refused on a terminal); otherwise a suffix that names another
    format, a folder that does not exist, an existing directory, an existing device, FIFO or socket (the
    write would replace it with a file: ``-o /dev/null``), and a path that names one of ``inputs``
    (``(what, path)`` pairs: the source, another output) are refused.
    """
    if path == "-":
        if writes != "JSON" and sys.stdout.isatty():
            raise UsageError(f"{flag} - writes {writes} to standard output, which is a terminal: redirect it "
                             f"(> k{_SUFFIX_FOR[writes]}) or pipe it (| cuda-fatbin inspect -)")  # fmt: skip
        return
    stem, suffix = os.path.splitext(os.path.basename(path))
    holds = _SUFFIX_HOLDS.get(suffix.lower())
    if holds is not None and holds != writes:
        hint = ""
        if holds in ("a cubin", "PTX", "LTO-IR"):
            hint = "; to get single entries, run cuda-fatbin extract on the fatbin (--kind elf|ptx|ltoir)"
        raise UsageError(f"{flag} {_shown(path)}: a {suffix} file holds {holds}, but this writes {writes}; "
                         f"name it {_shown(stem)}{_SUFFIX_FOR[writes]}{hint}")  # fmt: skip
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {_shown(path)}: there is no folder {_shown(folder)}; create it first "
                         f"(mkdir -p {_shown(folder)})")  # fmt: skip
    if os.path.isdir(path):
        raise UsageError(f"{flag} {_shown(path)} is a directory; name a file in it")
    try:
        st = os.stat(path)  # through a symlink: -o /dev/null is a link on some systems
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):  # a device or FIFO would be replaced by a file
        raise UsageError(f"{flag} {_shown(path)} is not a regular file (a device, FIFO or socket); it is not "
                         "replaced: name a file, or - for standard output")  # fmt: skip
    for what, other in inputs:
        if other != "-" and _same_file(path, other):
            raise UsageError(f"{flag} {_shown(path)} is {what} ({_shown(other)}): writing it would replace what "
                             "this reads; name another file")  # fmt: skip


def _write_output(path: str, data: bytes) -> None:
    """Write an output file all at once (``_files.write_atomic``), or to standard output for ``-``."""
    from .._files import write_atomic

    if path == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        write_atomic(path, data)
    except OSError as e:
        raise Failure(
            f"cannot write {_shown(path)}: {e.strerror or e}; a file there before is left as it was"
        ) from None


# -- subcommands ---------------------------------------------------------------------------------------


def _fatbin_dict(fb: Fatbin) -> dict[str, Any]:
    entries = [{**e.as_dict(), "payload_mismatch": e.payload_mismatch} for e in fb.iter_entries()]
    return {"offset": fb.offset, "size": fb.size, "section": fb.section, "standalone": fb.standalone,
            "relocatable": fb.relocatable, "embedded": fb.embedded, "entries": entries}  # fmt: skip


def _inputs(path: str) -> list[tuple[str, Any]]:
    """What ``inspect`` reads for one argument: ``(label, source)`` pairs; an archive gives its binary members.

    ``a.whl`` (or ``.zip``) lists every member whose first bytes say ELF or fatbin; ``a.whl::member`` (the
    paths ``scan`` prints) reads that member. A member that cannot be read is a pair whose source is the
    exception.
    """
    if "::" not in path and not path.lower().endswith((".whl", ".zip")):  # _archive's SEPARATOR and SUFFIXES
        return [(path, path)]  # (not imported for a plain file: start-up time, benchmarks/bench_cli.py)
    from .._archive import NESTED, SEPARATOR, SUFFIXES, list_members, read_member, split

    archive, name = split(path) if SEPARATOR in path else (path, None)
    if name is None and not (path.lower().endswith(SUFFIXES) and os.path.isfile(path)):
        return [(path, path)]
    try:
        members = list_members(archive, head=4)
    except OSError as e:
        raise Failure(f"{_shown(archive)}: {e.strerror or e}") from None
    out: list[tuple[str, Any]] = []
    for m in members:
        if m.is_dir or (name is not None and m.name != name):
            continue
        label = f"{archive}{SEPARATOR}{m.name}"
        if name is None and not m.error and m.name.lower().endswith(SUFFIXES):  # as scan: named, not passed over
            out.append((label, OSError(errno.EINVAL, NESTED)))
            continue
        if name is None and not m.error and m.head[:4] not in (b"\x7fELF", b"\x50\xed\x55\xba"):
            continue
        try:
            out.append((label, read_member(archive, m)))
        except OSError as e:
            out.append((label, e))
    if name is not None and not out:
        raise Failure(f"{_shown(archive)}: no member named {_shown(name)}")
    return out


def cmd_inspect(args: argparse.Namespace) -> int:
    from .._reader import FatbinFormatError

    files: list[tuple[str, list[Fatbin], str | None]] = []
    failed = 0
    for arg in args.files:
        try:
            sources = _inputs(arg)
        except Failure as e:
            sources = [(arg, e)]
        if not sources:  # an archive without a binary member
            files.append((arg, [], None))
        for path, source in sources:
            try:
                if isinstance(source, BaseException):
                    raise source
                if isinstance(source, str):
                    fatbins = _fatbins(source, args.embedded, _relocatable_flag(args))
                else:
                    from .._reader import iter_fatbins

                    fatbins = list(iter_fatbins(source, embedded=args.embedded, relocatable=_relocatable_flag(args)))
                files.append((path, fatbins, None))
            except (Failure, FatbinFormatError, OSError) as e:
                failed += 1
                text = str(e) if isinstance(e, Failure) else f"{_shown(path)}: {getattr(e, 'strerror', None) or e}"
                files.append((path, [], text))
                if not args.json:
                    print(f"cuda-fatbin inspect: {_shown(text)}", file=sys.stderr)
    if args.json:
        import json

        doc: dict[str, Any] = {"schema": JSON_SCHEMA, "files": []}
        for path, fatbins, error in files:
            record = {"path": path, "fatbins": [_fatbin_dict(fb) for fb in fatbins]}
            if error is not None:
                record["error"] = error
            doc["files"].append(record)
        json.dump(doc, sys.stdout, indent=1)
        print()
        return 1 if failed else 0
    for path, fatbins, error in files:
        if error is not None:
            continue
        pairs = [(fb, e) for fb in fatbins for e in fb.iter_entries()]
        if not pairs:
            print(f"{_shown(path)}: does not contain device code\n")
            continue
        print(f"{_shown(path)}: {len(fatbins)} fatbin(s), {len(pairs)} entries\n")
        rows = [(_where(fb), e.kind, e.arch, f"{e.version[0]}.{e.version[1]}", e.size, e.stored_size or "-",
                 "in concat" if e.concatenated else e.compression, e.identifier or "") for fb, e in pairs]  # fmt: skip
        _table(["fatbin", "kind", "arch", "version", "size", "stored", "compression", "identifier"], rows,
               wide=args.wide)  # fmt: skip
        for index, (_fb, entry) in enumerate(pairs, 1):
            odd = entry.payload_mismatch
            if odd is not None:
                print(f"  warning: entry {index} ({entry.kind} {entry.arch}): {_shown(odd)}; the driver goes by the "
                      "header (docs/selection.md, rule header_mismatch)")  # fmt: skip
        size = sum(e.size for _, e in pairs)
        stored = sum(fb.size for fb in fatbins)
        kinds = collections.Counter(e.kind for _, e in pairs)
        print(f"\n  total: {', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}; {size} bytes of payload "
              f"in {stored} bytes of fatbin\n")  # fmt: skip
    return 1 if failed else 0


def cmd_which(args: argparse.Namespace) -> int:
    from .._reader import FatbinFormatError
    from .._select import UNCOVERED, coverage, judge, select_entry

    gpus = _gpus(args.gpu, args.driver)

    def failed(message: str) -> int:
        """The file could not be judged: exit 1, with a document saying why under --json."""
        if not args.json:
            raise Failure(message)
        import json

        doc = {"schema": JSON_SCHEMA, "file": args.file, "driver": args.driver, "covered": False, "verdict": None,
               "fatbins": [], "error": message}  # fmt: skip
        json.dump(doc, sys.stdout, indent=1)
        print()
        return 1

    try:
        every = _fatbins(args.file, True, True)  # the verdict sees what scan sees: stored and relocatable fatbins too
    except Failure as e:
        return failed(str(e))
    except FatbinFormatError as e:
        return failed(f"{_shown(args.file)}: {type(e).__name__}: {e}")
    fatbins = [fb for fb in every if fb.loadable and (args.embedded or not fb.embedded)]
    # The judgement scan gives the same binary (docs/scan.md); it models no JIT variable: then the rows decide.
    verdict = None if args.force_ptx_jit or args.disable_ptx_jit or args.jit_cache else judge(every, gpus, args.driver)
    if not fatbins and not verdict:
        return failed(f"{_shown(args.file)}: no device code in it")
    jit_cache = {"warm": True, "cold": False}.get(args.jit_cache)
    kw = {"driver": args.driver, "force_ptx_jit": args.force_ptx_jit, "disable_ptx_jit": args.disable_ptx_jit,
          "jit_cache": jit_cache}  # fmt: skip
    results = [(fb, coverage(fb, gpus, **kw)) for fb in fatbins]

    def status(fb: Fatbin, r: Any) -> str:
        """The row's status; "needs newer driver" where only the driver stands in the way (as in the verdict)."""
        if r or args.driver is None:
            return str(r.status)
        free = select_entry(fb, r.gpu, force_ptx_jit=args.force_ptx_jit, disable_ptx_jit=args.disable_ptx_jit,
                            jit_cache=jit_cache)  # fmt: skip
        return "needs newer driver" if free else str(r.status)

    if verdict is None:
        covered = all(row for _, rows in results for row in rows)
    else:
        covered = all(verdict[g.capability]["status"] not in UNCOVERED for g in gpus)
    if args.json:
        import json

        doc = {
            "schema": JSON_SCHEMA, "file": args.file, "driver": args.driver, "covered": covered,
            "verdict": verdict,
            "fatbins": [{"offset": fb.offset, "section": fb.section, "embedded": fb.embedded, "gpus": [
                {"gpu": str(r.gpu), "capability": r.gpu.capability, "status": status(fb, r), "reason": r.reason,
                 "unconfirmed": r.unconfirmed, "cache_dependent": r.cache_dependent,
                 "entry": r.entry.as_dict() if r.entry else None} for r in rows
            ]} for fb, rows in results],
        }  # fmt: skip
        json.dump(doc, sys.stdout, indent=1)
        print()
        return 0 if covered else 1
    shown = results if len(results) <= 8 else []
    for fb, rows in shown:
        if len(results) > 1:
            print(f"{_shown(_where(fb))}:")
        table = [(r.gpu.capability, status(fb, r), r.reason + (" [reported rule]" if r.unconfirmed else ""))
                 for r in rows]  # fmt: skip
        _table(["gpu", "loads", "why"], table, wide=args.wide)
        print()
    if verdict is not None and (len(every) != 1 or every[0].relocatable or every[0].embedded):
        print(
            f"{_shown(args.file)}: {len(every)} fatbins ({sum(fb.relocatable for fb in every)} relocatable, "
            f"{sum(fb.embedded for fb in every)} stored as data); per GPU (docs/scan.md):"
        )
        _table(["gpu", "status", "why"], [(g, v["status"], v["reason"]) for g, v in verdict.items()], wide=args.wide)
    if any(r.cache_dependent for _, rows in results for r in rows):
        print("\nWith CUDA_DISABLE_PTX_JIT=1 the result depends on the driver's JIT cache: PTX compiled earlier on "
              "the machine still runs (--jit-cache warm|cold to choose)")  # fmt: skip
    if any(r.unconfirmed for _, rows in shown for r in rows):
        print("\n[reported rule]: the decision rests on a rule from NVIDIA's documentation that no GPU run of ours "
              "has confirmed yet (cuda_fatbin.RULES)")  # fmt: skip
    print("\nevery GPU is covered" if covered else "\nsome GPU is NOT covered", file=sys.stderr)
    return 0 if covered else 1


def cmd_extract(args: argparse.Namespace) -> int:
    from .._arch import Arch, split_arch_list
    from .._extract import ExtractError, extract_entries
    from .._reader import FatbinFormatError

    try:
        archs = [Arch.parse(a) for spec in args.arch for a in split_arch_list(spec)] or None
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None
    kinds = [k for spec in args.kind for k in spec.replace(";", ",").split(",") if k] or None
    failed: list[str] = []
    if args.file != "-":
        _must_exist(args.file)
    try:
        written = extract_entries(
            args.file, args.output, kinds=kinds, archs=archs, force=args.force, embedded=args.embedded,
            relocatable=_relocatable_flag(args), on_error=lambda e, name, exc: failed.append(f"{name}: {exc}"),
        )  # fmt: skip
    except ExtractError as e:
        raise Failure(_shown(e)) from None
    except FatbinFormatError as e:  # malformed input: named, as inspect names it (--debug: the reader's traceback)
        raise Failure(f"{_shown(args.file)}: {_shown(e)}") from e
    except OSError as e:  # the input, or -o naming a file, a FIFO, a folder that cannot be made
        where = e.filename if e.filename is not None else args.output
        hint = "; -o names the folder to write into, which is made if missing" if e.errno in (
            errno.EEXIST, errno.ENOTDIR) else ""  # fmt: skip
        raise Failure(f"{_shown(where)}: {e.strerror or e}{hint}") from None
    if args.json:  # schemas/extract.json
        _print_json({"schema": JSON_SCHEMA, "file": args.file, "output": args.output,
                     "written": [os.fspath(p) for p in written], "failed": failed})  # fmt: skip
    elif not args.quiet:
        for path in written:
            print(_shown(path))
    for f in failed:
        print(f"cuda-fatbin extract: cannot extract {_shown(f)}", file=sys.stderr)
    if not written and not failed:
        raise Failure("no entry matches --kind/--arch")
    return 1 if failed else 0


_MARKS = {"SASS exact": "SASS", "SASS compatible": "SASS~", "PTX JIT": "PTX", "partial": "PART",
          "needs newer driver": "DRIVER", "no entry": "NONE", "no kernels": "-", "unreadable": "ERROR",
          None: "-"}  # fmt: skip


def _gpus(specs: list[str], driver: str | None = None) -> list[Arch]:
    """GPU specs from repeated --gpu options (``installed`` asks the driver, without cuda.core); checks --driver."""
    from .._arch import Arch, split_arch_list
    from .._driver import NoDriverError, devices
    from .._select import parse_driver

    out = []
    try:
        parse_driver(driver)
        for spec in specs:
            for g in split_arch_list(spec):
                if g.lower() == "installed":
                    out += [Arch(*d.capability) for d in devices("--gpu installed", "name the GPUs, e.g. --gpu 90")]
                else:
                    out.append(Arch.parse(g))
    except NoDriverError as e:
        raise Failure(str(e)) from None
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None
    if not out:
        raise UsageError("--gpu names no GPU")
    return out


def cmd_scan(args: argparse.Namespace) -> int:
    from .._scan import scan

    gpus = _gpus(args.gpu, args.driver)
    for p in args.paths:
        _must_exist(p)
    show = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int, path: str) -> None:
        print(f"\r[{done}/{total}] {_shown(os.path.basename(path))[:50]}".ljust(70), end="", file=sys.stderr)

    report = scan(args.paths or None, gpus=gpus, driver=args.driver, embedded=not args.no_embedded,
                  max_workers=args.jobs, progress=progress if show else None)  # fmt: skip
    if show:
        print("\r".ljust(72) + "\r", end="", file=sys.stderr)
    if args.json:
        import json

        json.dump({"schema": JSON_SCHEMA, **report.to_dict()}, sys.stdout, indent=1)
        print()
        return 0 if report.covered else 1
    dists = report.distributions()
    with_code = [b for b in report.binaries if b.has_device_code]
    bad_inputs = report.unreadable
    print(f"{report.files_read} binaries read, {len(with_code)} with device code, in {len(dists)} distribution(s)"
          + (f"; driver {report.driver}" if report.driver else "; no driver limit")
          + (f"; {len(bad_inputs)} input(s) could not be read" if bad_inputs else "") + "\n")  # fmt: skip
    rows = [(d["distribution"], d["binaries"], *(_MARKS[d["coverage"][g]] for g in report.gpus)) for d in dists]
    _table(["distribution", "binaries", *report.gpus], rows, wide=args.wide)
    print("\nSASS = SASS for that arch, SASS~ = compatible SASS, PTX = JIT-compiled, PART = some modules only "
          "(per-GPU kernels), DRIVER = needs a newer driver, NONE = no entry, ERROR = could not be read "
          "(docs/scan.md)")  # fmt: skip
    for g in report.gpus:
        bad = [b for b in report.uncovered(g) if not b.error]
        if bad:
            print(f"\n{g}: {len(bad)} binaries cannot run" + ("; the first 5:" if len(bad) > 5 else ":"))
            for b in bad[:5]:
                print(f"  {_shown(b.path)}: {_shown(b.coverage[g]['reason'])}")
    if bad_inputs:
        print(f"\n{len(bad_inputs)} input(s) could not be read (not covered for any GPU):")
        for b in bad_inputs:
            print(f"  {_shown(b.path)}: {_shown(b.error)}")
    if report.skipped:
        print("\nnot read: " + ", ".join(_counted(n, k) for k, n in sorted(report.skipped.items()))
              + " (symlinks inside a folder are never followed)")  # fmt: skip
    if not with_code and not bad_inputs:
        print("\nno binary with device code found", file=sys.stderr)
    else:
        print("\nevery GPU is covered" if report.covered else "\nsome GPU is NOT covered", file=sys.stderr)
    return 0 if report.covered else 1


_SKIPPED_WORDS = {"symlink": ("symlink", "symlinks"),
                  "not a regular file": ("FIFO, socket or device", "FIFOs, sockets or devices")}  # fmt: skip


def _counted(n: int, kind: str) -> str:
    """``2 symlinks``, ``1 FIFO, socket or device``: a count of what ``scan`` passed over (``ScanReport.skipped``)."""
    one, many = _SKIPPED_WORDS.get(kind, (kind, kind))
    return f"{n} {one if n == 1 else many}"


def _fatbin_options(args: argparse.Namespace) -> FatbinOptions:
    from .._fatbin import FatbinOptions

    return FatbinOptions(
        compress=args.compress,
        compress_all=args.compress_all or None,
        compress_mode=args.compress_mode,
        concat=args.concat or None,
        host=args.host,
        address_bits=args.address_bits,
        debug=args.debug_info or None,
        producer=args.producer,
    )


def _read_input(path: str | os.PathLike[str]) -> bytes:
    """A source or part, read whole: a regular file (a symlink to one is followed) of at most
    ``_files.MAX_INPUT_BYTES``; a FIFO or device is refused, not waited on (``_files.read_regular``)."""
    from .._files import MAX_INPUT_BYTES, read_regular

    try:
        return read_regular(path, MAX_INPUT_BYTES, follow=True)
    except OSError as e:
        raise Failure(f"{_shown(path)}: {e.strerror or e}") from None


def _read_part(path: str, *, check_kind: bool = True) -> bytes:
    """A part of ``build``, read by :func:`_read_input`; bytes of no known kind are a failed input (exit 1)."""
    data = _read_input(path)
    if check_kind:
        from .._detect import detect

        try:
            detect(data)
        except ValueError as e:
            raise Failure(f"{_shown(path)}: {e}") from None
    return data


def _parse_part(spec: str) -> Part:
    from .._fatbin import Part

    fields = {}
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        if not sep or key not in ("kind", "arch", "file", "identifier", "options"):
            raise UsageError(f"--part {spec!r}: expected key=value items among kind, arch, file, identifier, options")
        fields[key] = value
    if "file" not in fields:
        raise UsageError(f"--part {spec!r}: file= is required")
    path = fields.pop("file")
    return Part(_read_part(path, check_kind=fields.get("kind") != "index"), **fields)  # an index is text


def cmd_build(args: argparse.Namespace) -> int:
    from .._fatbin import build_fatbin

    named = [item.partition("=")[2] for p in args.part for item in p.split(",") if item.startswith("file=")]
    _check_output(args.output, "a fatbin", "-o", [("an input", p) for p in [*args.parts, *named]])
    _check_json_output(args)
    files = []
    for path in args.parts:  # a missing or unrecognised input is a failed build (exit 1), not a bad command line
        _read_part(path)
        files.append(path)
    parts = files + [_parse_part(p) for p in args.part]
    if not parts:
        raise UsageError("build needs at least one part (a file, or --part kind=...,file=...)")
    data = build_fatbin(parts, options=_fatbin_options(args), allow_duplicates=args.allow_duplicates)
    _write_output(args.output, data)
    if args.json:  # schemas/build.json
        _print_json({"schema": JSON_SCHEMA, "output": args.output, "bytes": len(data), "parts": len(parts),
                     "entries": _entries_json(data)})  # fmt: skip
    elif not args.quiet:
        info = sys.stderr if args.output == "-" else sys.stdout  # standard output carries the fatbin
        print(f"{_shown(args.output)}: {len(data)} bytes, {len(parts)} part(s)", file=info)
    return 0


def _print_json(doc: dict[str, Any]) -> None:
    import json

    json.dump(doc, sys.stdout, indent=1)
    print()


def _entries_json(data: bytes) -> list[dict[str, Any]]:
    from .._reader import read_fatbin

    return [{"kind": e.kind, "arch": None if e.arch is None else str(e.arch), "size": e.size,
             "compression": e.compression} for e in read_fatbin(data).iter_entries()]  # fmt: skip


def _check_json_output(args: argparse.Namespace) -> None:
    if getattr(args, "json", False) and "-" in (args.output, getattr(args, "symbols", None)):
        raise UsageError("--json writes to standard output; send -o (and --symbols) to a file")


@contextlib.contextmanager
def _interruptible(command: str) -> Iterator[None]:
    """While a compile runs, first Ctrl-C: stop (queued jobs dropped, the running ones awaited, said so);
    second: exit 130 at once. The previous SIGINT handler is back afterwards (``main`` called from a program).

    The second exits with ``os._exit``: no interpreter teardown while NVRTC threads still run (that teardown
    was seen to abort with ``free(): invalid pointer``). Outputs are written only after a compile, whole
    (``_files.write_atomic``), so either way no partial file is left.
    """
    import signal
    import threading

    from .. import _multiarch

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    presses = [0]

    def handler(signum: int, frame: object) -> None:
        presses[0] += 1
        if presses[0] > 1:
            try:
                sys.stderr.write(f"cuda-fatbin {command}: interrupted\n")
                sys.stderr.flush()
            finally:
                os._exit(130)
        raise KeyboardInterrupt

    def waiting(running: int) -> None:
        if running:
            noun = "compile" if running == 1 else "compiles"
            print(f"cuda-fatbin {command}: interrupted; waiting for {running} running {noun}; Ctrl-C again to quit now",
                  file=sys.stderr, flush=True)  # fmt: skip

    previous, previous_hook = signal.signal(signal.SIGINT, handler), _multiarch._on_interrupt
    _multiarch._on_interrupt = waiting
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _multiarch._on_interrupt = previous_hook


def cmd_compile(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from .._program import Program, ProgramOptions

    if args.output is None and not args.dry_run:  # before anything is read: a command-line error is exit 2
        raise UsageError("-o/--output is required: the fatbin to write (or --dry-run to print the plan only)")
    src = Path(args.source)
    code = _read_input(src)
    lang = args.lang or _LANGS.get(src.suffix.lower())
    if lang is None:
        raise UsageError(f"cannot tell the language of {_shown(src.name)}; pass --lang c++|ptx|nvvm")
    cache_dir = _cache_options(args)
    if args.dry_run and getattr(args, "json", False):
        raise UsageError("--dry-run prints the plan as text and --json describes what a compile wrote: use one")
    if not args.dry_run:
        if args.output == "-" and args.symbols == "-":
            raise UsageError("-o - and --symbols - both write to standard output; send one of them to a file")
        inputs = [("the source", args.source)] + ([("the --cache folder", cache_dir)] if cache_dir else [])
        _check_output(args.output, "a fatbin", "-o", inputs)
        _check_json_output(args)
        if args.symbols:
            _check_output(args.symbols, "JSON", "--symbols", [*inputs, ("the -o output", args.output)])
    defines = []
    for d in args.define:
        name, sep, value = d.partition("=")
        defines.append((name, value) if sep else name)
    includes = [*args.include, str(src.resolve().parent)]  # quoted includes next to the source, as nvcc finds them
    # named after the file: NVRTC's diagnostics then read "k.cu(3): error ...", which editors jump to
    opts = ProgramOptions(name=args.name or src.name, std=args.std, include_path=includes,
                          define_macro=defines or None)  # fmt: skip
    program = Program(code, lang, opts, cuda_headers=args.cuda_headers)
    ptx_for = _spec_list(args.ptx_for)
    ltoir_for = _spec_list(args.ltoir_for) or ()
    archs = args.arch[0] if len(args.arch) == 1 else list(args.arch)
    if args.dry_run:
        print(program.plan(archs, ptx_for=ptx_for, ltoir_for=ltoir_for, group=args.group))
        return 0
    progress = _Progress(not args.quiet)
    logs = sys.stderr if args.verbose else (None if args.quiet else _Warnings(sys.stderr))
    cache = cache_options = None
    if cache_dir is not None:
        from cuda.core.utils import FileStreamProgramCache

        cache = FileStreamProgramCache(cache_dir)
        outputs = [p for p in (args.output, args.symbols) if p and p != "-"]  # no header, whatever their suffix
        cache_options = {"cache_exclude": [*args.cache_exclude, *outputs], "cache_max_files": args.cache_max_files}
    from .._program import DriverCompatibilityError

    try:
        with _interruptible("compile"):
            obj = program.compile(
                "fatbin", args.name_expression, logs, archs=archs, ptx_for=ptx_for, ltoir_for=ltoir_for,
                fatbin_options=_fatbin_options(args), max_workers=args.jobs, group=args.group,
                extra_options=args.nvrtc_option, progress=progress, cache=cache, min_driver=args.min_driver,
                min_driver_action="warn" if args.min_driver_warn else "error", **(cache_options or {}),
            )  # fmt: skip
    except DriverCompatibilityError as e:  # the build worked but does not meet --min-driver: the work failed
        raise Failure(str(e)) from None
    finally:
        progress.close()
        if cache is not None:
            cache.close()
    if cache is not None and not args.quiet and not args.json:
        print(program.last_cache_report, file=sys.stderr)
    data = bytes(obj.code)
    _write_output(args.output, data)
    mapping = {k: v.decode() if isinstance(v, bytes) else v for k, v in obj.symbol_mapping.items()}
    if args.symbols:
        _write_output(args.symbols, (json.dumps(mapping, indent=1) + "\n").encode())
    if args.json:  # schemas/compile.json
        report = program.last_cache_report if cache is not None else None
        cached = None if report is None else {"hits": list(report.hits), "misses": list(report.misses),
                                              "corrupt": list(report.corrupt)}  # fmt: skip
        _print_json({"schema": JSON_SCHEMA, "source": args.source, "output": args.output, "bytes": len(data),
                     "entries": _entries_json(data), "symbols": mapping, "cache": cached})  # fmt: skip
    elif not args.quiet:
        from .._reader import read_fatbin

        info = sys.stderr if "-" in (args.output, args.symbols) else sys.stdout  # standard output carries data
        entries = ", ".join(f"{e.kind} {e.arch}" for e in read_fatbin(data).iter_entries())
        print(f"{_shown(args.output)}: {len(data)} bytes: {entries}", file=info)
        for k, v in mapping.items():
            print(f"  {k} -> {v}", file=info)
    return 0


def _cache_options(args: argparse.Namespace) -> str | None:
    """The cache folder of ``compile`` (``--cache`` alone: the default one), after checking the --cache* flags."""
    if args.cache is None:
        if args.cache_exclude or args.cache_max_files is not None:
            raise UsageError("--cache-exclude and --cache-max-files apply to --cache; add --cache [DIR]")
        return None
    if args.cache_max_files is not None and args.cache_max_files < 1:
        raise UsageError(f"--cache-max-files {args.cache_max_files}: give a positive number of files")
    if args.cache_max_files is None:
        from .._cache import MAX_INCLUDE_FILES

        args.cache_max_files = MAX_INCLUDE_FILES
    if not args.cache:
        from .._cache import default_cache_dir

        return os.fspath(default_cache_dir())
    if os.path.lexists(args.cache) and not os.path.isdir(args.cache):  # a file, device, FIFO or broken link
        raise UsageError(f"--cache {_shown(args.cache)}: that is a file, not a cache folder; write --cache=DIR, or "
                         "put a bare --cache after the source file")  # fmt: skip
    cache_dir: str = args.cache
    return cache_dir


def _spec_list(values: list[str] | None) -> ArchSpec | None:
    """Repeated --ptx-for/--ltoir-for values: one spec, a list of them, or () for 'none'."""
    if not values:
        return None
    if any(v.strip().lower() in ("", "none") for v in values):
        if len(values) > 1:
            raise UsageError("'none' cannot be combined with archs")
        return ()
    if len(values) == 1:
        return values[0]
    specs: list[Arch | str | int] = list(values)
    return specs


# -- argument parsing ------------------------------------------------------------------------------------


def cmd_probe(args: argparse.Namespace) -> int:
    from .._driver import NoDriverError
    from .._probe import probe
    from .._term import shown

    show = sys.stderr.isatty()  # --jobs is at least 1: argparse checked it (_positive_int)

    def progress(done: int, total: int, name: str) -> None:
        print(f"\r[{done}/{total}] {shown(name)[:60]}".ljust(78), end="", file=sys.stderr)

    try:
        report = probe(jobs=args.jobs, select=args.case, progress=progress if show else None)
    except NoDriverError as e:
        raise Failure(str(e)) from None
    if show:
        print("\r".ljust(80) + "\r", end="", file=sys.stderr)
    if args.json:
        import json

        json.dump(report.to_dict(), sys.stdout, indent=1)
        print()
        return 0 if report.ok else 1
    rows = []
    for r in report.results:
        agree = "-" if r.not_observable is not None else ("yes" if r.agree else "NO")
        observed = f"not observable: {r.not_observable}" if r.not_observable is not None else r.observed
        rows.append((shown(r.case.name), shown("; ".join(e.describe() for e in r.case.entries)), r.case.env_text,
                     shown(observed), r.predicted, agree))  # fmt: skip
    _table(["case", "entries", "env", "observed", "predicted", "agree"], rows)
    print(f"\n{report.gpu_name} (compute capability {report.capability}), driver {report.driver}: "
          f"{len(report.run)} cases run in {report.seconds:.0f} s, {len(report.disagreements)} disagreement(s), "
          f"{len(report.results) - len(report.run)} not observable here")  # fmt: skip
    return 0 if report.ok else 1


def _add_fatbin_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("fatbin options (FatbinOptions)")
    g.add_argument("--compress", dest="compress", action="store_true", default=None, help="compress entries")
    g.add_argument("--no-compress", dest="compress", action="store_false", help="store entries uncompressed")
    g.add_argument("--compress-all", action="store_true", help="compress every entry, even small ones")
    g.add_argument("--compress-mode", choices=["default", "size", "speed", "balance", "none"],
                   help="'speed' writes LZ4, the others zstd (CUDA 12.4+ drivers); libnvfatbin >= 12.6")  # fmt: skip
    g.add_argument("--concat", action="store_true", help="one compressed stream per kind (libnvfatbin >= 13.4)")
    g.add_argument("--host", choices=["linux", "windows", "mac"], help="host system recorded in the entries")
    g.add_argument("--address-bits", type=int, choices=[32, 64],
                   help="host address size recorded in the entries (cubins must match it)")  # fmt: skip
    g.add_argument("-g", "--debug-info", dest="debug_info", action="store_true",
                   help="mark entries as carrying debug information")  # fmt: skip
    g.add_argument("--producer", choices=["cuda", "opencl"], help="producer recorded in the entries")


def _add_reading_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--embedded", action="store_true",
                   help="also find fatbins stored as data (e.g. cuFFT's), which cuobjdump does not see")  # fmt: skip
    p.add_argument("--relocatable", action="store_true",
                   help="also list __nv_relfatbin fatbins of linked files (device-link input)")  # fmt: skip


def versions_text() -> str:
    """The versions a bug report needs: this package, cuda-core, cuda-bindings and the CUDA libraries."""
    from importlib import import_module
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    lines = [f"cuda-fatbin {__version__}"]  # the code running, installed or not (a source tree on sys.path)
    for dist in ("cuda-core", "cuda-bindings"):
        try:
            lines.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            lines.append(f"{dist} not installed")
    probes: dict[str, Callable[[], str]] = {
        "NVRTC": lambda: "{}.{}".format(*import_module("cuda.bindings.nvrtc").nvrtcVersion()[1:]),
        "nvJitLink": lambda: "{}.{}".format(*import_module("cuda.bindings.nvjitlink").version()),
        "libnvfatbin": lambda: "{}.{}".format(*import_module("cuda.bindings.nvfatbin").version()),
    }
    for name, probe in probes.items():
        try:
            lines.append(f"{name} {probe()}")
        except Exception as e:  # a library that cannot be loaded is what the report needs to say
            lines.append(f"{name} not available ({type(e).__name__})")
    return "\n".join(lines)


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the package and CUDA library versions")

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(versions_text())
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """argparse, whose errors quote the command line escaped (``cuda-fatbin scan *`` passes file names, which may
    hold control characters, and one starting with ``-`` comes back in "unrecognized arguments")."""

    def error(self, message: str) -> NoReturn:
        super().error("\n".join(_shown(line) for line in message.split("\n")))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cuda-fatbin", description="Make, inspect and check CUDA fat binaries (toolkit-free inspection)."
    )
    common = _Parser(add_help=False)
    common.add_argument("--debug", dest="traceback", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")  # fmt: skip
    parser.add_argument("--debug", dest="traceback", action="store_true", help="show the traceback of an error")
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    class _Sub:  # every subcommand takes --debug too
        @staticmethod
        def add_parser(name: str, **kw: Any) -> argparse.ArgumentParser:
            return subparsers.add_parser(name, parents=[common], **kw)

    sub = _Sub()

    p = sub.add_parser("compile", help="compile a .cu/.ptx/.ll file for many archs into one fatbin")
    p.add_argument("source", help="source file (.cu, .ptx, .ll/.bc for NVVM IR)")
    p.add_argument("--arch", required=True, action="append", metavar="SPEC",
                   help="archs in any spelling: '80;90;100+PTX', 'all-major', '80-real;90', 'arch=compute_80,code=[sm_80,sm_86]'")  # noqa: E501 # fmt: skip
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the fatbin to write, whole or not at all ('-': standard output, not a terminal); "
                        "required unless --dry-run")  # fmt: skip
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="a folder to search for headers (repeatable; before the CUDA header folders)")  # fmt: skip
    p.add_argument(
        "--no-cuda-headers",
        dest="cuda_headers",
        action="store_false",
        help="do not add the CUDA runtime and CCCL header folders (found by cuda.pathfinder) after -I",
    )
    p.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a macro for the compile (repeatable)")  # fmt: skip
    p.add_argument("--std", help="C++ dialect, e.g. c++17")
    p.add_argument(
        "--name",
        help="program name: the entries' identifier and the file name in compiler messages "
        "(default: the source file's name, so that messages read 'k.cu(3): error ...')",
    )
    p.add_argument("--lang", choices=["c++", "ptx", "nvvm"], help="source language (default: from the extension)")
    p.add_argument("--name-expression", action="append", default=[], metavar="EXPR",
                   help="a kernel name expression to resolve, e.g. 'scale<float>' (repeatable)")  # fmt: skip
    p.add_argument("--symbols", metavar="FILE",
                   help="write the name-expression -> symbol mapping as JSON ('-' for standard output)")  # fmt: skip
    p.add_argument("--ptx-for", action="append", metavar="SPEC",
                   help="archs to embed PTX for (default: the newest; 'none' for none; repeatable)")  # fmt: skip
    p.add_argument("--ltoir-for", action="append", metavar="SPEC", help="archs to embed LTO-IR for (repeatable)")
    p.add_argument("-j", "--jobs", type=_positive_int, help="parallel compile jobs (default: the CPU count)")
    p.add_argument("--group", action="store_true", help="one front end per virtual arch, nvJitLink per real arch")
    p.add_argument("-X", "--nvrtc-option", action="append", default=[], metavar="OPT",
                   help="pass an option to NVRTC as is (repeatable), e.g. -X=--use_fast_math")  # fmt: skip
    p.add_argument("--cache", metavar="DIR", nargs="?", const="",
                   help="per-arch job cache folder (cuda.core FileStreamProgramCache); without DIR, "
                        "$XDG_CACHE_HOME/cuda-fatbin (docs/caching.md)")  # fmt: skip
    p.add_argument("--cache-exclude", action="append", default=[], metavar="PATH",
                   help="a file or folder beside the sources that holds no headers (build output): left out of "
                        "the cache key's include fingerprint (repeatable)")  # fmt: skip
    p.add_argument("--cache-max-files", type=int, metavar="N",
                   help="the most header-like files the include fingerprint reads (default 20000)")  # fmt: skip
    p.add_argument("--min-driver", metavar="VER",
                   help="the oldest driver to support ('13.0'): fail if a GPU could not load its entry")  # fmt: skip
    p.add_argument("--min-driver-warn", action="store_true", help="with --min-driver: warn instead of failing")
    p.add_argument("--dry-run", action="store_true", help="print the plan and compile nothing")
    p.add_argument("-v", "--verbose", action="store_true", help="print the whole compiler logs (warnings show anyway)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors (no warnings, no summary)")
    p.add_argument("--json", action="store_true",
                   help="print what was written as JSON on standard output (schemas/compile.json)")  # fmt: skip
    _add_fatbin_options(p)
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("build", help="assemble existing artifacts into a fatbin (like the fatbinary tool)")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the fatbin to write, whole or not at all ('-': standard output, not a terminal)")  # fmt: skip
    p.add_argument("parts", nargs="*", metavar="FILE", help="cubin/PTX/LTO-IR/-rdc object files (detected)")
    p.add_argument("--part", action="append", default=[], metavar="kind=K,arch=A,file=F[,identifier=I][,options=O]",
                   help="a part of the kind and arch given, not detected (repeatable; elf means cubin)")  # fmt: skip
    p.add_argument("--allow-duplicates", action="store_true", help="allow the same kind, arch and identifier twice")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true",
                   help="print what was written as JSON on standard output (schemas/build.json)")  # fmt: skip
    _add_fatbin_options(p)
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("inspect", help="list the entries of fatbins, objects, shared libraries, executables")
    p.add_argument("files", nargs="+", metavar="FILE", help="files to list ('-' reads standard input)")
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/cli.md)")
    p.add_argument("--wide", action="store_true", help="one line per row, however wide (no wrapping to the terminal)")
    _add_reading_options(p)
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("which", help="which entry each GPU would load; exit 1 if some GPU is not covered")
    p.add_argument("file", metavar="FILE", help="a fatbin, cubin, PTX, object, shared library or executable")
    p.add_argument("--gpu", required=True, action="append", metavar="SPEC",
                   help="compute capabilities, e.g. '75;80;86;89;90;100;120' (repeatable)")  # fmt: skip
    p.add_argument("--embedded", action="store_true", help="also check fatbins stored as data")
    p.add_argument("--driver", help="driver: CUDA version ('12.4') or driver version ('550.54.14')")
    p.add_argument("--force-ptx-jit", action="store_true", help="as with CUDA_FORCE_PTX_JIT=1")
    p.add_argument("--disable-ptx-jit", action="store_true", help="as with CUDA_DISABLE_PTX_JIT=1")
    p.add_argument("--jit-cache", choices=["warm", "cold"],
                   help="the driver's JIT cache holds this file's JIT output (warm) or not (cold)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/cli.md)")
    p.add_argument("--wide", action="store_true", help="one line per row, however wide (no wrapping to the terminal)")
    p.set_defaults(func=cmd_which)

    p = sub.add_parser("scan", help="will the binaries of an environment, wheel or folder run on these GPUs?")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files, directories and .whl/.zip archives (default: this Python's site-packages)")  # fmt: skip
    p.add_argument("--gpu", required=True, action="append", metavar="SPEC",
                   help="compute capabilities, e.g. '75;80;86;89;90;100;120', or 'installed' (repeatable)")  # fmt: skip
    p.add_argument("--driver", help="driver: CUDA version ('12.4') or driver version ('550.54.14')")
    p.add_argument("--no-embedded", action="store_true", help="skip the search for fatbins stored as data")
    p.add_argument("-j", "--jobs", type=_positive_int, help="worker processes (default: the CPU count)")
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/cli.md)")
    p.add_argument("--wide", action="store_true", help="one line per row, however wide (no wrapping to the terminal)")
    p.set_defaults(func=cmd_scan)

    p = sub.add_parser("extract", help="write entries out as files, named like cuobjdump does")
    p.add_argument("file", metavar="FILE", help="a fatbin, object, shared library or executable to take entries from")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the folder to write into (created if missing); nothing is written outside it")  # fmt: skip
    p.add_argument("--kind", action="append", default=[], metavar="KIND",
                   help="kinds to write: elf (or cubin), ptx, ltoir, reloc, tile_ir, index (repeatable)")  # fmt: skip
    p.add_argument("--arch", action="append", default=[], metavar="SPEC", help="only these archs (repeatable)")
    p.add_argument("--force", action="store_true", help="replace existing files (symlinks are never followed)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true",
                   help="print the files written as JSON on standard output (schemas/extract.json)")  # fmt: skip
    _add_reading_options(p)
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("probe", help="check the selection model on this GPU: run tagged fatbins, compare (minutes)")
    p.add_argument("--case", action="append", default=[], metavar="TEXT",
                   help="run only the cases whose name contains TEXT (repeatable)")  # fmt: skip
    p.add_argument(
        "-j", "--jobs", type=_positive_int, help="cases run at once, each in its own process (default: CPU count)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output (schemas/probe.json)")
    p.set_defaults(func=cmd_probe)
    return parser


def _positive_int(text: str) -> int:
    """``-j N``: a whole number of at least 1 (argparse names the option in its error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _join_option_values(argv: list[str]) -> list[str]:
    """``-X --use_fast_math`` as ``-X=--use_fast_math``: the value of -X is an NVRTC option, dashes and all."""
    out, it = [], iter(argv)
    for a in it:
        if a in ("-X", "--nvrtc-option"):
            nxt = next(it, None)
            out.append(a if nxt is None else f"{a}={nxt}")
        else:
            out.append(a)
    return out


def _suggest_command(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """An unknown command is a usage error that names the closest one (``compil`` -> ``compile``)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    commands: list[str] = []
    for action in parser._actions:  # the subcommands the parser knows, however many there are
        if isinstance(action, argparse._SubParsersAction):
            commands.extend(action.choices)
    if first is None or first in commands:
        return
    import difflib

    close = difflib.get_close_matches(first, commands, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    parser.error(f"unknown command {first!r}{hint} (commands: {', '.join(commands)})")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code (0 success, 1 failure, 2 usage error)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    _suggest_command(parser, argv)
    try:  # --version and --help print while parsing: into `head`, too
        args = parser.parse_args(_join_option_values(argv))
    except BrokenPipeError:
        return _quiet_pipe()
    try:
        code: int = args.func(args)
        return code
    except UsageError as e:
        _error(args, e, f"error: {e}")
        return 2
    except Failure as e:
        _error(args, e, str(e))
        return 1
    except (TypeError, ValueError) as e:
        from .._reader import FatbinFormatError

        _error(args, e, f"{type(e).__name__}: {e}")
        return 1 if isinstance(e, FatbinFormatError) else 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        return _quiet_pipe()
    except Exception as e:  # a library failure: one readable line
        _error(args, e, f"{type(e).__name__}: {e}")
        return 1


def _quiet_pipe() -> int:
    """Standard output's reader went away (``| head``): point it at /dev/null so the exit flush is silent."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    return 0


def _error(args: argparse.Namespace, exc: BaseException, line: str) -> None:
    """One readable line (a compile error adds the compiler logs after it); --debug adds the traceback."""
    if getattr(args, "traceback", False):
        import traceback

        traceback.print_exception(exc)
    shown = "\n".join(_shown(part) for part in line.split("\n"))  # names and compiler logs come from inputs
    print(f"cuda-fatbin {args.command}: {shown}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
