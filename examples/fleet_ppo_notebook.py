"""A PPO dispatcher for a 4-region GPU fleet, step by step (cells: `# %%`, for Jupyter/VS Code).

Trains MaskablePPO on FleetDispatch-v0 for a few minutes (or uses the shipped
models/fleet_ppo.npz with --shipped), evaluates it on a held-out window and seed against
`local` and `green` (greensched.multi), and plots the learning curve and each agent's carbon
(matplotlib; skipped with a message where it is missing). Needs `make rl` (torch, sb3-contrib)
for training; evaluating the shipped model needs numpy and gymnasium only.

  build-rl/venv/bin/python examples/fleet_ppo_notebook.py [--minutes 3] [--shipped]
      [--window 2023-10-01] [--seed 44] [--days 2] [--out fleet-ppo-notebook]
"""

# %% Setup: options, paths
import argparse
import json
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np

import greensched
import greensched.envs  # noqa: F401  (registers greensched/FleetDispatch-v0)
from greensched.examples.fleet_ppo import NumpyPolicy, run_episode

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--minutes", type=float, default=3, help="training wall-clock minutes")
parser.add_argument("--shipped", action="store_true", help="use models/fleet_ppo.npz")
parser.add_argument("--window", default="2023-10-01", help="held-out start day")
parser.add_argument("--seed", type=int, default=44, help="held-out seed")
parser.add_argument("--days", type=float, default=2)
parser.add_argument("--out", default="fleet-ppo-notebook")
args, _ = parser.parse_known_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.makedirs(args.out, exist_ok=True)

# %% Train (or take the shipped model)
if args.shipped:
    model = os.path.join(root, "models", "fleet_ppo")
else:
    model = os.path.join(args.out, "fleet_ppo")
    cmd = [sys.executable, os.path.join(root, "scripts", "train_fleet_ppo.py")]
    cmd += ["--out", model, "--minutes", str(args.minutes), "--no-zip"]
    print("training:", " ".join(cmd))
    subprocess.run(cmd, check=True)
policy = NumpyPolicy.load(model + ".npz")
print(f"policy: {policy.layers[0][0].shape[1]} inputs, {policy.n_actions} actions")

# %% Evaluate on the held-out window: PPO in the environment, local and green with multi
env = gym.make(
    "greensched/FleetDispatch-v0", **policy.env_kwargs(start=args.window, days=args.days)
)
ppo = run_episode(env, policy, seed=args.seed)
print(f"ppo: {ppo['steps']} decisions, {ppo['invalid_actions']} masked-out actions")
kw = policy.env_kwargs(start=args.window, days=args.days)
base = greensched.multi("local,green", seeds=args.seed, **kw)["summary"]
carbon = {str(a): float(c) for a, c in zip(base["agent"], base["carbon_kg"])}
carbon["ppo"] = ppo["result"]["carbon_kg"]
for name, kg in carbon.items():
    print(f"{name:>6}: {kg:12,.0f} kg CO2 ({100 * (kg / carbon['local'] - 1):+.1f} % vs local)")

# %% Plot: learning curve and carbon per agent
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: no plots (apt-get install python3-matplotlib)")
if plt is not None:
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
    with open(model + ".json") as f:
        log = json.load(f).get("log", [])
    log = [r for r in log if r.get("ep_return") is not None]
    ax0.plot([r["steps"] for r in log], [r["ep_return"] for r in log])
    ax0.set(title="PPO after cloning", xlabel="decisions", ylabel="mean episode return")
    names = list(carbon)
    ax1.bar(names, [carbon[n] / 1000 for n in names], color=["grey", "green", "tab:blue"])
    ax1.set(title=f"{args.window}, {args.days:g} days, seed {args.seed}", ylabel="t CO2")
    fig.tight_layout()
    path = os.path.join(args.out, "fleet_ppo.png")
    fig.savefig(path, dpi=100)
    print("wrote", path)
