#!/usr/bin/env python3
"""Renders the tables of docs/RESULTS.md from the files greensched wrote.

scripts/reproduce-results.sh runs a section's commands into a work folder, then calls

  scripts/results_table.py SECTION WORKDIR DOC

which renders each table of SECTION from WORKDIR (summary.csv, curves.csv, bound.csv or the
JSON of `greensched bound --json`) and replaces, in DOC, the lines between
`<!-- results:BLOCK begin -->` and `<!-- results:BLOCK end -->` for every block of the section.
`--print` writes the tables to stdout instead. Means are over seeds; nothing depends on the
machine, so the same files give the same bytes.
"""
import argparse
import csv
import json
import os
import re
import statistics
import sys


class Error(Exception):
    pass


def read_csv(path):
    if not os.path.exists(path):
        raise Error(f"{path}: not found (did the section's command run?)")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_json(path):
    if not os.path.exists(path):
        raise Error(f"{path}: not found (did the section's command run?)")
    with open(path) as f:
        return json.load(f)


def mean(values):
    values = list(values)
    if not values:
        raise Error("no rows to average")
    return statistics.fmean(values)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def pct(x, digits=1):
    """A signed percentage change: +0.0 %, -12.3 %."""
    text = f"{x:+.{digits}f}"
    if float(text) == 0:
        text = "+" + text[1:] if text.startswith("-") else text
    return text + " %"


def thousands(x):
    return f"{x:,.0f}"


def num(row, key):
    value = row.get(key, "")
    if value == "":
        raise Error(
            f"column {key} is empty in a row of policy/agent {row.get('policy') or row.get('agent')}"
        )
    return float(value)


def group(rows, *keys):
    """Rows grouped by the given columns, in the order they first appear."""
    out = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


# --- Inflation protocol (the FGD and PWR papers) -----------------------------------------------

PUBLISHED_FGD = {  # Weng et al., ATC'23: GPU allocation % at 100 % arrival, as published
    "fgd": ("FGD", "95.23"),
    "bestfit": ("BestFit", "92.86"),
    "packing": ("GpuPacking", "91.78"),
    "clustering": ("GpuClustering", "91.65"),
    "dotprod": ("DotProduct", "90.62"),
    "random": ("Random", "86.30"),
}


def repro_fgd(work):
    by = group(read_csv(f"{work}/summary.csv"), "policy")
    rows = []
    for policy, (name, published) in PUBLISHED_FGD.items():
        runs = by.get((policy,))
        if not runs:
            raise Error(f"{work}/summary.csv: no rows for {policy}")
        rows.append(
            [
                name,
                f"{mean(num(r, 'alloc_gpu_pct_at_100') for r in runs):.2f}",
                published,
            ]
        )
    return {"repro-fgd": table(["policy", "greensched", "published (ATC'23)"], rows)}


def pwr(work):
    curves = group(read_csv(f"{work}/curves.csv"), "policy", "arrived_gpu_pct")
    levels = [10, 30, 50, 70, 80, 90, 100, 130]

    def power(policy, level):
        runs = curves.get((policy, str(level)))
        if not runs:
            raise Error(f"{work}/curves.csv: no {policy} rows at {level} % arrival")
        return mean(num(r, "power_watts") for r in runs)

    saving = [f"{100 * (1 - power('pwr:200+fgd:800', l) / power('fgd', l)):.1f} %" for l in levels]
    arrival = table(
        ["arrived GPU requests (% of capacity)"] + [str(l) for l in levels],
        [["power saving of pwr:200+fgd:800 vs FGD"] + saving],
    )
    summary = group(read_csv(f"{work}/summary.csv"), "policy")
    fgd_kw = mean(num(r, "power_watts_at_100") for r in summary[("fgd",)]) / 1000
    rows = []
    for (policy,), runs in summary.items():
        alloc = mean(num(r, "alloc_gpu_pct_at_100") for r in runs)
        kw = mean(num(r, "power_watts_at_100") for r in runs) / 1000
        saving = "-" if policy == "fgd" else f"{100 * (1 - kw / fgd_kw):.1f} %"
        rows.append([policy, f"{alloc:.2f}", f"{kw:.1f}", saving])
    weights = table(["policy", "GPU alloc %", "power kW", "saving vs FGD"], rows)
    return {"pwr-arrival": arrival, "pwr-weights": weights}


