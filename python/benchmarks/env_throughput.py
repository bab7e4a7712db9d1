"""Steps per second of greensched/ClusterPlacement-v0 with random valid actions, one process.

    PYTHONPATH=build/python build/venv/bin/python python/benchmarks/env_throughput.py \
        [--nodes NODES.csv --pods PODS.csv] [--steps 200000] [--seed 42]

Without --nodes/--pods it uses the openb GPU node list and default pod list from
../shared/data/openb where present, else the built-in workload (the same 1213 nodes). Prints
steps/s for the environment itself (copied and in-place observations) and through gym.make's
wrappers; every step draws a uniformly random node among those the pod fits.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import gymnasium as gym
import numpy as np

import greensched  # noqa: F401  (registers the environment)
from greensched.envs import ClusterPlacementEnv

DATA = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data" / "openb"


def run(env, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    episodes = 0
    start = time.perf_counter()
    for _ in range(steps):
        feasible = np.flatnonzero(info["action_mask"])
        _, _, terminated, _, info = env.step(int(feasible[rng.integers(feasible.size)]))
        if terminated:
            episodes += 1
            _, info = env.reset()
    return steps / (time.perf_counter() - start), episodes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes")
    p.add_argument("--pods")
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=42)
    a = p.parse_args()
    nodes, pods = a.nodes, a.pods
    if nodes is None and pods is None and (DATA / "openb_pod_list_default.csv").exists():
        nodes = DATA / "openb_node_list_gpu_node.csv"
        pods = DATA / "openb_pod_list_default.csv"
    where = f"{nodes}, {pods}" if nodes else "built-in workload"
    for label, make in [
        ("ClusterPlacementEnv", lambda: ClusterPlacementEnv(nodes, pods)),
        (
            "ClusterPlacementEnv copy_obs=False",
            lambda: ClusterPlacementEnv(nodes, pods, copy_obs=False),
        ),
        (
            "gym.make (checker wrappers)",
            lambda: gym.make("greensched/ClusterPlacement-v0", nodes=nodes, pods=pods),
        ),
    ]:
        env = make()
        n = env.action_space.n
        rate, episodes = run(env, a.steps, a.seed)
        print(
            f"{label}: {rate:,.0f} steps/s ({a.steps} steps, {episodes} episodes, {n} nodes, {where})"
        )


if __name__ == "__main__":
    main()
