"""cuda-fatbin: make CUDA fat binaries in-process for ``cuda.core``.

``import cuda_fatbin`` is cheap: the modules here import neither ``cuda.core`` nor the compiler
libraries until a function that needs them runs. Names of the compile side are loaded on first
use (PEP 562 ``__getattr__``).
"""

from __future__ import annotations

import importlib

from ._arch import Arch, ArchList, parse_archs
from ._bundle import BundleCoverageError, BundleError, KernelBundle, KernelSuite
from ._cache import CacheReport
from ._detect import Detected, detect
from ._driver import NoDriverError
from ._extract import ExtractError, extract_entries
from ._fatbin import (
    FatbinBuilder,
    FatbinError,
    FatbinLibraryError,
    FatbinOptions,
    Part,
    build_fatbin,
    from_parts,
    nvfatbin_version,
)
from ._multiarch import FatbinCompileError, Job, Plan, plan_fatbin
from ._reader import Fatbin, FatbinEntry, FatbinFormatError, iter_fatbins, read_fatbin
from ._select import RULES, Selection, coverage, select_entry

__version__ = "0.1.0"

# Public names whose modules import cuda.core or the compilers: loaded on first attribute access.
_LAZY: dict[str, str] = {"Program": "._program", "ProgramOptions": "._program"}


__all__ = [
    "RULES",
    "Arch",
    "ArchList",
    "BundleCoverageError",
    "BundleError",
    "CacheReport",
    "KernelBundle",
    "KernelSuite",
    "Detected",
    "ExtractError",
    "NoDriverError",
    "extract_entries",
    "FatbinCompileError",
    "Job",
    "Plan",
    "parse_archs",
    "plan_fatbin",
    "Fatbin",
    "FatbinEntry",
    "FatbinFormatError",
    "Selection",
    "coverage",
    "iter_fatbins",
    "read_fatbin",
    "select_entry",
    "FatbinBuilder",
    "FatbinError",
    "FatbinLibraryError",
    "FatbinOptions",
    "Part",
    "__version__",
    "build_fatbin",
    "detect",
    "from_parts",
    "nvfatbin_version",
    *_LAZY,
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cuda_fatbin' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