# --- One cluster replayed at a stated load ----------------------------------------------------


def policy_label(policy):
    if policy.startswith("learned:"):
        name = os.path.splitext(os.path.basename(policy[len("learned:") :]))[0]
        return f"learned ({name.removeprefix('learned-')} model)"
    return policy


def single_cluster_load(work):
    rows = read_csv(f"{work}/summary.csv")
    blocks = {}
    for rule, block in (
        ("pwr", "single-cluster-load"),
        ("proportional", "single-cluster-load-proportional"),
    ):
        by = group(
            [r for r in rows if r["gpu_power"] == rule],
            "target_load_pct",
            "policy",
            "power_down_idle_s",
        )
        if not by:
            raise Error(f"{work}/summary.csv: no rows with gpu_power {rule}")
        # Rows by load, then policy (in the command's order), then never sleeping (-1) first.
        policies = list(dict.fromkeys(policy for _, policy, _ in by))
        order = sorted(by, key=lambda k: (float(k[0]), policies.index(k[1]), float(k[2])))
        out = []
        for load, policy, idle in order:
            runs = by[(load, policy, idle)]
            base = [by[k] for k in by if k[0] == load and k[1] == "fgd" and float(k[2]) < 0]
            if not base:
                raise Error(f"{work}/summary.csv: no fgd run with every node on at load {load}")
            energy = mean(num(r, "energy_kwh") for r in runs)
            base_energy = mean(num(r, "energy_kwh") for r in base[0])
            sleeps = "no" if float(idle) < 0 else f"after {int(float(idle)) // 60} min"
            out.append(
                [
                    f"{float(load):g}",
                    policy_label(policy),
                    sleeps,
                    f"{energy / 1000:.1f}",
                    pct(100 * (energy / base_energy - 1)),
                    f"{mean(num(r, 'energy_over_floor') for r in runs):.3f}",
                    f"{mean(num(r, 'ls_p99_delay_s') for r in runs):.0f}",
                    f"{mean(num(r, 'be_p99_delay_s') for r in runs):.0f}",
                    f"{mean(num(r, 'pods_never_started') for r in runs):.1f}",
                    f"{mean(num(r, 'mean_nodes_awake') for r in runs):.0f}",
                ]
            )
        blocks[block] = table(
            [
                "load %",
                "policy",
                "nodes sleep",
                "energy MWh",
                "vs FGD always on",
                "energy / floor",
                "LS p99 s",
                "BE p99 s",
                "never started",
                "nodes awake",
            ],
            out,
        )
    return blocks


# --- The fleet ---------------------------------------------------------------------------------


def fleet_rows(folder):
    """summary.csv rows (one controller: none) with bound.csv's columns merged in."""
    summary = [
        r for r in read_csv(f"{folder}/summary.csv") if r.get("controller", "none") in ("", "none")
    ]
    bound = {}
    if os.path.exists(f"{folder}/bound.csv"):
        for b in read_csv(f"{folder}/bound.csv"):
            bound[
                (
                    b["agent"],
                    f"{float(b['target_load_pct']):g}",
                    f"{float(b['slack_h']):g}",
                )
            ] = b
    for r in summary:
        key = (
            r["agent"],
            f"{float(r['target_load_pct'] or 0):g}",
            f"{float(r['slack_h']):g}",
        )
        r.update({k: v for k, v in bound.get(key, {}).items() if k not in r})
    return summary


def carbon_vs_local(r, rows):
    local = [
        l
        for l in rows
        if l["agent"] == "local"
        and l["target_load_pct"] == r["target_load_pct"]
        and l["slack_h"] == r["slack_h"]
    ]
    if not local:
        raise Error(f"no local run at load {r['target_load_pct']}, slack {r['slack_h']}")
    return 100 * (num(r, "carbon_kg") / num(local[0], "carbon_kg") - 1)


