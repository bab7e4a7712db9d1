"""Every table greensched prints on the terminal keys every column: its header, the column of
the CSV file the command wrote that holds it (or "-" where the table derives it), and its
meaning; each CSV column named is in that file's header and in docs/FORMATS.md.

    python3 table_columns_test.py GREENSCHED SOURCE_DIR WORK_DIR
"""

import os
import re
import shutil
import subprocess
import sys

BIN, SOURCE, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
FORMATS = open(os.path.join(SOURCE, "docs", "FORMATS.md"), encoding="utf-8").read()

RUNS = {
    "inflation": ["simulate", "--policy", "fgd,bestfit", "--seeds", "1", "--tune", "1.3"],
    "replay": ["simulate", "--mode", "replay", "--load", "40", "--days", "1"]
    + ["--warmup-days", "0.5", "--policy", "fgd", "--power-down-idle", "off,30m"],
    "multi": ["multi", "--days", "1", "--warmup-days", "0.5"],
    "energy": ["multi", "--agent", "local", "--days", "1", "--load", "off", "--no-bound"]
    + ["--energy-controller", "none,greedy"],
}

KEY = re.compile(r"^columns \((\S+) column; -: derived, not in \S+\):$")
failures = []
keys_seen = 0
for name, args in RUNS.items():
    out_dir = os.path.join(WORK, name)
    p = subprocess.run([BIN] + args + ["--out", out_dir], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    lines = p.stdout.splitlines()
    for i, line in enumerate(lines):
        m = KEY.match(line)
        if not m:
            continue
        keys_seen += 1
        csv_name = m.group(1)
        with open(os.path.join(out_dir, csv_name), encoding="utf-8") as f:
            csv_header = f.readline().strip().split(",")
        entries = []
        for entry in lines[i + 1 :]:
            if not entry.startswith("  "):
                break
            fields = re.split(r" {2,}", entry.strip())
            if len(fields) != 3:
                failures.append(f"{name}: key line not 'header  csv  meaning': {entry!r}")
                continue
            entries.append(fields)
        headers = [h for h, _, _ in entries]
        for header, column, meaning in entries:
            if column == "-":
                if not re.search(r"[a-z]+_[a-z_]+", meaning):
                    failures.append(f"{name}: derived column {header!r} says not from what")
                continue
            if column not in csv_header:
                failures.append(f"{name}: {header!r} keyed to {column}, not in {csv_name}")
            if f"`{column}`" not in FORMATS:
                failures.append(f"{name}: {column} ({csv_name}) is not in docs/FORMATS.md")
        # The table's header line: the nearest line above that starts with the first header.
        table_header = next(
            (lines[k] for k in range(i - 1, -1, -1) if lines[k].startswith(headers[0] + " ")),
            None,
        )
        if table_header is None:
            failures.append(f"{name}: no table header above the key of {csv_name}")
            continue
        rest = table_header
        for h in sorted(headers, key=len, reverse=True):
            if h not in rest:
                failures.append(f"{name}: keyed column {h!r} is not in the table: {table_header}")
            rest = rest.replace(h, " ", 1)
        if rest.strip():
            failures.append(f"{name}: columns without a key: {rest.split()} in {table_header}")

if keys_seen < 5:
    failures.append(
        f"only {keys_seen} keyed tables printed (inflation, replay, multi, bound, energy)"
    )
if failures:
    sys.exit("FAIL:\n" + "\n".join(failures))
print(f"PASS: {keys_seen} tables, every column keyed to its CSV column and docs/FORMATS.md")
