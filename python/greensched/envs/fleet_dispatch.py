"""greensched/FleetDispatch-v0: dispatch the jobs of a fleet of GPU sites, one at a time.

Each step offers the next job submitted to the fleet (or a best-effort job that had not
started by its latest start); the action picks the site and the start slot. The run is the
fleet simulator of ``greensched multi`` (the same C++ event loop: it stops at each decision
and goes on when ``step`` hands the action back), so a policy that acts as a built-in agent
gets that agent's result exactly. docs/PYTHON.md describes observation, action and reward.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .. import _core
from .._api import PathLike, _fleet_args, _float, _int, _text


class FleetDispatchEnv(gym.Env):
    """One job at a time on a fleet: site x start slot, masked, reward minus carbon (or cost).

    Episodes are built as ``greensched.multi`` builds a run from the same arguments (`fleet`,
    `data_dir`, `pods`, `load`, `days`, `warmup_days`, `start`, `slack`, `ls_bound`,
    `wake_delay`, `power_down_idle`, `sample`, `data_gb`, `preempt_be`) with the seed of
    ``reset(seed=...)``. Without `fleet` and `pods`: the built-in four-site fleet and pod
    shapes. `horizon` (hours; default ceil(slack)) sets the start slots: now and the next
    `horizon` hour boundaries. `reward` is ``"carbon"`` (kg CO2) or ``"cost"`` (the sites'
    price units) emitted or paid since the previous decision, or ``"dispatch-carbon"`` (the
    kg CO2 the dispatched job is expected to emit at the chosen site and start, charged at
    once), minus `ls_penalty` per LS SLO violation. `ls_home` masks a latency-sensitive job
    to starting now at its home site; `room` masks every job to where the site has room for
    it as ``green`` judges it (an LS job: reachable within its bound and room now; a BE job:
    the starts at which the site's expected load with it and the LS reserve stays within
    97 %). `expert`
    names a built-in agent (e.g. ``"local"``, ``"green"``) whose choice for each job is
    ``info["expert_action"]``. `forecast` is what the observation's, the expert's and the
    ``"dispatch-carbon"`` reward's carbon and price forecasts are: ``"same-hour"`` (the mean of
    the same hour over the past week) or ``"learned"`` (``greensched multi --forecast
    learned``: gradient-boosted trees trained on the fleet's series before the measured window,
    once per window, kept across episodes).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        fleet: Optional[PathLike] = None,
        data_dir: Optional[PathLike] = None,
        pods: Optional[PathLike] = None,
        load: Optional[float] = None,
        days: Optional[float] = None,
        warmup_days: float = 1.0,
        start: Optional[str] = None,
        slack: float = 12.0,
        ls_bound: int = 600,
        wake_delay: int = 300,
        power_down_idle: Optional[int] = None,
        sample: int = 3600,
        data_gb: Optional[float] = None,
        preempt_be: bool = False,
        horizon: Optional[int] = None,
        reward: str = "carbon",
        ls_penalty: float = 10.0,
        expert: Optional[str] = None,
        ls_home: bool = False,
        room: bool = False,
        forecast: str = "same-hour",
    ) -> None:
        super().__init__()
        self._core = _core.FleetEnv(
            **_fleet_args(fleet, data_dir, pods, start, days, power_down_idle, data_gb),
            load=_float(load, 0.0),
            warmup_days=float(warmup_days),
            slack=float(slack),
            ls_bound=int(ls_bound),
            wake_delay=int(wake_delay),
            sample=int(sample),
            preempt_be=bool(preempt_be),
            horizon=_int(horizon, -1),
            reward=reward,
            ls_penalty=float(ls_penalty),
            expert=_text(expert),
            ls_home=bool(ls_home),
            room=bool(room),
            forecast=str(forecast),
        )
        self.expert = expert
        self.site_names = list(self._core.site_names)
        self.n_sites = self._core.sites
        self.n_slots = self._core.slots
        n, f = self.n_sites, self.n_slots
        low = np.zeros(self._core.obs_size, dtype=np.float32)
        high = np.full(self._core.obs_size, np.inf, dtype=np.float32)
        block = 3 + 2 * f
        for s in range(n):
            b = s * block
            high[b + 2] = 1.0  # fits
            low[b + 3 + f : b + 3 + 2 * f] = -np.inf  # prices may be negative
        j = n * block
        high[j + 2] = 1.0  # latency-sensitive
        high[j + 5] = 1.0  # chosen again
        high[j + 6 : j + 6 + n] = 1.0  # home site
        low[j + 6 + n :] = -1.0  # time of day (sin, cos)
        high[j + 6 + n :] = 1.0
        self.observation_space = spaces.Box(low=low, high=high, dtype=np.float32)
        self.action_space = spaces.Discrete(n * f)
        self._obs = np.zeros(self._core.obs_size, dtype=np.float32)
        self._mask = np.zeros(n * f, dtype=np.uint8)
        self._started = False
        self._done = True

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[np.ndarray, Dict[str, Any]]:
        """A new episode: with `seed`, the run of that seed (as ``greensched.multi``'s seed);
        without, a seed drawn from the environment's generator."""
        super().reset(seed=seed)
        episode_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**31))
        self.episode_seed = episode_seed
        self._core.reset(episode_seed, self._obs, self._mask)
        self._started = True
        self._done = False
        return self._obs.copy(), self._info()

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        if self._done:
            raise _core.Error("the episode has ended: call reset()")
        reward, done = self._core.step(int(action), self._obs, self._mask)
        self._done = bool(done)
        info = self._info()
        if done:
            info["result"] = self._core.result()
        return self._obs.copy(), float(reward), self._done, False, info

    def _info(self) -> Dict[str, Any]:
        info: Dict[str, Any] = {"action_mask": self._mask.astype(bool)}
        if self.expert and not self._done:
            info["expert_action"] = int(self._core.expert_action)
        return info

    def action_masks(self) -> np.ndarray:
        """The valid actions of the current job (sb3-contrib's MaskablePPO convention)."""
        return self._mask.astype(bool)

    def expert_action(self) -> int:
        """The `expert` agent's choice for the current job, as an action."""
        if not self.expert:
            raise _core.Error("expert_action: construct the environment with expert=AGENT")
        return int(self._core.expert_action)

    def agent_action(self, name: str) -> int:
        """The built-in agent `name`'s choice for the current job, as an action (``"local"``,
        ``"green"``, ... as ``greensched.multi`` names them). An agent is asked once per step
        (asking again returns the same action); one that keeps state sees only the steps it
        was asked about, so to replay an agent ask it at every step."""
        return int(self._core.agent_action(name))

    def decode(self, action: int) -> Tuple[int, int]:
        """(site index, start slot) of an action."""
        return int(action) // self.n_slots, int(action) % self.n_slots

    def job(self) -> Dict[str, Any]:
        """The job offered now: pod, home_site, latency_sensitive, submit_s, now_s, duration_s,
        slack_s, data_gb, gpu_milli, again."""
        return self._core.job()

    def result(self) -> Dict[str, Any]:
        """The run's summary once the episode has ended (as ``greensched.multi``'s)."""
        return self._core.result()
