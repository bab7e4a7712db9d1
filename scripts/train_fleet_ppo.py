#!/usr/bin/env python3
"""Trains the PPO dispatcher for greensched/FleetDispatch-v0 and exports it for numpy.

MaskablePPO (sb3-contrib) with invalid (site, start hour) actions masked out, on CPU, within a
wall-clock and a CPU-time limit for everything (data, cloning, PPO). The environment is made
with reward="dispatch-carbon" (--reward): each dispatch is charged at once with the carbon its
job is expected to emit at the chosen site and start, so a decision's credit is immediate
(the measured reward, minus the fleet's carbon between decisions, reaches a dispatch only
over the hours its job runs, thousands of decisions later); with that reward PPO runs with
gamma 0, as a contextual bandit. And with room=True (unless --no-room): the mask keeps every
job where the site has room for it as green judges it, so that its choices do not crowd a site's
LS jobs into SLO violations (--ls-home further keeps LS jobs at home, as local does). The
policy starts as a copy of an expert agent (--expert, default green): its decisions on
--bc-steps jobs (those the mask allows) are cloned into the actor (cross-entropy over the
masked actions) and the discounted returns into the critic, then PPO improves it on the
reward. Each episode is a --days window (after --warmup-days) starting on a random day of
the training windows (--train-windows) with a random training seed (--train-seeds); the
evaluation windows and seeds (scripts/eval_fleet_ppo.py) are others. Writes the trained
actor as OUT.npz (observation normalisation and weights, read by
greensched.examples.fleet_ppo.NumpyPolicy without torch), the policy cloned before PPO as
OUT_bc.npz, the full sb3 model as OUT.zip unless --no-zip, and OUT.json (options, steps,
wall and CPU seconds, machine).

  make rl                         # the venv with torch, sb3-contrib, gymnasium, the module
  build-rl/venv/bin/python scripts/train_fleet_ppo.py --out models/fleet_ppo --minutes 25 \
      --bc-steps 150000 --bc-epochs 8 --net 128,64
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


# The fleet of the evaluation (scripts/eval_fleet_ppo.py, scripts/fleet-seasons.py): paths from
# the repository root.
FLEET = {
    "fleet": "examples/fleet-4-regions.json",
    "data_dir": "../shared/data",
    "pods": "../shared/data/openb/openb_pod_list_default.csv",
    "load": 70,
    "slack": 12,
    "power_down_idle": 1800,
}


def cpu_seconds() -> float:
    """CPU seconds of this process and its children (user + system)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def window_days(start: str, days: float, length: int = 14) -> List[str]:
    """The start days inside a `length`-day window from which a `days`-long episode fits."""
    d0 = dt.date.fromisoformat(start)
    return [str(d0 + dt.timedelta(days=i)) for i in range(0, max(1, int(length - days) + 1))]


def expert_action(env: Any, info: Dict[str, Any]) -> int:
    """The expert agent's choice for the offered job (the env made with expert=...)."""
    if "expert_action" in info:
        return int(info["expert_action"])
    return int(env.unwrapped.expert_action())


def make_env_fn(
    env_kwargs: Dict[str, Any], starts: List[str], seeds: List[int], rank: int, norm=None
):
    """A factory for one training environment: FleetDispatch-v0, re-made on each reset with a
    random start day and seed, its observation flattened (and normalised with `norm`: mean,
    variance, epsilon, clip), its action mask exposed."""
    import gymnasium as gym
    import numpy as np
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
            if norm is not None:
                mean, var, eps, clip = norm
                std = np.sqrt(var + eps)
                env = gym.wrappers.TransformObservation(
                    env,
                    lambda o: np.clip((o - mean) / std, -clip, clip).astype(np.float32),
                    gym.spaces.Box(-clip, clip, mean.shape, np.float32),
                )
            return env

        def reset(self, *, seed=None, options=None):
            self.env.close()
            self.env = self._make()
            return self.env.reset(seed=self.rng.choice(seeds))

        def expert_action(self, info):
            return expert_action(self.env, info)

        def step(self, action):
            return self.env.step(action)

        def action_masks(self):
            return self.env.unwrapped.action_masks()

    def fn():
        return ActionMasker(RandomWindow(), lambda e: e.action_masks())

    return fn


def export_npz(model: Any, norm: Any, path: str, meta: Dict[str, Any]) -> None:
    """The actor of a MaskablePPO MlpPolicy and the observation normalisation `norm` (mean,
    variance, epsilon, clip) as arrays w0, b0, w1, b1, ... (the last layer gives the action
    logits), obs_mean, obs_var and a JSON `meta`."""
    import numpy as np
    import torch as th

    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, th.nn.Linear)]
    linears.append(policy.action_net)
    arrays = {}
    for i, lin in enumerate(linears):
        arrays[f"w{i}"] = lin.weight.detach().cpu().numpy().astype(np.float32)
        arrays[f"b{i}"] = lin.bias.detach().cpu().numpy().astype(np.float32)
    mean, var, eps, clip = norm
    arrays["obs_mean"] = np.asarray(mean, dtype=np.float64)
    arrays["obs_var"] = np.asarray(var, dtype=np.float64)
    meta.update(obs_epsilon=float(eps), clip_obs=float(clip))
    act = policy.activation_fn
    meta["activation"] = {th.nn.Tanh: "tanh", th.nn.ReLU: "relu"}[act]
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez_compressed(path, **arrays)


