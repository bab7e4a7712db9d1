#!/usr/bin/env python3
"""Checks docs/FORMATS.md against the files greensched actually writes and reads.

  check_formats.py --greensched BIN --doc docs/FORMATS.md --repo REPO --work WORK_DIR

The document drives the check; nothing here names a column. It holds HTML comments:

  <!-- check-run NAME: ARGS -->   run `BIN ARGS` once; {out} is a fresh folder of its own,
                                  {out:OTHER} another run's folder, {repo} the source tree
  <!-- fields ID -->              the table that follows (up to the next heading) documents
                                  the fields ID: the backquoted names in its first column
  <!-- check NAME FILE IDS -->    FILE (in run NAME's folder, or `stdout`) is documented by
                                  the fields IDS (comma-separated, their union)
  <!-- check-input PATH IDS -->   an input file ({repo}/..., {shared}/...) is documented by IDS

For a CSV, every header column must be documented and every documented name must be a column
(a stale name fails too). For JSON and JSON Lines, every key path (arrays elided:
`candidates.terms.policy`) must be documented; `*` in a documented path matches any one key,
and a field whose second column says `map` or `object` of free-form keys stops the descent
(its keys are data). Every file a run writes into its folder must be checked by some comment,
so that a new output file cannot go undocumented; IDS `-` marks a file documented in prose
only (HTML). A CSV column whose second table column says `optional` may be absent.

Inputs under {shared} (--shared-data, default ../shared/data) are skipped with a message when absent, and fail the
check when CI=true.
"""

import argparse
import csv
import io
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

RUN = re.compile(r"<!--\s*check-run\s+(\S+):\s*(.*?)\s*-->")
FIELDS = re.compile(r"<!--\s*fields\s+(\S+)\s*-->")
CHECK = re.compile(r"<!--\s*check\s+(\S+)\s+(\S+)\s+(\S+)\s*-->")
INPUT = re.compile(r"<!--\s*check-input\s+(\S+)\s+(\S+)\s*-->")
HEADING = re.compile(r"^#{1,6}\s")
TICKED = re.compile(r"`([^`]+)`")
MAX_JSON_LINES = 2000


def parse_doc(text):
    """Returns (runs, fields, checks, inputs) from the document's comments."""
    runs, fields, checks, inputs = {}, {}, [], []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if m := RUN.search(line):
            runs[m.group(1)] = (number, m.group(2))
        if m := CHECK.search(line):
            checks.append((number, m.group(1), m.group(2), m.group(3).split(",")))
        if m := INPUT.search(line):
            inputs.append((number, m.group(1), m.group(2).split(",")))
        if m := FIELDS.search(line):
            names, maps, optional = [], [], []
            for row in lines[number:]:
                if HEADING.match(row) or FIELDS.search(row):
                    break
                if not row.startswith("|"):
                    continue
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                if len(cells) < 2 or set(cells[0]) <= set("-: "):
                    continue
                ticked = TICKED.findall(cells[0])
                names += ticked
                if cells[1].strip("` ") == "map":
                    maps += ticked
                if "optional" in cells[1]:
                    optional += ticked
            if not names:
                raise SystemExit(f"FORMATS.md:{number}: fields {m.group(1)}: no documented names")
            fields[m.group(1)] = (set(names), set(maps), set(optional))
    return runs, fields, checks, inputs


def documented(ids, fields, where):
    """The union of the fields IDS: (names, map names, optional names)."""
    names, maps, optional = set(), set(), set()
    for i in ids:
        if i not in fields:
            raise SystemExit(f"{where}: unknown fields id '{i}'")
        names |= fields[i][0]
        maps |= fields[i][1]
        optional |= fields[i][2]
    return names, maps, optional


def json_paths(value, prefix=()):
    """Yields every key path of a JSON value (arrays elided)."""
    if isinstance(value, dict):
        for key, child in value.items():
            path = prefix + (key,)
            yield path
            yield from json_paths(child, path)
    elif isinstance(value, list):
        for child in value:
            yield from json_paths(child, prefix)


def matches(path, pattern):
    """True when `path` is `pattern` or leads to it (an object or array on the way)."""
    return len(path) <= len(pattern) and all(p == "*" or p == k for k, p in zip(path, pattern))


def undocumented_keys(values, names, maps):
    patterns = [tuple(n.split(".")) for n in names]
    stops = [tuple(n.split(".")) for n in maps]
    missing = set()
    for value in values:
        for path in json_paths(value):
            if any(len(path) > len(s) and matches(path[: len(s)], s) for s in stops):
                continue
            if not any(matches(path, p) for p in patterns):
                missing.add(".".join(path))
    return sorted(missing)


