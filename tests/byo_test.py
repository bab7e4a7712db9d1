#!/usr/bin/env python3
"""docs/BRING-YOUR-OWN.md walked literally on small dumps (tests/data/byo): a kubectl NodeList
with an unlabelled GPU node and a ConfigMap, a PodList whose pods pick their GPU model by
nvidia.com/gpu.product in a nodeSelector and in a node affinity and one without a creation
time; a Slurm accounting with a job step, a bad time stamp and a node whose Gres names no
model. Each conversion exits 1 for its dropped rows and asks for the unlabelled model; named
with --gpu-model and accepted with --allow-dropped, its printed `next:` command runs as
printed, and the report is made from what it wrote.

    byo_test.py GREENSCHED_BINARY SOURCE_DIR WORK_DIR
"""
import csv
import os
import shlex
import shutil
import subprocess
import sys

GREENSCHED, SOURCE, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
DATA = os.path.join(SOURCE, "tests", "data", "byo")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(args, want=0):
    p = subprocess.run([GREENSCHED, *args], capture_output=True, text=True, timeout=600, cwd=WORK)
    if p.returncode != want:
        fail(
            f"greensched {' '.join(args)}: exit {p.returncode} (want {want})\n{p.stdout}\n{p.stderr}"
        )
    return p


def next_command(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("next: ")]
    if len(lines) != 1:
        fail(f"no single next: line in\n{stdout}")
    return lines[0][len("next: ") :]


def rows(path):
    with open(path) as f:
        return {r.get("sn") or r.get("name"): r for r in csv.DictReader(f)}


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

for source, inputs, model in (
    (
        "kubectl",
        ["--nodes", f"{DATA}/nodes.json", "--pods", f"{DATA}/pods.json"],
        "A100",
    ),
    ("sacct", ["--jobs", f"{DATA}/sacct.txt", "--nodes", f"{DATA}/scontrol.txt"], "T4"),
):
    out = f"my{source}"
    # 1. Dropped rows: exit 1, each listed at file:line; the unlabelled model asked for.
    p = run(["convert", source, *inputs, "--out", out], want=1)
    if "dropped" not in p.stderr or "--allow-dropped" not in p.stderr:
        fail(f"{source}: the exit does not say why: {p.stderr}")
    if f"{os.path.basename(inputs[1])}:" not in p.stdout:
        fail(f"{source}: no dropped row at file:line:\n{p.stdout}")
    if "--gpu-model unlabelled=MODEL" not in next_command(p.stdout):
        fail(f"{source}: the next step does not ask for the unlabelled model:\n{p.stdout}")
    # 2. Named and accepted: the next command runs as printed, then the report.
    p = run(
        [
            "convert",
            source,
            *inputs,
            "--out",
            out,
            "--gpu-model",
            f"unlabelled={model}",
            "--allow-dropped",
        ]
    )
    command = shlex.split(next_command(p.stdout))
    if command[:3] != ["greensched", "simulate", "--mode"]:
        fail(f"{source}: next is not a replay: {command}")
    run(command[1:])
    replay = command[command.index("--out") + 1]
    run(["report", "--in", replay])
    if not os.path.exists(os.path.join(WORK, replay, "report.html")):
        fail(f"{source}: no report in {replay}")
    nodes = rows(os.path.join(WORK, out, "nodes.csv"))
    unlabelled = "gpu-x" if source == "kubectl" else "g02"
    if nodes[unlabelled]["model"] != model:
        fail(f"{source}: {unlabelled} is {nodes[unlabelled]['model']}, not {model}")

# The pods' models came from nvidia.com/gpu.product: a nodeSelector and a node affinity.
pods = rows(os.path.join(WORK, "mykubectl", "pods.csv"))
nodes = rows(os.path.join(WORK, "mykubectl", "nodes.csv"))
if (
    pods["ml/train-a100"]["gpu_spec"] != nodes["gpu-a"]["model"]
    or pods["ml/train-h100"]["gpu_spec"] != nodes["gpu-h"]["model"]
):
    fail(
        f"pod GPU models: {pods['ml/train-a100']['gpu_spec']}, {pods['ml/train-h100']['gpu_spec']}"
    )
# A job step is skipped by design, not dropped.
p = run(["convert", "sacct", "--jobs", f"{DATA}/sacct.txt", "--out", "steps", "--json"], want=1)
if '"skipped": 1' not in p.stdout:
    fail(f"the job step is not counted as skipped:\n{p.stdout}")
# A malformed --gpu-model is a usage error.
p = run(
    ["convert", "kubectl", "--nodes", f"{DATA}/nodes.json", "--out", "x", "--gpu-model", "A100"],
    want=2,
)
if "expected LABEL=MODEL" not in p.stderr:
    fail(f"--gpu-model A100: {p.stderr}")
print("bring your own: kubectl and Slurm converted, next commands run, reports made")
