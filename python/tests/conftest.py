"""Fixtures of the greensched Python tests: the command-line binary to compare with, and small
hand-made clusters."""

from __future__ import annotations

import os
import pathlib

import pytest


@pytest.fixture(scope="session")
def cli() -> str:
    """The greensched binary ($GREENSCHED_CLI), for tests that compare with the command line."""
    path = os.environ.get("GREENSCHED_CLI", "")
    if not path or not os.access(path, os.X_OK):
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but GREENSCHED_CLI does not name the greensched binary")
        pytest.skip("GREENSCHED_CLI does not name the greensched binary")
    return path


@pytest.fixture()
def small_cluster(tmp_path: pathlib.Path):
    """Two identical 2-GPU T4 nodes and four pods: two sharing pods, a whole-GPU pod and a
    CPU-only pod. Returns (nodes.csv, pods.csv)."""
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n" "n0,32000,65536,2,T4\n" "n1,32000,65536,2,T4\n"
    )
    pods = tmp_path / "pods.csv"
    pods.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
        "p0,1000,1024,1,500\n"
        "p1,1000,1024,1,300\n"
        "p2,2000,2048,1,1000\n"
        "p3,4000,4096,0,0\n"
    )
    return nodes, pods
