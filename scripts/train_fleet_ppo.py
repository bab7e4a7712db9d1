#!/usr/bin/env python3
"""Trains the PPO dispatcher for greensched/FleetDispatch-v0 and exports it for numpy.

MaskablePPO (sb3-contrib) with invalid (site, start hour) actions masked out, on CPU, within a
wall-clock and a CPU-time limit. Each episode is a short window (--days) starting on a random
day of the training windows (--train-windows) with a random training seed (--train-seeds); the
evaluation windows and seeds (scripts/eval_fleet_ppo.py) are others. Writes the trained actor
as OUT.npz (observation normalisation and weights, read by
greensched.examples.fleet_ppo.NumpyPolicy without torch), the full sb3 model as OUT.zip unless
--no-zip, and OUT.json (options, steps, wall and CPU seconds, machine).

  make rl                         # the venv with torch, sb3-contrib, gymnasium, the module
  build-rl/venv/bin/python scripts/train_fleet_ppo.py --out models/fleet_ppo --minutes 25
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import resource
import sys
import time
from typing import Any, Dict, List


def cpu_seconds() -> float:
    """CPU seconds of this process and its children (user + system)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def window_days(start: str, days: float, length: int = 14) -> List[str]:
    """The start days inside a `length`-day window from which a `days`-long episode fits."""
    d0 = dt.date.fromisoformat(start)
    return [str(d0 + dt.timedelta(days=i)) for i in range(0, max(1, int(length - days) + 1))]


def make_env_fn(env_kwargs: Dict[str, Any], starts: List[str], seeds: List[int], rank: int):
    """A factory for one training environment: FleetDispatch-v0, re-made on each reset with a
    random start day and seed, its observation flattened, its action mask exposed."""
    import gymnasium as gym
    from sb3_contrib.common.wrappers import ActionMasker

    import greensched.envs  # noqa: F401  (registers greensched/FleetDispatch-v0)

    class RandomWindow(gym.Env):
        def __init__(self) -> None:
            self.rng = random.Random(1000 + rank)
            self.env = self._make()
            self.observation_space = self.env.observation_space
            self.action_space = self.env.action_space

        def _make(self):
            kw = dict(env_kwargs)
            kw["start"] = self.rng.choice(starts)
            env = gym.make("greensched/FleetDispatch-v0", **kw)
            if isinstance(env.observation_space, gym.spaces.Dict):
                env = gym.wrappers.FlattenObservation(env)
            return env

        def reset(self, *, seed=None, options=None):
            self.env.close()
            self.env = self._make()
            return self.env.reset(seed=self.rng.choice(seeds))

        def step(self, action):
            return self.env.step(action)

        def action_masks(self):
            return self.env.unwrapped.action_masks()

    def fn():
        return ActionMasker(RandomWindow(), lambda e: e.action_masks())

    return fn


