# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""cuda-fatbin: make CUDA fat binaries in-process for ``cuda.core``, and read the ones already out there.

``import cuda_fatbin`` imports nothing but this file: every public name is loaded from its module on
first use (PEP 562 ``__getattr__``), so ``cuda-fatbin inspect`` never pays for the compile side, and
the modules of the compile side import ``cuda.core`` and the compiler libraries only when they run.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing

__version__ = "0.1.0"

# Public name -> the module that defines it.
_LAZY: dict[str, str] = {
    "Arch": "._arch",
    "ArchList": "._arch",
    "parse_archs": "._arch",
    "BundleCoverageError": "._bundle",
    "BundleError": "._bundle",
    "KernelBundle": "._bundle",
    "KernelSuite": "._bundle",
    "CacheReport": "._cache",
    "FatbinCompileOptions": "._compile_options",
    "Detected": "._detect",
    "detect": "._detect",
    "DiffReport": "._diff",
    "diff": "._diff",
    "NoDriverError": "._driver",
    "Error": "._errors",
    "ExtractError": "._extract",
    "extract_entries": "._extract",
    "FatbinBuilder": "._fatbin",
    "FatbinError": "._libnvfatbin",
    "FatbinLibraryError": "._libnvfatbin",
    "FatbinOptions": "._libnvfatbin",
    "Part": "._fatbin",
    "build_fatbin": "._fatbin",
    "from_parts": "._fatbin",
    "nvfatbin_version": "._libnvfatbin",
    "MetadataReport": "._metadata",
    "metadata": "._metadata",
    "FatbinCompileError": "._multiarch",
    "Job": "._multiarch",
    "Plan": "._multiarch",
    "plan_fatbin": "._multiarch",
    "DriverCompatibilityError": "._program",
    "Program": "._program",
    "ProgramOptions": "._program",
    "Fatbin": "._reader",
    "FatbinEntry": "._reader",
    "FatbinFormatError": "._reader",
    "iter_fatbins": "._reader",
    "read_fatbin": "._reader",
    "ProbeReport": "._probe",
    "probe": "._probe",
    "RULES": "._select",
    "ScanReport": "._scan",
    "scan": "._scan",
    "Selection": "._select",
    "SizeReport": "._size",
    "size": "._size",
    "coverage": "._select",
    "select_entry": "._select",
}

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names come from __getattr__
    from ._arch import Arch as Arch
    from ._arch import ArchList as ArchList
    from ._arch import parse_archs as parse_archs
    from ._bundle import BundleCoverageError as BundleCoverageError
    from ._bundle import BundleError as BundleError
    from ._bundle import KernelBundle as KernelBundle
    from ._bundle import KernelSuite as KernelSuite
    from ._cache import CacheReport as CacheReport
    from ._compile_options import FatbinCompileOptions as FatbinCompileOptions
    from ._detect import Detected as Detected
    from ._detect import detect as detect
    from ._diff import DiffReport as DiffReport
    from ._diff import diff as diff
    from ._driver import NoDriverError as NoDriverError
    from ._errors import Error as Error
    from ._extract import ExtractError as ExtractError
    from ._extract import extract_entries as extract_entries
    from ._fatbin import FatbinBuilder as FatbinBuilder
    from ._fatbin import Part as Part
    from ._fatbin import build_fatbin as build_fatbin
    from ._fatbin import from_parts as from_parts
    from ._libnvfatbin import FatbinError as FatbinError
    from ._libnvfatbin import FatbinLibraryError as FatbinLibraryError
    from ._libnvfatbin import FatbinOptions as FatbinOptions
    from ._libnvfatbin import nvfatbin_version as nvfatbin_version
    from ._metadata import MetadataReport as MetadataReport
    from ._metadata import metadata as metadata
    from ._multiarch import FatbinCompileError as FatbinCompileError
    from ._multiarch import Job as Job
    from ._multiarch import Plan as Plan
    from ._multiarch import plan_fatbin as plan_fatbin
    from ._probe import ProbeReport as ProbeReport
    from ._probe import probe as probe
    from ._program import DriverCompatibilityError as DriverCompatibilityError
    from ._program import Program as Program
    from ._program import ProgramOptions as ProgramOptions
    from ._reader import Fatbin as Fatbin
    from ._reader import FatbinEntry as FatbinEntry
    from ._reader import FatbinFormatError as FatbinFormatError
    from ._reader import iter_fatbins as iter_fatbins
    from ._reader import read_fatbin as read_fatbin
    from ._scan import ScanReport as ScanReport
    from ._scan import scan as scan
    from ._select import RULES as RULES
    from ._select import Selection as Selection
    from ._select import coverage as coverage
    from ._select import select_entry as select_entry
    from ._size import SizeReport as SizeReport
    from ._size import size as size

__all__ = [
    "RULES",
    "Arch",
    "ArchList",
    "BundleCoverageError",
    "BundleError",
    "CacheReport",
    "Detected",
    "DiffReport",
    "DriverCompatibilityError",
    "Error",
    "ExtractError",
    "Fatbin",
    "FatbinBuilder",
    "FatbinCompileError",
    "FatbinCompileOptions",
    "FatbinEntry",
    "FatbinError",
    "FatbinFormatError",
    "FatbinLibraryError",
    "FatbinOptions",
    "Job",
    "KernelBundle",
    "KernelSuite",
    "MetadataReport",
    "NoDriverError",
    "Part",
    "Plan",
    "ProbeReport",
    "Program",
    "ProgramOptions",
    "ScanReport",
    "Selection",
    "SizeReport",
    "__version__",
    "build_fatbin",
    "coverage",
    "detect",
    "diff",
    "extract_entries",
    "from_parts",
    "iter_fatbins",
    "metadata",
    "nvfatbin_version",
    "parse_archs",
    "plan_fatbin",
    "probe",
    "read_fatbin",
    "scan",
    "select_entry",
    "size",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cuda_fatbin' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