def check_text(text, kind, names, maps, optional, where):
    """Failure messages for one file's text against the documented names."""
    if kind == "csv":
        header = next(csv.reader(io.StringIO(text)), [])
        if not header:
            return [f"{where}: no header line"]
        failures = [f"{where}: column `{c}` is not documented" for c in header if c not in names]
        failures += [
            f"{where}: documented column `{n}` is not in the file's header"
            for n in sorted(names)
            if n not in header and n not in optional
        ]
        return failures
    if kind == "jsonl":
        lines = [line for line in text.splitlines() if line.strip()]
        stride = max(1, len(lines) // MAX_JSON_LINES)  # a spread sample of a long file
        values = [json.loads(line) for line in lines[::stride]]
    else:
        values = [json.loads(text)]
    if not values:
        return [f"{where}: empty"]
    return [f"{where}: key `{k}` is not documented" for k in undocumented_keys(values, names, maps)]


def kind_of(name, text):
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".jsonl"):
        return "jsonl"
    if name.endswith(".json") or text.lstrip().startswith(("{", "[")):
        return "json"
    return "csv"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--greensched", required=True, type=pathlib.Path)
    parser.add_argument("--doc", required=True, type=pathlib.Path)
    parser.add_argument("--repo", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--shared-data", type=pathlib.Path, help="default: REPO/../shared/data")
    args = parser.parse_args()
    ci = os.environ.get("CI") == "true"
    repo = args.repo.resolve()
    shared = (args.shared_data or repo / ".." / "shared" / "data").resolve()
    doc = args.doc.name
    runs, fields, checks, inputs = parse_doc(args.doc.read_text())
    failures = []

    subprocess.run(["rm", "-rf", str(args.work)], check=True)
    outs, stdouts = {}, {}
    for name, (line, command) in runs.items():
        outs[name] = args.work / name
        outs[name].mkdir(parents=True)
    for name, (line, command) in runs.items():
        text = command.replace("{out}", str(outs[name])).replace("{repo}", str(repo))
        text = re.sub(r"\{out:([^}]+)\}", lambda m: str(outs[m.group(1)]), text)
        argv = [str(args.greensched.resolve())] + shlex.split(text)
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=args.work)
        print(
            f"{doc}:{line}: {name}: exit {done.returncode} in "
            f"{time.monotonic() - started:.1f} s: greensched {text}"
        )
        if done.returncode != 0:
            failures.append(
                f"{doc}:{line}: run {name} exited {done.returncode}:\n" f"{done.stderr[-2000:]}"
            )
        stdouts[name] = done.stdout

    checked = {name: set() for name in runs}
    for line, run, file, ids in checks:
        where = f"{doc}:{line}: {run} {file}"
        if run not in runs:
            failures.append(f"{where}: no check-run named {run}")
            continue
        if ids == ["-"]:
            if file != "stdout" and not (outs[run] / file).exists():
                failures.append(f"{where}: not written")
            checked[run].add(file)
            continue
        names, maps, optional = documented(ids, fields, where)
        if file == "stdout":
            text = stdouts[run]
        else:
            path = outs[run] / file
            if not path.exists():
                failures.append(f"{where}: not written")
                continue
            checked[run].add(file)
            text = path.read_text()
        try:
            failures += check_text(text, kind_of(file, text), names, maps, optional, where)
        except (json.JSONDecodeError, StopIteration) as e:
            failures.append(f"{where}: cannot be read: {e}")

    for run, folder in outs.items():
        for path in sorted(folder.rglob("*")):
            rel = str(path.relative_to(folder))
            if path.is_file() and rel not in checked[run]:
                failures.append(
                    f"{doc}:{runs[run][0]}: run {run} writes {rel}, "
                    f"which no `check {run} {rel} ...` comment documents"
                )

    for line, raw, ids in inputs:
        where = f"{doc}:{line}: input {raw}"
        path = pathlib.Path(raw.replace("{repo}", str(repo)).replace("{shared}", str(shared)))
        if not path.exists():
            if "{shared}" in raw and not ci:
                print(f"SKIPPED {where}: {path} absent")
                continue
            failures.append(f"{where}: {path} absent")
            continue
        names, maps, optional = documented(ids, fields, where)
        text = path.read_text()
        kind = kind_of(path.name, text)
        if kind == "csv":
            # Inputs may leave optional columns out: only their columns must be documented.
            header = next(csv.reader(io.StringIO(text)), [])
            failures += [
                f"{where}: column `{c}` is not documented" for c in header if c not in names
            ]
        else:
            failures += check_text(text, kind, names, maps, optional, where)
        print(f"{where}: checked")

    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    print(
        f"{len(checks)} outputs and {len(inputs)} inputs against {doc}: "
        f"{len(failures)} problem(s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