def rollout(env: Any, steps: int, choose: Any):
    """Runs `env` for `steps` decisions from a fresh episode on (a new one after each that
    ends), `choose(env, info, mask, i)` picking the action of decision i: the observations
    (raw, flattened), masks, actions and rewards, and the decision counts at which an episode
    ended."""
    import numpy as np

    obs_l, mask_l, act_l, rew_l, ends = [], [], [], [], []
    done = True
    while len(act_l) < steps:
        if done:
            obs, info = env.reset()
        mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
        a = choose(env, info, mask, len(act_l))
        obs_l.append(np.asarray(obs, dtype=np.float32))
        mask_l.append(mask)
        act_l.append(a)
        obs, r, term, trunc, info = env.step(a)
        rew_l.append(float(r))
        done = bool(term or trunc)
        if done:
            ends.append(len(act_l))
    return np.array(obs_l), np.array(mask_l), np.array(act_l), rew_l, ends


def discounted_returns(rewards: List[float], ends: List[int], gamma: float):
    """The discounted return from each decision to the end of its episode (or of the rewards)."""
    import numpy as np

    rets: List[float] = []
    start = 0
    for end in ends + [len(rewards)]:
        g, seg = 0.0, []
        for r in reversed(rewards[start:end]):
            g = r + gamma * g
            seg.append(g)
        rets += seg[::-1]
        start = end
    return np.array(rets)


def collect_expert(make_env, steps: int, gamma: float):
    """Runs the expert on fresh episodes of `make_env()` for `steps` decisions: observations
    (raw, flattened), masks, the expert's actions and the discounted returns that followed."""
    obs, masks, actions, rewards, ends = rollout(
        make_env(), steps, lambda env, info, mask, i: env.unwrapped.expert_action(info)
    )
    return obs, masks, actions, discounted_returns(rewards, ends, gamma)


