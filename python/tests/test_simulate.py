"""simulate, replay and multi from Python against the command line: same library, same
numbers, same files."""

from __future__ import annotations

import json
import math
import subprocess

import numpy as np
import pytest

import greensched


def _csv_without(path, column):
    """The rows of a CSV file with one column left out (wall-clock times differ run to run)."""
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    drop = header.index(column) if column in header else -1
    return [",".join(f for i, f in enumerate(line.split(",")) if i != drop) for line in lines]


def test_fgd_default_trace_matches_cli(cli, tmp_path):
    records = tmp_path / "cli.jsonl"
    subprocess.run(
        [
            cli,
            "simulate",
            "--policy",
            "fgd",
            "--seeds",
            "42",
            "--quiet",
            "--out",
            str(tmp_path / "cli"),
            "--record",
            str(records),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    r = greensched.simulate("fgd", seeds=42, record=True, out=tmp_path / "py")
    # The same files, byte for byte but for the run time.
    assert (tmp_path / "py" / "curves.csv").read_text() == (
        tmp_path / "cli" / "curves.csv"
    ).read_text()
    assert _csv_without(tmp_path / "py" / "summary.csv", "wall_seconds") == _csv_without(
        tmp_path / "cli" / "summary.csv", "wall_seconds"
    )
    # The same decision for every pod.
    cli_records = [json.loads(line) for line in records.read_text().splitlines()]
    assert r["records"] == cli_records
    # The tables hold the files' numbers.
    s = r["summary"]
    assert s["policy"].tolist() == ["fgd"] and s["seed"].tolist() == [42]
    summary = (tmp_path / "cli" / "summary.csv").read_text().splitlines()
    row = dict(zip(summary[0].split(","), summary[1].split(",")))
    assert int(row["pods_failed"]) == s["pods_failed"][0]
    assert float(row["alloc_gpu_pct_at_100"]) == pytest.approx(
        s["alloc_gpu_pct_at_100"][0], abs=5e-5
    )
    placed = sum(1 for rec in cli_records if rec["chosen_node"] is not None)
    assert placed == s["pods_scheduled"][0]


def test_tables_and_pandas():
    r = greensched.simulate(["bestfit", "pwr:200+fgd:800"], seeds="42-43", tune=1.0)
    s = r["summary"]
    assert isinstance(s, greensched.Table) and s.rows == 4
    assert s["policy"].tolist() == ["bestfit", "bestfit", "pwr:200+fgd:800", "pwr:200+fgd:800"]
    assert s["seed"].tolist() == [42, 43, 42, 43]
    assert np.all(s["pods_arrived"] == s["pods_scheduled"] + s["pods_failed"])
    c = r["curves"]
    assert set(c["policy"].tolist()) == {"bestfit", "pwr:200+fgd:800"}
    # A bin without arrivals has no figures.
    assert np.all(np.isnan(c["alloc_gpu_pct"][c["events"] == 0]))
    pd = pytest.importorskip("pandas")
    df = s.df
    assert isinstance(df, pd.DataFrame) and list(df.columns) == list(s.keys())


def test_replay_matches_cli(cli, tmp_path):
    args = ["--load", "40", "--days", "1", "--warmup-days", "0.25", "--policy", "fgd,bestfit"]
    subprocess.run(
        [cli, "simulate", "--mode", "replay", *args, "--quiet", "--out", str(tmp_path / "cli")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    r = greensched.replay(
        ["fgd", "bestfit"], load=40, days=1, warmup_days=0.25, out=tmp_path / "py"
    )
    assert (tmp_path / "py" / "timeline.csv").read_text() == (
        tmp_path / "cli" / "timeline.csv"
    ).read_text()
    assert _csv_without(tmp_path / "py" / "summary.csv", "wall_seconds") == _csv_without(
        tmp_path / "cli" / "summary.csv", "wall_seconds"
    )
    s = r["summary"]
    assert s["policy"].tolist() == ["fgd", "bestfit"] and s["load_pct"].tolist() == [40, 40]
    assert np.all(s["pods_started"] + s["pods_never_started"] == s["pods_total"])


def test_multi_matches_cli(cli, tmp_path):
    args = ["--agent", "local,least-loaded", "--load", "40", "--days", "1", "--warmup-days", "0.25"]
    subprocess.run(
        [
            cli,
            "multi",
            *args,
            "--decisions",
            "--no-bound",
            "--quiet",
            "--out",
            str(tmp_path / "cli"),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    r = greensched.multi(
        ["local", "least-loaded"], load=40, days=1, warmup_days=0.25, out=tmp_path / "py"
    )
    for name in ("timeline.csv", "decisions.csv", "energy_timeline.csv"):
        assert (tmp_path / "py" / name).read_text() == (tmp_path / "cli" / name).read_text(), name
    assert _csv_without(tmp_path / "py" / "summary.csv", "wall_seconds") == _csv_without(
        tmp_path / "cli" / "summary.csv", "wall_seconds"
    )
    s = r["summary"]
    assert s["agent"].tolist() == ["local", "least-loaded"]
    assert all(math.isclose(x, 40) for x in s["load_pct"])
    assert len(r["decisions"]["pod"]) == 2 * s["jobs"][0]
