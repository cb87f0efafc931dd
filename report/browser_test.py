#!/usr/bin/env python3
"""Loads the rendered report in headless Chromium and fails on what a reader would trip over.

  browser_test.py REPORT_DIR

Checks, each failure named: an exercise or answer of the chapter JSON without its anchor (#ID,
#ID.KEY); a console error or failed resource; a link to an anchor that does not exist;
an image that did not load; a placeholder ({{…}} or @@CODE) left in the text; TeX left raw in the text
outside code and math (a $ that is not a price, \cdot, \times, ^{, _{: Pandoc did not read it as math); typed
notation in prose (2^34, T_math: a superscript or subscript written as ^ or _ outside code and math); a
heading that shows a catalog ID, or an exercise exN.M whose name "Exercise N.M" is not on the page; horizontal overflow at
390 px (a phone); a figure drawn below 0.7 of its size at 390 px (labels too small to read) or wider than its column at 1280 or 390 px; a link into the book without its section anchor (a bare "§N" aside); a text written twice in the Errata or a
value row there that restates its finding's explanation; an answer card or table wider than its column at 1280 or 390 px (folds open); a code listing that would not print (folded blocks closed on paper); the
generator's PDF (REPORT_DIR/index.pdf) missing, or without pages or an outline; in the appendices "The model
against reality" and "Serving models against published runs", a hyphen for a minus sign or "->" for an arrow, a run
id or Terms name in its prose, a linked source not listed under Sources, a table of one row per run not folded, or a
table column whose numbers carry different decimals ("10.6", "9", "8.50");
at 390 px, a name in inline code (a path, an identifier) broken inside a part rather than after "/", "_", "::", a
hyphen or at a camel-case hump. Saves screenshots of the first page, of one exercise and of the phone layout
in REPORT_DIR/browser/ for a person to look at.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402


def book_names():
    """report/book_names.tsv: catalog ID -> the book's name for it (the generator reads the same file)."""
    names = {}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "book_names.tsv")) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if not line.startswith("#") and len(fields) == 3 and fields[0] != "id":
                names[fields[0]] = fields[1]
    return names

