#!/usr/bin/env python3
"""Render the workbook report.

Runs every chapter program with --json (kept as OUT/json/<slug>.json), fills the placeholders of
solutions/<slug>.md from that JSON, draws the plots (matplotlib, SVG), adds the Errata and
Reader-notes sections built from the answer statuses, and renders one self-contained HTML file
with Pandoc (MathML, table of contents): OUT/index.html. A PDF is printed next to it when headless
Chromium is available (skip with --no-pdf).

Placeholders in solutions/*.md:
  {{ID.KEY}}            value with its unit, e.g. {{ex1.1.hw_intensity}} -> "486.4 FLOPs/byte"
  {{ID.KEY:num}}        the number alone (for use inside math)
  {{ID.KEY:book}}       the book's printed value with the unit
  {{table:ID.KEY}}      a table the exercise recorded
  {{plot:ID.KEY|opt…}}  a series as a plot; options: logx, logy, vlines=ID.KEY,…, hline=ID.KEY
  {{code:ID}}           the exercise's C++ source, from chapters/*.cpp
  {{bars:ID.KEY}}       stacked bars the exercise recorded (one bar per category)

It fails, naming the culprit, on an unresolved placeholder, on a registered answer that no solution
mentions, and on a chapter program that exits non-zero.
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


class ReportError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Numbers, the same way the C++ side prints them (lib/src/format.cpp).

def _trim(s):
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def _significant(v, digits):
    magnitude = math.floor(math.log10(abs(v)))
    decimals = max(0, digits - 1 - magnitude)
    return _trim(f"{v:.{decimals}f}")


def _scientific(v, digits):
    mantissa, exponent = f"{v:.{digits - 1}e}".split("e")
    return f"{_trim(mantissa)}e{int(exponent)}"


def fmt_number(v, digits=4):
    if v == 0:
        return "0"
    if v == round(v) and abs(v) < 1e15:
        return f"{int(round(v)):,}"
    if 1e-3 <= abs(v) < 1e6:
        return _significant(v, digits)
    return _scientific(v, digits)


def fmt_quantity(v, unit, digits=3):
    if v == 0 or not math.isfinite(v):
        return f"{fmt_number(v)} {unit}".strip()
    if unit == "s":
        for scale, name in ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
            if abs(v) >= scale:
                return f"{_significant(v / scale, digits)} {name}"
        return f"{_scientific(v, digits)} s"
    if unit in ("B", "B/s"):
        for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
            if abs(v) >= scale:
                return f"{_significant(v / scale, digits)} {prefix}{unit}"
        return f"{_significant(v, digits)} {unit}"
    if unit in ("FLOPs", "FLOPs/s"):
        return f"{_scientific(v, digits) if abs(v) >= 1e6 else fmt_number(v, digits)} {unit}"
    return f"{fmt_number(v, digits + 1)} {unit}".strip()


# ---------------------------------------------------------------------------------------------
# Chapter JSON

def run_chapters(programs, json_dir):
    os.makedirs(json_dir, exist_ok=True)
    chapters = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        runs = list(pool.map(lambda p: subprocess.run([p, "--json"], capture_output=True, text=True), programs))
    for program, proc in zip(programs, runs):
        if proc.returncode != 0:
            raise ReportError(f"{program} --json exited {proc.returncode}:\n{proc.stderr.strip()}")
        try:
            doc = json.loads(proc.stdout)
        except json.JSONDecodeError as e:
            raise ReportError(f"{program} --json printed invalid JSON: {e}")
        with open(os.path.join(json_dir, f"{doc['slug']}.json"), "w") as f:
            json.dump(doc, f, indent=1)
        chapters.append(doc)
    return sorted(chapters, key=lambda c: c["chapter"])


class Index:
    """Answers, tables and series by their stable names."""

    def __init__(self, chapters):
        self.answers, self.tables, self.series, self.exercises = {}, {}, {}, {}
        for ch in chapters:
            for ex in ch["exercises"]:
                self.exercises[ex["id"]] = ex
                for a in ex["answers"]:
                    self.answers[f"{ex['id']}.{a['key']}"] = a
                for t in ex["tables"]:
                    self.tables[f"{ex['id']}.{t['key']}"] = t
                for s in ex["series"]:
                    self.series[f"{ex['id']}.{s['key']}"] = s
                self.bars = getattr(self, "bars", {})
                for b in ex.get("bars", []):
                    self.bars[f"{ex['id']}.{b['key']}"] = b

    def answer(self, name):
        if name not in self.answers:
            raise ReportError(f"unknown answer '{name}'")
        return self.answers[name]


# ---------------------------------------------------------------------------------------------
# Placeholders

def markdown_table(columns, rows):
    def cell(text):
        return str(text).replace("|", "\\|")
    lines = ["| " + " | ".join(cell(c) for c in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def exercise_source(source_dir, exercise_id):
    """The EXERCISE(...) block of a chapter source, by brace matching."""
    chapters_dir = os.path.join(source_dir, "chapters")
    needle = f'EXERCISE("{exercise_id}"'
    sources = []
    for folder, _, files in os.walk(chapters_dir):
        sources += [os.path.join(folder, f) for f in files if f.endswith(".cpp")]
    for path in sorted(sources):
        text = open(path).read()
        start = text.find(needle)
        if start < 0:
            continue
        depth, i = 0, text.index("{", start)
        while True:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i + 1]
            i += 1
    raise ReportError(f"no EXERCISE(\"{exercise_id}\") in chapters/*.cpp")


def draw_plot(index, name, options, plot_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if name not in index.series:
        raise ReportError(f"unknown series '{name}'")
    series = index.series[name]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    styles = ["-", "--", "-.", ":"]  # lines that coincide (AllGather and ReduceScatter) stay visible
    for i, line in enumerate(series["lines"]):
        ax.plot(line["x"], line["y"], label=line["label"], linewidth=1.8, linestyle=styles[i % len(styles)])
    for opt in options:
        key, _, value = opt.partition("=")
        if key == "logx":
            ax.set_xscale("log")
        elif key == "logy":
            ax.set_yscale("log")
        elif key == "vlines":
            for i, ref in enumerate(value.split(",")):
                a = index.answer(ref)
                color = f"C{i}"
                ax.axvline(a["value"], color=color, linestyle="--", linewidth=1)
                ax.annotate(fmt_quantity(a["value"], a["unit"]), (a["value"], 0.04), xycoords=("data", "axes fraction"),
                            rotation=90, color=color, ha="right", va="bottom", fontsize=9)
        elif key == "hline":
            a = index.answer(value)
            ax.axhline(a["value"], color="gray", linestyle=":", linewidth=1)
            ax.annotate(f"peak {fmt_quantity(a['value'], a['unit'])}", (0.01, a["value"]),
                        xycoords=("axes fraction", "data"), va="bottom", color="gray", fontsize=9)
        else:
            raise ReportError(f"plot {name}: unknown option '{opt}'")
    ax.set_xlabel(series["x_label"])
    ax.set_ylabel(series["y_label"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = os.path.join(plot_dir, name.replace(".", "-") + ".svg")
    fig.savefig(path, format="svg")
    plt.close(fig)
    return path


def draw_bars(index, name, plot_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = getattr(index, "bars", {})
    if name not in bars:
        raise ReportError(f"unknown bars '{name}'")
    b = bars[name]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    bottom = [0.0] * len(b["categories"])
    for stack in b["stacks"]:
        ax.bar(b["categories"], stack["values"], bottom=bottom, label=stack["label"])
        bottom = [x + y for x, y in zip(bottom, stack["values"])]
    ax.set_xlabel(b["x_label"])
    ax.set_ylabel(b["y_label"])
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = os.path.join(plot_dir, name.replace(".", "-") + ".svg")
    fig.savefig(path, format="svg")
    plt.close(fig)
    return path


def fill(text, where, index, source_dir, plot_dir, mentioned):
    def replace(match):
        body = match.group(1)
        kind, sep, rest = body.partition(":")
        if sep and kind == "table":
            name = rest.replace(".tables.", ".")
            if name not in index.tables:
                raise ReportError(f"{where}: unknown table '{rest}'")
            t = index.tables[name]
            return "\n" + markdown_table(t["columns"], t["rows"]) + "\n"
        if sep and kind == "plot":
            name, *options = rest.split("|")
            path = draw_plot(index, name, options, plot_dir)
            return f"![{index.series[name]['y_label']} against {index.series[name]['x_label']}]({path})"
        if sep and kind == "bars":
            b = getattr(index, "bars", {}).get(rest)
            path = draw_bars(index, rest, plot_dir)
            return f"![{b['y_label']} by {b['x_label']}]({path})"
        if sep and kind == "code":
            exercise_source(source_dir, rest)  # fail now if the exercise is missing
            return f"@@CODE {rest}@@"  # spliced in after the placeholder check: C++ has its own braces
        name, _, form = body.partition(":")
        if name not in index.answers:
            raise ReportError(f"{where}: unresolved placeholder {{{{{body}}}}}")
        a = index.answers[name]
        mentioned.add(name)
        if form == "":
            return fmt_quantity(a["value"], a["unit"])
        if form == "num":
            return fmt_number(a["value"])
        if form == "book":
            if "book" not in a:
                raise ReportError(f"{where}: {name} has no book value")
            return fmt_quantity(a["book"]["value"], a["unit"])
        raise ReportError(f"{where}: unknown form ':{form}' in {{{{{body}}}}}")

    return PLACEHOLDER.sub(replace, text)


# ---------------------------------------------------------------------------------------------
# Generated sections

def status_line(a):
    if "book" not in a:
        return "no book value (independent check)"
    return a["book"]["status"]


def summary_table(chapter):
    rows = []
    for ex in chapter["exercises"]:
        for a in ex["answers"]:
            book = fmt_quantity(a["book"]["value"], a["unit"]) if "book" in a else "—"
            rows.append([f"`{ex['id']}.{a['key']}`", fmt_quantity(a["value"], a["unit"]), book, status_line(a)])
    return markdown_table(["answer", "ours", "book", "status"], rows)


def errata_section(chapters):
    rows = []
    for ch in chapters:
        for ex in ch["exercises"]:
            for a in ex["answers"]:
                if a.get("book", {}).get("status") == "erratum":
                    rows.append([f"`{ex['id']}.{a['key']}`", fmt_quantity(a["book"]["value"], a["unit"]),
                                 fmt_quantity(a["value"], a["unit"]), a["explanation"]])
    out = ["# Errata {#errata}", "",
           "Where our exact computation disagrees with the book by more than the precision the book printed "
           "with. Each correct value is confirmed by an independent check in `tests/`.", ""]
    out.append(markdown_table(["answer", "book", "ours", "why"], rows) if rows else "No errata found.")
    return "\n".join(out)


def notes_section(chapters):
    rows, agree, differ = [], 0, 0
    for ch in chapters:
        for ex in ch["exercises"]:
            for a in ex["answers"]:
                for n in a["notes"]:
                    agree += n["status"] == "agrees"
                    differ += n["status"] == "differs"
                    rows.append([f"`{ex['id']}.{a['key']}`", n["source"], fmt_quantity(n["value"], a["unit"]),
                                 fmt_quantity(a["value"], a["unit"]), n["status"], n.get("reason", "")])
    out = ["# Reader notes cross-check {#reader-notes}", "",
           f"Every number the reader notes give (seed 000: typed notes on chapters 1–4; seed 003: handwritten notes "
           f"on chapter 1) against ours: {agree} agree, {differ} differ, each difference with its reason.", ""]
    out.append(markdown_table(["answer", "notes", "their value", "ours", "status", "reason"], rows))
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------

def pandoc_self_contained_flag(pandoc):
    help_text = subprocess.run([pandoc, "--help"], capture_output=True, text=True).stdout
    return "--embed-resources" if "--embed-resources" in help_text else "--self-contained"


def render(args):
    started = time.monotonic()
    out_dir = os.path.abspath(args.out)
    json_dir, plot_dir = os.path.join(out_dir, "json"), os.path.join(out_dir, "plots")
    os.makedirs(plot_dir, exist_ok=True)
    chapters = run_chapters(args.programs, json_dir)
    index = Index(chapters)

    solutions = os.path.join(args.source, "solutions")
    mentioned = set()
    parts = [fill(open(os.path.join(solutions, "intro.md")).read(), "solutions/intro.md", index, args.source,
                  plot_dir, mentioned)]
    for ch in chapters:
        path = os.path.join(solutions, f"{ch['slug']}.md")
        if not os.path.exists(path):
            raise ReportError(f"chapter {ch['chapter']} has no solutions/{ch['slug']}.md")
        parts.append(fill(open(path).read(), f"solutions/{ch['slug']}.md", index, args.source, plot_dir, mentioned))
        # A chapter split into parts continues in solutions/chNN/*.md, in name order.
        part_dir = os.path.join(solutions, ch["slug"])
        if os.path.isdir(part_dir):
            for name in sorted(n for n in os.listdir(part_dir) if n.endswith(".md")):
                where = f"solutions/{ch['slug']}/{name}"
                parts.append(fill(open(os.path.join(part_dir, name)).read(), where, index, args.source, plot_dir,
                                  mentioned))
        parts.append(f"## Chapter {ch['chapter']} answers at a glance\n\n{summary_table(ch)}")
    unmentioned = sorted(set(index.answers) - mentioned)
    if unmentioned:
        raise ReportError("registered answers that no solution mentions: " + ", ".join(unmentioned))
    parts += [errata_section(chapters), notes_section(chapters)]
    document = "\n\n".join(parts) + "\n"
    leftover = PLACEHOLDER.search(document)
    if leftover:
        raise ReportError(f"unresolved placeholder {leftover.group(0)}")

    document = re.sub(r"@@CODE (\S+)@@", lambda m: "\n<details><summary>C++ source</summary>\n\n```cpp\n" +
                      exercise_source(args.source, m.group(1)) + "\n```\n\n</details>\n", document)

    markdown_path = os.path.join(out_dir, "report.md")
    with open(markdown_path, "w") as f:
        f.write(document)
    html_path = os.path.join(out_dir, "index.html")
    css = os.path.join(os.path.dirname(os.path.abspath(__file__)), "style.css")
    cmd = [args.pandoc, markdown_path, "--from", "markdown", "--to", "html5", "--standalone", "--toc",
           "--toc-depth", "2", "--columns", "10000", "--mathml", pandoc_self_contained_flag(args.pandoc), "--css", css,
           "--metadata", "title=How to Scale Your Model — the verified workbook",
           "--resource-path", out_dir, "-o", html_path]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ReportError(f"pandoc failed: {proc.stderr.strip()}")

    html = open(html_path).read()
    for needle, what in (("<math", "MathML"), ('id="errata"', "the Errata section"),
                         ('id="reader-notes"', "the Reader-notes section"), ("data:image/svg+xml", "an embedded plot")):
        if needle not in html:
            raise ReportError(f"{html_path} lacks {what}")

    pdf_note = ""
    if not args.no_pdf:
        pdf_note = print_pdf(html_path)
    elapsed = time.monotonic() - started
    print(f"report: {html_path} ({len(chapters)} chapter(s), {len(index.answers)} answers, {elapsed:.1f} s){pdf_note}")


def print_pdf(html_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return "; no PDF (install chromium for one)"
    pdf_path = os.path.splitext(html_path)[0] + ".pdf"
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--no-pdf-header-footer", f"--print-to-pdf={pdf_path}",
               "file://" + html_path]
        try:
            subprocess.run(cmd, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            return "; PDF timed out"
    return f"; PDF {pdf_path}" if os.path.exists(pdf_path) else "; PDF failed"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="the repository root (solutions/, chapters/)")
    parser.add_argument("--out", required=True, help="output folder; the page is OUT/index.html")
    parser.add_argument("--pandoc", default="pandoc")
    parser.add_argument("--no-pdf", action="store_true", help="skip printing the PDF")
    parser.add_argument("programs", nargs="+", help="chapter programs, run with --json")
    args = parser.parse_args()
    try:
        render(args)
    except (ReportError, OSError) as e:
        print(f"report: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
