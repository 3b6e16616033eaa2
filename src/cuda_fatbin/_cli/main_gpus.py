# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin gpus``: the GPU names ``--gpu`` takes (data/nvidia.json), with capability, Tegra or desktop."""

from __future__ import annotations

import argparse

from ._common import _table, add_command


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``gpus`` subcommand's options."""
    p = add_command(subparsers, "gpus", help="the GPU names --gpu takes, with compute capability, Tegra or desktop")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The GPU table (data/nvidia.json): the names --gpu takes, case- and space-insensitively."""
    from .._nvidia import capabilities, gpu_names

    rows = []
    for name, aliases, cap, tegra in gpu_names():
        row = capabilities().get(cap, {})
        window = f"CUDA {row['first_cuda']}+" if row.get("first_cuda") else ""
        if row.get("last_branch"):
            window += f"{'; ' if window else ''}drivers up to R{row['last_branch']}"
        rows.append((name, ", ".join(aliases), cap.capability, "Tegra" if tegra else "desktop", window))
    _table(["name", "also", "capability", "kind", "driver"], rows, wide=False)
    print("\nJetson AGX Thor is 10.1 (sm_101) under CUDA 12.8-12.9 drivers; CUDA 13 renamed it 11.0 (sm_110).")
    print("Sources per row: src/cuda_fatbin/data/nvidia.json; the rules: docs/selection.md")
    return 0
