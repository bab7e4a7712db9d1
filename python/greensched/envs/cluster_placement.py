"""ClusterPlacement-v0: place one pod at a time on a GPU cluster (docs/PYTHON.md).

The engine is the simulator's own (C++ ``sim::PlacementStepper``): the same cluster state,
filter, GPU rule and power model as ``greensched.simulate``; a step is one call into it, and
the observation arrays are written in place by it.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .. import _core
from .._api import PathLike, _text, _workload_args

_OBS_KEYS = ("gpu_free_milli", "cpu_free_milli", "memory_free_mib", "pod", "load")


class ClusterPlacementEnv(gym.Env):
    """One pod at a time on a cluster; the action is the node (see docs/PYTHON.md).

    Episodes follow ``greensched.simulate``'s protocol: the seeded inflation draws pods until
    `tune` x the cluster's GPU milli is requested; a pod that fits on no node is dropped
    (counted in ``pods_failed``) and the next one arrives; the episode ends after the last
    arrival. ``reset(seed=s)`` gives the pods, order and node tie order of simulate's seed s.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        nodes: Optional[PathLike] = None,
        pods: Optional[PathLike] = None,
        *,
        tune: float = 1.3,
        policy: str = "fgd",
        expert: bool = False,
        alloc_weight: float = 1.0,
        energy_weight: float = 0.5,
        invalid_penalty: float = 1.0,
        power_model: Optional[PathLike] = None,
        pue: Optional[float] = None,
        gpu_power: Optional[str] = None,
        copy_obs: bool = True,
        render_mode: Optional[str] = None,
    ) -> None:
        if render_mode is not None:
            raise _core.Error("ClusterPlacement-v0 has no render modes")
        self._core = _core._PlacementEnvCore(
            **_workload_args(nodes, pods, power_model, pue),
            gpu_power=_text(gpu_power),
            policy=policy,
            tune=float(tune),
            expert=bool(expert),
            alloc_weight=float(alloc_weight),
            energy_weight=float(energy_weight),
            invalid_penalty=float(invalid_penalty),
        )
        self._expert = bool(expert)
        self._copy = bool(copy_obs)
        spec = self._core.spec()
        #: The nodes in action order: name, model, cpu_milli, memory_mib, gpu_count (arrays).
        self.nodes: Dict[str, np.ndarray] = spec["nodes"]
        self.idle_facility_watts: float = spec["idle_facility_watts"]
        self.full_facility_watts: float = spec["full_facility_watts"]
        n = len(self.nodes["name"])
        slots = int(spec["gpu_slots"])
        f32 = np.float32
        capacity = max(int(spec["cluster_gpu_milli"]), 1)
        arrived_high = (
            max(int(spec["trace_gpu_milli"]), tune * capacity) + int(spec["max_pod_gpu_milli"])
        ) / capacity
        self.observation_space = spaces.Dict(
            {
                "gpu_free_milli": spaces.Box(-1.0, 1000.0, (n, slots), f32),
                "cpu_free_milli": spaces.Box(0.0, float(self.nodes["cpu_milli"].max()), (n,), f32),
                "memory_free_mib": spaces.Box(
                    0.0, float(self.nodes["memory_mib"].max()), (n,), f32
                ),
                "pod": spaces.Box(
                    np.zeros(4, f32),
                    np.array(
                        [
                            max(spec["max_pod_cpu_milli"], 1),
                            max(spec["max_pod_memory_mib"], 1),
                            max(spec["max_pod_gpus"], 1),
                            1000,
                        ],
                        f32,
                    ),
                    dtype=f32,
                ),
                # Every pod of the list arrives once, then draws until tune x capacity; the
                # last draw may pass it by its GPUs beyond the first.
                "load": spaces.Box(0.0, np.array([arrived_high, 1.0], f32), (2,), f32),
            }
        )
        self.action_space = spaces.Discrete(n)
        self._buffers = tuple(getattr(self._core, k) for k in _OBS_KEYS)
        self._started = False

    def _obs(self) -> Dict[str, np.ndarray]:
        if self._copy:
            return {k: b.copy() for k, b in zip(_OBS_KEYS, self._buffers)}
        return dict(zip(_OBS_KEYS, self._buffers))

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
        """Starts the episode of `seed` (simulate's run of that seed), or, without a seed, of
        the next seed drawn from the generator the last seed started."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(0, 2**63 - 1))
        self._core.reset(int(seed))
        self._started = True
        info: Dict[str, Any] = {"action_mask": self._core.mask.copy()}
        if self._expert:
            info["expert_action"] = self._core.expert_node
        return self._obs(), info

    def step(self, action: Any) -> Tuple[Dict[str, np.ndarray], float, bool, bool, Dict[str, Any]]:
        """Places the current pod on node `action`; an infeasible node drops the pod instead."""
        if not self._started:
            raise _core.Error("call reset() before step()")
        reward, placed, terminated, watts = self._core.step(int(action))
        info: Dict[str, Any] = {
            "action_mask": self._core.mask.copy(),
            "placed": placed,
            "added_facility_watts": watts,
        }
        if self._expert:
            info["expert_action"] = self._core.expert_node
        if terminated:
            info.update(self._core.counts())
        return self._obs(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Which nodes the current pod fits (bool per node; sb3-contrib MaskablePPO's hook)."""
        return self._core.mask.copy()

    def episode_counts(self) -> Dict[str, Any]:
        """The episode so far: pods arrived/placed/failed/rejected, GPU milli arrived and
        allocated, the cluster's GPU milli, facility watts and fragmentation (GPU milli)."""
        return self._core.counts()

    @property
    def expert_action(self) -> int:
        """The policy's node for the current pod (``expert=True``); -1 otherwise."""
        return int(self._core.expert_node)
