"""A PettingZoo parallel environment over FleetDispatch-v0: one agent per site bids on each job.

Every step offers one job to all site agents at once. Agent ``site_<name>`` sees the
FleetDispatch-v0 observation followed by a one-hot of its own site, and answers 0 (decline)
or 1 + k (take the job with start slot k, the FleetDispatch-v0 slot). Its
``infos[agent]["action_mask"]`` marks the answers valid for its site (decline always). The
job goes to the site whose valid bid has the lowest forecast carbon intensity (``reward="cost"``:
price) in its slot, the home site first and then the lower index among equals; when no site
bids it waits at home and starts when it can. All agents share the reward of the step (the
team reward of FleetDispatch-v0), so the return of each is minus the run's measured carbon
and LS penalties.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Optional, Tuple

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from .fleet_dispatch import FleetDispatchEnv


class FleetDispatchParallelEnv(ParallelEnv):
    """One agent per site; keyword arguments are FleetDispatchEnv's."""

    metadata = {"name": "greensched_fleet_dispatch_v0", "render_modes": []}

    def __init__(self, **kwargs: Any) -> None:
        self.env = FleetDispatchEnv(**kwargs)
        self.possible_agents = [f"site_{name}" for name in self.env.site_names]
        self.agents: list = []
        n = self.env.n_sites
        base = self.env.observation_space
        self._obs_space = spaces.Box(
            low=np.concatenate([base.low, np.zeros(n, np.float32)]),
            high=np.concatenate([base.high, np.ones(n, np.float32)]),
            dtype=np.float32,
        )
        self._act_space = spaces.Discrete(self.env.n_slots + 1)
        self._signal_offset = 3 + (self.env.n_slots if kwargs.get("reward") == "cost" else 0)
        self._obs: Optional[np.ndarray] = None
        self._mask: Optional[np.ndarray] = None

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_space

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def _split(self, obs: np.ndarray, mask: np.ndarray) -> Tuple[Dict, Dict]:
        n, f = self.env.n_sites, self.env.n_slots
        m = mask.reshape(n, f)
        observations, infos = {}, {}
        for i, agent in enumerate(self.possible_agents):
            own = np.zeros(n, np.float32)
            own[i] = 1.0
            observations[agent] = np.concatenate([obs, own])
            infos[agent] = {"action_mask": np.concatenate([[True], m[i]])}
        return observations, infos

    def reset(
        self, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[Dict[str, np.ndarray], Dict[str, Dict[str, Any]]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self._obs, self._mask = obs, info["action_mask"]
        return self._split(obs, self._mask)

    def _dispatch(self, actions: Dict[str, Any]) -> int:
        n, f = self.env.n_sites, self.env.n_slots
        mask = self._mask.reshape(n, f)
        home = self.env.job()["home_site"]
        block = 3 + 2 * f
        best, best_key = None, None
        for i, agent in enumerate(self.possible_agents):
            a = int(actions.get(agent, 0))
            if a <= 0 or a > f or not mask[i, a - 1]:
                continue
            signal = float(self._obs[i * block + self._signal_offset + a - 1])
            key = (signal, 0 if i == home else 1, i)
            if best_key is None or key < best_key:
                best, best_key = i * f + a - 1, key
        return home * f if best is None else best

    def step(self, actions: Dict[str, Any]):
        obs, reward, done, trunc, info = self.env.step(self._dispatch(actions))
        self._obs, self._mask = obs, info["action_mask"]
        observations, infos = self._split(obs, self._mask)
        if done:
            for agent in self.agents:
                infos[agent]["result"] = info["result"]
        rewards = {a: float(reward) for a in self.agents}
        terminations = {a: bool(done) for a in self.agents}
        truncations = {a: False for a in self.agents}
        observations = {a: observations[a] for a in self.agents}
        infos = {a: infos[a] for a in self.agents}
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def close(self) -> None:
        self.env.close()


def parallel_env(**kwargs: Any) -> FleetDispatchParallelEnv:
    """The PettingZoo parallel environment (keyword arguments: FleetDispatchEnv's)."""
    return FleetDispatchParallelEnv(**kwargs)
