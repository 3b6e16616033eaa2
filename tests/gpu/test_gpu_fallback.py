# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Fallback: an entry the driver cannot use ties with or outranks a usable one; the JIT cache cold and warm.

The fatbins are built ahead of time by ``tests/gpu/make_data.py`` (PTX of ISA 9.5 needs NVRTC 13.5,
concatenated entries libnvfatbin 13.5) and listed in ``data/fallback/cases.json``. Each case runs in a
fresh process twice: with the JIT cache disabled (``CUDA_CACHE_DISABLE=1``), and with a fresh cache
(``CUDA_CACHE_PATH``) warmed by one run of the same fatbin without the case's variables. Every entry
carries its own tag, so the value the kernel writes names the entry that ran.
"""

from __future__ import annotations

import json
import re

import pytest

from cuda_fatbin import Arch, select_entry

from gpuutil import DATA, run_fatbin_subprocess

pytestmark = pytest.mark.gpu

CASES = json.loads((DATA / "fallback" / "cases.json").read_text())
MODES = ["cache disabled", "cache warm"]


def tag_of(entry, case: dict) -> str:
    """The tag an entry writes: from its identifier ``tN``, or (nvcc names add_reloc entries itself) from the
    case's description of the entry of that kind and arch."""
    m = re.fullmatch(r"t(\d+)", entry.identifier or "")
    if m:
        return m.group(1)
    for text in case["entries"]:
        if text.startswith(f"{entry.kind} {entry.arch}"):
            return re.search(r"tag (\d+)", text).group(1)
    return "?"


def predict(path, gpu: Arch, driver: int, case: dict, warm: bool):
    env = case["env"]
    sel = select_entry(path, gpu, driver=driver, force_ptx_jit=env.get("CUDA_FORCE_PTX_JIT") == "1",
                       disable_ptx_jit=env.get("CUDA_DISABLE_PTX_JIT") == "1", jit_cache=warm)  # fmt: skip
    return (f"TAG {tag_of(sel.entry, case)}" if sel else "ERROR"), sel


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_fallback_matches_the_driver(device, driver_version, report, tmp_path, case, mode):
    path = DATA / "fallback" / case["file"]
    gpu = Arch(*device.compute_capability)
    env = dict(case["env"])
    if mode == "cache disabled":
        env["CUDA_CACHE_DISABLE"] = "1"
    else:
        cache = {"CUDA_CACHE_PATH": str(tmp_path / "cache"), "CUDA_CACHE_DISABLE": "0"}
        run_fatbin_subprocess(path, cache)  # warm: the same fatbin, without the case's variables
        env.update(cache)
    observed = run_fatbin_subprocess(path, env)
    predicted, sel = predict(path, gpu, driver_version, case, mode == "cache warm")
    report.add(case=f"{case['case']} [{mode}]", entries=", ".join(case["entries"]),
               env=" ".join(f"{k}={v}" for k, v in case["env"].items()), predicted=predicted, reason=sel.reason,
               observed=observed)  # fmt: skip
    assert observed.split()[0] == predicted.split()[0] and (predicted == "ERROR" or observed == predicted), (
        f"{case['case']} [{mode}]: model says {predicted} ({sel.reason}), driver did {observed}"
    )
