"""simulate and multi --shard I/N and greensched merge: a sweep run as N shards and merged gives the
files of the sweep run on one machine, byte for byte (summary.csv compared without its
wall_seconds column, the time each machine measured), for N = 1, 2, 3, the number of runs less
one and the number of runs (the unit tests check the blocks tile the plan for every N);
bad --shard values are usage errors (exit 2); missing, duplicate or foreign shards are refused
(exit 1) with a message naming them.

    python3 shard_merge_test.py GREENSCHED WORK_DIR
"""

import csv
import io
import os
import shutil
import subprocess
import sys

GREENSCHED, WORK = sys.argv[1], sys.argv[2]

# Each sweep: its arguments and its number of runs.
SWEEPS = {
    # 2 policies x 2 seeds; occupancy.csv from each policy's first seed.
    "inflation": (["simulate", "--policy", "fgd,bestfit", "--seeds", "42-43", "--tune", "1.0"], 4),
    # 2 policies x 2 GPU rules x 2 power-down settings: a shard boundary can fall between two
    # GPU rules of one simulated run.
    "replay": (
        [
            "simulate",
            "--mode",
            "replay",
            "--load",
            "50",
            "--days",
            "1",
            "--warmup-days",
            "0.25",
            "--policy",
            "fgd,bestfit",
            "--seeds",
            "42",
            "--gpu-power",
            "pwr,proportional",
            "--power-down-idle",
            "off,1800",
        ],
        8,
    ),
    # 2 seeds (OUT/seed-N folders) x 2 slacks x 3 agents.
    "multi": (
        ["multi", "--agent", "local,green,round-robin", "--seeds", "42-43", "--days", "2"]
        + ["--slack", "0,4", "--load", "off", "--no-bound", "--decisions"],
        12,
    ),
    # One seed (the files in OUT itself) x 2 loads x 2 agents, with two energy controllers.
    "multi-load": (
        ["multi", "--agent", "local,green", "--seeds", "42", "--load", "30,60", "--days", "1"]
        + ["--warmup-days", "0.25", "--energy-controller", "greedy,mpc", "--no-bound"],
        4,
    ),
}


def run(args, expect=0):
    p = subprocess.run([GREENSCHED] + args, capture_output=True, text=True)
    if p.returncode != expect:
        sys.exit(f"FAIL: {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stderr}")
    return p


def without_wall(text):
    rows = list(csv.reader(io.StringIO(text)))
    if "wall_seconds" not in rows[0]:
        return text
    k = rows[0].index("wall_seconds")
    return "\n".join(",".join(r[:k] + r[k + 1 :]) for r in rows)


def csv_files(folder):
    return sorted(
        os.path.relpath(os.path.join(d, f), folder)
        for d, _, names in os.walk(folder)
        for f in names
        if f.endswith(".csv")
    )


def same_files(whole, merged, what):
    names = csv_files(whole)
    if names != csv_files(merged):
        sys.exit(f"FAIL: {what}: files {csv_files(merged)}, expected {names}")
    for name in names:
        a = open(os.path.join(whole, name), encoding="utf-8").read()
        b = open(os.path.join(merged, name), encoding="utf-8").read()
        if os.path.basename(name) == "summary.csv":
            a, b = without_wall(a), without_wall(b)
        if a != b:
            sys.exit(f"FAIL: {what}: {name} differs from the one-machine run's")
    return names