CHECK_PAGE = r"""(() => {
  const problems = [];
  const ids = new Set();
  for (const el of document.querySelectorAll('[id]')) {
    if (ids.has(el.id)) problems.push('duplicate id #' + el.id);
    ids.add(el.id);
  }
  for (const a of document.querySelectorAll('a[href^="#"]')) {
    const target = decodeURIComponent(a.getAttribute('href').slice(1));
    if (target && !document.getElementById(target)) problems.push('broken anchor ' + a.getAttribute('href'));
  }
  for (const img of document.images) {
    if (!img.complete || img.naturalWidth === 0) problems.push('image not loaded: ' + (img.alt || img.src.slice(0, 60)));
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest('pre, code, script')) continue;
    const m = n.textContent.match(/\{\{[^}]*\}\}|@@CODE[^@]*@@/);
    if (m) problems.push('unresolved placeholder ' + m[0]);
  }
  // TeX that Pandoc did not read as math prints raw: a dollar that is not a price ($1.20), \cdot, \times, ^{, _{.
  const tex = /\$(?!\d+(?:[.,]\d+)*(?![\d^_{\\A-Za-z]))|\\cdot|\\times|\^\{|_\{/;
  const texWalker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let rawTex = 0;
  for (let n = texWalker.nextNode(); n; n = texWalker.nextNode()) {
    if (n.parentElement.closest('pre, code, script, style, math')) continue;
    const m = n.textContent.match(tex);
    if (m && ++rawTex <= 20) {
      const at = n.textContent.indexOf(m[0]);
      const where = n.parentElement.closest('[id]');
      problems.push('raw TeX "' + n.textContent.slice(Math.max(0, at - 40), at + 40).replace(/\s+/g, ' ') + '"' +
                    (where ? ' near #' + where.id : ''));
    }
  }
  if (rawTex > 20) problems.push((rawTex - 20) + ' more text nodes with raw TeX');
  // Typed notation in prose outside code and math: 2^34 for 2³⁴, T_math or M_X for a subscript. Prose math goes in
  // $…$; the chapters' texts are set by generate.py's notation_html (superscripts, subscripts, code names).
  const typed = /[A-Za-z0-9)\]]\^[\w{(-]|[A-Za-z0-9]_[A-Za-z0-9{]/;
  const typedWalker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let typedCount = 0;
  for (let n = typedWalker.nextNode(); n; n = typedWalker.nextNode()) {
    if (n.parentElement.closest('pre, code, script, style, math, a.key, svg')) continue;
    const m = n.textContent.match(typed);
    if (m && ++typedCount <= 20) {
      const at = n.textContent.indexOf(m[0]);
      const where = n.parentElement.closest('[id]');
      problems.push('typed notation "' + n.textContent.slice(Math.max(0, at - 30), at + 30).replace(/\s+/g, ' ') +
                    '" in prose (put math in $…$, code in backticks)' + (where ? ' near #' + where.id : ''));
    }
  }
  if (typedCount > 20) problems.push((typedCount - 20) + ' more text nodes with typed notation');
  // A link to "§5.1.4" of the book lands on that section (report/book_sections.tsv), not the chapter's top.
  // Every link into the book's pages carries a section anchor, except a bare chapter reference ("§5") and the
  // book's home page.
  let anchorless = 0;
  for (const a of document.querySelectorAll('a[href^="https://jax-ml.github.io/scaling-book/"]')) {
    const href = a.getAttribute('href'), text = a.textContent.trim();
    if (href.includes('#') || href === 'https://jax-ml.github.io/scaling-book/' || /^§\s*\d+$/.test(text)) continue;
    if (++anchorless <= 10)
      problems.push('book link "' + text + '" goes to the chapter, not the section: ' + href);
  }
  if (anchorless > 10) problems.push((anchorless - 10) + ' more book links without a section anchor');
  // Every figure says what it shows, each in its own words.
  const captions = new Map();
  for (const c of document.querySelectorAll('figcaption')) {
    const text = c.textContent.replace(/^Figure \d+:\s*/, '').trim();
    if (captions.has(text)) problems.push('two figures share the caption "' + text.slice(0, 80) + '"');
    captions.set(text, true);
    if (text.split(/\s+/).length < 6) problems.push('a caption that does not say what its figure shows: "' + text + '"');
  }
  // Headings name items as the book does ("Exercise 5.3", "Question 2 of §8"); the catalog ID is the anchor only.
  for (const h of document.querySelectorAll('h1, h2, h3, h4')) {
    const text = h.textContent.trim();
    if (/^(ex\d+\.\d+|ch\d+\.[A-Za-z0-9_-]+|cs336\.[a-z]+)\b/.test(text))
      problems.push('heading shows a catalog ID instead of a name: "' + text.slice(0, 60) + '"');
    const m = h.id.match(/^ex(\d+)\.(\d+)$/);
    const want = m && ((window.BOOK_NAMES || {})[h.id] || 'Exercise ' + m[1] + '.' + m[2]);
    if (m && !text.includes(want))
      problems.push('heading #' + h.id + ' does not say "' + want + '"');
  }
  // The Errata list each explanation once: no paragraph or row text written twice, and no value's row that
  // restates its finding's explanation (most of its six-word runs found in it).
  const errata = document.getElementById('errata');
  if (errata) {
    const runs = t => { const w = t.toLowerCase().match(/[\p{L}\p{N}]+/gu) || [], out = new Set();
                        for (let i = 0; i + 6 <= w.length; ++i) out.add(w.slice(i, i + 6).join(' ')); return out; };
    const seen = new Map();
    for (const finding of document.querySelectorAll('div.finding')) {
      const reason = finding.querySelector(':scope > p:not(.finding-title)');
      const said = runs(reason ? reason.textContent : '');
      for (const el of finding.querySelectorAll(':scope > p, td small, td')) {
        const text = el.textContent.replace(/\s+/g, ' ').trim();
        if (el.tagName === 'TD' && el.querySelector('small')) continue;
        if (text.length >= 80) {
          if (seen.has(text) && seen.get(text) !== el)
            problems.push('Errata repeat a text (' + text.length + ' chars) in #' + finding.id + ': "' + text.slice(0, 60) + '…"');
          seen.set(text, el);
        }
        if (el.closest('td')) {
          const own = runs(text);
          let shared = 0; own.forEach(r => { if (said.has(r)) ++shared; });
          if (own.size >= 10 && shared / own.size > 0.5)
            problems.push('an Errata row of #' + finding.id + ' restates its explanation: "' + text.slice(0, 60) + '…"');
        }
      }
    }
  }
  // Heading levels step down one at a time (no chapter H1 straight to H3): the contents and a screen reader rely on it.
  let level = 1;
  for (const h of document.querySelectorAll('h1, h2, h3, h4')) {
    if (h.closest('header, nav')) continue;
    const l = Number(h.tagName[1]);
    if (l > level + 1) problems.push('heading "' + h.textContent.trim().slice(0, 60) + '" jumps from H' + level + ' to H' + l);
    level = l;
  }
  const counts = {
    exercises: document.querySelectorAll('h2[id^="ex"], h3[id^="ex"]').length,
    code: document.querySelectorAll('details.code pre').length,
    cards: document.querySelectorAll('.card').length,
    figures: document.querySelectorAll('figure img').length,
  };
  if (!document.getElementById('status')) problems.push('no status table (#status)');
  if (!document.getElementById('errata')) problems.push('no errata section (#errata)');
  if (counts.code === 0) problems.push('no code listings');
  return {problems, counts};
})()"""

