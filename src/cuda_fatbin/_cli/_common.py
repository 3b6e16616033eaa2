# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What several subcommands share: the errors ``main`` turns into exit codes, output helpers, the inputs and
outputs of the commands, the progress bar of ``compile``, and the options several commands take.

Light on purpose: every ``cuda-fatbin`` run imports it (start-up time: benchmarks/bench_cli.py); what a
helper needs beyond what argparse already loaded is imported when it runs (Ctrl-C handling: ``_interrupt``).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: see benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

    from .._arch import Arch
    from .._fatbin import FatbinOptions
    from .._multiarch import Job
    from .._reader import Fatbin


JSON_SCHEMA = 1


class UsageError(Exception):
    """Bad command-line input: exit code 2."""


class Failure(Exception):
    """The command ran but did not succeed (e.g. an uncovered GPU): exit code 1."""


def add_command(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], name: str, **kw: Any
) -> argparse.ArgumentParser:
    """A subcommand's parser: it takes ``--debug`` too, after the command (``cuda-fatbin scan --debug ...``).

    Its default is left unset (SUPPRESS), so that ``--debug`` before the command is not undone by this one.
    """
    parser = subparsers.add_parser(name, **kw)
    parser.add_argument("--debug", dest="traceback", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")  # fmt: skip
    return parser


# -- output helpers ------------------------------------------------------------------------------------


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], out: TextIO | None = None, *, wide: bool = False
) -> None:
    from .._term import table

    table(headers, rows, out, wide=wide)


def _shown(text: object) -> str:
    from .._term import shown

    return shown(text)


def _print_json(doc: dict[str, Any]) -> None:
    """Every ``--json`` document: names that are not Unicode carried as a display form and ``_bytes`` (``_term``);
    ``json.dump(doc, indent=1)``'s text, written at once (``_term.json_text``)."""
    from .._term import json_names, json_text

    text = json_text(doc)
    if "\\ud" in text:  # a string held a surrogate (JSON writes each as \udXXX): a name may not be Unicode
        text = json_text(json_names(doc))
    sys.stdout.write(text + "\n")


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
    from .._files import stat_path

    try:
        stat_path(path)  # a path of any length: past PATH_MAX too
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


#: ``_where``'s marks by (relocatable, embedded)
_MARKS = {(False, False): "", (False, True): " (embedded)", (True, False): " (relocatable)",
          (True, True): " (relocatable) (embedded)"}  # fmt: skip


def _where(fb: Fatbin) -> str:
    if fb.standalone:
        return "standalone"
    marks = _MARKS[bool(fb.relocatable), bool(fb.embedded)]
    return f"{fb.section}@{fb.offset:#x}{marks}" if fb.section else f"@{fb.offset:#x}{marks}"


def _relocatable_flag(args: argparse.Namespace) -> bool | None:
    return True if getattr(args, "relocatable", False) else None


def _inputs(path: str) -> list[tuple[str, Any]]:
    """What ``inspect`` reads for one argument: ``(label, source)`` pairs; an archive gives its binary members.

    ``a.whl`` (or ``.zip``, or an ar archive: ``.a``, ``.lib``) lists every member that is a binary
    (``_detect.file_kind``); ``a.whl::member`` or ``libk.a::ka.o`` (the paths ``scan`` prints) reads that
    member. A member that cannot be read is a pair whose source is the exception.
    """
    packaged = None
    if "::" in path or path.lower().endswith((".conda", ".tar.bz2", ".tar")) or os.path.isdir(path):
        packaged = _package_inputs(path)  # _packages.SUFFIXES; a folder may be an OCI image layout
    if packaged is not None:
        return packaged
    if "::" not in path and not path.lower().endswith((".whl", ".zip", ".a", ".lib")):  # _containers' suffixes
        return [(path, path)]  # (not imported for a plain file: start-up time, benchmarks/bench_cli.py)
    import errno

    from .._archive import NESTED, SEPARATOR, SUFFIXES
    from .._containers import container_of, head_of, list_members, read_member, split
    from .._detect import file_kind

    archive, name = split(path) if SEPARATOR in path else (path, None)
    container = container_of(archive, head_of(archive)) if os.path.isfile(archive) else None
    if container is None:
        return [(path, path)]
    try:
        members = list_members(archive, container, head=64)
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
        if name is None and not m.error and file_kind(m.head, m.name) not in ("elf", "fatbin", "pe", "coff"):
            continue
        try:
            out.append((label, read_member(archive, m)))
        except OSError as e:
            out.append((label, e))
    if name is not None and not out:
        raise Failure(f"{_shown(archive)}: no member named {_shown(name)}")
    return out


def _package_inputs(path: str) -> list[tuple[str, Any]] | None:
    """``_inputs`` for a conda package or an image (``pkg.conda``, ``image.tar::usr/lib/x.so``, an OCI layout
    folder), read in one pass as ``scan`` reads it; ``None`` for any other path."""
    from .._packages import is_layout, package_kind

    def kind_of(p: str) -> str | None:
        return "oci" if is_layout(p) else package_kind(p) if os.path.isfile(p) else None

    from .._containers import split

    package, name = split(path, lambda left: kind_of(left) is not None)
    kind = kind_of(package)
    if kind is None:
        return None
    import errno

    from .._inputs import _is_binary
    from .._packages import read_package

    def wanted(member: str, head: bytes) -> bool:
        return member == name if name is not None else len(head) >= 16 and _is_binary(head, member)

    out: list[tuple[str, Any]] = []
    for found in read_package(package, kind, wanted, 64, {}):
        label = f"{package}::{found.name}" if found.name else package
        out.append((label, found.data if found.error is None else OSError(errno.EIO, found.error)))
    if name is not None and not any(label == path for label, _ in out):
        raise Failure(
            f"{_shown(package)}: no member named {_shown(name)}"
            + "".join(f"; {_shown(label)}: {_shown(err)}" for label, err in out if isinstance(err, BaseException))
        )
    return out


