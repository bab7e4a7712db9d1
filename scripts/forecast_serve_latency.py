#!/usr/bin/env python3
"""Latency of `greensched forecast serve`: trains a carbon model on the data before the replay's
start, starts the service (replay from 2023-04-03), asks N times for one zone's current forecast
(GET /emissions/forecasts/current, one request at a time on a kept-alive connection, the first
request included: it runs the model) and prints p50, p99 and the maximum in ms.

    scripts/forecast_serve_latency.py [--bin build/greensched]
        [--data ../shared/data] [--zone DE-LU] [--requests 1000]
"""
import argparse
import http.client
import os
import subprocess
import tempfile
import time

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--bin", default="build/greensched")
p.add_argument("--data", default=os.environ.get("GREENSCHED_DATA", "../shared/data"))
p.add_argument("--zone", default="DE-LU")
p.add_argument("--requests", type=int, default=1000)
p.add_argument("--start", default="2023-04-03T00:00:00Z")
a = p.parse_args()

with tempfile.TemporaryDirectory() as work:
    subprocess.run(
        [
            a.bin,
            "forecast",
            "train",
            "--series",
            "carbon",
            "--zones",
            a.zone,
            "--data-dir",
            a.data,
            "--from",
            "2023-01-15",
            "--until",
            a.start,
            "--trees",
            "200",
            "--out",
            work,
            "-q",
        ],
        check=True,
    )
    port_file = os.path.join(work, "port")
    serve = subprocess.Popen(
        [
            a.bin,
            "forecast",
            "serve",
            "--model",
            os.path.join(work, "carbon.ubj"),
            "--zones",
            a.zone,
            "--data-dir",
            a.data,
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            port_file,
            "--clock-start",
            a.start,
            "-q",
        ]
    )
    try:
        for _ in range(600):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        port = int(open(port_file).read())
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        ms = []
        for _ in range(a.requests):
            t = time.perf_counter()
            conn.request("GET", f"/emissions/forecasts/current?location={a.zone}")
            r = conn.getresponse()
            r.read()
            ms.append((time.perf_counter() - t) * 1000)
            assert r.status == 200, r.status
        first = ms[0]
        ms.sort()
        print(
            f"{a.requests} requests for {a.zone}: first {first:.2f} ms, "
            f"p50 {ms[len(ms) // 2]:.2f} ms, p99 {ms[int(len(ms) * 0.99) - 1]:.2f} ms, "
            f"max {ms[-1]:.2f} ms"
        )
    finally:
        serve.terminate()
        serve.wait(10)