CHECK_OVERFLOW = r"""(() => {
  const width = document.documentElement.clientWidth;
  const over = [];
  if (document.documentElement.scrollWidth > width + 1) {
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.right > width + 1 && !el.closest('.scroll, pre, table, math[display="block"], nav#TOC, figure')) {
        over.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '') +
                  ' reaches ' + Math.round(r.right) + ' px');
        if (over.length >= 8) break;
      }
    }
    over.unshift('page is ' + document.documentElement.scrollWidth + ' px wide at ' + width + ' px');
  }
  return over;
})()"""

# Answer cards and tables fit their column: nothing in them needs sideways scrolling (a wide table becomes
# labelled rows; see fitTables in the page's script).
CHECK_FIT = r"""(() => {
  const out = [];
  for (const t of document.querySelectorAll('table')) {
    const box = t.parentElement.classList.contains('scroll') ? t.parentElement : t;
    const wide = Math.max(t.scrollWidth, box.scrollWidth, Math.round(t.getBoundingClientRect().width));
    if (wide > box.clientWidth + 1) {
      const where = t.closest('.card') || t.closest('[id]');
      out.push((t.closest('.card') ? 'answer card ' : 'table ') + (where ? '#' + where.id : '') + ' is ' + wide +
               ' px wide in a ' + box.clientWidth + ' px column');
    }
  }
  return out;
})()"""

