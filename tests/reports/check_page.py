#!/usr/bin/env python3
"""Check a page rtlctl wrote (report --html, report --diff --html, compare
--html) from the DOM headless Chromium dumped after the page drew itself,
against the JSON it was made from: what docs/report.md says the page shows,
with the run's numbers. Prints "ok", or the first failed check and exits 1.

Usage: check_page.py report DOM REPORT.json
       check_page.py sorted DOM TABLE-ID COLUMN-INDEX asc|desc
       check_page.py diff DOM DIFF.json
       check_page.py compare DOM COMPARE-DIR
       check_page.py text DOM STRING   (STRING shown as text in a table cell)"""
import glob
import json
import os
import sys
from html.parser import HTMLParser


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def all(self):
        yield self
        for c in self.children:
            yield from c.all()

    def find(self, tag=None, cls=None, **attrs):
        for n in self.all():
            if tag and n.tag != tag:
                continue
            if cls and cls not in n.attrs.get("class", "").split():
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            yield n

    def one(self, **kw):
        found = list(self.find(**kw))
        assert len(found) == 1, f"want one element {kw}, have {len(found)}"
        return found[0]

    def content(self):
        return "".join(t if isinstance(t, str) else t.content() for t in self.text)


VOID = {"meta", "link", "br", "hr", "img", "input"}


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        self.cur.text.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def dom(path):
    t = Tree()
    t.feed(open(path, encoding="utf-8").read())
    return t.root


def rows(d, table_id):
    t = d.one(tag="table", id=table_id)
    body = next(t.find(tag="tbody"))
    return [[td.content() for td in tr.find(tag="td")] for tr in body.find(tag="tr")]


def values(d, table_id, col):
    """The numbers a column sorts by (each cell's data-value)."""
    t = d.one(tag="table", id=table_id)
    body = next(t.find(tag="tbody"))
    return [float(list(tr.find(tag="td"))[col].attrs["data-value"]) for tr in body.find(tag="tr")]


def number(s):
    return int(s.replace(",", ""))


def rendered(d):
    body = d.one(tag="body")
    assert body.attrs.get("data-rendered") == "ok", body.attrs.get("data-rendered")


def check_timeline(d, r, id):
    """The timeline of report r drawn in element id: a line per rule and
    kind, each summing to the report's series; its total the rules'."""
    tl = r["timeline"]
    div = d.one(id=id)
    rules = r["rules"]
    assert number(div.attrs["data-traps"]) == sum(x["read_traps"] + x["write_traps"] for x in rules), \
        (div.attrs["data-traps"], rules)
    assert number(div.attrs["data-intervals"]) == tl["intervals"]
    series = list(div.find(tag="path", cls="series"))
    assert len(series) == 3 * len(rules), (len(series), len(rules))
    for e in tl["rules"]:
        for kind in ("traps", "grants", "live"):
            [p] = [s for s in series if s.attrs["data-rule"] == e["rule"] and s.attrs["data-kind"] == kind]
            assert number(p.attrs["data-sum"]) == sum(e[kind]), (e["rule"], kind)
            assert p.attrs["d"].startswith("M"), p.attrs["d"][:20]


def check_figures(d, r, prefix=""):
    t = r["totals"]
    for key, field in (("total-traps", "traps"), ("total-grants", "grants"),
                       ("total-trap-time", "trap_ns"), ("total-regions", "selected")):
        el = d.one(id=prefix + key)
        assert number(el.attrs["data-value"]) == t[field], (key, el.attrs["data-value"], t[field])
    shown = d.one(id=prefix + "total-traps").content()
    assert number(shown) == t["traps"], (shown, t["traps"])