def share(r, column="share_of_bound_pct"):
    """A run's share of a bound's saving (bound.csv's share_of_bound_pct, or the feasible
    schedule's share_of_feasible_pct or the tight bound's share_of_tight_bound_pct)."""
    value = r.get(column, "")
    return f"{float(value):.0f} %" if value != "" else ""


def bound_vs_local(r):
    value = r.get("bound_carbon_vs_local_pct", "")
    return pct(float(value)) if value != "" else ""


# The columns of the fleet-load and fleet-slack tables: each header with how a run's cell is
# written (rows: all the section's runs, for the comparison with `local` at the same point).
FLEET_COLUMNS = {
    "load %": lambda r, rows: f"{float(r['target_load_pct']):g}",
    "slack h": lambda r, rows: f"{float(r['slack_h']):g}",
    "agent": lambda r, rows: r["agent"],
    "carbon t": lambda r, rows: f"{num(r, 'carbon_kg') / 1000:.1f}",
    "vs local": lambda r, rows: pct(carbon_vs_local(r, rows)),
    "bound vs local": lambda r, rows: bound_vs_local(r),
    "share of bound": lambda r, rows: share(r),
    "share of feasible": lambda r, rows: share(r, "share_of_feasible_pct"),
    "share of tight bound": lambda r, rows: share(r, "share_of_tight_bound_pct"),
    "LS SLO violations": lambda r, rows: r["ls_slo_violations"],
    "LS p99 s": lambda r, rows: thousands(num(r, "p99_delay_s_ls")),
    "BE mean s": lambda r, rows: thousands(num(r, "mean_delay_s_be")),
    "BE p99 s": lambda r, rows: thousands(num(r, "p99_delay_s_be")),
    "transfer kWh": lambda r, rows: thousands(num(r, "transfer_kwh")),
    "never started": lambda r, rows: r["jobs_never_started"],
    "GPU alloc %": lambda r, rows: f"{num(r, 'gpu_alloc_pct'):.1f}",
}


def fleet_row(r, rows, columns):
    """The cells of run r under the given FLEET_COLUMNS headers."""
    return [FLEET_COLUMNS[c](r, rows) for c in columns]


def fleet_table(work, columns):
    rows = fleet_rows(work)
    return table(columns, [fleet_row(r, rows, columns) for r in rows])


def fleet_load(work):
    columns = [
        "load %",
        "agent",
        "carbon t",
        "vs local",
        "bound vs local",
        "share of bound",
        "LS SLO violations",
        "LS p99 s",
        "BE mean s",
        "BE p99 s",
        "never started",
        "GPU alloc %",
    ]
    return {"fleet-load": fleet_table(work, columns)}


def fleet_slack(work):
    columns = [
        "slack h",
        "agent",
        "carbon t",
        "vs local",
        "bound vs local",
        "share of bound",
        "LS SLO violations",
        "BE mean s",
        "BE p99 s",
        "transfer kWh",
        "GPU alloc %",
    ]
    return {"fleet-slack": fleet_table(work, columns)}


def fleet_preempt(work):
    rows = fleet_rows(f"{work}/preempt")
    without = {(r["agent"], r["slack_h"]): r for r in fleet_rows(f"{work}/no-preempt")}
    out = []
    for r in rows:
        w = without.get((r["agent"], r["slack_h"]))
        if w is None:
            raise Error(f"{work}/no-preempt: no run of {r['agent']} at slack {r['slack_h']}")
        out.append(
            [
                f"{float(r['slack_h']):g}",
                r["agent"],
                pct(carbon_vs_local(r, rows)),
                share(r),
                f"{r['ls_slo_violations']} ({thousands(num(w, 'ls_slo_violations'))})",
                thousands(num(r, "be_preemptions")),
                thousands(num(r, "p99_delay_s_be")),
            ]
        )
    return {
        "fleet-preempt": table(
            [
                "slack h",
                "agent",
                "carbon vs `local`",
                "share of bound",
                "LS violations (without)",
                "BE jobs evicted",
                "BE p99 s",
            ],
            out,
        )
    }