# A figure's text stays legible: no image drawn below 0.7 of its natural size (generate.py's LEGIBLE_SCALE), where
# 13 pt tick labels are still ~12 px; and the figure fits its column whole, at that scale or above (generate.py
# draws every figure narrow enough: FIGURE_MAX_PX); a formula wider than its column scrolls with a visible cue.
CHECK_FIGURES = r"""(() => {
  const out = [];
  for (const img of document.querySelectorAll('figure img')) {
    if (!img.naturalWidth) continue;
    const scale = img.getBoundingClientRect().width / img.naturalWidth;
    if (scale < 0.7 - 0.01)
      out.push('figure #' + img.id + ' drawn at ' + scale.toFixed(2) + ' of its size (' + img.naturalWidth +
               ' px into ' + Math.round(img.getBoundingClientRect().width) + ' px): its labels are too small to read');
    // and fits its column whole: a figure that scrolls sideways hides part of itself (its legend, its last
    // points) from a reader who does not think to swipe it
    const fig = img.closest('figure');
    const drawn = Math.round(img.getBoundingClientRect().width);
    if (drawn > fig.clientWidth + 1 || fig.scrollWidth > fig.clientWidth + 1)
      out.push('figure #' + img.id + ' is ' + Math.max(drawn, fig.scrollWidth) + ' px wide in a ' + fig.clientWidth +
               ' px column');
  }
  // A formula wider than its column scrolls, with the edge shadows that say so (style.css).
  for (const m of document.querySelectorAll('math[display="block"]')) {
    if (m.scrollWidth <= m.clientWidth + 1) continue;
    const cs = getComputedStyle(m), where = m.closest('[id]');
    if (!/auto|scroll/.test(cs.overflowX) || !cs.backgroundImage.includes('gradient'))
      out.push('a formula ' + (where ? 'near #' + where.id + ' ' : '') + 'is ' + (m.scrollWidth - m.clientWidth) +
               ' px wider than its column with no scroll cue');
  }
  return out;
})()"""

