"""Policies written in Python: the contract (one call per pod, the feasible nodes' features,
scores back, the scheduler's tie-break and normalisation), errors, one row per class of
identical nodes with `reads`, the interned `state` column, and the numpy FGD of
greensched.examples.fgd against the built-in FGD. Its speed is measured by
bench/python_policy_speed.py, not here."""

from __future__ import annotations

import numpy as np
import pytest

import greensched
from greensched.examples.fgd import FGD


def _placements(result):
    return [(r["pod"], r["chosen_node"], r["chosen_gpus"]) for r in result["records"]]


def _assert_same_run(a, b):
    """Equal figures, curves and GPU occupancy (every GPU's use at the snapshot)."""
    for table, skip in (("summary", {"policy", "wall_seconds"}), ("curves", {"policy"})):
        for column in a[table]:
            if column not in skip:
                np.testing.assert_array_equal(a[table][column], b[table][column], err_msg=column)
    assert a["occupancy"].rows > 1000
    for column in ("node", "gpu", "used_milli"):
        assert a["occupancy"][column].tolist() == b["occupancy"][column].tolist()


def test_called_once_per_pod_with_feasible_nodes(small_cluster):
    nodes, pods = small_cluster
    calls = []

    def last_node(pod, n):
        calls.append((pod["name"], n["node"].tolist(), n["gpu_free_milli"].tolist()))
        return n["node"]  # the highest node index wins

    r = greensched.simulate(last_node, seeds=42, tune=1.0, nodes=nodes, pods=pods, record=True)
    # Inflation draws pods until 1.0 x the 4 GPUs are requested; every one fits somewhere.
    placed = _placements(r)
    assert len(calls) == len(placed) == r["summary"]["pods_arrived"][0]
    assert all(node_list == [0, 1] for _, node_list, _ in calls[:1])
    # Node n1 takes pods until it is full, then n0.
    first_on_n0 = next(i for i, p in enumerate(placed) if p[1] == "n0")
    assert all(p[1] == "n1" for p in placed[:first_on_n0])
    for (name, node_list, free), (pod, _, _) in zip(calls, placed):
        assert name == pod
        assert len(free) == len(node_list) and all(len(row) == 2 for row in free)


def test_gpu_choice_and_min_max(small_cluster):
    nodes, pods = small_cluster

    def second_gpu(pod, n):
        return np.zeros(len(n["node"])), np.ones(len(n["node"]), dtype=int)

    r = greensched.simulate(second_gpu, seeds=42, tune=0.3, nodes=nodes, pods=pods, record=True)
    for rec in r["records"]:
        if rec["request"]["num_gpu"] == 1 and rec["request"]["gpu_milli"] < 1000:
            assert rec["chosen_gpus"] == [1]
    # Min-max normalisation maps the scores to 0..100, as for BestFit.
    greensched.register_policy(
        "by-cpu", lambda pod, n: n["cpu_free_milli"] * 7, normalize="min-max"
    )
    r = greensched.simulate("by-cpu", seeds=42, tune=1.0, nodes=nodes, pods=pods, record=True)
    for rec in r["records"]:
        scores = [c["score"] for c in rec["candidates"]]
        assert all(0 <= s <= 100 for s in scores)
        if len(set(c["terms"][0]["raw"] for c in rec["candidates"])) > 1:
            assert max(scores) == 100 and min(scores) == 0


def test_errors_come_back_as_python_exceptions(small_cluster):
    nodes, pods = small_cluster

    def broken(pod, n):
        raise KeyError("no such feature")

    with pytest.raises(KeyError, match="no such feature"):
        greensched.simulate(broken, seeds=42, nodes=nodes, pods=pods)

    def wrong_length(pod, n):
        return np.zeros(len(n["node"]) + 1)

    with pytest.raises(ValueError, match="returned 3 scores for 2 candidate nodes"):
        greensched.simulate(wrong_length, seeds=42, nodes=nodes, pods=pods)

    def bad_gpu(pod, n):
        return np.zeros(len(n["node"])), np.full(len(n["node"]), 5)

    with pytest.raises(ValueError, match="chose GPU 5"):
        greensched.simulate(bad_gpu, seeds=42, nodes=nodes, pods=pods)
    # The module is usable after an error.
    assert greensched.simulate("fgd", seeds=42, nodes=nodes, pods=pods)["summary"].rows == 1