def seasons_table(work, block):
    """The table scripts/fleet-seasons.py printed into WORK/table.md: per window, slack and
    agent, the three shares (of the bound, of its feasible schedule, of the tight bound), each
    as the lowest and the mean over the seeds."""
    path = f"{work}/table.md"
    if not os.path.exists(path):
        raise Error(f"{path}: not found")
    with open(path) as f:
        text = f.read().strip()
    if not text.startswith("|"):
        raise Error(f"{path}: not a table")
    return {block: text}


# --- Energy management across sites ----------------------------------------------------------


def fleet_sites(work):
    """Per site: its mean intensity and time-weighted GPU and CPU allocation under each agent over
    the measured window (timeline.csv), beside the bound's schedule (bound_sites.csv)."""
    summary = read_csv(f"{work}/summary.csv")
    window_s = num(summary[0], "window_s")
    timeline = read_csv(f"{work}/timeline.csv")
    end = max(int(r["time_s"]) for r in timeline)
    start = end - window_s
    # Each sample holds until the next one of the same agent and site.
    alloc, cpu, carbon, span, last = {}, {}, {}, {}, {}
    for r in timeline:
        if r["site"] == "fleet":
            continue
        key, t = (r["agent"], r["site"]), int(r["time_s"])
        if key in last:
            t0, a0, u0, c0 = last[key]
            dt = max(0, min(t, end) - max(t0, start))
            alloc[key] = alloc.get(key, 0) + a0 * dt
            cpu[key] = cpu.get(key, 0) + u0 * dt
            carbon[key] = carbon.get(key, 0) + c0 * dt
            span[key] = span.get(key, 0) + dt
        last[key] = (
            t,
            float(r["gpu_alloc_pct"]),
            float(r["cpu_alloc_pct"]),
            float(r["carbon_intensity"]),
        )
    agents = [r["agent"] for r in summary]
    header = (
        ["site", "mean gCO2/kWh"]
        + [f"{a} GPU / CPU alloc %" for a in agents]
        + ["bound GPU alloc %", "feasible GPU alloc %", "bound, all at home GPU alloc %"]
    )
    rows = []
    for b in read_csv(f"{work}/bound_sites.csv"):
        site = b["site"]
        row = [site, f"{carbon[(agents[0], site)] / span[(agents[0], site)]:.0f}"]
        row += [
            f"{alloc[(a, site)] / span[(a, site)]:.1f} / {cpu[(a, site)] / span[(a, site)]:.1f}"
            for a in agents
        ]
        feasible = b.get("feasible_alloc_pct", "")
        row += [
            f"{num(b, 'bound_alloc_pct'):.1f}",
            f"{float(feasible):.1f}" if feasible else "-",
            f"{num(b, 'local_alloc_pct'):.1f}",
        ]
        rows.append(row)
    # Each run beside the bound: its carbon and share, its service, and how much of the
    # fleet's work it ran inside the window (allocation).
    bound = {r["agent"]: r for r in read_csv(f"{work}/bound.csv")}
    run_header = [
        "agent",
        "carbon vs local",
        "bound vs local",
        "share of bound",
        "of feasible",
        "of tight bound",
        "LS viol",
        "BE p99 s",
        "fleet GPU alloc %",
        "transfer kWh",
    ]
    run_rows = []
    for r in summary:
        b = bound[r["agent"]]
        run_rows.append(
            [
                r["agent"],
                f"{num(b, 'carbon_vs_local_pct'):+.1f} %",
                f"{num(b, 'bound_carbon_vs_local_pct'):+.1f} %",
                f"{num(b, 'share_of_bound_pct'):.0f} %",
                f"{num(b, 'share_of_feasible_pct'):.0f} %",
                f"{num(b, 'share_of_tight_bound_pct'):.0f} %",
                r["ls_slo_violations"],
                f"{num(r, 'p99_delay_s_be'):,.0f}",
                f"{num(r, 'gpu_alloc_pct'):.1f}",
                f"{num(r, 'transfer_kwh'):,.0f}",
            ]
        )
    return {"fleet-sites": table(header, rows), "fleet-sites-runs": table(run_header, run_rows)}


