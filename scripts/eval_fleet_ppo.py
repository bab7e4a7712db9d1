#!/usr/bin/env python3
"""Evaluates the shipped PPO dispatcher on held-out windows and seeds against local, green,
green-plan and the fleet bound, and prints a Markdown table.

The PPO policy (OUT.npz of scripts/train_fleet_ppo.py, run with numpy) dispatches every job of
each 14-day window in greensched/FleetDispatch-v0; the other agents and the bound are
`greensched multi --bound` on the same fleet, jobs and options. Per window and seed, and as
means over them: carbon against local's, LS SLO violations, BE mean delay, jobs moved, and
the share of the bound's carbon saving reached; then a row per window and seed. The JSON of
every run is kept in --out.

  PYTHONPATH=build/python python3 scripts/eval_fleet_ppo.py --model models/fleet_ppo.npz \
      [--windows 2023-04-01,2023-10-01] [--seeds 42,43,44] [--greensched build/greensched]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List


# FleetDispatch-v0's own options: not options of the run.
ENV_ONLY = ("horizon", "reward", "ls_penalty", "expert", "ls_home", "room")


def cli_args(env_kwargs: Dict[str, Any]) -> List[str]:
    """`greensched multi` options for the FleetDispatch-v0 options `env_kwargs` (those of the
    run; not the environment's own: horizon, reward, ls_penalty, expert, ls_home, room)."""
    out: List[str] = []
    for key, value in sorted(env_kwargs.items()):
        if value is None or key in ENV_ONLY:
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            if value:
                out.append(flag)
            continue
        out += [flag, str(value)]
    return out


def baselines(args, env_kwargs: Dict[str, Any], window: str, seed: int) -> List[Dict[str, Any]]:
    path = os.path.join(args.out, f"multi-{window}-seed{seed}.json")
    if not os.path.exists(path):
        kw = dict(env_kwargs, start=window, days=args.days)
        cmd = [args.greensched, "multi", *cli_args(kw), "--agent", args.agents]
        cmd += ["--seeds", str(seed), "--bound", "--json", "-q"]
        print(" ".join(cmd), file=sys.stderr, flush=True)
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        with open(path, "w") as f:
            f.write(out)
    with open(path) as f:
        return json.load(f)


def ppo_run(args, policy, window: str, seed: int) -> Dict[str, Any]:
    path = os.path.join(args.out, f"ppo-{window}-seed{seed}.json")
    if not os.path.exists(path):
        import gymnasium as gym

        import greensched.envs  # noqa: F401
        from greensched.examples.fleet_ppo import run_episode

        env = gym.make(
            "greensched/FleetDispatch-v0", **policy.env_kwargs(start=window, days=args.days)
        )
        t0 = time.monotonic()
        info = run_episode(env, policy, seed=seed)
        row = dict(summary_of(info), agent="ppo", seed=seed, wall_seconds=time.monotonic() - t0)
        row["steps"], row["invalid_actions"] = info["steps"], info["invalid_actions"]
        with open(path, "w") as f:
            json.dump(row, f, indent=1, sort_keys=True)
    with open(path) as f:
        return json.load(f)


def summary_of(info: Dict[str, Any]) -> Dict[str, Any]:
    """The episode's summary row (as `greensched multi --json` gives one) from its last info."""
    s = info["result"]
    return {k: v for k, v in s.items() if isinstance(v, (int, float, str))}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="models/fleet_ppo.npz")
    p.add_argument("--greensched", default="build/greensched")
    p.add_argument("--windows", default="2023-04-01,2023-10-01")
    p.add_argument("--seeds", default="42,43,44")
    p.add_argument("--days", type=float, default=14)
    p.add_argument("--agents", default="local,green,green-plan")
    p.add_argument("--out", default="fleet-ppo-eval")
    args = p.parse_args()

    from greensched.examples.fleet_ppo import NumpyPolicy

    policy = NumpyPolicy.load(args.model)
    env_kwargs = policy.env_kwargs()
    os.makedirs(args.out, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = args.agents.split(",") + ["ppo"]
    rows: Dict[str, List[Dict[str, Any]]] = {n: [] for n in names + ["bound"]}
    for window in args.windows.split(","):
        for seed in seeds:
            runs = baselines(args, env_kwargs, window, seed)
            local = next(r for r in runs if r["agent"] == "local")
            # The bound's saving in kg (against its own local run), taken off local's carbon.
            b = local.get("bound")
            bound = local["carbon_kg"] - (b["local_carbon_kg"] - b["carbon_kg"]) if b else None
            runs = runs + [ppo_run(args, policy, window, seed)]
            for r in runs:
                r = dict(r, window=window, local_carbon_kg=local["carbon_kg"])
                r["local_ls"] = local["ls_slo_violations"]
                r["bound_carbon_kg"] = bound
                rows[r["agent"]].append(r)
            rows["bound"].append(dict(carbon_kg=bound, local_carbon_kg=local["carbon_kg"]))

    print(
        "| agent | carbon vs local % (mean; min / max) | share of bound's saving % | "
        "LS violations (local's) | BE mean delay h | jobs moved | runs |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in names + ["bound"]:
        rs = rows[name]
        if not rs or rs[0]["carbon_kg"] is None:
            continue
        pct = [100 * (r["carbon_kg"] / r["local_carbon_kg"] - 1) for r in rs]
        if name == "bound":
            print(
                f"| bound | {statistics.mean(pct):+.1f}; {min(pct):+.1f} / {max(pct):+.1f}"
                f" | 100 | - | - | - | {len(rs)} |"
            )
            continue
        share = [
            100
            * (r["local_carbon_kg"] - r["carbon_kg"])
            / (r["local_carbon_kg"] - r["bound_carbon_kg"])
            for r in rs
            if r.get("bound_carbon_kg") is not None and r["local_carbon_kg"] > r["bound_carbon_kg"]
        ]
        ls = sum(int(r["ls_slo_violations"]) for r in rs)
        local_ls = sum(int(r["local_ls"]) for r in rs)
        be = statistics.mean(float(r["mean_delay_s_be"]) for r in rs) / 3600
        moved = statistics.mean(float(r.get("jobs_moved", 0)) for r in rs)
        print(
            f"| {name} | {statistics.mean(pct):+.1f}; {min(pct):+.1f} / {max(pct):+.1f} | "
            f"{statistics.mean(share):.0f} | {ls} ({local_ls}) | {be:.2f} | {moved:.0f} | "
            f"{len(rs)} |"
            if share
            else f"| {name} | {statistics.mean(pct):+.1f} | - | {ls} ({local_ls}) | {be:.2f} | "
            f"{moved:.0f} | {len(rs)} |"
        )
    print()
    print_per_run(rows, names)
    return 0


def print_per_run(rows: Dict[str, List[Dict[str, Any]]], names: List[str]) -> None:
    """Per window and seed: each agent's carbon against local's (%) and LS SLO violations,
    and the bound's carbon against local's."""
    head = " | ".join(f"{n} carbon % | {n} LS" for n in names)
    print(f"| window | seed | local kg | {head} | bound carbon % |")
    print("|---|---|---|" + "---|" * (2 * len(names) + 1))
    for i, local in enumerate(rows[names[0]]):
        cells = []
        for n in names:
            r = rows[n][i]
            cells.append(f"{100 * (r['carbon_kg'] / r['local_carbon_kg'] - 1):+.1f}")
            cells.append(str(int(r["ls_slo_violations"])))
        b = rows["bound"][i]["carbon_kg"]
        bound = "-" if b is None else f"{100 * (b / local['local_carbon_kg'] - 1):+.1f}"
        print(
            f"| {local['window']} | {local['seed']} | {local['local_carbon_kg']:.0f} | "
            + " | ".join(cells)
            + f" | {bound} |"
        )


if __name__ == "__main__":
    sys.exit(main())
