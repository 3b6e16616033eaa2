# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Jobs on a dask.distributed cluster: the same bytes as a local compile, and cheap to ship."""

from __future__ import annotations

import pickle

import pytest

from cuda_fatbin import Program, plan_fatbin

from fatbin_testing import KERNEL_SRC, plain

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed: pip install -e '.[dask]'")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_cluster_compiles_the_same_bytes(client):
    archs = ["sm_75", "sm_80", "sm_86", "sm_90"]
    local = Program(KERNEL_SRC, "c++").compile("fatbin", ["scale<float>"], archs=archs)
    remote = Program(KERNEL_SRC, "c++").compile("fatbin", ["scale<float>"], archs=archs,
                                                executor=client.get_executor())  # fmt: skip
    local_plain = plain(local)
    remote_plain = plain(remote)
    assert remote_plain.code == local_plain.code
    local_plain = plain(local)
    remote_plain = plain(remote)
    assert remote_plain.symbol_mapping == local_plain.symbol_mapping


def test_jobs_pickle_cheaply():
    """A job names its archs and options; the source travels once per job as its own argument."""
    plan = plan_fatbin(["sm_80", "sm_90"])
    for job in plan.jobs:
        assert len(pickle.dumps(job)) < 1024
