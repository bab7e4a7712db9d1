"""Gymnasium environments over greensched's engine (the ``gym`` extra: gymnasium).

``import greensched`` registers them when gymnasium is importable::

    import gymnasium as gym
    import greensched

    env = gym.make("greensched/ClusterPlacement-v0")

See docs/PYTHON.md for their observations, actions and rewards.
"""

from gymnasium.envs.registration import register, registry

from .cluster_placement import ClusterPlacementEnv

__all__ = ["ClusterPlacementEnv"]

if "greensched/ClusterPlacement-v0" not in registry:
    register(
        id="greensched/ClusterPlacement-v0",
        entry_point="greensched.envs.cluster_placement:ClusterPlacementEnv",
    )

from .fleet_dispatch import FleetDispatchEnv  # noqa: E402

__all__.append("FleetDispatchEnv")

if "greensched/FleetDispatch-v0" not in registry:
    register(
        id="greensched/FleetDispatch-v0",
        entry_point="greensched.envs.fleet_dispatch:FleetDispatchEnv",
    )
