#!/usr/bin/env python3
"""Runs every shell command shown in the user docs, in order, on a fresh build.

  check_doc_commands.py --build BUILD_DIR --repo REPO_DIR --work WORK_DIR DOC.md [DOC.md ...]

Every fenced block tagged `sh` is a list of commands a reader would type; blocks tagged
otherwise (output, text) are not run. Each document runs in one bash session (so `export` and
`cd` carry over, and later commands read what earlier ones wrote) from WORK_DIR/repo, a
stand-in checkout: links to the repository's examples/, models/, scripts/, deploy/ and
to the build as build/, with ../shared/data linking the shared data. Commands that need a running
cluster (`kubectl`, `sacct`, `scontrol`) read stand-ins that print the samples in examples/,
and scripts/fetch-openb.sh copies the shared trace instead of downloading it.

- A command whose comment says `runs until stopped` must still be running after a few
  seconds; it is then stopped.
- `make` and `ctest` lines are the documented entry points (`make build`, `make test`, ...):
  they are not run here (they build and test this very tree).
- A command that reads ../shared is skipped with a message when the data is absent, and
  fails the test when CI=true.
- No folder the commands write (an --out of an example) may hold more than 20 MB: an
  example's default output is something a reader keeps.

A failure names the document, the line of the command and its output.
"""

import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

RUNS_UNTIL_STOPPED = "runs until stopped"
STOP_AFTER_S = 4


def commands(path):
    """Yields (line_number, command) for each command in the file's `sh` blocks."""
    in_block = False
    pending, start = "", 0
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        fence = re.match(r"^\s*```(\S*)", line)
        if fence:
            in_block = not in_block and fence.group(1) == "sh"
            continue
        if not in_block:
            continue
        if not pending:
            start = number
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""


def strip_comment(command):
    """The command without its trailing `# ...` comment (quotes respected)."""
    quote = None
    for i, c in enumerate(command):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1].isspace()):
            return command[:i].rstrip()
    return command.rstrip()


def make_stand_in_checkout(work, repo, build, shared_data):
    root = work / "repo"
    root.mkdir(parents=True)
    for name in ("examples", "models", "scripts", "deploy"):
        (root / name).symlink_to(repo / name)
    (root / "build").symlink_to(build)
    have_shared = shared_data.is_dir()
    if have_shared:
        (work / "shared").mkdir()
        (work / "shared" / "data").symlink_to(shared_data)
    stubs = work / "stubs"
    stubs.mkdir()
    samples = repo / "examples"
    scripts = {
        "kubectl": f"""case "$*" in
  *nodes*) cat '{samples}/kubectl/nodes.json' ;;
  *pods*) cat '{samples}/kubectl/pods.json' ;;
  *) echo "kubectl stand-in: only 'get nodes|pods -o json'" >&2; exit 1 ;;
esac""",
        "sacct": f"cat '{samples}/slurm/sacct.txt'",
        "scontrol": f"cat '{samples}/slurm/scontrol.txt'",
    }
    for name, body in scripts.items():
        stub = stubs / name
        stub.write_text("#!/bin/sh\n" + body + "\n")
        stub.chmod(0o755)
    return root, stubs, have_shared


def run_document(doc, root, stubs, have_shared, ci):
    """Runs the document's commands; returns a list of failure messages."""
    failures = []
    env = dict(os.environ)
    env["PATH"] = f"{stubs}:{env['PATH']}"
    # scripts/fetch-openb.sh copies the shared trace instead of downloading it.
    env["OPENB_BASE_URL"] = f"file://{root.parent / 'shared' / 'data' / 'openb'}"
    # One bash session per document: each command's status is reported on a marker line.
    script = ["set -o pipefail", f"cd {shlex.quote(str(root))}"]
    listed = []
    for line, raw in commands(doc):
        command = strip_comment(raw)
        where = f"{doc.name}:{line}"
        if not command:
            continue
        first = shlex.split(command)[0] if command.strip() else ""
        if first in ("make", "ctest"):
            print(f"  {where}: not run (an entry point that builds or tests this tree): {command}")
            continue
        if ("../shared" in command or "fetch-openb" in command) and not have_shared:
            message = f"{where}: needs ../shared/data, absent"
            if ci:
                failures.append(message + " (CI=true)")
            else:
                print(f"  SKIPPED {message}: {command}")
            continue
        index = len(listed)
        listed.append((where, command))
        if RUNS_UNTIL_STOPPED in raw:
            body = (
                f"( {command} ) > .doc-out-{index} 2>&1 & pid=$!; sleep {STOP_AFTER_S}; "
                f"if kill -0 $pid 2>/dev/null; then kill $pid; wait $pid; rc=0; "
                f"else wait $pid; rc=$?; [ $rc -eq 0 ] && rc=1; fi"
            )
        elif first in ("export", "cd"):
            body = f"{command} > .doc-out-{index} 2>&1; rc=$?"
        else:
            body = f"( {command} ) > .doc-out-{index} 2>&1; rc=$?"
        script.append(
            f"start=$(date +%s%N); {body}; "
            f'echo "@@doc {index} $rc $(( ($(date +%s%N) - start) / 1000000 ))"'
        )
    if not listed:
        return failures
    completed = subprocess.run(
        ["bash", "-c", "\n".join(script)], env=env, capture_output=True, text=True
    )
    seen = set()
    for marker in re.finditer(r"^@@doc (\d+) (\d+) (\d+)$", completed.stdout, re.M):
        index, rc, seconds = int(marker.group(1)), int(marker.group(2)), int(marker.group(3)) / 1000
        seen.add(index)
        where, command = listed[index]
        print(f"  {where}: exit {rc} in {seconds:.1f} s: {command}")
        if rc != 0:
            output = (root / f".doc-out-{index}").read_text(errors="replace")
            failures.append(f"{where}: `{command}` exited {rc}:\n{output[-3000:]}")
    for index, (where, command) in enumerate(listed):
        if index not in seen:
            failures.append(
                f"{where}: `{command}` did not run (the session stopped):\n"
                f"{completed.stderr[-2000:]}"
            )
    return failures


MAX_OUTPUT_MB = 20


def oversized_outputs(doc, root):
    """The folders the document's commands wrote in the stand-in checkout, over MAX_OUTPUT_MB."""
    failures = []
    for entry in sorted(root.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        size = sum(f.stat().st_size for f in entry.rglob("*") if f.is_file() and not f.is_symlink())
        if size > MAX_OUTPUT_MB * 1e6:
            failures.append(
                f"{doc.name}: {entry.name}/ holds {size / 1e6:.1f} MB, over {MAX_OUTPUT_MB} MB"
            )
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, type=pathlib.Path)
    parser.add_argument("--repo", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument(
        "--shared-data",
        type=pathlib.Path,
        help="the shared data folder (default: REPO/../shared/data), seen as ../shared/data",
    )
    parser.add_argument("docs", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    if not (args.build / "greensched").exists():
        print(f"{args.build}/greensched: not built", file=sys.stderr)
        return 1
    ci = os.environ.get("CI") == "true"
    failures = []
    for doc in args.docs:
        work = args.work / doc.stem
        subprocess.run(["rm", "-rf", str(work)], check=True)
        root, stubs, have_shared = make_stand_in_checkout(
            work,
            args.repo.resolve(),
            args.build.resolve(),
            (args.shared_data or args.repo / ".." / "shared" / "data").resolve(),
        )
        print(f"{doc}:")
        started = time.monotonic()
        failures += run_document(doc.resolve(), root, stubs, have_shared, ci)
        failures += oversized_outputs(doc, root)
        print(f"  {time.monotonic() - started:.1f} s")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
