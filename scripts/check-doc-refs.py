#!/usr/bin/env python3
"""Every pointer into the docs resolves: a `docs/NAME.md` named anywhere in
the tree (code, tests, messages, the docs themselves) exists, and where a
section follows it in quotes (docs/signals.md, "Signal masks") a heading of that
file starts with that text. Prints one line per broken pointer, FILE:LINE
first; exits 1 if there is any. Usage: check-doc-refs.py [ROOT]"""
import os
import re
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
os.chdir(root)
# A section may be quoted plainly or escaped inside a C or shell string.
REF = re.compile(r'docs/([a-z0-9_-]+\.md)(?:, \\?"([^"\\]+))?')
# Inside docs/, a sibling by name: `preload.md`, "Signals" or a link
# [text](preload.md).
SIBLING = re.compile(r'(?<![/\w.-])`?([a-z0-9_-]+\.md)`?(?:, \\?"([^"\\]+))?')
files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"],
                       capture_output=True, text=True, check=True).stdout.split()
headings = {}


def sections(name):
    if name not in headings:
        path = os.path.join("docs", name)
        try:
            with open(path) as f:
                headings[name] = [l.lstrip("#").strip() for l in f if l.startswith("#")]
        except OSError:
            headings[name] = None
    return headings[name]


bad = 0
for path in files:
    if path.startswith(("build", "bench/out")) or not os.path.isfile(path):
        continue
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except (UnicodeDecodeError, OSError):
        continue
    in_docs = path.startswith("docs/") and path.endswith(".md")
    for n, line in enumerate(lines, 1):
        found = list(REF.finditer(line))
        if in_docs:
            found += [m for m in SIBLING.finditer(line)
                      if m.group(1) != "README.md"]
        for m in found:
            name, section = m.group(1), m.group(2)
            heads = sections(name)
            if heads is None:
                print(f"{path}:{n}: docs/{name} does not exist")
                bad += 1
            elif section and not any(h.startswith(section.strip()) for h in heads):
                print(f'{path}:{n}: docs/{name} has no section "{section}"')
                bad += 1
sys.exit(1 if bad else 0)
