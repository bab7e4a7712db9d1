"""What the Python tests that start greensched's servers as processes share: failing with a
message, waiting for a server's --port-file and for its /healthz, and stopping the servers (SIGTERM, then SIGKILL
after 10 s). Imported by those tests from their own folder (sys.path[0] when run as scripts).
"""

import os
import signal
import subprocess
import sys
import time
import urllib.request


def fail(message):
    """Prints FAIL: message on stderr and exits 1."""
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def wait_for_port(path, proc, seconds):
    """The port `proc` wrote to its --port-file `path`, or None if it exited or `seconds`
    passed first."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        if proc.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def wait_until_healthy(url, proc, seconds):
    """Whether GET url/healthz answered 200 (a server answers 503 while it opens its state)
    before `proc` exited or `seconds` passed."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=5) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def stop_all(procs):
    """SIGTERM to each process still running, then SIGKILL to any not gone within 10 s."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
