#!/usr/bin/env python3
"""`greensched explain --narrator-url` as a user runs it against an OpenAI-compatible server
(a stand-in here that answers what each case needs): a faithful reply is printed under the
template's text with the facts it was checked against ("narration" and "narration_facts" in
--json); an unfaithful or cut-off one is refused with one stderr line and the template's text
stands ("narration_rejected" in --json); a server that fails (500, not JSON, too slow,
unreachable) leaves the template's text with a note and exit 0; the model defaults to the
first /v1/models lists; a malformed --narrator-url is a usage error (exit 2).

    explain_narrator_cli_test.py GREENSCHED_BINARY WORK_DIR
"""
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

GREENSCHED, WORK = sys.argv[1], sys.argv[2]


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


class Server(http.server.BaseHTTPRequestHandler):
    reply = {}  # what the next chat completion answers: {"status", "body", "delay"}
    requests = []
    props = None  # llama.cpp's /props when set
    refuse_images = False  # answer 500 to a request with an image (no projector)

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/v1/models":
            self._send(200, json.dumps({"data": [{"id": "stand-in", "object": "model"}]}))
        elif self.path == "/props" and Server.props is not None:
            self._send(200, json.dumps(Server.props))
        else:
            self._send(404, "{}")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        Server.requests.append(json.loads(body))
        time.sleep(Server.reply.get("delay", 0))
        if Server.refuse_images and b"image_url" in body:
            self._send(500, '{"error": "image input is not supported"}')
            return
        self._send(Server.reply.get("status", 200), Server.reply["body"])

    def _send(self, status, body):
        data = body.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def chat(content, finish="stop"):
    return json.dumps(
        {
            "choices": [
                {"message": {"role": "assistant", "content": content}, "finish_reason": finish}
            ]
        }
    )


def explain(url, *extra):
    args = [
        GREENSCHED,
        "explain",
        "--record",
        RECORD,
        "--step",
        "0",
        "--narrator-url",
        url,
        "--narrator-timeout",
        "2",
        *extra,
    ]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
