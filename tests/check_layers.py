#!/usr/bin/env python3
"""Checks that src/greensched/<folder> only uses folders on lower layers.

The layers come from src/greensched/LAYERS (one line per layer, bottom first; folders on one
line are peers). Every `#include "greensched/<folder>/..."` in src/greensched must name a
folder on a lower line than the including file's folder: an include of a higher folder goes
upward, one of a peer goes sideways; both fail, as does a folder missing from LAYERS or an
include of a file that does not exist.

With --graphviz DOT (the output of `cmake --graphviz=DOT <build dir>`), the links between the
greensched_<folder> libraries are checked the same way, and must be exactly the include edges:
a folder links each folder it includes (no reliance on links through a third) and nothing else.

  python3 tests/check_layers.py [--src SRC] [--layers FILE] [--graphviz DOT]
"""

import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]greensched/([A-Za-z0-9_]+)/([^">]+)[">]')
SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".inc", ".in"}


def read_layers(path):
    layer_of = {}
    for number, line in enumerate(path.read_text().splitlines()):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        for folder in line.split():
            if folder in layer_of:
                sys.exit(f"{path}: {folder} is listed twice")
            layer_of[folder] = number
    return layer_of


def edge_error(source, target, layer_of):
    """Why `source` may not use `target`, or None when it may."""
    if source not in layer_of:
        return f"{source} is not in LAYERS"
    if target not in layer_of:
        return f"{target} is not in LAYERS"
    if layer_of[target] > layer_of[source]:
        return f"{source} -> {target} goes upward"
    if layer_of[target] == layer_of[source]:
        return f"{source} -> {target} goes sideways (peers on one layer)"
    return None


def check_includes(root, layer_of):
    errors, edges = [], set()
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    for folder in folders:
        if folder not in layer_of:
            errors.append(f"{root / folder}: folder not in LAYERS")
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        folder = path.relative_to(root).parts[0]
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target, rest = match.groups()
            where = f"{path}:{number}"
            if not (root / target / rest).is_file():
                errors.append(f"{where}: greensched/{target}/{rest} does not exist")
            if target == folder:
                continue
            edges.add((folder, target))
            why = edge_error(folder, target, layer_of)
            if why:
                errors.append(f"{where}: {why}")
    return errors, edges


def check_graphviz(dot, layer_of):
    label_of, errors, links = {}, [], set()
    text = dot.read_text()
    for node, label in re.findall(r'"(node\d+)"\s*\[\s*label\s*=\s*"([^"]+)"', text):
        label_of[node] = label
    for source, target in re.findall(r'"(node\d+)"\s*->\s*"(node\d+)"', text):
        a, b = label_of.get(source, ""), label_of.get(target, "")
        if not (a.startswith("greensched_") and b.startswith("greensched_")):
            continue
        a, b = a[len("greensched_") :], b[len("greensched_") :]
        if a not in layer_of or b not in layer_of:
            continue  # apps, tests and greensched_lib may link any folder
        links.add((a, b))
        why = edge_error(a, b, layer_of)
        if why:
            errors.append(f"{dot}: link {why}")
    if not links:
        errors.append(f"{dot}: no links between greensched_<folder> libraries found")
    return errors, links


def main():
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=pathlib.Path, default=here.parent / "src")
    parser.add_argument("--layers", type=pathlib.Path)
    parser.add_argument("--graphviz", type=pathlib.Path)
    args = parser.parse_args()
    root = args.src / "greensched"
    layer_of = read_layers(args.layers or root / "LAYERS")

    errors, edges = check_includes(root, layer_of)
    print(f"{len(edges)} include edges between {len(layer_of)} folders")
    if args.graphviz:
        link_errors, links = check_graphviz(args.graphviz, layer_of)
        errors += link_errors
        for a, b in sorted(edges - links):
            errors.append(f"{args.graphviz}: {a} includes {b} but does not link greensched_{b}")
        for a, b in sorted(links - edges):
            errors.append(f"{args.graphviz}: {a} links greensched_{b} but includes none of it")
        print(f"{len(links)} library links in {args.graphviz}")
    for error in errors:
        print(error)
    if errors:
        print(f"{len(errors)} layering errors (layers: {args.layers or root / 'LAYERS'})")
        return 1
    print(
        "every include edge goes downward" + (", and so does every link" if args.graphviz else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
