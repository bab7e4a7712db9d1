#!/usr/bin/env python3
"""Checks that every metric a Grafana dashboard queries is exported by greensched.

  check_dashboard_metrics.py --repo REPO_DIR DASHBOARD.json [DASHBOARD.json ...]

Every PromQL `expr` of every panel (rows and nested panels included) is reduced to the metric
names it reads, and each must be exported by one of:

- `greensched serve` and `greensched dispatch`: the metric names written as string literals
  in their C++ sources (src/greensched/serve/*.cpp, src/greensched/dispatch/*.cpp); a
  histogram's base name (declared near the word "histogram") also exports its _bucket, _sum
  and _count series;
- `greensched-kueue`: the names of the metrics its Go sources (kueue/, tests left out)
  register (`Name: "..."` and greensched_* literals);
- controller-runtime's standard metrics, which greensched-kueue serves through its manager
  (CONTROLLER_RUNTIME below).

A query naming any other metric fails the check, naming the dashboard, the panel, the
query and the metric.
"""

import argparse
import json
import pathlib
import re
import sys

# The metrics controller-runtime (v0.23, kueue/go.mod) registers in its registry and serves on
# the manager's metrics endpoint: its reconcile metrics (pkg/internal/controller/metrics),
# client-go's workqueue metrics under the subsystem "workqueue" (pkg/metrics/workqueue.go),
# the REST client's and leader election's (pkg/metrics/client_go_adapter.go,
# leaderelection.go), the certificate watcher's, and the Go and process collectors. Written
# out here because they come from a dependency's source, not greensched's.
CONTROLLER_RUNTIME = {
    "controller_runtime_reconcile_total",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_terminal_reconcile_errors_total",
    "controller_runtime_reconcile_panics_total",
    "controller_runtime_reconcile_timeouts_total",
    "controller_runtime_reconcile_time_seconds_bucket",
    "controller_runtime_reconcile_time_seconds_sum",
    "controller_runtime_reconcile_time_seconds_count",
    "controller_runtime_max_concurrent_reconciles",
    "controller_runtime_active_workers",
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_queue_duration_seconds_bucket",
    "workqueue_queue_duration_seconds_sum",
    "workqueue_queue_duration_seconds_count",
    "workqueue_work_duration_seconds_bucket",
    "workqueue_work_duration_seconds_sum",
    "workqueue_work_duration_seconds_count",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "workqueue_retries_total",
    "rest_client_requests_total",
    "leader_election_master_status",
    "leader_election_slowpath_total",
    "certwatcher_read_certificate_total",
    "certwatcher_read_certificate_errors_total",
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_open_fds",
    "process_start_time_seconds",
    "go_goroutines",
    "go_memstats_alloc_bytes",
}

# PromQL words that are not metric names.
KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "offset",
    "and",
    "or",
    "unless",
    "inf",
    "nan",
    "atan2",
}

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def metric_names(expr):
    """The metric names a PromQL expression reads."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals
    e = re.sub(r"'(?:[^'\\]|\\.)*'", "''", e)
    e = re.sub(r"\{[^}]*\}", " ", e)  # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)  # ranges and subqueries
    e = re.sub(r"\$\{?\w+\}?", " 0 ", e)  # dashboard variables
    # Label lists of grouping and matching clauses.
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)", e):
        word = m.group(1)
        if word.lower() in KEYWORDS:
            continue
        if re.match(r"\s*\(", e[m.end() :]):  # a function or aggregation
            continue
        names.add(word)
    return names


def exported_by_sources(files, literal):
    """Names written as literals in the files; histograms also as their series."""
    names = set()
    for path in files:
        text = path.read_text(errors="replace")
        for m in re.finditer(literal, text):
            name = m.group(1)
            names.add(name)
            around = text[max(0, m.start() - 300) : m.end() + 300]
            if re.search(r"histogram", around, re.I) and not name.endswith(HISTOGRAM_SUFFIXES):
                names.update(name + s for s in HISTOGRAM_SUFFIXES)
    return names


def exported(repo):
    src = repo / "src" / "greensched"
    cpp = sorted(
        p
        for d in ("serve", "dispatch")
        for p in (src / d).glob("*")
        if p.suffix in (".cpp", ".hpp")
    )
    # C++: a string literal that starts with a greensched_ metric name (followed by its end,
    # a label block or a space, as in "name{...} value" or "# TYPE name").
    serve_dispatch = exported_by_sources(cpp, r'"(?:# (?:HELP|TYPE) )?(greensched_[a-z0-9_]+)')
    go = sorted(p for p in (repo / "kueue").rglob("*.go") if not p.name.endswith("_test.go"))
    controller = exported_by_sources(go, r'Name:\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"')
    controller |= exported_by_sources(go, r'"(greensched_[a-z0-9_]+)"')
    return serve_dispatch, controller


def panels(items):
    for p in items:
        yield p
        yield from panels(p.get("panels", []))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, type=pathlib.Path)
    parser.add_argument("dashboards", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    serve_dispatch, controller = exported(args.repo)
    known = serve_dispatch | controller | CONTROLLER_RUNTIME
    if not serve_dispatch or not controller:
        print("no metric names found in the sources: wrong --repo?", file=sys.stderr)
        return 1
    failures, queries, used = [], 0, set()
    for dashboard in args.dashboards:
        data = json.loads(dashboard.read_text())
        for panel in panels(data.get("panels", [])):
            for target in panel.get("targets", []):
                expr = target.get("expr")
                if not expr:
                    continue
                queries += 1
                names = metric_names(expr)
                if not names:
                    failures.append(
                        f"{dashboard.name}: panel {panel.get('title')!r}: " f"no metric in {expr!r}"
                    )
                for name in sorted(names):
                    used.add(name)
                    if name not in known:
                        failures.append(
                            f"{dashboard.name}: panel {panel.get('title')!r} "
                            f"(query {target.get('refId')}): {name} is exported by no "
                            f"greensched source nor controller-runtime: {expr}"
                        )
    print(f"{queries} queries, {len(used)} metrics: {', '.join(sorted(used))}")
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    return 1 if failures or not queries else 0


if __name__ == "__main__":
    sys.exit(main())