def energy_sites(work):
    rows = read_csv(f"{work}/summary.csv")
    base = [r for r in rows if r["agent"] == "local" and r["controller"] == "none"]
    if not base:
        raise Error(f"{work}/summary.csv: no local/none row")
    base_cost = num(base[0], "cost_usd")
    out = []
    for r in rows:
        out.append(
            [
                f"{float(r['target_load_pct']):g}",
                r["agent"],
                r["controller"],
                thousands(num(r, "cost_usd")),
                pct(100 * (num(r, "cost_usd") / base_cost - 1)),
                thousands(num(r, "carbon_kg")),
                f"{num(r, 'self_consumption_pct'):.1f}",
                f"{num(r, 'battery_cycles'):.1f}",
                r["ls_slo_violations"],
                thousands(num(r, "p99_delay_s_be")),
                r["jobs_never_started"],
            ]
        )
    return {
        "energy-sites": table(
            [
                "load %",
                "agent",
                "controller",
                "cost USD",
                "vs local/none",
                "carbon kg",
                "self-consumption %",
                "battery cycles",
                "LS violations",
                "BE p99 s",
                "never started",
            ],
            out,
        )
    }


FORECASTS = [
    ("past", "past only"),
    ("prices", "+ day-ahead prices"),
    ("weather", "+ day-ahead weather forecast (default error)"),
    ("exact", "+ exact weather"),
]
# The same with mpc's price and carbon forecasts learned (--mpc-forecast learned).
LEARNED = [
    ("past-learned", "past only, learned price and carbon forecasts"),
    (
        "weather-learned",
        "+ day-ahead prices + weather forecast, learned price and carbon forecasts",
    ),
]


def controller_rows(folder):
    return {(r["agent"], r["controller"]): r for r in read_csv(f"{folder}/summary.csv")}


def mpc_share(rows, agent):
    """The part of the oracle's cost saving over `none` that `mpc` captures, in %."""
    none = num(rows[(agent, "none")], "cost_usd")
    mpc = num(rows[(agent, "mpc")], "cost_usd")
    oracle = num(rows[(agent, "oracle")], "cost_usd")
    if none == oracle:
        raise Error(f"{agent}: the oracle saves nothing; no share")
    return 100 * (none - mpc) / (none - oracle)


def energy_forecasts(work):
    agents = ["local", "green-cost", "green-cost-carbon"]
    out = []
    for key, label in FORECASTS + LEARNED:
        rows = controller_rows(f"{work}/{key}")
        out.append([label] + [f"{mpc_share(rows, a):.1f} %" for a in agents])
    return {"energy-forecasts": table(["forecasts"] + [f"`{a}`" for a in agents], out)}


def energy_seasons(work):
    windows = sorted(d for d in os.listdir(work) if os.path.isdir(f"{work}/{d}"))
    green = ["green-cost", "green-cost-carbon"]
    out = []
    for w in windows:
        runs = {key: controller_rows(f"{work}/{w}/{key}") for key, _ in FORECASTS + LEARNED}
        shares = [
            " / ".join(f"{mpc_share(runs[k], a):.1f}" for k, _ in FORECASTS) + " %"
            for a in ["local"] + green
        ]
        learned = [
            " / ".join(f"{mpc_share(runs[k], a):.1f}" for k, _ in LEARNED) + " %"
            for a in ["local"] + green
        ]
        past = runs["past"]
        local_none = num(past[("local", "none")], "cost_usd")
        cheaper = " / ".join(
            pct(100 * (num(past[(a, "mpc")], "cost_usd") / local_none - 1)) for a in green
        )
        violations = " / ".join(
            f"{runs[k][(a, 'mpc')]['ls_slo_violations']}"
            for a in green
            for k in ("past", "weather")
        )
        out.append(
            [w]
            + shares
            + learned
            + [cheaper, violations, past[("local", "none")]["ls_slo_violations"]]
        )
    return {
        "energy-seasons": table(
            [
                "window",
                "mpc share of the oracle's saving, `local`: past / + day-ahead prices / + weather forecast / + exact weather",
                "the same under `green-cost`",
                "under `green-cost-carbon`",
                "with learned price and carbon forecasts, `local`: past / + day-ahead prices + weather forecast",
                "the same under `green-cost`",
                "under `green-cost-carbon`",
                "`green-cost` / `green-cost-carbon` + mpc vs `local` + none (past)",
                "LS violations with mpc, `green-cost` past / weather, `green-cost-carbon` past / weather",
                "`local` LS violations",
            ],
            out,
        )
    }


