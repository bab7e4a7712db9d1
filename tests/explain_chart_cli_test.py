#!/usr/bin/env python3
"""`greensched explain --chart` as a user runs it on a small record file: one decision writes
FILE.png (a PNG of the SVG's size) and says "chart: FILE.png" on stderr; FILE.svg writes the
SVG itself; several decisions write FILE-1.png, FILE-2.png, ...; --json adds "chart" to each
decision's object; a record without a chart says why and writes nothing; an unwritable path is
an error (exit 1) and another extension a usage error (exit 2).

    explain_chart_cli_test.py GREENSCHED_BINARY WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys

GREENSCHED, WORK = sys.argv[1], sys.argv[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

REQUEST = {"cpu_milli": 8000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 500, "gpu_spec": []}
RECORDS = [
    {  # step 0: placed on n1's GPU 1
        "pod": "p0",
        "step": 0,
        "policy": "bestfit",
        "request": REQUEST,
        "nodes_total": 2,
        "feasible_nodes": 2,
        "reason_counts": {},
        "candidates": [{"node": "n1", "score": 90}, {"node": "n2", "score": 40}],
        "chosen_node": "n1",
        "chosen_gpus": [1],
        "chosen_gpus_before": [1000, 250],
        "score": 90,
        "runner_up": "n2",
        "runner_up_score": 40,
        "margin": 50,
        "tie_broken": False,
    },
    {  # step 1 and 2: failed
        "pod": "f1",
        "step": 1,
        "request": REQUEST,
        "nodes_total": 2,
        "chosen_node": None,
        "reason_counts": {"insufficient cpu": 2},
        "reason_counts_by_type": {"T4": {"insufficient cpu": 1}, "V100": {"insufficient cpu": 1}},
    },
    {
        "pod": "f2",
        "step": 2,
        "request": REQUEST,
        "nodes_total": 2,
        "chosen_node": None,
        "reason_counts": {"insufficient memory": 2},
    },
    {  # step 3: failed, with nothing a chart could show
        "pod": "bare",
        "step": 3,
        "request": REQUEST,
        "chosen_node": None,
    },
]


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def explain(*args):
    return subprocess.run(
        [GREENSCHED, "explain", "--record", RECORD, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def expect_png(path):
    if not os.path.isfile(path):
        fail(f"{path} was not written")
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        fail(f"{path} is not a PNG: {data[:16]!r}")
    width, height = struct.unpack(">II", data[16:24])
    if not (100 <= width <= 2000 and 100 <= height <= 2000):
        fail(f"{path}: odd size {width} x {height}")
    return data


def main():
    global RECORD
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    RECORD = os.path.join(WORK, "decisions.jsonl")
    with open(RECORD, "w") as f:
        for r in RECORDS:
            f.write(json.dumps(r) + "\n")

    # One decision: FILE.png, named on stderr.
    one = os.path.join(WORK, "placed.png")
    run = explain("--step", "0", "--chart", one)
    if run.returncode != 0:
        fail(f"--step 0 --chart: exit {run.returncode}: {run.stderr}")
    if f"chart: {one}\n" not in run.stderr:
        fail(f"no 'chart: {one}' line on stderr: {run.stderr!r}")
    if "was placed on n1" not in run.stdout:
        fail(f"the explanation is missing: {run.stdout!r}")
    first = expect_png(one)
    if explain("--step", "0", "--chart", one).returncode != 0 or expect_png(one) != first:
        fail("the same decision gave a different PNG")

    # FILE.svg: the SVG itself.
    svg = os.path.join(WORK, "placed.svg")
    run = explain("--step", "0", "--chart", svg)
    if run.returncode != 0 or f"chart: {svg}\n" not in run.stderr:
        fail(f"--chart {svg}: exit {run.returncode}: {run.stderr}")
    with open(svg) as f:
        text = f.read()
    if not text.startswith('<svg xmlns="http://www.w3.org/2000/svg"') or "n1 (chosen)" not in text:
        fail(f"{svg} is not the decision's chart: {text[:200]}")

    # Several decisions: FILE-1.png, FILE-2.png, each named; "chart" in --json.
    many = os.path.join(WORK, "failed.png")
    run = explain("--failed", "2", "--chart", many, "--json")
    if run.returncode != 0:
        fail(f"--failed 2 --chart: exit {run.returncode}: {run.stderr}")
    paths = [os.path.join(WORK, f"failed-{i}.png") for i in (1, 2)]
    for path in paths:
        expect_png(path)
        if f"chart: {path}\n" not in run.stderr:
            fail(f"no 'chart: {path}' line on stderr: {run.stderr!r}")
    if os.path.exists(many):
        fail(f"{many} written although there were two decisions")
    facts = json.loads(run.stdout)
    if [d.get("chart") for d in facts] != paths:
        fail(f"--json 'chart' keys: {[d.get('chart') for d in facts]}")

    # A record without what a chart needs: said on stderr, nothing written, exit 0.
    bare = os.path.join(WORK, "bare.png")
    run = explain("--pod", "bare", "--chart", bare, "--json")
    if run.returncode != 0 or "no chart for this record: " not in run.stderr:
        fail(f"--pod bare --chart: exit {run.returncode}: {run.stderr!r}")
    if os.path.exists(bare) or "chart" in json.loads(run.stdout):
        fail("a chart was named for a record without one")

    # A path that cannot be written: exit 1, naming it.
    with open(os.path.join(WORK, "a-file"), "w", encoding="utf-8"):
        pass
    unwritable = os.path.join(WORK, "a-file", "x.png")  # a file where its folder should be
    run = explain("--step", "0", "--chart", unwritable)
    if (
        run.returncode != 1
        or "cannot write the chart" not in run.stderr
        or unwritable not in run.stderr
    ):
        fail(f"unwritable --chart: exit {run.returncode}: {run.stderr!r}")

    # Another extension: a usage error.
    run = explain("--step", "0", "--chart", os.path.join(WORK, "x.jpg"))
    if run.returncode != 2 or ".png or .svg" not in run.stderr:
        fail(f"--chart x.jpg: exit {run.returncode}: {run.stderr!r}")

    print("explain --chart: ok")


main()
