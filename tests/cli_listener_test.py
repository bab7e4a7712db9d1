#!/usr/bin/env python3
"""The listeners of greensched serve, dispatch and forecast serve as a user starts them: a non-loopback
--listen without TLS and authentication exits 2 and says what is missing and what to add;
flags that do not go together, and an empty token file, exit 2; --insecure starts with a
warning; serve listens on 127.0.0.1 by default; with --tls-cert, --tls-key and
--auth-token-file the started binary answers HTTPS, 401 without the token, 200 with it, and
/healthz without it. Certificates are made here with the openssl command line.

    cli_listener_test.py GREENSCHED_BINARY SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def expect_error(args, rc, *parts):
    """`args` exits `rc` with one stderr line holding every part."""
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    line = p.stderr.rstrip("\n")
    if p.returncode != rc or "\n" in line or not all(part in line for part in parts):
        fail(
            f"{' '.join(args)}: exit {p.returncode} (expected {rc}), stderr:\n{p.stderr}\n"
            f"expected one line holding {parts}"
        )
    return line


class Started:
    """`args` started with --port-file; waits for the port, stops it with SIGTERM."""

    def __init__(self, args, work, name):
        self.port_file = os.path.join(work, name + ".port")
        self.err_path = os.path.join(work, name + ".err")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(
            args + ["--port-file", self.port_file], stderr=self.err, stdout=subprocess.DEVNULL
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            if os.path.exists(self.port_file) and open(self.port_file).read().strip():
                self.port = int(open(self.port_file).read())
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        fail(f"{' '.join(args)} did not start:\n{self.stderr()}")

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        return open(self.err_path).read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        return self.proc.returncode


def get(url, context=None, token=None):
    """(status, body) of GET url; (None, reason) when no HTTP answer came."""
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, ConnectionError, ssl.SSLError, OSError) as e:
        return None, str(e)


def healthy(name, url, context=None):
    """Waits until url/healthz answers 200 (serve answers 503 while it opens its state)."""
    deadline = time.time() + 60
    while True:
        status, body = get(url + "/healthz", context)
        if status == 200:
            return
        if time.time() > deadline:
            fail(f"{name}: /healthz {status}: {body}")
        time.sleep(0.1)


def make_certificates(work):
    def openssl(*args):
        p = subprocess.run(["openssl", *args], cwd=work, capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"openssl {' '.join(args)}: {p.stderr}")

    if shutil.which("openssl") is None:
        fail("the openssl command line is needed to make test certificates")
    with open(os.path.join(work, "ca.cnf"), "w") as f:
        f.write(
            "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = test CA\n"
            "[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign\n"
        )
    with open(os.path.join(work, "server.ext"), "w") as f:
        f.write("subjectAltName = IP:127.0.0.1,DNS:localhost\nextendedKeyUsage = serverAuth\n")
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl(
        "req",
        "-x509",
        *key,
        "-config",
        "ca.cnf",
        "-extensions",
        "ca",
        "-days",
        "2",
        "-subj",
        "/CN=test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    )
    openssl("req", *key, "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr")
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-set_serial",
        "2",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.crt",
    )
    return tuple(os.path.join(work, n) for n in ("ca.crt", "server.crt", "server.key"))


def main():
    if len(sys.argv) != 4:
        fail("usage: cli_listener_test.py GREENSCHED_BINARY SOURCE_DIR WORK_DIR")
    binary, source, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    nodes = os.path.join(work, "nodes.csv")
    with open(nodes, "w") as f:
        f.write("sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16000,2,T4\n")
    ca, cert, key = make_certificates(work)
    token = os.path.join(work, "token")
    with open(token, "w") as f:
        f.write("s3cret-token\n")
    empty = os.path.join(work, "empty-token")
    open(empty, "w").close()

    dispatch = [
        binary,
        "dispatch",
        "--config",
        os.path.join(source, "examples", "dispatch-4-regions.json"),
    ]

    def serve(state):
        return [binary, "serve", "--nodes", nodes, "--state", os.path.join(work, state)]

    # forecast serve on a zone of 30 days written here, with a model trained before the replay.
    data = os.path.join(work, "data")
    os.makedirs(os.path.join(data, "carbon", "emaps2023"))
    with open(os.path.join(data, "carbon", "emaps2023", "AA_2023_hourly.csv"), "w") as f:
        f.write(
            "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO2eq/kWh (direct),"
            "Carbon Intensity gCO2eq/kWh (LCA),Low Carbon Percentage,Renewable Percentage,"
            "Data Source,Data Estimated,Data Estimation Method\n"
        )
        for day in range(1, 31):
            for hour in range(24):
                v = 100 + 2 * hour + day
                f.write(f"2023-06-{day:02d} {hour:02d}:00:00,X,X,X,{v},{v},0,0,test,false,\n")
    subprocess.run(
        [
            binary,
            "forecast",
            "train",
            "--data-dir",
            data,
            "--until",
            "2023-06-20",
            "--trees",
            "10",
            "--out",
            os.path.join(work, "model"),
            "-q",
        ],
        check=True,
    )
    forecast = [
        binary,
        "forecast",
        "serve",
        "--data-dir",
        data,
        "--model",
        os.path.join(work, "model", "carbon.ubj"),
        "--clock-start",
        "2023-06-25",
    ]

    # 1. Refused: a non-loopback address without TLS and authentication, exit 2, what to add.
    for args, command in ((dispatch, "dispatch"), (serve("s1"), "serve"), (forecast, "forecast")):
        for address, host in (("0.0.0.0:0", "0.0.0.0"), ("[::]:0", "::")):
            expect_error(
                args + ["--listen", address],
                2,
                f"greensched {command}: refusing to "
                f"listen on {host} with no TLS (--tls-cert FILE --tls-key FILE) and no "
                "authentication (--auth-token-file FILE or --client-ca FILE)",
                "--insecure",
                "127.0.0.1",
            )
    expect_error(
        serve("s1") + ["--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key],
        2,
        "refusing to listen on 0.0.0.0 with no authentication (",
        "docs/SERVE.md",
    )
    expect_error(
        dispatch + ["--listen", "10.1.2.3:0", "--auth-token-file", token],
        2,
        "refusing to listen on 10.1.2.3 with no TLS (--tls-cert FILE --tls-key FILE):",
        "docs/MULTICLUSTER.md",
    )
    # Flags that do not go together, and an empty token file.
    expect_error(dispatch + ["--tls-cert", cert], 2, "--tls-cert needs --tls-key")
    expect_error(serve("s1") + ["--client-ca", ca], 2, "--client-ca needs TLS")
    expect_error(dispatch + ["--auth-token-file", empty], 2, "holds no token")
    expect_error(dispatch + ["--auth-token-file", os.path.join(work, "absent")], 1, "absent")

    # 2. --insecure starts, with a warning; without it, serve listens on 127.0.0.1.
    for args, name in (
        (dispatch + ["--listen", "0.0.0.0:0", "--insecure"], "dispatch-insecure"),
        (serve("s2") + ["--listen", "0.0.0.0:0", "--insecure"], "serve-insecure"),
        (forecast + ["--listen", "0.0.0.0:0", "--insecure"], "forecast-insecure"),
    ):
        s = Started(args, work, name)
        healthy(name, f"http://127.0.0.1:{s.port}")
        rc = s.stop()
        if rc != 0 or "warning: --insecure: listening on 0.0.0.0" not in s.stderr():
            fail(f"{name}: exit {rc}, stderr:\n{s.stderr()}")
    s = Started(forecast, work, "forecast-default")
    rc = s.stop()
    if rc != 0 or f"greensched forecast serve: http://127.0.0.1:{s.port} " not in s.stderr():
        fail(f"forecast serve without --listen: exit {rc}, not on 127.0.0.1:\n{s.stderr()}")
    s = Started(serve("s3"), work, "serve-default")
    rc = s.stop()
    if rc != 0 or f"greensched serve: http://127.0.0.1:{s.port}/ " not in s.stderr():
        fail(f"serve without --listen: exit {rc}, not on 127.0.0.1:\n{s.stderr()}")

    # 3. TLS and a token on 0.0.0.0: HTTPS, 401 without the token, 200 with it.
    tls = [
        "--listen",
        "0.0.0.0:0",
        "--tls-cert",
        cert,
        "--tls-key",
        key,
        "--auth-token-file",
        token,
    ]
    context = ssl.create_default_context(cafile=ca)
    for args, name, path in (
        (dispatch + tls, "dispatch-tls", "/v1/clusters"),
        (serve("s4") + tls, "serve-tls", "/pods"),
        (forecast + tls, "forecast-tls", "/emissions/forecasts/current?location=AA"),
    ):
        s = Started(args, work, name)
        url = f"https://127.0.0.1:{s.port}"
        healthy(name, url, context)
        checks = {
            "no token": (get(url + path, context), 401),
            "wrong token": (get(url + path, context, "s3cret-tokem"), 401),
            "the token": (get(url + path, context, "s3cret-token"), 200),
            "/healthz without a token": (get(url + "/healthz", context), 200),
            "/metrics without a token": (get(url + "/metrics", context), 401),
        }
        plain = get(f"http://127.0.0.1:{s.port}/healthz")
        rc = s.stop()
        for what, ((status, body), want) in checks.items():
            if status != want:
                fail(f"{name}: {what}: HTTP {status} (want {want}): {body}")
        refused = json.loads(checks["no token"][0][1])
        if "missing bearer token" not in refused.get("error", refused.get("Error", "")):
            fail(f"{name}: the 401 does not say why: {refused}")
        if plain[0] is not None:
            fail(f"{name}: plain HTTP to the TLS port got HTTP {plain[0]}")
        if rc != 0 or "warning" in s.stderr() or f"https://0.0.0.0:{s.port}" not in s.stderr():
            fail(f"{name}: exit {rc}, stderr:\n{s.stderr()}")
    print("ok: listeners refuse exposure, --insecure warns, TLS and token served")


if __name__ == "__main__":
    main()