# --- The allocation bound, fgd-online, the learned policy ------------------------------------


def bound_policy(result, policy, path):
    for p in result["policies"]:
        if p["policy"] == policy:
            return p
    raise Error(f"{path}: no figures for policy {policy}")


def bound_files(work):
    """(name, path) of the bound JSON files, in the order the section wrote them."""
    names = []
    with open(f"{work}/order.txt") as f:
        names = [line.strip() for line in f if line.strip() and not line.strip().endswith("-first")]
    return [(n, f"{work}/{n}.json") for n in names]


def bound_families(work):
    """FGD against the LP bound per pod list, and the offline packing beside them: its
    allocation and the share of FGD's gap to the bound that it leaves (blank without it)."""
    out = []
    for name, path in bound_files(work):
        r = read_json(path)
        policy = bound_policy(r, "fgd", path)
        fgd = policy["alloc_gpu_pct"]
        b = r["upper_bound_alloc_pct"]
        packing = r.get("packing_alloc_pct")
        left = policy.get("lp_gap_left_by_packing_pct")
        out.append(
            [
                name,
                f"{fgd:.2f}",
                f"{b:.2f}",
                f"{b - fgd:.2f}",
                "" if packing is None else f"{packing:.2f}",
                "" if left is None else f"{left:.0f} %",
            ]
        )
    return {
        "bound-families": table(
            [
                "pod list",
                "FGD alloc %",
                "bound %",
                "FGD's gap (points)",
                "packing %",
                "LP gap left by packing",
            ],
            out,
        )
    }


def defrag_lists(work):
    budgets = ["0", "0.5", "1", "2", "5"]
    out = []
    gains = {"default": [], "other": []}
    for name, path in bound_files(work):
        r = read_json(path)
        lp = r["upper_bound_alloc_pct"]
        alloc = {}
        moves_at_1 = 0.0
        for b in budgets:
            runs = read_json(f"{work}/{name}-moves-{b}.json")
            alloc[b] = mean([x["alloc_gpu_pct_at_100"] for x in runs])
            if b == "1":
                moves_at_1 = mean([x["migrated_pods_at_100"] for x in runs])
        fgd = alloc["0"]
        gains["default" if name == "default" else "other"].append(alloc["1"] - fgd)
        packing = r.get("packing_alloc_pct")
        row = [name, f"{fgd:.2f}"] + [f"{alloc[b] - fgd:+.2f}" for b in budgets[1:]]
        row += [f"{moves_at_1:.0f}"]
        if packing is None:
            row += ["-", f"{lp:.2f}", "-"]
        else:
            left = (lp - packing) / (lp - fgd) * 100 if lp > fgd else 0.0
            row += [f"{packing:.2f}", f"{lp:.2f}", f"{left:.0f}"]
        out.append(row)
    header = [
        "pod list",
        "FGD alloc %",
        "+0.5 %",
        "+1 %",
        "+2 %",
        "+5 %",
        "moves @1 %",
        "packing %",
        "LP %",
        "LP gap left by packing %",
    ]
    other = gains["other"]
    note = (
        f"\n\nFGD with moves at a 1 % budget, against FGD without: "
        f"{mean(gains['default']):+.2f} points on default, "
        f"{mean(other):+.2f} on the mean of the {len(other)} other lists "
        f"(lowest {min(other):+.2f}, highest {max(other):+.2f})."
    )
    return {"defrag-lists": table(header, out) + note}


