"""FGD (Fragmentation Gradient Descent, Weng et al., ATC'23) as a Python policy, in numpy.

It makes the same decisions as the built-in ``fgd``: a node's score is
``int(100 * sigmoid((F_before - F_after) / 1000))``, where F is the node's expected stranded
GPU share under the target workload (the trace's popular pod shapes), and a GPU-sharing pod
goes to the GPU that scores best (first GPU among equals). As the built-in one, it scores each
distinct node state (model, GPUs, free CPU, free GPU shares) once per pod shape: most nodes
look alike, and a node gets a new state only when it changes.

    import greensched
    from greensched.examples.fgd import FGD
    greensched.simulate(FGD(), seeds=42)
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Tuple

import numpy as np


class FGD:
    name = "fgd-numpy"

    def reset(self, context: Dict[str, Any]) -> None:
        t = context["target"]  # the target workload's shapes, most popular first
        self.cpu, self.num_gpu, self.milli = t["cpu_milli"], t["num_gpu"], t["gpu_milli"]
        self.spec, self.count = t["gpu_spec"], t["count"]
        self.covered = context["covered_pods"]
        # Per GPU model id + 1 (0: no GPU): the shapes that need GPUs and may run on it.
        model = np.arange(-1, 64)[:, None]
        on_model = (self.spec >> np.maximum(model, 0).astype(np.uint64)) & 1 == 1
        self.gpu_shape_on = (self.num_gpu > 0) & ((self.spec == 0) | ((model >= 0) & on_model))
        self.zero_share = bool(np.any((self.num_gpu > 0) & (self.milli <= 0)))
        self.ids: Dict[Tuple[int, ...], int] = {}  # state -> id
        self.states: List[Tuple[int, ...]] = []  # id -> (model, gpu_count, cpu, free sorted)
        self.node_version = np.full(0, -1)  # per node: the version its state id is of
        self.node_state = np.zeros(0, np.int64)
        self.memo: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}  # shape -> (score, GPU scores)

    def frag(self, model, count, cpu_free, gpus):
        """Scaled fragmentation sum_m count_m F_n(m) of node states (any leading shape)."""
        fits = gpus[..., None, :] >= self.milli[:, None]
        if self.zero_share:  # a 0-milli shape would fit the padding past gpu_count
            fits = fits & (np.arange(gpus.shape[-1]) < count[..., None])[..., None, :]
        total = gpus.sum(-1)
        stranded = total[..., None] - (gpus[..., None, :] * fits).sum(-1)
        hosts = self.gpu_shape_on[model + 1] & (cpu_free[..., None] >= self.cpu)
        hosts = hosts & (fits.sum(-1) >= self.num_gpu)
        return np.where(total > 0, np.where(hosts, stranded, total[..., None]) @ self.count, 0)

    def to_score(self, before, after):
        delta = (before - after) / self.covered if self.covered else np.zeros(before.shape)
        # math.exp, as the C++ side's std::exp, so that scores match to the last bit.
        e = np.array([math.exp(x) for x in (-delta / 1000.0).ravel().tolist()])
        return (1.0 / (1.0 + e.reshape(delta.shape)) * 100.0).astype(np.int64)

    def score_states(self, pod, ids):
        """Scores of placing `pod` on states `ids`, and per sorted GPU slot (-1: no fit)."""
        s = np.array([self.states[i] for i in ids], dtype=np.int64)
        model, count, cpu, gpus = s[:, 0], s[:, 1], s[:, 2], s[:, 3:]
        before, width = self.frag(model, count, cpu, gpus), gpus.shape[1]
        cpu_after = cpu - pod["cpu_milli"]
        if pod["num_gpu"] == 1 and 0 < pod["gpu_milli"] < 1000:  # shares one GPU: try each
            after = gpus[:, None, :] - pod["gpu_milli"] * np.eye(width, dtype=np.int64)
            f = self.frag(model[:, None], count[:, None], cpu_after[:, None], after)
            fit = (np.arange(width) < count[:, None]) & (gpus >= pod["gpu_milli"])
            per_gpu = np.where(fit, self.to_score(before[:, None], f), -1)
            return per_gpu.max(1), per_gpu
        if pod["num_gpu"] > 0 and pod["gpu_milli"] > 0:  # whole GPUs: free ones sort first
            gpus = np.where(np.arange(width) < pod["num_gpu"], 0, gpus)
        return self.to_score(before, self.frag(model, count, cpu_after, gpus)), None

    def __call__(self, pod, nodes):
        node, version = nodes["node"], nodes["version"]
        if len(self.node_version) <= node[-1]:  # room for every node (in index order)
            self.node_version = np.full(node[-1] + 1024, -1)
            self.node_state = np.zeros(node[-1] + 1024, np.int64)
        stale = np.flatnonzero(self.node_version[node] != version)
        if len(stale):  # nodes that changed: their state ids
            free = -np.sort(-nodes["gpu_free_milli"][stale], 1)
            cpu = np.maximum(nodes["cpu_free_milli"][stale], 0)
            rows = np.column_stack([nodes["model"][stale], nodes["gpu_count"][stale], cpu, free])
            for i, row in zip(node[stale], map(tuple, rows.tolist())):
                if row not in self.ids:
                    self.ids[row] = len(self.states)
                    self.states.append(row)
                self.node_state[i] = self.ids[row]
            self.node_version[node[stale]] = version[stale]
        ids, width = self.node_state[node], nodes["gpu_free_milli"].shape[1]
        empty = (np.zeros(0, np.int64), np.zeros((0, width), np.int64))
        best, per_gpu = self.memo.get(pod["shape"], empty)
        if len(best) < len(self.states):  # room for the new states; -2: not scored yet
            grow = len(self.states) + 256 - len(best)
            best = np.concatenate([best, np.full(grow, -2)])
            per_gpu = np.concatenate([per_gpu, np.full((grow, width), -1)])
            self.memo[pod["shape"]] = (best, per_gpu)
        scores = best[ids]
        if scores.min() == -2:
            missing = np.unique(ids[scores == -2])
            best[missing], slots = self.score_states(pod, missing.tolist())
            if slots is not None:
                per_gpu[missing] = slots
            scores = best[ids]
        return scores

    def select_gpu(self, pod, node):
        """The GPU a sharing pod takes on the chosen node: the first of the best score."""
        state = self.node_state[node["node"][0]]
        free_sorted = self.states[state][3:]
        slots = self.memo[pod["shape"]][1][state]
        scores = [slots[free_sorted.index(f)] for f in node["gpu_free_milli"][0].tolist()]
        return int(np.argmax(np.where(np.arange(len(scores)) < node["gpu_count"][0], scores, -1)))