def clone(model, obs, masks, actions, returns, epochs: int, batch: int, lr: float) -> List[float]:
    """Behaviour cloning: the actor's masked cross-entropy on the expert's actions and the
    critic's squared error on the (standardised) returns, with Adam. Returns the accuracy on
    the data after each epoch."""
    import numpy as np
    import torch as th

    policy = model.policy
    opt = th.optim.Adam(policy.parameters(), lr=lr)
    o, m = th.as_tensor(obs), th.as_tensor(masks)
    a, r = th.as_tensor(actions), th.as_tensor(returns, dtype=th.float32)
    rng = np.random.default_rng(0)
    acc = []
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(len(a)), max(1, len(a) // batch)):
            idx = th.as_tensor(idx)
            values, logp, _ = policy.evaluate_actions(o[idx], a[idx], action_masks=m[idx])
            loss = -logp.mean() + 0.5 * ((values.flatten() - r[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with th.no_grad():
            dist = policy.get_distribution(o, action_masks=m)
            acc.append(float((dist.distribution.probs.argmax(1) == a).float().mean()))
    return acc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="models/fleet_ppo", help="OUT.npz, OUT.json (and OUT.zip)")
    p.add_argument("--minutes", type=float, default=25, help="wall-clock limit of training")
    p.add_argument("--cpu-minutes", type=float, default=30, help="CPU-time limit of training")
    p.add_argument("--timesteps", type=int, default=3_000_000, help="most PPO decisions")
    p.add_argument("--train-windows", default="2023-01-01,2023-07-01")
    p.add_argument("--train-seeds", default="1-20")
    p.add_argument("--days", type=float, default=2, help="days of one training episode")
    p.add_argument("--warmup-days", type=float, default=0.5)
    p.add_argument(
        "--reward",
        default="dispatch-carbon",
        help="FleetDispatch-v0 reward: dispatch-carbon (each job's expected kg at the chosen "
        "site and start, charged at once) or carbon (the fleet's kg between decisions)",
    )
    p.add_argument(
        "--no-room",
        action="store_true",
        help="do not mask to where the site has room (FleetDispatch-v0's room option)",
    )
    p.add_argument(
        "--env-kwargs",
        default=json.dumps(FLEET),
        help="JSON: FleetDispatch-v0 options (default: the 4-region fleet, openb pods, 70 %% load)",
    )
    p.add_argument("--expert", default="green", help="agent to clone first, or none")
    p.add_argument("--bc-steps", type=int, default=60_000, help="expert decisions to clone")
    p.add_argument("--bc-epochs", type=int, default=10)
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--n-steps", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--gamma", type=float, default=0.0)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--net", default="64,64", help="hidden layer sizes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-zip", action="store_true", help="do not write the sb3 model OUT.zip")
    p.add_argument(
        "--ls-home",
        action="store_true",
        help="the exported policy starts an LS job now at its home site (as local does) and "
        "decides only where and when BE jobs run",
    )
    args = p.parse_args()

    import numpy as np
    import torch as th
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor, VecNormalize

    th.set_num_threads(1)
    th.manual_seed(args.seed)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    wall0, cpu0 = time.monotonic(), cpu_seconds()
    seeds: List[int] = []
    for part in args.train_seeds.split(","):
        a, _, b = part.partition("-")
        seeds += list(range(int(a), int(b or a) + 1))
    starts = [d for w in args.train_windows.split(",") for d in window_days(w, args.days)]
    env_kwargs = dict(json.loads(args.env_kwargs), days=args.days, warmup_days=args.warmup_days)
    env_kwargs.update(reward=args.reward, room=not args.no_room)
    if args.ls_home:
        env_kwargs["ls_home"] = True
    expert = None if args.expert in ("", "none") else args.expert
    log: List[Dict[str, float]] = []

    def stamp(what: str, **more: Any) -> None:
        row = dict(
            what=what,
            wall_s=round(time.monotonic() - wall0, 1),
            cpu_s=round(cpu_seconds() - cpu0, 1),
            **more,
        )
        log.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)

    # Observation normalisation (fixed, shipped with the policy) from expert or random runs.
    data = None
    if expert:
        kw = dict(env_kwargs, expert=expert)
        data = collect_expert(make_env_fn(kw, starts, seeds, 99), args.bc_steps, args.gamma)
        obs = data[0]
        stamp("expert data", decisions=len(obs))
    else:
        # Random valid actions, the i-th drawn with seed i + 1.
        obs = rollout(
            make_env_fn(env_kwargs, starts, seeds, 99)(),
            20_000,
            lambda env, info, mask, i: int(
                np.random.default_rng(i + 1).choice(np.flatnonzero(mask))
            ),
        )[0]
    norm = (obs.mean(0), obs.var(0), 1e-8, 10.0)

    venv = DummyVecEnv(
        [make_env_fn(env_kwargs, starts, seeds, i, norm) for i in range(args.n_envs)]
    )
    venv = VecNormalize(VecMonitor(venv), norm_obs=False, norm_reward=True, gamma=args.gamma)
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
    if data is not None:
        o, masks, actions, returns = data
        # Only the expert's choices the mask allows (green may move an LS job where ls_home
        # keeps it at home).
        keep = masks[np.arange(len(actions)), actions]
        o, masks, actions, returns = o[keep], masks[keep], actions[keep], returns[keep]
        mean, var, eps, clip = norm
        o = np.clip((o - mean) / np.sqrt(var + eps), -clip, clip).astype(np.float32)
        returns = ((returns - returns.mean()) / (returns.std() + 1e-8)).astype(np.float32)
        acc = clone(model, o, masks, actions, returns, args.bc_epochs, 256, 1e-3)
        stamp("cloned", accuracy=[round(x, 3) for x in acc])
        bc_meta = dict(
            algorithm=f"behaviour cloning of {expert}",
            env_id="greensched/FleetDispatch-v0",
            env_kwargs={
                k: v for k, v in env_kwargs.items() if k not in ("start", "days", "warmup_days")
            },
        )
        export_npz(model, norm, args.out + "_bc.npz", bc_meta)

    class Limits(BaseCallback):
        def _on_step(self) -> bool:
            wall, cpu = time.monotonic() - wall0, cpu_seconds() - cpu0
            return wall < args.minutes * 60 and cpu < args.cpu_minutes * 60

        def _on_rollout_end(self) -> None:
            ep = [e["r"] for e in self.model.ep_info_buffer] if self.model.ep_info_buffer else []
            stamp(
                "ppo",
                steps=self.num_timesteps,
                ep_return=float(np.mean(ep)) if ep else None,
            )

    model.learn(total_timesteps=args.timesteps, callback=Limits())
    wall, cpu = time.monotonic() - wall0, cpu_seconds() - cpu0

    meta = dict(
        algorithm="MaskablePPO (sb3-contrib)" + (f", cloned from {expert} first" if expert else ""),
        env_id="greensched/FleetDispatch-v0",
        env_kwargs={k: v for k, v in env_kwargs.items() if k not in ("start", "days")},
        train_windows=args.train_windows.split(","),
        train_seeds=args.train_seeds,
        train_days=args.days,
        expert=expert,
        bc_decisions=0 if data is None else int(len(data[2])),
        ppo_timesteps=int(model.num_timesteps),
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
        machine=f"{platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"torch {th.__version__}",
    )
    meta["env_kwargs"].pop("warmup_days", None)
    probe = venv.venv.venv.envs[0].unwrapped.env.unwrapped
    meta.update(ls_home=args.ls_home, sites=int(probe.n_sites), slots=int(probe.n_slots))
    export_npz(model, norm, args.out + ".npz", dict(meta))
    if not args.no_zip:
        model.save(args.out + ".zip")
    meta["log"] = log
    with open(args.out + ".json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    print(
        f"trained in {wall:.0f} s wall, {cpu:.0f} s CPU ({model.num_timesteps} PPO decisions): "
        f"{args.out}.npz",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
