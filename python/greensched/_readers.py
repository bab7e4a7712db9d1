"""Readers for every input format of docs/FORMATS.md, by the library's own parsers: the same
checks as the command line, and the same ``file:line: what`` errors, raised as
greensched.Error."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import _core
from ._api import PathLike, _data_dir, _path
from ._tables import Table, as_tables


def read_workload(
    nodes: Optional[PathLike] = None, pods: Optional[PathLike] = None
) -> Dict[str, Any]:
    """An openb node list and pod list (or, with neither, the built-in workload):
    ``{"nodes": Table, "pods": Table, "nodes_source": str, "pods_source": str}``."""
    return as_tables(_core.read_workload(_path(nodes), _path(pods)))


def read_nodes(path: PathLike) -> Table:
    """An openb node list CSV (sn,cpu_milli,memory_mib,gpu,model): one row per node."""
    return Table(_core.read_nodes(_path(path)))


def read_pods(path: PathLike, nodes: Optional[PathLike] = None) -> Table:
    """An openb pod list CSV (any variant); `nodes` names the node list that defines GPU models
    the pods ask for beyond the built-in names."""
    return Table(_core.read_pods(_path(path), _path(nodes)))


def read_node_events(path: PathLike, nodes: PathLike) -> Table:
    """A node events CSV (time,node,event) against the node list `nodes`."""
    return Table(_core.read_node_events(_path(path), _path(nodes)))


def read_series(
    path: PathLike, format: str = "plain", column: str = "", step_s: int = 3600
) -> Dict[str, Any]:
    """A carbon-intensity or price series (format ``plain``, ``emaps`` or ``lwa``), resampled
    to `step_s`: ``{"time_s", "value", "start_s", "step_s"}``."""
    return _core.read_series(_path(path), format, column, int(step_s))


def read_fleet(
    path: Optional[PathLike] = None, data_dir: Optional[PathLike] = None
) -> Dict[str, Any]:
    """A fleet JSON file (or, without `path`, the built-in fleet). Relative data paths in it
    start at `data_dir` (default: $GREENSCHED_DATA, else the file's folder)."""
    if path is None:
        fleet = _core.builtin_fleet()
    else:
        fleet = _core.read_fleet(_path(path), _path(_data_dir(data_dir, path)))
    fleet["sites"] = [as_tables(site) for site in fleet["sites"]]
    return fleet


def read_weather(path: PathLike) -> Dict[str, Any]:
    """An hourly weather JSON file (Open-Meteo): location and an ``hourly`` Table."""
    return as_tables(_core.read_weather(_path(path)))


def read_power_model(path: Optional[PathLike] = None) -> Dict[str, Any]:
    """A power model JSON file (or, without `path`, the built-in one): PUE, GPU power rule and
    a ``gpus`` Table of idle and max watts per GPU model."""
    return as_tables(_core.read_power_model(_path(path)))


def read_learned_model(path: PathLike) -> Dict[str, Any]:
    """A learned policy model JSON file, checked and returned as its JSON object."""
    return _core.read_learned_model(_path(path))


def read_monitor_samples(path: PathLike) -> List[Dict[str, Any]]:
    """A monitor readings file (JSON Lines, one node sample a line)."""
    return _core.read_monitor_samples(_path(path))


def read_records(path: PathLike) -> List[Dict[str, Any]]:
    """A decision records file (JSON Lines, as ``--record`` writes), each record checked."""
    return _core.read_records(_path(path))