def _gpus(specs: list[str], driver: str | None = None) -> list[Arch]:
    """GPUs from repeated --gpu options: capabilities or product names (``installed`` asks the driver, without
    cuda.core); a suffix names code, not a GPU (``sm_90a`` is the GPU 9.0); each GPU once. Checks --driver."""
    import re

    from .._nvidia import gpu_list
    from .._select import parse_driver

    out: list[Arch] = []
    try:
        parse_driver(driver)
        for spec in specs:
            for piece in re.split(r"[;,]", spec):
                if piece.strip().lower() == "installed":
                    out += _installed_gpus()
                elif piece.strip():
                    out += gpu_list(piece)
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None
    if not out:
        raise UsageError("--gpu names no GPU")
    return list(dict.fromkeys(out))


def _installed_driver(value: str | None, flag: str) -> str | None:
    """``--driver installed``: this machine's driver as its CUDA version ('13.0'), read through the driver library
    without cuda.core (``_driver``); a usage error where there is none. Other values are returned as given."""
    if value is None or value.strip().lower() != "installed":
        return value
    from .._driver import NoDriverError, devices
    from .._select import parse_driver

    try:
        found = devices(f"{flag} installed", f"name the driver instead, e.g. {flag} 13.0")
        cuda = parse_driver(found[0].driver)
    except (NoDriverError, ValueError) as e:
        raise UsageError(str(e)) from None
    assert cuda is not None
    return f"{cuda[0]}.{cuda[1]}"


def _installed_gpus() -> list[Arch]:
    """``--gpu installed``: this machine's GPUs, asked of the driver (``_driver``, which loads ctypes: imported for
    this only); a usage error where there is no driver (the command line asks what this machine lacks)."""
    from .._arch import Arch
    from .._driver import NoDriverError, devices

    try:
        return [Arch(*d.capability) for d in devices("--gpu installed", "name the GPUs, e.g. --gpu 90")]
    except NoDriverError as e:
        raise UsageError(str(e)) from None


#: --gpu's help, for which and scan
GPU_HELP = ("compute capabilities or GPU names, e.g. '75;80;86;89;90;100;120', 'T4,A100;Jetson AGX Orin', or "
            "'installed' (repeatable; cuda-fatbin gpus lists the names)")  # fmt: skip
#: --driver's help, for which and scan
DRIVER_HELP = "driver: CUDA version ('12.4'), driver version ('550.54.14') or 'installed'"


# -- outputs, and what compile and build read ----------------------------------------------------------


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


def _check_json_output(args: argparse.Namespace) -> None:
    if getattr(args, "json", False) and "-" in (args.output, getattr(args, "symbols", None)):
        raise UsageError("--json writes to standard output; send -o (and --symbols) to a file")


def _write_output(path: str, data: bytes) -> None:
    """Write an output file all at once (``_files.write_atomic``), or to standard output for ``-``."""
    _write_outputs([(path, data)])


def _write_outputs(outputs: list[tuple[str, bytes]]) -> None:
    """Write a command's outputs all or nothing (``_files.written_together``): every file is staged first,
    standard output (``-``) is written next, and only then are the files renamed into place; a failure
    anywhere leaves every file that was there before as it was, and the message says so for each."""
    from .._files import written_together

    current = None
    try:
        with written_together() as stage:
            for path, data in outputs:
                if path != "-":
                    current = path
                    stage(path, data)
            current = None
            for path, data in outputs:
                if path == "-":
                    current = "standard output"
                    sys.stdout.flush()
                    sys.stdout.buffer.write(data)
                    sys.stdout.buffer.flush()
            current = None  # the renames, at the end of the block
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            raise
        files = [p for p, _ in outputs if p != "-"]
        what = f"cannot write {_shown(current) if current else ', '.join(map(_shown, files))}"
        kept = (
            f"nothing was written: {', '.join(map(_shown, files))} are left as they were"
            if len(files) > 1
            else "a file there before is left as it was"
        )
        raise Failure(f"{what}: {e.strerror or e}; {kept}") from None


def _read_input(path: str | os.PathLike[str]) -> bytes:
    """A source or part, read whole: a regular file (a symlink to one is followed) of at most
    ``_files.MAX_INPUT_BYTES``; a FIFO or device is refused, not waited on (``_files.read_regular``)."""
    from .._files import MAX_INPUT_BYTES, read_regular

    try:
        return read_regular(path, MAX_INPUT_BYTES, follow=True)
    except OSError as e:
        raise Failure(f"{_shown(path)}: {e.strerror or e}") from None


def _entries_json(data: bytes) -> list[dict[str, Any]]:
    from .._reader import read_fatbin

    return [{"kind": e.kind, "arch": None if e.arch is None else str(e.arch), "size": e.size,
             "compression": e.compression} for e in read_fatbin(data).iter_entries()]  # fmt: skip


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


# -- options several subcommands take ------------------------------------------------------------------


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


def _positive_int(text: str) -> int:
    """``-j N``: a whole number of at least 1 (argparse names the option in its error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value