# The appendix "The model against reality" (from #model-vs-reality to the next top-level section) reads as prose for a
# person: a minus sign, not a hyphen, before a negative number and an arrow, not "->", in every table and paragraph;
# no run id or Terms name (t_tp_s) in a paragraph or list item, where a reader needs words (tables keep the ids, as
# keys); every source the appendix links also listed under Sources (#sources).
CHECK_APPENDIX = r"""(() => {
  const out = [];
  const start = document.getElementById('model-vs-reality');
  if (!start) return ['no appendix #model-vs-reality'];
  const inside = [];
  for (let el = start.nextElementSibling; el && el.tagName !== 'H1'; el = el.nextElementSibling) inside.push(el);
  // The serving appendix, where the page has one, is held to the same rules.
  const serving = document.getElementById('serving-validation');
  for (let el = serving && serving.nextElementSibling; el && el.tagName !== 'H1'; el = el.nextElementSibling)
    inside.push(el);
  // A table of one row per run (its first column "run") is folded, as generate.py's runs_table folds them: 44 or
  // 153 runs in the open become pages of labelled cards on a phone.
  for (const el of inside)
    for (const t of el.matches('table') ? [el] : el.querySelectorAll('table')) {
      const first = t.querySelector('thead th');
      if (first && first.textContent.trim() === 'run' && t.querySelectorAll('tbody tr').length > 1 &&
          !t.closest('details'))
        out.push('a table of ' + t.querySelectorAll('tbody tr').length + ' runs not folded, after "' +
                 ((t.previousElementSibling || {}).textContent || '').trim().slice(0, 60) + '"');
    }
  // Every number of a table's column carries the same decimals for the same unit (the first number of each cell
  // that starts with one: "13.75 (−12.7 %)" is 13.75; a size such as "1.7B" is a name, not a measurement). A column headed
  // "published" or "(recorded)" prints its numbers as their source or file did, and is left alone.
  for (const el of inside)
    for (const t of el.matches('table') ? [el] : el.querySelectorAll('table')) {
      const heads = [...t.querySelectorAll('thead th')].map(th => th.textContent.trim());
      const digits = heads.map(() => new Map());
      for (const tr of t.querySelectorAll('tbody tr'))
        [...tr.children].forEach((td, i) => {
          const m = td.textContent.trim().match(/^[−+]?\d[\d,]*(?:\.(\d+))?(?![\w.])[\s\u00a0]*(%|×|[A-Za-zµ\/]*)/);
          if (m && i < heads.length) digits[i].set(m[2] + ':' + (m[1] || '').length, m[0]);
        });
      digits.forEach((seen, i) => {  // keyed by unit and decimals: a column of seconds may end in an error in %
        const units = new Set([...seen.keys()].map(k => k.split(':')[0]));
        if (seen.size > units.size && !/published|\(recorded\)/.test(heads[i]))
          out.push('column "' + heads[i].slice(0, 40) + '" of ' + (t.closest('details') ?
                   '"' + t.closest('details').querySelector('summary').textContent.trim().slice(0, 50) + '"' :
                   'a table after "' + ((t.previousElementSibling || {}).textContent || '').trim().slice(0, 40) + '"') +
                   ' mixes decimals: ' + [...seen.values()].join(', '));
      });
    }
  const runId = /\b(?:narayanan2021|korthikanti2022|maxtext-v5[ep]|foundry-(?:a100|h100)|llama3-\d|torchtitan-llama3)-[\w.-]+/;
  const terms = /^t_\w+_s$/;
  const links = new Set();
  for (const el of inside) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest('pre, code, script, style, math, svg')) continue;
      const m = n.textContent.match(/(?:^|[\s(\[;:,])-\d|->/);
      if (m && out.length < 20) out.push('hyphen for a minus or "->" for an arrow: "' +
                                         n.textContent.slice(Math.max(0, m.index - 30), m.index + 30).trim() + '"');
    }
    for (const p of el.matches('p, li, figcaption') ? [el] : el.querySelectorAll('p, li, figcaption')) {
      if (p.closest('table')) continue;
      const text = [...p.childNodes].map(c => c.nodeType === 3 ? c.textContent :
                                         (c.tagName === 'A' ? '' : c.textContent)).join('');
      const id = text.match(runId);
      if (id) out.push('a run id in prose, where its name belongs: ' + id[0]);
      for (const c of p.querySelectorAll('code')) if (terms.test(c.textContent.trim()))
        out.push('a Terms name in prose, where words belong: ' + c.textContent.trim());
    }
    for (const a of el.querySelectorAll('a[href^="http"]')) links.add(a.getAttribute('href').split('#')[0]);
  }
  const sources = document.getElementById('sources');
  const listed = new Set();
  for (let el = sources && sources.nextElementSibling; el && !/^H[12]$/.test(el.tagName); el = el.nextElementSibling)
    for (const a of el.querySelectorAll('a[href^="http"]')) listed.add(a.getAttribute('href').split('#')[0]);
  // A run's own link goes to its source's table; the Sources list names each source by that same address.
  for (const href of links) if (!listed.has(href)) out.push('linked in the appendix, not listed under Sources: ' + href);
  return out;
})()"""

