"""The shipped PPO dispatcher for FleetDispatch-v0, run with numpy only (no torch).

``scripts/train_fleet_ppo.py`` trains a MaskablePPO policy (sb3-contrib, torch) and exports its
actor to a small ``.npz``: the observation normalisation (running mean and variance) and the
weights of the policy network. ``NumpyPolicy`` is that network's forward pass: normalise and
clip the flattened observation, tanh hidden layers, logits over the (site, start hour) actions,
invalid actions masked out, the most likely action taken (deterministic).

    import gymnasium as gym
    import greensched.envs  # registers greensched/FleetDispatch-v0
    from greensched.examples.fleet_ppo import NumpyPolicy, run_episode
    policy = NumpyPolicy.load("models/fleet_ppo.npz")
    env = gym.make("greensched/FleetDispatch-v0", **policy.env_kwargs(start="2023-04-01"))
    summary = run_episode(env, policy, seed=44)
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Optional

import numpy as np


def flatten_observation(space: Any, obs: Any) -> np.ndarray:
    """The observation as one float vector, as gymnasium's FlattenObservation makes it (the
    training wrapper), so that a policy sees the same layout here and in training."""
    import gymnasium as gym

    return np.asarray(gym.spaces.flatten(space, obs), dtype=np.float64)


class NumpyPolicy:
    """A masked MLP policy read from an exported ``.npz`` (see module docstring)."""

    def __init__(self, arrays: Dict[str, np.ndarray], meta: Dict[str, Any]) -> None:
        self.meta = meta
        self.obs_mean = arrays["obs_mean"].astype(np.float64)
        self.obs_std = np.sqrt(arrays["obs_var"].astype(np.float64) + float(meta["obs_epsilon"]))
        self.clip = float(meta["clip_obs"])
        self.layers = []
        i = 0
        while f"w{i}" in arrays:
            self.layers.append((arrays[f"w{i}"].astype(np.float64), arrays[f"b{i}"]))
            i += 1
        if not self.layers:
            raise ValueError("no layers (w0, b0, ...) in the policy file")
        acts = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}
        if meta["activation"] not in acts:
            raise ValueError(f"unknown activation {meta['activation']!r}")
        self.activation: Callable[[np.ndarray], np.ndarray] = acts[meta["activation"]]
        if self.obs_mean.shape[0] != self.layers[0][0].shape[1]:
            raise ValueError(
                f"observation size {self.obs_mean.shape[0]} does not match the first layer's "
                f"{self.layers[0][0].shape[1]} inputs"
            )

    @classmethod
    def load(cls, path: "os.PathLike[str] | str") -> "NumpyPolicy":
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays.pop("meta")))
        return cls(arrays, meta)

    @property
    def n_actions(self) -> int:
        return int(self.layers[-1][0].shape[0])

    def env_kwargs(self, **override: Any) -> Dict[str, Any]:
        """The environment options the policy was trained with (fleet, load, slack, ...), with
        `override` (e.g. another start or days) applied."""
        kwargs = dict(self.meta.get("env_kwargs", {}))
        kwargs.update(override)
        return kwargs

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Unmasked action logits for a flattened observation (or a batch of them)."""
        h = np.clip((x - self.obs_mean) / self.obs_std, -self.clip, self.clip)
        for w, b in self.layers[:-1]:
            h = self.activation(h @ w.T + b)
        w, b = self.layers[-1]
        return h @ w.T + b

    def act(self, x: np.ndarray, mask: Optional[np.ndarray]) -> int:
        """The most likely action among those `mask` allows (all when `mask` is None). With
        the policy's ``ls_home`` rule, a latency-sensitive job starts now at its home site
        where the mask allows it (as ``local`` places it)."""
        if self.meta.get("ls_home"):
            n, f = int(self.meta["sites"]), int(self.meta["slots"])
            job = n * (3 + 2 * f)  # FleetDispatch-v0's job block: gpus, hours, LS, ..., home
            if x[job + 2] > 0.5:
                home = int(np.argmax(x[job + 6 : job + 6 + n]))
                if mask is None or mask[home * f]:
                    return home * f
        z = self.logits(x)
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if not mask.any():
                raise ValueError("the action mask allows no action")
            z = np.where(mask, z, -np.inf)
        return int(np.argmax(z))


def action_mask(env: Any, info: Dict[str, Any]) -> Optional[np.ndarray]:
    """The valid actions now: info["action_mask"], else the env's action_masks()."""
    if "action_mask" in info:
        return np.asarray(info["action_mask"], dtype=bool)
    fn = getattr(env.unwrapped, "action_masks", None)
    return None if fn is None else np.asarray(fn(), dtype=bool)


def run_episode(
    env: Any,
    act: Any,
    seed: Optional[int] = None,
    check_mask: bool = True,
    max_steps: Optional[int] = None,
) -> Dict[str, Any]:
    """Runs one episode with `act` (a NumpyPolicy, or a function (obs, mask, env) -> action)
    and returns the last step's info (the episode's summary where the env gives one) with
    ``steps``, ``return`` and ``invalid_actions`` (actions the mask did not allow) added."""
    obs, info = env.reset(seed=seed)
    steps, ret, invalid = 0, 0.0, 0
    space = env.observation_space
    while True:
        mask = action_mask(env, info)
        if isinstance(act, NumpyPolicy):
            a = act.act(flatten_observation(space, obs), mask)
        else:
            a = int(act(obs, mask, env))
        if check_mask and mask is not None and not mask[a]:
            invalid += 1
        obs, reward, terminated, truncated, info = env.step(a)
        steps += 1
        ret += float(reward)
        if terminated or truncated or (max_steps is not None and steps >= max_steps):
            break
    out = dict(info)
    out.update(steps=steps, invalid_actions=invalid)
    out["return"] = ret
    return out
