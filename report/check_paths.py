#!/usr/bin/env python3
"""Every repository path that the README, the write-ups (solutions/) and the report's own sources name exists.

  check_paths.py REPO_ROOT [RENDERED.md …]

A path is a word that starts at one of the repository's top folders (lib/, chapters/, tests/, cli/, report/,
scripts/, solutions/, bench/, fuzz/), as in `lib/src/cost/collectives.cpp`; one that follows a '/' or '.' is
part of another path or a URL and is skipped (build/chapters/ch01_rooflines, …/scaling-book/training). A
placeholder stands for any name: `<layer>`, `*`, and `NN` for two digits (tests/independent_chNN.cpp); such a
path must match at least one file. Extra arguments (the rendered report.md) are searched the same way, outside
its code listings, so the paths the chapters' JSON puts in the page's prose are checked too. Exits 1 naming each missing path with file:line.
"""
import glob
import os
import re
import sys

ROOTS = ("lib", "chapters", "tests", "cli", "report", "scripts", "solutions", "bench", "fuzz")
PATH = re.compile(r"(?<![\w./<>*-])((?:" + "|".join(ROOTS) + r")/[\w./<>*+-]*[\w*>/])")


def sources(root):
    yield os.path.join(root, "README.md")
    yield from sorted(glob.glob(os.path.join(root, "solutions", "**", "*.md"), recursive=True))
    for name in sorted(os.listdir(os.path.join(root, "report"))):
        if name.endswith((".py", ".tsv", ".css", ".txt")):
            yield os.path.join(root, "report", name)


def exists(root, path):
    pattern = re.sub(r"<[^<>/]*>", "*", path).replace("NN", "[0-9][0-9]")
    if pattern != path or "*" in path:
        return bool(glob.glob(os.path.join(root, pattern)))
    return os.path.exists(os.path.join(root, path))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    files = list(sources(root)) + [p for p in sys.argv[2:] if os.path.exists(p)]
    missing, seen = [], 0
    rendered = set(files[len(files) - len([p for p in sys.argv[2:] if os.path.exists(p)]):])
    for path in files:
        with open(path, encoding="utf-8") as f:
            fence = False
            for number, line in enumerate(f, 1):
                # In the rendered page, code listings are chapters/*.cpp verbatim: their own sources, not prose.
                if path in rendered and line.startswith("```"):
                    fence = not fence
                if fence:
                    continue
                for m in PATH.finditer(line):
                    named = m.group(1).rstrip(".")
                    seen += 1
                    if not exists(root, named):
                        missing.append(f"{os.path.relpath(path, root)}:{number}: {named} does not exist")
    for m in missing:
        print(f"paths: {m}", file=sys.stderr)
    print(f"paths: {seen} mentions of repository paths in {len(files)} files, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
