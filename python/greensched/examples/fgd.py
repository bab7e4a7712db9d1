"""FGD (Fragmentation Gradient Descent, Weng et al., ATC'23) as a Python policy, in numpy.

It makes the same decisions as the built-in ``fgd``: a node's score is
``int(100 * sigmoid((F_before - F_after) / 1000))``, where F is the node's expected stranded
GPU share under the target workload (the trace's popular pod shapes), and a GPU-sharing pod
goes to the GPU that scores best (first GPU among equals). As the built-in one, it scores each
distinct node state (model, GPUs, free CPU, free GPU shares: the ``state`` column) once per pod
shape, and its ``reads`` lets the scheduler pass one row per class of identical nodes.

    import greensched
    from greensched.examples.fgd import FGD
    greensched.simulate(FGD(), seeds=42)
"""

from __future__ import annotations

import math
from typing import Any, Dict, Tuple

import numpy as np


class FGD:
    name = "fgd-numpy"
    reads = ("state", "model", "gpu_count", "cpu_free_milli", "gpu_free_milli")

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
        # Per pod shape, per state id: the score (-2: not scored yet) and per sorted GPU slot.
        self.memo: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}

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

    def score_rows(self, pod, nodes, rows):
        """Scores of placing `pod` on nodes[rows], and per sorted GPU slot (-1: no fit)."""
        model, count = nodes["model"][rows], nodes["gpu_count"][rows]
        cpu = np.maximum(nodes["cpu_free_milli"][rows], 0)
        gpus = -np.sort(-nodes["gpu_free_milli"][rows].astype(np.int64), 1)
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
        return self.to_score(before, self.frag(model, count, cpu_after, gpus)), -1

    def __call__(self, pod, nodes):
        state = nodes["state"]
        best, per_gpu = self.memo.get(pod["shape"], (np.zeros(0, np.int64), None))
        try:
            scores = best[state]
        except IndexError:  # a state id past the memo: make room
            grow = state.max() + 1024 - len(best)
            width = nodes["gpu_free_milli"].shape[1]
            best = np.concatenate([best, np.full(grow, -2)])
            per_gpu = np.full((len(best), width), -1) if per_gpu is None else per_gpu
            per_gpu = np.concatenate([per_gpu, np.full((len(best) - len(per_gpu), width), -1)])
            self.memo[pod["shape"]] = best, per_gpu
            scores = best[state]
        if scores.min() == -2:  # states not scored yet for this pod shape
            rows = np.flatnonzero(scores == -2)
            best[state[rows]], per_gpu[state[rows]] = self.score_rows(pod, nodes, rows)
            scores = best[state]
        return scores

    def select_gpu(self, pod, node):
        """The GPU a sharing pod takes on the chosen node: the first of the best score."""
        free = node["gpu_free_milli"][0, : node["gpu_count"][0]]
        slots = self.memo[pod["shape"]][1][node["state"][0]]
        # Slot i of the memo is the i-th largest free share; equal shares score alike.
        by_gpu = slots[np.searchsorted(np.sort(-free), -free)]
        return int(np.argmax(by_gpu))
