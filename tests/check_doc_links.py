#!/usr/bin/env python3
"""Checks the links of the user docs: every relative link names a file of the repository,
every `#anchor` a heading of the page it points to, and no link leaves the repository
through `..`.

  check_doc_links.py --repo REPO_DIR DOC.md [DOC.md ...]

Anchors follow GitHub's rule: the heading in lower case, punctuation other than `-` and `_`
dropped, spaces turned into `-`, and `-1`, `-2` appended to repeats.
"""

import argparse
import pathlib
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    in_block = False
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if FENCE.match(line):
            in_block = not in_block
            continue
        if not in_block:
            yield number, line


def anchors(path):
    seen = {}
    result = set()
    for _, line in prose_lines(path):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def check(doc, repo):
    failures = []
    for number, line in prose_lines(doc):
        for match in LINK.finditer(line):
            target = match.group(1) or match.group(2)
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            where = f"{doc.relative_to(repo)}:{number}"
            path_part, _, anchor = target.partition("#")
            page = (doc.parent / path_part).resolve() if path_part else doc.resolve()
            if repo not in page.parents and page != repo:
                failures.append(f"{where}: {target}: points outside the repository")
                continue
            if not page.exists():
                failures.append(f"{where}: {target}: no such file")
                continue
            if anchor and page.suffix == ".md" and anchor not in anchors(page):
                failures.append(f"{where}: {target}: no heading with anchor #{anchor}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, type=pathlib.Path)
    parser.add_argument("docs", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    repo = args.repo.resolve()
    failures = []
    for doc in args.docs:
        failures += check(doc.resolve(), repo)
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    print(f"{len(args.docs)} documents, {len(failures)} broken link(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
