"""How much slower a policy written in Python runs than the built-in one it copies: the numpy
FGD of greensched.examples.fgd against the built-in `fgd`, on the default workload, the same
simulate call for both, in one process. Prints the wall and CPU seconds of each (best of
--repeat runs) and the ratios; with --check, fails unless both place every pod alike and the
numpy FGD's wall time is at most --max-ratio times the built-in's.

    PYTHONPATH=BUILD/python python bench/python_policy_speed.py [--repeat 5] [--check]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import greensched
from greensched.examples.fgd import FGD


def best_of(policy, repeat):
    """(best wall s, best CPU s, last result) of `repeat` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = greensched.simulate(policy, seeds=42, jobs=1, snapshot_at=125)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--max-ratio", type=float, default=5.0)
    args = parser.parse_args()

    # Interleaved, so that a change of machine load hits both alike.
    builtin_wall = builtin_cpu = numpy_wall = numpy_cpu = float("inf")
    for _ in range(args.repeat):
        w, c, builtin = best_of("fgd", 1)
        builtin_wall, builtin_cpu = min(builtin_wall, w), min(builtin_cpu, c)
        w, c, numpy_fgd = best_of(FGD(), 1)
        numpy_wall, numpy_cpu = min(numpy_wall, w), min(numpy_cpu, c)
    same = builtin["summary"]["pods_scheduled"].tolist() == numpy_fgd["summary"][
        "pods_scheduled"
    ].tolist() and np.array_equal(
        builtin["occupancy"]["used_milli"], numpy_fgd["occupancy"]["used_milli"]
    )
    ratio = numpy_wall / builtin_wall
    print(f"pods placed         {builtin['summary']['pods_scheduled'][0]}")
    print(f"built-in fgd        wall {builtin_wall:.3f} s  CPU {builtin_cpu:.3f} s")
    print(f"numpy FGD (Python)  wall {numpy_wall:.3f} s  CPU {numpy_cpu:.3f} s")
    print(f"ratio               wall {ratio:.1f}x  CPU {numpy_cpu / builtin_cpu:.1f}x")
    print(f"same placements     {'yes' if same else 'NO'}")
    if args.check and (not same or ratio > args.max_ratio):
        print(f"check failed: same placements and at most {args.max_ratio}x wanted")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
