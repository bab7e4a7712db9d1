#!/usr/bin/env python3
"""greensched dispatch with a standby, as an operator runs two replicas on one journal: a
second service on the same --record without --standby exits 1, naming the holder; one with
--standby waits without listening; when the first is SIGKILLed, the standby takes over within
15 s (it replays the journal, then listens), and answers a workload decided before the kill
as the first did (the same cluster, "repeated"), and a new one as a new decision. Nothing is
decided twice: the journal holds one record per workload.

    dispatch_standby_test.py GREENSCHED_BINARY SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

from server_process import fail, stop_all, wait_for_port


def workload(name):
    w = json.load(open(os.path.join(SOURCE, "examples", "workload-be.json")))["workload"]
    w["metadata"]["name"] = name
    w["metadata"]["uid"] = "uid-" + name
    return w


def dispatch(port, name):
    body = json.dumps({"workload": workload(name)}).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/dispatch", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


BIN, SOURCE, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
journal = os.path.join(WORK, "dispatch.jsonl")
config = os.path.join(SOURCE, "examples", "dispatch-4-regions.json")
base = [BIN, "dispatch", "--config", config, "--record", journal, "--listen", "127.0.0.1:0"]
base += ["--signal-start", "2023-04-03T14:00:00Z", "--signal-origin", "2026-01-01T00:00:00Z"]

procs = []
try:
    leader = subprocess.Popen(
        base + ["--port-file", os.path.join(WORK, "a.port")],
        stderr=open(os.path.join(WORK, "a.err"), "w"),
    )
    procs.append(leader)
    port_a = wait_for_port(os.path.join(WORK, "a.port"), leader, 60)
    if port_a is None:
        fail("the first service did not start: " + open(os.path.join(WORK, "a.err")).read())
    first = dispatch(port_a, "before-kill")

    second = subprocess.run(base, capture_output=True, text=True, timeout=60)
    if second.returncode != 1 or f"pid {leader.pid}" not in second.stderr:
        fail(f"a second writer: exit {second.returncode}, stderr {second.stderr!r}")
    if "--standby" not in second.stderr:
        fail(f"the refusal does not say how to run a standby: {second.stderr!r}")

    standby_err = os.path.join(WORK, "b.err")
    standby = subprocess.Popen(
        base + ["--standby", "--port-file", os.path.join(WORK, "b.port")],
        stderr=open(standby_err, "w"),
    )
    procs.append(standby)
    if wait_for_port(os.path.join(WORK, "b.port"), standby, 2) is not None:
        fail("the standby listened while the first service held the journal")
    if standby.poll() is not None:
        fail("the standby exited: " + open(standby_err).read())
    if "standby" not in open(standby_err).read():
        fail("the standby did not say it waits: " + open(standby_err).read())

    leader.send_signal(signal.SIGKILL)
    leader.wait()
    killed = time.time()
    port_b = wait_for_port(os.path.join(WORK, "b.port"), standby, 15)
    took = time.time() - killed
    if port_b is None:
        fail("the standby did not take over within 15 s: " + open(standby_err).read())
    again = dispatch(port_b, "before-kill")
    if again["clusters"] != first["clusters"] or not again["repeated"]:
        fail(f"after the takeover: {again} (before: {first})")
    new = dispatch(port_b, "after-kill")
    if new["repeated"]:
        fail(f"a new workload answered as repeated: {new}")
    names = [json.loads(line)["pod"] for line in open(journal) if line.strip()]
    if sorted(names) != sorted(set(names)) or len(names) != 2:
        fail(f"the journal's records: {names}")
    print(f"standby took over {took:.2f} s after the SIGKILL; the journal holds {names}")
finally:
    stop_all(procs)
