"""Steps per second of greensched/FleetDispatch-v0 with random valid actions, one process.

    PYTHONPATH=BUILD/python python python/benchmarks/fleet_dispatch_steps.py [--steps N]
        [--fleet examples/fleet-4-regions.json --data-dir ../shared/data
         --pods ../shared/data/openb/openb_pod_list_default.csv --load 70 --days 14
         --start 2023-01-01]

Prints the steps, the seconds spent in step() (resets excluded, reported apart) and steps/s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from greensched.envs import FleetDispatchEnv


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=50000)
    p.add_argument("--fleet", default=None)
    p.add_argument("--data-dir", default=None, help="where the fleet's relative paths point")
    p.add_argument("--pods", default=None)
    p.add_argument("--load", type=float, default=None)
    p.add_argument("--days", type=float, default=None)
    p.add_argument("--start", default=None)
    p.add_argument("--seed", type=int, default=42)
    a = p.parse_args()
    env = FleetDispatchEnv(
        fleet=a.fleet, data_dir=a.data_dir, pods=a.pods, load=a.load, days=a.days, start=a.start
    )
    rng = np.random.default_rng(a.seed)
    t_reset = time.perf_counter()
    obs, info = env.reset(seed=a.seed)
    reset_s = time.perf_counter() - t_reset
    resets, steps, step_s = 1, 0, 0.0
    while steps < a.steps:
        mask = info["action_mask"]
        action = int(rng.choice(np.flatnonzero(mask)))
        t = time.perf_counter()
        obs, r, done, _, info = env.step(action)
        step_s += time.perf_counter() - t
        steps += 1
        if done:
            t = time.perf_counter()
            obs, info = env.reset(seed=a.seed + resets)
            reset_s += time.perf_counter() - t
            resets += 1
    print(
        f"steps {steps} in {step_s:.2f} s: {steps / step_s:,.0f} steps/s "
        f"(resets: {resets}, {reset_s:.2f} s; with resets {steps / (step_s + reset_s):,.0f} steps/s)"
    )


if __name__ == "__main__":
    main()