def defrag_replay(work):
    out = []
    for load in ["30", "50", "70", "90", "100"]:
        base = read_json(f"{work}/load-{load}-moves-0.json")
        moved = read_json(f"{work}/load-{load}-moves-1.json")

        def m(runs, key):
            return mean([r[key] for r in runs])

        saved = m(base, "energy_kwh") - m(moved, "energy_kwh")
        out.append(
            [
                load,
                f"{m(moved, 'pods_migrated'):.0f}",
                f"{m(moved, 'pods_rescued'):.0f}",
                f"{m(base, 'pending_gpu_hours'):,.0f} / {m(moved, 'pending_gpu_hours'):,.0f}",
                f"{mean([r['be_delay']['p99_s'] for r in base]):,.0f}"
                f" / {mean([r['be_delay']['p99_s'] for r in moved]):,.0f}",
                f"{m(base, 'energy_kwh'):,.0f} / {m(moved, 'energy_kwh'):,.0f}",
                f"{saved:+,.0f}",
                f"{saved / gap * 100:.1f}"
                if (gap := m(base, "energy_kwh") - m(base, "energy_floor_kwh")) > 0
                else "-",
                f"{m(moved, 'lost_gpu_hours'):,.1f}",
                f"{m(moved, 'lost_energy_kwh'):,.1f}",
                f"{mean([r['ls_delay']['p99_s'] for r in base]):,.0f}"
                f" / {mean([r['ls_delay']['p99_s'] for r in moved]):,.0f}",
            ]
        )
    header = [
        "load %",
        "moves",
        "pods started by moves",
        "pending GPU-h, none / 1 %",
        "BE p99 wait s, none / 1 %",
        "energy kWh, none / 1 %",
        "energy saved kWh",
        "share of the saving to the energy floor %",
        "GPU-h lost to moves",
        "their energy kWh",
        "LS p99 wait s, none / 1 %",
    ]
    return {"defrag-replay": table(header, out)}


def defrag_consolidate(work):
    out = []
    for load in ["30", "50", "70"]:
        base = read_json(f"{work}/load-{load}-moves-0.json")

        def m(runs, key):
            return mean([r[key] for r in runs])

        floor_gap = m(base, "energy_kwh") - m(base, "energy_floor_kwh")
        for b, c in [("0", ""), ("1", ""), ("1", "-consolidate"), ("5", ""), ("5", "-consolidate")]:
            runs = base if b == "0" else read_json(f"{work}/load-{load}-moves-{b}{c}.json")
            over = m(runs, "energy_kwh") - m(runs, "energy_floor_kwh")
            out.append(
                [
                    load,
                    "none" if b == "0" else b,
                    "yes" if c else "no",
                    f"{m(runs, 'pods_migrated'):.0f}",
                    f"{m(runs, 'pods_rescued'):.0f}",
                    f"{m(runs, 'nodes_drained'):.0f}",
                    f"{m(runs, 'energy_kwh'):,.0f}",
                    f"{over:,.0f}",
                    f"{(floor_gap - over) / floor_gap * 100:.1f}" if floor_gap > 0 else "-",
                    f"{m(runs, 'lost_gpu_hours'):,.1f}",
                    f"{m(runs, 'pending_gpu_hours'):,.0f}",
                    f"{m(runs, 'wakeups'):,.0f}",
                    f"{mean([r['ls_delay']['p99_s'] for r in runs]):,.0f}",
                ]
            )
    header = [
        "load %",
        "budget %",
        "consolidate",
        "moves",
        "pods started by moves",
        "nodes drained",
        "energy kWh",
        "energy above the floor kWh",
        "share of the gap to the floor closed %",
        "GPU-h lost to moves",
        "pending GPU-h",
        "wake-ups",
        "LS p99 wait s",
    ]
    return {"defrag-consolidate": table(header, out)}


def fgd_online(work):
    out = []
    for name, path in bound_files(work):
        r = read_json(path)
        first = ""
        label = name
        if name.startswith("drift-"):
            a, b = name[len("drift-") :].split("-")
            label = f"drift {a} → {b}"
            first_path = f"{work}/{name}-first.json"
            first = f"{bound_policy(read_json(first_path), 'fgd', first_path)['alloc_gpu_pct']:.2f}"
        cells = [
            f"{bound_policy(r, p, path)['alloc_gpu_pct']:.2f}"
            for p in ("fgd", "fgd-online=2000", "fgd-online=all")
        ]
        out.append(
            [
                label,
                cells[0],
                first,
                cells[1],
                cells[2],
                f"{r['upper_bound_alloc_pct']:.2f}",
            ]
        )
    return {
        "fgd-online": table(
            [
                "workload",
                "FGD (whole-trace target)",
                "FGD, target of the first list only",
                "fgd-online (window 2000)",
                "fgd-online=all",
                "bound",
            ],
            out,
        )
    }


