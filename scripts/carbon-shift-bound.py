#!/usr/bin/env python3
"""How much carbon moving work between sites could save at best, from the grids alone.

For a fleet of equal sites at a fleet load L (share of all GPUs busy), compares `local` (every
site at L) with an ideal dispatcher that, each hour, fills the cleanest sites to 100 % first
(spatial shift), and with one that may also move any work to any hour of the window (spatial
and unlimited temporal shift). Power is taken as proportional to load (idle nodes draw
nothing), capacity is fluid (no fragmentation, no latency bound), so real agents cannot beat
these figures.

  scripts/carbon-shift-bound.py DATA_DIR ZONE [ZONE ...] [--from-hour H] [--hours N] [--loads 0.5,0.7,0.9]
                                [--pods POD_LIST] [--max-fill F]

--max-fill caps every site's GPU allocation at F (default 1.0): a real site cannot pack its
GPUs full (fragmentation, whole-GPU jobs); single-cluster replays at 90 % offered load reach
about 0.9.

With --pods, also a bound that respects the latency-sensitive work: LS and Guaranteed jobs
(their share of GPU time, from the pod list: GPUs x duration, as the load generator's steady
state holds them) run in their own hour at the best sites, and only the best-effort rest may
move to any hour. Every agent's slack is finite, so no agent can beat this one either.

ZONE names an Electricity Maps 2023 hourly file DATA_DIR/carbon/emaps2023/ZONE_2023_hourly.csv
(direct intensity). Hours count from 2023-01-01T00:00Z.
"""
import argparse
import csv
import sys


def read_zone(data_dir, zone):
    path = f"{data_dir}/carbon/emaps2023/{zone}_2023_hourly.csv"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    key = next(k for k in rows[0] if "direct" in k.lower() and "intensity" in k.lower())
    return [float(r[key]) for r in rows]


def ls_share_of_gpu_time(path):
    ls = total = 0.0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            gpus = int(r["num_gpu"]) * int(r["gpu_milli"]) / 1000
            work = gpus * max(0, int(r["deletion_time"]) - int(r["creation_time"]))
            total += work
            if r["qos"] in ("LS", "Guaranteed"):
                ls += work
    return ls / total if total > 0 else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data_dir")
    p.add_argument("zones", nargs="+")
    p.add_argument("--from-hour", type=int, default=24)
    p.add_argument("--hours", type=int, default=14 * 24)
    p.add_argument("--loads", default="0.5,0.7,0.9")
    p.add_argument("--pods", help="openb pod list: bound with LS work held in its hour")
    p.add_argument("--max-fill", type=float, default=1.0, help="highest GPU allocation of a site")
    a = p.parse_args()
    ls_share = ls_share_of_gpu_time(a.pods) if a.pods else None
    if ls_share is not None:
        print(f"LS and Guaranteed share of GPU time: {100 * ls_share:.1f} %")
    ci = {z: read_zone(a.data_dir, z) for z in a.zones}
    hours = range(a.from_hour, a.from_hour + a.hours)
    n = len(a.zones)
    for z in a.zones:
        print(f"{z}: mean {sum(ci[z][h] for h in hours) / len(hours):.0f} gCO2/kWh")
    for load in (float(x) for x in a.loads.split(",")):
        local = sum(load * sum(ci[z][h] for z in a.zones) for h in hours)
        spatial = 0.0
        for h in hours:
            left = n * load
            for z in sorted(a.zones, key=lambda z: ci[z][h]):
                take = min(a.max_fill, left)
                spatial += take * ci[z][h]
                left -= take
        anywhere = 0.0
        work = n * load * len(hours)
        for c in sorted(ci[z][h] for z in a.zones for h in hours):
            take = min(a.max_fill, work)
            anywhere += take * c
            work -= take
        print(f"load {100 * load:.0f} %: best spatial shift {100 * (spatial / local - 1):+.1f} %, "
              f"spatial and unlimited temporal {100 * (anywhere / local - 1):+.1f} % carbon vs local")
        if ls_share is None:
            continue
        # LS work fills the cleanest sites of its own hour; best-effort work takes the cleanest
        # capacity left in any hour.
        held = 0.0
        left_cells = []
        for h in hours:
            left = n * load * ls_share
            for z in sorted(a.zones, key=lambda z: ci[z][h]):
                take = min(a.max_fill, left)
                held += take * ci[z][h]
                left -= take
                if take < a.max_fill:
                    left_cells.append((ci[z][h], a.max_fill - take))
        be_left = n * load * (1 - ls_share) * len(hours)
        for c, room in sorted(left_cells):
            take = min(room, be_left)
            held += take * c
            be_left -= take
        print(f"load {100 * load:.0f} %: LS in its hour, best-effort anywhere "
              f"{100 * (held / local - 1):+.1f} % carbon vs local")


if __name__ == "__main__":
    sys.exit(main())
