"""A Python program of the kind people trial tools on: dicts, strings,
sorting, json, a regular expression; its output depends on nothing but N.
Usage: python3 work.py [N]"""
import json
import re
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
d = {"k%d" % i: [i, str(i) * (i % 5), {"v": i % 97}] for i in range(n)}
s = json.dumps(d, sort_keys=True)
back = json.loads(s)
words = sorted(("w%d" % (i * 7919 % n) for i in range(n)), key=lambda w: (len(w), w))
pat = re.compile(r"w(\d+)7")
hits = sum(1 for w in words if pat.match(w))
print(len(s), len(back), words[0], words[-1], hits)
