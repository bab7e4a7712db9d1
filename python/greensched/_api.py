"""simulate, replay and multi: the command line's runs, called from Python.

Each function calls the same library code as ``greensched simulate`` / ``greensched multi``
and returns a dict of Tables (numpy columns); with ``out`` it also writes the command line's
files. Policies are built-in names, mixes (``"pwr:200+fgd:800"``) or Python callables.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _core
from ._tables import as_tables

PolicyLike = Union[str, Callable[..., Any]]
Seeds = Union[int, str, Iterable[int]]
PathLike = Union[str, "os.PathLike[str]"]

_NAME_OK = re.compile(r"^[^:=+,\s]+$")


def register_policy(name: str, policy: Callable[..., Any], normalize: str = "none") -> str:
    """Registers a Python policy under `name`, usable in any policy spec from then on.

    `policy(pod, nodes)` is called once per pod with the feasible nodes' features (numpy arrays)
    and returns one score per node (higher is better), or ``(scores, gpus)`` where ``gpus``
    picks the GPU of each node for a GPU-sharing pod (-1: the default rule). If it has a
    ``reset(context)`` method, that is called at the start of every run; with a ``reads`` list
    of the columns its score reads, it gets one row per class of nodes equal in them (see
    docs/PYTHON.md) and chooses GPUs with ``select_gpu(pod, node)``. `normalize` is
    ``"none"`` (scores are used as returned, converted to int64) or ``"min-max"`` (mapped to
    0..100). Returns `name`.
    """
    if not _NAME_OK.match(name):
        raise _core.Error(f"policy name '{name}' must be non-empty without : = + , or spaces")
    _core.register_policy(name, policy, normalize)
    return name


def _policy_name(policy: Callable[..., Any]) -> str:
    name = getattr(policy, "name", None) or getattr(policy, "__name__", None)
    if not isinstance(name, str):
        name = type(policy).__name__
    return re.sub(r"[:=+,\s]", "-", name)


def _policy_specs(policy: Union[PolicyLike, Sequence[PolicyLike]]) -> List[str]:
    items: Sequence[PolicyLike] = (
        [policy] if isinstance(policy, str) or callable(policy) else policy
    )
    specs: List[str] = []
    for item in items:
        if isinstance(item, str):
            specs.append(item)
        elif callable(item):
            specs.append(register_policy(_policy_name(item), item))
        else:
            raise TypeError(f"a policy is a name, a mix or a callable, not {type(item).__name__}")
    if not specs:
        raise _core.Error("policy: give at least one policy")
    return specs


def _seeds(seeds: Seeds) -> List[int]:
    if isinstance(seeds, int):
        return [seeds]
    if isinstance(seeds, str):
        out: List[int] = []
        for part in seeds.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
                raise _core.Error(f"seeds: '{part}' is not a seed or a range such as 42-51")
            first = int(m.group(1))
            last = int(m.group(2)) if m.group(2) is not None else first
            out.extend(range(first, last + 1))
        return out
    return [int(s) for s in seeds]


# The _core calls take a sentinel for an argument not given: "" for a path or a name, 0 or -1
# (as each argument documents) for a number. These make it from None, for the functions here
# and the environments in envs/.


def _path(p: Optional[PathLike]) -> str:
    return "" if p is None else os.fspath(p)


def _text(value: Optional[str]) -> str:
    return value or ""


def _float(value: Optional[float], none: float) -> float:
    return none if value is None else float(value)


def _int(value: Optional[int], none: int) -> int:
    return none if value is None else int(value)


def _floats(values: Optional[Union[float, Sequence[float]]]) -> List[float]:
    """None: none; one number: a list of it; a sequence: as a list."""
    if values is None:
        return []
    return [float(values)] if isinstance(values, (int, float)) else list(values)


def _data_dir(data_dir: Optional[PathLike], fleet: Optional[PathLike]) -> Optional[PathLike]:
    """Where a fleet file's relative data paths start: `data_dir`, else $GREENSCHED_DATA, else
    the fleet file's folder (None without either)."""
    if data_dir is None and fleet is not None:
        return os.environ.get("GREENSCHED_DATA") or os.path.dirname(os.fspath(fleet))
    return data_dir


