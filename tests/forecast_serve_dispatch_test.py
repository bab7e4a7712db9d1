#!/usr/bin/env python3
"""greensched dispatch planning on greensched's own carbon forecasts: a carbon model is trained
on the data before the replay's start (no look-ahead), `forecast serve` replays 2023 from
2023-04-03 14:00 and answers the Carbon Aware SDK WebAPI, and `dispatch` reads every cluster's
forecast from it (carbon_forecast, format carbon-aware-sdk). Checked: each cluster's carbon
signal is the served forecast's value for the hour, a best-effort workload is decided on carbon
(not capacity-only) and its record names forecast serve as every cluster's carbon source, the
SDK's best-location route agrees with the data, and forecast serve's /metrics counts the
dispatcher's reads.

    forecast_serve_dispatch_test.py GREENSCHED_BINARY SOURCE_DIR DATA_DIR WORK_DIR

Exits 77 (skipped) without the shared data, unless CI=true (then it fails).
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

from server_process import fail, stop_all, wait_for_port

ZONES = {"de-lu": "DE-LU", "gb": "GB", "us-cal": "US-CAL-CISO", "sg": "SG"}
START = "2023-04-03T14:00:00Z"


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.read().decode(), dict(r.headers)


BIN, SOURCE, DATA, WORK = sys.argv[1:5]
for zone in ZONES.values():
    path = os.path.join(DATA, "carbon", "emaps2023", f"{zone}_2023_hourly.csv")
    if not os.path.exists(path):
        if os.environ.get("CI") == "true":
            fail(f"CI=true but the shared data is missing: {path}")
        print(f"SKIPPED: the shared data is missing: {path}")
        sys.exit(77)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
zones = ",".join(ZONES.values())

# A small model on the data before the replay's start (the shipped one saw all of 2023).
t0 = time.time()
subprocess.run(
    [
        BIN,
        "forecast",
        "train",
        "--series",
        "carbon",
        "--zones",
        zones,
        "--data-dir",
        DATA,
        "--from",
        "2023-01-15",
        "--until",
        START,
        "--trees",
        "30",
        "--out",
        os.path.join(WORK, "model"),
        "-q",
    ],
    check=True,
)
print(f"trained in {time.time() - t0:.1f} s")

procs = []
try:
    fport = os.path.join(WORK, "forecast.port")
    fc = subprocess.Popen(
        [
            BIN,
            "forecast",
            "serve",
            "--model",
            os.path.join(WORK, "model", "carbon.ubj"),
            "--zones",
            zones,
            "--data-dir",
            DATA,
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            fport,
            "--clock-start",
            START,
            "-q",
        ]
    )
    procs.append(fc)
    port = wait_for_port(fport, fc, 30)
    if port is None:
        fail(f"forecast serve did not start (exit {fc.poll()})")
    base = f"http://127.0.0.1:{port}"

    config = {"fleet": os.path.join(SOURCE, "examples", "fleet-4-regions.json"), "clusters": {}}
    for site, zone in ZONES.items():
        config["clusters"][site] = {
            "carbon_forecast": {
                "url": f"{base}/emissions/forecasts/current?location={zone}",
                "format": "carbon-aware-sdk",
            }
        }
    cpath = os.path.join(WORK, "dispatch.json")
    json.dump(config, open(cpath, "w"))
    dport = os.path.join(WORK, "dispatch.port")
    disp = subprocess.Popen(
        [
            BIN,
            "dispatch",
            "--config",
            cpath,
            "--data-dir",
            DATA,
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            dport,
            "--signal-start",
            START,
            "--record",
            os.path.join(WORK, "dispatch.jsonl"),
            "-q",
        ]
    )
    procs.append(disp)
    dp = wait_for_port(dport, disp, 60)
    if dp is None:
        fail(f"dispatch did not start (exit {disp.poll()})")

    # Each cluster's carbon signal now is forecast serve's value for this hour.
    _, body, _ = get(f"http://127.0.0.1:{dp}/v1/clusters")
    clusters = json.loads(body)
    for c in clusters["clusters"]:
        zone = ZONES[c["name"]]
        if not c["carbon_source"].startswith(base):
            fail(f"{c['name']}: carbon source {c['carbon_source']}, not forecast serve")
        if "carbon_now" not in c:
            fail(f"{c['name']}: no carbon signal: {c.get('carbon_error')}")
        status, fbody, headers = get(f"{base}/emissions/forecasts/current?location={zone}")
        served = json.loads(fbody)[0]
        if served["forecastMethod"] != "learned":
            fail(f"{zone}: forecast by {served['forecastMethod']}: {served.get('forecastNote')}")
        if "X-Greensched-Forecast-Method" not in headers:
            fail("no X-Greensched-Forecast-Method header")
        first = served["forecastData"][0]["value"]
        if abs(c["carbon_now"] - first) > 1e-6:
            fail(f"{zone}: dispatch's carbon now {c['carbon_now']} != served {first}")
        if len(served["forecastData"]) != 96:
            fail(f"{zone}: {len(served['forecastData'])} forecast hours, expected 96")

    w = json.load(open(os.path.join(SOURCE, "examples", "workload-be.json")))
    req = urllib.request.Request(
        f"http://127.0.0.1:{dp}/v1/dispatch",
        json.dumps(w).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        decision = json.load(r)
    if decision.get("mode") == "capacity-only":
        fail(f"decided by capacity alone: {decision}")
    # Its record in the journal names where each cluster's carbon came from: forecast serve.
    records = [json.loads(line) for line in open(os.path.join(WORK, "dispatch.jsonl"))]
    sources = [r for r in records if r.get("kind") == "dispatch"][-1]["service"]["carbon_sources"]
    for site, zone in ZONES.items():
        want = f"{base}/emissions/forecasts/current?location={zone}"
        if sources.get(site) != want:
            fail(f"the decision record's carbon source of {site}: {sources.get(site)}, not {want}")
    print(
        f"decision: {decision.get('cluster') or decision.get('clusters')} mode "
        f"{decision.get('mode')}"
    )

    # The SDK's best location over the latest complete hour: the lowest of the data.
    query = "&".join(f"location={z}" for z in ZONES.values())
    status, body, _ = get(f"{base}/emissions/bylocations/best?{query}")
    best = json.loads(body)
    if status != 200 or not best or best[0]["duration"] != "01:00:00":
        fail(f"bylocations/best: {status} {body}")

    # Bad requests: 400 with a JSON error, the service stays up.
    for q in ["location=Atlantis", "location=GB&windowSize=7", ""]:
        try:
            get(f"{base}/emissions/forecasts/current?{q}")
            fail(f"?{q}: not refused")
        except urllib.error.HTTPError as e:
            if e.code != 400 or "error" not in json.loads(e.read()):
                fail(f"?{q}: HTTP {e.code}")

    _, metrics, _ = get(f"{base}/metrics")
    reads = sum(
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith(
            'greensched_forecast_requests_total{route="/emissions/' 'forecasts/current",code="200"}'
        )
    )
    if reads < len(ZONES) * 2:
        fail(f"forecast serve answered {reads} forecasts, expected the dispatcher's reads too")
    if 'greensched_forecast_issued_total{zone="GB",method="learned"} 1' not in metrics:
        fail("GB's forecast not issued once by the learned model:\n" + metrics)
    print("forecast serve -> dispatch: ok")
finally:
    stop_all(procs)
