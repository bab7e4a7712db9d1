#!/usr/bin/env python3
"""Every command-line flag a document names exists.

  check_doc_flags.py --greensched BIN --repo REPO DOC.md [DOC.md ...]

A flag is a `--name` token in the document (prose, tables and code blocks alike). It must be
one of `greensched`'s (any subcommand's, as `greensched SUB --help` and `greensched SUB SUB2
--help` list them), one of greensched-kueue's (the flag.*Var calls of
kueue/cmd/greensched-kueue/main.go, and the zap logging flags controller-runtime adds), or one of the few flags of other tools the documents
show (curl, kubectl, openssl, helm, ctest: listed below). A failure names the document, the
line and the flag, so a document cannot describe a flag that does not exist.
"""

import argparse
import pathlib
import re
import subprocess
import sys

# Flags of other programs the documents show in their commands.
OTHER_TOOLS = {
    # curl
    "--cacert",
    "--cert",
    "--key",
    "--retry",
    "--retry-connrefused",
    "--retry-delay",
    "--data",
    "--header",
    "--silent",
    "--fail",
    "--max-time",
    "--data-binary",
    "--resolve",
    # kubectl, helm
    "--type",
    "--from-file",
    "--from-literal",
    "--namespace",
    "--create-namespace",
    "--values",
    "--set",
    "--set-file",
    "--dry-run",
    "--strict",
    "--cert-file",
    "--key-file",
    "--wait",
    "--version",
    "--kubeconfig",
    "--context",
    "--all-namespaces",
    "--output",
    "--timeout",
    "--reuse-values",
    "--raw",
    "--minify",
    "--image",
    "--restart",
    "--overrides",
    # openssl
    "--days",
    # ctest, cmake, make
    "--test-dir",
    "--output-on-failure",
    "--build",
    "--target",
    # kube-scheduler, kube-apiserver
    "--config",
    "--v",
    "--bind-address",
    "--secure-port",
    "--authentication-kubeconfig",
    "--authorization-kubeconfig",
}
FLAG = re.compile(r"(?<![\w/-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def subcommands(help_text):
    """The subcommand names a --help text lists."""
    subs = set()
    in_subs = False
    for line in help_text.splitlines():
        if line.strip().lower().startswith("subcommands"):
            in_subs = True
            continue
        if in_subs:
            m = re.match(r"\s+([a-z][a-z0-9-]*)\s", line)
            if m:
                subs.add(m.group(1))
    return subs


def greensched_flags(binary):
    """Every long flag of every subcommand (and of theirs, e.g. `forecast serve`), from the
    --help texts."""
    top = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    subs = subcommands(top)
    flags = set(FLAG.findall(top))
    for sub in sorted(subs):
        text = subprocess.run([binary, sub, "--help"], capture_output=True, text=True).stdout
        flags |= set(FLAG.findall(text))
        for nested in sorted(subcommands(text)):
            nested_text = subprocess.run(
                [binary, sub, nested, "--help"], capture_output=True, text=True
            ).stdout
            flags |= set(FLAG.findall(nested_text))
    return {"--" + f for f in flags}, subs


def kueue_flags(repo):
    main = (repo / "kueue" / "cmd" / "greensched-kueue" / "main.go").read_text()
    names = set(re.findall(r'flag\.\w+Var\(\s*&[^,]+,\s*"([a-z0-9-]+)"', main))
    # controller-runtime's zap.Options.BindFlags
    names |= {
        "zap-devel",
        "zap-encoder",
        "zap-log-level",
        "zap-stacktrace-level",
        "zap-time-encoding",
    }
    return {"--" + n for n in names}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--greensched", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("docs", nargs="+")
    args = parser.parse_args()
    repo = pathlib.Path(args.repo)
    ours, subs = greensched_flags(args.greensched)
    if len(subs) < 5 or "--listen" not in ours:
        print(f"FAIL: could not read greensched's subcommands ({sorted(subs)})", file=sys.stderr)
        return 1
    known = ours | kueue_flags(repo) | OTHER_TOOLS
    failures = []
    for doc in args.docs:
        path = pathlib.Path(doc)
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for name in FLAG.findall(line):
                if "--" + name not in known:
                    failures.append(
                        f"{path.name}:{number}: --{name} is no flag of greensched, "
                        f"greensched-kueue or the tools the docs show"
                    )
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    print(f"{len(args.docs)} documents, {len(known)} known flags, {len(failures)} unknown")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
