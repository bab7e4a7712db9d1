"""Policies written in Python: the contract (one call per pod, the feasible nodes' features,
scores back, the scheduler's tie-break and normalisation), errors, and the numpy FGD of
greensched.examples.fgd against the built-in FGD."""

from __future__ import annotations

import time

import numpy as np
import pytest

import greensched
from greensched.examples.fgd import FGD


def _placements(result):
    return [(r["pod"], r["chosen_node"], r["chosen_gpus"]) for r in result["records"]]


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


def test_numpy_fgd_speed():
    # CPU time, best of three of each, so that a busy machine skews the ratio less.
    def best_time(policy):
        times = []
        for _ in range(3):
            start = time.process_time()
            r = greensched.simulate(policy, seeds=42, jobs=1)
            times.append(time.process_time() - start)
        return min(times), r

    builtin_s, builtin = best_time("fgd")
    numpy_s, numpy_fgd = best_time(FGD())
    ratio = numpy_s / builtin_s
    print(f"built-in fgd {builtin_s:.3f} s, numpy FGD {numpy_s:.3f} s: {ratio:.1f}x")
    assert numpy_fgd["summary"]["pods_scheduled"][0] == builtin["summary"]["pods_scheduled"][0]
    # A regression bound, far from the 5x aimed at: about 55-60x measured in CPU time. The
    # built-in FGD spends about 3.5 microseconds a pod (it scores one node per class of
    # identical nodes); one call into Python with the candidates' arrays costs about 10, and
    # numpy on each node state not seen before about 60 more.
    assert ratio <= 120
