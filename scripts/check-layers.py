#!/usr/bin/env python3
"""Which part of the tree may include which (docs/internals.md, "Libraries,
and which may use which"), checked on every quoted #include: each names its
folder from the top of the tree, so the includer's part and the included
header's part are both in the line. Prints each include a layer forbids as
FILE:LINE: message and exits 1 if there is one.

Usage: check-layers.py [TREE]   (default: the tree this script is in)"""
import os
import re
import subprocess
import sys

# Part of the tree -> the headers it may include, by path prefix. The first
# matching part (longest first) decides; a part absent here may include
# anything (tests/ look inside modules).
ALLOWED = {
    'core/': ['core/', 'decoder/'],
    'decoder/': ['decoder/', 'core/util/'],
    'interpose/': ['interpose/', 'core/util/', 'core/region/views.h',
                   'core/trap/kernel.h', 'core/tag/tagged.h', 'core/tag/fault.h'],
    'policy/': ['policy/'],
    'preload/': ['preload/', 'policy/', 'interpose/', 'core/util/',
                 'core/region/views.h', 'core/region/placement.h',
                 'core/start/init.h', 'core/trap/hooks.h',
                 'core/trap/kernel.h', 'core/dirty/wbits.h',
                 'core/prot/prot.h', 'core/tag/tagged.h', 'core/tag/mte.h'],
    'tools/selftest/': ['tools/selftest/'],
    'tools/': ['tools/', 'policy/', 'preload/track/format.h',
               'core/prot/pagetable.h', 'core/tag/mte.h'],
    'dsm/': ['dsm/', 'examples/fault.h'],
    'bench/': ['bench/', 'dsm/dsm.h'],
    'examples/': ['examples/'],
    'tests/': None,
}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def part_of(path):
    for part in sorted(ALLOWED, key=len, reverse=True):
        if path.startswith(part):
            return part
    return None


def sources(tree):
    try:
        out = subprocess.run(['git', '-C', tree, 'ls-files', '-co',
                              '--exclude-standard', '*.c', '*.h', '*.cpp',
                              '*.hpp'], capture_output=True, text=True,
                             check=True).stdout.split()
        return out
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(tree):
            dirs[:] = [x for x in dirs if not x.startswith(('.', 'build'))]
            for f in files:
                if f.endswith(('.c', '.h', '.cpp', '.hpp')):
                    found.append(os.path.relpath(os.path.join(d, f), tree))
        return found


def main():
    tree = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bad = 0
    for path in sorted(sources(tree)):
        part = part_of(path)
        allowed = ALLOWED.get(part) if part else None
        with open(os.path.join(tree, path), errors='replace') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                if not os.path.exists(os.path.join(tree, header)):
                    print(f'{path}:{n}: "{header}" does not name a file '
                          'from the top of the tree')
                    bad += 1
                elif allowed is not None and \
                        not any(header.startswith(a) for a in allowed):
                    print(f'{path}:{n}: {part} may not include "{header}" '
                          '(docs/internals.md)')
                    bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