# A name in inline code (a path, an identifier, a run id: no spaces or brackets) wraps only after "/", "_", "::" or
# a hyphen, or at a camel-case hump of a long name (LinearWith|Grad…), where generate.py's break_code_names put a
# <wbr>; in the middle of a part only where that part alone is wider than its line (style.css: break-word).
CHECK_CODE_BREAKS = r"""(() => {
  const out = [];
  for (const c of document.querySelectorAll('code')) {
    if (c.closest('pre') || c.getClientRects().length < 2) continue;
    const text = c.textContent;
    if (!/^[\w.\/:<>-]+$/.test(text)) continue;
    // the widest its line could be: in a table, the column the table sits in (a cell is as narrow as the layout
    // squeezed it, which is what is checked)
    const table = c.closest('table');
    const line = table ? table.parentElement.clientWidth : (c.closest('li, p, div, dd') || c.parentElement).clientWidth;
    // a camel-case hump (Linear|With, HBM|Bandwidth): generate.py's break_code_names breaks a long name there
    const hump = i => i > 0 && i < text.length && (/[a-z]/.test(text[i - 1]) && /[A-Z]/.test(text[i]) ||
                      /[A-Z]/.test(text[i - 1]) && /[A-Z]/.test(text[i]) && /[a-z]/.test(text[i + 1] || ''));
    let top = null, at = 0;
    const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode())
      for (let i = 0; i < n.length; ++i, ++at) {
        const range = document.createRange(); range.setStart(n, i); range.setEnd(n, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        if (top !== null && rect.top > top + 2 && !/[\/_:-]/.test(text[at - 1]) && !hump(at)) {
          // the part it breaks: from the separator or hump before to the one after, measured on one line
          let from = Math.max(...['/', '_', ':', '-'].map(s => text.lastIndexOf(s, at - 1))) + 1;
          for (let k = at - 1; k > from; --k) if (hump(k)) { from = k; break; }
          let to = at;
          while (to < text.length && !/[\/_:-]/.test(text[to]) && !(to > at && hump(to))) ++to;
          const part = text.slice(from, to < text.length && /[\/_:-]/.test(text[to]) ? to + 1 : to);
          const probe = document.createElement('code');
          probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
          probe.textContent = part; c.parentElement.appendChild(probe);
          const wide = probe.getBoundingClientRect().width; probe.remove();
          if (wide <= line && out.length < 20)
            out.push('code "' + text.slice(0, 60) + '" breaks inside a name: "' + text.slice(Math.max(0, at - 12), at) +
                     '|' + text.slice(at, at + 12) + '"');
        }
        top = rect.top;
      }
  }
  return out;
})()"""

OPEN_ALL = ("document.querySelectorAll('details').forEach(d => d.open = true); "
            "new Promise(r => setTimeout(r, 400))")

CHECK_PRINT = r"""(() => {
  const hidden = [...document.querySelectorAll('details pre')].filter(p => p.getClientRects().length === 0);
  return {listings: document.querySelectorAll('details pre').length, hidden: hidden.length};
})()"""