def report(d, path):
    r = json.load(open(path))
    rendered(d)
    check_figures(d, r)
    check_timeline(d, r, "timeline")
    # The flame graph: every trapping stack, weighted by its traps.
    flame = d.one(id="flame")
    want = sum(b["count"] for b in r["backtraces"])
    assert want > 0, "no backtraces in the report"
    assert number(flame.attrs["data-traps"]) == want, (flame.attrs["data-traps"], want)
    boxes = list(flame.find(tag="g", cls="box"))
    assert len(boxes) > 2, len(boxes)
    assert number(boxes[0].attrs["data-value"]) == want, boxes[0].attrs
    names = {b.attrs["data-name"] for b in boxes}
    assert r["run"]["program"] in names, names
    # The tables: a row per rule and per site, with their numbers; sites
    # by traps, most first.
    got = rows(d, "rules-table")
    assert [x[0] for x in got] == [x["name"] for x in r["rules"]], got
    for row, x in zip(got, r["rules"]):
        assert (number(row[2]), number(row[4]), number(row[5])) == \
            (x["selected"], x["read_traps"], x["write_traps"]), (row, x)
    got = rows(d, "sites-table")
    assert len(got) == len(r["sites"]), (len(got), len(r["sites"]))
    traps = [number(x[5]) for x in got]
    assert traps == sorted(traps, reverse=True), traps
    assert sum(traps) == sum(s["read_traps"] + s["write_traps"] for s in r["sites"])
    assert {x[0] for x in got} == {s["demangled"] for s in r["sites"]}


def sorted_table(d, table_id, col, order):
    rendered(d)
    v = values(d, table_id, int(col))
    assert len(v) > 1, v
    assert v == sorted(v, reverse=order == "desc"), v
    th = list(d.one(tag="table", id=table_id).find(tag="th"))[int(col)]
    assert order in th.attrs.get("class", ""), th.attrs


def diff(d, path):
    df = json.load(open(path))
    rendered(d)
    verdict = d.one(id="verdict").content()
    assert verdict.startswith("No change") == df["same"], verdict
    got = rows(d, "rules-table")
    assert [x[0] for x in got] == [x["rule"] for x in df["rules"]], got
    for row, x in zip(got, df["rules"]):
        assert (number(row[1]), number(row[2])) == (x["a"]["traps"], x["b"]["traps"]), (row, x)
    bars = list(d.one(id="change-bars").find(tag="g", cls="bar"))
    changed = [x for x in df["rules"] + df["sites"] if x["change"]["traps"]]
    assert len(bars) == min(20, len(changed)), (len(bars), len(changed))


def compare(d, folder):
    cmp = json.load(open(os.path.join(folder, "compare.json")))
    rendered(d)
    names = [r["name"] for r in cmp["runs"] if r["name"] != "none"]
    assert "page" in names and len(names) >= 2, names
    for n in names:
        r = json.load(open(os.path.join(folder, n + ".json")))
        col = d.one(tag="div", cls="column", data_run=n)
        assert col is not None
        check_figures(d, r, n + "-")
        check_timeline(d, r, "timeline-" + n)
    # The totals, a column per run, its traps the run's.
    head = [th.content() for th in d.one(tag="table", id="totals-table").find(tag="th")]
    for n in names:
        assert n in head, head
    got = rows(d, "totals-table")
    traps = got[0]
    for i, n in enumerate(names):
        assert number(traps[1 + i]) == cmp["totals"]["runs"][n]["traps"], (traps, n)
    # Traps per site: a bar per run per site, each the site's.
    bars = list(d.one(id="site-bars-chart").find(tag="rect"))
    sites = cmp["sites"][:12]
    assert len(bars) == len(sites) * len(names), (len(bars), len(sites), names)
    for b, (s, n) in zip(bars, [(s, n) for s in sites for n in names]):
        assert b.attrs["data-run"] == n
        assert number(b.attrs["data-value"]) == s["runs"].get(n, {}).get("traps", 0)


def text(d, s):
    rendered(d)
    cells = [td.content() for td in d.find(tag="td")]
    assert s in cells, (s, cells[:10])
    # Shown as text: no element the string would have made.
    assert not any(True for _ in d.find(tag="script", id="injected")), "script injected"


kind = sys.argv[1]
try:
    root = dom(sys.argv[2])
    {"report": report, "sorted": sorted_table, "diff": diff, "compare": compare,
     "text": text}[kind](root, *sys.argv[3:])
except AssertionError as e:
    print(f"check_page.py {kind}: {e}")
    sys.exit(1)
print("ok")
