#!/usr/bin/env python3
"""The fleet table over four seasons: every agent at a fleet load, beside the fleet bound.

Runs `greensched multi --bound --json` on the 14-day windows starting 1 January, 1 April,
1 July and 1 October 2023, for each seed, and prints one Markdown table: per window, slack and
agent, the carbon against `local` and the bound's (means over the seeds), the share of the
bound's saving reached (lowest and mean over the seeds; in kg, the bound's saving given in % of
`local`'s carbon), the same share of the bound's feasible schedule's saving (above 100 %: the
agent beat that schedule) and of the tight bound's, LS SLO violations (the run's and
`local`'s, summed over the seeds, and on how many seeds the run had no more than `local`),
BE mean and p99 delay, transfer kWh and jobs never started (means). The JSON of every run is
kept in --out.

  scripts/fleet-seasons.py [--greensched build/greensched] [--data-dir ../shared/data]
      [--fleet examples/fleet-4-regions.json] [--pods POD_LIST] [--load 70]
      [--slack 0,4,12] [--agent local,green,green-plan] [--seeds 42,43,44]
      [--windows 2023-01-01,2023-04-01,2023-07-01,2023-10-01] [--out fleet-seasons/] [--oracle]
      [--bound-prices] [--learned] [--jobs N]

--oracle adds the rows of the forecasting agents run with forecasts that see the future
(`multi --oracle`): what perfect foresight of carbon and prices is worth to them.
--bound-prices adds the rows of green-plan planning with the bound's capacity prices
(`multi --bound-prices`): what knowing every job to come is worth to it.
--learned adds the rows of the forecasting agents run on learned forecasts (`multi --forecast
learned`, "green-plan (learned)"), from a second run of each window and seed beside the first
(same jobs, so the same bound, which that run does not compute again), and a second table: per
window, slack and forecasting agent, the learned run's share of the bound minus the same-hour
run's, paired by seed (mean, and its standard error over the seeds).
--jobs N runs each `multi` on N threads (default: every core).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


FORECASTING_AGENTS = ("carbon-forecast", "green", "green-plan")


def run(args, window, seed, learned=False):
    suffix = "-learned" if learned else ""
    path = os.path.join(args.out, f"{window}-seed{seed}{suffix}.json")
    if not os.path.exists(path):
        agents = args.agent
        if learned:
            agents = ",".join(a for a in args.agent.split(",") if a in FORECASTING_AGENTS)
        cmd = [
            args.greensched,
            "multi",
            "--fleet",
            args.fleet,
            "--data-dir",
            args.data_dir,
            "--power-down-idle",
            "1800",
            "--load",
            args.load,
            "--slack",
            args.slack,
            "--agent",
            agents,
            "--seeds",
            str(seed),
            "--start",
            window,
            "--no-bound" if learned else "--bound",
            "--json",
            "-q",
        ]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        if learned:
            cmd += ["--forecast", "learned"]
        if args.pods:
            cmd += ["--pods", args.pods]
        if args.oracle and not learned:
            cmd += ["--oracle"]
        if args.bound_prices and not learned:
            cmd += ["--bound-prices"]
        print(f"{window} seed {seed}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        with open(path, "w") as f:
            f.write(out)
    with open(path) as f:
        return json.load(f)


def shares(rows, locals_, savings):
    """Each run's saving against its local run, in % of a saving (kg; runs where it is missing
    or not positive left out)."""
    return [
        100 * (l["carbon_kg"] - r["carbon_kg"]) / b
        for r, l, b in zip(rows, locals_, savings)
        if b is not None and b > 0
    ]


def min_mean(values):
    return f"{min(values):.0f} / {statistics.mean(values):.0f} %" if values else "-"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--greensched", default="build/greensched")
    p.add_argument("--data-dir", default="../shared/data")
    p.add_argument("--fleet", default="examples/fleet-4-regions.json")
    p.add_argument("--pods", default="../shared/data/openb/openb_pod_list_default.csv")
    p.add_argument("--load", default="70")
    p.add_argument("--slack", default="0,4,12")
    p.add_argument("--agent", default="local,green,green-plan")
    p.add_argument("--seeds", default="42,43,44")
    p.add_argument("--windows", default="2023-01-01,2023-04-01,2023-07-01,2023-10-01")
    p.add_argument("--out", default="fleet-seasons")
    p.add_argument(
        "--oracle",
        action="store_true",
        help="also run the forecasting agents with forecasts that see the future",
    )
    p.add_argument(
        "--bound-prices",
        action="store_true",
        help="also run green-plan on the bound's capacity prices",
    )
    p.add_argument(
        "--learned",
        action="store_true",
        help="also run the forecasting agents on learned forecasts (multi --forecast learned)",
    )
    p.add_argument("--jobs", type=int, default=0, help="threads of each multi run (0: every core)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(
        "| window | slack h | agent | carbon vs local | bound vs local | share of bound "
        "(min / mean) | share of feasible (min / mean) | share of tight bound (min / mean) "
        "| LS viol (local) | LS <= local | BE mean s | BE p99 s | transfer kWh | never started |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    paired = []  # (window, slack, agent, [learned minus same-hour share per seed])
    for window in args.windows.split(","):
        runs = {seed: run(args, window, seed) for seed in seeds}
        if args.learned:
            for seed in seeds:
                # The same jobs and slacks: each learned row takes the bound of its slack.
                bounds = {r["slack_h"]: r["bound"] for r in runs[seed] if "bound" in r}
                for r in run(args, window, seed, learned=True):
                    r["bound"] = bounds[r["slack_h"]]
                    runs[seed].append(r)
        keys = []
        for r in runs[seeds[0]]:
            key = (r["slack_h"], r["agent"])
            if key not in keys:
                keys.append(key)
        keys.sort(key=lambda k: k[0])  # stable: each slack's runs in the order they ran
        share_of = {}  # (slack, agent) -> share of the bound per seed
        for slack, agent in keys:
            rows, locals_ = [], []
            for seed in seeds:
                rows += [r for r in runs[seed] if (r["slack_h"], r["agent"]) == (slack, agent)]
                locals_ += [r for r in runs[seed] if (r["slack_h"], r["agent"]) == (slack, "local")]
            vs = [100 * (r["carbon_kg"] / l["carbon_kg"] - 1) for r, l in zip(rows, locals_)]
            # The bound's saving in kg, against the local run's carbon; the share in kg.
            saved = [r["bound"]["local_carbon_kg"] - r["bound"]["carbon_kg"] for r in rows]
            bound = [-100 * b / l["carbon_kg"] for b, l in zip(saved, locals_)]
            share = shares(rows, locals_, saved)
            # Each slack's same-hour runs come before their learned ones (keys keep run order).
            share_of[(slack, agent)] = share
            base = share_of.get((slack, agent.removesuffix(" (learned)")))
            if agent.endswith(" (learned)") and base is not None:
                paired.append((window, slack, agent, [a - b for a, b in zip(share, base)]))
            feasible = shares(rows, locals_, [r["bound"].get("feasible_saving_kg") for r in rows])
            tight = shares(rows, locals_, [r["bound"].get("tight_saving_kg") for r in rows])
            viol = sum(r["ls_slo_violations"] for r in rows)
            local_viol = sum(l["ls_slo_violations"] for l in locals_)
            no_worse = sum(
                r["ls_slo_violations"] <= l["ls_slo_violations"] for r, l in zip(rows, locals_)
            )
            mean = statistics.mean
            print(
                f"| {window} | {slack:g} | {agent} | {mean(vs):+.1f} % | {mean(bound):+.1f} % | "
                f"{min_mean(share)} | {min_mean(feasible)} | {min_mean(tight)} | "
                f"{viol} ({local_viol}) | {no_worse}/{len(rows)} | "
                f"{mean(r['mean_delay_s_be'] for r in rows):,.0f} | "
                f"{mean(r['p99_delay_s_be'] for r in rows):,.0f} | "
                f"{mean(r['transfer_kwh'] for r in rows):,.0f} | "
                f"{mean(r['jobs_never_started'] for r in rows):,.0f} |"
            )
    if paired:
        print()
        print(
            "| window | slack h | agent | learned minus same-hour share of bound, points (mean ± se) |"
        )
        print("|---|---|---|---|")
        for window, slack, agent, diffs in paired:
            se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
            print(f"| {window} | {slack:g} | {agent} | {statistics.mean(diffs):+.2f} ± {se:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