def test_python_policy_in_a_mix_and_in_replay(small_cluster):
    nodes, pods = small_cluster
    greensched.register_policy("first", lambda pod, n: -n["node"])
    r = greensched.simulate("first:100+fgd:1", seeds=42, tune=1.0, nodes=nodes, pods=pods)
    assert r["summary"]["policy"].tolist() == ["first:100+fgd:1"]
    r = greensched.replay(["first"], load=30, days=0.5, warmup_days=0)
    assert r["summary"]["pods_started"][0] > 0


def test_numpy_fgd_matches_builtin_fgd_on_the_default_trace():
    builtin = greensched.simulate("fgd", seeds=42, record=True)
    numpy_fgd = greensched.simulate(FGD(), seeds=42, record=True)
    assert _placements(numpy_fgd) == _placements(builtin)
    for column in (
        "pods_scheduled",
        "pods_failed",
        "alloc_gpu_pct_at_100",
        "frag_gpu_milli_at_100",
    ):
        assert numpy_fgd["summary"][column].tolist() == builtin["summary"][column].tolist()
    # And the scores themselves.
    for a, b in zip(numpy_fgd["records"][:500], builtin["records"][:500]):
        assert [c["score"] for c in a["candidates"]] == [c["score"] for c in b["candidates"]]
    # Without record the scheduler passes one row per class of identical nodes (FGD.reads).
    _assert_same_run(
        greensched.simulate("fgd", seeds=42, snapshot_at=125),
        greensched.simulate(FGD(), seeds=42, snapshot_at=125),
    )


class _CpuThenGpu:
    """Prefers the most free CPU, then the most free GPU share; counts its rows."""

    def __init__(self, reads=None):
        self.rows, self.calls, self.keys = 0, 0, set()
        if reads is not None:
            self.reads = reads

    def __call__(self, pod, n):
        self.calls += 1
        self.rows += len(n["node"])
        self.keys.add(tuple(sorted(n)))
        return n["cpu_free_milli"] * 10000 + n["gpu_free_milli"].sum(1)


def test_reads_gives_one_row_per_class_with_the_same_decisions():
    # The default cluster has 1523 nodes: enough for the scheduler to group identical nodes.
    per_node = _CpuThenGpu()
    by_class = _CpuThenGpu(reads=["cpu_free_milli", "gpu_free_milli"])
    # Without record: recording scores every node, so the scheduler groups nodes only then.
    a = greensched.simulate(per_node, seeds=42, snapshot_at=125)
    b = greensched.simulate(by_class, seeds=42, snapshot_at=125)
    _assert_same_run(a, b)
    assert per_node.calls == by_class.calls > 8000
    # Far fewer rows, and only the columns read (and node).
    assert by_class.rows < per_node.rows / 1.5
    assert by_class.keys == {("cpu_free_milli", "gpu_free_milli", "node")}
    assert "state" in next(iter(per_node.keys)) and "version" in next(iter(per_node.keys))


def test_state_ids_name_distinct_node_states():
    seen = {}  # state id -> (model, gpu_count, free CPU, free GPU shares sorted)

    def record_states(pod, n):
        free = -np.sort(-n["gpu_free_milli"], 1)
        rows = zip(n["state"].tolist(), n["model"].tolist(), n["gpu_count"].tolist())
        for i, (state, model, count) in enumerate(rows):
            key = (model, count, max(int(n["cpu_free_milli"][i]), 0), tuple(free[i].tolist()))
            assert seen.setdefault(state, key) == key  # an id keeps its state all run long
        return np.zeros(len(n["node"]))

    record_states.reads = ["state", "model", "gpu_count", "cpu_free_milli", "gpu_free_milli"]
    greensched.simulate(record_states, seeds=42, tune=0.3)
    # And distinct states have distinct ids.
    assert len(set(seen.values())) == len(seen) > 10


def test_reads_errors(small_cluster):
    nodes, pods = small_cluster

    def policy(pod, n):
        return np.zeros(len(n["node"])), np.zeros(len(n["node"]), dtype=int)

    policy.reads = ["cpu_free_milli", "versions"]
    with pytest.raises(greensched.Error, match="reads names 'versions'"):
        greensched.register_policy("bad-reads", policy)
    policy.reads = ["version"]
    with pytest.raises(greensched.Error, match="reads names 'version'"):
        greensched.register_policy("bad-reads", policy)
    # GPU choices per row would name the class's first node, not the node chosen.
    policy.reads = ["cpu_free_milli"]
    with pytest.raises(ValueError, match="with reads, choose GPUs with select_gpu"):
        greensched.simulate(policy, seeds=42, nodes=nodes, pods=pods)