def _workload_args(
    nodes: Optional[PathLike],
    pods: Optional[PathLike],
    power_model: Optional[PathLike],
    pue: Optional[float],
) -> Dict[str, Any]:
    """The workload and power model of a cluster run (simulate, replay, ClusterPlacement-v0),
    as _core takes them."""
    return dict(
        nodes=_path(nodes), pods=_path(pods), power_model=_path(power_model), pue=_float(pue, 0.0)
    )


def _fleet_args(
    fleet: Optional[PathLike],
    data_dir: Optional[PathLike],
    pods: Optional[PathLike],
    start: Optional[str],
    days: Optional[float],
    power_down_idle: Optional[int],
    data_gb: Optional[float],
) -> Dict[str, Any]:
    """The optional arguments of a fleet run (multi, FleetDispatch-v0) as _core takes them:
    sentinels for None, and the data folder that `fleet` implies."""
    return dict(
        fleet=_path(fleet),
        data_dir=_path(_data_dir(data_dir, fleet)),
        pods=_path(pods),
        start=_text(start),
        days=_float(days, 0.0),
        power_down_idle=_int(power_down_idle, -1),
        data_gb=_float(data_gb, -1.0),
    )


def _records(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _finish(result: Dict[str, Any]) -> Dict[str, Any]:
    if "records" in result:
        result["records"] = _records(result["records"])
    return as_tables(result)


def simulate(
    policy: Union[PolicyLike, Sequence[PolicyLike]] = "all",
    seeds: Seeds = 42,
    *,
    tune: float = 1.3,
    nodes: Optional[Union[str, "os.PathLike[str]"]] = None,
    pods: Optional[Union[str, "os.PathLike[str]"]] = None,
    power_model: Optional[Union[str, "os.PathLike[str]"]] = None,
    pue: Optional[float] = None,
    gpu_power: Optional[str] = None,
    gpu_select: str = "",
    record: bool = False,
    snapshot_at: int = -1,
    jobs: int = 0,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Dict[str, Any]:
    """The inflation protocol of the FGD paper, as ``greensched simulate`` runs it.

    Returns ``{"summary": Table, "curves": Table, "workload": dict}``, plus ``"occupancy"``
    (with ``snapshot_at >= 0``) and ``"records"`` (with ``record=True``: the decision records,
    one dict per pod, as ``--record`` writes them). Without `nodes`/`pods` the built-in
    workload runs. With `out` the command line's curves.csv and summary.csv (and occupancy.csv)
    are written there too.
    """
    result = _core._simulate(
        policies=_policy_specs(policy),
        seeds=_seeds(seeds),
        tune=float(tune),
        **_workload_args(nodes, pods, power_model, pue),
        gpu_power=_text(gpu_power),
        gpu_select=gpu_select,
        record=record,
        snapshot_at=snapshot_at,
        jobs=jobs,
        out=_path(out),
    )
    return _finish(result)


def replay(
    policy: Union[PolicyLike, Sequence[PolicyLike]] = "fgd",
    seeds: Seeds = 42,
    *,
    nodes: Optional[Union[str, "os.PathLike[str]"]] = None,
    pods: Optional[Union[str, "os.PathLike[str]"]] = None,
    load: Optional[Union[float, Sequence[float]]] = None,
    days: float = 14,
    warmup_days: float = 1,
    queue: str = "backfill",
    time_scale: float = 1.0,
    node_events: Optional[Union[str, "os.PathLike[str]"]] = None,
    power_down_idle: Optional[Union[int, Sequence[Optional[int]]]] = None,
    wake_delay: int = 300,
    gpu_power: Optional[Union[str, Sequence[str]]] = None,
    timeline_step: Optional[int] = None,
    record: bool = False,
    power_model: Optional[Union[str, "os.PathLike[str]"]] = None,
    pue: Optional[float] = None,
    jobs: int = 0,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Dict[str, Any]:
    """Time replay, as ``greensched simulate --mode replay`` runs it.

    Pods arrive at their creation time and run for their trace lifetime; `load` (percent of
    the cluster's GPUs, one or several) draws jobs from the pod list until that load is
    offered. `power_down_idle` is seconds (or None for off, or a list of both). Returns
    ``{"summary": Table, "timeline": Table}`` (and ``"records"``), one summary row per load x
    seed x policy x GPU power rule x power-down setting.
    """
    loads = _floats(load)
    if power_down_idle is None or isinstance(power_down_idle, int):
        downs = [_int(power_down_idle, -1)]
    else:
        downs = [_int(d, -1) for d in power_down_idle]
    rules = [] if gpu_power is None else [gpu_power] if isinstance(gpu_power, str) else gpu_power
    result = _core._replay(
        policies=_policy_specs(policy),
        seeds=_seeds(seeds),
        **_workload_args(nodes, pods, power_model, pue),
        loads=loads,
        days=float(days),
        warmup_days=float(warmup_days),
        queue=queue,
        time_scale=float(time_scale),
        node_events=_path(node_events),
        power_down_idle=downs,
        wake_delay=int(wake_delay),
        gpu_power=list(rules),
        timeline_step=_int(timeline_step, -1),
        record=record,
        jobs=jobs,
        out=_path(out),
    )
    return _finish(result)


def multi(
    agents: Union[str, Sequence[str]] = "all",
    seeds: Seeds = 42,
    *,
    slack: Union[float, Sequence[float]] = 12,
    load: Optional[Union[float, Sequence[float]]] = None,
    days: Optional[float] = None,
    warmup_days: float = 1,
    fleet: Optional[Union[str, "os.PathLike[str]"]] = None,
    data_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    pods: Optional[Union[str, "os.PathLike[str]"]] = None,
    power_down_idle: Optional[int] = None,
    wake_delay: int = 300,
    ls_bound: int = 600,
    sample: int = 3600,
    data_gb: Optional[float] = None,
    start: Optional[str] = None,
    power_model: Optional[Union[str, "os.PathLike[str]"]] = None,
    preempt_be: bool = False,
    energy_controllers: Union[str, Sequence[str]] = "none",
    record: bool = False,
    jobs: int = 0,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    forecast: str = "same-hour",
) -> Dict[str, Any]:
    """A fleet of sites and a dispatch agent, as ``greensched multi`` runs it.

    `agents` is a comma list or list of agent names, or ``"all"``; `slack` the hours a
    best-effort job may be deferred (one run each); `load` the offered load in percent of the
    fleet's GPUs (one run each). Without `fleet` the built-in four-site fleet runs, without
    `pods` the built-in pod shapes with synthetic times. A site's local policy may be a Python
    policy registered with register_policy. Returns ``{"summary", "timeline", "decisions"}``
    Tables (and ``"records"``); with `out` the command line's summary.csv, timeline.csv,
    decisions.csv and energy_timeline.csv are written there (with several seeds, into
    OUT/seed-N for each seed; `energy_controllers`: a comma list
    of none, greedy, mpc, oracle, run on each result as ``--energy-controller`` does).
    `forecast` is ``--forecast``: ``"same-hour"`` or ``"learned"`` (the forecasting agents plan
    on learned carbon and price forecasts, trained once per window on the fleet's series
    before it).
    """
    names = agents.split(",") if isinstance(agents, str) else list(agents)
    slacks = [float(slack)] if isinstance(slack, (int, float)) else [float(s) for s in slack]
    loads = _floats(load)
    result = _core._multi(
        agents=names,
        seeds=_seeds(seeds),
        slack=slacks,
        loads=loads,
        **_fleet_args(fleet, data_dir, pods, start, days, power_down_idle, data_gb),
        warmup_days=float(warmup_days),
        wake_delay=int(wake_delay),
        ls_bound=int(ls_bound),
        sample=int(sample),
        power_model=_path(power_model),
        preempt_be=preempt_be,
        energy_controllers=(
            energy_controllers.split(",")
            if isinstance(energy_controllers, str)
            else list(energy_controllers)
        ),
        record=record,
        jobs=jobs,
        out=_path(out),
        forecast=str(forecast),
    )
    return _finish(result)


def policies() -> List[tuple]:
    """The policies a spec may name: (name, summary) of the built-in and registered ones."""
    return list(_core.policy_catalog())
