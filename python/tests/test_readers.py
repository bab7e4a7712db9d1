"""Readers, the explain API and errors: file:line messages as greensched.Error."""

from __future__ import annotations

import numpy as np
import pytest

import greensched


def test_builtin_workload():
    w = greensched.read_workload()
    assert w["nodes"].rows == 1213 and w["pods"].rows > 8000
    assert int(w["nodes"]["gpu"].sum()) > 0
    assert set(np.unique(w["pods"]["num_gpu"])) <= set(range(0, 17))


def test_node_and_pod_lists(small_cluster):
    nodes, pods = small_cluster
    n = greensched.read_nodes(nodes)
    assert n["name"].tolist() == ["n0", "n1"] and n["gpu"].tolist() == [2, 2]
    assert n["model"].tolist() == ["T4", "T4"]
    p = greensched.read_pods(pods, nodes=nodes)
    assert p["gpu_milli"].tolist() == [500, 300, 1000, 0]
    assert p["creation_time"].tolist() == [-1, -1, -1, -1]


def test_errors_carry_file_and_line(tmp_path, small_cluster):
    bad = tmp_path / "bad.csv"
    bad.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,2,T4\nn1,lots,65536,2,T4\n")
    with pytest.raises(greensched.Error, match=r"bad\.csv:3: "):
        greensched.read_nodes(bad)
    _, pods = small_cluster
    with pytest.raises(greensched.Error, match=r"bad\.csv:3: "):
        greensched.simulate("fgd", nodes=bad, pods=pods)
    with pytest.raises(greensched.Error, match="nosuchpolicy"):
        greensched.simulate("nosuchpolicy")
    with pytest.raises(greensched.Error):
        greensched.read_nodes(tmp_path / "missing.csv")


def test_node_events_and_series(tmp_path, small_cluster):
    nodes, _ = small_cluster
    events = tmp_path / "events.csv"
    events.write_text("time,node,event\n100,n0,down\n200,n0,up\n")
    e = greensched.read_node_events(events, nodes)
    assert e["time"].tolist() == [100, 200] and e["event"].tolist() == ["down", "up"]
    events.write_text("time,node,event\n100,n9,down\n")
    with pytest.raises(greensched.Error, match=r"events\.csv:2: .*n9"):
        greensched.read_node_events(events, nodes)
    series = tmp_path / "carbon.csv"
    series.write_text("time,value\n2023-01-01T00:00:00Z,100\n2023-01-01T01:00:00Z,300\n")
    s = greensched.read_series(series)
    assert s["step_s"] == 3600 and s["value"].tolist() == [100, 300]
    assert s["time_s"].tolist() == [1672531200, 1672534800]


def test_fleet_power_model():
    f = greensched.read_fleet()
    assert len(f["sites"]) == 4
    assert sum(site["nodes"].rows for site in f["sites"]) > 1000
    pm = greensched.read_power_model()
    assert "T4" in pm["gpus"]["name"].tolist()
    assert np.all(pm["gpus"]["max_watts"] >= pm["gpus"]["idle_watts"])


def test_records_and_explain(tmp_path, small_cluster):
    nodes, pods = small_cluster
    r = greensched.simulate("fgd", seeds=42, tune=1.3, nodes=nodes, pods=pods, record=True)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(__import__("json").dumps(x) + "\n" for x in r["records"]))
    records = greensched.read_records(path)
    assert records == r["records"]
    placed = next(x for x in records if x["chosen_node"] is not None)
    text = greensched.explain(placed)
    assert placed["pod"] in text and placed["chosen_node"] in text
    facts = greensched.explain_facts(placed)
    assert facts["pod"] == placed["pod"] and facts["placed"] is True
    failed = [x for x in records if greensched.is_failed(x)]
    assert len(failed) == r["summary"]["pods_failed"][0]
    path.write_text('{"pod": 3}\n')
    with pytest.raises(greensched.Error, match=r"records\.jsonl:1: "):
        greensched.read_records(path)
