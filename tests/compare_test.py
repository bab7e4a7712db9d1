#!/usr/bin/env python3
"""greensched compare as a user runs it: two small simulate runs made with different options,
compared; every value and delta in compare.csv and --json is checked against the runs' own
summary.csv files, read here independently (means over seeds per policy, or seed by seed).
Also: the page is written, and bad folders fail with exit 1 and a message naming the file.

    compare_test.py GREENSCHED_BINARY WORK_DIR
"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != expect:
        fail(f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
    return p


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def read_summary(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) != 3:
        fail("usage: compare_test.py GREENSCHED_BINARY WORK_DIR")
    binary, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    a, b, out = (os.path.join(work, n) for n in ("a", "b", "cmp"))
    common = [binary, "simulate", "--policy", "fgd,bestfit", "--seeds", "42-43", "-q"]
    run(common + ["--out", a])
    run(common + ["--tune", "1.1", "--out", b])

    # 1. Means over seeds, per policy: compare.csv against the summaries.
    metrics = [
        "pods_failed",
        "alloc_gpu_pct_at_100",
        "alloc_gpu_pct_at_90",
        "power_watts_at_100",
    ]
    table = run([binary, "compare", a, b, "--metrics", ",".join(metrics), "--out", out]).stdout
    for name in ("compare.html", "compare.csv"):
        if not os.path.getsize(os.path.join(out, name)):
            fail(f"{name} is empty")
    summaries = [read_summary(os.path.join(d, "summary.csv")) for d in (a, b)]

    def mean(rows, policy, metric):
        values = [float(r[metric]) for r in rows if r["policy"] == policy]
        if len(values) != 2:
            fail(f"{policy}: {len(values)} seeds in summary.csv, expected 2")
        return sum(values) / len(values)

    with open(os.path.join(out, "compare.csv"), newline="") as f:
        compared = list(csv.DictReader(f))
    if len(compared) != 2 * len(metrics) * 2:  # policies x metrics x runs
        fail(f"compare.csv has {len(compared)} rows, expected {2 * len(metrics) * 2}")
    for row in compared:
        run_index = "AB".index(row["run"])
        expected = mean(summaries[run_index], row["policy"], row["metric"])
        if not close(float(row["value"]), expected):
            fail(f"compare.csv {row}: value, expected {expected}")
        if run_index == 1:
            base = mean(summaries[0], row["policy"], row["metric"])
            if not close(float(row["delta"]), expected - base):
                fail(f"compare.csv {row}: delta, expected {expected - base}")
            if base != 0 and not close(
                float(row["delta_pct"]), 100 * (expected - base) / abs(base)
            ):
                fail(f"compare.csv {row}: delta_pct")
    # The table shows the same means to about four significant digits, with their unit
    # (alloc_gpu_pct_at_100 of fgd, about 95 %: two decimals, one more for a mean over seeds).
    fgd_alloc = [mean(s, "fgd", "alloc_gpu_pct_at_100") for s in summaries]
    line = next(
        (l for l in table.splitlines() if l.startswith("fgd ") and "alloc_gpu_pct_at_100" in l),
        "",
    )
    for value in fgd_alloc:
        if f"{value:.3f}" not in line or " % " not in line:
            fail(f"the table's fgd alloc_gpu_pct_at_100 line {line!r} lacks {value:.3f} %")
    with open(os.path.join(out, "compare.html")) as f:
        html = f.read()
    for m in range(len(metrics)):
        if f'id="chart-compare-{m}"' not in html:
            fail(f"compare.html has no chart-compare-{m}")
    if 'id="table-compare"' not in html:
        fail("compare.html has no table")
    print("ok: compare.csv means and deltas equal the summaries'")

    # 2. Seed by seed (--json): every value is a summary.csv cell.
    result = json.loads(run([binary, "compare", a, b, "--per-seed", "--json"]).stdout)
    if result["keys"] != ["policy", "seed"] or result["kind"] != "simulate":
        fail(f"--json keys {result['keys']}, kind {result['kind']}")
    cells = {}
    for i, rows in enumerate(summaries):
        for r in rows:
            for metric, text in r.items():
                cells[(i, r["policy"], r["seed"], metric)] = text
    checked = 0
    for row in result["rows"]:
        key = row["key"]
        for i, value in enumerate(row["values"]):
            text = cells[(i, key["policy"], key["seed"], row["metric"])]
            if text == "" and value is None:  # no value (e.g. alloc at 130 % with --tune 1.1)
                continue
            if value is None or not close(value, float(text)):
                fail(f"--json {key} {row['metric']} run {i}: {value}, summary.csv has {text}")
            checked += 1
    if "tune" in result["metrics"] or "wall_seconds" in result["metrics"]:
        fail(f"settings compared as metrics: {result['metrics']}")
    print(f"ok: --per-seed --json: {checked} values equal summary.csv cells")

    # 3. Bad input: exit 1 and a message naming the folder or file.
    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    multi = os.path.join(work, "multi")
    os.makedirs(multi)
    with open(os.path.join(multi, "summary.csv"), "w") as f:
        f.write("agent,energy_kwh,carbon_kg\nlocal,1.0,2.0\n")
    for dirs, message in (
        ([a, empty], f"greensched compare: {empty}/summary.csv: no such file"),
        (
            [a, os.path.join(work, "nope")],
            f"greensched compare: {work}/nope: not a directory",
        ),
        ([a, multi], f"greensched compare: {multi}/summary.csv: a multi summary, but"),
        ([a, b, "--metrics", "nope"], "greensched compare: "),
    ):
        p = run([binary, "compare"] + dirs, expect=1)
        if not p.stderr.startswith(message):
            fail(f"compare {dirs}: stderr {p.stderr!r}, expected it to start with {message!r}")
    print("ok: bad folders exit 1 with the file named")


if __name__ == "__main__":
    main()