RECORD = os.path.join(WORK, "decisions.jsonl")
subprocess.run(
    [GREENSCHED, "simulate", "--policy", "fgd", "--seeds", "42", "--record", RECORD, "-q"],
    check=True,
    capture_output=True,
    timeout=300,
)
facts = json.loads(
    subprocess.run(
        [GREENSCHED, "explain", "--record", RECORD, "--step", "0", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
)
pod, node = facts["pod"], facts["chosen_node"]
template = "\n".join(facts["sentences"])

httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{httpd.server_address[1]}"

# Faithful: printed under the template with the facts it cites; the model from /v1/models.
Server.reply = {"body": chat(f"The scheduler put {pod} on {node}.")}
p = explain(url)
if (
    p.returncode != 0
    or template not in p.stdout
    or f"The scheduler put {pod} on {node}." not in p.stdout
):
    fail(f"faithful reply: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
if "(narrated by stand-in, checked against 2 facts)" not in p.stdout or p.stderr:
    fail(f"faithful reply: no check line, or a note\n{p.stdout}\n{p.stderr}")
sent = Server.requests[-1]
if (
    sent["model"] != "stand-in"
    or sent["temperature"] != 0
    or "seed" not in sent
    or "max_tokens" not in sent
):
    fail(f"the request: {sent}")
p = explain(url, "--json")
out = json.loads(p.stdout)
if out.get("narration") != f"The scheduler put {pod} on {node}." or out.get("narration_facts") != [
    pod,
    node,
]:
    fail(f"faithful reply, --json: {out}")

# Unfaithful, cut off: refused in one line, never printed, the template stands.
for body, reason in [
    (chat(f"{pod} went to {node}, saving 25% of the power."), "25% is not in the facts"),
    (chat(f"{pod} went to builtin-node-9999."), "builtin-node-9999 is not a name in the facts"),
    (
        chat(f"{pod} went to {node} because", "length"),
        "the reply was cut off (finish_reason length)",
    ),
]:
    Server.reply = {"body": body}
    p = explain(url)
    claimed = json.loads(body)["choices"][0]["message"]["content"]
    if p.returncode != 0 or claimed in p.stdout or template not in p.stdout:
        fail(f"refused reply printed, or exit {p.returncode}:\n{p.stdout}")
    if p.stderr != f"note: narration refused: {reason}\n":
        fail(f"refused reply: stderr {p.stderr!r}, expected the reason {reason!r}")
    out = json.loads(explain(url, "--json").stdout)
    if "narration" in out or out.get("narration_rejected") != reason:
        fail(f"refused reply, --json: {out}")

# llama.cpp's server (it has /props): the placeholder JSON is asked for and filled in; broken
# JSON and an unknown placeholder are refused; --narrator-mode prose asks for prose.
Server.props = {"default_generation_settings": {}, "modalities": {"vision": False}}
Server.reply = {
    "body": chat(json.dumps({"text": "{pod} went to {chosen_node}.", "facts": ["pod"]}))
}
p = explain(url, "--json")
out = json.loads(p.stdout)
sent = Server.requests[-1]
if sent.get("response_format", {}).get("type") != "json_schema":
    fail(f"llama.cpp: no JSON schema asked for: {sent}")
if out.get("narration") != f"{pod} went to {node}." or p.stderr:
    fail(f"placeholders: {out}\n{p.stderr}")
for content, reason in [
    ('{"text": "{pod} went to', "the reply is broken JSON"),
    (json.dumps({"text": "{pod} went to {best_node}.", "facts": []}), "{best_node} names no fact"),
]:
    Server.reply = {"body": chat(content)}
    p = explain(url)
    if p.returncode != 0 or p.stderr != f"note: narration refused: {reason}\n":
        fail(f"placeholders {content!r}: exit {p.returncode}, stderr {p.stderr!r}")
# A model that takes images gets the decision's chart (PNG); a server that refuses it is asked
# again with the text alone, and a note says so.
Server.props = {"default_generation_settings": {}, "modalities": {"vision": True}}
Server.reply = {"body": chat(f"The scheduler put {pod} on {node}.")}
p = explain(url, "--narrator-mode", "prose")
image = Server.requests[-1]["messages"][1]["content"][1]["image_url"]["url"]
if not image.startswith("data:image/png;base64,iVBORw0KGgo") or "checked against" not in p.stdout:
    fail(f"vision: no chart sent, or not narrated\n{p.stdout}\n{p.stderr}")
Server.refuse_images = True
Server.requests.clear()
p = explain(url, "--narrator-mode", "prose")
if (
    p.returncode != 0
    or len(Server.requests) != 2
    or "image_url" in json.dumps(Server.requests[1])
    or "note: the narrator refused the chart (HTTP 500); sent the text only" not in p.stderr
    or "checked against" not in p.stdout
):
    fail(f"image refused: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
Server.refuse_images = False
Server.props = {"default_generation_settings": {}, "modalities": {"vision": False}}
Server.reply = {"body": chat(f"The scheduler put {pod} on {node}.")}
p = explain(url, "--narrator-mode", "prose")
if "response_format" in Server.requests[-1] or "checked against 2 facts" not in p.stdout:
    fail(f"--narrator-mode prose: {Server.requests[-1]}\n{p.stdout}")
Server.props = None

# --ask: the decisions the question names, then the checked answer; the question goes to the
# model; a question naming nothing, or no narrator, is an error.
ask = ["--record", RECORD, "--ask", f"Why did {pod} go to {node}?"]
Server.reply = {"body": chat(f"{pod} went to {node} because it scored best.")}
p = subprocess.run(
    [GREENSCHED, "explain", *ask, "--narrator-url", url], capture_output=True, text=True
)
if (
    p.returncode != 0
    or not p.stdout.startswith(f"Question: Why did {pod} go to {node}?\nWhat the record says (1 ")
    or template not in p.stdout
    or f"Answer: {pod} went to {node} because it scored best." not in p.stdout
):
    fail(f"--ask: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
if f"Question: Why did {pod} go to {node}?" not in Server.requests[-1]["messages"][1]["content"]:
    fail(f"--ask: the question was not sent: {Server.requests[-1]}")
Server.reply = {"body": chat(f"{pod} went to {node} and saved 40%.")}
p = subprocess.run(
    [GREENSCHED, "explain", *ask, "--narrator-url", url, "--json"], capture_output=True, text=True
)
out = json.loads(p.stdout)
if out.get("narration_rejected") != "40% is not in the facts" or "narration" in out:
    fail(f"--ask refused, --json: {out}")
p = subprocess.run([GREENSCHED, "explain", *ask], capture_output=True, text=True)
if p.returncode != 2 or "--ask needs a narrator" not in p.stderr:
    fail(f"--ask without a narrator: exit {p.returncode}, {p.stderr}")
p = subprocess.run(
    [GREENSCHED, "explain", "--record", RECORD, "--ask", "why not node-zz?", "--narrator-url", url],
    capture_output=True,
    text=True,
)
if p.returncode != 1 or "the question names no pod, node or site" not in p.stderr:
    fail(f"--ask naming nothing: exit {p.returncode}, {p.stderr}")

# report --narrator-url: each failed pod's narration under its words once the guard accepts
# it; a page whose narrations were all refused is byte-identical to one without a narrator.
results = os.path.join(WORK, "results")
os.makedirs(results, exist_ok=True)
shutil.copy(RECORD, os.path.join(results, "decisions.jsonl"))


def report(out, *extra):
    p = subprocess.run(
        [GREENSCHED, "report", "--in", results, "--out", out, "--failed", "2", *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if p.returncode != 0:
        fail(f"report {extra}: exit {p.returncode}\n{p.stderr}")
    return open(os.path.join(out, "report.html")).read(), p.stderr


plain, _ = report(os.path.join(WORK, "r-plain"))
Server.reply = {"body": chat("No node could take it: fragmentation is not the cause.")}
told, notes = report(os.path.join(WORK, "r-told"), "--narrator-url", url)
if told.count('<p class="narration">No node could take it: fragmentation is not the cause.') != 2:
    fail(f"report: the narrations are missing\n{notes}")
if "(narrated by stand-in, checked against" not in told or notes:
    fail(f"report: no check line, or notes: {notes}")
# The report and the CLI say the same about the same decision: the first failed pod's words.
first = subprocess.run(
    [GREENSCHED, "explain", "--record", RECORD, "--failed", "1"], capture_output=True, text=True
).stdout
if first not in [html.unescape(t) for t in re.findall(r"<pre>(.*?)</pre>", plain, re.S)]:
    fail(f"report and explain --failed 1 differ on the first failed pod:\n{first}")
# Every chart with its facts gets a checked caption under the written one; refused captions
# leave the page as it is without a narrator.
sim = os.path.join(WORK, "sim")
subprocess.run(
    [GREENSCHED, "simulate", "--policy", "fgd,bestfit", "--seeds", "42", "--out", sim, "-q"],
    check=True,
    capture_output=True,
    timeout=300,
)


def sim_report(out, *extra):
    p = subprocess.run(
        [GREENSCHED, "report", "--in", sim, "--out", out, *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if p.returncode != 0:
        fail(f"report of {sim} {extra}: exit {p.returncode}\n{p.stderr}")
    return open(os.path.join(out, "report.html")).read(), p.stderr


sim_plain, _ = sim_report(os.path.join(WORK, "s-plain"))
Server.requests.clear()
Server.reply = {"body": chat("The chart compares fgd with bestfit as the cluster fills.")}
sim_told, notes = sim_report(os.path.join(WORK, "s-told"), "--narrator-url", url)
captions = re.findall(r"<figcaption>.*?</figcaption>", sim_told, re.S)
narrated = [c for c in captions if '<p class="narration">The chart compares fgd' in c]
if not narrated or len(narrated) != len(Server.requests) or notes:
    fail(f"report: {len(narrated)} narrated captions for {len(Server.requests)} asked\n{notes}")
asked = Server.requests[0]["messages"][1]["content"]
if "fgd: " not in asked or "bestfit: " not in asked:
    fail(f"report: a chart's facts do not name its series:\n{asked}")
Server.reply = {"body": chat("fgd reached 99.9% while bestfit stalled.")}
sim_refused, notes = sim_report(os.path.join(WORK, "s-refused"), "--narrator-url", url)
if sim_refused != sim_plain or "narration refused: 99.9% is not in the facts" not in notes:
    fail(f"report: refused captions changed the page, or were not noted: {notes}")

# Fleet decisions: the report tells the first that moved or deferred a job, each as explain
# --pod JOB --policy AGENT tells it.
fleet = os.path.join(WORK, "fleet")
os.makedirs(fleet, exist_ok=True)
subprocess.run(
    [GREENSCHED, "multi", "--agent", "green", "--days", "2", "-q", "--record"]
    + [os.path.join(fleet, "decisions.jsonl")],
    check=True,
    capture_output=True,
    timeout=300,
)
p = subprocess.run(
    [GREENSCHED, "report", "--in", fleet, "--decisions", "2"], capture_output=True, text=True
)
page = open(os.path.join(fleet, "report.html")).read()
told_jobs = re.findall(r'<article class="fleet-decision"><h3>([^ <]+) <small>\(agent green', page)
if p.returncode != 0 or "Why jobs went where they did" not in page or len(told_jobs) != 2:
    fail(f"report: fleet decisions missing: exit {p.returncode}, {told_jobs}\n{p.stderr}")
for job in told_jobs:
    said = subprocess.run(
        [GREENSCHED, "explain", "--record", os.path.join(fleet, "decisions.jsonl")]
        + ["--pod", job, "--policy", "green"],
        capture_output=True,
        text=True,
    ).stdout
    if said not in [html.unescape(t) for t in re.findall(r"<pre>(.*?)</pre>", page, re.S)]:
        fail(f"report and explain --pod {job} differ:\n{said}")
Server.reply = {"body": chat("No node could take it, though 97% of nodes were free.")}
refused, notes = report(os.path.join(WORK, "r-refused"), "--narrator-url", url)
if refused != plain:
    fail("report: refused narrations changed the page")
if notes.count("narration refused: 97% is not in the facts") != 2:
    fail(f"report: the refusals are not noted: {notes}")

# A failing server: the template with a note, exit 0.
for reply, note in [
    ({"status": 500, "body": "{}"}, "narrator: HTTP 500"),
    ({"body": "not json"}, "narrator: reply: invalid JSON"),
    ({"body": chat("late"), "delay": 3}, "narrator: "),
]:
    Server.reply = reply
    p = explain(url)
    if (
        p.returncode != 0
        or template not in p.stdout
        or note not in p.stderr
        or "template text only" not in p.stderr
    ):
        fail(f"failing server {reply}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
httpd.shutdown()
p = explain(url)
if p.returncode != 0 or template not in p.stdout or "template text only" not in p.stderr:
    fail(f"unreachable server: exit {p.returncode}\n{p.stdout}\n{p.stderr}")

# A malformed URL is a usage error.
p = explain("localhost:8080")
if p.returncode != 2 or "must start with http:// or https://" not in p.stderr:
    fail(f"malformed URL: exit {p.returncode}, {p.stderr}")
print("explain --narrator-url: faithful shown, unfaithful refused, failures fall back")