def learned(work, block):
    out = []
    sums = [0.0] * 8
    for name, path in bound_files(work):
        r = read_json(path)
        fgd = bound_policy(r, "fgd", path)
        model = [p for p in r["policies"] if p["policy"].startswith("learned")]
        if not model:
            raise Error(f"{path}: no figures for the learned policy")
        m = model[0]
        values = [
            fgd["alloc_gpu_pct"],
            m["alloc_gpu_pct"],
            m["alloc_gpu_pct"] - fgd["alloc_gpu_pct"],
            fgd["unallocated_gpus"],
            m["unallocated_gpus"],
            fgd["power_watts"] / 1000,
            m["power_watts"] / 1000,
            r["upper_bound_alloc_pct"],
        ]
        sums = [s + v for s, v in zip(sums, values)]
        out.append([name] + fmt_learned(values))
    n = len(out)
    if n == 0:
        raise Error(f"{work}: no bound results")
    total = fmt_learned([s / n for s in sums])
    total[2] = f"**{total[2]}**"
    out.append([f"**mean of {n}**"] + total)
    return {
        block: table(
            [
                "pod list",
                "FGD alloc %",
                "learned alloc %",
                "gain (points)",
                "FGD unallocated GPUs",
                "learned unallocated GPUs",
                "FGD power kW",
                "learned power kW",
                "bound %",
            ],
            out,
        )
    }


def fmt_learned(v):
    return [
        f"{v[0]:.2f}",
        f"{v[1]:.2f}",
        f"{v[2]:+.2f}",
        f"{v[3]:.1f}",
        f"{v[4]:.1f}",
        f"{v[5]:.1f}",
        f"{v[6]:.1f}",
        f"{v[7]:.2f}",
    ]


SECTIONS = {
    "repro-fgd": repro_fgd,
    "pwr": pwr,
    "single-cluster-load": single_cluster_load,
    "fleet-load": fleet_load,
    "fleet-slack": fleet_slack,
    "fleet-preempt": fleet_preempt,
    "fleet-seasons": lambda work: seasons_table(work, "fleet-seasons"),
    "fleet-foresight": lambda work: seasons_table(work, "fleet-foresight"),
    "fleet-sites": fleet_sites,
    "energy-sites": energy_sites,
    "energy-forecasts": energy_forecasts,
    "energy-seasons": energy_seasons,
    "bound-families": bound_families,
    "defrag-lists": defrag_lists,
    "defrag-replay": defrag_replay,
    "defrag-consolidate": defrag_consolidate,
    "fgd-online": fgd_online,
    "learned-heldout": lambda work: learned(work, "learned-heldout"),
    "learned-reverse": lambda work: learned(work, "learned-reverse"),
}


def replace_blocks(doc, blocks):
    with open(doc) as f:
        text = f.read()
    for name, body in blocks.items():
        pattern = re.compile(
            rf"(<!-- results:{re.escape(name)} begin -->\n).*?(<!-- results:{re.escape(name)} end -->)",
            re.S,
        )
        if len(pattern.findall(text)) != 1:
            raise Error(f"{doc}: expected one block <!-- results:{name} begin --> ... end -->")
        text = pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)
    tmp = doc + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, doc)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("section", choices=sorted(SECTIONS))
    p.add_argument("work", help="the section's work folder")
    p.add_argument("doc", nargs="?", default="docs/RESULTS.md")
    p.add_argument("--print", action="store_true", help="print the tables instead of replacing")
    args = p.parse_args()
    try:
        blocks = SECTIONS[args.section](args.work)
        if args.print:
            for name, body in blocks.items():
                print(f"<!-- results:{name} -->\n{body}\n")
        else:
            replace_blocks(args.doc, blocks)
    except (Error, KeyError, ValueError, OSError) as e:
        print(f"error: {args.section}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