def export_npz(model: Any, vecnorm: Any, path: str, meta: Dict[str, Any]) -> None:
    """The actor of a MaskablePPO MlpPolicy (and VecNormalize's observation statistics) as
    arrays w0, b0, w1, b1, ... (the last layer gives the action logits) and a JSON `meta`."""
    import numpy as np
    import torch as th

    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, th.nn.Linear)]
    linears.append(policy.action_net)
    arrays = {}
    for i, lin in enumerate(linears):
        arrays[f"w{i}"] = lin.weight.detach().cpu().numpy().astype(np.float32)
        arrays[f"b{i}"] = lin.bias.detach().cpu().numpy().astype(np.float32)
    n_obs = linears[0].in_features
    if vecnorm is not None and vecnorm.norm_obs:
        arrays["obs_mean"] = vecnorm.obs_rms.mean.astype(np.float64)
        arrays["obs_var"] = vecnorm.obs_rms.var.astype(np.float64)
        meta.update(obs_epsilon=float(vecnorm.epsilon), clip_obs=float(vecnorm.clip_obs))
    else:
        arrays["obs_mean"] = np.zeros(n_obs)
        arrays["obs_var"] = np.ones(n_obs)
        meta.update(obs_epsilon=0.0, clip_obs=float("inf"))
    act = policy.activation_fn
    meta["activation"] = {th.nn.Tanh: "tanh", th.nn.ReLU: "relu"}[act]
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez_compressed(path, **arrays)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="models/fleet_ppo", help="OUT.npz, OUT.json (and OUT.zip)")
    p.add_argument("--minutes", type=float, default=25, help="wall-clock limit of training")
    p.add_argument("--cpu-minutes", type=float, default=30, help="CPU-time limit of training")
    p.add_argument("--timesteps", type=int, default=3_000_000, help="most dispatch decisions")
    p.add_argument("--train-windows", default="2023-01-01,2023-07-01")
    p.add_argument("--train-seeds", default="1-20")
    p.add_argument("--days", type=float, default=1.0, help="days of one training episode")
    p.add_argument("--env-kwargs", default="{}", help="JSON: more FleetDispatch-v0 options")
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--n-steps", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--gamma", type=float, default=0.9)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--net", default="64,64", help="hidden layer sizes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-zip", action="store_true", help="do not write the sb3 model OUT.zip")
    args = p.parse_args()

    import numpy as np
    import torch as th
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    th.set_num_threads(1)
    seeds: List[int] = []
    for part in args.train_seeds.split(","):
        a, _, b = part.partition("-")
        seeds += list(range(int(a), int(b or a) + 1))
    starts = [d for w in args.train_windows.split(",") for d in window_days(w, args.days)]
    env_kwargs = dict(json.loads(args.env_kwargs), days=args.days)
    venv = DummyVecEnv([make_env_fn(env_kwargs, starts, seeds, i) for i in range(args.n_envs)])
    venv = VecNormalize(venv, norm_obs=True, norm_reward=True, gamma=args.gamma)

    net = [int(x) for x in args.net.split(",")]
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        gamma=args.gamma,
        learning_rate=args.lr,
        ent_coef=args.ent_coef,
        policy_kwargs=dict(net_arch=dict(pi=net, vf=net)),
        seed=args.seed,
        device="cpu",
        verbose=0,
    )

    wall0, cpu0 = time.monotonic(), cpu_seconds()
    log: List[Dict[str, float]] = []

    class Limits(BaseCallback):
        def _on_step(self) -> bool:
            wall, cpu = time.monotonic() - wall0, cpu_seconds() - cpu0
            return wall < args.minutes * 60 and cpu < args.cpu_minutes * 60

        def _on_rollout_end(self) -> None:
            ep = [e["r"] for e in self.model.ep_info_buffer] if self.model.ep_info_buffer else []
            row = dict(
                steps=self.num_timesteps,
                wall_s=round(time.monotonic() - wall0, 1),
                cpu_s=round(cpu_seconds() - cpu0, 1),
                ep_return=float(np.mean(ep)) if ep else float("nan"),
            )
            log.append(row)
            if len(log) % 10 == 1:
                print(json.dumps(row), file=sys.stderr, flush=True)

    model.learn(total_timesteps=args.timesteps, callback=Limits())
    wall, cpu = time.monotonic() - wall0, cpu_seconds() - cpu0

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    meta = dict(
        algorithm="MaskablePPO (sb3-contrib)",
        env_id="greensched/FleetDispatch-v0",
        env_kwargs={k: v for k, v in env_kwargs.items() if k not in ("start", "days")},
        train_windows=args.train_windows.split(","),
        train_seeds=args.train_seeds,
        train_days=args.days,
        timesteps=int(model.num_timesteps),
        wall_seconds=round(wall, 1),
        cpu_seconds=round(cpu, 1),
        hyperparameters=dict(
            n_envs=args.n_envs,
            n_steps=args.n_steps,
            batch_size=args.batch_size,
            epochs=args.epochs,
            gamma=args.gamma,
            lr=args.lr,
            ent_coef=args.ent_coef,
            net=net,
            seed=args.seed,
        ),
        machine=f"{platform.machine()} {os.cpu_count()} CPUs, {platform.python_version()}, "
        f"torch {th.__version__}",
    )
    export_npz(model, venv, args.out + ".npz", dict(meta))
    if not args.no_zip:
        model.save(args.out + ".zip")
    meta["log"] = log
    with open(args.out + ".json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    print(
        f"trained {model.num_timesteps} steps in {wall:.0f} s wall, {cpu:.0f} s CPU: {args.out}.npz",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
