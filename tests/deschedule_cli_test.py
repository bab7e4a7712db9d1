#!/usr/bin/env python3
"""greensched deschedule as a user runs it, against a started `greensched serve` and a stand-in
Kubernetes API server (its discovery, pods and the Eviction API, with a PodDisruptionBudget
that refuses one pod as the API server does: HTTP 429).

The extender's state is the fragmenting sequence of tests/serve_defrag_test.cpp (best fit,
three nodes of 2 GPUs, one half-GPU pod left on every GPU, p3 not movable) and a whole-GPU
pod w1 waiting. Its plan moves p1 first; when p1's eviction is refused (disruption budget) or
p1 is no longer annotated movable on the live pod, p1 stays and the plan asked for anew moves
p5. Checked: the evictions made, the record's lines, the budget, the exit codes (2 for usage,
74 when serve or the API server does not answer, with nothing evicted), and the deadline of
every request.

    deschedule_cli_test.py GREENSCHED_BINARY WORK_DIR
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from server_process import fail, wait_for_port, wait_until_healthy

NS = "ml"
KUBE_TOKEN = "kube-t0ken"


def run(args, timeout=120):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def expect_exit(args, rc, part):
    p = run(args)
    line = p.stderr.rstrip("\n")
    if p.returncode != rc or "\n" in line or part not in line:
        fail(f"{' '.join(args)}: exit {p.returncode} (expected {rc}), stderr:\n{p.stderr}")
    return p


def pod(name, gpu, annotated, node=""):
    """A v1.Pod asking 1 CPU and `gpu` ("500" milli or "1" whole GPU)."""
    key = "alibabacloud.com/gpu-milli" if gpu == "500" else "alibabacloud.com/gpu-count"
    resources = {"cpu": "1", "memory": "1Gi", key: gpu}
    annotations = {"greensched.io/movable": "true"} if annotated else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": "uid-" + name,
            "annotations": annotations,
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "c", "resources": {"requests": resources, "limits": resources}}
            ],
        },
        "status": {"phase": "Running" if node else "Pending"},
    }


class FakeApi:
    """The API server's paths deschedule uses; pods in `pods`, `pdb` the pods a budget covers."""

    def __init__(self):
        self.pods, self.pdb, self.evicted, self.requests = {}, set(), [], 0
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def status(self, code, reason, message, causes=None):
                body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": code}
                body.update({"status": "Failure", "reason": reason, "message": message})
                if causes:
                    body["details"] = {"causes": causes}
                self.reply(code, body)

            def authorised(self):
                with api.lock:
                    api.requests += 1
                if self.headers.get("Authorization") != "Bearer " + KUBE_TOKEN:
                    self.status(401, "Unauthorized", "Unauthorized")
                    return False
                return True

            def do_GET(self):
                if not self.authorised():
                    return
                if self.path == "/api/v1":
                    resources = [
                        {"name": "pods", "namespaced": True, "kind": "Pod"},
                        {
                            "name": "pods/eviction",
                            "namespaced": True,
                            "group": "policy",
                            "version": "v1beta1",
                            "kind": "Eviction",
                            "verbs": ["create"],
                        },
                    ]
                    return self.reply(200, {"kind": "APIResourceList", "resources": resources})
                parts = self.path.split("/")
                with api.lock:
                    found = api.pods.get(parts[-1]) if len(parts) == 7 else None
                if found is None:
                    return self.status(404, "NotFound", f'pods "{parts[-1]}" not found')
                self.reply(200, found)

            def do_POST(self):
                if not self.authorised():
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                parts = self.path.split("/")
                name = parts[-2]
                if parts[-1] != "eviction" or body.get("apiVersion") != "policy/v1beta1":
                    return self.status(400, "BadRequest", f"unexpected {self.path}: {body}")
                with api.lock:
                    live = api.pods.get(name)
                    want = body.get("deleteOptions", {}).get("preconditions", {}).get("uid")
                    if live is None:
                        return self.status(404, "NotFound", f'pods "{name}" not found')
                    if want != live["metadata"]["uid"]:
                        return self.status(409, "Conflict", "Precondition failed: UID")
                    if name in api.pdb:
                        return self.status(
                            429,
                            "TooManyRequests",
                            "Cannot evict pod as it would violate the pod's disruption budget.",
                            [
                                {
                                    "reason": "DisruptionBudget",
                                    "message": "The disruption budget keep needs 1 healthy pods and has 1 currently",
                                }
                            ],
                        )
                    del api.pods[name]
                    api.evicted.append(name)
                self.reply(
                    201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reset(self, pods, pdb=()):
        with self.lock:
            self.pods = {p["metadata"]["name"]: p for p in pods}
            self.pdb, self.evicted, self.requests = set(pdb), [], 0


class Serve:
    def __init__(self, binary, work):
        nodes = os.path.join(work, "nodes.csv")
        with open(nodes, "w") as f:
            f.write("sn,cpu_milli,memory_mib,gpu,model\n")
            for n in "abc":
                f.write(f"node-{n},32000,131072,2,V100M16\n")
        port_file = os.path.join(work, "serve.port")
        self.err = open(os.path.join(work, "serve.err"), "w")
        args = [binary, "serve", "--listen", "127.0.0.1:0", "--state", os.path.join(work, "state")]
        args += ["--nodes", nodes, "--policy", "bestfit", "-q", "--port-file", port_file]
        self.proc = subprocess.Popen(args, stderr=self.err, stdout=subprocess.DEVNULL)
        port = wait_for_port(port_file, self.proc, 60)
        if port is None:
            fail("greensched serve did not start")
        self.url = f"http://127.0.0.1:{port}"
        if not wait_until_healthy(self.url, self.proc, 60):
            fail("greensched serve did not become healthy")

    def post(self, path, body):
        request = urllib.request.Request(
            self.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as r:
            return json.loads(r.read())

    def place(self, p, node):
        nodes = ["node-a", "node-b", "node-c"]
        self.post("/filter", {"Pod": p, "NodeNames": nodes})
        name = p["metadata"]["name"]
        bind = {"PodName": name, "PodNamespace": NS, "PodUID": "uid-" + name, "Node": node}
        reply = self.post("/bind", bind)
        if reply["Error"]:
            fail(f"bind {name}: {reply}")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        self.err.close()


def main():
    binary, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    token = os.path.join(work, "kube-token")
    with open(token, "w") as f:
        f.write(KUBE_TOKEN + "\n")
    api = FakeApi()

    # Usage: exit 2, one line.
    expect_exit([binary, "deschedule", "--budget", "1"], 2, "--server is required")
    expect_exit(
        [binary, "deschedule", "--server", "http://127.0.0.1:1", "--budget", "-1"], 2, "--budget"
    )
    expect_exit(
        [binary, "deschedule", "--server", "http://127.0.0.1:1", "--budget", "abc"], 2, "--budget"
    )
    expect_exit([binary, "deschedule", "--server", "http://127.0.0.1:1"], 2, "--budget is required")

    # serve does not answer: exit 74, no request to the API server, nothing recorded.
    kube = ["--kube-api", api.url, "--kube-token-file", token]
    record = os.path.join(work, "unreachable.jsonl")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    expect_exit(
        [binary, "deschedule", "--server", dead, "--budget", "3", "--record", record] + kube,
        74,
        "no answer",
    )
    if api.requests != 0 or (os.path.exists(record) and os.path.getsize(record) > 0):
        fail(f"serve unreachable, yet {api.requests} API requests and a record")
    # A serve that accepts but never answers: the request's deadline ends it.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    started = time.time()
    expect_exit(
        [binary, "deschedule", "--server", f"http://127.0.0.1:{silent.getsockname()[1]}"]
        + ["--budget", "1", "--timeout", "1s"]
        + kube,
        74,
        "each request may take 1 s",
    )
    if time.time() - started > 15:
        fail(f"--timeout 1s: deschedule took {time.time() - started:.1f} s")
    silent.close()

    serve = Serve(binary, work)
    try:
        for i in range(1, 13):
            stays = i % 2 == 1
            serve.place(pod(f"p{i}", "500", stays and i != 3), "node-" + "abc"[(i - 1) // 4])
        for i in range(2, 13, 2):
            serve.post("/release", {"PodName": f"p{i}", "PodNamespace": NS, "PodUID": f"uid-p{i}"})
        w1 = pod("w1", "1", False)
        if serve.post("/filter", {"Pod": w1, "NodeNames": ["node-a", "node-b", "node-c"]})[
            "NodeNames"
        ]:
            fail("w1 fits without moves")
        live = [w1] + [
            pod(f"p{i}", "500", i != 3, "node-" + "abc"[(i - 1) // 4]) for i in range(1, 13, 2)
        ]
        base = [binary, "deschedule", "--server", serve.url] + kube

        # --dry-run: the plan, nothing asked of the API server.
        api.reset(live)
        p = run(base + ["--budget", "2", "--dry-run"])
        if p.returncode != 0 or "move ml/p1: node-a GPU 0 -> node-a GPU 1" not in p.stdout:
            fail(f"--dry-run: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        if api.requests != 0:
            fail("--dry-run asked the API server")
        # --budget 0: a plan of no moves, nothing evicted.
        p = run(base + ["--budget", "0", "--json"])
        out = json.loads(p.stdout) if p.returncode == 0 else None
        if out is None or out["evicted"] != 0 or api.evicted:
            fail(f"--budget 0: exit {p.returncode}\n{p.stdout}\n{p.stderr}")

        # A disruption budget covers p1: refused (429), not asked again; p5 moves instead.
        api.reset(live, pdb={"p1"})
        record = os.path.join(work, "evictions.jsonl")
        p = run(base + ["--budget", "2", "--record", record, "--json"])
        if p.returncode != 0:
            fail(f"deschedule: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        out = json.loads(p.stdout)
        if (
            api.evicted != ["p5"]
            or out["evicted"] != 1
            or out["refused"] != 1
            or len(out["plans"]) != 2
        ):
            fail(f"with p1 under a disruption budget: evicted {api.evicted}\n{p.stdout}")
        if out["plans"][1]["plans"][0]["moves"][0]["pod"] != "ml/p5":
            fail(f"the second plan does not move p5: {out['plans'][1]}")
        lines = [json.loads(line) for line in open(record)]
        outcomes = [
            (r["pod"], r["outcome"], r["http_status"], r["from"], r["to"], r["for"]) for r in lines
        ]
        want = [
            ("ml/p1", "refused", 429, "node-a", "node-a", "ml/w1"),
            ("ml/p5", "evicted", 201, "node-b", "node-b", "ml/w1"),
        ]
        if (
            outcomes != want
            or "disruption budget" not in lines[0]["message"]
            or not lines[0]["time"].endswith("Z")
        ):
            fail(f"record:\n{open(record).read()}")

        # p1 no longer annotated on the live pod: it stays; the budget of 1 is p5's.
        unannotated = [dict(x) for x in live]
        unannotated[1] = pod("p1", "500", False, "node-a")
        api.reset(unannotated)
        p = run(base + ["--budget", "1"])
        if p.returncode != 0 or api.evicted != ["p5"] or "not_movable ml/p1" not in p.stdout:
            fail(
                f"p1 not annotated: evicted {api.evicted}, exit {p.returncode}\n{p.stdout}{p.stderr}"
            )

        # Every pod refused and a budget of 1: nothing evicted, at most 3 plans asked for.
        api.reset(live, pdb={"p1", "p5", "p7", "p9", "p11"})
        p = run(base + ["--budget", "1", "--json"])
        out = json.loads(p.stdout) if p.returncode == 0 else None
        if out is None or api.evicted or out["refused"] != 3 or len(out["plans"]) != 3:
            fail(f"all refused: evicted {api.evicted}\n{p.stdout}\n{p.stderr}")

        # The API server does not answer: exit 74, nothing evicted.
        api.reset(live)
        p = expect_exit(
            [binary, "deschedule", "--server", serve.url, "--budget", "1"]
            + ["--kube-api", dead, "--kube-token-file", token],
            74,
            "GET " + dead + "/api/v1",
        )
        if api.evicted:
            fail("evicted with the API server unreachable")
    finally:
        serve.stop()
        api.server.shutdown()
    print(
        "deschedule: exit codes, plans, refusals, the annotation check, the budget and the record hold"
    )


if __name__ == "__main__":
    main()
