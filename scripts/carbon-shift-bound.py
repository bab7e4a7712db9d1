#!/usr/bin/env python3
"""How much carbon moving work between sites could save at best, from the grids alone.

For a fleet of equal sites at a fleet load L (share of all GPUs busy), compares `local` (every
site at L) with an ideal dispatcher that, each hour, fills the cleanest sites to 100 % first
(spatial shift), and with one that may also move any work to any hour of the window (spatial
and unlimited temporal shift). Power is taken as proportional to load (idle nodes draw
nothing), capacity is fluid (no fragmentation, no latency bound), so real agents cannot beat
these figures.

  scripts/carbon-shift-bound.py DATA_DIR ZONE [ZONE ...] [--from-hour H] [--hours N] [--loads 0.5,0.7,0.9]

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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data_dir")
    p.add_argument("zones", nargs="+")
    p.add_argument("--from-hour", type=int, default=24)
    p.add_argument("--hours", type=int, default=14 * 24)
    p.add_argument("--loads", default="0.5,0.7,0.9")
    a = p.parse_args()
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
                take = min(1.0, left)
                spatial += take * ci[z][h]
                left -= take
        cells = sorted(ci[z][h] for z in a.zones for h in hours)
        anywhere = sum(cells[: int(round(n * load * len(hours)))])
        print(f"load {100 * load:.0f} %: best spatial shift {100 * (spatial / local - 1):+.1f} %, "
              f"spatial and unlimited temporal {100 * (anywhere / local - 1):+.1f} % carbon vs local")


if __name__ == "__main__":
    sys.exit(main())
