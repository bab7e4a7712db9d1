"""greensched: GPU-cluster scheduling simulation from Python.

The functions call the same C++ library as the ``greensched`` command line:

    import greensched
    r = greensched.simulate("fgd", seeds=42)        # the FGD paper's inflation protocol
    r["summary"]["alloc_gpu_pct_at_100"]             # numpy arrays; r["summary"].df: pandas

Policies may be written in Python (see greensched.examples.fgd and docs/PYTHON.md); errors
in inputs raise greensched.Error with a ``file:line: what`` message.
"""

from ._core import Error
from ._api import multi, policies, register_policy, replay, simulate
from ._explain import explain, explain_facts, is_failed
from ._readers import (
    read_fleet,
    read_learned_model,
    read_monitor_samples,
    read_node_events,
    read_nodes,
    read_pods,
    read_power_model,
    read_records,
    read_series,
    read_weather,
    read_workload,
)
from ._tables import Table

try:  # the Gymnasium environments (the ``gym`` extra), registered when gymnasium is there
    import gymnasium as _gymnasium  # noqa: F401
except ImportError:
    pass
else:
    from . import envs

__version__ = "0.1.0"

__all__ = [
    "Error",
    "Table",
    "explain",
    "explain_facts",
    "is_failed",
    "multi",
    "policies",
    "read_fleet",
    "read_learned_model",
    "read_monitor_samples",
    "read_node_events",
    "read_nodes",
    "read_pods",
    "read_power_model",
    "read_records",
    "read_series",
    "read_weather",
    "read_workload",
    "register_policy",
    "replay",
    "simulate",
]
