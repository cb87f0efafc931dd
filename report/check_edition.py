#!/usr/bin/env python3
"""Every finding of the chapters that follow the seed edition has a row in report/current_edition.tsv, and every row
names a finding that exists; with a clone of the book's repository, each row's evidence holds in its history.

  check_edition.py TSV CHAPTER… [--book-git GIT_DIR] [--head REV]

Each CHAPTER is a chapter program (run here with --json) or a folder of chapter JSON (the report writes one to
<build>/report-test/json). A finding is chN:ID, ID being
an entry of the chapter's "findings"; chapters from 12 on follow the current edition and need no row. The rows are
read here with code of their own (not the report generator's), so the two cannot share a mistake.

With --book-git (a git directory of github.com/banerRana/scaling-book or jax-ml/scaling-book; the fetch of the
repository is not part of the test), for each row, in the chapter's Markdown file:
  still    md_now is in the file at --head (default: the revision the TSV names on its '# revision:' line,
           whose date is checked too);
  fixed, partly, changed
           the commit exists and is dated `date`; md_old is in the file before the commit and not after it, nor
           at --head; md_now is in the file at the commit (so the commit is the one that brought the current
           text, not an earlier partial fix) and at --head;
  never    no revision up to --head ever contained md_old (git log -S finds none); md_now is at --head.
Exits 1 naming every problem.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

COLUMNS = ["finding", "status", "commit", "date", "current", "note", "md_old", "md_now"]
STATUSES = {"still", "partly", "fixed", "changed", "never"}
WITH_COMMIT = {"partly", "fixed", "changed"}
CURRENT_EDITION_FROM = 12
MARKDOWN = {1: "roofline.md", 2: "tpus.md", 3: "sharding.md", 4: "transformers.md", 5: "training.md",
            6: "applied-training.md", 7: "inference.md", 8: "applied-inference.md", 9: "profiling.md",
            10: "jax-stuff.md"}


def read_rows(path, problems):
    """(rows, revision): the rows, and the revision they describe from '# revision: <commit> <date>'."""
    rows, header, revision = [], None, None
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.fullmatch(r"# revision: ([0-9a-f]{7,40}) (\d{4}-\d{2}-\d{2})\s*", line)
        if m:
            revision = (m.group(1), m.group(2))
            continue
        if line.startswith("#") or not line.strip():
            continue
        cells = line.rstrip("\n").split("\t")
        if header is None:
            header = cells
            if header != COLUMNS:
                problems.append(f"{path}:{number}: header {cells}, expected {COLUMNS}")
                return [], revision
            continue
        if len(cells) != len(COLUMNS):
            problems.append(f"{path}:{number}: {len(cells)} columns, expected {len(COLUMNS)}")
            continue
        row = dict(zip(COLUMNS, cells), line=number)
        for key in ("md_old", "md_now"):
            row[key] = row[key].replace("⏎", "\n")
        rows.append(row)
    if revision is None:
        problems.append(f"{path}: no '# revision: <commit> <YYYY-MM-DD>' line naming the revision the rows describe")
    return rows, revision


def chapter_of(key):
    m = re.fullmatch(r"ch(\d+):(\S+)", key)
    return int(m.group(1)) if m else None


def check_table(rows, findings, problems, where):
    seen = set()
    for r in rows:
        at, key = f"{where}:{r['line']}", r["finding"]
        if chapter_of(key) is None:
            problems.append(f"{at}: '{key}' is not chN:ID")
            continue
        if key in seen:
            problems.append(f"{at}: {key} has a second row")
        seen.add(key)
        if key not in findings:
            problems.append(f"{at}: {key} names no finding of the chapters' JSON")
        if r["status"] not in STATUSES:
            problems.append(f"{at}: status '{r['status']}' is not one of {sorted(STATUSES)}")
        wants = r["status"] in WITH_COMMIT
        if wants != bool(re.fullmatch(r"[0-9a-f]{7,40}", r["commit"])):
            problems.append(f"{at}: {key}: a '{r['status']}' row " + ("needs" if wants else "has no") + " commit")
        if wants != bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["date"])):
            problems.append(f"{at}: {key}: a '{r['status']}' row " + ("needs" if wants else "has no") + " date")
        if not r["current"].strip() or not r["md_now"]:
            problems.append(f"{at}: {key}: 'current' and 'md_now' say what the current edition prints")
        if (r["status"] == "still") == bool(r["md_old"]):
            problems.append(f"{at}: {key}: md_old is " + ("empty for a still row" if r["status"] == "still"
                                                          else "missing"))
    for key in sorted(findings - seen):
        problems.append(f"{where}: finding {key} has no row")


def git(git_dir, *args):
    proc = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout


def check_history(rows, git_dir, head, problems, where):
    cache = {}

    def text(rev, path):
        if (rev, path) not in cache:
            rc, out = git(git_dir, "show", f"{rev}:{path}")
            cache[(rev, path)] = out if rc == 0 else None
        return cache[(rev, path)]

    for r in rows:
        at, key = f"{where}:{r['line']}", r["finding"]
        path = MARKDOWN.get(chapter_of(key) or 0)
        if path is None:
            problems.append(f"{at}: {key}: no Markdown file known for its chapter")
            continue
        now = text(head, path)
        if now is None:
            problems.append(f"{at}: {path} is not at {head}")
            continue
        if r["md_now"] not in now:
            problems.append(f"{at}: {key}: md_now is not in {path} at {head}")
        if r["status"] in WITH_COMMIT:
            rc, date = git(git_dir, "log", "-1", "--format=%cs", r["commit"])
            if rc != 0:
                problems.append(f"{at}: {key}: commit {r['commit']} is not in {git_dir}")
                continue
            if date.strip() != r["date"]:
                problems.append(f"{at}: {key}: commit {r['commit'][:7]} is dated {date.strip()}, not {r['date']}")
            before, after = text(r["commit"] + "^", path), text(r["commit"], path)
            if before is None or r["md_old"] not in before:
                problems.append(f"{at}: {key}: md_old is not in {path} before {r['commit'][:7]}")
            if after is not None and r["md_old"] in after:
                problems.append(f"{at}: {key}: md_old is still in {path} after {r['commit'][:7]}")
            if after is None or r["md_now"] not in after:
                problems.append(f"{at}: {key}: md_now is not in {path} at {r['commit'][:7]}: the current text "
                                "came later, so that commit is not the fix")
            if r["md_old"] in now:
                problems.append(f"{at}: {key}: md_old is back in {path} at {head}")
        elif r["status"] == "never":
            _, hits = git(git_dir, "log", "--format=%h", "-S", r["md_old"], head, "--", path)
            if hits.strip():
                problems.append(f"{at}: {key}: md_old is in {path} at {' '.join(hits.split())}, so not 'never'")


def chapter_json(sources, problems):
    for source in sources:
        if os.path.isdir(source):
            for path in sorted(glob.glob(os.path.join(source, "*.json"))):
                yield json.load(open(path))
            continue
        proc = subprocess.run([source, "--json"], capture_output=True, text=True)
        try:
            yield json.loads(proc.stdout)
        except json.JSONDecodeError:
            problems.append(f"{source} --json printed no JSON (exit {proc.returncode})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tsv")
    parser.add_argument("chapters", nargs="+", help="chapter programs or folders of chapter JSON")
    parser.add_argument("--book-git", help="git directory of the book's repository")
    parser.add_argument("--head", help="the revision to check at (default: the TSV's '# revision:')")
    args = parser.parse_args()
    problems = []
    findings, chapters = set(), 0
    for ch in chapter_json(args.chapters, problems):
        if "chapter" not in ch or "findings" not in ch:
            continue
        chapters += 1
        if int(ch["chapter"]) < CURRENT_EDITION_FROM:
            findings |= {f"ch{ch['chapter']}:{f['id']}" for f in ch["findings"]}
    if chapters == 0:
        problems.append(f"no chapter JSON in {' '.join(args.chapters)}")
    rows, revision = read_rows(args.tsv, problems)
    check_table(rows, findings, problems, args.tsv)
    if args.book_git and (args.head or revision):
        head = args.head or revision[0]
        if revision and not args.head:
            rc, date = git(args.book_git, "log", "-1", "--format=%cs", head)
            if rc != 0 or date.strip() != revision[1]:
                problems.append(f"{args.tsv}: revision {head[:7]} is " + (f"dated {date.strip()}, not {revision[1]}"
                                                                         if rc == 0 else f"not in {args.book_git}"))
        check_history(rows, args.book_git, head, problems, args.tsv)
    for p in problems:
        print(f"check_edition: {p}", file=sys.stderr)
    counts = {s: sum(r["status"] == s for r in rows) for s in sorted(STATUSES)}
    print(f"check_edition: {len(rows)} rows for {len(findings)} findings of {chapters} chapters; "
          + ", ".join(f"{n} {s}" for s, n in counts.items())
          + ("; history checked" if args.book_git else "") + ("" if not problems else f"; {len(problems)} problem(s)"))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