def shards(mode, args, n):
    dirs = []
    for i in range(n):
        d = os.path.join(WORK, f"{mode}-{n}-shard-{i}")
        run(args[:1] + ["-q", "-j", "2"] + args[1:] + ["--shard", f"{i}/{n}", "--out", d])
        dirs.append(d)
    return dirs


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
for mode, (args, total) in SWEEPS.items():
    whole = os.path.join(WORK, f"{mode}-whole")
    run(args[:1] + ["-q", "-j", "2"] + args[1:] + ["--out", whole])
    if mode == "inflation" and "occupancy.csv" not in csv_files(whole):
        sys.exit("FAIL: the inflation sweep wrote no occupancy.csv")
    counts = sorted({n for n in (1, 2, 3, total - 1, total) if 1 <= n <= total})
    for n in counts:
        dirs = shards(mode, args, n)
        merged = os.path.join(WORK, f"{mode}-{n}-merged")
        run(["merge", "-q", "--out", merged] + list(reversed(dirs)))  # any order
        names = same_files(whole, merged, f"{mode} in {n} shard(s)")
    print(f"{mode}: {total} runs; N = {counts} shards merge to the same {', '.join(names)}")

# Errors: bad --shard values and too many shards are usage errors.
args = SWEEPS["inflation"][0]
for bad in ["3/3", "1", "a/3", "-1/3", "0/0", "1/2/3"]:
    p = run(args + ["-q"] + ["--shard", bad, "--out", os.path.join(WORK, "x")], 2)
    if "--shard" not in p.stderr:
        sys.exit(f"FAIL: --shard {bad}: the error does not name --shard: {p.stderr}")
run(args + ["-q"] + ["--shard", "0/5", "--out", os.path.join(WORK, "x")], 2)
run(args + ["-q"] + ["--shard", "0/2"], 2)  # no --out

# Merge errors name the shard.
dirs = [os.path.join(WORK, f"inflation-3-shard-{i}") for i in range(3)]
p = run(["merge", "--out", os.path.join(WORK, "m1"), dirs[0], dirs[2]], 1)
if "1/3" not in p.stderr:
    sys.exit(f"FAIL: a missing shard is not named: {p.stderr}")
p = run(["merge", "--out", os.path.join(WORK, "m2"), dirs[0], dirs[1], dirs[1], dirs[2]], 1)
if "duplicate shard 1/3" not in p.stderr:
    sys.exit(f"FAIL: a duplicate shard is not named: {p.stderr}")
other = os.path.join(WORK, "other-shard-1")
run(
    ["simulate", "-q", "--policy", "fgd,bestfit", "--seeds", "42-43", "--tune", "1.1"]
    + ["--shard", "1/3", "--out", other]
)
p = run(["merge", "--out", os.path.join(WORK, "m3"), dirs[0], other, dirs[2]], 1)
if other not in p.stderr or "another sweep" not in p.stderr:
    sys.exit(f"FAIL: a shard of another sweep is not refused by name: {p.stderr}")
p = run(["merge", "--out", os.path.join(WORK, "m4"), WORK], 1)
# --record: each shard's file, concatenated in shard order, is the one-machine file.
for mode in ["inflation", "multi"]:
    args = SWEEPS[mode][0]
    whole_record = os.path.join(WORK, f"{mode}-whole.jsonl")
    run(args + ["-q", "--record", whole_record])
    parts = []
    for i in range(3):
        part = os.path.join(WORK, f"{mode}-record-{i}.jsonl")
        out = os.path.join(WORK, f"{mode}-record-shard-{i}")
        run(args + ["-q", "--record", part, "--shard", f"{i}/3", "--out", out])
        parts.append(open(part, encoding="utf-8").read())
    if "".join(parts) != open(whole_record, encoding="utf-8").read():
        sys.exit(f"FAIL: {mode}: the shards' --record files concatenated differ from one run's")
print("--record: the shards' files concatenated equal the one-machine file")
no_bound = [a for a in SWEEPS["multi"][0] if a != "--no-bound"]
p = run(no_bound + ["-q", "--bound", "--shard", "0/2", "--out", os.path.join(WORK, "x")], 2)
if "--bound is not supported with --shard" not in p.stderr:
    sys.exit(f"FAIL: multi --bound --shard: {p.stderr}")
print("errors: bad --shard exit 2; missing, duplicate and foreign shards exit 1, named")
print("PASS")