def element_clip(browser, selector):
    box = browser.evaluate(f"""(() => {{ const el = document.querySelector({selector!r});
        if (!el) return null; el.scrollIntoView();
        const r = el.getBoundingClientRect();
        return {{x: 0, y: r.top + window.scrollY - 10, width: document.documentElement.clientWidth, height: 1100}}; }})()""")
    return box


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    report_dir = os.path.abspath(sys.argv[1])
    html_path = os.path.join(report_dir, "index.html")
    shots = os.path.join(report_dir, "browser")
    os.makedirs(shots, exist_ok=True)
    if not os.path.exists(html_path):
        print(f"browser test: {html_path} does not exist (render the report first)", file=sys.stderr)
        return 1
    if not cdp.find_chromium():
        print("browser test: no chromium on PATH; scripts/setup-deps.sh installs Debian's chromium", file=sys.stderr)
        return 1
    # Every exercise and every recorded value must have its stable anchor: #ID and #ID.KEY.
    anchors = []
    json_dir = os.path.join(report_dir, "json")
    for name in sorted(os.listdir(json_dir)) if os.path.isdir(json_dir) else []:
        with open(os.path.join(json_dir, name)) as f:
            chapter = json.load(f)
        for ex in chapter["exercises"]:
            anchors.append(ex["id"])
            anchors += [f"{ex['id']}.{item['key']}" for kind in ("answers", "formulas", "claims")
                        for item in ex.get(kind, [])]
    failures = []
    url = "file://" + html_path
    with cdp.Browser() as browser:
        browser.open(url, width=1280, height=900)
        # The names book_names.tsv gives exN.M items ("Question 1 of Quiz 1"), for the heading check.
        browser.evaluate(f"window.BOOK_NAMES = {json.dumps(book_names())}; true")
        result = browser.evaluate(CHECK_PAGE)
        failures += result["problems"]
        missing = browser.evaluate(f"{json.dumps(anchors)}.filter(id => !document.getElementById(id))")
        failures += [f"no anchor #{m}" for m in missing]
        # A reader who searches the page for "Exercise 5.3" (or the name book_names.tsv gives an exN.M, such as
        # chapter 12's "Question 1 of Quiz 1") finds it.
        names = book_names()
        named = [names.get(a, f"Exercise {m.group(1)}.{m.group(2)}") for a in anchors
                 for m in [re.fullmatch(r"ex(\d+)\.(\d+)", a)] if m]
        unnamed = browser.evaluate(f"{json.dumps(named)}.filter(n => !document.body.textContent.includes(n))")
        failures += [f"no text \"{n}\" on the page" for n in unnamed]
        if not anchors:
            failures.append(f"no chapter JSON in {json_dir}")
        browser.screenshot(os.path.join(shots, "first-page.png"))
        browser.evaluate(OPEN_ALL)
        failures += [f"appendix: {o}" for o in browser.evaluate(CHECK_APPENDIX)]
        failures += [f"at 1280 px, folds open: {o}" for o in browser.evaluate(CHECK_FIT)]
        failures += [f"at 1280 px, folds open: {o}" for o in browser.evaluate(CHECK_FIGURES)]
        browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = false); window.scrollTo(0, 0); true")
        exercise = browser.evaluate("(document.getElementById('ex1.1') || document.querySelector('h2[id^=ex], "
                                    "h3[id^=ex]') || {}).id || ''")
        if exercise:
            browser.evaluate(f"location.hash = {('#' + exercise)!r}; true")
            browser.evaluate("new Promise(r => setTimeout(r, 100))")
            clip = element_clip(browser, f"[id='{exercise}']")
            browser.screenshot(os.path.join(shots, "exercise.png"), clip=clip)

        # A phone: 390 px wide, the mobile viewport honoured.
        browser.open(url, width=390, height=844, mobile=True)
        failures += [f"at 390 px: {o}" for o in browser.evaluate(CHECK_OVERFLOW)]
        failures += [f"at 390 px: {o}" for o in browser.evaluate(CHECK_FIGURES)]
        browser.screenshot(os.path.join(shots, "phone.png"))
        browser.evaluate(OPEN_ALL)
        failures += [f"at 390 px, folds open: {o}" for o in browser.evaluate(CHECK_OVERFLOW)]
        failures += [f"at 390 px, folds open: {o}" for o in browser.evaluate(CHECK_FIT)]
        failures += [f"at 390 px, folds open: {o}" for o in browser.evaluate(CHECK_FIGURES)]
        failures += [f"at 390 px, folds open: {o}" for o in browser.evaluate(CHECK_CODE_BREAKS)]
        clip = element_clip(browser, ".card")
        if clip:
            browser.screenshot(os.path.join(shots, "phone-card.png"), clip=dict(clip, height=844))

        # Paper: Ctrl+P with the page as it is (CSS alone must print the folded code), then the PDF.
        browser.open(url, width=1000, height=900)
        browser.call("Emulation.setEmulatedMedia", {"media": "print"})
        printed = browser.evaluate(CHECK_PRINT)
        if printed["listings"] == 0 or printed["hidden"]:
            failures.append(f"print: {printed['hidden']} of {printed['listings']} code listings would not print")
        failures += [f"console: {e}" for e in browser.console_errors()]
    # The PDF the generator printed next to the page (generate.py, through the same driver).
    pdf_path = os.path.join(report_dir, "index.pdf")
    if not os.path.exists(pdf_path):
        failures.append(f"no PDF at {pdf_path}")
    pdf = open(pdf_path, "rb").read() if os.path.exists(pdf_path) else b""
    pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
    if not pdf.startswith(b"%PDF") or pages < 2:
        failures.append(f"PDF: {pages} page(s)")
    if b"/Outlines" not in pdf:
        failures.append("PDF: no outline")
    for failure in failures:
        print(f"browser test: FAIL {failure}", file=sys.stderr)
    print(f"browser test: {result['counts']}, PDF {pages} pages; screenshots in {shots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
