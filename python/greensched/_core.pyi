"""Type stubs of the extension module greensched._core (the C++ core); use the greensched
package's functions rather than these."""

from typing import Any, Callable, Dict, List, Tuple

import numpy as np

class Error(Exception):
    """An input or usage error of the library; the message reads ``file:line: what``."""

def register_policy(name: str, fn: Callable[..., Any], normalize: str = "none") -> None: ...
def policy_catalog() -> List[Tuple[str, str]]: ...
def _simulate(
    policies: List[str],
    seeds: List[int],
    tune: float,
    nodes: str,
    pods: str,
    power_model: str,
    pue: float,
    gpu_power: str,
    gpu_select: str,
    record: bool,
    snapshot_at: int,
    jobs: int,
    out: str,
) -> Dict[str, Any]: ...
def _replay(
    policies: List[str],
    seeds: List[int],
    nodes: str,
    pods: str,
    loads: List[float],
    days: float,
    warmup_days: float,
    queue: str,
    time_scale: float,
    node_events: str,
    power_down_idle: List[int],
    wake_delay: int,
    gpu_power: List[str],
    timeline_step: int,
    record: bool,
    power_model: str,
    pue: float,
    jobs: int,
    out: str,
) -> Dict[str, Any]: ...
def _multi(
    agents: List[str],
    seeds: List[int],
    slack: List[float],
    loads: List[float],
    days: float,
    warmup_days: float,
    fleet: str,
    data_dir: str,
    pods: str,
    power_down_idle: int,
    wake_delay: int,
    ls_bound: int,
    sample: int,
    data_gb: float,
    start: str,
    power_model: str,
    preempt_be: bool,
    energy_controllers: List[str],
    record: bool,
    jobs: int,
    out: str,
) -> Dict[str, Any]: ...
def read_workload(nodes: str, pods: str) -> Dict[str, Any]: ...
def read_nodes(path: str) -> Dict[str, np.ndarray]: ...
def read_pods(path: str, nodes: str) -> Dict[str, np.ndarray]: ...
def read_node_events(path: str, nodes: str) -> Dict[str, np.ndarray]: ...
def read_series(path: str, format: str, column: str, step_s: int) -> Dict[str, Any]: ...
def read_fleet(path: str, data_dir: str) -> Dict[str, Any]: ...
def builtin_fleet() -> Dict[str, Any]: ...
def read_weather(path: str) -> Dict[str, Any]: ...
def read_power_model(path: str) -> Dict[str, Any]: ...
def read_learned_model(path: str) -> Dict[str, Any]: ...
def read_monitor_samples(path: str) -> List[Dict[str, Any]]: ...
def read_records(path: str) -> List[Dict[str, Any]]: ...
def explain_text(record: Any) -> str: ...
def explain_facts(record: Any) -> Dict[str, Any]: ...
def is_failed_placement(record: Any) -> bool: ...

class _PlacementEnvCore:
    """The engine of greensched.envs.ClusterPlacementEnv (use that class)."""

    gpu_free_milli: np.ndarray
    cpu_free_milli: np.ndarray
    memory_free_mib: np.ndarray
    pod: np.ndarray
    load: np.ndarray
    mask: np.ndarray
    done: bool
    expert_node: int
    feasible_nodes: int
    def __init__(
        self,
        nodes: str,
        pods: str,
        power_model: str,
        pue: float,
        gpu_power: str,
        policy: str,
        tune: float,
        expert: bool,
        alloc_weight: float,
        energy_weight: float,
        invalid_penalty: float,
    ) -> None: ...
    def reset(self, seed: int) -> None: ...
    def step(self, node: int) -> Tuple[float, bool, bool, float]: ...
    def counts(self) -> Dict[str, Any]: ...
    def spec(self) -> Dict[str, Any]: ...

class FleetEnv:
    """The engine of greensched.envs.FleetDispatchEnv (use that class)."""

    site_names: List[str]
    sites: int
    slots: int
    actions: int
    obs_size: int
    done: bool
    expert_action: int
    def __init__(
        self,
        fleet: str,
        data_dir: str,
        pods: str,
        start: str,
        load: float,
        days: float,
        warmup_days: float,
        slack: float,
        ls_bound: int,
        wake_delay: int,
        power_down_idle: int,
        sample: int,
        data_gb: float,
        preempt_be: bool,
        horizon: int,
        reward: str,
        ls_penalty: float,
        expert: str,
        ls_home: bool = ...,
        room: bool = ...,
    ) -> None: ...
    def reset(self, seed: int, obs: np.ndarray, mask: np.ndarray) -> None: ...
    def step(self, action: int, obs: np.ndarray, mask: np.ndarray) -> Tuple[float, bool]: ...
    def result(self) -> Dict[str, Any]: ...
    def job(self) -> Dict[str, Any]: ...
